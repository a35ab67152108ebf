#include "runtime/engine/flavor_assigner.hpp"

#include <algorithm>
#include <bit>

namespace gov::engine {
namespace {
const Resources kNoAmounts{};  // what earlier pod sets take of a flavor they were not assigned

/// What the slots of one assignment (pod sets, or pod set × resource group) add up to as each
/// gets its flavor: per flavor the amounts assigned so far (what later slots are counted on top
/// of), the worst mode and the most borrowing.
template <size_t N>
struct SlotTotals {
  std::array<ChargePart, N> assumed;
  size_t assumed_count = 0;
  FitMode worst = FitMode::fit;
  uint8_t borrowing = 0;

  const Resources& assumed_in(uint32_t flavor) const {
    for (size_t k = 0; k < assumed_count; ++k) {
      if (assumed[k].flavor == flavor) return assumed[k].amounts;
    }
    return kNoAmounts;
  }

  /// Slot `slot` takes `request` on `chosen`, where the flavor assigner found `result` (its
  /// private FlavorResult).
  template <typename Result>
  void record(Assignment& out, size_t slot, int32_t chosen, const Result& result, const Resources& request) {
    if (result.worst != FitMode::fit) {
      for (size_t k = 0; k < out.short_of.size(); ++k) out.short_of[k] = std::max(out.short_of[k], result.short_of[k]);
      out.short_mask |= result.short_mask;
    }
    worst = std::min(worst, result.worst);
    borrowing = std::max(borrowing, result.borrowing);
    out.pod_set_flavor[slot] = chosen;
    out.pod_set_needs[slot] = result.needs_preemption;
    out.needs_preemption |= result.needs_preemption;
    ChargePart* part = nullptr;
    for (size_t k = 0; k < assumed_count && part == nullptr; ++k) {
      if (assumed[k].flavor == static_cast<uint32_t>(chosen)) part = &assumed[k];
    }
    if (part == nullptr) {
      part = &assumed[assumed_count++];
      *part = ChargePart{static_cast<uint32_t>(chosen), {}};
    }
    for (size_t k = 0; k < part->amounts.size(); ++k) part->amounts[k] += request[k];
  }

