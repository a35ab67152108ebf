// Explanations for `gov eval`: why a task is pending, why it was preempted, what would let it
// run — the task's needs, its team's quota figures in the flavors tried, what the cohort has
// idle, and which preemption candidates were considered and why each was or was not chosen.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/decision.hpp"

namespace gov::engine {

/// One resource of one flavor as the task's team sees it (base units: devices, millicores, MiB).
struct ResourceFigures {
  ir::Resource resource = ir::Resource::gpu;
  ir::Amount requested = 0;
  ir::Amount guaranteed = 0;       // the team's nominal quota
  ir::Amount borrowing_limit = 0;  // ir::kUnlimited when the team may borrow without limit
  ir::Amount in_use = 0;           // what the team's admitted tasks hold
  ir::Amount available = 0;        // what the team can take now (Available)
  ir::Amount borrowable = 0;       // the part of `available` beyond the team's own unused quota
  ir::Amount maximum = 0;          // the most the team could ever hold (maximum capacity)
  ir::Amount cohort_idle = 0;      // quota lent to the cohort and unused by anyone
};

struct FlavorExplanation {
  std::string flavor;
  /// `fits`, `fits by borrowing`, `needs preemption in the team`, `needs reclaim from other teams`,
  /// `no preemption candidates`, `does not fit`, or `admitted` for the flavor a task holds.
  std::string verdict;
  std::vector<ResourceFigures> resources;  // the charged resources the task requests
};

struct CandidateExplanation {
  std::string task;
  std::string team;
  int32_t priority = 0;
  Time admitted_at = 0;
  bool chosen = false;
  std::string why;  // one line: why it was or was not chosen
};

struct Explanation {
  std::string task;
  std::string team;
  TaskState state = TaskState::pending;
  int32_t priority = 0;
  std::string priority_class;  // empty when none applies
  ResourceAmounts requested;   // every resource requested (EFA included; it is never charged)
  std::string flavor;          // the flavor it holds, when admitted
  std::vector<FlavorExplanation>
      flavors;  // pending: the flavors tried, in order; admitted: the one it holds
  std::vector<CandidateExplanation> candidates;  // pending and needing preemption
  std::optional<PendingReason> reason;           // the last pending decision
  std::string message;
  std::string preempted_by;  // the task that last preempted it, if any
  std::optional<PreemptionKind> preempted_kind;
  std::vector<std::string> notes;  // what would let it run, in words
};

}  // namespace gov::engine
