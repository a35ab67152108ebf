// What the engine is asked (a task) and what it answers (decisions), as plain values.
// The decision stream format of docs/interfaces.md is written from these (trace/).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/module.hpp"

namespace gov::engine {

/// Simulation time in milliseconds since the start of the trace (traces give seconds,
/// possibly decimal; `at` prints as an integer when whole).
using Time = int64_t;

/// Exact amounts in each resource's base unit (devices, millicores, MiB), as in the IR.
using ir::Amount;
using ir::Resources;

using Labels = std::vector<std::pair<std::string, std::string>>;

/// A submitted task as the user describes it: names, not indices (the engine resolves
/// them and answers `invalid` for unknown ones).
struct TaskSpec {
  std::string id;
  std::string team;
  std::optional<std::string> priority;       // a class name; absent: the default class, else 0
  std::optional<std::string> instance_type;  // absent: the team's flavors in declared order
  /// Whole instances of the instance type: every resource of that many instances.
  std::optional<int64_t> instances;
  /// Per-resource amounts in base units (only the given ones count); per pod when `pods` is set.
  std::array<std::optional<ir::Amount>, ir::kResourceCount> amounts{};
  std::optional<int64_t> pods;  // pods × amounts
  Labels labels;
  std::optional<Time> duration;  // finishes this long after it was last admitted
};

/// Amounts for some resources, in resource order; printed as {"gpu":1,"vcpu":64,...}.
using ResourceAmounts = std::vector<std::pair<ir::Resource, ir::Amount>>;

enum class Outcome : uint8_t { admitted, pending, preempted, rejected, finished, cancelled, invalid };
enum class PendingReason : uint8_t {
  waiting_for_quota,
  exceeds_max_quota,
  waiting_for_preemption,
  no_matching_flavor,
  team_inactive,
};
enum class PreemptionKind : uint8_t { in_team, reclaim, fair_sharing };

struct RuleWarning {
  std::string rule;
  std::string message;
  friend bool operator==(const RuleWarning&, const RuleWarning&) = default;
};

/// One line of the decision stream. Which fields are meaningful depends on `outcome`
/// (docs/interfaces.md "Decision stream").
struct Decision {
  Time at = 0;
  std::string task;
  std::string team;
  Outcome outcome = Outcome::pending;
  // admitted
  std::string flavor;
  ResourceAmounts usage;     // what the task holds, per charged resource it requested
  ResourceAmounts borrowed;  // how much it raised its team's borrowing (only nonzero entries)
  std::vector<RuleWarning> warnings;
  // pending
  std::optional<PendingReason> reason;
  ResourceAmounts short_of;  // waiting-for-quota: missing amounts, when computed
  ResourceAmounts maximum;   // exceeds-max-quota: the most the team could ever hold
  std::vector<std::string> victims;  // waiting-for-preemption
  // preempted
  std::string by;
  PreemptionKind kind = PreemptionKind::in_team;
  // rejected
  std::string rule;
  // every outcome but finished / cancelled
  std::string message;

  friend bool operator==(const Decision&, const Decision&) = default;
};

/// Where a task is in its life. Every task the engine has seen is in exactly one state.
enum class TaskState : uint8_t { pending, admitted, finished, cancelled, rejected, invalid };
inline constexpr size_t kTaskStateCount = 6;

std::string_view outcome_name(Outcome outcome);           // "admitted", ...
std::string_view reason_name(PendingReason reason);       // "waiting-for-quota", ...
std::string_view preemption_kind_name(PreemptionKind kind);  // "in-team", "reclaim", "fair-sharing"
std::string_view task_state_name(TaskState state);           // "pending", "admitted", ...

}  // namespace gov::engine
