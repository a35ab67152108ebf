#include "runtime/engine/rules.hpp"

#include <algorithm>

namespace gov::engine {

AdmissionRules::AdmissionRules(const ir::Module& module, const ir::Evaluator& evaluator)
    : module_(module), evaluator_(evaluator), verdicts_(module.rules.size()) {
  for (size_t i = 0; i < module.strings.size(); ++i)
    string_ids_.emplace(module.strings[i], static_cast<int64_t>(i));
}

int64_t AdmissionRules::string_id(std::string_view text) const {
  const auto it = string_ids_.find(text);
  return it == string_ids_.end() ? ir::kOtherString : it->second;
}

namespace {

using ir::ClusterStat;
using ir::TaskField;
using ir::TeamStat;

void set(std::array<int64_t, ir::kTaskFieldCount>& task, TaskField field, int64_t value) {
  task[static_cast<size_t>(field)] = value;
}

template <size_t N, typename Stat>
void add_stat(std::array<int64_t, N>& figures, Stat stat, ir::Resource r, int64_t value) {
  int64_t& slot = figures[static_cast<size_t>(stat) * ir::kResourceCount + ir::index(r)];
  slot = saturating_add(slot, value);
}

}  // namespace

void AdmissionRules::build_input(const TaskRequest& task, std::string_view id,
                                 const Labels& labels, const QuotaState& quota,
                                 ir::RuleInput& input, std::span<int64_t> label_ids) const {
  input = {};
  set(input.task, TaskField::team, task.team);
  set(input.task, TaskField::priority, task.priority);
  set(input.task, TaskField::flavor, task.requested_flavor);
  set(input.task, TaskField::gpus, task.request[ir::index(ir::Resource::gpu)]);
  set(input.task, TaskField::neuron, task.request[ir::index(ir::Resource::neuron)]);
  set(input.task, TaskField::vcpus, task.request[ir::index(ir::Resource::vcpu)]);
  set(input.task, TaskField::memory, task.request[ir::index(ir::Resource::memory)]);
  set(input.task, TaskField::efa, task.request[ir::index(ir::Resource::efa)]);
  set(input.task, TaskField::instances, task.instances);
  set(input.task, TaskField::pods, task.pods);
  set(input.task, TaskField::id, string_id(id));

  const auto team = static_cast<uint32_t>(task.team);
  for (uint32_t f = 0; f < quota.flavor_count(); ++f) {
    const bool in_scope = task.requested_flavor >= 0
                              ? f == static_cast<uint32_t>(task.requested_flavor)
                              : quota.has_quota(team, f);
    if (!in_scope) continue;
    const ir::Flavor& flavor = module_.flavors[f];
    for (ir::Resource r : ir::kAllResources) {
      const Amount nominal = quota.nominal(team, f, r);
      const Amount used = quota.usage(team, f, r);
      add_stat(input.team, TeamStat::nominal, r, nominal);
      add_stat(input.team, TeamStat::used, r, used);
      add_stat(input.team, TeamStat::borrowed, r, std::max<Amount>(0, used - nominal));
      add_stat(input.team, TeamStat::borrowing_limit, r, quota.borrowing_limit(team, f, r));
      if (quota.has_quota(team, f))
        add_stat(input.team, TeamStat::available, r, quota.available(team, f, r));
      const Amount capacity = flavor.capacity * flavor.per_instance[ir::index(r)];
      const Amount cluster_used = quota.flavor_usage(f, r);
      add_stat(input.cluster, ClusterStat::capacity, r, capacity);
      add_stat(input.cluster, ClusterStat::used, r, cluster_used);
      add_stat(input.cluster, ClusterStat::available, r,
               std::max<Amount>(0, capacity - cluster_used));
    }
  }

  std::fill(label_ids.begin(), label_ids.end(), ir::kAbsentLabel);
  for (size_t k = 0; k < module_.label_keys.size() && k < label_ids.size(); ++k) {
    for (const auto& [key, value] : labels) {
      if (key == module_.label_keys[k]) label_ids[k] = string_id(value);
    }
  }
  input.labels = label_ids.data();
}

std::string AdmissionRules::render(size_t rule, const ir::RuleInput& input, const Labels& labels,
                                   const Task& task) const {
  // The slow path: only a matched rule's message is rendered.
  std::vector<int64_t> values(module_.rules[rule].message.size());
  evaluator_.message_values(rule, input, values);
  return interp::render_message(module_, rule, values, labels, task.id);
}

RuleVerdict AdmissionRules::evaluate(const Task& task, const Labels& labels,
                                     const QuotaState& quota) {
  RuleVerdict verdict;
  if (module_.rules.empty()) return verdict;
  ir::RuleInput input;
  label_ids_.resize(module_.label_keys.size());
  build_input(request_of(task), task.id, labels, quota, input, label_ids_);
  evaluator_.evaluate_rules(input, verdicts_);
  for (size_t i = 0; i < module_.rules.size(); ++i) {
    if (!verdicts_[i]) continue;
    const ir::Rule& rule = module_.rules[i];
    if (rule.action == ir::RuleAction::deny && verdict.deny_rule < 0) {
      verdict.deny_rule = static_cast<int32_t>(i);
      verdict.deny_message = render(i, input, labels, task);
      continue;
    }
    verdict.others.push_back({rule.name, render(i, input, labels, task)});
  }
  return verdict;
}

}  // namespace gov::engine
