// The `gov` subcommands. Each has a spec (usage, options, help) and a run function.
#pragma once

#include <string>
#include <vector>

#include "compiler/check/policy.hpp"
#include "compiler/diff/diff.hpp"
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
Command store_command();
Command lsp_command();

/// `gov diff` between stored versions, or the active one and a file (store_commands.cpp).
int run_store_diff(const Args& args);
/// Loads and checks a complete policy file, printing its problems; nullptr when it has errors.
std::unique_ptr<driver::Policy> load_file_for_diff(const std::string& path, const std::string& root, int& status);
/// What the admitted tasks of --state hold under the old policy (`before_file`, else the store's
/// active version), per team and instance type; nullopt after printing why (diff_command.cpp).
std::optional<diff::HeldAmounts> held_in_state(const Args& args, const std::optional<std::string>& before_file, int& status);
/// print_diff's status under --exit-code when something changed: `gov diff` exits 1 for it, and
/// 2 for every failure, so that a gate tells a change from a file with errors or a refused version.
inline constexpr int kDiffChanged = -1;
/// Prints the diff in --format; the exit status (kOk, or kDiffChanged under --exit-code).
int print_diff(const Args& args, const check::Policy& before, const check::Policy& after, std::string_view before_name,
               std::string_view after_name, const diff::HeldAmounts* held);
/// The text of `gov inspect` (inspect_command.cpp).
std::string inspection_text(const check::Policy& policy);
Command fmt_command();
Command explain_command();
Command export_command();
Command import_command();

}  // namespace gov::cli
