// The transitions of a task's life and the decisions they emit (docs/interfaces.md "Decision
// stream").
#include <algorithm>

#include "compiler/support/assert.hpp"
#include "runtime/engine/engine_core.hpp"

namespace gov::engine {

namespace {

/// Per team: whether its within-team policy compares submission times (then a task's
/// nomination depends on its submission time, so its queue class does too).
std::vector<bool> submission_matters(const ir::Module& module) {
  std::vector<bool> out;
  out.reserve(module.teams.size());
  for (const ir::Team& team : module.teams)
    out.push_back(team.within_team == ir::WithinTeam::lower_or_newer_equal_priority);
  return out;
}

}  // namespace

EngineCore::EngineCore(const ir::Module& module_ref, const ir::Evaluator& evaluator_ref,
                       EngineOptions engine_options)
    : module(module_ref),
      evaluator(evaluator_ref),
      rule_count(module_ref.rules.size()),
      options(engine_options),
      names(module_ref),
      quota(module_ref),
      tasks(module_ref.teams.size(), module_ref.flavors.size(), submission_matters(module_ref)),
      rules(module_ref, evaluator_ref) {}

const std::string& EngineCore::team_name(const Task& task) const {
  if (task.team < 0) return task.unknown_team;
  return module.teams[static_cast<size_t>(task.team)].name;
}

Decision base_decision(const EngineCore& core, const Task& task, Outcome outcome) {
  Decision decision;
  decision.at = core.now;
  decision.task = task.id;
  decision.team = core.team_name(task);
  decision.outcome = outcome;
  return decision;
}

void admit(EngineCore& core, uint32_t task_index, uint32_t flavor, std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  const auto team = static_cast<uint32_t>(task.team);
  Decision decision = base_decision(core, task, Outcome::admitted);
  decision.flavor = core.module.flavors[flavor].name;
  Resources borrowed_before{};
  for (ir::Resource r : core.quota.charged()) {
    const Amount amount = task.request[ir::index(r)];
    if (amount > 0) decision.usage.push_back(core.module.public_amount(r, amount));
    borrowed_before[ir::index(r)] = std::max<Amount>(
        0, core.quota.usage(team, flavor, r) - core.quota.nominal(team, flavor, r));
  }
  core.quota.add(team, flavor, task.request);
  ++core.epoch;
  for (ir::Resource r : core.quota.charged()) {
    const Amount after = std::max<Amount>(
        0, core.quota.usage(team, flavor, r) - core.quota.nominal(team, flavor, r));
    if (after != borrowed_before[ir::index(r)])
      decision.borrowed.push_back(core.module.public_amount(r, after - borrowed_before[ir::index(r)]));
  }
  decision.warnings = task.warnings;
  decision.message = admitted_message(core.team_name(task));

  task.state = TaskState::admitted;
  task.slot = QueueSlot::none;
  task.flavor = static_cast<int32_t>(flavor);
  task.admitted_at = core.now;
  ++task.admissions;
  task.admission_order = core.admissions;
  task.last_reason.reset();
  task.last_message.clear();
  task.has_decision = true;
  core.tasks.reclassify(task_index);
  core.tasks.insert_admitted(task_index);
  if (task.duration) {
    core.timers.push({core.now + *task.duration, core.admissions, task_index, task.admissions});
  }
  ++core.admissions;
  out.push_back(std::move(decision));
}

void evict(EngineCore& core, uint32_t task_index) {
  Task& task = core.tasks[task_index];
  GOV_ASSERT(task.state == TaskState::admitted, "only admitted tasks are evicted");
  core.tasks.erase_admitted(task_index);  // before admitted_at changes: it keys the list
  core.quota.subtract(static_cast<uint32_t>(task.team), static_cast<uint32_t>(task.flavor),
                      task.request);
  ++core.epoch;
  task.state = TaskState::pending;
  task.flavor = -1;
  task.admitted_at = kNever;
  core.tasks.enqueue(task_index);
}

void release(EngineCore& core, uint32_t task_index, Outcome outcome, std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  if (task.state == TaskState::admitted) {
    core.tasks.erase_admitted(task_index);
    core.quota.subtract(static_cast<uint32_t>(task.team), static_cast<uint32_t>(task.flavor),
                        task.request);
    ++core.epoch;
  } else {
    core.tasks.dequeue(task_index);
  }
  task.state = outcome == Outcome::finished ? TaskState::finished : TaskState::cancelled;
  task.slot = QueueSlot::none;
  task.submitted.reset();
  core.tasks.ended();
  out.push_back(base_decision(core, task, outcome));
  task.has_decision = true;
  core.tasks.reactivate_parked();
}

void emit_pending(EngineCore& core, uint32_t task_index, const PendingUpdate& update,
                  std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  if (task.last_reason == update.reason && task.last_message == update.message) return;
  task.last_reason = update.reason;
  task.last_message.assign(update.message);
  task.has_decision = true;
  core.tasks.reclassify(task_index);  // a queued task's class follows its last decision

  Decision decision = base_decision(core, task, Outcome::pending);
  decision.reason = update.reason;
  decision.message.assign(update.message);
  if (update.assignment != nullptr) {
    const Assignment& a = *update.assignment;
    for (ir::Resource r : core.quota.charged()) {
      if (update.reason == PendingReason::waiting_for_quota && contains(a.short_mask, r)) {
        decision.short_of.push_back(core.module.public_amount(r, a.short_of[ir::index(r)]));
      }
      if (update.reason == PendingReason::exceeds_max_quota && contains(a.maximum_mask, r)) {
        decision.maximum.push_back(core.module.public_amount(r, a.maximum[ir::index(r)]));
      }
    }
  }
  if (update.victims != nullptr) {
    for (const Target& target : *update.victims)
      decision.victims.push_back(core.tasks[target.task].id);
  }
  out.push_back(std::move(decision));
}

void emit_preempted(EngineCore& core, const Target& target, uint32_t preemptor,
                    std::vector<Decision>& out) {
  Task& victim = core.tasks[target.task];
  const Task& by = core.tasks[preemptor];
  victim.preempted_at = core.now;
  victim.preempted_by = static_cast<int32_t>(preemptor);
  victim.preempted_kind = target.kind;
  Decision decision = base_decision(core, victim, Outcome::preempted);
  decision.by = by.id;
  decision.kind = target.kind;
  decision.message =
      preempted_message(core.options.dialect, by.id, target.kind, target.while_borrowing);
  out.push_back(std::move(decision));
}

}  // namespace gov::engine
