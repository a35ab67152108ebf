// The `gov` command: dispatches to one subcommand per verb.
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {check_command(), lint_command(), fmt_command(), test_command(), inspect_command(), simulate_command(), eval_command(),
                                            diff_command(), export_command(), import_command(), apply_command(), log_command(), show_command(), rollback_command(), store_command(), keygen_command(), lsp_command(),
                                            explain_command()};
  return all;
}

namespace {

std::string main_help() {
  std::string out =
      "gov — a policy engine for shared GPU clusters\n\n"
      "Usage: gov <command> [options] [arguments]\n\nCommands:\n";
  for (const Command& c : commands()) out += fmt::format("  {:<10} {}\n", c.spec.name, c.spec.summary);
  out += "\nRun `gov <command> --help` for a command's options.\n";
  return out;
}

}  // namespace
}  // namespace gov::cli

int main(int argc, char** argv) {
  using namespace gov::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    if (args.size() >= 2 && args[0] == "help") args = {args[1], "--help"};
    else {
      fmt::print("{}", main_help());
      return args.empty() ? kUsage : kOk;
    }
  }
  if (args[0] == "--version") {
    fmt::print("gov {}\n", GOV_VERSION_STRING);
    return kOk;
  }
  for (const Command& command : commands()) {
    if (command.spec.name != args[0]) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const std::string& a : rest) {
      if (a == "--help" || a == "-h") {
        fmt::print("{}", help_text(command.spec));
        return kOk;
      }
      if (a == "--") break;
    }
    std::optional<Args> parsed = parse_args(command.spec, rest);
    if (!parsed) return kUsage;
    try {
      return command.run(*parsed);
    } catch (const std::bad_alloc&) {
      fmt::print(stderr, "error: out of memory while running `gov {}`\n", args[0]);
      return kFailed;
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}\n", gov::escape_for_terminal(e.what()));
      return kFailed;
    }
  }
  fmt::print(stderr, "error: unknown command `{}`\nrun `gov --help` for the commands\n", gov::escape_for_terminal(args[0]));
  return kUsage;
}