  /// The task's mode is the worst of its slots', its borrowing the most; an assignment that
  /// fits carries no reasons, shortfalls or preemption.
  void finish(Assignment& out) const {
    out.mode = {worst, borrowing};
    out.borrowing = borrowing;
    if (worst == FitMode::fit) {
      out.reasons.clear();
      out.needs_preemption = 0;
      out.short_of = {};
      out.short_mask = 0;
    }
  }
};
}  // namespace

bool FlavorAssigner::FlavorChoice::consider(const FlavorResult& result, uint32_t flavor, const ir::Team& team) {
  tried = true;
  if (result.mode.mode == FitMode::no_fit && (!any_no_fit || result.no_fit_class < least_severe_no_fit.no_fit_class)) {
    least_severe_no_fit = result;
    any_no_fit = true;
  }
  const bool stop = !should_try_next_flavor(result.mode, team);
  if (stop || is_preferred(result.mode, best, team.flavor_preference)) {
    best = result.mode;
    best_result = result;
    chosen = static_cast<int32_t>(flavor);
  }
  return stop;
}

void FlavorAssigner::FlavorChoice::report_no_fit(Assignment& out) const {
  out.no_fit_class = least_severe_no_fit.no_fit_class;
  out.short_of = least_severe_no_fit.short_of;
  out.short_mask = least_severe_no_fit.short_mask;
  if (out.no_fit_class == NoFitClass::exceeds_max_quota) {
    out.maximum = least_severe_no_fit.maximum;
    out.maximum_mask = least_severe_no_fit.maximum_mask;
  }
}

namespace {

/// Kueue's checkFlavorForPodSets for a flavor whose node label the task's instance type does not
/// match: `flavor <f> doesn't match node affinity`, one reason of the scan (kept in the message
/// when the task does not fit).
FlavorReason mismatch(uint32_t flavor) {
  FlavorReason reason;
  reason.kind = FlavorReason::Kind::flavor_mismatch;
  reason.flavor = flavor;
  return reason;
}

/// Where the next scan of a slot starts (findFlavorForPodSets' TriedFlavorIdx, + 1): after the
/// last position tried when the scan found an assignment and stopped before the last flavor;
/// else from the first.
uint8_t next_flavor_after(bool assigned, size_t last_tried, size_t flavors) {
  return assigned && last_tried + 1 < flavors ? static_cast<uint8_t>(last_tried + 1) : uint8_t{0};
}

}  // namespace

size_t slot_count(const Task& task, const ir::Team& team) {
  return std::max<size_t>(1, task.pod_sets.size()) * team.groups.size();
}

int32_t idle_flavor(const Task& task, const ir::Team& team) {
  const int32_t requested = task.pod_sets.empty() ? task.requested_flavor : task.pod_sets.front().requested_flavor;
  return requested >= 0 ? requested : static_cast<int32_t>(team.groups.front().flavors.front());
}

Resources slot_request(const Task& task, const ir::Team& team, size_t slot) {
  const size_t groups = team.groups.size();
  const Resources& request = task.pod_sets.empty() ? task.request : task.pod_sets[slot / groups].request;
  const ir::ResourceGroup& group = team.groups[slot % groups];
  Resources out{};
  for (size_t i = 0; i < out.size(); ++i) {
    if (group.covers_column(static_cast<ir::Resource>(i))) out[i] = request[i];
  }
  return out;
}

bool is_preferred(GranularMode a, GranularMode b, ir::FlavorPreference preference) {
  if (a.mode == FitMode::no_fit) return false;
  if (b.mode == FitMode::no_fit) return true;
  const bool a_no_candidates = a.mode == FitMode::no_candidates;
  const bool b_no_candidates = b.mode == FitMode::no_candidates;
  if (a_no_candidates != b_no_candidates) return !a_no_candidates;
  if (preference == ir::FlavorPreference::preemption_over_borrowing) {
    if (a.borrow != b.borrow) return a.borrow < b.borrow;
    return a.mode > b.mode;
  }
  if (a.mode != b.mode) return a.mode > b.mode;
  return a.borrow < b.borrow;
}

bool is_preferred(GranularMode a, GranularMode b) {
  return is_preferred(a, b, ir::FlavorPreference::borrowing_over_preemption);
}

// shouldTryNextFlavor (§4.4): no fit and "no candidates" always look further; a flavor that
// needs preemption (targets found) looks further under whenCanPreempt = TryNextFlavor, one that
// borrows under whenCanBorrow = TryNextFlavor; anything else stops the search. With Kueue's
// defaults (Borrow / TryNextFlavor) only a fit, even by borrowing, stops it.
bool should_try_next_flavor(GranularMode mode, const ir::Team& team) {
  if (mode.mode == FitMode::no_fit || mode.mode == FitMode::no_candidates) return true;
  const bool preempts = mode.mode == FitMode::preempt || mode.mode == FitMode::reclaim;
  if (preempts && team.when_can_preempt == ir::WhenCanPreempt::try_next_flavor) return true;
  if (mode.borrow > 0 && team.when_can_borrow == ir::WhenCanBorrow::try_next_flavor) return true;
  return false;
}

void Assignment::clear() {
  flavor = -1;
  mode = {FitMode::no_fit, 0};
  borrowing = 0;
  needs_preemption = 0;
  no_matching_flavor = false;
  no_fit_class = NoFitClass::none;
  reasons.clear();
  short_of = {};
  maximum = {};
  short_mask = 0;
  maximum_mask = 0;
  pod_set_count = 0;
  group_count = 0;
  next_flavor = {};
}

PreemptionRequest FlavorAssigner::request_for(uint32_t task, uint32_t flavor,
                                              ResourceMask needs) const {
  PreemptionRequest request;
  one_part_request(request, task, flavor, needs);
  return request;
}

void FlavorAssigner::one_part_request(PreemptionRequest& into, uint32_t task, uint32_t flavor, ResourceMask needs) const {
  const Task& t = context_.tasks[task];
  into.preemptor = task;
  into.team = static_cast<uint32_t>(t.team);
  into.part_count = 1;
  RequestPart& part = into.parts[0];
  part.flavor = flavor;
  part.request = {};
  for (ir::Resource r : context_.quota.charged()) part.request[ir::index(r)] = t.request[ir::index(r)];
  part.needs = needs;
}

PreemptionRequest FlavorAssigner::request_for(uint32_t task, const Assignment& assignment) const {
  if (assignment.pod_set_count == 0)
    return request_for(task, static_cast<uint32_t>(assignment.flavor), assignment.needs_preemption);
  const Task& t = context_.tasks[task];
  PreemptionRequest request;
  request.preemptor = task;
  request.team = static_cast<uint32_t>(t.team);
  request.part_count = 0;
  const ir::Team& team = context_.module.teams[static_cast<size_t>(t.team)];
  for (uint32_t i = 0; i < assignment.pod_set_count; ++i) {
    if (assignment.pod_set_flavor[i] < 0) continue;  // a group the pod set asks nothing of
    const auto flavor = static_cast<uint32_t>(assignment.pod_set_flavor[i]);
    uint32_t k = 0;
    while (k < request.part_count && request.parts[k].flavor != flavor) ++k;
    RequestPart& part = request.parts[k];
    if (k == request.part_count) {
      ++request.part_count;
      part = RequestPart{flavor, {}, 0};
    }
    const Resources slot = assignment.group_count > 0 ? slot_request(t, team, i) : Resources{};
    const Resources& amounts = assignment.group_count > 0 ? slot : t.pod_sets[i].request;
    for (ir::Resource r : context_.quota.charged()) part.request[ir::index(r)] += amounts[ir::index(r)];
    part.needs |= assignment.pod_set_needs[i];
  }
  return request;
}

bool FlavorAssigner::can_preempt_while_borrowing(const ir::Team& team) const {
  return team.borrow_within_cohort != ir::BorrowWithinCohort::never ||
         (context_.module.settings.fair_sharing &&
          team.reclaim_within_cohort != ir::ReclaimWithinCohort::never);
}

// SimulatePreemption for one contested resource: no targets → no candidates; targets only in
// other teams → reclaim; some in the own team → preempt; with the borrowing level after them.
// Remembered under one state (remember_searches).
std::optional<GranularMode> FlavorAssigner::oracle(uint32_t task, uint32_t flavor, ir::Resource resource,
                                                   Amount amount, Search search) {
  const Task& t = context_.tasks[task];
  const auto team = static_cast<uint32_t>(t.team);
  PreemptionRequest& request = oracle_request_;  // searches do not call the oracle: never in use
  request.preemptor = task;
  request.team = team;
  request.part_count = 1;
  request.parts[0] = RequestPart{flavor, {}, resource_bit(resource)};
  request.parts[0].request[ir::index(resource)] = amount;
  OracleSlot* slot = nullptr;
  OracleKey key;
  if (memo_serial_ != 0) {
    const bool submission_matters =
        context_.module.teams[team].within_team == ir::WithinTeam::lower_or_newer_equal_priority;
    key = {memo_serial_, context_.now, team,    flavor, t.priority,
           submission_matters ? t.submitted_at : 0, resource, amount};
    slot = &oracle_slot(key);
    if (slot->key == key) {
      note_search(slot->reads);
      record_simulation(request, slot->targets, slot->reads);
      return slot->mode;
    }
  }
  SearchReads reads;
  switch (search) {
    case Search::full:
      find_targets(context_, request, scratch_, nullptr, &reads);
      break;
    case Search::bounds_only:
      if (!settled_without_targets(context_, request, reads)) return std::nullopt;
      scratch_.clear();
      break;
    case Search::walk_only:
      search_targets(context_, request, scratch_);
      break;
  }
  note_search(reads);
  record_simulation(request, scratch_, reads);
  GranularMode mode{FitMode::no_candidates, 0};
  if (scratch_.empty()) {
    mode.borrow = context_.quota.borrowing_level(team, flavor, resource, amount);
  } else {
    bool in_own_team = false;
    const auto charge = [this](const Task& victim, bool give_back) {
      for_each_charge(victim, [&](uint32_t f, const Resources& amounts) {
        give_back ? context_.quota.add(static_cast<uint32_t>(victim.team), f, amounts)
                  : context_.quota.subtract(static_cast<uint32_t>(victim.team), f, amounts);
      });
    };
    for (const Target& target : scratch_) {
      const Task& victim = context_.tasks[target.task];
      charge(victim, false);
      in_own_team = in_own_team || victim.team == t.team;
    }
    mode = {in_own_team ? FitMode::preempt : FitMode::reclaim,
            context_.quota.borrowing_level(team, flavor, resource, amount)};
    for (const Target& target : scratch_) charge(context_.tasks[target.task], true);
  }
  if (slot != nullptr) {
    slot->key = key;
    slot->mode = mode;
    slot->targets = scratch_;
    slot->reads = reads;
  }
  return mode;
}

FlavorAssigner::OracleSlot& FlavorAssigner::oracle_slot(const OracleKey& key) {
  static_assert(kOracleSlots == 256, "the slot is the hash's top 8 bits");
  if (oracle_memo_.empty()) oracle_memo_.resize(kOracleSlots);
  uint64_t h = key.serial * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{key.team} << 32) ^ (uint64_t{key.flavor} << 16) ^ static_cast<uint32_t>(key.priority);
  h ^= static_cast<uint64_t>(key.amount) * 0xC2B2AE3D27D4EB4Full;
  h ^= (static_cast<uint64_t>(key.resource) << 56) ^ static_cast<uint64_t>(key.submitted_at);
  h *= 0x9E3779B97F4A7C15ull;
  return oracle_memo_[static_cast<size_t>(h >> 56)];
}

