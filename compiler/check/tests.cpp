// The checker: `test` blocks (submitted tasks, times, expectations).
#include "compiler/check/checker.hpp"

#include <array>
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "compiler/model/quantities.hpp"

namespace gov::check {

void Checker::check_tests() {
  // A name names one test: `gov test`'s reports (JUnit's testcases, JSON) and failures key on it.
  std::map<std::string, Location> names;
  for (const auto& [test, source] : tests_) {
    duplicate(names, test->name.plain(), {source, test->name.span}, "test");
    Test out{test->name.plain(), {}, {source, test->name.span}};
    if (test->name.has_interpolation()) {
      report(Code::interpolation_not_allowed, {source, interpolation_span(test->name)},
             "`{...}` is only allowed in a rule's message", "interpolation")
          .help = "escape literal braces as `\\{` and `\\}`";
    }
    std::map<std::string, Location> submitted;
    int64_t clock = 0;
    for (const ast::Step& step : test->steps) {
      if (auto s = test_step(step, source, submitted, clock)) out.steps.push_back(std::move(*s));
    }
    policy_.tests.push_back(std::move(out));
  }
}

std::optional<TestStep> Checker::test_step(const ast::Step& step, SourceId source, std::map<std::string, Location>& submitted,
                                           int64_t& clock) {
  TestStep out;
  out.kind = step.kind;
  out.task = step.task.text;
  out.where = {source, step.span};
  switch (step.kind) {
    case ast::Step::Kind::submit:
      if (duplicate(submitted, step.task.text, {source, step.task.span}, "task")) return std::nullopt;
      out.submitted.id = out.task;
      submit(step, source, out);
      return out;
    case ast::Step::Kind::at: {
      const int64_t ms = step.time.micros / 1000;
      if (step.time.unit != ast::Unit::none || step.time.micros % 1000 != 0 || ms < clock) {
        const bool backwards = ms < clock && step.time.unit == ast::Unit::none && step.time.micros % 1000 == 0;
        report(Code::invalid_time, {source, step.time.span},
               backwards ? fmt::format("time moves backwards: `at {}` is earlier than the previous `at {}`",
                                       model::format_decimal(ms, 1000), model::format_decimal(clock, 1000))
                         : "`at` takes seconds, with at most three decimals",
               backwards ? "earlier than the previous `at`" : "bad time")
            .help = backwards ? "a test's steps run in order: put the steps for earlier times first"
                              : "write the time in seconds, such as `at 90` or `at 1.5`";
        return std::nullopt;
      }
      clock = ms;
      out.time_ms = ms;
      return out;
    }
    case ast::Step::Kind::finish:
    case ast::Step::Kind::cancel:
    case ast::Step::Kind::expect: break;
  }
  if (!known_task(step.task, source, submitted)) return std::nullopt;
  if (step.kind == ast::Step::Kind::expect) expect(step, source, submitted, out);
  return out;
}

void Checker::known_team(const std::string& team, Location where) {
  if (team_lookup().index.contains(team)) return;
  const std::vector<std::string>& names = team_lookup().list;
  Diagnostic& d = report(Code::unknown_team, where, fmt::format("unknown team `{}`", team), "not a team");
  d.help = did_you_mean(team, names).value_or(names.empty() ? "the policy defines no teams" : names_help("teams", names));
}

void Checker::known_class(const std::string& name, Location where) {
  if (std::any_of(policy_.classes.begin(), policy_.classes.end(), [&](const PriorityClass& c) { return c.name == name; })) {
    return;
  }
  unknown_class(name, where);
}

void Checker::labels(const Assignment& a, TestStep& out) {
  for (const ast::MapEntry& e : a.value().map) {
    if (e.value->kind != ast::Value::Kind::string) continue;
    if (e.value->string.has_interpolation()) {
      report(Code::interpolation_not_allowed, a.at(interpolation_span(e.value->string)),
             "`{...}` is only allowed in a rule's message", "interpolation")
          .help = "escape literal braces as `\\{` and `\\}`";
    }
    out.submitted.labels.emplace_back(e.key.text, e.value->string.plain());
  }
}

bool Checker::known_task(const ast::Name& task, SourceId source, const std::map<std::string, Location>& submitted) {
  if (submitted.count(task.text)) return true;
  std::vector<std::string> names;
  for (const auto& [name, where] : submitted) names.push_back(name);
  Diagnostic& d = report(Code::unknown_task, {source, task.span},
                         fmt::format("task `{}` is not submitted before this step", task.text), "unknown task");
  d.help = did_you_mean(task.text, names).value_or("submit it first: `submit " + task.text + " { team = ... }`");
  return false;
}

void Checker::submit(const ast::Step& step, SourceId source, TestStep& out) {
  SubmitDraft draft;
  draft.step = &out;
  assign_all(submit_table(), step.properties, *this, source, draft);
  const bool has_team = draft.has_team;
  if (!has_team) {
    Diagnostic& d = report(Code::missing_property, {source, step.task.span},
                           fmt::format("task `{}` has no `team`", step.task.text), "which team?");
    d.help = "add `team = NAME`";
  }
  // As a trace and `gov eval` refuse it: a task that requests nothing was admitted here only.
  static constexpr std::array<std::string_view, 9> kRequests = {"instances", "gpus",     "neuron",   "vcpus",   "memory",
                                                                "efa",       "per-pod", "partitions", "pod-sets"};
  const bool requests = std::any_of(step.properties.begin(), step.properties.end(), [](const ast::Property& p) {
    return std::find(kRequests.begin(), kRequests.end(), p.key.text) != kRequests.end();
  });
  if (!requests) {
    Diagnostic& d = report(Code::missing_property, {source, step.task.span},
                           fmt::format("task `{}` requests nothing", step.task.text), "asks for nothing");
    d.help = "give `instances`, amounts (`gpus`, `vcpus`, `memory`, `neuron`, `efa`, `partitions`), `pods` with "
             "`per-pod`, or `pod-sets`";
  }
}

gov::ResourceAmounts Checker::resources(const std::vector<ast::Property>& block, SourceId source) {
  ResourceAmounts amounts;
  assign_all(resources_table(), block, *this, source, amounts);
  gov::ResourceAmounts out;
  for (const auto& [r, a] : amounts) {
    if (a && *a != 0) out.push_back({r, *a});
  }
  std::sort(out.begin(), out.end(), [](const gov::ResourceAmount& x, const gov::ResourceAmount& y) {
    return model::index(x.resource) < model::index(y.resource);
  });
  // GPU partitions after the five resources, as decisions list them.
  for (const ast::Property& p : block) {
    if (p.key.text != "partitions" || !p.value) continue;
    std::vector<std::pair<std::string, int64_t>> partitions;
    partition_amounts(*p.value, source, partitions);
    for (auto& [profile, count] : partitions) {
      if (count != 0) out.push_back({model::Resource::gpu, count, std::move(profile)});
    }
  }
  return out;
}

void Checker::partition_amounts(const ast::Value& map, SourceId source,
                                std::vector<std::pair<std::string, int64_t>>& out) {
  if (map.kind != ast::Value::Kind::map) return;  // reported by the schema check
  for (const ast::MapEntry& entry : map.map) {
    const std::optional<int64_t> count =
        count_in_range(*entry.value, source, fmt::format("the count of `{}`", entry.key.text), 0, kMaxAmount);
    if (count) out.emplace_back(entry.key.text, *count);
  }
}

void Checker::expect(const ast::Step& step, SourceId source, const std::map<std::string, Location>& submitted, TestStep& out) {
  using K = ast::ExpectClause::Kind;
  out.outcome = step.outcome.text;
  out.eventually = step.eventually;
  for (const ast::ExpectClause& c : step.clauses) {
    switch (c.kind) {
      case K::on:
        if (!out.flavor) out.flavor = c.name.text;
        out.flavors.push_back(c.name.text);
        resolve_type(c.name.text, {source, c.name.span});
        break;
      case K::by:
        out.by = c.name.text;
        if (out.outcome == "rejected") {
          known_rule(c.name, source, ast::RuleAction::deny);
        } else {
          known_task(c.name, source, submitted);
        }
        break;
      case K::warned_by:
        out.warned_by.push_back(c.name.text);
        known_rule(c.name, source, ast::RuleAction::warn);
        break;
      case K::borrowing: out.borrowing = resources(c.resources, source); break;
      case K::short_of: out.short_of = resources(c.resources, source); break;
      case K::message:
        if (c.message.has_interpolation()) {
          report(Code::interpolation_not_allowed, {source, interpolation_span(c.message)},
                 "`{...}` is only allowed in a rule's message", "interpolation")
              .help = "write the exact text you expect; escape braces as `\\{` and `\\}`";
        }
        out.message = c.message.plain();
        break;
      case K::word: out.word = c.name.text; break;
    }
  }
}

void Checker::known_rule(const ast::Name& name, SourceId source, ast::RuleAction action) {
  const Names& rules = rule_lookup();
  if (rules.index.contains(name.text)) {
    // `rejected by` a warn rule, or `warned by` a deny rule, can never hold (a policy author's
    // finding, session 43: the first passed the checker and failed only when run).
    const auto rule = std::find_if(policy_.rules.begin(), policy_.rules.end(), [&](const Rule& r) { return r.name == name.text; });
    if (rule != policy_.rules.end() && rule->action != action) {
      const bool warns = rule->action == ast::RuleAction::warn;
      Diagnostic& d = report(Code::clause_not_allowed, {source, name.span},
                             fmt::format("rule `{}` {}: it never {} a task", name.text, warns ? "only warns" : "denies",
                                         warns ? "rejects" : "only warns about"),
                             warns ? "a warn rule" : "a deny rule");
      d.notes.push_back({rule->where, fmt::format("`{}` is declared here", name.text)});
      d.help = warns ? "a task it matches is admitted `warned by` it" : "a task it matches is `rejected by` it";
    }
    return;
  }
  const std::vector<std::string>& names = rules.list;
  Diagnostic& d = report(Code::unknown_rule, {source, name.span}, fmt::format("unknown rule `{}`", name.text), "no such rule");
  d.help = did_you_mean(name.text, names).value_or(names.empty() ? "the policy has no rules"
                                                                 : names_help("rules", names));
}

}  // namespace gov::check
