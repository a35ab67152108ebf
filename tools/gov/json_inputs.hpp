// The JSON files `gov import hyperpod` and `gov export hyperpod --current` read: files, or the
// `.json` files of directories.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/bridge/bridge.hpp"

namespace gov::cli {

/// The most JSON files one command reads from directories (a policy has at most 10,000 teams).
inline constexpr size_t kMaxJsonInputs = 10'000;

/// Each path read whole (at most bridge::kMaxImportBytes), a directory replaced by its regular
/// `.json` files in name order (not its subdirectories). Each input is named by its file name.
/// On failure prints `error: …` naming `option` (e.g. "`--current DIR`") or the file, and returns
/// nullopt: a missing path, an unreadable or oversized file, more than kMaxJsonInputs files.
std::optional<std::vector<bridge::ImportInput>> read_json_inputs(const std::vector<std::string>& paths);

}  // namespace gov::cli
