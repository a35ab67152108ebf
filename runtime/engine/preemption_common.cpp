#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "compiler/support/assert.hpp"
#include "runtime/engine/preemption_internal.hpp"

namespace gov::engine {

void find_targets(const SearchContext& context, const PreemptionRequest& request,
                  std::vector<Target>& out, SearchTrace* trace, SearchReads* reads) {
  out.clear();
  SearchReads ignored;
  SearchReads& read = reads != nullptr ? *reads : ignored;
  read = {};
  if (context.shortcuts && settled_without_targets(context, request, read)) return;
  search_targets(context, request, out, trace);
}

namespace {

/// The TeamsGoneMemo entry of a one-part request in a flat cohort, between cycles: found, or
/// computed (the teams with candidates, and what they leave available with `own_held` of the own
/// team's) and stored.
TeamsGoneMemo::Entry& teams_gone(const SearchContext& context, const PreemptionRequest& request,
                                 const Resources& own_held) {
  TeamsGoneMemo& memo = context.between_cycles->teams_gone;
  const TeamsGoneMemo::Key key{context.tasks.state_serial(), preemption::candidate_choice(context, request)};
  if (TeamsGoneMemo::Entry* found = memo.find(key)) return *found;
  thread_local TeamsGoneMemo::Entry fresh;  // reused: its list does not allocate once warm
  fresh.key = key;
  fresh.has_quota = false;
  fresh.available = {};
  preemption::teams_with_candidates(context, request, fresh.teams);  // clears the list first
  if (!fresh.teams.empty()) preemption::fits_without_teams(context, request, fresh.teams, own_held, &fresh);
  return memo.store(fresh);
}

}  // namespace

// Most searches of parked heads are hopeless; a team-level bound settles them in O(teams).
bool settled_without_targets(const SearchContext& context, const PreemptionRequest& request, SearchReads& read) {
  read = {};
  Resources own_held{};
  if (preemption::over_own_limits(context, request, own_held)) {
    read = {.own_settled = true, .flavor_local = true};
    return true;
  }
  const bool fair_flat = context.module.settings.fair_sharing && !context.quota.tree();
  // Between cycles, a one-part request in a flat cohort reads the teams and what they leave
  // from the memo: own_held, like they, is a function of its key (own_candidates_hold).
  if (context.between_cycles != nullptr && request.part_count == 1 && !context.quota.tree()) {
    TeamsGoneMemo::Entry& entry = teams_gone(context, request, own_held);
    const Resources& amounts = request.first().request;
    if (entry.teams.empty() || !preemption::fits_in(context, entry, amounts)) {
      read.flavor_local = true;
      return true;
    }
    if (!fair_flat) return false;
    // The bound's answer is a function of the entry's key and the amounts (own_held is too).
    if (const std::optional<bool> known = entry.hopeless.find(amounts)) {
      GOV_ASSERT(*known == preemption::fair_hopeless_by_shares(context, request, entry.teams, own_held),
                 "the share bound is monotone in the requested amounts");
      return *known;
    }
    const bool hopeless = preemption::fair_hopeless_by_shares(context, request, entry.teams, own_held);
    entry.hopeless.add(amounts, hopeless);
    return hopeless;
  }
  thread_local std::vector<uint32_t> teams;  // reused: no allocation once warm
  preemption::teams_with_candidates(context, request, teams);
  if (teams.empty() || !preemption::fits_without_teams(context, request, teams, own_held)) {
    read.flavor_local = true;
    return true;
  }
  // Before the fair-sharing search lists the candidates of every team (a cursor each).
  return fair_flat && preemption::fair_hopeless_by_shares(context, request, teams, own_held);
}

bool over_own_limits(const SearchContext& context, const PreemptionRequest& request) {
  Resources own_held{};
  return preemption::over_own_limits(context, request, own_held);
}

void search_targets(const SearchContext& context, const PreemptionRequest& request, std::vector<Target>& out,
                    SearchTrace* trace) {
  out.clear();
  if (context.module.settings.fair_sharing) {
    preemption::fair_sharing_targets(context, request, out, trace);
  } else {
    preemption::classical_targets(context, request, out, trace);
  }
}

namespace preemption {

bool policy_allows(Policy policy, const Task& preemptor, const Task& candidate) {
  return ir::policy_allows(policy, preemption_pair(preemptor, candidate));
}

CandidateCursor::CandidateCursor(const SearchContext& context, const RequestPart& part,
                                 const Task& preemptor, uint32_t team, Policy policy)
    : context_(&context),
      preemptor_(&preemptor),
      list_(&context.tasks.admitted(team, part.flavor)),
      flavor_(part.flavor),
      needs_(part.needs),
      policy_(policy),
      team_(team) {
  // The policy the predicate applies to this pair of teams (ir::may_preempt), which the cursor's
  // `policy` should be, read again so that the memo never rests on the caller's choice.
  const ir::Team& own = context.module.teams[static_cast<size_t>(preemptor.team)];
  const Policy applied = static_cast<int32_t>(team) == preemptor.team ? within_team_policy(own) : reclaim_policy(own);
  by_priority_ = applied != Policy::lower_or_newer_equal_priority;
  // An inactive team's admitted tasks are never candidates: Kueue leaves a stopped ClusterQueue
  // out of its scheduling snapshot (skipInactiveCQReason), while its quota and usage still count
  // in the cohort (a Kueue auditor's finding, session 41).
  if (policy_ == Policy::never || !context.module.teams[team].active) position_ = list_->size();
  skip_ineligible();
}

void CandidateCursor::advance() {
  ++position_;
  skip_ineligible();
}

void CandidateCursor::skip_ineligible() {
  for (; position_ < list_->size(); ++position_) {
    const Task& candidate = context_->tasks[(*list_)[position_]];
    // Sorted by priority: past the preemptor's priority nothing further is allowed.
    const bool priority_bounded =
        policy_ == Policy::lower_priority || policy_ == Policy::lower_or_newer_equal_priority;
    if (priority_bounded && candidate.priority > preemptor_->priority) {
      position_ = list_->size();
      return;
    }
    // Three pure tests, the cheapest first: the call into the policy's code comes last.
    if (candidate.preempted_at == context_->now) continue;
    const Resources& held = candidate.charge.empty() ? candidate.request : *charged_in(candidate, flavor_);
    bool uses_contested = false;
    for (ResourceMask m = needs_ & context_->quota.charged_mask(); m != 0 && !uses_contested;
         m &= static_cast<ResourceMask>(m - 1)) {
      uses_contested = held[static_cast<size_t>(std::countr_zero(m))] > 0;
    }
    if (!uses_contested) continue;
    // The cursor's policy is the one may_preempt picks for this team (within-team for the
    // preemptor's own, reclaim for others); it only bounds the walk.
    if (!by_priority_) {
      if (context_->evaluator.may_preempt(preemption_pair(*preemptor_, candidate))) return;
      continue;
    }
    if (!asked_ || asked_priority_ != candidate.priority) {
      asked_ = true;
      asked_priority_ = candidate.priority;
      allowed_ = context_->evaluator.may_preempt(preemption_pair(*preemptor_, candidate));
    }
    if (allowed_) return;
  }
}

bool candidate_before(const TaskStore& tasks, uint32_t preemptor_team, uint32_t a, uint32_t b) {
  const Task& x = tasks[a];
  const Task& y = tasks[b];
  const bool x_own = x.team == static_cast<int32_t>(preemptor_team);
  const bool y_own = y.team == static_cast<int32_t>(preemptor_team);
  if (x_own != y_own) return !x_own;
  return candidate_order_less(x, y);
}

bool request_fits(const SearchContext& context, const PreemptionRequest& request,
                  bool allow_borrowing) {
  for (const RequestPart& part : request.all()) {
    const ir::FitResult fit =
        context.quota.fit(context.evaluator, request.team, part.flavor, part.request);
    if (!fit.fits_all() || (!allow_borrowing && fit.borrows != 0) ||
        !context.quota.partitions_fit(request.team, part.flavor, part.request, allow_borrowing))
      return false;
  }
  return true;
}

bool borrowing_in_any(const SearchContext& context, uint32_t team, const PreemptionRequest& request) {
  for (const RequestPart& part : request.all()) {
    if (context.quota.borrowing_in(team, part.flavor, part.needs)) return true;
  }
  return false;
}

namespace {

/// request_fits's answer from what is available per charged resource: a quota there, and every
/// requested amount at most what is available (ir::fit, partitions_fit).
bool fits_available(const QuotaState& quota, bool has_quota, const Resources& available, const Resources& request) {
  if (!has_quota) return false;
  for (ir::Resource r : quota.charged()) {
    const Amount amount = request[ir::index(r)];
    if (amount != 0 && amount > available[ir::index(r)]) return false;
  }
  return true;
}

/// request_fits of a request of one part in a flat cohort, without changing the quota, as if
/// `for_each_gone(take)` had `subtract`ed what it passes to take(team, amounts) (at most once per
/// team) from those teams' usage in the request's type: what QuotaState::available would give
/// then is ir::available of the own team's usage less its part and of the cohort's usage less
/// what each subtraction would take off it (the drop of the team's spill over its local quota).
/// fits_available then answers as request_fits does. `available` receives the amounts per
/// charged resource.
template <typename ForEachGone>
bool fits_flat_without(const SearchContext& context, const PreemptionRequest& request, ForEachGone&& for_each_gone,
                       Resources& available) {
  const QuotaState& quota = context.quota;
  const uint32_t flavor = request.first().flavor;
  Resources own_usage = quota.usage(request.team, flavor);
  Resources cohort_usage{};
  for (ir::Resource r : quota.charged()) cohort_usage[ir::index(r)] = quota.cohort_usage(flavor, r);
  for_each_gone([&](uint32_t team, const Resources& gone) {
    const Resources& usage = quota.usage(team, flavor);
    const ir::QuotaCell& cell = quota.table().cell(team, flavor);
    for (ir::Resource r : quota.charged()) {
      const size_t i = ir::index(r);
      if (gone[i] == 0) continue;
      const Amount spill_before = std::max<Amount>(0, usage[i] - cell.local[i]);
      const Amount spill_after = std::max<Amount>(0, usage[i] - gone[i] - cell.local[i]);
      cohort_usage[i] += spill_after - spill_before;
      if (team == request.team) own_usage[i] -= gone[i];
    }
  });
  const ir::QuotaCell& own = quota.table().cell(request.team, flavor);
  const Resources& cohort_quota = quota.table().cohort_quota[flavor];
  for (ir::Resource r : quota.charged()) {
    const size_t i = ir::index(r);
    available[i] = ir::available(own, cohort_quota, r, own_usage[i], cohort_usage[i]);
  }
  return fits_available(quota, own.present, available, request.first().request);
}

}  // namespace

Resources& HeldSums::find_or_add(uint32_t team, uint32_t flavor) {
  auto it = std::find_if(held_.rbegin(), held_.rend(),
                         [&](const Held& h) { return h.team == team && h.flavor == flavor; });
  return it != held_.rend() ? it->amounts : held_.emplace_back(Held{team, flavor, {}}).amounts;
}

bool HeldSums::request_fits_without(const SearchContext& context, const PreemptionRequest& request) const {
  if (request.part_count == 1 && !context.quota.tree()) {
    // In a flat cohort only the request's type counts: read off the usage (fits_flat_without).
    const uint32_t flavor = request.first().flavor;
    const auto each_sum = [&](auto&& take) {
      for (const Held& h : held_) {
        if (h.flavor == flavor) take(h.team, h.amounts);
      }
    };
    Resources available{};
    const bool fits = fits_flat_without(context, request, each_sum, available);
    GOV_ASSERT(fits == request_fits_without_by_change(context, request),
               "the flat cohort's fit without the sums answers as the quota changed and put back");
    return fits;
  }
  return request_fits_without_by_change(context, request);
}

bool HeldSums::request_fits_without_by_change(const SearchContext& context, const PreemptionRequest& request) const {
  for (const Held& h : held_) context.quota.subtract(h.team, h.flavor, h.amounts);
  const bool fits = request_fits(context, request, /*allow_borrowing=*/true);
  for (const Held& h : held_) context.quota.add(h.team, h.flavor, h.amounts);
  return fits;
}

// This bound runs for every search that the team-level bounds did not settle.
bool fits_without_all(const SearchContext& context, const PreemptionRequest& request,
                      const std::vector<uint32_t>& candidates) {
  thread_local HeldSums held;  // reused: no allocation in steady state
  held.clear();
  for (uint32_t task : candidates) held.add(context.tasks, task);
  return held.request_fits_without(context, request);
}

}  // namespace preemption

const Resources* OwnHeldMemo::find(const Key& key) const {
  const Slot& slot = slots_[slot_of(key)];
  return slot.used && slot.key == key ? &slot.held : nullptr;
}

void OwnHeldMemo::store(const Key& key, const Resources& held) {
  Slot& slot = slots_[slot_of(key)];
  slot.used = true;
  slot.key = key;
  slot.held = held;
}

TeamsGoneMemo::Entry* TeamsGoneMemo::find(const Key& key) {
  Entry& slot = slots_[slot_of(key)];
  return slot.used && slot.key == key ? &slot : nullptr;
}

TeamsGoneMemo::Entry& TeamsGoneMemo::store(const Entry& entry) {
  Entry& slot = slots_[slot_of(entry.key)];
  slot.used = true;
  slot.key = entry.key;
  slot.teams = entry.teams;  // reuses the slot's buffer
  slot.has_quota = entry.has_quota;
  slot.available = entry.available;
  slot.hopeless.clear();
  return slot;
}

namespace {

/// Whether `a` asks for at most what `b` does, in every resource.
bool at_most(const Resources& a, const Resources& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<bool> TeamsGoneMemo::HopelessAnswers::find(const Resources& request) const {
  for (uint8_t i = 0; i < hopeless_.count; ++i) {
    if (at_most(hopeless_.requests[i], request)) return true;
  }
  for (uint8_t i = 0; i < hopeful_.count; ++i) {
    if (at_most(request, hopeful_.requests[i])) return false;
  }
  return std::nullopt;
}

void TeamsGoneMemo::HopelessAnswers::add(const Resources& request, bool hopeless) {
  Kept& kept = hopeless ? hopeless_ : hopeful_;
  kept.requests[kept.next] = request;
  kept.next = static_cast<uint8_t>((kept.next + 1) % kKept);
  if (kept.count < kKept) ++kept.count;
}

size_t TeamsGoneMemo::slot_of(const Key& key) {
  const uint64_t h = key.choice.hash() ^ (key.serial * 0xC2B2AE3D27D4EB4Full);
  static_assert(kSlots == 64, "the slot is the product's top 6 bits");
  return static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> 58);
}

size_t OwnHeldMemo::slot_of(const Key& key) {
  static_assert(kSlots == 64, "the slot is the product's top 6 bits");
  return static_cast<size_t>((key.choice.hash() * 0x9E3779B97F4A7C15ull) >> 58);
}

uint64_t CandidateChoice::hash() const {
  // The fields that tell the searches of one state apart, shifted apart (HashMix's five rounds
  // cost 4% of a simulation here); the callers multiply.
  return (uint64_t{team} << 40) ^ (uint64_t{flavor} << 24) ^ static_cast<uint64_t>(static_cast<uint32_t>(priority)) ^
         (static_cast<uint64_t>(submitted_at) << 8) ^ (uint64_t{needs} << 56);
}

namespace preemption {

namespace {

/// own_candidates_hold for the own team of a one-part request, through the context's memo.
Resources own_held_of(const SearchContext& context, const PreemptionRequest& request, const RequestPart& part,
                      const ir::Team& own) {
  const Task& preemptor = context.tasks[request.preemptor];
  const Policy policy = within_team_policy(own);
  if (context.own_held_memo == nullptr) return own_candidates_hold(context, part, preemptor, policy);
  const OwnHeldMemo::Key key{context.tasks.team_version(request.team), context.tasks.preemptions(),
                             candidate_choice(context, request)};
  if (const Resources* held = context.own_held_memo->find(key)) return *held;
  const Resources held = own_candidates_hold(context, part, preemptor, policy);
  context.own_held_memo->store(key, held);
  return held;
}

}  // namespace

bool over_own_limits(const SearchContext& context, const PreemptionRequest& request, Resources& own_held) {
  own_held = {};
  if (request.part_count != 1) return false;
  const RequestPart& part = request.all()[0];
  const ir::Team& own = context.module.teams[request.team];
  // The own team is a candidate team exactly when its policy may preempt (teams_with_candidates).
  if (own.within_team != ir::WithinTeam::never) own_held = own_held_of(context, request, part, own);
  const Resources& usage = context.quota.usage(request.team, part.flavor);
  for (ir::Resource r : context.quota.charged()) {
    const size_t i = ir::index(r);
    if (part.request[i] == 0) continue;
    const Amount bound = context.quota.own_limits_available(request.team, part.flavor, r, usage[i] - own_held[i]);
    if (bound != ir::kUnlimited && part.request[i] > bound) return true;
  }
  return false;
}

CandidateChoice candidate_choice(const SearchContext& context, const PreemptionRequest& request) {
  const Task& preemptor = context.tasks[request.preemptor];
  const RequestPart& part = request.first();
  // Only this within-team policy reads submission times (ir::policy_allows).
  const bool submission_matters =
      context.module.teams[request.team].within_team == ir::WithinTeam::lower_or_newer_equal_priority;
  return {context.now,
          submission_matters ? preemptor.submitted_at : 0,
          request.team,
          part.flavor,
          preemptor.priority,
          static_cast<ResourceMask>(part.needs & context.quota.charged_mask())};
}

bool fits_in(const SearchContext& context, const TeamsGoneMemo::Entry& entry, const Resources& request) {
  return fits_available(context.quota, entry.has_quota, entry.available, request);
}

namespace {

/// fits_without_teams in a flat cohort for a request of one part: the own team's candidates'
/// holdings and every other listed team's usage gone.
bool fits_without_teams_flat(const SearchContext& context, const PreemptionRequest& request,
                             std::span<const uint32_t> teams, const Resources& own_held, Resources& available) {
  const uint32_t flavor = request.first().flavor;
  const auto each_team = [&](auto&& take) {
    for (uint32_t team : teams) take(team, team == request.team ? own_held : context.quota.usage(team, flavor));
  };
  return fits_flat_without(context, request, each_team, available);
}

}  // namespace

bool fits_without_teams(const SearchContext& context, const PreemptionRequest& request,
                        std::span<const uint32_t> teams, const Resources& own_held,
                        TeamsGoneMemo::Entry* record) {
  if (request.part_count == 1 && !context.quota.tree()) {
    Resources available{};
    const bool fits = fits_without_teams_flat(context, request, teams, own_held, available);
    GOV_ASSERT(fits == fits_without_teams_by_change(context, request, teams, own_held, nullptr),
               "the flat cohort's bound answers as the quota changed and put back");
    if (record != nullptr) {
      record->has_quota = context.quota.has_quota(request.team, request.first().flavor);
      record->available = available;
    }
    return fits;
  }
  return fits_without_teams_by_change(context, request, teams, own_held, record);
}

bool fits_without_teams_by_change(const SearchContext& context, const PreemptionRequest& request,
                                  std::span<const uint32_t> teams, const Resources& own_held,
                                  TeamsGoneMemo::Entry* record) {
  thread_local std::vector<Resources> held;  // reused: no allocation once warm
  held.clear();
  for (const RequestPart& part : request.all()) {
    for (uint32_t team : teams) {
      if (team == request.team && request.part_count == 1) {
        held.push_back(own_held);
      } else {
        held.push_back(context.quota.usage(team, part.flavor));
      }
      context.quota.subtract(team, part.flavor, held.back());
    }
  }
  const bool fits = request_fits(context, request, /*allow_borrowing=*/true);
  if (record != nullptr) {
    const uint32_t flavor = request.first().flavor;
    record->has_quota = context.quota.has_quota(request.team, flavor);
    for (ir::Resource r : context.quota.charged())
      record->available[ir::index(r)] = context.quota.available(request.team, flavor, r);
    GOV_ASSERT(fits == fits_in(context, *record, request.first().request),
               "the memo's fit test answers as request_fits");
  }
  size_t i = 0;
  for (const RequestPart& part : request.all()) {
    for (uint32_t team : teams) context.quota.add(team, part.flavor, held[i++]);
  }
  return fits;
}

Resources own_candidates_hold(const SearchContext& context, const RequestPart& part,
                              const Task& preemptor, Policy policy) {
  Resources sum{};
  const auto team = static_cast<uint32_t>(preemptor.team);
  for (CandidateCursor cursor(context, part, preemptor, team, policy); !cursor.done(); cursor.advance()) {
    const Task& candidate = context.tasks[cursor.task()];
    const Resources& holds = candidate.charge.empty() ? candidate.request : *charged_in(candidate, part.flavor);
    // No overflow: the sum stays at or below the team's usage there, which holds every term.
    for (size_t r = 0; r < sum.size(); ++r) sum[r] += holds[r];
  }
  return sum;
}

void teams_with_candidates(const SearchContext& context, const PreemptionRequest& request,
                           std::vector<uint32_t>& out) {
  out.clear();
  const ir::Team& team = context.module.teams[request.team];
  const bool reclaims = team.reclaim_within_cohort != ir::ReclaimWithinCohort::never;
  for (const RequestPart& part : request.all()) {
    for (uint32_t t : context.quota.quota_teams(part.flavor)) {
      if (!context.module.teams[t].active) continue;  // no candidates (CandidateCursor)
      if (request.part_count > 1 && std::find(out.begin(), out.end(), t) != out.end()) continue;
      if (t == request.team
              ? team.within_team != ir::WithinTeam::never
              : reclaims && borrowing_in_any(context, t, request)) {
        out.push_back(t);
      }
    }
  }
}

void remove_from_quota(const SearchContext& context, uint32_t task) {
  const Task& t = context.tasks[task];
  GOV_ASSERT(t.state == TaskState::admitted, "only admitted tasks hold quota");
  for_each_charge(t, [&](uint32_t flavor, const Resources& amounts) {
    context.quota.subtract(static_cast<uint32_t>(t.team), flavor, amounts);
  });
}

void restore_to_quota(const SearchContext& context, uint32_t task) {
  const Task& t = context.tasks[task];
  for_each_charge(t, [&](uint32_t flavor, const Resources& amounts) {
    context.quota.add(static_cast<uint32_t>(t.team), flavor, amounts);
  });
}

namespace {

// Self-check of fill-back's contract (§5.4), with the targets removed from `quota`: the request
// fits, and giving back any one target makes it not fit. Available quota only shrinks as tasks
// come back, so a target fill-back kept could not be spared at the end either: the victims are a
// minimal set. Leaves `quota` as it found it.
void self_check_minimal(const SearchContext& context, const PreemptionRequest& request, bool allow_borrowing,
                        const std::vector<Target>& targets) {
  std::vector<std::string>* failures = context.self_check_failures;
  if (failures == nullptr || targets.empty()) return;
  const Task& preemptor = context.tasks[request.preemptor];
  if (!request_fits(context, request, allow_borrowing)) {
    failures->push_back(
        fmt::format("the victims of `{}` do not make room for it at time {}", preemptor.id, context.now));
    return;
  }
  for (const Target& target : targets) {
    restore_to_quota(context, target.task);
    const bool fits = request_fits(context, request, allow_borrowing);
    remove_from_quota(context, target.task);
    if (fits) {
      failures->push_back(fmt::format("`{}` preempted for `{}` at time {}, which fits without evicting it",
                                      context.tasks[target.task].id, preemptor.id, context.now));
    }
  }
}

}  // namespace

void fill_back(const SearchContext& context, const PreemptionRequest& request, bool allow_borrowing,
               std::vector<Target>& targets, SearchTrace* trace) {
  for (size_t i = targets.size() < 2 ? 0 : targets.size() - 1; i-- > 0;) {
    restore_to_quota(context, targets[i].task);
    if (request_fits(context, request, allow_borrowing)) {
      note(trace, targets[i].task, CandidateNote::Verdict::given_back);
      targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      remove_from_quota(context, targets[i].task);
    }
  }
  self_check_minimal(context, request, allow_borrowing, targets);
}

void note(SearchTrace* trace, uint32_t task, CandidateNote::Verdict verdict, double preemptor_share,
          double target_share) {
  if (trace == nullptr) return;
  trace->notes.push_back({task, verdict, preemptor_share, target_share});
}

void note_share_test(SearchTrace* trace, uint32_t task, ir::FairShareStrategy strategy, double preemptor_share,
                     double target_share) {
  if (trace == nullptr) return;
  trace->notes.push_back({task, CandidateNote::Verdict::share_test_failed, preemptor_share, target_share, strategy});
}

}  // namespace preemption
}  // namespace gov::engine