void FlavorAssigner::record_simulation(const PreemptionRequest& request, const std::vector<Target>& targets,
                                       const SearchReads& reads) {
  if (simulated_count_ == simulated_.size()) simulated_.emplace_back();
  Simulated& simulated = simulated_[simulated_count_++];
  // The parts in use only (a request is about 1 KB, and equality reads no more).
  simulated.request.preemptor = request.preemptor;
  simulated.request.team = request.team;
  simulated.request.part_count = request.part_count;
  std::copy_n(request.parts.begin(), request.part_count, simulated.request.parts.begin());
  simulated.targets = targets;
  simulated.reads = reads;
}

// The borrowing level of a fit in a tree (Assignment.Borrowing): the highest of the requested
// resources' levels, as Kueue's Assignment.append keeps the max over its flavor assignments.
uint8_t FlavorAssigner::tree_borrowing_level(uint32_t team, uint32_t flavor, const Resources& request) const {
  uint8_t level = 0;
  for (ir::Resource r : context_.quota.charged()) {
    const Amount amount = request[ir::index(r)];
    if (amount != 0) level = std::max(level, context_.quota.borrowing_level(team, flavor, r, amount));
  }
  return level;
}

// fitsResourceQuota for one resource, before any preemption is simulated: above the maximum
// capacity → no fit; within what is available → fit; otherwise preemption is considered only
// when the request is within nominal or the team may preempt while borrowing.
FlavorAssigner::ResourceCheck FlavorAssigner::check_resource(uint32_t team, uint32_t flavor,
                                                             ir::Resource r, Amount amount) const {
  const QuotaState& quota = context_.quota;
  ResourceCheck check;
  check.borrow = quota.borrowing_level(team, flavor, r, amount);
  FlavorReason& reason = check.reason;
  reason.resource = r;
  reason.flavor = flavor;
  reason.request = amount;
  reason.max_capacity = quota.max_capacity(team, flavor, r);
  const Amount available = quota.available(team, flavor, r);
  reason.lack = amount - available;
  reason.beyond_borrowing_limit =
      quota.usage(team, flavor, r) + amount >
      saturating_add(quota.nominal(team, flavor, r), quota.borrowing_limit(team, flavor, r));
  if (amount > reason.max_capacity) {
    reason.kind = FlavorReason::Kind::exceeds_max_capacity;
    check.fit = ResourceFit::exceeds_max;
  } else if (amount <= available) {
    check.fit = ResourceFit::fits;
  } else {
    reason.kind = FlavorReason::Kind::insufficient_unused;
    const bool may_preempt = amount <= quota.nominal(team, flavor, r) ||
                             quota.may_reclaim_in_hierarchy(team, flavor, r, amount) ||
                             can_preempt_while_borrowing(context_.module.teams[team]);
    check.fit = may_preempt ? ResourceFit::may_preempt : ResourceFit::waits;
  }
  return check;
}

