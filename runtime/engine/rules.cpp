#include "runtime/engine/rules.hpp"

#include <algorithm>
#include <limits>

namespace gov::engine {

namespace {

using ir::ClusterStat;
using ir::TaskField;
using ir::TeamStat;

void set(std::array<int64_t, ir::kTaskFieldCount>& task, TaskField field, int64_t value) {
  task[static_cast<size_t>(field)] = value;
}

/// a + b for the non-negative figures rules read: saturates at the int64 maximum (so the sum
/// over instance types does not depend on their order).
int64_t add_figure(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

}  // namespace

AdmissionRules::AdmissionRules(const ir::Module& module, const ir::Evaluator& evaluator)
    : module_(module), evaluator_(evaluator), verdicts_(module.rules.size()) {
  for (size_t i = 0; i < module.strings.size(); ++i)
    string_ids_.emplace(module.strings[i], static_cast<int64_t>(i));
  // The figures some rule reads: build_input computes only those.
  std::array<bool, ir::kTeamStatCount * ir::kResourceCount> team{};
  std::array<bool, ir::kClusterStatCount * ir::kResourceCount> cluster{};
  for (const ir::Rule& rule : module.rules) {
    for (const ir::Instr& in : rule.code) {
      const auto slot = static_cast<size_t>(in.imm);
      if (in.op == ir::Op::team_stat && slot < team.size()) team[slot] = true;
      if (in.op == ir::Op::cluster_stat && slot < cluster.size()) cluster[slot] = true;
      if (in.op == ir::Op::task_field && in.imm == static_cast<int64_t>(TaskField::id))
        reads_task_id_ = true;
    }
  }
  for (uint8_t i = 0; i < team.size(); ++i) {
    if (team[i]) team_figures_.push_back(i);
  }
  for (uint8_t i = 0; i < cluster.size(); ++i) {
    if (cluster[i]) cluster_figures_.push_back(i);
  }
}

int64_t AdmissionRules::string_id(std::string_view text) const {
  const auto it = string_ids_.find(text);
  return it == string_ids_.end() ? ir::kOtherString : it->second;
}

int64_t AdmissionRules::team_figure(uint8_t slot, uint32_t team, uint32_t flavor,
                                    const QuotaState& quota) const {
  const auto stat = static_cast<TeamStat>(slot / ir::kResourceCount);
  const auto r = static_cast<ir::Resource>(slot % ir::kResourceCount);
  switch (stat) {
    case TeamStat::nominal:
      return quota.nominal(team, flavor, r);
    case TeamStat::used:
      return quota.usage(team, flavor, r);
    case TeamStat::borrowed:
      return std::max<Amount>(0, quota.usage(team, flavor, r) - quota.nominal(team, flavor, r));
    case TeamStat::borrowing_limit:
      return quota.borrowing_limit(team, flavor, r);
    case TeamStat::available:
      return quota.has_quota(team, flavor) ? quota.available(team, flavor, r) : 0;
  }
  return 0;
}

int64_t AdmissionRules::cluster_figure(uint8_t slot, uint32_t flavor, const QuotaState& quota) const {
  const auto stat = static_cast<ClusterStat>(slot / ir::kResourceCount);
  const auto r = static_cast<ir::Resource>(slot % ir::kResourceCount);
  const ir::Flavor& f = module_.flavors[flavor];
  const Amount capacity = f.capacity * f.per_instance[ir::index(r)];
  switch (stat) {
    case ClusterStat::capacity:
      return capacity;
    case ClusterStat::used:
      return quota.flavor_usage(flavor, r);
    case ClusterStat::available:
      return std::max<Amount>(0, capacity - quota.flavor_usage(flavor, r));
  }
  return 0;
}

int64_t AdmissionRules::id_string(std::string_view id) const {
  return reads_task_id_ ? string_id(id) : ir::kOtherString;
}

void AdmissionRules::label_strings(const Labels& labels, std::span<int64_t> label_ids) const {
  std::fill(label_ids.begin(), label_ids.end(), ir::kAbsentLabel);
  for (size_t k = 0; k < module_.label_keys.size() && k < label_ids.size(); ++k) {
    for (const auto& [key, value] : labels) {
      if (key == module_.label_keys[k]) label_ids[k] = string_id(value);
    }
  }
}

void AdmissionRules::fill_input(const TaskRequest& task, int64_t id_string,
                                const int64_t* label_ids, const QuotaState& quota,
                                ir::RuleInput& input) const {
  input.task = {};
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
  set(input.task, TaskField::id, id_string);

  // Team and cluster figures: in the task's instance type, or summed over its team's. Only the
  // figures some rule reads are computed (and zeroed); rules never read the others.
  const auto team = static_cast<uint32_t>(task.team);
  for (uint8_t slot : team_figures_) input.team[slot] = 0;
  for (uint8_t slot : cluster_figures_) input.cluster[slot] = 0;
  const auto add_flavor = [&](uint32_t flavor) {
    for (uint8_t slot : team_figures_)
      input.team[slot] = add_figure(input.team[slot], team_figure(slot, team, flavor, quota));
    for (uint8_t slot : cluster_figures_)
      input.cluster[slot] = add_figure(input.cluster[slot], cluster_figure(slot, flavor, quota));
  };
  if (task.requested_flavor >= 0) {
    add_flavor(static_cast<uint32_t>(task.requested_flavor));
  } else {
    for (const ir::FlavorQuota& held : module_.teams[team].quotas) add_flavor(held.flavor);
  }
  input.labels = label_ids;
}

void AdmissionRules::build_input(const TaskRequest& task, std::string_view id,
                                 const Labels& labels, const QuotaState& quota,
                                 ir::RuleInput& input, std::span<int64_t> label_ids) const {
  input = {};
  label_strings(labels, label_ids);
  fill_input(task, id_string(id), label_ids.data(), quota, input);
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
