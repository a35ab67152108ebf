// Fair-sharing preemption in a tree of cohorts (Kueue HEAD's fairPreemptions with
// fairsharing/ordering.go, target.go and least_common_ancestor.go; docs/semantics.md §4.2, "Cohort
// trees"): target teams walked down the tree by share, shares compared at the lowest common
// ancestor of the preemptor's team and the target's.
#include <fmt/format.h>

#include <algorithm>

#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/preemption_internal.hpp"

namespace gov::engine::preemption {
namespace {

/// A team that may yield victims and its remaining candidates, in candidate order.
struct TreeTarget {
  uint32_t team = 0;
  std::vector<uint32_t> candidates;
  size_t next = 0;
  bool pruned = false;  // TargetClusterQueueOrdering's prunedClusterQueues, per walk

  bool has_candidate() const { return next < candidates.size(); }
  uint32_t front() const { return candidates[next]; }
  uint32_t pop() { return candidates[next++]; }
};

/// A node of the tree: a team or a cohort.
struct Node {
  bool team = false;
  int32_t index = -1;
};

class FairTreeSearch {
 public:
  FairTreeSearch(const SearchContext& context, const PreemptionRequest& request, SearchTrace* trace)
      : context_(context),
        quota_(context.quota),
        request_(request),
        trace_(trace),
        own_team_(request.team),
        on_path_(quota_.cohort_count(), 0),
        pruned_cohort_(quota_.cohort_count(), 0) {
    for (int32_t node = quota_.team_cohort(own_team_); node >= 0; node = quota_.cohort_parent(node)) {
      on_path_[static_cast<size_t>(node)] = 1;
      root_ = node;
    }
    const std::vector<ir::FairShareStrategy>& strategies = context.module.settings.fair_share_strategies;
    if (!strategies.empty()) first_ = strategies.front();
    second_ = strategies.size() > 1;
  }

  void run(std::vector<Target>& out) {
    collect_candidates();
    if (targets_.empty()) return;
    if (context_.shortcuts && !fits_without_all(context_, request_, all_candidates())) return;
    add_incoming();  // shares are taken with the incoming request admitted
    const bool fits = first_strategy(out) || (second_ && second_strategy(out));
    remove_incoming();
    if (fits) fill_back(context_, request_, /*allow_borrowing=*/true, out, trace_);
    for (const Target& target : out) restore_to_quota(context_, target.task);
    if (!fits) out.clear();  // all or nothing
  }

 private:
  int32_t root_of(uint32_t team) const {
    int32_t node = quota_.team_cohort(team);
    while (node >= 0 && quota_.cohort_parent(node) >= 0) node = quota_.cohort_parent(node);
    return node;
  }

  // findCandidates: the preemptor's own team per its within-team policy; every other team of
  // the preemptor's tree that borrows in a contested (instance type, resource), per the reclaim
  // policy; each team's in candidate order (Kueue sorts them all, then groups them by queue).
  void collect_candidates() {
    const ir::Team& team = context_.module.teams[own_team_];
    const Task& preemptor = context_.tasks[request_.preemptor];
    for (uint32_t t = 0; t < context_.module.teams.size(); ++t) {
      const bool own = t == own_team_;
      if (!own && (root_of(t) != root_ || !borrowing_in_any(context_, t, request_))) continue;
      TreeTarget target;
      target.team = t;
      for (const RequestPart& part : request_.all()) {
        if (!quota_.has_quota(t, part.flavor)) continue;
        for (CandidateCursor cursor(context_, part, preemptor, t, own ? within_team_policy(team) : reclaim_policy(team));
             !cursor.done(); cursor.advance())
          target.candidates.push_back(cursor.task());
      }
      if (target.candidates.empty()) continue;
      // Each (team, flavor) list is in candidate order already; a request of several flavors
      // merges them, and lists a task holding several of them once.
      if (request_.part_count > 1) {
        std::sort(target.candidates.begin(), target.candidates.end(), [this](uint32_t a, uint32_t b) {
          return candidate_order_less(context_.tasks[a], context_.tasks[b]);
        });
        target.candidates.erase(std::unique(target.candidates.begin(), target.candidates.end()), target.candidates.end());
      }
      targets_.push_back(std::move(target));
    }
  }