// Every charged resource the task requests, in one flavor; the flavor's mode is the worst. The
// preemption simulations run only when no resource already rules the flavor out (the result is
// the same: no fit dominates, and the reasons are recorded before simulating).
FlavorAssigner::FlavorResult FlavorAssigner::try_flavor(const Task& task, uint32_t task_index,
                                                        uint32_t flavor, const Resources& request,
                                                        const Resources* assumed, Assignment& out) {
  const auto team = static_cast<uint32_t>(task.team);
  FlavorResult result;
  result.mode = {FitMode::fit, 0};
  // The hot path: one call to the (compiled) fit test settles a task that fits. Self-check
  // runs take the per-resource path below, so comparing their decisions tests this one.
  if (assumed != nullptr || requests_partitions(request)) own_determined_ = false;
  if (context_.shortcuts && !expect_no_fit_ && assumed == nullptr && !requests_partitions(request)) {
    const ir::FitResult fit =
        context_.quota.fit(context_.evaluator, team, flavor, request);
    if (fit.fits_all()) {
      own_determined_ = false;
      result.mode.borrow = fit.borrows != 0 ? 1 : 0;
      if (result.mode.borrow != 0 && context_.quota.tree()) result.mode.borrow = tree_borrowing_level(team, flavor, request);
      result.borrowing = result.mode.borrow;
      return result;
    }
  }
  // The flavor's representative mode is its least preferred resource mode under the team's
  // preference; `worst` is the lowest mode of any resource, what admission has to respect (the
  // two differ only when preemption-over-borrowing ranks a borrowing fit below a preemption).
  const ir::FlavorPreference preference = context_.module.teams[team].flavor_preference;
  const auto worsen = [&result, preference](GranularMode mode) { worsen_by(result, mode, preference); };
  if (own_determined_) {
    own_reads_.flavor = static_cast<int32_t>(flavor);
    ++own_reads_flavors_;
  }
  ResourceMask simulate = 0;
  Resources amounts{};  // Kueue's val: the earlier pod sets' part of the flavor plus this request
  for (ir::Resource r : context_.quota.charged()) {
    const Amount own = request[ir::index(r)];
    if (own == 0) continue;
    const Amount before = assumed != nullptr ? (*assumed)[ir::index(r)] : 0;
    const Amount amount = own + before;
    amounts[ir::index(r)] = amount;
    ResourceCheck check = check_resource(team, flavor, r, amount);
    if (own_determined_) {
      note_available_read(team, flavor, r);
      const size_t i = ir::index(r);
      own_reads_.fit[i] = static_cast<uint8_t>(check.fit);
      own_reads_.borrow[i] = check.borrow;
      own_reads_.usage[i] = context_.quota.usage(team, flavor, r);
      // The bound note_available_read just recorded, unless the read ended own-determination.
      if (own_determined_) own_reads_.limit_left[i] = cohort_bounds_.back().limit_left;
    }
    check.reason.request = own;
    check.reason.assumed = before;
    if (check.fit == ResourceFit::fits) {
      worsen({FitMode::fit, check.borrow});
      continue;
    }
    out.reasons.push_back(check.reason);
    if (check.fit == ResourceFit::exceeds_max) {
      result.no_fit_class = NoFitClass::exceeds_max_quota;
      result.maximum[ir::index(r)] = check.reason.max_capacity;
      result.maximum_mask |= resource_bit(r);
      worsen({FitMode::no_fit, 0});
      continue;
    }
    result.short_of[ir::index(r)] = check.reason.lack;
    result.short_mask |= resource_bit(r);
    if (check.fit == ResourceFit::may_preempt) {
      simulate |= resource_bit(r);
      continue;
    }
    result.no_fit_class = std::max(result.no_fit_class, NoFitClass::waiting_for_quota);
    worsen({FitMode::no_fit, check.borrow});
  }
  if (result.mode.mode == FitMode::no_fit) return result;
  simulate_contested(task_index, flavor, simulate, amounts, preference, result);
  return result;
}

void FlavorAssigner::worsen_by(FlavorResult& result, GranularMode mode, ir::FlavorPreference preference) {
  if (is_preferred(result.mode, mode, preference)) result.mode = mode;
  result.worst = std::min(result.worst, mode.mode);
  result.borrowing = std::max(result.borrowing, mode.borrow);
}

// Each contested resource's preemption search, its mode worsening the flavor's. The flavor's
// mode is the least preferred of its resources' (is_preferred orders the modes totally, so the
// order of the searches does not matter), and "no candidates" is less preferred than any mode
// with targets; of two "no candidates", the one that borrows more. So once one resource has no
// candidates with borrowing level b, a resource whose level without any victim is at most b
// changes nothing: its own "no candidates" would be at most b, a mode with targets is preferred,
// and its level after victims is no higher (in a flat cohort the level is whether the team's own
// usage passes its nominal, and victims only lower that usage), so neither `worst` nor
// `borrowing` moves. The cheap bounds (settled_without_targets) are tried first on every
// resource, and the candidate walk runs only where it can change the answer: a search that finds
// targets walks every candidate team, and on the 70% trace 45,334 of the 48,705 flavor
// assignments that found targets had another resource with none (docs/perf/analysis.md, session
// 20). Searches skipped read nothing, so what the answer read (note_search) is what it depends
// on. Runs without shortcuts, and trees of cohorts, search every resource.
void FlavorAssigner::simulate_contested(uint32_t task, uint32_t flavor, ResourceMask simulate, const Resources& amounts,
                                        ir::FlavorPreference preference, FlavorResult& result) {
  result.needs_preemption |= simulate;
  const bool bounds_first = context_.shortcuts && !context_.quota.tree();
  ResourceMask unsettled = simulate;
  std::optional<uint8_t> no_candidates_borrow;  // the highest level of a resource with no candidates
  if (bounds_first) {
    for (ir::Resource r : context_.quota.charged()) {
      if (!contains(simulate, r)) continue;
      const std::optional<GranularMode> mode = oracle(task, flavor, r, amounts[ir::index(r)], Search::bounds_only);
      if (!mode) continue;
      worsen_by(result, *mode, preference);
      unsettled &= static_cast<ResourceMask>(~resource_bit(r));
      if (mode->mode == FitMode::no_candidates) no_candidates_borrow = std::max(no_candidates_borrow.value_or(0), mode->borrow);
    }
  }
  const auto team = static_cast<uint32_t>(context_.tasks[task].team);
  for (ir::Resource r : context_.quota.charged()) {
    if (!contains(unsettled, r)) continue;
    const Amount amount = amounts[ir::index(r)];
    if (no_candidates_borrow && context_.quota.borrowing_level(team, flavor, r, amount) <= *no_candidates_borrow) continue;
    worsen_by(result, *oracle(task, flavor, r, amount, bounds_first ? Search::walk_only : Search::full), preference);
  }
}

