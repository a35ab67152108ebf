#include "runtime/engine/engine.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/model/quantities.hpp"
#include "compiler/support/utf8.hpp"
#include "runtime/engine/admission_check.hpp"
#include "runtime/engine/cycle.hpp"
#include "runtime/engine/engine_core.hpp"
#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/submitted_spec.hpp"
#include "runtime/engine/task_request.hpp"

namespace gov::engine {

struct Engine::Impl {
  Impl(const ir::Module& module, const ir::Evaluator& evaluator, EngineOptions options)
      : core(module, evaluator, options), scheduler(core) {}

  void step(Time at, std::span<const Event> events, std::vector<Decision>& out);
  void run_due_finishes(Time before, std::vector<Decision>& out);
  bool release_due(Time instant, std::vector<Decision>& out);
  void apply(const Event& event, std::vector<Decision>& out);
  void submit(const gov::Task& spec, std::vector<Decision>& out);
  void finish(std::string_view id, std::vector<Decision>& out);
  void cancel(std::string_view id, std::vector<Decision>& out);
  bool id_in_use(std::string_view id) const;
  // `at`: the state's time, which the entry's times may not pass.
  std::optional<std::string> load_admitted(const AdmittedTask& entry, Time at);
  std::optional<std::string> pod_set_flavors_of(const AdmittedTask& entry, const Task& task,
                                                std::vector<int32_t>& out) const;
  std::optional<std::string> group_flavors_of(const AdmittedTask& entry, const Task& task,
                                              std::vector<int32_t>& out) const;
  std::optional<std::string> load_pending(const PendingTask& entry, Time at);
  std::optional<std::string> held_overflow(const Task& task, const std::vector<int32_t>& flavors) const;

