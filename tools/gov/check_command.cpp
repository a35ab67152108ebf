// `gov check`: parse and check policy files and print their diagnostics.
#include <fmt/format.h>

#include "compiler/ast/printer.hpp"
#include "compiler/diagnostics/render.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/loader.hpp"

namespace gov::cli {
namespace {

int run_check(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov check` needs at least one FILE\n");
    return kUsage;
  }
  const std::string emit = args.value("emit").value_or("");
  if (!emit.empty() && emit != "ast") {
    fmt::print(stderr, "error: unknown value `{}` for --emit (expected `ast`)\n", emit);
    return kUsage;
  }
  SourceMap sources;
  Diagnostics all;
  bool io_error = false;
  for (const std::string& path : args.positional) {
    std::optional<LoadedFile> loaded = load_and_parse(sources, path);
    if (!loaded) {
      io_error = true;
      continue;
    }
    if (emit == "ast") fmt::print("{}", ast::print(loaded->parsed.file));
    all.append(loaded->parsed.diagnostics);
  }
  fmt::print(stderr, "{}", render_all(all, sources));
  if (io_error) return kUsage;
  return all.has_errors() ? kFailed : kOk;
}

}  // namespace

Command check_command() {
  return {{"check", "gov check FILE... [--emit=ast]", "Parse and check policy files; print every problem found.",
           "Exit status: 0 when clean or only warnings, 1 when there are errors, 2 when a file cannot be read.",
           {{"emit", "STAGE", "also print a stage: `ast` (the syntax tree with byte spans)"}}},
          run_check};
}

}  // namespace gov::cli
