// `gov fmt`: rewrite policy files in the canonical layout, or check that they are.
#include <fmt/format.h>

#include "compiler/check/schema.hpp"
#include "compiler/diagnostics/atomic_write.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/support/text_diff.hpp"
#include "compiler/format/format.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

int run_fmt(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov fmt` needs at least one FILE\n");
    return kUsage;
  }
  const bool show_diff = args.has("diff");
  const bool check_only = args.has("check") || show_diff;
  // The entry file alone, parsed: formatting reads no import.
  driver::Request request = driver::Request::up_to(driver::Stage::parse);
  request.follow_imports = false;
  int status = kOk;
  const std::optional<std::vector<std::string>> files = policy_files(args.positional, status);
  if (!files) return status;
  for (const std::string& path : *files) {
    int load_status = kOk;
    std::optional<driver::Source> source = source_argument(path, load_status);
    std::unique_ptr<driver::Policy> policy = source ? load_policy(*source, request, load_status) : nullptr;
    if (!policy) {
      status = load_status;
      continue;
    }
    const check::Program& program = policy->checked.program;
    const std::string shown = path == "-" ? "<stdin>" : path;
    // A shape error (an unknown property, a value of the wrong kind: E0040–E0045) leaves every
    // declaration in place, so the file formats as written; only a syntax error, which drops
    // text, stops it (a policy author's finding, session 43: one misspelled key blocked `gov fmt`,
    // which called it a syntax error).
    if (check::stops_checking(program.diagnostics)) {
      fmt::print(stderr, "{}", render_all(program.diagnostics, program.sources));
      fmt::print(stderr, "error: `{}` has syntax errors; not formatted\n", display_path(shown));
      status = std::max(status, int{kFailed});
      continue;
    }
    const SourceFile& file = program.sources.get(program.files.front().source);
    const std::string formatted = format::format(program.files.front().ast, file);
    if (show_diff && formatted != file.text()) {  // what would change, as `diff -u` prints it
      const std::string name = escape_for_terminal(display_path(shown));
      fmt::print("{}", support::unified_diff(name, name + " (formatted)", file.text(), formatted));
      status = std::max(status, int{kFailed});
      continue;
    }
    if (path == "-") {  // standard input: the formatted text on standard output
      if (check_only && formatted != file.text()) {
        fmt::print("{}\n", shown);
        status = std::max(status, int{kFailed});
      } else if (!check_only) {
        fmt::print("{}", formatted);
      }
      continue;
    }
    if (formatted == file.text()) continue;
    if (check_only) {
      fmt::print("{}\n", display_path(path));
      status = std::max(status, int{kFailed});
    } else if (std::string error; !write_file_atomically(path, formatted, error)) {
      // The policy keeps its old contents: write_file_atomically replaces it only when every
      // byte of the new text is on disk.
      fmt::print(stderr, "error: cannot write `{}`: {}\n", display_path(path), escape_for_terminal(error));
      status = kUsage;
    }
  }
  return status;
}

}  // namespace

Command fmt_command() {
  return {{"fmt", "gov fmt [--check|--diff] FILE|DIR...", "Format policy files in the canonical layout, in place.",
           "With --check nothing is written: the files that are not formatted are listed and the exit status is 1.\n"
           "With --diff nothing is written either: what would change is printed as a unified diff, exit status 1.\n"
           "FILE `-` formats standard input to standard output.\n"
           "Files with syntax errors are never rewritten; shape errors (E0040-E0045, an unknown property) drop\n"
           "nothing and do not stop formatting.",
           {{"check", "", "only check; list the files that would change and exit 1 if any"},
            {"diff", "", "only check; print what would change as a unified diff and exit 1 if anything would"}}},
          run_fmt};
}

}  // namespace gov::cli
