// The Kueue exporter of gov::bridge (internal: callers use bridge::export_policy).
#pragma once

#include <string>

#include "compiler/bridge/bridge.hpp"

namespace gov::bridge {

/// The multi-document YAML of `policy`'s Kueue objects. Kueue can express every construct of
/// the language, so this never fails.
std::string export_kueue(const check::Policy& policy, const ExportOptions& options);

}  // namespace gov::bridge
