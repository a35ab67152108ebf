// Lint warnings (W01xx): cross-object facts worth a reviewer's eye. See docs/diagnostics.md.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "compiler/model/partitions.hpp"
#include "compiler/model/quantities.hpp"

#include "compiler/check/check.hpp"
#include "compiler/check/expressions.hpp"

namespace gov::check {
namespace {

bool same_expression(const TypedExpr& a, const TypedExpr& b) {
  if (a.kind != b.kind || a.type != b.type || a.value != b.value || a.text != b.text || a.unary_op != b.unary_op ||
      a.binary_op != b.binary_op || a.set != b.set || a.string_set != b.string_set ||
      a.operands.size() != b.operands.size()) {
    return false;
  }
  for (size_t i = 0; i < a.operands.size(); ++i) {
    if (!same_expression(a.operands[i], b.operands[i])) return false;
  }
  return true;
}

/// "2", "2.5": instances with up to two decimals.
std::string instances_text(double instances) { return model::format_instances(instances, 2); }

class Linter {
 public:
  Linter(const Policy& policy, Diagnostics& out) : policy_(policy), out_(out) {}

  void run() {
    capacity();
    idle_teams();
    sharing();
    controls();
    classes();
    rules();
    tests();
  }

 private:
  Diagnostic& warn(Code code, Location where, std::string message, std::string label = {}) {
    return out_.report(make_diagnostic(code, where, std::move(message), std::move(label)));
  }

  void capacity() {
    if (!policy_.cluster) return;
    const auto& types = policy_.types();
    for (size_t t = 0; t < types.size(); ++t) {
      const InstanceType& type = types[t];
      model::Resources total{};
      std::vector<std::pair<const Team*, const Quota*>> holders;
      for (const Team& team : policy_.teams) {
        for (const Quota& q : team.quotas) {
          if (q.type != t) continue;
          holders.emplace_back(&team, &q);
          for (size_t r = 0; r < model::kResourceCount; ++r) total[r] += q.nominal[r];
        }
      }
      const int64_t capacity = policy_.capacity_of(t);
      if (!type.hyperpod) {
        for (const auto& [team, quota] : holders) {
          warn(Code::not_hyperpod_type, quota->where, fmt::format("HyperPod does not support `{}`", type.name),
               "not a HyperPod type")
              .help = "the catalog marks it `hyperpod = false`: it is not in the SageMaker ClusterInstanceType enum";
        }
      }
      for (const auto& [team, quota] : holders) {
        for (const PartitionQuota& p : quota->partitions) {
          if (model::in_hyperpod_partition_enum(p.profile)) continue;
          warn(Code::partition_not_in_hyperpod_api, p.where,
               fmt::format("HyperPod's API does not accept `{}` partitions", p.profile), "not in `MIGProfileType`")
              .help = fmt::format("Kueue takes `{}` (`gov export kueue`), but HyperPod's `AcceleratorPartition` type "
                                  "does not list it, so `gov export hyperpod` cannot write this quota",
                                  model::partition_resource_name(p.profile));
        }
      }
      if (!type.hyperpod && holders.empty() && capacity > 0) {
        for (const Capacity& c : policy_.cluster->capacity) {
          if (c.type != t) continue;
          warn(Code::not_hyperpod_type, c.where, fmt::format("HyperPod does not support `{}`", type.name),
               "not a HyperPod type")
              .help = "the catalog marks it `hyperpod = false`: it is not in the SageMaker ClusterInstanceType enum";
        }
      }
      if (holders.empty()) continue;
      if (capacity == 0) {
        for (const auto& [team, quota] : holders) {
          warn(Code::quota_without_capacity, quota->where,
               fmt::format("team `{}` has a quota for `{}`, but the cluster has none", team->name, type.name),
               "no capacity")
              .help = fmt::format("add `{}: N` to the cluster's capacity, or remove the quota", type.name);
        }
        continue;
      }
      const double guaranteed = type.instances_holding(total);
      if (guaranteed <= static_cast<double>(capacity) + 1e-9) continue;
      quota_over_capacity(type, t, capacity, guaranteed, holders);
    }
  }

