// Shared pieces of the `gov` command: argument parsing, loading a policy, exit codes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diagnostics/source_file.hpp"
#include "compiler/driver/driver.hpp"

namespace gov::cli {

using driver::CheckedPolicy;
using driver::DiagnosticPrinter;

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

/// Prints a load error on stderr: rendered diagnostics as they are, anything else as
/// `error: MESSAGE` escaped for the terminal.
void print_error(const driver::Error& error);

/// driver::load for the command line: on failure prints the error (print_error), sets `status`
/// (kUsage when the entry file cannot be read, else kFailed) and returns nullptr; prints the
/// JIT's fallback warning. Up to Stage::check a policy with errors is returned, not printed:
/// its diagnostics are the caller's to show.
std::unique_ptr<driver::Policy> load_policy(const driver::Source& source, const driver::Request& request, int& status);

/// The policy files FILE arguments name, as `opa check .` and `regal lint .` read them: a file
/// (or `-`) as given, a directory as every `*.gov` file below it in path order, skipping hidden
/// directories (`.git`, `.gov`). nullopt after printing why (a missing path, a directory with no
/// policy file, one that cannot be listed); `status` kUsage.
std::optional<std::vector<std::string>> policy_files(const std::vector<std::string>& arguments, int& status);

/// The source a FILE argument names: `-` is standard input (read whole, at most
/// driver::kMaxEntryReadBytes, shown as `<stdin>`), anything else a file on disk. nullopt after
/// printing why standard input cannot be read (status kUsage).
std::optional<driver::Source> source_argument(const std::string& argument, int& status, const std::string& root = {});

/// --root DIR: the directory a policy's imports must stay under (empty: driver's rule, the
/// nearest `gov.toml`, else the repository top, else the file's directory).
std::string root_option(const Args& args);
/// The --root option's spec, for every command that loads a policy from a file.
OptionSpec root_option_spec();

}  // namespace gov::cli