// The task names an instance type its team has no quota for, or the team has none at all:
// Kueue's node-affinity / unavailable-resource reasons.
void FlavorAssigner::no_flavor_of_team(const Task& task, Assignment& out) const {
  const ir::Team& team = context_.module.teams[static_cast<size_t>(task.team)];
  out.no_matching_flavor = true;
  for (const ir::FlavorQuota& quota : team.quotas) {
    FlavorReason reason;
    reason.kind = FlavorReason::Kind::flavor_mismatch;
    reason.flavor = quota.flavor;
    out.reasons.push_back(reason);
  }
  if (!team.quotas.empty()) return;
  for (ir::Resource r : context_.quota.charged()) {
    if (task.request[ir::index(r)] == 0) continue;
    FlavorReason reason;
    reason.kind = FlavorReason::Kind::resource_unavailable;
    reason.resource = r;
    out.reasons.push_back(reason);
  }
  if (out.reasons.empty()) {  // nothing requested and nothing to request it from
    FlavorReason reason;
    reason.kind = FlavorReason::Kind::resource_unavailable;
    out.reasons.push_back(reason);
  }
}

void FlavorAssigner::resumed_past_requested(Assignment& out) {
  out.no_matching_flavor = true;
  out.flavor = -1;
  out.mode = {FitMode::no_fit, 0};
  out.borrowing = 0;
  out.pod_set_count = 0;
  out.group_count = 0;
}

void FlavorAssigner::targets_for(uint32_t task, const Assignment& assignment,
                                 std::vector<Target>& out) {
  PreemptionRequest& request = whole_request_;
  if (assignment.pod_set_count == 0) {
    one_part_request(request, task, static_cast<uint32_t>(assignment.flavor), assignment.needs_preemption);
  } else {
    request = request_for(task, assignment);
  }
  for (size_t i = 0; context_.shortcuts && i < simulated_count_; ++i) {
    if (simulated_[i].request == request || own_limits_settle(simulated_[i], request)) {
      out = simulated_[i].targets;
      note_search(simulated_[i].reads);
      return;
    }
  }
  SearchReads reads;
  find_targets(context_, request, out, nullptr, &reads);
  note_search(reads);
}

// preemption::over_own_limits settled `simulated` (one resource r of one flavor) with no
// targets: r's amount exceeds the own team's limits even with what its candidates hold gone. The
// whole request contests r in that flavor and asks at least that amount of it (the same for a
// task of one pod set; the sum of every pod set's where the simulation counted the pod sets up to
// one), so its search ends at the same bound: its own-team candidates are those that hold a
// contested resource, and a candidate that holds none of r frees none of it, so they hold the
// same amount of r, and the limits read no other team. Most parked heads' whole-request searches
// end there.
bool FlavorAssigner::own_limits_settle(const Simulated& simulated, const PreemptionRequest& request) {
  if (!simulated.reads.own_settled || !simulated.targets.empty()) return false;
  if (request.part_count != 1 || simulated.request.part_count != 1) return false;
  const RequestPart& whole = request.first();
  const RequestPart& one = simulated.request.first();
  if (request.team != simulated.request.team || request.preemptor != simulated.request.preemptor ||
      whole.flavor != one.flavor || std::popcount(one.needs) != 1 || (whole.needs & one.needs) == 0)
    return false;
  const auto r = static_cast<size_t>(std::countr_zero(one.needs));
  return whole.request[r] >= one.request[r];
}

bool FlavorAssigner::own_answer_holds(uint32_t task_index, const OwnReads& reads, const Assignment& assignment) {
  if (reads.flavor < 0 || !context_.shortcuts || context_.quota.tree()) return false;
  const Task& task = context_.tasks[task_index];
  const auto team = static_cast<uint32_t>(task.team);
  const auto flavor = static_cast<uint32_t>(reads.flavor);
  const QuotaState& quota = context_.quota;
  const Resources& usage = quota.usage(team, flavor);
  // What is short mostly moved when anything did: its shortfall first, the cheapest test.
  for (const FlavorReason& reason : assignment.reasons) {
    const ir::Resource r = reason.resource;
    if (usage[ir::index(r)] != reads.usage[ir::index(r)] &&
        reason.request - quota.available(team, flavor, r) != reason.lack)
      return false;
  }
  cohort_bounds_.clear();
  own_determined_ = true;
  size_t next_reason = 0;
  for (ir::Resource r : quota.charged()) {
    const size_t i = ir::index(r);
    const Amount amount = task.request[i];
    if (amount == 0) continue;
    const auto fit = static_cast<ResourceFit>(reads.fit[i]);
    if (usage[i] == reads.usage[i] && quota.cohort_left(flavor, r) >= reads.limit_left[i]) {
      // The same usage under the same own limit: check_resource reads the same figures.
      cohort_bounds_.push_back({flavor, r, reads.limit_left[i]});
      if (fit != ResourceFit::fits) ++next_reason;
    } else {
      const ResourceCheck check = check_resource(team, flavor, r, amount);
      if (check.fit != fit || check.borrow != reads.borrow[i]) return false;
      note_available_read(team, flavor, r);
      if (!own_determined_) return false;
      if (fit == ResourceFit::fits) continue;
      if (next_reason == assignment.reasons.size() || !(assignment.reasons[next_reason++] == check.reason))
        return false;
    }
    if (fit != ResourceFit::may_preempt) continue;
    // The oracle's question for r (oracle: one part, r alone), settled at the own limits.
    PreemptionRequest& request = oracle_request_;
    request.preemptor = task_index;
    request.team = team;
    request.part_count = 1;
    request.parts[0] = RequestPart{flavor, {}, resource_bit(r)};
    request.parts[0].request[i] = amount;
    if (!over_own_limits(context_, request)) return false;
  }
  return next_reason == assignment.reasons.size();
}

