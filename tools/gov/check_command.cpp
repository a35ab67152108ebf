// `gov check`: parse and check policy files and print their diagnostics.
#include <fmt/format.h>

#include "compiler/ast/printer.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/lower/lower.hpp"
#include "tools/gov/checked.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

int run_check(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov check` needs at least one FILE\n");
    return kUsage;
  }
  const std::string emit = args.value("emit").value_or("");
  if (!emit.empty() && emit != "ast" && emit != "ir") {
    fmt::print(stderr, "error: unknown value `{}` for --emit (expected `ast` or `ir`)\n", emit);
    return kUsage;
  }
  DiagnosticPrinter printer;
  bool io_error = false;
  for (const std::string& path : args.positional) {
    std::optional<CheckedPolicy> checked = load_checked(path, /*require_cluster=*/emit == "ir");
    if (!checked) {
      io_error = true;
      continue;
    }
    if (emit == "ast") fmt::print("{}", ast::print(checked->program.files.front().ast));
    if (emit == "ir" && checked->ok()) fmt::print("{}", ir::print(lower::lower(checked->result.policy)));
    printer.add(checked->diagnostics(), checked->program.sources);
  }
  fmt::print(stderr, "{}", printer.text());
  if (io_error) return kUsage;
  return printer.errors() ? kFailed : kOk;
}

}  // namespace

Command check_command() {
  return {{"check", "gov check FILE... [--emit=ast|ir]",
           "Parse and check policy files (with their imports); print every problem found.",
           "Exit status: 0 when clean or only warnings, 1 when there are errors, 2 when a file cannot be read.\n"
           "Lint warnings are printed by `gov lint`.",
           {{"emit", "STAGE", "also print a stage: `ast` (the syntax tree with byte spans) or `ir` (the lowered module)"}}},
          run_check};
}

}  // namespace gov::cli
