// Dominant resource shares (docs/kueue-reference.md §6.1, Kueue HEAD): how far a team borrows,
// weighted, for the fair-sharing admission order and fair-sharing preemption.
#pragma once

#include <cstdint>

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
  double weighted() const;
};

/// The share of `team` with `extra` added in `flavor` (pass nullptr for none); `weight_micros` is
/// ir::Team::fair_share_weight_micros.
Drs dominant_resource_share(const QuotaState& quota, uint32_t team, int64_t weight_micros, uint32_t flavor,
                            const Resources* extra);
inline Drs dominant_resource_share(const QuotaState& quota, uint32_t team, int64_t weight_micros) {
  return dominant_resource_share(quota, team, weight_micros, 0, nullptr);
}

/// <0 when `a` is the smaller share (preferred for admission), >0 when larger (preferred as a
/// preemption target), 0 when equal (CompareDRS).
int compare_drs(const Drs& a, const Drs& b);

}  // namespace gov::engine
