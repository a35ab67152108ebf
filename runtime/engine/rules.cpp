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

}  // namespace

AdmissionRules::AdmissionRules(const ir::Module& module, const ir::Evaluator& evaluator)
    : module_(module), evaluator_(evaluator), verdicts_(module.rules.size()) {
  for (size_t i = 0; i < module.strings.size(); ++i)
    string_ids_.emplace(module.strings[i], static_cast<int64_t>(i));
  figure_slots_ = ir::figure_slots(module);
  for (const ir::Rule& rule : module.rules) {
    for (const ir::Instr& in : rule.code) {
      if (in.op == ir::Op::task_field && in.imm == static_cast<int64_t>(TaskField::id))
        reads_task_id_ = true;
    }
  }
}

int64_t AdmissionRules::string_id(std::string_view text) const {
  const auto it = string_ids_.find(text);
  return it == string_ids_.end() ? ir::kOtherString : it->second;
}

int64_t AdmissionRules::id_string(std::string_view id) const {
  return reads_task_id_ ? string_id(id) : ir::kOtherString;
}

void AdmissionRules::label_strings(const Labels& labels, std::span<int64_t> label_ids) const {
  std::fill(label_ids.begin(), label_ids.end(), ir::kAbsentLabel);
  for (size_t k = 0; k < module_.label_keys.size() && k < label_ids.size(); ++k) {
    for (const auto& [key, value] : labels) {
      if (key != module_.label_keys[k]) continue;
      label_ids[k] = string_id(value);  // a key given twice reads its first value, as it is exported
      break;
    }
  }
}

std::array<int64_t, ir::kTaskFieldCount> AdmissionRules::task_fields(const TaskRequest& task,
                                                                     int64_t id_string) const {
  std::array<int64_t, ir::kTaskFieldCount> fields{};
  set(fields, TaskField::team, task.team);
  set(fields, TaskField::priority, task.priority);
  set(fields, TaskField::flavor, task.requested_flavor);
  set(fields, TaskField::gpus, task.request[ir::index(ir::Resource::gpu)]);
  set(fields, TaskField::neuron, task.request[ir::index(ir::Resource::neuron)]);
  set(fields, TaskField::vcpus, task.request[ir::index(ir::Resource::vcpu)]);
  set(fields, TaskField::memory, task.request[ir::index(ir::Resource::memory)]);
  set(fields, TaskField::efa, task.request[ir::index(ir::Resource::efa)]);
  set(fields, TaskField::instances, task.instances);
  set(fields, TaskField::pods, task.pods);
  set(fields, TaskField::id, id_string);
  return fields;
}

// Team and cluster figures (ir::fill_figures): only those some rule reads are computed.
void AdmissionRules::fill_input(const TaskRequest& task, int64_t id_string,
                                const int64_t* label_ids, const QuotaState& quota,
                                ir::RuleInput& input) const {
  input.task = task_fields(task, id_string);
  fill_figures(task.team, task.requested_flavor, quota, input);
  input.labels = label_ids;
}

void AdmissionRules::fill_figures(int32_t team, int32_t requested_flavor, const QuotaState& quota,
                                  ir::RuleInput& input) const {
  const auto t = static_cast<uint32_t>(team);
  ir::fill_figures(module_, quota.table(), quota.usage_view(), t, requested_flavor, figure_slots_, input);
  if (!quota.tree()) [[likely]] return;
  for (uint8_t slot : figure_slots_.team) {
    if (static_cast<TeamStat>(slot / ir::kResourceCount) != TeamStat::available) continue;
    const auto r = static_cast<ir::Resource>(slot % ir::kResourceCount);
    // Summed as ir::fill_figures sums (saturating): over the named type, else the team's types.
    Amount sum = 0;
    const auto add = [&](uint32_t flavor) {
      const Amount v = quota.has_quota(t, flavor) ? quota.available(t, flavor, r) : 0;
      if (__builtin_add_overflow(sum, v, &sum)) sum = std::numeric_limits<Amount>::max();
    };
    if (requested_flavor >= 0) {
      add(static_cast<uint32_t>(requested_flavor));
    } else {
      for (const ir::FlavorQuota& held : module_.teams[t].quotas) add(held.flavor);
    }
    input.team[slot] = sum;
  }
}

std::pair<int32_t, uint32_t> AdmissionRules::verdicts(const int64_t* fields, const int64_t* label_ids,
                                                      const QuotaState& quota, std::span<uint8_t> verdicts) const {
  ir::RuleInput input;
  std::copy(fields, fields + ir::kTaskFieldCount, input.task.begin());
  fill_figures(static_cast<int32_t>(fields[static_cast<size_t>(TaskField::team)]),
               static_cast<int32_t>(fields[static_cast<size_t>(TaskField::flavor)]), quota, input);
  input.labels = label_ids;
  evaluator_.evaluate_rules(input, verdicts);
  int32_t deny = -1;
  uint32_t others = 0;
  for (size_t i = 0; i < module_.rules.size(); ++i) {
    if (!verdicts[i]) continue;
    if (module_.rules[i].action == ir::RuleAction::deny && deny < 0) {
      deny = static_cast<int32_t>(i);
    } else {
      ++others;
    }
  }
  return {deny, others};
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
  return ir::render_message(module_, rule, values, labels, task.id);
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
