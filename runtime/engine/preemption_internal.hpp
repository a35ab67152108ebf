// Pieces shared by the classical and the fair-sharing target searches: who may be a candidate
// (docs/kueue-reference.md §5.1–§5.2), candidates in order (§5.3), the fit test and fill-back
// (§5.4). Internal to gov::engine.
#pragma once

#include <span>
#include <vector>

#include "compiler/support/assert.hpp"
#include "runtime/engine/preemption.hpp"

namespace gov::engine::preemption {

/// A preemption policy as a predicate over priorities (§5.1; defined in compiler/ir/decisions).
using Policy = ir::PreemptionPolicy;
using ir::reclaim_policy;
using ir::within_team_policy;
/// The may-preempt question about two tasks.
inline ir::PreemptionPair preemption_pair(const Task& preemptor, const Task& candidate) {
  return {static_cast<uint32_t>(preemptor.team), preemptor.priority, preemptor.submitted_at,
          static_cast<uint32_t>(candidate.team), candidate.priority, candidate.submitted_at};
}
/// Whether `policy` lets `preemptor` preempt `candidate`.
bool policy_allows(Policy policy, const Task& preemptor, const Task& candidate);

/// The admitted tasks of one (team, flavor) that `preemptor` may preempt, in candidate order,
/// skipping those that use none of the resources `part` contests there or were already
/// preempted at this event time. Lists are sorted by priority, so the walk stops at the first
/// priority the policy excludes.
class CandidateCursor {
 public:
  CandidateCursor(const SearchContext& context, const RequestPart& part, const Task& preemptor,
                  uint32_t team, Policy policy);
  bool done() const { return position_ >= list_->size(); }
  uint32_t task() const { return (*list_)[position_]; }
  uint32_t team() const { return team_; }
  void advance();

 private:
  void skip_ineligible();

  const SearchContext* context_;
  const Task* preemptor_;
  const std::vector<uint32_t>* list_;
  uint32_t flavor_;
  ResourceMask needs_;
  Policy policy_;
  uint32_t team_;
  size_t position_ = 0;
  /// The evaluator's may_preempt answer for the last candidate priority asked, when the policy
  /// compares priorities only (not submission times): the list runs in priority order, so one
  /// call answers a run of equal priorities (the predicate is a pure function of the pair).
  bool by_priority_ = false;
  bool asked_ = false;
  int32_t asked_priority_ = 0;
  bool allowed_ = false;
};

/// The full candidate order of §5.3 between tasks of different teams: other teams before the
/// preemptor's, then lower priority, more recently admitted, id.
bool candidate_before(const TaskStore& tasks, uint32_t preemptor_team, uint32_t a, uint32_t b);

/// Whether `team` borrows in a contested resource of any flavor of the request (§5.2: only then
/// are its tasks reclaimed).
bool borrowing_in_any(const SearchContext& context, uint32_t team, const PreemptionRequest& request);

/// Whether the request fits now: request <= Available in every requested resource of every
/// part and, without borrowing, usage + request <= nominal (workloadFits).
bool request_fits(const SearchContext& context, const PreemptionRequest& request,
                  bool allow_borrowing);

/// What a set of admitted tasks holds, summed per team and instance type (fits_without_all's
/// bound). The cohort's usage is a function of each team's usage, so subtracting each sum once
/// leaves the same state as subtracting every task, at a fraction of the cost.
class HeldSums {
 public:
  void clear() { held_.clear(); }
  /// Inline: it runs once per candidate of every search the team-level bounds leave.
  void add(const TaskStore& tasks, uint32_t task) {
    const Task& t = tasks[task];
    GOV_ASSERT(t.state == TaskState::admitted, "only admitted tasks hold quota");
    const auto team = static_cast<uint32_t>(t.team);
    for_each_charge(t, [&](uint32_t flavor, const Resources& amounts) {
      // No overflow: a sum stays at or below the team's usage there, which holds every term.
      Resources& sum = sum_for(team, flavor);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += amounts[i];
    });
  }
  /// Whether the request would fit with everything summed gone (the quota is as before on
  /// return).
  bool request_fits_without(const SearchContext& context, const PreemptionRequest& request) const;
  /// The same by subtracting the sums from the quota and adding them back (trees of cohorts,
  /// requests of several parts; assertion builds compare).
  bool request_fits_without_by_change(const SearchContext& context, const PreemptionRequest& request) const;

