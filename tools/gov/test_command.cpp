// `gov test`: run the `test` blocks of policy files through the engine.
#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"
#include "compiler/diagnostics/terminal_text.hpp"
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
        parts.push_back(a % 1000 == 0 ? fmt::format("vcpus = {}", a / 1000) : fmt::format("vcpus = {}m", a));
        break;
      case ir::Resource::memory:
        parts.push_back(a % 1024 == 0 ? fmt::format("memory = {} GiB", a / 1024) : fmt::format("memory = {} MiB", a));
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

/// The nonzero amounts, sorted by resource.
std::vector<std::pair<ir::Resource, ir::Amount>> nonzero(std::vector<std::pair<ir::Resource, ir::Amount>> amounts) {
  std::erase_if(amounts, [](const auto& x) { return x.second == 0; });
  std::sort(amounts.begin(), amounts.end());
  return amounts;
}

std::vector<std::pair<ir::Resource, ir::Amount>> as_pairs(const gov::ResourceAmounts& amounts) {
  std::vector<std::pair<ir::Resource, ir::Amount>> out;
  for (const gov::ResourceAmount& a : amounts) out.emplace_back(a.resource, a.amount);
  return out;
}

bool same_amounts(const gov::ResourceAmounts& actual, const std::vector<std::pair<ir::Resource, ir::Amount>>& expected) {
  return nonzero(as_pairs(actual)) == nonzero(expected);
}

/// Why `d` does not satisfy `s`, or nullopt when it does.
std::optional<std::string> mismatch(const TestStep& s, const gov::Decision& d) {
  if (gov::outcome_name(d.outcome) != s.outcome) return fmt::format("outcome is {}", gov::outcome_name(d.outcome));
  if (s.flavor && d.flavor != *s.flavor) return fmt::format("it is on {}", d.flavor);
  if (s.by) {
    const std::string& by = d.outcome == gov::Outcome::rejected ? d.rule : d.by;
    if (by != *s.by) return fmt::format("it is by {}", by);
  }
  if (s.word) {
    const std::string actual = d.outcome == gov::Outcome::preempted
                                   ? std::string(gov::preemption_kind_name(d.kind.value_or(gov::PreemptionKind::in_team)))
                                   : d.reason ? std::string(gov::reason_name(*d.reason)) : std::string("(no reason)");
    if (actual != *s.word) return fmt::format("it is {}", actual);
  }
  if (s.borrowing && !same_amounts(d.borrowed, *s.borrowing)) {
    return fmt::format("it borrows {}", resources_text(as_pairs(d.borrowed)));
  }
  if (s.short_of && !same_amounts(d.short_of, *s.short_of)) {
    return fmt::format("it is short {}", resources_text(as_pairs(d.short_of)));
  }
  for (const std::string& rule : s.warned_by) {
    if (std::none_of(d.warnings.begin(), d.warnings.end(), [&](const gov::RuleWarning& w) { return w.rule == rule; })) {
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
  std::map<std::string, std::deque<gov::Decision>> unread;
  gov::Time clock = 0;
  auto apply = [&](std::vector<gov::Decision> decisions) {
    for (gov::Decision& d : decisions) unread[d.task].push_back(std::move(d));
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
        const gov::Event event = gov::Event::submit(task_from_step(step));
        apply(engine.step(clock, std::span(&event, 1)));
        moved = false;
        break;
      }
      case ast::Step::Kind::finish:
      case ast::Step::Kind::cancel: {
        const gov::Event event = step.kind == ast::Step::Kind::finish ? gov::Event::finish(step.task)
                                                                         : gov::Event::cancel(step.task);
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
        gov::Decision d = std::move(queue.front());
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