void FlavorAssigner::note_search(const SearchReads& reads) {
  if (!reads.own_settled) own_determined_ = false;
  if (!reads.flavor_local) flavor_local_ = false;
}

void FlavorAssigner::note_available_read(uint32_t team, uint32_t flavor, ir::Resource r) {
  const QuotaState& quota = context_.quota;
  if (!quota.has_quota(team, flavor)) {
    own_determined_ = false;
    return;
  }
  const Amount limit_left = quota.own_limit_left(team, flavor, r);
  if (limit_left == ir::kUnlimited || quota.cohort_left(flavor, r) < limit_left) {
    own_determined_ = false;  // the cohort's term is (or may become) the smaller one
    return;
  }
  cohort_bounds_.push_back({flavor, r, limit_left});
}

void FlavorAssigner::assign(uint32_t task_index, Assignment& out, AssignmentTrace* trace,
                            int32_t pinned) {
  out.clear();
  simulated_count_ = 0;
  cohort_bounds_.clear();
  own_determined_ = false;
  flavor_local_ = false;
  own_reads_.flavor = -1;
  own_reads_flavors_ = 0;
  const Task& task = context_.tasks[task_index];
  const auto team = static_cast<uint32_t>(task.team);
  const ir::Team& team_def = context_.module.teams[team];
  if (!team_def.groups.empty()) {
    assign_groups(task_index, out, trace, nullptr);
    return;
  }
  if (!task.pod_sets.empty()) {
    assign_pod_sets(task_index, out, trace, nullptr);
    return;
  }
  // The one-flavor-list path below records what it reads: own_determined (a fit, a tree of
  // cohorts or a partition clears it) and flavor_local (a search that walked candidates clears it).
  own_determined_ = context_.shortcuts && !context_.quota.tree();
  flavor_local_ = own_determined_;
  const bool named_and_held =
      task.requested_flavor >= 0 &&
      context_.quota.has_quota(team, static_cast<uint32_t>(task.requested_flavor));
  if ((task.requested_flavor >= 0 && !named_and_held) || team_def.quotas.empty()) {
    no_flavor_of_team(task, out);
    return;
  }
  if (task.unavailable_partition != nullptr) {  // a profile no flavor of any team has
    out.no_matching_flavor = true;
    FlavorReason reason;
    reason.kind = FlavorReason::Kind::resource_unavailable;
    reason.unavailable_partition = task.unavailable_partition;
    out.reasons.push_back(reason);
    return;
  }
  FlavorChoice choice;
  // Positions count every flavor of the list, the ones a scan passes over too (Kueue's
  // attemptedFlavorIdx); a resumed scan starts after the last one tried (scan_from).
  const size_t from = scan_from_ != nullptr ? (*scan_from_)[0] : 0;
  size_t position = 0, last_tried = 0;
  for (const ir::FlavorQuota& quota : team_def.quotas) {
    const size_t here = position++;
    if (here < from) continue;
    last_tried = here;
    if (task.requested_flavor >= 0 && quota.flavor != static_cast<uint32_t>(task.requested_flavor)) {
      out.reasons.push_back(mismatch(quota.flavor));
      continue;
    }
    if (pinned >= 0 && quota.flavor != static_cast<uint32_t>(pinned)) continue;
    const FlavorResult result = try_flavor(task, task_index, quota.flavor, task.request, nullptr, out);
    if (trace != nullptr) trace->attempts.emplace_back(quota.flavor, result.mode);
    if (choice.consider(result, quota.flavor, team_def)) break;
  }
  out.next_flavor[0] = next_flavor_after(choice.best.mode != FitMode::no_fit, last_tried, team_def.quotas.size());
  if (from > 0 && !choice.tried) {
    // A scan resumed past the task's own instance type: the flavors left do not match it.
    resumed_past_requested(out);
    return;
  }
  // Reads are kept for a renewal only when one flavor was tried, and not a pinned one (the
  // answer renewed is the cache's, of the task's whole list of flavors).
  if (own_reads_flavors_ != 1 || pinned >= 0) own_reads_.flavor = -1;
  const GranularMode best = choice.best;
  FlavorResult best_result = choice.best_result;
  if (choice.chosen >= 0) out.flavor = choice.chosen;
  out.mode = best;
  if (best.mode != FitMode::no_fit) out.mode.mode = best_result.worst;
  out.borrowing = best_result.borrowing;
  if (out.mode.mode == FitMode::fit) {
    own_determined_ = false;
    out.reasons.clear();
    return;
  }
  if (best.mode == FitMode::no_fit) {
    out.flavor = -1;
    out.borrowing = 0;
    best_result = choice.least_severe_no_fit;
    out.no_fit_class = best_result.no_fit_class;
  }
  out.needs_preemption = best_result.needs_preemption;
  out.short_of = best_result.short_of;
  out.short_mask = best_result.short_mask;
  if (best.mode == FitMode::no_fit && out.no_fit_class == NoFitClass::exceeds_max_quota) {
    out.maximum = best_result.maximum;
    out.maximum_mask = best_result.maximum_mask;
  }
}

// assignFlavors for a task of several pod sets (docs/semantics-decisions.md "Pod sets"): each pod
// set in order gets a flavor of its own as a task would, its request counted on top of what the
// earlier pod sets were assigned in the same flavor; the first pod set that gets none ends the
// assignment (no fit). The task's mode is the worst of its pod sets', its borrowing the most;
// reasons are kept for the pod sets that do not simply fit, tagged with their pod set.
void FlavorAssigner::assign_pinned(uint32_t task_index, Assignment& out, const Assignment& nominated) {
  if (nominated.pod_set_count == 0 && nominated.group_count == 0) {
    assign(task_index, out, nullptr, nominated.flavor);
    return;
  }
  const Assignment pinned = nominated;  // `out` may be `nominated`
  out.clear();
  simulated_count_ = 0;
  own_determined_ = false;
  flavor_local_ = false;
  if (pinned.group_count > 0) {
    assign_groups(task_index, out, nullptr, &pinned);
    return;
  }
  assign_pod_sets(task_index, out, nullptr, &pinned);
}