  EngineCore core;
  Scheduler scheduler;
  std::vector<uint32_t> submitted_;  // tasks queued by the events of the current step
};

// One instant, one set of events (docs/semantics-decisions.md "Same-instant events"): the
// instants before `at` that only have due finishes are processed each on its own; the finishes
// due at `at` (in admission order) and then the events of `at` (in their order) all apply before
// the cycles run once, to a fixed point.
void Engine::Impl::step(Time at, std::span<const Event> events, std::vector<Decision>& out) {
  at = std::max(at, core.now);
  run_due_finishes(at, out);
  core.now = at;
  release_due(at, out);
  submitted_.clear();
  for (const Event& event : events) apply(event, out);
  scheduler.run_until_stable(out);
  // Tasks admitted just now with duration 0 finish in this instant too; each round of such
  // finishes is followed by cycles, which may admit more of them.
  while (!core.timers.empty() && core.timers.top().at == at) {
    if (release_due(at, out)) scheduler.run_until_stable(out);
  }
  // docs/semantics.md §3: every submitted task gets a decision at its submission time, even one
  // that never became its team's head in this instant.
  for (uint32_t task : submitted_) {
    const Task& t = core.tasks[task];
    if (t.state == TaskState::pending && !t.has_decision) scheduler.emit_current_pending(task, out);
  }
}

// Each instant strictly before `before` with due finishes: the finishes, then cycles to a fixed
// point.
void Engine::Impl::run_due_finishes(Time before, std::vector<Decision>& out) {
  while (!core.timers.empty() && core.timers.top().at < before) {
    const Time instant = core.timers.top().at;
    core.now = std::max(core.now, instant);
    if (release_due(instant, out)) scheduler.run_until_stable(out);
  }
}

namespace {

// Whether a timer still finishes its task: not when the task was preempted, or ended, since
// the admission that set it.
bool finishes_something(const EngineCore& core, const FinishTimer& timer) {
  const Task& task = core.tasks[timer.task];
  return task.state == TaskState::admitted && task.admissions == timer.admission;
}

}  // namespace

// Ends every task whose duration runs out at `instant`, in the order the admissions happened;
// no cycles. Returns whether any task ended (stale timers finish nothing).
bool Engine::Impl::release_due(Time instant, std::vector<Decision>& out) {
  bool any = false;
  while (!core.timers.empty() && core.timers.top().at == instant) {
    const FinishTimer timer = core.timers.top();
    core.timers.pop();
    if (!finishes_something(core, timer)) continue;
    release(core, timer.task, Outcome::finished, out);
    any = true;
  }
  return any;
}

void Engine::Impl::apply(const Event& event, std::vector<Decision>& out) {
  switch (event.kind) {
    case Event::Kind::submit:
      submit(event.task, out);
      return;
    case Event::Kind::finish:
      finish(event.id, out);
      return;
    case Event::Kind::cancel:
      cancel(event.id, out);
      return;
  }
}

bool Engine::Impl::id_in_use(std::string_view id) const {
  const int32_t existing = core.tasks.find(id);
  if (existing < 0) return false;
  const TaskState state = core.tasks[static_cast<uint32_t>(existing)].state;
  return state == TaskState::pending || state == TaskState::admitted;
}

void Engine::Impl::submit(const gov::Task& spec, std::vector<Decision>& out) {
  Task task;
  // The queue-order time: the submission's, or the earlier creation time the task gives.
  task.submitted_at = spec.created.value_or(core.now);
  std::optional<std::string> error = resolve_task(core.resolver(), spec, task);
  if (!error && spec.created && *spec.created > core.now)
    error = std::string("the task's creation time (`created`) is after the time it is submitted");
  if (!error && spec.created && *spec.created < kEarliestCreated)
    error = std::string("the task's creation time (`created`) is more than 10^9 seconds before time zero");
  const bool duplicate = id_in_use(spec.id);
  if (duplicate)
    error = fmt::format("task id `{}` is already used by a task that has not ended", spec.id);
  // As the trace reader refuses one: a task nobody could name again (finish, cancel, explain).
  if (spec.id.empty()) error = std::string("the task has no id (an empty string)");
  // Strings are UTF-8 (gov.h, engine.hpp): an id that is not is written as U+FFFD in every
  // decision stream and exported state, where two of them would become one task.
  if (find_invalid_utf8(spec.id) != std::string::npos) error = std::string("the task id is not valid UTF-8");
  // As the trace and state readers refuse them (docs/limits.md): a NUL ends the string in C and
  // in the exported state's reader, so the task would not load back at a restart.
  if (spec.id.find('\0') != std::string::npos) error = std::string("the task id contains a NUL character");
  for (const auto& [key, value] : spec.labels) {
    if (key.find('\0') != std::string::npos || value.find('\0') != std::string::npos) {
      error = std::string("a label key or value contains a NUL character");
    }
  }
  if (error) {
    task.state = TaskState::invalid;
    const uint32_t index = core.tasks.add(std::move(task), /*claim_id=*/!duplicate);
    Decision decision = base_decision(core, core.tasks[index], Outcome::invalid);
    decision.message = std::move(*error);
    core.tasks[index].has_decision = true;
    out.push_back(std::move(decision));
    return;
  }
  // docs/semantics.md §5: rules run before quota; a deny rejects the task, it is never queued.
  RuleVerdict verdict = core.rules.evaluate(task, spec.labels, core.quota);
  if (verdict.deny_rule >= 0) {
    task.state = TaskState::rejected;
    const uint32_t index = core.tasks.add(std::move(task), /*claim_id=*/true);
    Decision decision = base_decision(core, core.tasks[index], Outcome::rejected);
    decision.rule = core.module.rules[static_cast<size_t>(verdict.deny_rule)].name;
    decision.message = std::move(verdict.deny_message);
    decision.warnings = std::move(verdict.others);
    core.tasks[index].has_decision = true;
    out.push_back(std::move(decision));
    return;
  }
  task.warnings = std::move(verdict.others);
  task.state = TaskState::pending;
  task.submitted = encode_submitted(spec);
  const uint32_t index = core.tasks.add(std::move(task), /*claim_id=*/true);
  const ir::Team& team = core.module.teams[static_cast<size_t>(core.tasks[index].team)];
  if (!team.active) {  // an inactive team admits nothing; its tasks wait, unqueued
    const std::string message = inactive_team_message(team.name);
    emit_pending(core, index, {PendingReason::team_inactive, message, nullptr, nullptr}, out);
    return;
  }
  // Kueue parks a workload shaped like a parked head at once (PushOrUpdate, hashToBulkMoveReason)
  // until the next requeue; it still gets its decision at the end of the step (below).
  if (team.queueing == ir::Queueing::best_effort_fifo && core.tasks.shape_parked(index)) {
    core.tasks.park(index);
  } else {
    core.tasks.enqueue(index);
  }
  submitted_.push_back(index);
}

// A finish is never silently ignored while its task lives: an admitted task finishes, a pending
// one (also one preempted earlier in this instant) is cancelled with its decision. An ended task
// (e.g. through its duration) or an unknown id changes nothing: the trace reader rejects unknown
// ids and repeated ends, the embedding API returns no decision.
void Engine::Impl::finish(std::string_view id, std::vector<Decision>& out) {
  const int32_t index = core.tasks.find(id);
  if (index < 0) return;
  const TaskState state = core.tasks[static_cast<uint32_t>(index)].state;
  if (state == TaskState::admitted) {
    release(core, static_cast<uint32_t>(index), Outcome::finished, out);
  } else if (state == TaskState::pending) {
    release(core, static_cast<uint32_t>(index), Outcome::cancelled, out);
  }
}

void Engine::Impl::cancel(std::string_view id, std::vector<Decision>& out) {
  const int32_t index = core.tasks.find(id);
  if (index < 0) return;
  const TaskState state = core.tasks[static_cast<uint32_t>(index)].state;
  if (state != TaskState::pending && state != TaskState::admitted) return;
  release(core, static_cast<uint32_t>(index), Outcome::cancelled, out);
}

// The flavor of each pod set of an admitted task of several: AdmittedTask::pod_set_flavors, else
// `flavor` for all, else each pod set's instance type, else the team's first.
std::optional<std::string> Engine::Impl::pod_set_flavors_of(const AdmittedTask& entry, const Task& task,
                                                           std::vector<int32_t>& out) const {
  const ir::Team& team = core.module.teams[static_cast<size_t>(task.team)];
  if (!entry.pod_set_flavors.empty() && entry.pod_set_flavors.size() != task.pod_sets.size())
    return fmt::format("{} pod set flavors for {} pod sets", entry.pod_set_flavors.size(), task.pod_sets.size());
  for (size_t i = 0; i < task.pod_sets.size(); ++i) {
    int32_t flavor = task.pod_sets[i].requested_flavor;
    const std::string* name = !entry.pod_set_flavors.empty() ? &entry.pod_set_flavors[i]
                              : entry.flavor                ? &*entry.flavor
                                                            : nullptr;
    if (name != nullptr) {
      flavor = core.module.flavor_index(*name);
      if (flavor < 0) return fmt::format("unknown instance type `{}`", *name);
    } else if (flavor < 0 && !team.quotas.empty()) {
      flavor = static_cast<int32_t>(team.quotas.front().flavor);
    }
    if (flavor < 0 || !core.quota.has_quota(static_cast<uint32_t>(task.team), static_cast<uint32_t>(flavor)))
      return fmt::format("team `{}` has no quota for pod set `{}`'s instance type", team.name, task.pod_sets[i].name);
    out.push_back(flavor);
  }
  return std::nullopt;
}

// The flavor of each slot (pod set × group) of an admitted task of a team with resource groups,
// -1 where it asks the group nothing: AdmittedTask::group_flavors for the slots it asks something
// of, in order, each one of its group's; else `flavor` where the group lists it, else the
// group's first.
std::optional<std::string> Engine::Impl::group_flavors_of(const AdmittedTask& entry, const Task& task,
                                                         std::vector<int32_t>& out) const {
  const ir::Team& team = core.module.teams[static_cast<size_t>(task.team)];
  const int32_t given = entry.flavor ? core.module.flavor_index(*entry.flavor) : -1;
  if (entry.flavor && given < 0) return fmt::format("unknown instance type `{}`", *entry.flavor);
  size_t next = 0;
  for (size_t slot = 0; slot < slot_count(task, team); ++slot) {
    const Resources amounts = slot_request(task, team, slot);
    bool asks = false;
    for (ir::Resource r : core.quota.charged()) asks = asks || amounts[ir::index(r)] > 0;
    if (!asks) {
      out.push_back(-1);
      continue;
    }
    const std::vector<uint32_t>& flavors = team.groups[slot % team.groups.size()].flavors;
    const auto listed = [&flavors](int32_t f) {
      return f >= 0 && std::find(flavors.begin(), flavors.end(), static_cast<uint32_t>(f)) != flavors.end();
    };
    int32_t flavor = listed(given) ? given : static_cast<int32_t>(flavors.front());
    if (!entry.group_flavors.empty()) {
      if (next == entry.group_flavors.size())
        return fmt::format("{} group flavors, but the task asks for more of team `{}`'s resource groups",
                           entry.group_flavors.size(), team.name);
      const std::string& name = entry.group_flavors[next++];
      flavor = core.module.flavor_index(name);
      if (flavor < 0) return fmt::format("unknown instance type `{}`", name);
      if (!listed(flavor))
        return fmt::format("`{}` is not in the resource group of team `{}` it is given for", name, team.name);
    }
    out.push_back(flavor);
  }
  if (next != entry.group_flavors.size())
    return fmt::format("{} group flavors, but the task asks for {} of team `{}`'s resource groups",
                       entry.group_flavors.size(), next, team.name);
  return std::nullopt;
}

namespace {
// Milliseconds as seconds, the state document's unit: 90000 -> "90", 1500 -> "1.5".
std::string seconds_text(Time millis) { return model::format_decimal(millis, 1000); }

// An entry's times must be possible at the state's time `at`: submitted by then, and (admitted
// entries) admitted after being submitted and by then. An entry from the future would be admitted
// before it was submitted, or finish by a duration counted from a time that has not come. And a
// `submitted_at` the engine cannot queue by: before kEarliestCreated (the same bound a submitted
// task's `created` has, so every state an engine exports loads back).
std::optional<std::string> time_problem(Time at, Time submitted_at, std::optional<Time> admitted_at = std::nullopt) {
  if (submitted_at < kEarliestCreated) return std::string("`submitted_at` is more than 10^9 seconds before time zero");
  if (submitted_at > at)
    return fmt::format("`submitted_at` {} s is after the state's time `at` {} s", seconds_text(submitted_at), seconds_text(at));
  if (!admitted_at) return std::nullopt;
  if (*admitted_at < submitted_at)
    return fmt::format("`admitted_at` {} s is before `submitted_at` {} s", seconds_text(*admitted_at),
                       seconds_text(submitted_at));
  if (*admitted_at > at)
    return fmt::format("`admitted_at` {} s is after the state's time `at` {} s", seconds_text(*admitted_at), seconds_text(at));
  return std::nullopt;
}
}  // namespace

std::optional<std::string> Engine::Impl::load_admitted(const AdmittedTask& entry, Time at) {
  Task task;
  if (auto error = resolve_task(core.resolver(), entry.task, task)) return error;
  if (id_in_use(entry.task.id)) return fmt::format("task id `{}` appears twice", entry.task.id);
  const ir::Team& team = core.module.teams[static_cast<size_t>(task.team)];
  std::vector<int32_t> pod_set_flavors;
  if (!team.groups.empty()) {
    if (auto error = group_flavors_of(entry, task, pod_set_flavors)) return error;
  } else if (!task.pod_sets.empty()) {
    if (auto error = pod_set_flavors_of(entry, task, pod_set_flavors)) return error;
  }
  int32_t flavor = task.requested_flavor;
  if (entry.flavor) {
    flavor = core.module.flavor_index(*entry.flavor);
    if (flavor < 0) return fmt::format("unknown instance type `{}`", *entry.flavor);
  } else if (flavor < 0 && !team.quotas.empty()) {
    flavor = static_cast<int32_t>(team.quotas.front().flavor);
  }
  if (!team.groups.empty()) flavor = static_cast<int32_t>(team.groups.front().flavors.front());  // unused
  if (!pod_set_flavors.empty() && team.groups.empty()) flavor = pod_set_flavors.front();
  if (flavor < 0 ||
      !core.quota.has_quota(static_cast<uint32_t>(task.team), static_cast<uint32_t>(flavor))) {
    return fmt::format("team `{}` has no quota for the task's instance type", team.name);
  }
  if (auto error = time_problem(at, entry.submitted_at, entry.admitted_at)) return error;
  if (auto error = held_overflow(task, pod_set_flavors.empty() ? std::vector<int32_t>{flavor} : pod_set_flavors)) {
    return error;
  }
  task.submitted_at = entry.submitted_at;
  task.state = TaskState::pending;
  task.submitted = encode_submitted(entry.task);
  task.warnings = entry.warnings;
  const uint32_t index = core.tasks.add(std::move(task), /*claim_id=*/true);
  const Time now = core.now;
  core.now = entry.admitted_at;  // admissions are stamped with their own time
  std::vector<Decision> ignored;
  if (pod_set_flavors.empty()) {
    admit(core, index, static_cast<uint32_t>(flavor), ignored);
  } else {
    admit(core, index, pod_set_flavors, ignored);
  }
  core.now = now;
  core.tasks[index].has_decision = false;
  return std::nullopt;
}

// An admitted entry holds its quota without a check: amounts near INT64_MAX summed into the usage
// wrapped it negative, and the cluster read as free (two entries of 2^62 GPUs let another team's
// task in without preemption). Each sum an admission adds to stays at most kMaxHeld; the task's
// whole request bounds what it adds to each flavor it runs in.
std::optional<std::string> Engine::Impl::held_overflow(const Task& task, const std::vector<int32_t>& flavors) const {
  constexpr Amount kMaxHeld = Amount{1} << 60;
  for (const int32_t flavor : flavors) {
    if (flavor < 0) continue;
    const auto f = static_cast<uint32_t>(flavor);
    for (ir::Resource r : core.quota.charged()) {
      const Amount add = task.request[ir::index(r)];
      const Amount held = std::max({core.quota.usage(static_cast<uint32_t>(task.team), f, r), core.quota.flavor_usage(f, r),
                                    core.quota.cohort_usage(f, r)});
      if (add > kMaxHeld || held > kMaxHeld - add) {
        return fmt::format("the admitted tasks would hold more than 2^60 of `{}` in instance type `{}`, the most gov counts",
                           core.module.column_key(r), core.module.flavors[f].name);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> Engine::Impl::load_pending(const PendingTask& entry, Time at) {
  Task task;
  if (auto error = resolve_task(core.resolver(), entry.task, task)) return error;
  if (id_in_use(entry.task.id)) return fmt::format("task id `{}` appears twice", entry.task.id);
  if (auto error = time_problem(at, entry.submitted_at)) return error;
  task.submitted_at = entry.submitted_at;
  task.state = TaskState::pending;
  task.submitted = encode_submitted(entry.task);
  task.warnings = entry.warnings;
  // Its last pending decision, so the next cycle repeats it only when it changes (before add():
  // they are part of its queue class).
  task.last_reason = entry.reason;
  task.last_message = entry.message;
  task.has_decision = entry.reason.has_value();
  const uint32_t index = core.tasks.add(std::move(task), /*claim_id=*/true);
  if (!core.module.teams[static_cast<size_t>(core.tasks[index].team)].active) return std::nullopt;
  if (entry.parked) {
    core.tasks.park(index);
  } else {
    core.tasks.enqueue(index);
  }
  return std::nullopt;
}

Engine::Engine(const ir::Module& module, const ir::Evaluator& evaluator, EngineOptions options)
    : impl_(std::make_unique<Impl>(module, evaluator, options)) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

std::vector<Decision> Engine::step(Time at, std::span<const Event> events) {
  std::vector<Decision> out;
  impl_->step(at, events, out);
  return out;
}

void Engine::step(Time at, std::span<const Event> events, std::vector<Decision>& out) {
  impl_->step(at, events, out);
}

std::vector<LoadFailure> Engine::load_state(const ClusterState& state) {
  std::vector<LoadFailure> failures;
  const bool fresh = task_count() == 0;
  const auto load = [&](LoadFailure::List list, size_t index, std::optional<std::string> error) {
    if (error) failures.push_back({list, index, std::move(*error)});
  };
  constexpr std::string_view kNotFresh = "a state can only be loaded into a fresh engine";
  for (size_t i = 0; i < state.admitted.size(); ++i) {
    load(LoadFailure::List::admitted, i,
         fresh ? impl_->load_admitted(state.admitted[i], state.at) : std::optional<std::string>(kNotFresh));
  }
  for (size_t i = 0; i < state.pending.size(); ++i) {
    load(LoadFailure::List::pending, i,
         fresh ? impl_->load_pending(state.pending[i], state.at) : std::optional<std::string>(kNotFresh));
  }
  if (fresh) impl_->core.now = std::max(impl_->core.now, state.at);
  return failures;
}

ClusterState Engine::export_state() const {
  const EngineCore& core = impl_->core;
  ClusterState state;
  state.at = core.now;
  std::vector<uint32_t> admitted;
  for (uint32_t index = 0; index < core.tasks.size(); ++index) {
    const Task& task = core.tasks[index];
    if (task.state == TaskState::admitted) admitted.push_back(index);
    if (task.state != TaskState::pending) continue;
    state.pending.push_back({decode_submitted(task.submitted), task.submitted_at, task.last_reason, task.last_message,
                             core.tasks.is_parked(index), task.warnings});
  }
  // Pending ones in submission order, ties by id: the records' order, which a restart or a
  // compaction changes (admitted tasks load first), must not show.
  std::stable_sort(state.pending.begin(), state.pending.end(), [](const PendingTask& a, const PendingTask& b) {
    return a.submitted_at != b.submitted_at ? a.submitted_at < b.submitted_at : a.task.id < b.task.id;
  });
  // Admission order (the order their duration finishes break ties in), as load_state re-admits them.
  std::sort(admitted.begin(), admitted.end(), [&](uint32_t a, uint32_t b) {
    return core.tasks[a].admission_order < core.tasks[b].admission_order;
  });
  for (uint32_t index : admitted) {
    const Task& task = core.tasks[index];
    AdmittedTask& entry = state.admitted.emplace_back();
    entry.task = decode_submitted(task.submitted);
    entry.submitted_at = task.submitted_at;
    entry.admitted_at = task.admitted_at;
    entry.flavor = core.module.flavors[static_cast<size_t>(task.flavor)].name;
    const bool groups = !core.module.teams[static_cast<size_t>(task.team)].groups.empty();
    for (int32_t flavor : task.pod_set_flavors) {
      if (flavor < 0) continue;  // a group it asks nothing of
      (groups ? entry.group_flavors : entry.pod_set_flavors).push_back(core.module.flavors[static_cast<size_t>(flavor)].name);
    }
    entry.warnings = task.warnings;
  }
  return state;
}

AdmissionCheck Engine::check_admission(const gov::Task& task) const {
  return engine::check_admission(impl_->core, task);
}

PreparedTask Engine::prepare(const gov::Task& task) const {
  return engine::prepare(impl_->core, task);
}

AdmissionCheck Engine::check_admission(const PreparedTask& task) const {
  return engine::check_admission(impl_->core, task);
}

std::optional<Explanation> Engine::explain(std::string_view task_id) const {
  const int32_t index = impl_->core.tasks.find(task_id);
  if (index < 0) return std::nullopt;
  return explain_task(impl_->core, static_cast<uint32_t>(index));
}

Snapshot Engine::snapshot(bool with_ended_tasks) const {
  const EngineCore& core = impl_->core;
  Snapshot snapshot;
  snapshot.at = core.now;
  for (uint32_t t = 0; t < core.quota.team_count(); ++t) {
    for (const ir::FlavorQuota& quota : core.module.teams[t].quotas) {
      for (ir::Resource r : core.quota.charged()) {
        const Amount used = core.quota.usage(t, quota.flavor, r);
        const Amount nominal = core.quota.nominal(t, quota.flavor, r);
        // A partition profile's row only where the team's quota gives it or it is used.
        if (ir::is_partition(r) && nominal == 0 && used == 0) continue;
        snapshot.usage.push_back({core.module.teams[t].name, core.module.flavors[quota.flavor].name,
                                  ir::Module::public_resource(r), std::string(core.module.partition_of(r)),
                                  nominal, core.quota.borrowing_limit(t, quota.flavor, r), used,
                                  std::max<Amount>(0, used - nominal)});
      }
    }
  }
  for (uint32_t f = 0; f < core.quota.flavor_count(); ++f) {
    for (ir::Resource r : core.quota.charged()) {
      if (ir::is_partition(r) && core.quota.cohort_quota(f, r) == 0 && core.quota.flavor_usage(f, r) == 0) continue;
      snapshot.cohort.push_back({core.module.flavors[f].name, ir::Module::public_resource(r),
                                 std::string(core.module.partition_of(r)), core.quota.cohort_quota(f, r),
                                 core.quota.cohort_usage(f, r)});
    }
  }
  for (uint32_t index = 0; index < core.tasks.size(); ++index) {
    const Task& task = core.tasks[index];
    if (!with_ended_tasks && task.state != TaskState::pending && task.state != TaskState::admitted) continue;
    TaskRow row{task.id,      core.team_name(task),          task.state, {}, task.submitted_at,
                std::nullopt, core.tasks.is_parked(index)};
    if (task.state == TaskState::admitted) {
      row.flavor = core.module.flavors[static_cast<size_t>(task.flavor)].name;
      row.admitted_at = task.admitted_at;
    }
    snapshot.tasks.push_back(std::move(row));
  }
  return snapshot;
}

uint64_t Engine::queue_work() const {
  return impl_->core.tasks.queue_comparisons() + impl_->core.tasks.group_moves() + impl_->scheduler.cycles();
}
uint64_t Engine::team_work() const {
  return impl_->core.tasks.team_visits();
}
uint64_t Engine::nomination_work() const {
  return impl_->scheduler.nominations_computed();
}
bool Engine::holds_scan_progress() const {
  return impl_->scheduler.holds_scan_progress();
}
size_t Engine::task_count() const {
  return impl_->core.tasks.size();
}
size_t Engine::live_tasks() const {
  return impl_->core.tasks.live();
}
std::optional<Engine::TaskOfId> Engine::task_of_id(std::string_view id) const {
  const int32_t index = impl_->core.tasks.find(id);
  if (index < 0) return std::nullopt;
  const Task& task = impl_->core.tasks[static_cast<uint32_t>(index)];
  return TaskOfId{task.team, task.state == TaskState::pending || task.state == TaskState::admitted};
}
Time Engine::now() const {
  return impl_->core.now;
}
std::optional<Time> Engine::next_finish() {
  auto& timers = impl_->core.timers;
  while (!timers.empty()) {
    if (finishes_something(impl_->core, timers.top())) return timers.top().at;
    timers.pop();  // stale: release_due would skip it
  }
  return std::nullopt;
}
double Engine::weighted_share(uint32_t team) const {
  const int64_t weight = impl_->core.module.teams.at(team).fair_share_weight_micros;
  return dominant_resource_share(impl_->core.quota, team, weight).weighted();
}
const ir::Module& Engine::module() const {
  return impl_->core.module;
}
const std::vector<std::string>& Engine::self_check_failures() const {
  return impl_->core.self_check_failures;
}

}  // namespace gov::engine
