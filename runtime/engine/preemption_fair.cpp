// Fair-sharing preemption (docs/kueue-reference.md §6.3, Kueue HEAD fairPreemptionStrategy) for a
// flat cohort: target teams by highest dominant resource share; the preemptor's own team without a
// share test; within-nominal reclaim without a share test; otherwise the configured strategies (by
// default S2-a LessThanOrEqualToFinalShare, then S2-b LessThanInitialShare on what S2-a kept; or
// either alone); all or nothing; fill-back.
#include <algorithm>
#include <optional>

#include "compiler/support/assert.hpp"
#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/preemption_internal.hpp"

namespace gov::engine::preemption {
namespace {

/// A team's share now (no incoming request, no candidate taken out).
Drs team_share(const SearchContext& context, uint32_t team) {
  return dominant_resource_share(context.quota, team, context.module.teams[team].fair_share_weight_micros);
}

/// team_share of a team whose usage no search has changed: through the context's memo when the
/// quota holds the admitted tasks' usage (SearchContext::between_cycles).
Drs unsimulated_team_share(const SearchContext& context, uint32_t team) {
  if (context.between_cycles == nullptr) return team_share(context, team);
  return context.between_cycles->shares.share(context.quota, context.module, team, context.tasks.team_version(team));
}

/// queueWithinNominalInResourcesNeedingPreemption for the preemptor's team, with the incoming
/// request already in the quota: it borrows in no contested resource of any part.
bool preemptor_within_nominal(const SearchContext& context, const PreemptionRequest& request) {
  for (const RequestPart& part : request.all()) {
    for (ir::Resource r : context.quota.charged()) {
      if (contains(part.needs, r) && context.quota.borrowing(request.team, part.flavor, r)) return false;
    }
  }
  return true;
}

/// A team that may yield victims, with its remaining candidates in candidate order: walked
/// lazily from its admitted tasks (first strategy), or kept from S2-a failures (second).
struct TargetTeam {
  uint32_t team = 0;
  std::optional<CandidateCursor> cursor;
  std::vector<uint32_t> kept;
  size_t next = 0;
  bool dropped = false;
  Drs share;  // cached until the team's usage changes
  bool share_valid = false;

  /// Back to a fresh target of `of`, keeping the buffer of `kept`.
  void reset(uint32_t of) {
    team = of;
    cursor.reset();
    kept.clear();
    next = 0;
    dropped = false;
    share = {};
    share_valid = false;
  }
  bool has_candidate() const { return cursor ? !cursor->done() : next < kept.size(); }
  uint32_t front() const { return cursor ? cursor->task() : kept[next]; }
  uint32_t pop() {
    if (!cursor) return kept[next++];
    const uint32_t task = cursor->task();
    cursor->advance();
    return task;
  }
};

/// The target teams of one search, in elements kept from earlier searches: clear() forgets them
/// without freeing their `kept` lists, which add() reuses (a cleared vector of TargetTeams would
/// free them, and every S2-a failure would allocate again).
class TargetList {
 public:
  void clear() { count_ = 0; }
  bool empty() const { return count_ == 0; }
  /// A fresh target of `team`, last in the list.
  TargetTeam& add(uint32_t team) {
    if (count_ == items_.size()) items_.emplace_back();
    TargetTeam& target = items_[count_++];
    target.reset(team);
    return target;
  }
  TargetTeam* begin() { return items_.data(); }
  TargetTeam* end() { return items_.data() + count_; }
  const TargetTeam* begin() const { return items_.data(); }
  const TargetTeam* end() const { return items_.data() + count_; }