  /// W0101 lands on the quota that pushes the sum over capacity (in declaration order): the
  /// line a pull request changes, more often than the cluster's capacity. The capacity and
  /// every other holder are notes, so each format can show them.
  void quota_over_capacity(const check::InstanceType& type, size_t t, int64_t capacity, double guaranteed,
                           const std::vector<std::pair<const Team*, const Quota*>>& holders) {
    const auto instances_of = [&](const model::Resources& amounts) { return type.instances_holding(amounts); };
    model::Resources running{};
    size_t culprit = holders.size() - 1;
    for (size_t i = 0; i < holders.size(); ++i) {
      for (size_t r = 0; r < model::kResourceCount; ++r) running[r] += holders[i].second->nominal[r];
      if (instances_of(running) > static_cast<double>(capacity) + 1e-9) {
        culprit = i;
        break;
      }
    }
    const auto& [team, quota] = holders[culprit];
    Diagnostic& d = warn(Code::quota_exceeds_capacity, quota->where,
                         fmt::format("team `{}`'s quota takes the guaranteed `{}` to {} instances, more than the cluster's {}",
                                     team->name, type.name, instances_text(guaranteed), capacity),
                         fmt::format("guaranteed {} of them here", instances_text(instances_of(quota->nominal))));
    for (const Capacity& c : policy_.cluster->capacity) {
      if (c.type == t) d.notes.push_back({c.where, fmt::format("the cluster has {} `{}`", capacity, type.name)});
    }
    for (size_t i = 0; i < holders.size(); ++i) {
      if (i == culprit) continue;
      d.notes.push_back({holders[i].second->where, fmt::format("team `{}` is guaranteed {} of them here", holders[i].first->name,
                                                               instances_text(instances_of(holders[i].second->nominal)))});
    }
    d.help = "HyperPod allows planned capacity, but guaranteed quota that does not exist cannot be reclaimed";
  }

  /// Teams that can never run a task (issue 23, point 7): no quota at all, or quotas that
  /// guarantee nothing and let it borrow nothing (a percentage borrow limit of a zero quota is
  /// zero). Inactive teams admit nothing by design and are left alone.
  void idle_teams() {
    for (const Team& team : policy_.teams) {
      if (!team.active) continue;
      const bool can_use_something = std::any_of(team.quotas.begin(), team.quotas.end(), [](const Quota& q) {
        for (model::Resource r : model::kAllResources) {
          if (q.nominal[model::index(r)] > 0 || q.borrowing_limit[model::index(r)] > 0) return true;
        }
        return false;
      });
      if (can_use_something) continue;
      // Quotas written but not resolved (no cluster, no catalog, an unknown type) were
      // reported where they stand, or cannot be judged in this file alone.
      if (team.quotas.empty() && team.declared_quotas > 0) continue;
      // An instance type the cluster has, for the help's examples (HyperPod's borrow-only team is
      // a zero quota with an absolute borrow limit).
      std::string type = "ml.g5.8xlarge";
      if (policy_.cluster && !policy_.cluster->capacity.empty() && policy_.cluster->capacity.front().type < policy_.types().size()) {
        type = policy_.types()[policy_.cluster->capacity.front().type].name;
      }
      if (team.quotas.empty()) {
        warn(Code::team_never_runs, team.where, fmt::format("team `{}` has no quota, so it can never run a task", team.name),
             "no quota")
            .help = fmt::format("give it a quota (`quota {} {{ instances = 1 }}`); a team that only borrows has a zero "
                                "quota with an absolute borrow limit (`quota {} {{ instances = 0, borrow-limit = {{ "
                                "instances = 1 }} }}`); or remove the team",
                                type, type);
        continue;
      }
      warn(Code::team_never_runs, team.where,
           fmt::format("team `{}` is guaranteed nothing and may borrow nothing, so it can never run a task", team.name),
           "every quota is zero")
          .help = fmt::format("a percentage `borrow-limit` of a zero quota is zero: give the team a nominal quota, or an "
                              "absolute limit of whole instances (`borrow-limit = {{ instances = 1 }}` inside `quota {} "
                              "{{ ... }}`)",
                              team.quotas.front().type_name);
    }
  }

