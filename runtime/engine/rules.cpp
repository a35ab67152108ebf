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
      if (key == module_.label_keys[k]) label_ids[k] = string_id(value);
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
  ir::fill_figures(module_, quota.table(), quota.usage_view(), static_cast<uint32_t>(task.team),
                   task.requested_flavor, figure_slots_, input);
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