void FlavorAssigner::assign_pod_sets(uint32_t task_index, Assignment& out, AssignmentTrace* trace,
                                     const Assignment* pinned) {
  const Task& task = context_.tasks[task_index];
  const auto team = static_cast<uint32_t>(task.team);
  const ir::Team& team_def = context_.module.teams[team];
  SlotTotals<kMaxPodSets> totals;
  const auto tag = [&out](size_t from, size_t pod_set) {
    for (size_t k = from; k < out.reasons.size(); ++k) out.reasons[k].pod_set = static_cast<uint32_t>(pod_set);
  };
  for (size_t i = 0; i < task.pod_sets.size(); ++i) {
    const PodSetRequest& pod_set = task.pod_sets[i];
    const size_t first_reason = out.reasons.size();
    const bool named_and_held = pod_set.requested_flavor >= 0 &&
                                context_.quota.has_quota(team, static_cast<uint32_t>(pod_set.requested_flavor));
    if ((pod_set.requested_flavor >= 0 && !named_and_held) || team_def.quotas.empty()) {
      Task one;
      one.team = task.team;
      one.request = pod_set.request;
      no_flavor_of_team(one, out);
      tag(first_reason, i);
      out.flavor = -1;
      out.mode = {FitMode::no_fit, 0};
      return;
    }
    if (pod_set.unavailable_partition != nullptr) {
      out.no_matching_flavor = true;
      FlavorReason reason;
      reason.kind = FlavorReason::Kind::resource_unavailable;
      reason.unavailable_partition = pod_set.unavailable_partition;
      reason.pod_set = static_cast<uint32_t>(i);
      out.reasons.push_back(reason);
      out.flavor = -1;
      out.mode = {FitMode::no_fit, 0};
      return;
    }
    FlavorChoice choice;
    const size_t from = scan_from_ != nullptr ? (*scan_from_)[i] : 0;
    size_t position = 0, last_tried = 0;
    for (const ir::FlavorQuota& quota : team_def.quotas) {
      const size_t here = position++;
      if (here < from) continue;
      last_tried = here;
      if (pod_set.requested_flavor >= 0 && quota.flavor != static_cast<uint32_t>(pod_set.requested_flavor)) {
        out.reasons.push_back(mismatch(quota.flavor));
        continue;
      }
      if (pinned != nullptr && static_cast<int32_t>(quota.flavor) != pinned->pod_set_flavor[i]) continue;
      const FlavorResult result =
          try_flavor(task, task_index, quota.flavor, pod_set.request, &totals.assumed_in(quota.flavor), out);
      if (trace != nullptr) {
        trace->attempts.emplace_back(quota.flavor, result.mode);
        trace->pod_sets.push_back(static_cast<uint32_t>(i));
      }
      if (choice.consider(result, quota.flavor, team_def)) break;
    }
    const GranularMode best = choice.best;
    const FlavorResult& best_result = choice.best_result;
    const int32_t chosen = choice.chosen;
    out.next_flavor[i] = next_flavor_after(best.mode != FitMode::no_fit, last_tried, team_def.quotas.size());
    if (from > 0 && !choice.tried) {
      resumed_past_requested(out);
      tag(first_reason, i);
      return;
    }
    tag(first_reason, i);
    if (best.mode == FitMode::no_fit) {
      out.flavor = -1;
      out.mode = {FitMode::no_fit, best.borrow == 255 ? uint8_t{0} : best.borrow};
      out.borrowing = 0;
      choice.report_no_fit(out);
      out.pod_set_count = 0;
      return;
    }
    if (best_result.worst == FitMode::fit) out.reasons.resize(first_reason);  // a pod set that fits has no status
    totals.record(out, i, chosen, best_result, pod_set.request);
  }
  out.pod_set_count = static_cast<uint32_t>(task.pod_sets.size());
  out.flavor = out.pod_set_flavor[0];
  totals.finish(out);
}

