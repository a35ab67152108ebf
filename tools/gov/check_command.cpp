// `gov check`: parse and check policy files and print their diagnostics.
#include <fmt/format.h>

#include "compiler/ast/printer.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

int run_check(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov check` needs at least one FILE\n");
    return kUsage;
  }
  const std::string emit = args.value("emit").value_or("");
  if (!emit.empty() && emit != "ast" && emit != "ir" && emit != "llvm" && emit != "asm") {
    fmt::print(stderr, "error: unknown value `{}` for --emit (expected `ast`, `ir`, `llvm` or `asm`)\n", escape_for_terminal(emit));
    return kUsage;
  }
  DiagnosticPrinter printer;
  int io_status = kOk;
  const std::optional<std::vector<std::string>> files = policy_files(args.positional, io_status);
  if (!files) return io_status;
  const bool lowered = emit == "ir" || emit == "llvm" || emit == "asm";
  bool headed = false;  // a file's stage was printed under its name
  for (const std::string& path : *files) {
    std::optional<driver::Source> source = source_argument(path, io_status, root_option(args));
    if (!source) continue;
    // Up to Stage::check: the diagnostics are printed below, with every file's.
    std::unique_ptr<driver::Policy> policy =
        load_policy(*source, driver::Request::up_to(driver::Stage::check, /*require_cluster=*/lowered), io_status);
    if (!policy) continue;
    const CheckedPolicy& checked = policy->checked;
    // Several files' stages are told apart as head(1) tells files apart.
    if (!emit.empty() && files->size() > 1) {
      fmt::print("{}==> {} <==\n", headed ? "\n" : "", display_path(path));
      headed = true;
    }
    if (emit == "ast") fmt::print("{}", ast::print(checked.program.files.front().ast));
    if (emit == "ir" && checked.ok()) fmt::print("{}", ir::print(lower::lower(checked.result.policy)));
    if ((emit == "llvm" || emit == "asm") && checked.ok()) {
      const ir::Module module = lower::lower(checked.result.policy);
      auto text = emit == "llvm" ? jit::emit_llvm(module) : jit::emit_asm(module);
      if (!text.ok()) {
        fmt::print(stderr, "error: {}\n", escape_for_terminal(text.error().message));
        return kFailed;
      }
      fmt::print("{}", text.value());
    }
    printer.add(checked.diagnostics(), checked.program.sources);
  }
  fmt::print(stderr, "{}", printer.text());
  if (io_status != kOk) return kUsage;
  return printer.errors() ? kFailed : kOk;
}

}  // namespace

Command check_command() {
  return {{"check", "gov check FILE|DIR... [--emit=ast|ir|llvm|asm]",
           "Parse and check policy files (with their imports); print every problem found.",
           "FILE `-` is standard input (shown as `<stdin>`; it imports shipped catalogs by name only, no files).\n"
           "Exit status: 0 when clean or only warnings, 1 when there are errors, 2 when a file cannot be read.\n"
           "Lint warnings are printed by `gov lint`.",
           {{"emit", "STAGE", "also print a stage: `ast` (syntax tree with byte spans), `ir` (the lowered module), `llvm` (optimised LLVM IR of the rules) or `asm`; of several files, each after a `==> FILE <==` line"},
            root_option_spec()}},
          run_check};
}

}  // namespace gov::cli