  std::vector<uint32_t> all_candidates() const {
    std::vector<uint32_t> out;
    for (const TreeTarget& target : targets_) out.insert(out.end(), target.candidates.begin(), target.candidates.end());
    return out;
  }

  Drs share(Node node) const {
    return node.team ? team_share_in_tree(quota_, context_.module, static_cast<uint32_t>(node.index))
                     : cohort_share(quota_, context_.module, node.index);
  }

  // ------------------------------------------------------------------ the target ordering

  /// Starts a walk of the tree (MakeClusterQueueOrdering) over `targets`.
  void begin_walk(std::vector<TreeTarget>& targets) {
    for (TreeTarget& target : targets) target.pruned = false;
    std::fill(pruned_cohort_.begin(), pruned_cohort_.end(), 0);
  }

  /// TargetClusterQueueOrdering.Iter: the next team to take candidates from, or nullptr once the
  /// preemptor's root is pruned.
  TreeTarget* next_team(std::vector<TreeTarget>& targets) {
    while (pruned_cohort_[static_cast<size_t>(root_)] == 0) {
      if (TreeTarget* target = next_target(targets, root_)) return target;
    }
    return nullptr;
  }

  /// nextTarget: among the cohort's teams, the one with the highest share (a team that no longer
  /// borrows, but the preemptor's, or that has no candidate left is pruned; ties: the first
  /// candidate in candidate order); among its child cohorts, the one with the highest share (one
  /// that no longer borrows and is not on the preemptor's path is pruned; ties: the first
  /// declared). The cohort when its share is at least the team's, walked down; nullptr when
  /// everything below is pruned (the cohort is pruned then).
  TreeTarget* next_target(std::vector<TreeTarget>& targets, int32_t cohort) {
    TreeTarget* best_team = nullptr;
    Drs best_team_share;
    for (TreeTarget& target : targets) {
      if (target.pruned || quota_.team_cohort(target.team) != cohort) continue;
      const Drs drs = share({true, static_cast<int32_t>(target.team)});
      if ((!drs.borrowing && target.team != own_team_) || !target.has_candidate()) {
        target.pruned = true;
        continue;
      }
      const int order = best_team == nullptr ? 1 : compare_drs(drs, best_team_share);
      if (order > 0 || (order == 0 && candidate_before(context_.tasks, own_team_, target.front(), best_team->front()))) {
        best_team = &target;
        best_team_share = drs;
      }
    }
    int32_t best_cohort = -1;
    Drs best_cohort_share;
    for (size_t c = 0; c < quota_.cohort_count(); ++c) {
      const auto child = static_cast<int32_t>(c);
      if (quota_.cohort_parent(child) != cohort || pruned_cohort_[c] != 0) continue;
      const Drs drs = share({false, child});
      if (!drs.borrowing && on_path_[c] == 0) {
        pruned_cohort_[c] = 1;
        continue;
      }
      if (best_cohort < 0 || compare_drs(drs, best_cohort_share) > 0) {
        best_cohort = child;
        best_cohort_share = drs;
      }
    }
    if (best_cohort < 0 && best_team == nullptr) {
      pruned_cohort_[static_cast<size_t>(cohort)] = 1;
      return nullptr;
    }
    // Kueue's tie goes to the cohort: the most unfair node within it is then chosen.
    if (best_cohort >= 0 && (best_team == nullptr || compare_drs(best_cohort_share, best_team_share) >= 0))
      return next_target(targets, best_cohort);
    return best_team;
  }

  // ------------------------------------------------------------------ shares at the LCA

