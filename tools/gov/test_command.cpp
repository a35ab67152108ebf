// `gov test`: run the `test` blocks of policy files through the engine.
// The running and matching live in runtime/policy_test/; this prints their results.
#include <algorithm>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"
#include "compiler/support/terminal_text.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/policy_test/policy_test.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {
namespace {

/// `text` with each line passed through escape_for_terminal(): a failure report quotes rule
/// messages and test names, which may hold any character through string escapes.
std::string escape_lines(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    out += escape_for_terminal(text.substr(0, end));
    if (end == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(end + 1);
  }
  return out;
}

/// The failure report of a block as `gov test` prints it (before escaping): where, the
/// expectation, what differs and the decision it was matched against.
std::string failure_report(const policy_test::Failure& failure, const SourceMap& sources) {
  const std::string where = format_location(failure.where, sources);
  if (!failure.decision) return fmt::format("  {}: expected {}\n    but {}\n", where, failure.expected, failure.actual);
  return fmt::format("  {}: expected {}\n    but {}:\n      {}\n", where, failure.expected, failure.actual,
                     *failure.decision);
}

int run_test_command(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov test` needs at least one FILE\n");
    return kUsage;
  }
  size_t passed = 0, failed = 0;
  int status = kOk;
  for (const std::string& path : args.positional) {
    int load_status = kOk;
    std::optional<gov::Engine> engine = open_engine(args, path, load_status);
    if (!engine) {
      status = std::max(status, load_status);
      continue;
    }
    const std::shared_ptr<const RunnablePolicy> policy = EngineInternals::runnable(*engine);
    const SourceMap& sources = policy->checked.program.sources;
    for (const check::Test& test : policy->checked.result.policy.tests) {
      const policy_test::CaseResult result = policy_test::run_case(*engine, test);
      if (result.passed()) {
        ++passed;
        fmt::print("ok    {}: {}\n", display_path(path), escape_for_terminal(result.name));
      } else {
        ++failed;
        fmt::print("FAIL  {}: {}\n{}", display_path(path), escape_for_terminal(result.name),
                   escape_lines(failure_report(*result.failure, sources)));
      }
    }
  }
  fmt::print("{} passed, {} failed\n", passed, failed);
  if (status != kOk) return status;
  return failed ? kFailed : kOk;
}

}  // namespace

Command test_command() {
  return {{"test", "gov test FILE... [--engine interp] [--dialect head|kueue-v0.9]",
           "Run the `test` blocks of policy files through the engine.",
           "Each test starts from an empty cluster. `submit`, `finish` and `cancel` happen at the current time\n"
           "(`at` moves it); each `expect` checks the next decision of its task that no earlier `expect` checked,\n"
           "so a test reads like the decision stream. Prints each failure with the expected and the actual\n"
           "decision and a final `N passed, N failed` line; exit status 1 when a test fails.",
           engine_options()},
          run_test_command};
}

}  // namespace gov::cli
