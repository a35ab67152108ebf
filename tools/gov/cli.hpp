// Shared pieces of the `gov` command: argument parsing, file loading, exit codes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/diagnostics/source_file.hpp"

namespace gov::cli {

/// Exit codes of every command (docs/interfaces.md).
enum Exit : int { kOk = 0, kFailed = 1, kUsage = 2 };

/// Parsed command line of one command: positional arguments and `--flag[=value]` options.
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // name without dashes, value ("" if none)

  bool has(std::string_view name) const;
  std::optional<std::string> value(std::string_view name) const;
};

/// Describes one option for parsing and for --help.
struct OptionSpec {
  std::string name;        // "format"
  std::string value_name;  // "FORMAT", or empty for a flag
  std::string help;
};

struct CommandSpec {
  std::string name;
  std::string usage;    // "gov check FILE... [--emit=ast]"
  std::string summary;  // one line
  std::string details;  // paragraphs after the usage
  std::vector<OptionSpec> options;
};

/// Parses `argv` against `spec`; on a usage error prints it to stderr and returns nullopt.
std::optional<Args> parse_args(const CommandSpec& spec, const std::vector<std::string>& argv);
/// The --help text of a command.
std::string help_text(const CommandSpec& spec);

/// Reads a whole file; on failure returns nullopt and sets `error` to a readable reason.
/// Refuses files larger than `limit` bytes without reading them.
std::optional<std::string> read_file(const std::string& path, size_t limit, std::string& error);

}  // namespace gov::cli