  /// The child of `lca` on the way from `team` up to it (the team itself when its cohort is the
  /// lca): getAlmostLCA.
  Node almost_lca(uint32_t team, int32_t lca) const {
    int32_t node = quota_.team_cohort(team);
    if (node == lca) return {true, static_cast<int32_t>(team)};
    while (quota_.cohort_parent(node) != lca) node = quota_.cohort_parent(node);
    return {false, node};
  }

  /// The lowest common ancestor of `team` and the preemptor's team (getLCA).
  int32_t lca_with(uint32_t team) const {
    int32_t lca = quota_.team_cohort(team);
    while (on_path_[static_cast<size_t>(lca)] == 0) lca = quota_.cohort_parent(lca);
    return lca;
  }

  /// The two sides of a comparison with a target team (ComputeShares): the children of the LCA
  /// on the target's path (also after a removal: ComputeTargetShareAfterRemoval) and on the
  /// preemptor's.
  Node target_side(uint32_t team) const { return almost_lca(team, lca_with(team)); }
  Node preemptor_side(uint32_t team) const { return almost_lca(own_team_, lca_with(team)); }

  // ------------------------------------------------------------------ the strategies

  // queueWithinNominalInResourcesNeedingPreemption, with the incoming request already added.
  bool within_nominal() const {
    for (const RequestPart& part : request_.all()) {
      for (ir::Resource r : quota_.charged()) {
        if (contains(part.needs, r) && quota_.borrowing(own_team_, part.flavor, r)) return false;
      }
    }
    return true;
  }

  void add_incoming() {
    for (const RequestPart& part : request_.all()) quota_.add(own_team_, part.flavor, part.request);
  }
  void remove_incoming() {
    for (const RequestPart& part : request_.all()) quota_.subtract(own_team_, part.flavor, part.request);
  }

  // The fit test runs without the simulated incoming usage (workloadFitsForFairSharing).
  bool take(uint32_t task, PreemptionKind kind, std::vector<Target>& out) {
    remove_from_quota(context_, task);
    out.push_back({task, kind, false});
    note(trace_, task, CandidateNote::Verdict::removed);
    remove_incoming();
    const bool fits = request_fits(context_, request_, /*allow_borrowing=*/true);
    add_incoming();
    return fits;
  }

  TreeTarget& retry_for(uint32_t team) {
    for (TreeTarget& target : retry_) {
      if (target.team == team) return target;
    }
    retry_.emplace_back();
    retry_.back().team = team;
    return retry_.back();
  }

  // runFirstFsStrategy.
  bool first_strategy(std::vector<Target>& out) {
    const bool preemptor_within_nominal = within_nominal();
    begin_walk(targets_);
    while (TreeTarget* target = next_team(targets_)) {
      if (target->team == own_team_) {
        if (take(target->pop(), PreemptionKind::in_team, out)) return true;
        continue;
      }
      if (preemptor_within_nominal) {
        if (take(target->pop(), PreemptionKind::reclaim, out)) return true;
        continue;
      }
      const Node theirs = target_side(target->team);
      const Drs preemptor_new = share(preemptor_side(target->team));
      const Drs target_old = share(theirs);
      TreeTarget& retry = retry_for(target->team);
      if (preemptor_new.zero_weight_borrows() && !target_old.zero_weight_borrows()) {
        // fsStrategyUnsatisfiable: no candidate of this team can pass; keep them all for S2-b.
        while (target->has_candidate()) retry.candidates.push_back(target->pop());
        continue;
      }
      while (target->has_candidate()) {
        const uint32_t candidate = target->pop();
        Drs compared = target_old;
        if (first_ == ir::FairShareStrategy::less_than_or_equal_to_final_share) {
          remove_from_quota(context_, candidate);
          compared = share(theirs);
          restore_to_quota(context_, candidate);
        }
        const int order = compare_drs(preemptor_new, compared);
        if (first_ == ir::FairShareStrategy::less_than_or_equal_to_final_share ? order <= 0 : order < 0) {
          if (take(candidate, PreemptionKind::fair_sharing, out)) return true;
          break;  // shares changed: walk the tree again
        }
        note_share_test(trace_, candidate, first_, preemptor_new.weighted(), compared.weighted());
        retry.candidates.push_back(candidate);
      }
    }
    return false;
  }

