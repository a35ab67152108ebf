#include "compiler/ir/printer.hpp"

#include <limits>

#include <fmt/format.h>

#include "compiler/ir/rule_index.hpp"

namespace gov::ir {
namespace {

std::string resources(const Resources& r) {
  std::vector<std::string> parts;
  // Base units: devices, millicores, MiB.
  static constexpr std::array<std::string_view, kResourceCount> kNames = {"gpu", "neuron", "vcpu_m", "memory_mib", "efa"};
  for (Resource res : kAllResources) {
    const Amount a = r[index(res)];
    parts.push_back(a == kUnlimited ? fmt::format("{}=unlimited", kNames[index(res)])
                                    : fmt::format("{}={}", kNames[index(res)], a));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

/// A key's value as the module names it: `3 (team-c)`, `80 (experimentation)`, `4 ("batch")`.
std::string key_value_text(const Module& m, const RuleKey& key, int64_t value) {
  const auto in = [value](const auto& items) { return value >= 0 && static_cast<size_t>(value) < items.size(); };
  std::string name;
  if (key.source == RuleKey::Source::label || key.index == static_cast<int64_t>(TaskField::id)) {
    if (in(m.strings)) name = fmt::format("\"{}\"", m.strings[static_cast<size_t>(value)]);
  } else if (key.index == static_cast<int64_t>(TaskField::team)) {
    if (in(m.teams)) name = m.teams[static_cast<size_t>(value)].name;
  } else if (key.index == static_cast<int64_t>(TaskField::flavor)) {
    if (in(m.flavors)) name = m.flavors[static_cast<size_t>(value)].name;
  } else if (key.index == static_cast<int64_t>(TaskField::priority)) {
    std::vector<std::string_view> classes;
    for (const PriorityClass& c : m.classes) {
      if (c.weight == value) classes.push_back(c.name);
    }
    name = fmt::format("{}", fmt::join(classes, ", "));
  }
  return name.empty() ? fmt::format("{}", value) : fmt::format("{} ({})", value, name);
}

std::string rule_list(const std::vector<uint32_t>& rules) { return fmt::format("[{}]", fmt::join(rules, ", ")); }

/// The rule index (rule_index.hpp): which rules a back end evaluates for which task.
std::string rule_index(const Module& m) {
  const RuleIndex& index = m.rule_index;
  if (m.rules.empty()) return "";
  if (!index.built) return "rule_index none (every rule is evaluated)\n";
  std::string out = fmt::format("rule_index always {}\n", rule_list(index.always));
  for (const RuleDimension& dimension : index.dimensions) {
    out += fmt::format("  by {}\n", key_name(m, dimension.key));
    for (const RuleBucket& bucket : dimension.buckets)
      out += fmt::format("    {} {}\n", key_value_text(m, dimension.key, bucket.value), rule_list(bucket.rules));
  }
  if (!index.never.empty()) out += fmt::format("  never {}\n", rule_list(index.never));
  return out;
}

}  // namespace

std::string_view op_name(Op op) {
  switch (op) {
    case Op::constant: return "constant";
    case Op::task_field: return "task_field";
    case Op::team_stat: return "team_stat";
    case Op::cluster_stat: return "cluster_stat";
    case Op::label_value: return "label_value";
    case Op::label_present: return "label_present";
    case Op::eq: return "eq";
    case Op::ne: return "ne";
    case Op::lt: return "lt";
    case Op::le: return "le";
    case Op::gt: return "gt";
    case Op::ge: return "ge";
    case Op::logical_and: return "and";
    case Op::logical_or: return "or";
    case Op::logical_not: return "not";
    case Op::add: return "add";
    case Op::sub: return "sub";
    case Op::mul: return "mul";
    case Op::div: return "div";
    case Op::neg: return "neg";
    case Op::in_set: return "in_set";
  }
  return "?";
}

std::string_view type_name(ValueType type) {
  switch (type) {
    case ValueType::boolean: return "boolean";
    case ValueType::integer: return "integer";
    case ValueType::millicores: return "millicores";
    case ValueType::mebibytes: return "mebibytes";
    case ValueType::string: return "string";
    case ValueType::priority: return "priority";
    case ValueType::team: return "team";
    case ValueType::flavor: return "flavor";
  }
  return "?";
}

std::string print(const Module& m) {
  std::string out = fmt::format("module {}\n", m.cluster);
  std::vector<std::string_view> strategies;
  for (FairShareStrategy s : m.settings.fair_share_strategies) strategies.push_back(fair_share_strategy_name(s));
  out += fmt::format(
      "settings rank_by_priority={} fair_sharing={} idle_resource_sharing={} default_class={} "
      "fair_share_strategies=[{}]\n",
      m.settings.rank_by_priority, m.settings.fair_sharing, m.settings.idle_resource_sharing, m.settings.default_class,
      fmt::join(strategies, ","));
  std::vector<bool> used(m.flavors.size(), false);
  for (size_t f = 0; f < m.flavors.size(); ++f) used[f] = m.flavors[f].capacity > 0;
  for (const Team& t : m.teams) {
    for (const FlavorQuota& q : t.quotas) used[q.flavor] = true;
  }
  for (const CohortQuota& q : m.cohort_quotas) used[q.flavor] = true;
  for (const CohortNode& c : m.cohorts) {
    for (const FlavorQuota& q : c.quotas) used[q.flavor] = true;
  }
  out += fmt::format("flavors {} (showing those in use)\n", m.flavors.size());
  for (size_t f = 0; f < m.flavors.size(); ++f) {
    if (!used[f]) continue;
    out += fmt::format("  flavor {} {} capacity={} per_instance {}\n", f, m.flavors[f].name, m.flavors[f].capacity,
                       resources(m.flavors[f].per_instance));
  }
  for (size_t c = 0; c < m.classes.size(); ++c) {
    out += fmt::format("class {} {} weight={}\n", c, m.classes[c].name, m.classes[c].weight);
  }
  for (size_t t = 0; t < m.teams.size(); ++t) {
    const Team& team = m.teams[t];
    const std::string threshold = team.borrow_priority_threshold == std::numeric_limits<int32_t>::max()
                                      ? std::string("none")
                                      : fmt::format("{}", team.borrow_priority_threshold);
    out += fmt::format(
        "team {} {} sharing={} within_team={} reclaim={} borrow_within_cohort={} borrow_threshold={} queueing={} "
        "when_can_borrow={} when_can_preempt={} preference={} weight={}{}{}\n",
        t, team.name, sharing_name(team.sharing), within_team_name(team.within_team),
        reclaim_name(team.reclaim_within_cohort), borrow_within_cohort_name(team.borrow_within_cohort), threshold,
        queueing_name(team.queueing), when_can_borrow_name(team.when_can_borrow),
        when_can_preempt_name(team.when_can_preempt), flavor_preference_name(team.flavor_preference),
        model::weight_text(team.fair_share_weight_micros), team.active ? "" : " inactive",
        team.cohort < 0 ? std::string() : fmt::format(" cohort={}", team.cohort));
    for (const FlavorQuota& q : team.quotas) {
      out += fmt::format("  quota flavor {} ({})\n    nominal         {}\n    borrowing_limit {}\n    lending_limit   {}\n",
                         q.flavor, m.flavors[q.flavor].name, resources(q.nominal), resources(q.borrowing_limit),
                         resources(q.lending_limit));
    }
    for (size_t g = 0; g < team.groups.size(); ++g) {
      std::vector<std::string> covers;
      std::vector<std::string> flavors;
      for (size_t i = 0; i < m.column_count(); ++i) {
        const auto column = static_cast<Resource>(i);
        if (team.groups[g].covers_column(column)) covers.push_back(i < kResourceCount ? std::string(resource_key(column)) : m.partitions[i - kResourceCount]);
      }
      for (uint32_t f : team.groups[g].flavors) flavors.push_back(fmt::format("{} ({})", f, m.flavors[f].name));
      out += fmt::format("  group {} covers [{}] flavors [{}]\n", g, fmt::join(covers, ", "), fmt::join(flavors, ", "));
    }
  }
  for (const CohortQuota& q : m.cohort_quotas) {
    out += fmt::format("cohort quota flavor {} ({})\n    nominal         {}\n", q.flavor, m.flavors[q.flavor].name,
                       resources(q.nominal));
  }
  for (size_t c = 0; c < m.cohorts.size(); ++c) {
    const CohortNode& node = m.cohorts[c];
    out += fmt::format("cohort {} {} parent={} weight={}\n", c, node.name, node.parent,
                       model::weight_text(node.fair_share_weight_micros));
    for (const FlavorQuota& q : node.quotas) {
      out += fmt::format("  quota flavor {} ({})\n    nominal         {}\n    borrowing_limit {}\n    lending_limit   {}\n",
                         q.flavor, m.flavors[q.flavor].name, resources(q.nominal), resources(q.borrowing_limit),
                         resources(q.lending_limit));
    }
  }
  for (size_t r = 0; r < m.rules.size(); ++r) {
    const Rule& rule = m.rules[r];
    out += fmt::format("rule {} {} {}\n", r, rule.name, rule.action == RuleAction::deny ? "deny" : "warn");
    for (size_t i = 0; i < rule.code.size(); ++i) {
      const Instr& in = rule.code[i];
      if (i == rule.condition_length) out += "  ; message values\n";
      std::string operands;
      if (in.a >= 0) operands += fmt::format(" %{}", in.a);
      if (in.b >= 0) operands += fmt::format(", %{}", in.b);
      const bool has_imm = in.op == Op::constant || in.op == Op::task_field || in.op == Op::team_stat ||
                           in.op == Op::cluster_stat || in.op == Op::label_value || in.op == Op::label_present ||
                           in.op == Op::in_set;
      if (has_imm) operands += fmt::format("{}#{}", operands.empty() ? " " : ", ", in.imm);
      out += fmt::format("  %{} = {}{} : {}\n", i, op_name(in.op), operands, type_name(in.type));
    }
    out += fmt::format("  verdict %{}\n", rule.condition_length == 0 ? 0 : rule.condition_length - 1);
  }
  out += rule_index(m);
  for (size_t s = 0; s < m.strings.size(); ++s) out += fmt::format("string {} \"{}\"\n", s, m.strings[s]);
  for (size_t k = 0; k < m.label_keys.size(); ++k) out += fmt::format("label {} \"{}\"\n", k, m.label_keys[k]);
  for (size_t s = 0; s < m.sets.size(); ++s) out += fmt::format("set {} [{}]\n", s, fmt::join(m.sets[s], ", "));
  return out;
}

}  // namespace gov::ir