  void sharing() {
    const bool fair_share = !policy_.settings || policy_.settings->idle_compute == IdleCompute::fair_share;
    for (const Team& team : policy_.teams) {
      if (!fair_share && team.fair_share_weight_given) {
        warn(Code::weight_without_fair_share, team.where,
             fmt::format("team `{}` sets a fair-share weight, but idle compute is `fcfs`", team.name), "no effect")
            .help = "set `idle-compute = fair-share` in the policy, or remove the weight";
      }
      // HyperPod names the team's LocalQueue `hyperpod-ns-TEAM-localqueue` (so does `gov export
      // kueue --naming hyperpod`), and a job names its queue in a label, at most 63 characters.
      if (const std::string queue = "hyperpod-ns-" + team.name + "-localqueue"; queue.size() > 63) {
        warn(Code::queue_name_too_long, team.where,
             fmt::format("the LocalQueue HyperPod names for team `{}` has {} characters, more than the 63 a "
                         "`kueue.x-k8s.io/queue-name` label takes",
                         team.name, queue.size()),
             "too long for a queue-name label")
            .help = fmt::format("no job could name the queue `{}`; shorten the team's name to {} characters at most",
                                queue, 63 - (queue.size() - team.name.size()));
      }
      if (team.fair_share_weight_given && !model::hyperpod_weight(team.fair_share_weight_micros)) {
        warn(Code::weight_not_in_hyperpod_api, team.fair_share_weight_at.value_or(team.where),
             fmt::format("HyperPod's API does not accept the fair-share weight `{}` of team `{}`",
                         model::weight_text(team.fair_share_weight_micros), team.name),
             "not a HyperPod weight")
            .help = "Kueue takes any non-negative number (`gov export kueue`), but HyperPod's `FairShareWeight` is a whole "
                    "number from 0 to 100, so `gov export hyperpod` cannot write it";
      }
      if (team.sharing == model::Sharing::lend && team.borrow_limit_given) {
        warn(Code::borrow_limit_on_lend_team, team.borrow_limit_at.value_or(team.where),
             fmt::format("team `{}` only lends, so its borrow limit has no effect", team.name), "no effect")
            .help = "use `sharing = lend-and-borrow` to let it borrow, or remove `borrow-limit`";
      }
      // The same of a quota's own `borrow-limit = { ... }` (the export writes no borrowing).
      for (const Quota& q : team.quotas) {
        if (team.sharing != model::Sharing::lend) break;
        const bool given = q.borrow_limit_unlimited || q.borrow_limit_instances ||
                           std::any_of(q.borrow_limit_given.begin(), q.borrow_limit_given.end(), [](bool b) { return b; }) ||
                           std::any_of(q.partitions.begin(), q.partitions.end(),
                                       [](const PartitionQuota& p) { return p.borrow_limit_given; });
        if (!given) continue;
        warn(Code::borrow_limit_on_lend_team, q.where,
             fmt::format("team `{}` only lends, so the borrow limit of its `{}` quota has no effect", team.name, q.type_name),
             "no effect")
            .help = "use `sharing = lend-and-borrow` to let it borrow, or remove the quota's `borrow-limit`";
      }
      if (team.sharing != model::Sharing::lend && team.active) {
        for (const Quota& q : team.quotas) accelerators_borrowed_alone(team, q);
      }
      if (team.sharing == model::Sharing::lend || (policy_.settings && policy_.settings->idle_resource_sharing)) continue;
      for (const Quota& q : team.quotas) {
        const bool may_borrow = std::any_of(q.borrowing_limit.begin(), q.borrowing_limit.end(), [](auto a) { return a > 0; });
        // Without capacity the quota-without-capacity warning already says it all.
        if (!may_borrow || has_lender(team, q.type) || policy_.capacity_of(q.type) == 0) continue;
        warn(Code::borrower_without_lender, q.where,
             fmt::format("team `{}` may borrow `{}`, but no other team lends it", team.name, q.type_name),
             "nothing to borrow")
            .help = "another team needs a quota of this type with `sharing` other than `dont-lend`";
      }
    }
  }

