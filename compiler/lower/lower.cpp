#include "compiler/lower/lower.hpp"

#include <algorithm>

#include "compiler/ir/rule_index.hpp"
#include "compiler/support/assert.hpp"

#include <string>
#include <unordered_map>

namespace gov::lower {
namespace {

using check::TypedExpr;
using Kind = TypedExpr::Kind;

/// The ids of the module's strings and label keys by their text, kept across rules, so that
/// lowering stays linear in the policy's size (a set of 100,000 strings took minutes with a
/// linear search per string).
struct Interned {
  std::unordered_map<std::string, int64_t> strings;
  std::unordered_map<std::string, int32_t> labels;
};

class RuleLowering {
 public:
  RuleLowering(ir::Module& module, ir::Rule& rule, Interned& interned)
      : module_(module), rule_(rule), interned_(interned) {}

  /// Emits `e` and returns the register holding its value.
  int32_t emit(const TypedExpr& e) {
    switch (e.kind) {
      case Kind::constant: return push(ir::Op::constant, e.type, -1, -1, e.value);
      case Kind::string_constant: return push(ir::Op::constant, e.type, -1, -1, intern(e.text));
      case Kind::task_field: return push(ir::Op::task_field, e.type, -1, -1, e.value);
      case Kind::team_stat: return push(ir::Op::team_stat, e.type, -1, -1, e.value);
      case Kind::cluster_stat: return push(ir::Op::cluster_stat, e.type, -1, -1, e.value);
      case Kind::label_value: return push(ir::Op::label_value, e.type, -1, -1, label(e.text));
      case Kind::label_present: return push(ir::Op::label_present, e.type, -1, -1, label(e.text));
      case Kind::unary: {
        const int32_t a = emit(e.operands[0]);
        return push(e.unary_op == ast::UnaryOp::logical_not ? ir::Op::logical_not : ir::Op::neg, e.type, a);
      }
      case Kind::in_set: {
        const int32_t a = emit(e.operands[0]);
        std::vector<int64_t> values = e.set;
        for (const std::string& s : e.string_set) values.push_back(intern(s));
        module_.sets.push_back(std::move(values));
        return push(ir::Op::in_set, e.type, a, -1, static_cast<int64_t>(module_.sets.size() - 1));
      }
      case Kind::binary: {
        const int32_t a = emit(e.operands[0]);
        const int32_t b = emit(e.operands[1]);
        return push(binary_op(e.binary_op), e.type, a, b);
      }
    }
    return -1;
  }

  int32_t label(const std::string& key) {
    const auto [it, added] = interned_.labels.try_emplace(key, static_cast<int32_t>(module_.label_keys.size()));
    if (added) module_.label_keys.push_back(key);
    return it->second;
  }

 private:
  int32_t push(ir::Op op, ir::ValueType type, int32_t a = -1, int32_t b = -1, int64_t imm = 0) {
    rule_.code.push_back({op, type, a, b, imm});
    return static_cast<int32_t>(rule_.code.size() - 1);
  }

  int64_t intern(const std::string& text) {
    const auto [it, added] = interned_.strings.try_emplace(text, static_cast<int64_t>(module_.strings.size()));
    if (added) module_.strings.push_back(text);
    return it->second;
  }

  static ir::Op binary_op(ast::BinaryOp op) {
    switch (op) {
      case ast::BinaryOp::logical_or: return ir::Op::logical_or;
      case ast::BinaryOp::logical_and: return ir::Op::logical_and;
      case ast::BinaryOp::eq: return ir::Op::eq;
      case ast::BinaryOp::ne: return ir::Op::ne;
      case ast::BinaryOp::lt: return ir::Op::lt;
      case ast::BinaryOp::le: return ir::Op::le;
      case ast::BinaryOp::gt: return ir::Op::gt;
      case ast::BinaryOp::ge: return ir::Op::ge;
      case ast::BinaryOp::add: return ir::Op::add;
      case ast::BinaryOp::sub: return ir::Op::sub;
      case ast::BinaryOp::mul: return ir::Op::mul;
      case ast::BinaryOp::div: return ir::Op::div;
      case ast::BinaryOp::in:
      case ast::BinaryOp::not_in: break;  // lowered as in_set by the checker
    }
    return ir::Op::eq;
  }

