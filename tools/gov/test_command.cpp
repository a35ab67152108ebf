// `gov test`: run the `test` blocks of policy files through the engine.
#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/model/quantities.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/trace/decision_writer.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {
namespace {

using check::TestStep;

std::string resources_text(const std::vector<std::pair<ir::Resource, ir::Amount>>& amounts) {
  std::vector<std::string> parts;
  for (const auto& [r, a] : amounts) {
    if (a == 0) continue;
    switch (r) {
      case ir::Resource::gpu: parts.push_back(fmt::format("gpus = {}", a)); break;
      case ir::Resource::neuron: parts.push_back(fmt::format("neuron = {}", a)); break;
      case ir::Resource::efa: parts.push_back(fmt::format("efa = {}", a)); break;
      case ir::Resource::vcpu:
        parts.push_back("vcpus = " + model::format_amount(r, a, model::language_notation(model::kMebibytesPerGibibyte)));
        break;
      case ir::Resource::memory:
        parts.push_back("memory = " + model::format_amount(r, a, model::language_notation(model::kMebibytesPerGibibyte)));
        break;
    }
  }
  return fmt::format("{{ {} }}", fmt::join(parts, ", "));
}

/// The expectation as the user wrote it (normalised).
std::string expectation_text(const TestStep& s) {
  std::string text = fmt::format("{} {}", s.task, s.outcome);
  if (s.flavor) text += " on " + *s.flavor;
  if (s.by) text += " by " + *s.by;
  if (s.word) text += " " + *s.word;
  if (s.borrowing) text += " borrowing " + resources_text(*s.borrowing);
  if (s.short_of) text += " short " + resources_text(*s.short_of);
  for (const std::string& rule : s.warned_by) text += " warned by " + rule;
  if (s.message) text += fmt::format(" message \"{}\"", *s.message);
  return text;
}

bool same_amounts(const engine::ResourceAmounts& actual, const std::vector<std::pair<ir::Resource, ir::Amount>>& expected) {
  engine::ResourceAmounts a, e;
  for (const auto& x : actual) {
    if (x.second != 0) a.push_back(x);
  }
  for (const auto& x : expected) {
    if (x.second != 0) e.push_back(x);
  }
  std::sort(a.begin(), a.end());
  std::sort(e.begin(), e.end());
  return a == e;
}

/// Why `d` does not satisfy `s`, or nullopt when it does.
std::optional<std::string> mismatch(const TestStep& s, const engine::Decision& d) {
  if (engine::outcome_name(d.outcome) != s.outcome) return fmt::format("outcome is {}", engine::outcome_name(d.outcome));
  if (s.flavor && d.flavor != *s.flavor) return fmt::format("it is on {}", d.flavor);
  if (s.by) {
    const std::string& by = d.outcome == engine::Outcome::rejected ? d.rule : d.by;
    if (by != *s.by) return fmt::format("it is by {}", by);
  }
  if (s.word) {
    const std::string actual = d.outcome == engine::Outcome::preempted
                                   ? std::string(engine::preemption_kind_name(d.kind))
                                   : d.reason ? std::string(engine::reason_name(*d.reason)) : std::string("(no reason)");
    if (actual != *s.word) return fmt::format("it is {}", actual);
  }
  if (s.borrowing && !same_amounts(d.borrowed, *s.borrowing)) {
    return fmt::format("it borrows {}", resources_text(std::vector<std::pair<ir::Resource, ir::Amount>>(d.borrowed.begin(), d.borrowed.end())));
  }
  if (s.short_of && !same_amounts(d.short_of, *s.short_of)) {
    return fmt::format("it is short {}", resources_text(std::vector<std::pair<ir::Resource, ir::Amount>>(d.short_of.begin(), d.short_of.end())));
  }
  for (const std::string& rule : s.warned_by) {
    if (std::none_of(d.warnings.begin(), d.warnings.end(), [&](const engine::RuleWarning& w) { return w.rule == rule; })) {
      return fmt::format("rule {} did not warn", rule);
    }
  }
  if (s.message && d.message != *s.message) return fmt::format("the message is \"{}\"", d.message);
  return std::nullopt;
}

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

/// Runs one test; returns the failure report (empty when it passes).
std::string run_test(const check::Test& test, const RunnablePolicy& policy, const engine::EngineOptions& options) {
  engine::Engine engine(policy.module, *policy.evaluator, options);
  // Each `expect` takes the next decision of its task that no earlier `expect` took.
  std::map<std::string, std::deque<engine::Decision>> unread;
  engine::Time clock = 0;
  auto apply = [&](std::vector<engine::Decision> decisions) {
    for (engine::Decision& d : decisions) unread[d.task].push_back(std::move(d));
  };
  // `at` defers the clock move: the finishes due at the new time belong to the same instant as
  // the event that follows (the engine applies them together, then runs the cycles once); an
  // `expect` or another `at` first settles the instant on its own.
  bool moved = false;
  auto settle = [&] {
    if (moved) apply(engine.advance(clock));
    moved = false;
  };
  const SourceMap& sources = policy.checked.program.sources;
  for (const TestStep& step : test.steps) {
    switch (step.kind) {
      case ast::Step::Kind::submit: {
        const engine::Event event = engine::Event::submit(task_from_step(step));
        apply(engine.step(clock, std::span(&event, 1)));
        moved = false;
        break;
      }
      case ast::Step::Kind::finish:
      case ast::Step::Kind::cancel: {
        const engine::Event event = step.kind == ast::Step::Kind::finish ? engine::Event::finish(step.task)
                                                                         : engine::Event::cancel(step.task);
        apply(engine.step(clock, std::span(&event, 1)));
        moved = false;
        break;
      }
      case ast::Step::Kind::at:
        settle();
        clock = step.time_ms;
        moved = true;
        break;
      case ast::Step::Kind::expect: {
        settle();
        auto& queue = unread[step.task];
        const std::string where = format_location(step.where, sources);
        if (queue.empty()) {
          return fmt::format("  {}: expected {}\n    but {} has no further decision\n", where, expectation_text(step),
                             step.task);
        }
        engine::Decision d = std::move(queue.front());
        queue.pop_front();
        if (auto why = mismatch(step, d)) {
          return fmt::format("  {}: expected {}\n    but {}:\n      {}\n", where, expectation_text(step), *why,
                             trace::decision_text(d));
        }
        break;
      }
    }
  }
  return "";
}

int run_test_command(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov test` needs at least one FILE\n");
    return kUsage;
  }
  std::optional<engine::EngineOptions> options = engine_options_from(args);
  if (!options) return kUsage;
  size_t passed = 0, failed = 0;
  int status = kOk;
  for (const std::string& path : args.positional) {
    int load_status = kOk;
    std::unique_ptr<RunnablePolicy> policy = load_runnable(path, args, load_status);
    if (!policy) {
      status = std::max(status, load_status);
      continue;
    }
    for (const check::Test& test : policy->checked.result.policy.tests) {
      const std::string failure = run_test(test, *policy, *options);
      if (failure.empty()) {
        ++passed;
        fmt::print("ok    {}: {}\n", display_path(path), escape_for_terminal(test.name));
      } else {
        ++failed;
        fmt::print("FAIL  {}: {}\n{}", display_path(path), escape_for_terminal(test.name), escape_lines(failure));
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
