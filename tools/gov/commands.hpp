// The `gov` subcommands. Each has a spec (usage, options, help) and a run function.
#pragma once

#include <string>
#include <vector>

#include "compiler/check/policy.hpp"
#include "runtime/store/store.hpp"
#include "tools/gov/cli.hpp"

namespace gov::cli {

struct Command {
  CommandSpec spec;
  int (*run)(const Args& args);
};

/// Every command, in the order `gov --help` lists them.
const std::vector<Command>& commands();

// One function per command; each lives in <name>_command.cpp.
Command check_command();
Command lint_command();
Command inspect_command();
Command diff_command();
Command simulate_command();
Command test_command();
Command eval_command();
Command apply_command();
Command log_command();
Command show_command();
Command rollback_command();
Command keygen_command();

/// `gov diff` between stored versions (store_commands.cpp).
int run_store_diff(const Args& args);
/// The text of `gov inspect` (inspect_command.cpp).
std::string inspection_text(const check::Policy& policy);
Command fmt_command();
Command explain_command();
Command export_command();
Command import_command();

}  // namespace gov::cli
