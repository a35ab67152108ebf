// Helpers shared by the tests: repository paths, running `gov`, parsing text.
#pragma once

#include <string>
#include <vector>

#include "compiler/diagnostics/source_file.hpp"
#include "grammar/parse.hpp"

namespace gov::test {

/// Absolute path of a file in the repository.
std::string repo_path(const std::string& relative);
/// Every file under `directory` (relative to the repository) whose name ends in `suffix`, sorted.
std::vector<std::string> files_under(const std::string& directory, const std::string& suffix);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
/// Runs `build/bin/gov ARGS` in the repository root and captures both streams.
CommandResult run_gov(const std::string& args);

/// Parses `text` as a file named `name`; the SourceMap keeps the text alive.
struct Parsed {
  SourceMap sources;
  grammar::ParseResult result;
};
Parsed parse_text(const std::string& text, const std::string& name = "test.gov");

/// Rendered diagnostics of a parse, for assertions with a readable failure message.
std::string rendered(const Parsed& parsed);

}  // namespace gov::test
