// A team's settings: how it shares quota, whom it may preempt, how it queues and picks an
// instance type (Kueue's ClusterQueue fields), and the language's words for them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gov::model {

enum class Sharing : uint8_t { lend_and_borrow, lend, dont_lend };
/// Kueue's preemption.withinClusterQueue.
enum class WithinTeam : uint8_t { never, lower_priority, lower_or_newer_equal_priority };
/// Kueue's preemption.reclaimWithinCohort (HyperPod: always `any`).
enum class ReclaimWithinCohort : uint8_t { never, lower_priority, any };
/// Kueue's preemption.borrowWithinCohort.policy (HyperPod writes `LowerPriority`).
enum class BorrowWithinCohort : uint8_t { never, lower_priority };
/// Kueue's queueingStrategy.
enum class Queueing : uint8_t { best_effort_fifo, strict_fifo };
/// Kueue's flavorFungibility.whenCanBorrow (v1beta1 names): `borrow` takes the first instance
/// type that fits even by borrowing (MayStopSearch); `try_next_flavor` looks further for one
/// that fits without borrowing.
enum class WhenCanBorrow : uint8_t { borrow, try_next_flavor };
/// flavorFungibility.whenCanPreempt: `preempt` takes the first instance type where preemption
/// can make room (MayStopSearch); `try_next_flavor` (Kueue's default) looks further for one that
/// fits without preempting.
enum class WhenCanPreempt : uint8_t { preempt, try_next_flavor };
/// flavorFungibility.preference: which of two tried instance types wins when neither stopped the
/// search (isPreferred, docs/kueue-reference.md §4.4).
enum class FlavorPreference : uint8_t { borrowing_over_preemption, preemption_over_borrowing };
/// One entry of Kueue's fairSharing.preemptionStrategies (docs/kueue-reference.md §6.3): S2-a and
/// S2-b.
enum class FairShareStrategy : uint8_t { less_than_or_equal_to_final_share, less_than_initial_share };

/// The language's words for these settings: `lend-and-borrow`, `lower-priority`, `any`.
std::string_view sharing_name(Sharing sharing);
std::string_view within_team_name(WithinTeam within);
std::string_view reclaim_name(ReclaimWithinCohort reclaim);
std::string_view borrow_within_cohort_name(BorrowWithinCohort borrow);
std::string_view queueing_name(Queueing queueing);
std::string_view when_can_borrow_name(WhenCanBorrow when);
std::string_view when_can_preempt_name(WhenCanPreempt when);
std::string_view flavor_preference_name(FlavorPreference preference);
std::string_view fair_share_strategy_name(FairShareStrategy strategy);

/// Fair-share weights are exact decimals, kept in millionths (the language's six decimals, as
/// Kueue's resource.Quantity keeps `fairSharing.weight` exactly): 1 is 1'000'000, 0.5 is 500'000.
inline constexpr int64_t kWeightScale = 1'000'000;
/// The largest weight the language takes (docs/limits.md): Kueue bounds none.
inline constexpr int64_t kMaxFairShareWeight = 1'000'000;
/// A weight in millionths as the language writes it: `1`, `0.5`, `1.25`.
std::string weight_text(int64_t micros);
/// A weight as the double nearest its decimal value (Kueue HEAD divides shares by
/// `Quantity.AsFloat64Slow()`): micros / 10^6, both exact in a double, so the quotient is the
/// correctly rounded value, and a whole weight w is exactly w (integer weights decide as before).
inline double weight_value(int64_t micros) { return static_cast<double>(micros) / static_cast<double>(kWeightScale); }
/// Whether a weight is a whole number from 0 to 100, what HyperPod's FairShareWeight takes.
inline bool hyperpod_weight(int64_t micros) {
  return micros >= 0 && micros <= 100 * kWeightScale && micros % kWeightScale == 0;
}

}  // namespace gov::model
