// Loads and parses the files named on the command line, reporting problems on stderr.
#pragma once

#include <optional>
#include <string>

#include "compiler/diagnostics/source_file.hpp"
#include "grammar/parse.hpp"

namespace gov::cli {

/// Largest file the command line reads at all; files between the parser's limit and this
/// one are read and refused by the parser with a diagnostic (E0001).
inline constexpr size_t kMaxReadBytes = 64u << 20;

struct LoadedFile {
  SourceId source;
  grammar::ParseResult parsed;
};

/// Reads and parses `path` into `sources`. On an I/O error prints `error: cannot read ...`
/// and returns nullopt (exit code 2 territory).
std::optional<LoadedFile> load_and_parse(SourceMap& sources, const std::string& path);

}  // namespace gov::cli