// assignFlavors with several resource groups (docs/semantics-decisions.md "Resource groups"): for
// each pod set (a task without pod sets is one), each group its request touches gets a flavor of
// its own, tried over the group's flavors in order with the team's fungibility, the request's
// covered columns counted on top of what earlier pod sets were assigned in the same flavor. A
// requested column no group covers, or a group (or pod set) that gets no flavor, ends the
// assignment (no fit). The task's mode is the worst of its slots', its borrowing the most. A
// task's (or pod set's) instance type pins the group that lists it; the other groups choose
// freely. Never the back ends' fused fit: every slot passes `assumed`.
void FlavorAssigner::assign_groups(uint32_t task_index, Assignment& out, AssignmentTrace* trace,
                                   const Assignment* pinned) {
  const Task& task = context_.tasks[task_index];
  const auto team = static_cast<uint32_t>(task.team);
  const ir::Team& team_def = context_.module.teams[team];
  const size_t groups = team_def.groups.size();
  const size_t pod_set_count = std::max<size_t>(1, task.pod_sets.size());
  const bool tagged = !task.pod_sets.empty();  // reasons name the pod set only when there are several
  SlotTotals<kMaxSlots> totals;
  const auto tag = [&out, tagged](size_t from, size_t pod_set) {
    if (!tagged) return;
    for (size_t k = from; k < out.reasons.size(); ++k) out.reasons[k].pod_set = static_cast<uint32_t>(pod_set);
  };
  const auto no_fit = [&out] {
    out.flavor = -1;
    out.mode = {FitMode::no_fit, 0};
    out.borrowing = 0;
    out.pod_set_count = 0;
    out.group_count = 0;
  };
  for (size_t p = 0; p < pod_set_count; ++p) {
    const Resources& request = tagged ? task.pod_sets[p].request : task.request;
    const int32_t requested = tagged ? task.pod_sets[p].requested_flavor : task.requested_flavor;
    const std::string* unavailable = tagged ? task.pod_sets[p].unavailable_partition : task.unavailable_partition;
    const size_t first_reason = out.reasons.size();
    // The group its instance type pins: one that lists it, else no flavor of the team matches.
    size_t pinned_group = groups;
    for (size_t g = 0; requested >= 0 && g < groups; ++g) {
      const std::vector<uint32_t>& flavors = team_def.groups[g].flavors;
      if (std::find(flavors.begin(), flavors.end(), static_cast<uint32_t>(requested)) != flavors.end()) pinned_group = g;
    }
    if (requested >= 0 && pinned_group == groups) {
      Task one;
      one.team = task.team;
      one.request = request;
      no_flavor_of_team(one, out);
      tag(first_reason, p);
      no_fit();
      return;
    }
    if (unavailable != nullptr) {  // a profile no flavor of any team has
      out.no_matching_flavor = true;
      FlavorReason reason;
      reason.kind = FlavorReason::Kind::resource_unavailable;
      reason.unavailable_partition = unavailable;
      reason.pod_set = tagged ? static_cast<uint32_t>(p) : 0;
      out.reasons.push_back(reason);
      no_fit();
      return;
    }
    // A requested resource no group covers: Kueue's "resource ... unavailable in ClusterQueue".
    uint32_t covered = 0;
    for (const ir::ResourceGroup& group : team_def.groups) covered |= group.covers;
    for (ir::Resource r : context_.quota.charged()) {
      if (request[ir::index(r)] == 0 || (covered >> ir::index(r) & 1u) != 0) continue;
      FlavorReason reason;
      reason.kind = FlavorReason::Kind::resource_unavailable;
      reason.resource = r;
      out.reasons.push_back(reason);
    }
    if (out.reasons.size() > first_reason) {
      out.no_matching_flavor = true;
      tag(first_reason, p);
      no_fit();
      return;
    }
    for (size_t g = 0; g < groups; ++g) {
      const size_t slot = p * groups + g;
      const ir::ResourceGroup& group = team_def.groups[g];
      const Resources slot_amounts = slot_request(task, team_def, slot);
      out.pod_set_flavor[slot] = -1;
      out.pod_set_needs[slot] = 0;
      bool asks = false;
      for (ir::Resource r : context_.quota.charged()) asks = asks || slot_amounts[ir::index(r)] > 0;
      if (!asks) continue;
      const size_t slot_first_reason = out.reasons.size();
      FlavorChoice choice;
      const size_t from = scan_from_ != nullptr ? (*scan_from_)[slot] : 0;
      size_t position = 0, last_tried = 0;
      for (uint32_t flavor : group.flavors) {
        const size_t here = position++;
        if (here < from) continue;
        last_tried = here;
        if (g == pinned_group && flavor != static_cast<uint32_t>(requested)) {
          out.reasons.push_back(mismatch(flavor));
          continue;
        }
        if (pinned != nullptr && static_cast<int32_t>(flavor) != pinned->pod_set_flavor[slot]) continue;
        const FlavorResult result = try_flavor(task, task_index, flavor, slot_amounts, &totals.assumed_in(flavor), out);
        if (trace != nullptr) {
          trace->attempts.emplace_back(flavor, result.mode);
          trace->slots.push_back(static_cast<uint32_t>(slot));
        }
        if (choice.consider(result, flavor, team_def)) break;
      }
      const GranularMode best = choice.best;
      const FlavorResult& best_result = choice.best_result;
      const int32_t chosen = choice.chosen;
      out.next_flavor[slot] = next_flavor_after(best.mode != FitMode::no_fit, last_tried, group.flavors.size());
      // A group that gets no flavor leaves its pod set with none (groupFlavors = nil): no progress.
      const auto forget_pod_set = [&out, p, groups] {
        for (size_t k = 0; k < groups; ++k) out.next_flavor[p * groups + k] = 0;
      };
      if (from > 0 && !choice.tried) {
        forget_pod_set();
        // The failing group's status (its mismatches) replaces the pod set's.
        out.reasons.erase(out.reasons.begin() + static_cast<std::ptrdiff_t>(first_reason),
                          out.reasons.begin() + static_cast<std::ptrdiff_t>(slot_first_reason));
        resumed_past_requested(out);
        tag(first_reason, p);
        return;
      }
      if (best.mode == FitMode::no_fit) {
        forget_pod_set();
        // Kueue replaces the pod set's status with the failing group's (groupStatus = *status).
        out.reasons.erase(out.reasons.begin() + static_cast<std::ptrdiff_t>(first_reason),
                          out.reasons.begin() + static_cast<std::ptrdiff_t>(slot_first_reason));
        tag(first_reason, p);
        no_fit();
        out.mode.borrow = best.borrow == 255 ? uint8_t{0} : best.borrow;
        choice.report_no_fit(out);
        return;
      }
      if (best_result.worst == FitMode::fit) out.reasons.resize(slot_first_reason);  // a group that fits has no status
      totals.record(out, slot, chosen, best_result, slot_amounts);
    }
    tag(first_reason, p);
  }
  out.pod_set_count = static_cast<uint32_t>(pod_set_count * groups);
  out.group_count = static_cast<uint32_t>(groups);
  out.flavor = -1;
  for (size_t s = 0; s < out.pod_set_count && out.flavor < 0; ++s) out.flavor = out.pod_set_flavor[s];
  if (out.flavor < 0) out.flavor = idle_flavor(task, team_def);  // it asks nothing
  totals.finish(out);
}

}  // namespace gov::engine
