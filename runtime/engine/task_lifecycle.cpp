// The transitions of a task's life and the decisions they emit (docs/interfaces.md "Decision
// stream").
#include <algorithm>
#include <bit>

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
      tasks(module_ref.teams.size(), module_ref.flavors.size(), quota.table().slots, submission_matters(module_ref)),
      rules(module_ref, evaluator_ref) {}

const std::string& EngineCore::team_name(const Task& task) const {
  if (task.team < 0) return *task.unknown_team;
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

namespace {

/// The admitted decision's usage and borrowing raise of what `task` is about to hold, then the
/// charge itself (usage, candidate lists, epoch).
void charge(EngineCore& core, uint32_t task_index, Decision& decision) {
  Task& task = core.tasks[task_index];
  const auto team = static_cast<uint32_t>(task.team);
  Resources raised{};
  for_each_charge(task, [&](uint32_t flavor, const Resources& amounts) {
    Resources before{};
    for (ir::Resource r : core.quota.charged())
      before[ir::index(r)] = std::max<Amount>(0, core.quota.usage(team, flavor, r) - core.quota.nominal(team, flavor, r));
    core.quota.add(team, flavor, amounts);
    for (ir::Resource r : core.quota.charged()) {
      const Amount after = std::max<Amount>(0, core.quota.usage(team, flavor, r) - core.quota.nominal(team, flavor, r));
      raised[ir::index(r)] += after - before[ir::index(r)];
    }
  });
  for (ir::Resource r : core.quota.charged()) {
    const Amount amount = task.request[ir::index(r)];
    if (amount > 0) decision.usage.push_back(core.module.public_amount(r, amount));
  }
  for (ir::Resource r : core.quota.charged()) {
    if (raised[ir::index(r)] != 0) decision.borrowed.push_back(core.module.public_amount(r, raised[ir::index(r)]));
  }
  ++core.epoch;
}

void record_admission(EngineCore& core, uint32_t task_index, Decision& decision, std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  decision.warnings = task.warnings;
  decision.message = admitted_message(core.team_name(task));
  task.state = TaskState::admitted;
  task.slot = QueueSlot::none;
  task.admitted_at = core.now;
  ++task.admissions;
  task.admission_order = core.admissions;
  task.last_reason.reset();
  std::string().swap(task.last_message);  // its memory too: a million tasks kept ~150 bytes each
  task.last_message_serial = 0;
  task.has_decision = true;
  core.tasks.reclassify(task_index);
  core.tasks.insert_admitted(task_index);
  if (task.duration) {
    // Saturated at kForever, which tick(kForever) reaches (a duration near int64's end would
    // overflow, and finish after it).
    const Time due = *task.duration > kForever - std::min(core.now, kForever) ? std::max(core.now, kForever)
                                                                               : core.now + *task.duration;
    core.timers.push({due, core.admissions, task_index, task.admissions});
  }
  ++core.admissions;
  out.push_back(std::move(decision));
}

}  // namespace

void admit(EngineCore& core, uint32_t task_index, uint32_t flavor, std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  Decision decision = base_decision(core, task, Outcome::admitted);
  decision.flavor = core.module.flavors[flavor].name;
  task.flavor = static_cast<int32_t>(flavor);
  charge(core, task_index, decision);
  record_admission(core, task_index, decision, out);
}

namespace {

// A task of a team with resource groups: one flavor per slot (pod set × group, -1 where the pod
// set asks nothing of the group); the decision has one pod set entry per assigned slot, in slot
// order, with the slot's flavor and usage (so each resource requested is on the flavor of the
// entry whose usage names it); `flavor` is the first entry's.
void admit_groups(EngineCore& core, uint32_t task_index, std::span<const int32_t> slot_flavors,
                  std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  const ir::Team& team = core.module.teams[static_cast<size_t>(task.team)];
  GOV_ASSERT(slot_flavors.size() == slot_count(task, team), "a flavor for every slot");
  Decision decision = base_decision(core, task, Outcome::admitted);
  task.pod_set_flavors.assign(slot_flavors.begin(), slot_flavors.end());
  task.charge.clear();
  task.flavor = -1;
  for (size_t slot = 0; slot < slot_flavors.size(); ++slot) {
    if (slot_flavors[slot] < 0) continue;
    const auto flavor = static_cast<uint32_t>(slot_flavors[slot]);
    const Resources amounts = slot_request(task, team, slot);
    auto part = std::find_if(task.charge.begin(), task.charge.end(),
                             [flavor](const ChargePart& p) { return p.flavor == flavor; });
    if (part == task.charge.end()) part = task.charge.insert(task.charge.end(), ChargePart{flavor, {}});
    for (ir::Resource r : core.quota.charged()) part->amounts[ir::index(r)] += amounts[ir::index(r)];
    const size_t pod_set = slot / team.groups.size();
    PodSetAdmission admission;
    admission.name = task.pod_sets.empty() ? std::string(kPodSetName) : task.pod_sets[pod_set].name;
    admission.flavor = core.module.flavors[flavor].name;
    admission.pods = task.pod_sets.empty() ? task.pods : task.pod_sets[pod_set].pods;
    for (ir::Resource r : core.quota.charged()) {
      if (amounts[ir::index(r)] > 0) admission.usage.push_back(core.module.public_amount(r, amounts[ir::index(r)]));
    }
    decision.pod_sets.push_back(std::move(admission));
    if (task.flavor < 0) task.flavor = static_cast<int32_t>(flavor);
  }
  if (task.charge.empty()) {  // it asks for nothing: held nowhere, shown on its idle flavor
    task.flavor = idle_flavor(task, team);
    task.charge.push_back(ChargePart{static_cast<uint32_t>(task.flavor), {}});
  }
  decision.flavor = core.module.flavors[static_cast<size_t>(task.flavor)].name;
  charge(core, task_index, decision);
  record_admission(core, task_index, decision, out);
}

}  // namespace

void admit(EngineCore& core, uint32_t task_index, std::span<const int32_t> pod_set_flavors,
           std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  if (!core.module.teams[static_cast<size_t>(task.team)].groups.empty()) {
    admit_groups(core, task_index, pod_set_flavors, out);
    return;
  }
  if (task.pod_sets.empty()) {
    admit(core, task_index, static_cast<uint32_t>(pod_set_flavors[0]), out);
    return;
  }
  GOV_ASSERT(pod_set_flavors.size() == task.pod_sets.size(), "a flavor for every pod set");
  Decision decision = base_decision(core, task, Outcome::admitted);
  task.pod_set_flavors.assign(pod_set_flavors.begin(), pod_set_flavors.end());
  task.charge.clear();
  for (size_t i = 0; i < task.pod_sets.size(); ++i) {
    const auto flavor = static_cast<uint32_t>(pod_set_flavors[i]);
    auto part = std::find_if(task.charge.begin(), task.charge.end(),
                             [flavor](const ChargePart& p) { return p.flavor == flavor; });
    if (part == task.charge.end()) part = task.charge.insert(task.charge.end(), ChargePart{flavor, {}});
    for (ir::Resource r : core.quota.charged()) part->amounts[ir::index(r)] += task.pod_sets[i].request[ir::index(r)];
    PodSetAdmission admission;
    admission.name = task.pod_sets[i].name;
    admission.flavor = core.module.flavors[flavor].name;
    admission.pods = task.pod_sets[i].pods;
    for (ir::Resource r : core.quota.charged()) {
      const Amount amount = task.pod_sets[i].request[ir::index(r)];
      if (amount > 0) admission.usage.push_back(core.module.public_amount(r, amount));
    }
    decision.pod_sets.push_back(std::move(admission));
  }
  task.flavor = pod_set_flavors[0];
  decision.flavor = core.module.flavors[static_cast<size_t>(task.flavor)].name;
  charge(core, task_index, decision);
  record_admission(core, task_index, decision, out);
}

void admit(EngineCore& core, uint32_t task_index, const Assignment& assignment, std::vector<Decision>& out) {
  if (assignment.group_count > 0) {
    admit_groups(core, task_index, std::span<const int32_t>(assignment.pod_set_flavor.data(), assignment.pod_set_count), out);
    return;
  }
  if (assignment.pod_set_count == 0) {
    admit(core, task_index, static_cast<uint32_t>(assignment.flavor), out);
    return;
  }
  admit(core, task_index, std::span<const int32_t>(assignment.pod_set_flavor.data(), assignment.pod_set_count), out);
}

void uncharge(EngineCore& core, const Task& task) {
  for_each_charge(task, [&](uint32_t flavor, const Resources& amounts) {
    core.quota.subtract(static_cast<uint32_t>(task.team), flavor, amounts);
  });
  ++core.epoch;
}

void evict(EngineCore& core, uint32_t task_index) {
  Task& task = core.tasks[task_index];
  GOV_ASSERT(task.state == TaskState::admitted, "only admitted tasks are evicted");
  core.tasks.erase_admitted(task_index);  // before admitted_at changes: it keys the list
  uncharge(core, task);
  task.state = TaskState::pending;
  task.flavor = -1;
  task.pod_set_flavors.clear();
  task.charge.clear();
  task.admitted_at = kNever;
  core.tasks.enqueue(task_index);
}

void release(EngineCore& core, uint32_t task_index, Outcome outcome, std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  if (task.state == TaskState::admitted) {
    core.tasks.erase_admitted(task_index);
    uncharge(core, task);
  } else {
    core.tasks.dequeue(task_index);
  }
  task.state = outcome == Outcome::finished ? TaskState::finished : TaskState::cancelled;
  task.slot = QueueSlot::none;
  std::string().swap(task.submitted);  // its memory too
  core.tasks.ended();
  out.push_back(base_decision(core, task, outcome));
  task.has_decision = true;
  core.tasks.reactivate_parked();
}

void emit_pending(EngineCore& core, uint32_t task_index, const PendingUpdate& update,
                  std::vector<Decision>& out) {
  Task& task = core.tasks[task_index];
  if (task.last_reason == update.reason &&
      ((update.message_serial != 0 && task.last_message_serial == update.message_serial) ||
       task.last_message == update.message)) {
    task.last_message_serial = update.message_serial;
    return;
  }
  task.last_reason = update.reason;
  task.last_message.assign(update.message);
  task.last_message_serial = update.message_serial;
  task.has_decision = true;
  core.tasks.reclassify(task_index);  // a queued task's class follows its last decision

  // Built in place: a pending decision is the engine's most frequent output, and a Decision is
  // large enough that a move and the moved-from object's destruction show in a long replay.
  Decision& decision = out.emplace_back();
  decision.at = core.now;
  decision.task = task.id;
  decision.team = core.team_name(task);
  decision.outcome = Outcome::pending;
  decision.reason = update.reason;
  decision.message.assign(update.shown.value_or(update.message));
  if (update.assignment != nullptr) {
    const Assignment& a = *update.assignment;
    // Sized once: growing one entry at a time allocated up to three times a decision, and
    // pending decisions are most of a long replay's stream.
    if (update.reason == PendingReason::waiting_for_quota)
      decision.short_of.reserve(std::popcount(a.short_mask));
    if (update.reason == PendingReason::exceeds_max_quota)
      decision.maximum.reserve(std::popcount(a.maximum_mask));
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
}

void emit_preempted(EngineCore& core, const Target& target, uint32_t preemptor,
                    std::vector<Decision>& out) {
  Task& victim = core.tasks[target.task];
  const Task& by = core.tasks[preemptor];
  victim.preempted_at = core.now;
  core.tasks.note_preempted();
  victim.preempted_by = static_cast<int32_t>(preemptor);
  victim.preempted_kind = target.kind;
  Decision decision = base_decision(core, victim, Outcome::preempted);
  decision.by = by.id;
  decision.kind = target.kind;
  decision.message =
      preempted_message(core.options.dialect, by.id, target.kind, target.while_borrowing);
  // Kueue HEAD names where both are in a tree of cohorts (v0.9 had no paths).
  if (!core.module.cohorts.empty() && core.options.dialect == MessageDialect::head)
    decision.message += preemption_paths(core.module, static_cast<uint32_t>(by.team), static_cast<uint32_t>(victim.team));
  out.push_back(std::move(decision));
}

}  // namespace gov::engine
