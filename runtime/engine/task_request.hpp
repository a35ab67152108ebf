// From a TaskSpec (names, as the user wrote it) to a Task (indices and exact amounts), or a
// one-line reason why the task is invalid (SEMANTICS §1, INTERFACES "Trace file").
#pragma once

#include <optional>
#include <string>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/engine/task_store.hpp"

namespace gov::engine {

/// Fills `out` (id, team, class, priority, requested flavor, request, instances, pods, duration)
/// from `spec`. Returns the error message when the task is invalid: unknown team, class or
/// instance type; `instances` together with per-resource amounts; negative amounts; `pods` < 1;
/// `instances` without an instance type for a team with other than one type; overflow.
/// The priority comes from `evaluator` (compiled with the module's classes by the JIT).
std::optional<std::string> resolve_task(const ir::Module& module, const ir::Evaluator& evaluator,
                                        const TaskSpec& spec, Task& out);

}  // namespace gov::engine
