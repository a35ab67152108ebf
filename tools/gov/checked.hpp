// Loading and checking a policy for the commands that need a checked one. The checked policy
// and the diagnostic printer live in the runtime library (runtime/embed/checked_policy.hpp),
// which embedding controllers share; this adds the command line's reporting.
#pragma once

#include <optional>
#include <string>

#include "runtime/embed/checked_policy.hpp"

namespace gov::cli {

using embed::CheckedPolicy;
using embed::DiagnosticPrinter;

/// Loads `path` with its imports and checks it. Returns nullopt (after printing the
/// reason) when the file cannot be read.
std::optional<CheckedPolicy> load_checked(const std::string& path, bool require_cluster,
                                          const check::LoadOptions& options = {});

}  // namespace gov::cli
