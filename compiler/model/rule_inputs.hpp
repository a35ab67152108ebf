// What a rule can read and the types of its values: the vocabulary the checker types rule
// expressions in and the IR evaluates them with.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gov::model {

/// The type of a rule register. Priority classes are their weights; teams and flavors
/// are indices; strings are ids into the IR's string table (ir::Module::strings).
enum class ValueType : uint8_t { boolean, integer, millicores, mebibytes, string, priority, team, flavor };

/// What a rule can read about the task (ir::RuleInput::task).
enum class TaskField : uint8_t {
  team,           // team index
  priority,       // effective priority (class weight, default class, or 0; 0 under fcfs)
  flavor,         // requested instance type index, or -1 when the task names none
  gpus, neuron, vcpus, memory, efa,  // requested totals in base units
  instances,      // whole instances requested (0 when given per resource)
  pods,           // pods (1 unless given)
  id,             // string id of the task id when it equals a constant, else ir::kOtherString
};
inline constexpr size_t kTaskFieldCount = 11;

/// Per-resource figures of the task's team: in the task's flavor when it names one,
/// otherwise summed over the team's flavors.
enum class TeamStat : uint8_t { nominal, used, borrowed, borrowing_limit, available };
inline constexpr size_t kTeamStatCount = 5;
/// Per-resource figures of the cluster, same scope rule: capacity (instances × per
/// instance), used (by admitted tasks) and available (capacity − used, at least 0).
enum class ClusterStat : uint8_t { capacity, used, available };
inline constexpr size_t kClusterStatCount = 3;

}  // namespace gov::model
