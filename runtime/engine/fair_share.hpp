// Dominant resource shares (docs/kueue-reference.md §6.1, Kueue HEAD): how far a team borrows,
// weighted, for the fair-sharing admission order and fair-sharing preemption.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "compiler/ir/module.hpp"
#include "runtime/engine/quota_state.hpp"

namespace gov::engine {

/// A team's dominant resource share. Compare with compare_drs, never by `weighted()` alone:
/// a borrowing team of weight 0 has an infinite share, and two such teams compare unweighted.
struct Drs {
  double unweighted = 0;   // max over resources of borrowed × 1000 / lendable
  bool borrowing = false;  // usage above nominal in some (flavor, resource)
  bool zero_weight = false;
  double weight = 0;  // model::weight_value of the team's weight

  bool zero_weight_borrows() const { return zero_weight && borrowing; }
  /// +inf for a borrowing team of weight 0; 0 when nothing is borrowed.
  double weighted() const {
    if (zero_weight_borrows()) return std::numeric_limits<double>::infinity();
    if (unweighted == 0) return 0;
    return unweighted / weight;
  }
  /// Field by field (assertion builds compare a share read off the usage with one computed).
  friend bool operator==(const Drs&, const Drs&) = default;
};

/// The share of `team` with `extra` added in `flavor` (pass nullptr for none); `weight_micros` is
/// ir::Team::fair_share_weight_micros.
Drs dominant_resource_share(const QuotaState& quota, uint32_t team, int64_t weight_micros, uint32_t flavor,
                            const Resources* extra);
inline Drs dominant_resource_share(const QuotaState& quota, uint32_t team, int64_t weight_micros) {
  return dominant_resource_share(quota, team, weight_micros, 0, nullptr);
}

/// Per charged resource, what `team` uses past its nominal summed over its instance types (the
/// `borrowed` of dominant_resource_share). In a flat cohort a team's share, with or without an
/// amount added or taken in one instance type, is a function of this and of that type's usage:
/// what FlavorStamps keys nominations on under fair sharing.
Resources borrowed_amounts(const QuotaState& quota, uint32_t team);

/// <0 when `a` is the smaller share (preferred for admission), >0 when larger (preferred as a
/// preemption target), 0 when equal (CompareDRS).
/// Inline: the fair-sharing bounds and orders compare shares millions of times per replay.
inline int compare_drs(const Drs& a, const Drs& b) {
  const auto three_way = [](double x, double y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.zero_weight_borrows() && b.zero_weight_borrows()) return three_way(a.unweighted, b.unweighted);
  if (a.zero_weight_borrows()) return 1;
  if (b.zero_weight_borrows()) return -1;
  return three_way(a.weighted(), b.weighted());
}

/// Fair-sharing shares of teams (flat cohort), each remembered with the TaskStore::team_version
/// it was computed under. In a flat cohort a team's share is a function of its own usage, and
/// between cycles (BetweenCycles, preemption.hpp) its usage is a function of its admitted tasks, hence of its
/// version. Not thread-safe.
class TeamShareMemo {
 public:
  /// The share of `team` (weight from the module) at `version`, computed on a miss.
  const Drs& share(const QuotaState& quota, const ir::Module& module, uint32_t team, uint64_t version);

 private:
  struct Entry {
    uint64_t version_plus_one = 0;  // 0: none
    Drs share;
  };
  std::vector<Entry> entries_;  // by team
};

// ------------------------------------------------------------------ trees of cohorts

/// Kueue HEAD's DominantResourceShare of a node of a tree of cohorts, against the usage of
/// `quota` now (its ClusterQueueSnapshot / CohortSnapshot method): what the node uses past its
/// subtree quota (a team: past its nominal), per resource summed over instance types, × 1000 over
/// what its parent could ever hold (Σ over instance types of the parent's potential), divided by
/// the node's weight (a team's or a cohort's `fair-share-weight`). A root's share is zero. Only
/// for a module with a tree (QuotaState::tree()).
Drs team_share_in_tree(const QuotaState& quota, const ir::Module& module, uint32_t team);
Drs cohort_share(const QuotaState& quota, const ir::Module& module, int32_t cohort);

/// One head of a cycle as the fair-sharing tournament of a tree sees it.
struct TournamentHead {
  uint32_t team = 0;
  bool preemptor = false;
  int32_t priority = 0;
  int64_t submitted = 0;
  std::vector<std::pair<uint32_t, Resources>> parts;  // (flavor, request) admitted; empty without a flavor
};

/// Kueue HEAD's fair-sharing order in a tree of cohorts (fair_sharing_iterator.go): the index of
/// the pending head (`pending[i]` != 0) to process next, against the usage of `quota` now. Each
/// head's share is taken with its request added, at every level of its path: its team's among
/// the team's cohort's children, its cohort's among the cohort's parent's children, and so on (a
/// node's share: what it uses past its subtree quota, over what its parent could ever hold; a
/// cohort's weight is its `fair-share-weight`). Down each tree, every cohort's winner is the best
/// of its child cohorts' winners and its teams' heads, compared at that cohort: preemptor first,
/// then not borrowing (on what the head requests, at that level), lower share, higher priority,
/// earlier submission, team order. Across roots, the same without the shares. `quota` is
/// restored before returning.
size_t tournament_winner(QuotaState& quota, const ir::Module& module, std::span<const TournamentHead> heads,
                         std::span<const uint8_t> pending);

}  // namespace gov::engine