 private:
  std::vector<TargetTeam> items_;
  size_t count_ = 0;
};

/// A search's lists, per thread and reused, so that a warm search does not allocate for them
/// (every parked head's nomination may run one). Searches do not nest: nothing a search calls
/// starts another (`in_use` checks it in debug builds).
struct SearchBuffers {
  TargetList teams;
  TargetList retry;
  HeldSums held;  // fits_without_candidates
  std::vector<uint32_t> changed_teams;  // teams whose usage the search has changed (take)
  bool in_use = false;
};

SearchBuffers& search_buffers() {
  thread_local SearchBuffers buffers;
  return buffers;
}

class FairSearch {
 public:
  FairSearch(const SearchContext& context, const PreemptionRequest& request, SearchTrace* trace)
      : context_(context),
        request_(request),
        trace_(trace),
        own_team_(request.team),
        buffers_(search_buffers()),
        teams_(buffers_.teams),
        retry_(buffers_.retry) {
    GOV_ASSERT(!buffers_.in_use, "fair-sharing searches do not nest");
    buffers_.in_use = true;
    teams_.clear();
    retry_.clear();
    buffers_.changed_teams.clear();
    const std::vector<ir::FairShareStrategy>& strategies =
        context.module.settings.fair_share_strategies;
    if (!strategies.empty()) first_ = strategies.front();
    second_ = strategies.size() > 1;
  }
  ~FairSearch() { buffers_.in_use = false; }
  FairSearch(const FairSearch&) = delete;
  FairSearch& operator=(const FairSearch&) = delete;

  void run(std::vector<Target>& out);

 private:
  void collect_candidates();
  void keep_all(uint32_t team, CandidateCursor cursor);
  Drs share(uint32_t team) const { return team_share(context_, team); }
  Drs share_without(uint32_t task) const;
  const Drs& share_of(TargetTeam& target);
  const Drs& preemptor_share();
  void usage_changed(uint32_t team);
  TargetTeam* pick_target(TargetList& teams);
  bool within_nominal() const { return preemptor_within_nominal(context_, request_); }
  bool take(uint32_t task, PreemptionKind kind, std::vector<Target>& out);
  bool fits_without_incoming();
  bool hopeless_by_shares();
  void add_incoming();     // the request into the preemptor's usage, in every flavor it asks of
  void remove_incoming();
  bool first_strategy(std::vector<Target>& out);
  bool second_strategy(std::vector<Target>& out);
  TargetTeam& retry_for(uint32_t team);
  /// fits_without_all over every candidate of every target team, summed as the cursors walk
  /// (no list of them is built).
  bool fits_without_candidates();