  /// `borrow-limit = { gpus = 8 }` on a quota whose vCPU or memory has no nominal and no limit of
  /// its own: amounts in a borrow limit set single resources (unlike a quota's, which derive vCPU
  /// and memory), the others keep the team's percentage of the quota, here 0. Every real task asks
  /// for CPU, so the borrowed accelerators can never be used (a new author's finding: silent in
  /// check, lint and tests that ask only for GPUs).
  void accelerators_borrowed_alone(const Team& team, const Quota& q) {
    if (q.borrow_limit_unlimited || q.type >= policy_.types().size()) return;
    const InstanceType& type = policy_.types()[q.type];
    for (model::Resource acc : {model::Resource::gpu, model::Resource::neuron}) {
      const size_t a = model::index(acc);
      if (!q.borrow_limit_given[a] || q.borrowing_limit[a] <= 0 || !q.borrow_limit_at[a]) continue;
      std::vector<std::string_view> starved;
      for (model::Resource r : {model::Resource::vcpu, model::Resource::memory}) {
        const size_t i = model::index(r);
        if (type.per_instance[i] > 0 && !q.absolute_borrow_limit[i] && q.nominal[i] == 0 && q.borrowing_limit[i] == 0) {
          starved.push_back(r == model::Resource::vcpu ? "vCPU" : "memory");
        }
      }
      if (starved.empty()) return;
      const int64_t per_instance = type.per_instance[a];
      const int64_t instances = per_instance > 0 ? (q.borrowing_limit[a] + per_instance - 1) / per_instance : 1;
      warn(Code::accelerators_borrowed_alone, *q.borrow_limit_at[a],
           fmt::format("team `{}` may borrow {} {} of `{}` but no {}, so a task that asks for {} there can never run",
                       team.name, q.borrowing_limit[a], acc == model::Resource::gpu ? "GPUs" : "Neuron devices", q.type_name,
                       fmt::join(starved, " or "), starved.size() == 2 ? "CPU or memory" : starved.front() == "vCPU" ? "CPU" : "memory"),
           fmt::format("no {} to go with it", fmt::join(starved, " or ")))
          .help = fmt::format("amounts in a `borrow-limit` set single resources (the others keep the team's percentage of "
                              "the quota, here 0): write `borrow-limit = {{ instances = {} }}` for every resource of {} {}, "
                              "or give `vcpus` and `memory` too (`unlimited` is allowed)",
                              instances, instances, instances == 1 ? "instance" : "instances");
      return;
    }
  }

  /// Kueue controls set where they cannot change a decision.
  void controls() {
    const bool fair_share = !policy_.settings || policy_.settings->idle_compute == IdleCompute::fair_share;
    if (!fair_share && policy_.settings->fair_share_strategies_at) {
      warn(Code::fair_share_preemption_without_fair_share, *policy_.settings->fair_share_strategies_at,
           "fair-sharing preemption strategies have no effect: idle compute is `fcfs`", "no effect")
          .help = "set `idle-compute = fair-share`, or remove `fair-share-preemption`";
    }
    for (const Team& team : policy_.teams) {
      if (fair_share && team.borrow_within_cohort_at && team.borrow_within_cohort != model::BorrowWithinCohort::never) {
        warn(Code::borrow_within_cohort_with_fair_share, *team.borrow_within_cohort_at,
             fmt::format("team `{}` sets `borrow-within-cohort`, which fair sharing ignores", team.name), "no effect")
            .help = "with `idle-compute = fair-share` a team that reclaims may always preempt while borrowing, within "
                    "the fair-share rules; remove `borrow-within-cohort` or set `idle-compute = fcfs`";
      }
      if (team.borrow_priority_threshold_at && team.borrow_within_cohort == model::BorrowWithinCohort::never) {
        warn(Code::threshold_without_borrowing, *team.borrow_priority_threshold_at,
             fmt::format("team `{}` never preempts while borrowing, so its threshold has no effect", team.name),
             "no effect")
            .help = "set `policy = lower-priority`, or remove `max-priority-threshold`";
      }
      if (team.fungibility_at && team.quotas.size() == 1) {
        warn(Code::fungibility_with_one_instance_type, *team.fungibility_at,
             fmt::format("team `{}` has one instance type, so there is no other to try", team.name), "no effect")
            .help = "flavor fungibility chooses among a team's instance types: add a quota for another type, or "
                    "remove the setting";
      }
    }
  }

