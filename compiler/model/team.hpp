// A team's settings: how it shares quota, whom it may preempt, how it queues and picks an
// instance type (Kueue's ClusterQueue fields), and the language's words for them.
#pragma once

#include <cstdint>
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

}  // namespace gov::model
