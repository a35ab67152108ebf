#include "runtime/embed/convert.hpp"

#include <type_traits>

namespace gov::embed {

// The public enums mirror the engine's value for value, so conversions are casts.
static_assert(kResourceCount == ir::kResourceCount);
static_assert(static_cast<int>(Resource::gpu) == static_cast<int>(ir::Resource::gpu) &&
              static_cast<int>(Resource::neuron) == static_cast<int>(ir::Resource::neuron) &&
              static_cast<int>(Resource::vcpu) == static_cast<int>(ir::Resource::vcpu) &&
              static_cast<int>(Resource::memory) == static_cast<int>(ir::Resource::memory) &&
              static_cast<int>(Resource::efa) == static_cast<int>(ir::Resource::efa));
static_assert(static_cast<int>(Outcome::invalid) == static_cast<int>(engine::Outcome::invalid) &&
              static_cast<int>(Outcome::cancelled) == static_cast<int>(engine::Outcome::cancelled) &&
              static_cast<int>(Outcome::admitted) == static_cast<int>(engine::Outcome::admitted));
static_assert(static_cast<int>(PendingReason::team_inactive) == static_cast<int>(engine::PendingReason::team_inactive) &&
              static_cast<int>(PendingReason::waiting_for_quota) == static_cast<int>(engine::PendingReason::waiting_for_quota));
static_assert(static_cast<int>(PreemptionKind::fair_sharing) == static_cast<int>(engine::PreemptionKind::fair_sharing) &&
              static_cast<int>(PreemptionKind::in_team) == static_cast<int>(engine::PreemptionKind::in_team));
static_assert(static_cast<int>(TaskState::invalid) == static_cast<int>(engine::TaskState::invalid) &&
              static_cast<int>(TaskState::admitted) == static_cast<int>(engine::TaskState::admitted));

namespace {

template <typename To, typename From>
To cast(From value) {
  return static_cast<To>(static_cast<std::underlying_type_t<From>>(value));
}

template <typename To, typename From>
std::optional<To> cast(const std::optional<From>& value) {
  if (!value) return std::nullopt;
  return cast<To>(*value);
}

ResourceAmounts amounts_from_engine(const engine::ResourceAmounts& amounts) {
  ResourceAmounts out;
  out.reserve(amounts.size());
  for (const auto& [resource, amount] : amounts) out.push_back({from_engine(resource), amount});
  return out;
}

engine::ResourceAmounts amounts_to_engine(const ResourceAmounts& amounts) {
  engine::ResourceAmounts out;
  out.reserve(amounts.size());
  for (const ResourceAmount& a : amounts) out.emplace_back(to_engine(a.resource), a.amount);
  return out;
}

std::vector<RuleWarning> warnings_from_engine(std::vector<engine::RuleWarning>&& warnings) {
  std::vector<RuleWarning> out;
  out.reserve(warnings.size());
  for (engine::RuleWarning& w : warnings) out.push_back({std::move(w.rule), std::move(w.message)});
  return out;
}

template <typename TaskLike, typename Spec>
void copy_task(TaskLike&& from, Spec& to) {
  to.id = std::forward<TaskLike>(from).id;
  to.team = std::forward<TaskLike>(from).team;
  to.priority = std::forward<TaskLike>(from).priority;
  to.instance_type = std::forward<TaskLike>(from).instance_type;
  to.instances = from.instances;
  to.amounts = from.amounts;
  to.pods = from.pods;
  to.labels = std::forward<TaskLike>(from).labels;
  to.duration = from.duration;
}

}  // namespace

engine::TaskSpec to_engine(const Task& task) {
  engine::TaskSpec spec;
  copy_task(task, spec);
  return spec;
}

engine::TaskSpec to_engine(Task&& task) {
  engine::TaskSpec spec;
  copy_task(std::move(task), spec);
  return spec;
}

Task from_engine(const engine::TaskSpec& spec) {
  Task task;
  copy_task(spec, task);
  return task;
}

Decision from_engine(engine::Decision&& d, int64_t version, uint64_t sequence) {
  Decision out;
  out.at = d.at;
  out.task = std::move(d.task);
  out.team = std::move(d.team);
  out.outcome = cast<Outcome>(d.outcome);
  out.flavor = std::move(d.flavor);
  out.usage = amounts_from_engine(d.usage);
  out.borrowed = amounts_from_engine(d.borrowed);
  out.warnings = warnings_from_engine(std::move(d.warnings));
  out.reason = cast<PendingReason>(d.reason);
  out.short_of = amounts_from_engine(d.short_of);
  out.maximum = amounts_from_engine(d.maximum);
  out.victims = std::move(d.victims);
  out.by = std::move(d.by);
  if (d.outcome == engine::Outcome::preempted) out.kind = cast<PreemptionKind>(d.kind);
  out.rule = std::move(d.rule);
  out.message = std::move(d.message);
  out.version = version;
  out.sequence = sequence;
  return out;
}

engine::Decision to_engine(const Decision& d) {
  engine::Decision out;
  out.at = d.at;
  out.task = d.task;
  out.team = d.team;
  out.outcome = cast<engine::Outcome>(d.outcome);
  out.flavor = d.flavor;
  out.usage = amounts_to_engine(d.usage);
  out.borrowed = amounts_to_engine(d.borrowed);
  for (const RuleWarning& w : d.warnings) out.warnings.push_back({w.rule, w.message});
  out.reason = cast<engine::PendingReason>(d.reason);
  out.short_of = amounts_to_engine(d.short_of);
  out.maximum = amounts_to_engine(d.maximum);
  out.victims = d.victims;
  out.by = d.by;
  out.kind = d.kind ? cast<engine::PreemptionKind>(*d.kind) : engine::PreemptionKind::in_team;
  out.rule = d.rule;
  out.message = d.message;
  return out;
}

Explanation from_engine(engine::Explanation&& e, int64_t version) {
  Explanation out;
  out.version = version;
  out.task = std::move(e.task);
  out.team = std::move(e.team);
  out.state = cast<TaskState>(e.state);
  out.priority = e.priority;
  out.priority_class = std::move(e.priority_class);
  out.requested = amounts_from_engine(e.requested);
  out.flavor = std::move(e.flavor);
  for (engine::FlavorExplanation& f : e.flavors) {
    FlavorExplanation flavor{std::move(f.flavor), std::move(f.verdict), {}};
    for (const engine::ResourceFigures& r : f.resources) {
      flavor.resources.push_back({from_engine(r.resource), r.requested, r.guaranteed, r.borrowing_limit, r.in_use,
                                  r.available, r.borrowable, r.maximum, r.cohort_idle});
    }
    out.flavors.push_back(std::move(flavor));
  }
  for (engine::CandidateExplanation& c : e.candidates) {
    out.candidates.push_back({std::move(c.task), std::move(c.team), c.priority, c.admitted_at, c.chosen, std::move(c.why)});
  }
  out.reason = cast<PendingReason>(e.reason);
  out.message = std::move(e.message);
  out.preempted_by = std::move(e.preempted_by);
  out.preempted_kind = cast<PreemptionKind>(e.preempted_kind);
  out.notes = std::move(e.notes);
  return out;
}

UsageRow from_engine(const engine::UsageRow& row) {
  return {row.team, row.flavor, from_engine(row.resource), row.nominal, row.borrowing_limit, row.used, row.borrowed};
}

CohortRow from_engine(const engine::CohortRow& row) {
  return {row.flavor, from_engine(row.resource), row.quota, row.used};
}

TaskRow from_engine(const engine::TaskRow& row) {
  return {row.id, row.team, cast<TaskState>(row.state), row.flavor, row.submitted_at, row.admitted_at};
}

}  // namespace gov::embed
