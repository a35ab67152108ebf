// The `gov` subcommands. Each has a spec (usage, options, help) and a run function.
#pragma once

#include <string>
#include <vector>

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
Command fmt_command();
Command explain_command();

}  // namespace gov::cli
