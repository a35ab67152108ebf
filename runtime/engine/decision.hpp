// What the engine is asked (a task) and what it answers (decisions): the public value types of
// gov/types.hpp. The decision stream format of docs/interfaces.md is written from them (trace/).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/module.hpp"

namespace gov::engine {

// The engine speaks the public value types of gov/types.hpp: gov::Task in, gov::Decision out,
// with gov::Time, gov::Outcome, gov::PendingReason, gov::PreemptionKind and gov::TaskState.
// Unqualified, those names resolve to them here (gov::engine is nested in gov); `Task` alone
// is the engine's own record of a task (task_store.hpp), so the public one is spelled gov::Task.

using ir::Amount;
using ir::Resources;

/// A task's labels, as submitted (gov::Task::labels).
using Labels = std::vector<std::pair<std::string, std::string>>;

inline constexpr size_t kTaskStateCount = 6;

}  // namespace gov::engine
