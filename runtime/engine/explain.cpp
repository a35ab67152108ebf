// Explanations: the task's figures and a replay of its flavor assignment and preemption search on
// a copy of the quota state, annotated for people.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "runtime/engine/engine_core.hpp"
#include "runtime/engine/preemption_internal.hpp"

namespace gov::engine {
namespace {

std::string_view verdict_text(GranularMode mode) {
  switch (mode.mode) {
    case FitMode::fit:
      return mode.borrow > 0 ? "fits by borrowing" : "fits";
    case FitMode::reclaim:
      return "needs reclaim from other teams";
    case FitMode::preempt:
      return "needs preemption in the team";
    case FitMode::no_candidates:
      return "needs preemption, but no task may be preempted for it";
    case FitMode::no_fit:
      return "does not fit";
  }
  return "";
}

std::string share_text(double share) {
  return std::isinf(share) ? "infinite" : fmt::format("{:.4g}", share);
}

FlavorExplanation flavor_figures(const EngineCore& core, const QuotaState& quota, const Task& task,
                                 uint32_t flavor, std::string_view verdict, const Resources& request) {
  const auto team = static_cast<uint32_t>(task.team);
  FlavorExplanation out;
  out.flavor = core.module.flavors[flavor].name;
  out.verdict = verdict;
  for (ir::Resource r : quota.charged()) {
    const Amount requested = request[ir::index(r)];
    if (requested == 0) continue;
    ResourceFigures figures;
    figures.resource = ir::Module::public_resource(r);
    figures.partition = core.module.partition_of(r);
    figures.requested = requested;
    figures.guaranteed = quota.nominal(team, flavor, r);
    figures.borrowing_limit = quota.borrowing_limit(team, flavor, r);
    figures.in_use = quota.usage(team, flavor, r);
    figures.available = quota.available(team, flavor, r);
    const Amount own_unused = std::max<Amount>(0, figures.guaranteed - figures.in_use);
    figures.borrowable = std::max<Amount>(0, figures.available - own_unused);
    figures.maximum = quota.max_capacity(team, flavor, r);
    figures.cohort_idle = quota.team_cohort_idle(team, flavor, r);
    out.resources.push_back(figures);
  }
  return out;
}

std::string_view target_text(const Target& target) {
  switch (target.kind) {
    case PreemptionKind::in_team:
      return "chosen: in-team preemption of a lower-priority task";
    case PreemptionKind::reclaim:
      return target.while_borrowing ? "chosen: reclaim while borrowing"
                                    : "chosen: reclaim of quota its team lent";
    case PreemptionKind::fair_sharing:
      return "chosen: fair sharing";
  }
  return "chosen";
}

std::string note_text(const EngineCore& core, const CandidateNote& note) {
  switch (note.verdict) {
    case CandidateNote::Verdict::removed:
      return "evicting every allowed candidate would not make room, so nothing is preempted (all "
             "or nothing)";
    case CandidateNote::Verdict::given_back:
      return "not needed: the task fits without evicting it (fill-back)";
    case CandidateNote::Verdict::share_test_failed:
      // Which test, and which of the victim team's shares it compared: identical candidates
      // read as if the victim team's share had changed between them (a what-if analyst's
      // finding, session 43).
      if (note.strategy == ir::FairShareStrategy::less_than_initial_share) {
        return fmt::format(
            "fair sharing (less-than-initial-share): the task's team would have share {}, not below the victim "
            "team's {} now",
            share_text(note.preemptor_share), share_text(note.target_share));
      }
      return fmt::format(
          "fair sharing (less-than-or-equal-to-final-share): the task's team would have share {}, above the victim "
          "team's {} once it lost this task",
          share_text(note.preemptor_share), share_text(note.target_share));
    case CandidateNote::Verdict::skipped_team_within_nominal:
      return fmt::format("its team `{}` is back within its nominal quota after earlier victims",
                         core.team_name(core.tasks[note.task]));
    case CandidateNote::Verdict::skipped_needs_no_borrowing:
      return "reclaimable only if the task would not borrow afterwards";
  }
  return "";
}

// Why an admitted task that the search never took was not a candidate, or was not needed.
std::string eligibility_text(const EngineCore& core, const QuotaState& quota, const Task& preemptor,
                             const Task& candidate, ResourceMask needs, bool any_targets) {
  using preemption::Policy;
  const ir::Team& team = core.module.teams[static_cast<size_t>(preemptor.team)];
  const bool same_team = candidate.team == preemptor.team;
  const Policy policy =
      same_team ? preemption::within_team_policy(team) : preemption::reclaim_policy(team);
  if (candidate.preempted_at == core.now)
    return "already preempted at this time (at most once per event time)";
  if (!core.module.teams[static_cast<size_t>(candidate.team)].active) {
    return fmt::format("team `{}` is inactive: its tasks keep running and are never preempted (Kueue leaves a "
                       "stopped ClusterQueue out of scheduling)",
                       core.team_name(candidate));
  }
  if (policy == Policy::never) {
    return same_team ? fmt::format("team `{}` does not preempt its own tasks", team.name)
                     : fmt::format("team `{}` does not reclaim from other teams", team.name);
  }
  if (!same_team && !quota.borrowing_in(static_cast<uint32_t>(candidate.team),
                                        static_cast<uint32_t>(candidate.flavor), needs)) {
    return fmt::format("team `{}` is within its nominal quota: it is never reclaimed from",
                       core.team_name(candidate));
  }
  if (!preemption::policy_allows(policy, preemptor, candidate)) {
    if (policy == Policy::lower_or_newer_equal_priority &&
        candidate.priority == preemptor.priority) {
      return fmt::format("priority {} equals the task's, and it was not submitted in a later second (Kueue compares "
                         "creation times in whole seconds)",
                         candidate.priority);
    }
    return fmt::format("priority {} is not lower than the task's {}", candidate.priority,
                       preemptor.priority);
  }
  return any_targets ? "not needed: earlier candidates free enough"
                     : "no set of allowed candidates makes room";
}

std::vector<CandidateExplanation> explain_candidates(const EngineCore& core,
                                                     const QuotaState& quota, uint32_t task,
                                                     const Assignment& assignment,
                                                     const PreemptionRequest& request,
                                                     const std::vector<Target>& targets,
                                                     const SearchTrace& trace) {
  const Task& preemptor = core.tasks[task];
  std::vector<uint32_t> considered;
  for (const RequestPart& part : request.all()) {
    for (uint32_t t = 0; t < quota.team_count(); ++t) {
      for (uint32_t candidate : core.tasks.admitted(t, part.flavor)) {
        const Resources* held = charged_in(core.tasks[candidate], part.flavor);
        for (ir::Resource r : quota.charged()) {
          if (contains(part.needs, r) && held != nullptr && (*held)[ir::index(r)] > 0 &&
              std::find(considered.begin(), considered.end(), candidate) == considered.end()) {
            considered.push_back(candidate);
            break;
          }
        }
      }
    }
  }
  const auto own_team = static_cast<uint32_t>(preemptor.team);
  std::sort(considered.begin(), considered.end(), [&core, own_team](uint32_t a, uint32_t b) {
    return preemption::candidate_before(core.tasks, own_team, a, b);
  });
  std::vector<CandidateExplanation> out;
  for (uint32_t candidate : considered) {
    const Task& c = core.tasks[candidate];
    CandidateExplanation explanation{c.id, core.team_name(c), c.priority, c.admitted_at, false, {}};
    const auto target = std::find_if(targets.begin(), targets.end(),
                                     [candidate](const Target& t) { return t.task == candidate; });
    const auto last_note =
        std::find_if(trace.notes.rbegin(), trace.notes.rend(),
                     [candidate](const CandidateNote& n) { return n.task == candidate; });
    if (target != targets.end()) {
      explanation.chosen = true;
      explanation.why = target_text(*target);
    } else if (last_note != trace.notes.rend()) {
      explanation.why = note_text(core, *last_note);
    } else {
      explanation.why = eligibility_text(core, quota, preemptor, c, assignment.needs_preemption,
                                         !targets.empty());
    }
    out.push_back(std::move(explanation));
  }
  return out;
}

// What to change when a request exceeds the most its team could ever hold: in a tree of cohorts
// the binding limit may be a cohort's (Kueue's potentialAvailable up the tree), which the team's
// own quota cannot lift.
std::string capacity_advice(const EngineCore& core, const Task& task, const Assignment& assignment, ir::Resource r) {
  const std::string own = "ask for less, or raise the team's quota or borrow limit";
  // The flavor whose maximum the assignment reports: its reason of that kind, resource and amount.
  const auto reason = std::find_if(assignment.reasons.begin(), assignment.reasons.end(), [&](const FlavorReason& f) {
    return f.kind == FlavorReason::Kind::exceeds_max_capacity && f.resource == r &&
           f.max_capacity == assignment.maximum[ir::index(r)];
  });
  if (reason == assignment.reasons.end()) return own;
  const QuotaState::CapacityBound bound = core.quota.max_capacity_bound(static_cast<uint32_t>(task.team), reason->flavor, r);
  if (bound.cohort < 0) return own;
  const std::string& cohort = core.module.cohorts[static_cast<size_t>(bound.cohort)].name;
  if (bound.total)
    return fmt::format("that is all cohort `{}` holds; ask for less, or raise the quotas in it", cohort);
  return fmt::format("cohort `{}`'s borrow limit binds; ask for less, or raise that limit or the quotas below it",
                     cohort);
}

void add_pending_notes(const EngineCore& core, const Task& task, const Assignment& assignment,
                       size_t victims, bool parked, Explanation& out) {
  const std::string& team = core.team_name(task);
  if (assignment.no_matching_flavor && task.unavailable_partition != nullptr) {
    out.notes.push_back(fmt::format("no quota of the policy gives `{}` partitions: it runs once a policy version does",
                                    *task.unavailable_partition));
    return;
  }
  if (assignment.no_matching_flavor) {
    out.notes.push_back(fmt::format("team `{}` has no quota for the task's instance type", team));
    return;
  }
  if (assignment.fits()) {
    out.notes.push_back("it fits now: it is admitted when its team's queue reaches it");
    return;
  }
  if (assignment.preempt_mode() && victims > 0) {
    out.notes.push_back(fmt::format("it runs once {} task(s) are preempted", victims));
    return;
  }
  for (ir::Resource r : core.quota.charged()) {
    if (contains(assignment.maximum_mask, r)) {
      out.notes.push_back(fmt::format("it asks for {} {} but team `{}` could never hold more than {}: {}",
                                      quantity_text(r, task.request[ir::index(r)]),
                                      core.module.column_kubernetes_name(r), team,
                                      quantity_text(r, assignment.maximum[ir::index(r)]),
                                      capacity_advice(core, task, assignment, r)));
    }
    if (contains(assignment.short_mask, r)) {
      // The team's own borrowing limit can be what binds: then the cohort's tasks finishing gives
      // it nothing (a what-if analyst's finding, session 43: the note sent the user to wait for
      // other teams, with GPUs of the cohort idle).
      const int32_t flavor = assignment.flavor >= 0 ? assignment.flavor : task.requested_flavor;
      const auto team_index = static_cast<uint32_t>(task.team);
      const bool own_limit = flavor >= 0 && core.quota.table().slot(team_index, static_cast<uint32_t>(flavor)) != 0 &&
                             core.quota.own_limit_binds(team_index, static_cast<uint32_t>(flavor), r);
      const std::string amount = quantity_text(r, assignment.short_of[ir::index(r)]);
      if (own_limit) {
        out.notes.push_back(fmt::format(
            "{} more {} must be freed: team `{}` holds all its borrowing limit lets it on {}, so it runs when tasks of "
            "team `{}` finish or are cancelled, or with a higher borrow limit",
            amount, core.module.column_kubernetes_name(r), team, core.module.flavors[static_cast<size_t>(flavor)].name, team));
      } else {
        out.notes.push_back(fmt::format("{} more {} must be freed: it runs when tasks of the cohort finish or are cancelled",
                                        amount, core.module.column_kubernetes_name(r)));
      }
    }
  }
  if (parked)
    out.notes.push_back("parked until something in the cohort changes");
}

void explain_pending(const EngineCore& core, uint32_t index, Explanation& out) {
  const Task& task = core.tasks[index];
  const ir::Team& team = core.module.teams[static_cast<size_t>(task.team)];
  if (!team.active) {
    out.notes.push_back(
        fmt::format("team `{}` is inactive: it admits nothing until it is activated", team.name));
    return;
  }
  QuotaState quota = core.quota;  // simulations run on a copy
  const SearchContext context{core.module, core.evaluator, core.tasks, quota, core.now,
                              /*shortcuts=*/false, /*self_check_failures=*/nullptr};
  FlavorAssigner assigner(context);
  Assignment assignment;
  AssignmentTrace attempts;
  assigner.assign(index, assignment, &attempts);
  for (size_t i = 0; i < attempts.attempts.size(); ++i) {
    const auto [flavor, mode] = attempts.attempts[i];
    if (!attempts.slots.empty()) {  // a team with resource groups: the slot's part of the request
      const size_t slot = attempts.slots[i];
      const std::string verdict = task.pod_sets.empty() ? std::string(verdict_text(mode))
                                                        : fmt::format("pod set `{}`: {}", task.pod_sets[slot / team.groups.size()].name,
                                                                      verdict_text(mode));
      out.flavors.push_back(flavor_figures(core, quota, task, flavor, verdict, slot_request(task, team, slot)));
      continue;
    }
    if (task.pod_sets.empty()) {
      out.flavors.push_back(flavor_figures(core, quota, task, flavor, verdict_text(mode), task.request));
      continue;
    }
    // A task of several pod sets: each pod set's attempts, its verdict naming it.
    const PodSetRequest& pod_set = task.pod_sets[attempts.pod_sets[i]];
    out.flavors.push_back(flavor_figures(core, quota, task, flavor,
                                         fmt::format("pod set `{}`: {}", pod_set.name, verdict_text(mode)),
                                         pod_set.request));
  }
  std::vector<Target> targets;
  if (assignment.preempt_mode()) {
    SearchTrace trace;
    const PreemptionRequest request = assigner.request_for(index, assignment);
    find_targets(context, request, targets, &trace);
    out.candidates = explain_candidates(core, quota, index, assignment, request, targets, trace);
  }
  add_pending_notes(core, task, assignment, targets.size(), core.tasks.is_parked(index), out);
}

}  // namespace

Explanation explain_task(const EngineCore& core, uint32_t index) {
  const Task& task = core.tasks[index];
  Explanation out;
  out.task = task.id;
  out.team = core.team_name(task);
  out.state = task.state;
  out.priority = task.priority;
  const int32_t class_index =
      task.class_index >= 0 ? task.class_index : core.module.settings.default_class;
  if (class_index >= 0)
    out.priority_class = core.module.classes[static_cast<size_t>(class_index)].name;
  for (size_t i = 0; i < core.module.column_count(); ++i) {
    if (task.request[i] != 0) out.requested.push_back(core.module.public_amount(static_cast<ir::Resource>(i), task.request[i]));
  }
  out.reason = task.last_reason;
  out.message = task.last_message;
  if (task.preempted_by >= 0) {
    out.preempted_by = core.tasks[static_cast<uint32_t>(task.preempted_by)].id;
    out.preempted_kind = task.preempted_kind;
  }
  if (task.state == TaskState::admitted) {
    const auto flavor = static_cast<uint32_t>(task.flavor);
    out.flavor = core.module.flavors[flavor].name;
    for_each_charge(task, [&](uint32_t held, const Resources& amounts) {
      out.flavors.push_back(flavor_figures(core, core.quota, task, held, "admitted", amounts));
    });
    return out;
  }
  if (task.state == TaskState::pending) explain_pending(core, index, out);
  return out;
}

}  // namespace gov::engine