  bool has_lender(const Team& borrower, size_t type) const {
    // The cohort's own quota lends to every team.
    if (policy_.cohort) {
      for (const Quota& q : policy_.cohort->quotas) {
        if (q.type == type && std::any_of(q.nominal.begin(), q.nominal.end(), [](auto a) { return a > 0; })) return true;
      }
    }
    // In a tree, a cohort's own quota lends to the teams below it (an approximation: any cohort's
    // quota of the type counts, as any team's does).
    for (const Cohort& cohort : policy_.cohort_tree) {
      for (const Quota& q : cohort.quotas) {
        if (q.type == type && std::any_of(q.nominal.begin(), q.nominal.end(), [](auto a) { return a > 0; })) return true;
      }
    }
    for (const Team& team : policy_.teams) {
      if (&team == &borrower || team.sharing == model::Sharing::dont_lend) continue;
      for (const Quota& q : team.quotas) {
        const bool lends = std::any_of(q.lending_limit.begin(), q.lending_limit.end(), [](auto a) { return a > 0; });
        if (q.type == type && lends) return true;
      }
    }
    return false;
  }

  void classes() {
    if (policy_.settings && policy_.settings->prioritization == Prioritization::fcfs && !policy_.classes.empty()) {
      warn(Code::unusable_priority_class, policy_.classes.front().where,
           "priority classes have no effect: task prioritization is `fcfs`", "every task has priority 0")
          .help = "set `task-prioritization = task-ranking`, or remove the classes";
    }
    std::map<int32_t, const PriorityClass*> by_weight;
    for (const PriorityClass& c : policy_.classes) {
      auto [it, inserted] = by_weight.emplace(c.weight, &c);
      if (inserted) continue;
      Diagnostic& d = warn(Code::equal_priority_weights, c.where,
                           fmt::format("`{}` and `{}` have the same weight {}", it->second->name, c.name, c.weight),
                           "same weight");
      d.notes.push_back({it->second->where, fmt::format("`{}` is declared here", it->second->name)});
      d.help = "give each class its own weight so that one outranks the other";
    }
  }

  void rules() {
    for (const Rule& rule : policy_.rules) {
      if (rule.constant) {
        warn(Code::constant_rule, Location{rule.where.source, rule.when.span},
             fmt::format("rule `{}` {} matches: its condition does not depend on the task", rule.name,
                         *rule.constant ? "always" : "never"),
             *rule.constant ? "always true" : "always false");
      }
      if (rule.action != ast::RuleAction::warn) continue;
      for (const Rule& deny : policy_.rules) {
        if (deny.action != ast::RuleAction::deny || !same_expression(deny.when, rule.when)) continue;
        Diagnostic& d = warn(Code::warn_duplicates_deny, rule.where,
                             fmt::format("warning `{}` can never be seen: rule `{}` denies the same tasks", rule.name, deny.name),
                             "shadowed");
        d.notes.push_back({deny.where, "the deny rule is here"});
        break;
      }
    }
  }

  void tests() {
    for (const Test& test : policy_.tests) {
      const bool asserts = std::any_of(test.steps.begin(), test.steps.end(),
                                       [](const TestStep& s) { return s.kind == ast::Step::Kind::expect; });
      if (!asserts) {
        warn(Code::test_asserts_nothing, test.where, fmt::format("test \"{}\" has no `expect` step", test.name),
             "asserts nothing")
            .help = "add `expect TASK OUTCOME` after the steps";
      }
    }
  }