  const SearchContext& context_;
  const PreemptionRequest& request_;
  SearchTrace* trace_;
  uint32_t own_team_;
  SearchBuffers& buffers_;
  TargetList& teams_;
  TargetList& retry_;  // candidates that failed S2-a, per team
  Drs preemptor_share_;
  bool preemptor_share_valid_ = false;
  ir::FairShareStrategy first_ = ir::FairShareStrategy::less_than_or_equal_to_final_share;
  bool second_ = true;  // S2-b runs on the candidates S2-a kept
};

// A team other than the preemptor's that the search has not taken from holds what its admitted
// tasks hold, so its share is the one between cycles, read through the context's memo as
// fair_hopeless_by_shares reads it; the preemptor's team holds the incoming request, and a team
// taken from holds less.
const Drs& FairSearch::share_of(TargetTeam& target) {
  if (!target.share_valid) {
    const std::vector<uint32_t>& changed = buffers_.changed_teams;
    const bool as_admitted = target.team != own_team_ &&
                             std::find(changed.begin(), changed.end(), target.team) == changed.end();
    target.share = as_admitted ? unsimulated_team_share(context_, target.team) : share(target.team);
    GOV_ASSERT(target.share == share(target.team),
               "a team's share between cycles is its share in the search");
    target.share_valid = true;
  }
  return target.share;
}

// The preemptor's team with the incoming request (simulated in the quota state).
const Drs& FairSearch::preemptor_share() {
  if (!preemptor_share_valid_) {
    preemptor_share_ = share(own_team_);
    preemptor_share_valid_ = true;
  }
  return preemptor_share_;
}

// Shares are cached per team; a removal changes only its own team's share (flat cohort).
void FairSearch::usage_changed(uint32_t team) {
  std::vector<uint32_t>& changed = buffers_.changed_teams;
  if (std::find(changed.begin(), changed.end(), team) == changed.end()) changed.push_back(team);
  for (TargetList* list : {&teams_, &retry_}) {
    for (TargetTeam& target : *list) {
      if (target.team == team) target.share_valid = false;
    }
  }
  if (team == own_team_) preemptor_share_valid_ = false;
}

void FairSearch::collect_candidates() {
  const ir::Team& team = context_.module.teams[own_team_];
  const Task& preemptor = context_.tasks[request_.preemptor];
  for (const RequestPart& part : request_.all()) {
    for (uint32_t t : context_.quota.quota_teams(part.flavor)) {
      const bool own = t == own_team_;
      // §5.2 (same rules as classical): other teams only while over nominal in a contested
      // (flavor, resource) of the request, any of them (Kueue's cqIsBorrowing).
      if (!own && !borrowing_in_any(context_, t, request_)) continue;
      CandidateCursor cursor(context_, part, preemptor, t,
                             own ? within_team_policy(team) : reclaim_policy(team));
      if (cursor.done()) continue;
      if (request_.part_count > 1) {
        keep_all(t, cursor);
        continue;
      }
      teams_.add(t).cursor = cursor;
    }
  }
}

// A request of several flavors: a team's candidates in each flavor, merged into one list in
// candidate order, each task once (a task of several pod sets is listed in every flavor it holds).
void FairSearch::keep_all(uint32_t team, CandidateCursor cursor) {
  TargetTeam* it = std::find_if(teams_.begin(), teams_.end(), [team](const TargetTeam& t) { return t.team == team; });
  if (it == teams_.end()) it = &teams_.add(team);
  std::vector<uint32_t>& kept = it->kept;
  for (; !cursor.done(); cursor.advance()) {
    if (std::find(kept.begin(), kept.end(), cursor.task()) == kept.end()) kept.push_back(cursor.task());
  }
  std::sort(kept.begin(), kept.end(), [this](uint32_t a, uint32_t b) {
    return candidate_order_less(context_.tasks[a], context_.tasks[b]);
  });
}

// TargetClusterQueueOrdering: the team with the highest share among those with candidates;
// other teams that no longer borrow are dropped (the preemptor's own team only when it runs
// out). Ties: the first candidates in candidate order, then declaration order.
TargetTeam* FairSearch::pick_target(TargetList& teams) {
  TargetTeam* best = nullptr;
  Drs best_share;
  for (TargetTeam& target : teams) {
    if (target.dropped) continue;
    if (!target.has_candidate()) {
      target.dropped = true;
      continue;
    }
    const Drs& drs = share_of(target);
    if (target.team != own_team_ && !drs.borrowing) {
      target.dropped = true;
      continue;
    }
    if (best == nullptr) {
      best = &target;
      best_share = drs;
      continue;
    }
    const int order = compare_drs(drs, best_share);
    if (order > 0 || (order == 0 &&
                      candidate_before(context_.tasks, own_team_, target.front(), best->front()))) {
      best = &target;
      best_share = drs;
    }
  }
  return best;
}

void FairSearch::add_incoming() {
  for (const RequestPart& part : request_.all()) context_.quota.add(own_team_, part.flavor, part.request);
}

void FairSearch::remove_incoming() {
  for (const RequestPart& part : request_.all()) context_.quota.subtract(own_team_, part.flavor, part.request);
}

// The fit test runs without the simulated incoming usage (HEAD reverts it around each yield).
bool FairSearch::fits_without_incoming() {
  remove_incoming();
  const bool fits = request_fits(context_, request_, /*allow_borrowing=*/true);
  add_incoming();
  return fits;
}

// A task of one charge part (what its request holds in its flavor): read off the usage with the
// request taken away (dominant_resource_share's `extra`, usage − request − nominal, the same
// integers QuotaState::subtract leaves), not by changing the quota and changing it back, which
// the candidate walk did 1.4 M times on the 85% trace's first 100,000 events. A task of several
// parts takes the change; assertion builds compare the two for every task.
Drs FairSearch::share_without(uint32_t task) const {
  const Task& held = context_.tasks[task];
  const uint32_t team = static_cast<uint32_t>(held.team);
  const auto by_change = [&] {
    remove_from_quota(context_, task);
    const Drs without = share(team);
    restore_to_quota(context_, task);
    return without;
  };
  if (!held.charge.empty()) return by_change();
  Resources taken{};
  for (size_t i = 0; i < taken.size(); ++i) taken[i] = -held.request[i];
  const int64_t weight = context_.module.teams[team].fair_share_weight_micros;
  const Drs without = dominant_resource_share(context_.quota, team, weight,
                                              static_cast<uint32_t>(held.flavor), &taken);
  GOV_ASSERT(without == by_change(), "a candidate's share without it agrees with changing the quota");
  return without;
}

bool FairSearch::take(uint32_t task, PreemptionKind kind, std::vector<Target>& out) {
  remove_from_quota(context_, task);
  usage_changed(static_cast<uint32_t>(context_.tasks[task].team));
  out.push_back({task, kind, false});
  note(trace_, task, CandidateNote::Verdict::removed);
  return fits_without_incoming();
}

// The strategy tests of §6.3: S2-a `LessThanOrEqualToFinalShare` (preemptor's new share <= the
// target's share without the candidate), S2-b `LessThanInitialShare` (< the target's share now).
bool passes(ir::FairShareStrategy strategy, const Drs& preemptor_new, const Drs& target_share) {
  const int order = compare_drs(preemptor_new, target_share);
  return strategy == ir::FairShareStrategy::less_than_or_equal_to_final_share ? order <= 0
                                                                              : order < 0;
}

// iterateWithFirstFsStrategy, with the first configured strategy.
bool FairSearch::first_strategy(std::vector<Target>& out) {
  const bool preemptor_within_nominal = within_nominal();
  while (TargetTeam* target = pick_target(teams_)) {
    if (target->team == own_team_) {
      if (take(target->pop(), PreemptionKind::in_team, out)) return true;
      continue;
    }
    if (preemptor_within_nominal) {
      if (take(target->pop(), PreemptionKind::reclaim, out)) return true;
      continue;
    }
    const Drs preemptor_new = preemptor_share();
    const Drs target_old = share_of(*target);
    TargetTeam& retry = retry_for(target->team);
    if (preemptor_new.zero_weight_borrows() && !target_old.zero_weight_borrows()) {
      // No candidate of this team can pass S2-a; keep them all for S2-b.
      while (target->has_candidate()) retry.kept.push_back(target->pop());
      continue;
    }
    if (context_.shortcuts && trace_ == nullptr && compare_drs(preemptor_new, target_old) > 0) {
      // The team's share only falls as it loses candidates, so with the preemptor's above it
      // now, no candidate passes S2-a this round: each would be compared and kept, in this
      // order. The second strategy pops one candidate per team, its first kept, so only that one
      // is kept, and the team is done here. A trace records every comparison, and self-check
      // runs make them all.
      if (retry.kept.empty()) retry.kept.push_back(target->pop());
      target->dropped = true;
      continue;
    }
    const Resources* last_request = nullptr;  // candidates of the same shape give the same share
    Drs target_new;
    while (target->has_candidate()) {
      const uint32_t candidate = target->pop();
      // S2-a compares with the target's share after losing this candidate, S2-b with its share
      // before (the same for every candidate of the team).
      const Drs* compared = &target_old;
      if (first_ == ir::FairShareStrategy::less_than_or_equal_to_final_share) {
        const Task& held = context_.tasks[candidate];
        const Resources& request = held.request;
        if (!held.charge.empty() || last_request == nullptr || *last_request != request) {
          target_new = share_without(candidate);
          last_request = held.charge.empty() ? &request : nullptr;
        }
        compared = &target_new;
      }
      if (passes(first_, preemptor_new, *compared)) {
        if (take(candidate, PreemptionKind::fair_sharing, out)) return true;
        break;  // shares changed: choose the target team again
      }
      note_share_test(trace_, candidate, first_, preemptor_new.weighted(), compared->weighted());
      retry.kept.push_back(candidate);
    }
  }
  return false;
}

// The request fits with every candidate gone as soon as it fits with some of them gone:
// available quota only grows as tasks leave. So the sums are tested as they grow, after 1, 2, 4,
// 8, ... candidates: a search that needs few victims among thousands of candidates stops the
// walk early (at most twice as far as the first sum that fits), and a hopeless one walks them all
// with O(log n) extra tests. The answer is the test on every candidate's sum either way.
bool FairSearch::fits_without_candidates() {
  HeldSums& held = buffers_.held;
  held.clear();
  size_t added = 0;
  size_t next_test = 1;
  const auto add = [&](uint32_t task) {
    held.add(context_.tasks, task);
    if (++added < next_test) return false;
    next_test *= 2;
    return held.request_fits_without(context_, request_);
  };
  for (const TargetTeam& target : teams_) {
    if (!target.cursor) {
      for (uint32_t task : target.kept) {
        if (add(task)) return true;
      }
      continue;
    }
    for (CandidateCursor cursor = *target.cursor; !cursor.done(); cursor.advance()) {
      if (add(cursor.task())) return true;
    }
  }
  return held.request_fits_without(context_, request_);
}

TargetTeam& FairSearch::retry_for(uint32_t team) {
  for (TargetTeam& target : retry_) {
    if (target.team == team) return target;
  }
  return retry_.add(team);
}

// iterateWithSecondFsStrategy: per team (highest share first) at most one S2-b preemption.
bool FairSearch::second_strategy(std::vector<Target>& out) {
  while (TargetTeam* target = pick_target(retry_)) {
    const Drs preemptor_new = preemptor_share();
    const Drs target_old = share_of(*target);
    const uint32_t candidate = target->pop();
    if (compare_drs(preemptor_new, target_old) < 0) {
      if (take(candidate, PreemptionKind::fair_sharing, out)) return true;
    } else {
      note_share_test(trace_, candidate, ir::FairShareStrategy::less_than_initial_share, preemptor_new.weighted(),
                      target_old.weighted());
    }
    target->dropped = true;
  }
  return false;
}

bool FairSearch::hopeless_by_shares() {
  thread_local std::vector<uint32_t> teams;  // reused: no allocation once warm
  teams.clear();
  bool own_has_candidates = false;
  for (const TargetTeam& target : teams_) {
    teams.push_back(target.team);
    own_has_candidates = own_has_candidates || target.team == own_team_;
  }
  Resources own_held{};
  if (own_has_candidates && request_.part_count == 1) {
    const Task& preemptor = context_.tasks[request_.preemptor];
    own_held = own_candidates_hold(context_, request_.first(), preemptor,
                                   within_team_policy(context_.module.teams[own_team_]));
  }
  return fair_hopeless_by_shares(context_, request_, teams, own_held);
}

void FairSearch::run(std::vector<Target>& out) {
  collect_candidates();
  if (teams_.empty()) return;
  if (context_.shortcuts && hopeless_by_shares()) return;
  if (context_.shortcuts && !fits_without_candidates()) return;
  // Shares are computed with the incoming request admitted (§6.3 step 2).
  add_incoming();
  // Rule S2-b as a second pass runs only when it follows S2-a ([S2-a, S2-b], the default).
  const bool fits = first_strategy(out) || (second_ && second_strategy(out));
  remove_incoming();
  if (fits) fill_back(context_, request_, /*allow_borrowing=*/true, out, trace_);
  for (const Target& target : out) restore_to_quota(context_, target.task);
  if (!fits) out.clear();  // all or nothing
}

}  // namespace

// Assertion builds: fair_hopeless_by_shares's figures as it computed them before reading them
// off the usage, by changing the quota and changing it back.
[[maybe_unused]] static Drs lowest_share_by_change(const SearchContext& context, const RequestPart& part,
                                                   uint32_t own_team, const Resources& own_held) {
  QuotaState& quota = context.quota;
  quota.subtract(own_team, part.flavor, own_held);
  quota.add(own_team, part.flavor, part.request);
  const Drs lowest = team_share(context, own_team);
  quota.subtract(own_team, part.flavor, part.request);
  quota.add(own_team, part.flavor, own_held);
  return lowest;
}
[[maybe_unused]] static bool preemptor_within_nominal_by_change(const SearchContext& context,
                                                                const PreemptionRequest& request) {
  const RequestPart& part = request.first();
  context.quota.add(request.team, part.flavor, part.request);
  const bool within = preemptor_within_nominal(context, request);
  context.quota.subtract(request.team, part.flavor, part.request);
  return within;
}

// A bound on what the strategies can ever take, in O(teams): unless the preemptor is within
// nominal (reclaim without a share test), another team's candidate is taken only when the
// preemptor's share then is at most the team's share then (S2-a; S2-b is stricter). The
// preemptor's share is never lower than with every own-team candidate gone, and a team's share
// only falls as it loses candidates (shares are monotone in usage and compare_drs is a total
// preorder), so a team whose share now is below that lowest preemptor share can never yield a
// victim. True when the request does not fit even with the own team's candidates and every other
// team that might yield gone: then no search can succeed. One flavor only; searches of several
// parts take the candidate walk.
bool fair_hopeless_by_shares(const SearchContext& context, const PreemptionRequest& request,
                             std::span<const uint32_t> teams, const Resources& own_held) {
  if (request.part_count != 1) return false;
  const RequestPart& part = request.first();
  const uint32_t own_team = request.team;
  const QuotaState& quota = context.quota;
  // Without a quota in the type the request changes no usage: within nominal, as before.
  if (!quota.has_quota(own_team, part.flavor)) return false;
  // Within nominal with the request added (preemptor_within_nominal on the usage plus it).
  bool within = true;
  for (ir::Resource r : quota.charged()) {
    if (contains(part.needs, r) && quota.borrowing_with(own_team, part.flavor, r, part.request[ir::index(r)]))
      within = false;
  }
  if (within) return false;
  // The share with the own candidates' holdings gone and the request added, read off the usage
  // (dominant_resource_share's `extra`) rather than by changing it and changing it back.
  Resources change{};
  for (ir::Resource r : quota.charged()) change[ir::index(r)] = part.request[ir::index(r)] - own_held[ir::index(r)];
  const Drs lowest = dominant_resource_share(quota, own_team, context.module.teams[own_team].fair_share_weight_micros,
                                             part.flavor, &change);
  GOV_ASSERT(compare_drs(lowest, lowest_share_by_change(context, part, own_team, own_held)) == 0 &&
                 !preemptor_within_nominal_by_change(context, request),
             "the share bound's reads agree with changing the quota");
  // The request fits, or not, with what the own team's candidates hold gone and every other team
  // whose share is not below the preemptor's lowest gone whole (a flat cohort's share reads only
  // its team's usage, so the order of the tests does not matter).
  thread_local std::vector<uint32_t> gone;  // reused: no allocation once warm
  gone.assign(1, own_team);
  for (uint32_t team : teams) {
    if (team != own_team && compare_drs(lowest, unsimulated_team_share(context, team)) <= 0) gone.push_back(team);
  }
  return !fits_without_teams(context, request, gone, own_held);
}

void fair_sharing_targets(const SearchContext& context, const PreemptionRequest& request,
                          std::vector<Target>& out, SearchTrace* trace) {
  if (context.quota.tree()) [[unlikely]] return fair_sharing_tree_targets(context, request, out, trace);
  FairSearch(context, request, trace).run(out);
}

}  // namespace gov::engine::preemption