 private:
  struct Held {
    uint32_t team;
    uint32_t flavor;
    Resources amounts;
  };
  Resources& sum_for(uint32_t team, uint32_t flavor) {
    // Candidates come team by team: the sum is nearly always the last one.
    if (!held_.empty() && held_.back().team == team && held_.back().flavor == flavor) [[likely]]
      return held_.back().amounts;
    return find_or_add(team, flavor);
  }
  Resources& find_or_add(uint32_t team, uint32_t flavor);
  std::vector<Held> held_;
};

/// Whether the request would fit with every one of `candidates` gone. Available quota only grows
/// as tasks leave, so when it would not, no subset can make room and the search can stop
/// early with the same answer (no targets).
bool fits_without_all(const SearchContext& context, const PreemptionRequest& request,
                      const std::vector<uint32_t>& candidates);

/// The same test, coarser and cheaper: with everything the other `teams` hold in the request's
/// flavors gone, and what the preemptor's own team's candidates hold (a superset of any candidates
/// the teams have: a request of several parts removes the own team's whole usage, since a
/// candidate may hold in a part's flavor what that part does not contest). False means no search
/// can succeed. The own team's walk stops at its policy's priority bound, and the other teams
/// cost O(1) each: on a busy cluster most searches of parked heads end here, because the
/// preemptor's team is at its own ceiling and only its own lower-priority tasks could help.
/// `own_held`: over_own_limits's for a request of one part (unused for several parts).
/// `record`, for a request of one part in a flat cohort: receives whether the team has a quota
/// in the flavor and what is available there per charged resource with the teams gone
/// (TeamsGoneMemo).
/// In a flat cohort a request of one part is answered without changing the quota; else (and
/// in assertion builds, to check that answer) by fits_without_teams_by_change.
bool fits_without_teams(const SearchContext& context, const PreemptionRequest& request,
                        std::span<const uint32_t> teams, const Resources& own_held,
                        TeamsGoneMemo::Entry* record = nullptr);
/// fits_without_teams by subtracting what the teams give up from the quota, testing
/// request_fits, and adding it back.
bool fits_without_teams_by_change(const SearchContext& context, const PreemptionRequest& request,
                                  std::span<const uint32_t> teams, const Resources& own_held,
                                  TeamsGoneMemo::Entry* record);
/// What picks a one-part request's candidates, besides the state (the memos' keys).
CandidateChoice candidate_choice(const SearchContext& context, const PreemptionRequest& request);
/// request_fits of the entry's one-part request with other amounts `request`: the back ends'
/// fit test and partitions_fit take a requested amount when it is at most available()
/// (ir::fit), and need a quota in the flavor.
bool fits_in(const SearchContext& context, const TeamsGoneMemo::Entry& entry, const Resources& request);
/// For a request of one part: sets `own_held` to what the own team's candidates hold in its
/// flavor (zero when its within-team policy is never) and tells whether the request exceeds the
/// own team's own limits even with that gone. No other team's usage raises those limits
/// (QuotaState::own_limits_available bounds available()), so true means no search can succeed;
/// it is the common case of a parked head, whose team is at its own ceiling, and is settled
/// before the candidate teams are listed. False for a request of several parts.
bool over_own_limits(const SearchContext& context, const PreemptionRequest& request, Resources& own_held);
/// What the preemptor's own team's candidates in `part` (under `policy`) hold in its flavor.
Resources own_candidates_hold(const SearchContext& context, const RequestPart& part,
                              const Task& preemptor, Policy policy);
/// The teams whose tasks may be candidates at all: the preemptor's own (unless its within-team
/// policy is never) and, unless reclaim is never, the others over nominal in the contested
/// resources.
void teams_with_candidates(const SearchContext& context, const PreemptionRequest& request,
                           std::vector<uint32_t>& out);

/// Fair sharing in a flat cohort, a request of one part: true when no fair-sharing search can
/// succeed, because the request does not fit even with `own_held` (what the own team's candidates
/// hold) and everything gone that the other `teams` hold in its flavor, of those whose share could
/// ever let one of their tasks go (preemption_fair.cpp). `teams` may hold teams without
/// candidates (the answer is then only less often true). False for several parts.
bool fair_hopeless_by_shares(const SearchContext& context, const PreemptionRequest& request,
                             std::span<const uint32_t> teams, const Resources& own_held);

/// Simulates an eviction, or undoes it.
void remove_from_quota(const SearchContext& context, uint32_t task);
void restore_to_quota(const SearchContext& context, uint32_t task);

/// With every target removed and the request fitting: gives back, newest first and except the
/// last one taken, each target the request still fits without (§5.4 fill-back). Targets stay
/// removed from `quota` on return.
void fill_back(const SearchContext& context, const PreemptionRequest& request, bool allow_borrowing,
               std::vector<Target>& targets, SearchTrace* trace);

void note(SearchTrace* trace, uint32_t task, CandidateNote::Verdict verdict,
          double preemptor_share = 0, double target_share = 0);
/// A candidate a fair-sharing test refused, with the shares it compared and which test it was.
void note_share_test(SearchTrace* trace, uint32_t task, ir::FairShareStrategy strategy, double preemptor_share,
                     double target_share);

/// The two searches; `out` is empty on entry.
void classical_targets(const SearchContext& context, const PreemptionRequest& request,
                       std::vector<Target>& out, SearchTrace* trace);
/// classical_targets in a tree of cohorts (preemption_hierarchical.cpp).
void hierarchical_classical_targets(const SearchContext& context, const PreemptionRequest& request,
                                    std::vector<Target>& out, SearchTrace* trace);
void fair_sharing_targets(const SearchContext& context, const PreemptionRequest& request,
                          std::vector<Target>& out, SearchTrace* trace);
/// fair_sharing_targets in a tree of cohorts (preemption_fair_tree.cpp).
void fair_sharing_tree_targets(const SearchContext& context, const PreemptionRequest& request,
                               std::vector<Target>& out, SearchTrace* trace);

}  // namespace gov::engine::preemption