  const Policy& policy_;
  Diagnostics& out_;
};

/// Reports W0117 for a name in an allow comment that is no lint warning (`# gov:allow(typo)`
/// would otherwise silence nothing, silently), with a did-you-mean among the warnings' names.
void check_allow_name(std::string_view name, Location where, Diagnostics& out) {
  if (const std::optional<CodeInfo> code = find_code(name); code && code->severity == Severity::warning) return;
  std::vector<std::string> names;
  for (const CodeInfo& code : all_codes()) {
    if (code.severity == Severity::warning) names.emplace_back(code.name);
  }
  Diagnostic& d = out.report(make_diagnostic(Code::unknown_allow, where,
                                             fmt::format("`gov:allow({})` names no lint warning", name), "silences nothing"));
  d.help = did_you_mean(name, names).value_or("run `gov explain` for the warnings' names and codes");
}

/// Names allowed per (source, line) by `# gov:allow(a, b)` comments; names that are no warning
/// are reported into `unknown`.
std::map<std::pair<SourceId, uint32_t>, std::set<std::string>> allow_comments(const Program& program,
                                                                              Diagnostics& unknown) {
  std::map<std::pair<SourceId, uint32_t>, std::set<std::string>> allowed;
  for (const ProgramFile& file : program.files) {
    const SourceFile& source = program.sources.get(file.source);
    for (const ast::Comment& c : file.ast.comments) {
      const std::string_view text = source.slice(c.span);
      const size_t open = text.find("gov:allow(");
      if (open == std::string_view::npos) continue;
      const size_t close = text.find(')', open);
      std::string_view names = text.substr(open + 10, close == std::string_view::npos ? text.npos : close - open - 10);
      const uint32_t line = source.line_column(c.span.begin).line;
      while (!names.empty()) {
        const size_t comma = names.find(',');
        std::string_view name = names.substr(0, comma);
        while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
        while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
        if (!name.empty()) {
          allowed[{file.source, line}].insert(std::string(name));
          const auto begin = static_cast<uint32_t>(c.span.begin + (name.data() - text.data()));
          check_allow_name(name, {file.source, {begin, static_cast<uint32_t>(begin + name.size())}}, unknown);
        }
        if (comma == std::string_view::npos) break;
        names.remove_prefix(comma + 1);
      }
    }
  }
  return allowed;
}

/// The start offset of the top-level declaration that contains `where`.
std::optional<uint32_t> declaration_start(const Program& program, const Location& where) {
  for (const ProgramFile& file : program.files) {
    if (file.source != where.source) continue;
    for (const ast::Declaration& d : file.ast.declarations) {
      const Span span = ast::span_of(d);
      if (span.begin <= where.span.begin && where.span.begin < span.end) return span.begin;
    }
  }
  return std::nullopt;
}

}  // namespace

Diagnostics lint(const Policy& policy, const Program& program, const std::vector<std::string>& allowed,
                 const Diagnostics& from_elsewhere) {
  Diagnostics found;
  Linter(policy, found).run();
  for (const Diagnostic& d : from_elsewhere.items()) found.report(d);
  const auto comments = allow_comments(program, found);
  Diagnostics kept;
  for (const Diagnostic& d : found.items()) {
    const CodeInfo& info = code_info(d.code);
    auto is_allowed = [&](const std::set<std::string>& names) {
      return names.count(std::string(info.name)) || names.count(std::string(info.id));
    };
    if (is_allowed({allowed.begin(), allowed.end()})) continue;
    // An allow comment counts on the reported line, the line above it, or the line above
    // the declaration the warning is in (so one comment above a rule covers the rule); and
    // the same for each location a note points at (a finding with several causes, such as
    // W0101 on a quota with the cluster's capacity as a note, is silenced at any of them).
    std::vector<Location> places = {d.primary};
    for (const Note& note : d.notes) {
      if (note.where) places.push_back(*note.where);
    }
    const bool silenced = std::any_of(places.begin(), places.end(), [&](const Location& where) {
      const SourceFile& file = program.sources.get(where.source);
      std::vector<uint32_t> lines = {file.line_column(where.span.begin).line};
      lines.push_back(lines.front() - 1);
      if (auto start = declaration_start(program, where)) {
        lines.push_back(file.line_column(*start).line);
        lines.push_back(file.line_column(*start).line - 1);
      }
      return std::any_of(lines.begin(), lines.end(), [&](uint32_t line) {
        auto it = comments.find({where.source, line});
        return it != comments.end() && is_allowed(it->second);
      });
    });
    if (silenced) continue;
    kept.report(d);
  }
  program.add_import_chains(kept);
  kept.sort();
  return kept;
}

}  // namespace gov::check