  ir::Module& module_;
  ir::Rule& rule_;
  Interned& interned_;
};

ir::Rule lower_rule(ir::Module& module, const check::Rule& rule, Interned& interned) {
  ir::Rule out;
  out.name = rule.name;
  out.action = rule.action == ast::RuleAction::deny ? ir::RuleAction::deny : ir::RuleAction::warn;
  RuleLowering lowering(module, out, interned);
  lowering.emit(rule.when);
  out.condition_length = static_cast<uint32_t>(out.code.size());
  for (const check::MessagePart& part : rule.message) {
    ir::MessagePart p;
    if (!part.value) {
      p.kind = ir::MessagePart::Kind::text;
      p.text = part.text;
    } else if (part.value->kind == Kind::label_value) {
      p.kind = ir::MessagePart::Kind::label;
      p.label = lowering.label(part.value->text);
    } else if (part.value->kind == Kind::task_field && part.value->value == static_cast<int64_t>(ir::TaskField::id)) {
      p.kind = ir::MessagePart::Kind::task_id;
    } else {
      p.kind = ir::MessagePart::Kind::value;
      p.type = part.value->type;
      p.reg = lowering.emit(*part.value);
    }
    out.message.push_back(std::move(p));
  }
  return out;
}

// A quota's five resources, then its partitions in their columns (a profile the quota does not
// give has nominal 0 there; its lending limit stays unlimited, which lends nothing of 0).
ir::FlavorQuota lower_quota(const ir::Module& module, const check::Quota& q) {
  ir::FlavorQuota out;
  out.flavor = static_cast<uint32_t>(q.type);
  out.nominal = ir::columns_of(q.nominal);
  out.borrowing_limit = ir::columns_of(q.borrowing_limit);
  for (ir::Resource r : ir::kAllResources) out.lending_limit[ir::index(r)] = q.lending_limit[ir::index(r)];
  for (const check::PartitionQuota& p : q.partitions) {
    const int32_t k = module.partition_index(p.profile);
    GOV_ASSERT(k >= 0, "a quota's profile has a partition column");
    const size_t i = ir::index(ir::partition_column(static_cast<size_t>(k)));
    out.nominal[i] = p.nominal;
    out.borrowing_limit[i] = p.borrowing_limit;
    out.lending_limit[i] = p.lending_limit;
  }
  return out;
}

// A team's resource groups: each group's covered columns (partitions with gpus) and flavors; a
// quota's columns outside its group are not the team's (Kueue's flavor lists only the group's
// resources), so they are 0, whatever `instances = N` derived for them.
void lower_groups(const ir::Module& module, const check::Team& team, ir::Team& out) {
  for (const check::ResourceGroup& group : team.groups) {
    ir::ResourceGroup& lowered = out.groups.emplace_back();
    for (model::Resource r : group.covers) {
      lowered.covers |= 1u << ir::index(r);
      if (r != model::Resource::gpu) continue;
      for (size_t k = 0; k < module.partitions.size(); ++k) lowered.covers |= 1u << ir::index(ir::partition_column(k));
    }
    for (const auto& [name, at] : group.flavors) {
      const auto quota = std::find_if(team.quotas.begin(), team.quotas.end(),
                                      [&name](const check::Quota& q) { return q.type_name == name; });
      GOV_ASSERT(quota != team.quotas.end(), "a checked group lists the team's quotas");
      lowered.flavors.push_back(static_cast<uint32_t>(quota->type));
    }
    for (ir::FlavorQuota& quota : out.quotas) {
      if (std::find(lowered.flavors.begin(), lowered.flavors.end(), quota.flavor) == lowered.flavors.end()) continue;
      for (size_t i = 0; i < ir::kColumnCount; ++i) {
        if ((lowered.covers >> i & 1u) != 0) continue;
        quota.nominal[i] = 0;
        quota.borrowing_limit[i] = 0;
      }
    }
  }
}

}  // namespace

ir::Module lower(const check::Policy& policy) {
  ir::Module module;
  module.strings.push_back("");
  if (policy.cluster) module.cluster = policy.cluster->name;
  const check::Settings settings = policy.settings.value_or(check::Settings{});
  module.settings.rank_by_priority = settings.prioritization == check::Prioritization::task_ranking;
  module.settings.fair_sharing = settings.idle_compute == check::IdleCompute::fair_share;
  module.settings.idle_resource_sharing = settings.idle_resource_sharing;
  module.settings.default_class = settings.default_class;
  module.settings.fair_share_strategies = settings.fair_share_strategies;
  const auto& types = policy.types();
  for (size_t t = 0; t < types.size(); ++t) {
    module.flavors.push_back({types[t].name, ir::columns_of(types[t].per_instance), policy.capacity_of(t)});
  }
  module.partitions = policy.partition_profiles();
  for (const check::PriorityClass& c : policy.classes) module.classes.push_back({c.name, c.weight});
  for (const check::Team& team : policy.teams) {
    ir::Team out;
    out.name = team.name;
    out.sharing = team.sharing;
    out.within_team = team.preempt_team_tasks;
    out.reclaim_within_cohort = team.reclaim_within_cohort;
    out.borrow_within_cohort = team.borrow_within_cohort;
    // maxPriorityThreshold compares task priorities, so the class counts as the priority a task
    // of that class has (its weight; 0 under fcfs prioritization).
    if (team.borrow_priority_threshold >= 0) out.borrow_priority_threshold = module.priority_of(team.borrow_priority_threshold);
    out.queueing = team.queueing;
    out.when_can_borrow = team.when_can_borrow;
    out.when_can_preempt = team.when_can_preempt;
    out.flavor_preference = team.flavor_preference;
    out.fair_share_weight_micros = team.fair_share_weight_micros;
    out.active = team.active;
    out.cohort = team.cohort_index;
    for (const check::Quota& q : team.quotas) out.quotas.push_back(lower_quota(module, q));
    lower_groups(module, team, out);
    module.teams.push_back(std::move(out));
  }
  if (policy.cohort) {
    // A profile no team's quota gives has no column: no team could borrow it.
    for (const check::Quota& q : policy.cohort->quotas) {
      ir::CohortQuota own;
      own.flavor = static_cast<uint32_t>(q.type);
      own.nominal = ir::columns_of(q.nominal);
      for (const check::PartitionQuota& p : q.partitions) {
        const int32_t k = module.partition_index(p.profile);
        if (k >= 0) own.nominal[ir::index(ir::partition_column(static_cast<size_t>(k)))] = p.nominal;
      }
      module.cohort_quotas.push_back(own);
    }
  }
  for (const check::Cohort& c : policy.cohort_tree) {
    ir::CohortNode node;
    node.name = c.name;
    node.parent = c.parent;
    node.fair_share_weight_micros = c.fair_share_weight_micros;
    for (const check::Quota& q : c.quotas) node.quotas.push_back(lower_quota(module, q));
    module.cohorts.push_back(std::move(node));
  }
  Interned interned;
  interned.strings.emplace("", 0);  // strings[0], pushed above
  for (const check::Rule& rule : policy.rules) module.rules.push_back(lower_rule(module, rule, interned));
  module.rule_index = ir::index_rules(module);
  return module;
}

}  // namespace gov::lower
