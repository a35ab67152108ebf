// `gov fmt`: rewrite policy files in the canonical layout, or check that they are.
#include <fmt/format.h>

#include "compiler/diagnostics/atomic_write.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/format/format.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/loader.hpp"

namespace gov::cli {
namespace {

int run_fmt(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov fmt` needs at least one FILE\n");
    return kUsage;
  }
  const bool check_only = args.has("check");
  SourceMap sources;
  int status = kOk;
  for (const std::string& path : args.positional) {
    std::optional<LoadedFile> loaded = load_and_parse(sources, path);
    if (!loaded) {
      status = kUsage;
      continue;
    }
    if (!loaded->parsed.ok()) {
      fmt::print(stderr, "{}", render_all(loaded->parsed.diagnostics, sources));
      fmt::print(stderr, "error: `{}` has syntax errors; not formatted\n", display_path(path));
      status = std::max(status, int{kFailed});
      continue;
    }
    const SourceFile& file = sources.get(loaded->source);
    const std::string formatted = format::format(loaded->parsed.file, file);
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
  return {{"fmt", "gov fmt [--check] FILE...", "Format policy files in the canonical layout, in place.",
           "With --check nothing is written: the files that are not formatted are listed and the exit status is 1.\n"
           "Files with syntax errors are never rewritten.",
           {{"check", "", "only check; list the files that would change and exit 1 if any"}}},
          run_fmt};
}

}  // namespace gov::cli