  // runSecondFsStrategy: a new walk over what S2-a kept; per team at most one S2-b preemption.
  bool second_strategy(std::vector<Target>& out) {
    begin_walk(retry_);
    while (TreeTarget* target = next_team(retry_)) {
      const Drs preemptor_new = share(preemptor_side(target->team));
      const Drs target_old = share(target_side(target->team));
      const uint32_t candidate = target->pop();
      if (compare_drs(preemptor_new, target_old) < 0) {
        if (take(candidate, PreemptionKind::fair_sharing, out)) return true;
      } else {
        note_share_test(trace_, candidate, ir::FairShareStrategy::less_than_initial_share, preemptor_new.weighted(),
                        target_old.weighted());
      }
      target->pruned = true;  // DropQueue
    }
    return false;
  }

  const SearchContext& context_;
  QuotaState& quota_;
  const PreemptionRequest& request_;
  SearchTrace* trace_;
  uint32_t own_team_;
  int32_t root_ = -1;
  std::vector<uint8_t> on_path_;        // per cohort: an ancestor of the preemptor's team
  std::vector<uint8_t> pruned_cohort_;  // per cohort, per walk
  std::vector<TreeTarget> targets_;
  std::vector<TreeTarget> retry_;  // candidates that failed S2-a, per team
  ir::FairShareStrategy first_ = ir::FairShareStrategy::less_than_or_equal_to_final_share;
  bool second_ = true;
};

}  // namespace

void fair_sharing_tree_targets(const SearchContext& context, const PreemptionRequest& request,
                               std::vector<Target>& out, SearchTrace* trace) {
  FairTreeSearch(context, request, trace).run(out);
}

}  // namespace gov::engine::preemption

namespace gov::engine {

void self_check_fair_tree_victims(const ir::Module& module, const QuotaState& quota,
                                  std::span<const Resources> start_usage, const TaskStore& tasks,
                                  uint32_t preemptor_team, std::span<const Target> targets, Time now,
                                  std::vector<std::string>& failures) {
  if (!quota.tree()) return;
  QuotaState seen = quota;
  if (!start_usage.empty()) {
    for (uint32_t t = 0; t < quota.team_count(); ++t) {
      for (uint32_t f = 0; f < quota.flavor_count(); ++f) {
        seen.subtract(t, f, quota.usage(t, f));
        seen.add(t, f, start_usage[t * quota.flavor_count() + f]);
      }
    }
  }
  std::vector<uint8_t> on_path(quota.cohort_count(), 0);
  for (int32_t node = quota.team_cohort(preemptor_team); node >= 0; node = quota.cohort_parent(node))
    on_path[static_cast<size_t>(node)] = 1;
  for (const Target& target : targets) {
    const Task& victim = tasks[target.task];
    const auto team = static_cast<uint32_t>(victim.team);
    if (team == preemptor_team) continue;
    int32_t lca = quota.team_cohort(team);
    while (lca >= 0 && on_path[static_cast<size_t>(lca)] == 0) lca = quota.cohort_parent(lca);
    if (lca < 0) {
      failures.push_back(fmt::format("`{}` preempted by fair sharing from team `{}` outside the tree of team `{}` at time {}",
                                     victim.id, module.teams[team].name, module.teams[preemptor_team].name, now));
      continue;
    }
    for (int32_t node = quota.team_cohort(team); node != lca; node = quota.cohort_parent(node)) {
      if (cohort_share(seen, module, node).borrowing) continue;
      failures.push_back(fmt::format("`{}` preempted by fair sharing through cohort `{}`, which used no more than its "
                                     "subtree quota, at time {}",
                                     victim.id, module.cohorts[static_cast<size_t>(node)].name, now));
    }
  }
}

}  // namespace gov::engine
