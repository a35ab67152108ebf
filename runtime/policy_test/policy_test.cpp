// Runs `test` blocks through the engine and matches their `expect` steps. This is the one file
// of the library that names engine types (tasks, events, decisions).
#include "runtime/policy_test/policy_test.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <span>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compiler/model/quantities.hpp"
#include "runtime/trace/decision_writer.hpp"

namespace gov::policy_test {
namespace {

using check::TestStep;

/// Amounts as the language writes them: `{ gpus = 2, memory = 64 GiB }` (zero entries left out).
std::string resources_text(const gov::ResourceAmounts& amounts) {
  std::vector<std::string> parts;
  for (const auto& [r, a, partition] : amounts) {
    if (a == 0) continue;
    if (!partition.empty()) {  // as a quota's `partitions = { mig-1g.10gb: 2 }` writes it
      parts.push_back(fmt::format("partitions = {{ {}: {} }}", partition, a));
      continue;
    }
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
  // Nothing is `{}`, as `gov fmt` writes it (it read `{  }`: a policy author's nit, session 43).
  return parts.empty() ? std::string("{}") : fmt::format("{{ {} }}", fmt::join(parts, ", "));
}

/// Equal as sets of nonzero amounts (an expectation lists the nonzero amounts written, in
/// resource order; the engine lists the charged resources it touched).
bool same_amounts(const gov::ResourceAmounts& actual, const gov::ResourceAmounts& expected) {
  gov::ResourceAmounts nonzero = actual;
  std::erase_if(nonzero, [](const gov::ResourceAmount& x) { return x.amount == 0; });
  // Resources in resource order, then partitions by profile name.
  const auto order = [](gov::ResourceAmounts amounts) {
    std::sort(amounts.begin(), amounts.end(), [](const gov::ResourceAmount& x, const gov::ResourceAmount& y) {
      return std::make_tuple(!x.partition.empty(), model::index(x.resource), std::string_view(x.partition)) <
             std::make_tuple(!y.partition.empty(), model::index(y.resource), std::string_view(y.partition));
    });
    return amounts;
  };
  return order(std::move(nonzero)) == order(expected);
}

/// Why `d` does not satisfy `s`, or nullopt when it does.
std::optional<std::string> mismatch(const TestStep& s, const gov::Decision& d) {
  if (gov::outcome_name(d.outcome) != s.outcome) return fmt::format("outcome is {}", gov::outcome_name(d.outcome));
  if (s.flavors.size() > 1) {  // one `on` per pod set
    std::vector<std::string> actual;
    for (const gov::PodSetAdmission& p : d.pod_sets) actual.push_back(p.flavor);
    if (actual.empty()) actual.push_back(d.flavor);
    if (actual != s.flavors) return fmt::format("it is on {}", fmt::join(actual, " on "));
  } else if (s.flavor && d.flavor != *s.flavor) {
    return fmt::format("it is on {}", d.flavor);
  }
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
    return fmt::format("it borrows {}", resources_text(d.borrowed));
  }
  if (s.short_of && !same_amounts(d.short_of, *s.short_of)) {
    return fmt::format("it is short {}", resources_text(d.short_of));
  }
  for (const std::string& rule : s.warned_by) {
    if (std::none_of(d.warnings.begin(), d.warnings.end(), [&](const gov::RuleWarning& w) { return w.rule == rule; })) {
      return fmt::format("rule {} did not warn", rule);
    }
  }
  if (s.message && d.message != *s.message) return fmt::format("the message is \"{}\"", d.message);
  return std::nullopt;
}

}  // namespace

std::string expectation_text(const TestStep& s) {
  std::string text = fmt::format("{}{} {}", s.eventually ? "eventually " : "", s.task, s.outcome);
  if (s.flavors.empty() && s.flavor) text += " on " + *s.flavor;
  for (const std::string& flavor : s.flavors) text += " on " + flavor;
  if (s.by) text += " by " + *s.by;
  if (s.word) text += " " + *s.word;
  if (s.borrowing) text += " borrowing " + resources_text(*s.borrowing);
  if (s.short_of) text += " short " + resources_text(*s.short_of);
  for (const std::string& rule : s.warned_by) text += " warned by " + rule;
  if (s.message) text += fmt::format(" message \"{}\"", *s.message);
  return text;
}

CaseResult run_case(const gov::Engine& policy, const check::Test& test) {
  CaseResult result;
  result.name = test.name;
  result.where = test.where;
  gov::Engine engine = policy.fresh();
  // Each `expect` takes the next decision of its task that no earlier `expect` took.
  std::map<std::string, std::deque<gov::Decision>> unread;
  std::vector<std::string> recent;  // Failure::recent
  gov::Time clock = 0;
  auto apply = [&](gov::Step step) {
    for (gov::Decision& d : step.decisions) {
      result.decisions.push_back(trace::decision_json(d));
      result.decision_lines.push_back(trace::decision_text(d));
      recent.push_back(result.decision_lines.back());
      unread[d.task].push_back(std::move(d));
    }
  };
  // `at` defers the clock move: the finishes due at the new time belong to the same instant as
  // the event that follows (the engine applies them together, then runs the cycles once); an
  // `expect` or another `at` first settles the instant on its own.
  bool moved = false;
  auto settle = [&] {
    if (moved) apply(engine.tick(clock));
    moved = false;
  };
  for (size_t i = 0; i < test.steps.size(); ++i) {
    const TestStep& step = test.steps[i];
    switch (step.kind) {
      case ast::Step::Kind::submit: {
        apply(engine.step(clock, {gov::Event::submit(step.submitted)}));
        moved = false;
        break;
      }
      case ast::Step::Kind::finish:
      case ast::Step::Kind::cancel: {
        apply(engine.step(clock, {step.kind == ast::Step::Kind::finish ? gov::Event::finish(step.task)
                                                                        : gov::Event::cancel(step.task)}));
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
        if (queue.empty()) {
          result.failure = Failure{i, step.where, expectation_text(step),
                                   fmt::format("{} has no further decision", step.task), std::nullopt, std::move(recent)};
          return result;
        }
        if (step.eventually) queue.erase(queue.begin(), queue.end() - 1);
        const gov::Decision d = std::move(queue.front());
        queue.pop_front();
        if (std::optional<std::string> why = mismatch(step, d)) {
          result.failure =
              Failure{i, step.where, expectation_text(step), std::move(*why), trace::decision_text(d), std::move(recent)};
          return result;
        }
        recent.clear();
        break;
      }
    }
  }
  return result;
}

std::vector<CaseResult> run(const gov::Engine& policy, const std::vector<check::Test>& tests) {
  std::vector<CaseResult> results;
  results.reserve(tests.size());
  for (const check::Test& test : tests) results.push_back(run_case(policy, test));
  return results;
}

}  // namespace gov::policy_test
