// From a gov::Task (names, as the user wrote it) to a Task (indices and exact amounts), or a
// one-line reason why the task is invalid (docs/semantics.md §1, docs/interfaces.md "Trace file").
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/ir/module_names.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/engine/task_store.hpp"

namespace gov::engine {

/// Profiles of GPU partitions that tasks asked for and no quota of the policy gives, interned:
/// a task holds a pointer to its name (stable for the engine's life), and flavor-assignment
/// reasons point at it for Kueue's "resource nvidia.com/mig-… unavailable in ClusterQueue".
class UnavailablePartitions {
 public:
  const std::string* intern(std::string_view profile);

 private:
  std::deque<std::string> names_;  // deque: pointers stay valid as it grows
};

/// What admission needs of a task, resolved to indices and exact amounts: no strings, so
/// resolving one allocates nothing unless it is invalid.
struct TaskRequest {
  int32_t team = -1;
  int32_t class_index = -1;
  int32_t priority = 0;           // from the evaluator (the JIT compiles the class weights)
  int32_t requested_flavor = -1;  // -1: the team's flavors in declared order
  int64_t instances = 0;
  int64_t pods = 1;
  Resources request;  // not value-initialized: resolve_request fills it (zeroing the whole struct cost a `rep stos` on the hot path)
  /// A well-formed GPU partition profile the task asks for that no quota of the policy gives
  /// (a view into the gov::Task): the task can be assigned no flavor (no-matching-flavor).
  std::string_view unavailable_partition;
};

/// Everything resolving a task reads; all referenced objects must outlive it.
struct Resolver {
  const ir::Module& module;
  const ir::Evaluator& evaluator;
  const ir::ModuleNames& names;
  UnavailablePartitions* unavailable = nullptr;  // where resolve_task interns such profiles

  /// The same, interning nothing: for readers that may run concurrently (checks).
  Resolver without_interning() const { return {module, evaluator, names, nullptr}; }
};

/// Resolves `spec`'s names and amounts into `out`. Returns the error message when the task is
/// invalid: unknown team, class or instance type; `instances` together with per-resource
/// amounts; negative amounts; `pods` < 1; `instances` without an instance type for a team with
/// other than one type; overflow. `out.team` is set (or -1) even then.
std::optional<std::string> resolve_request(const Resolver& resolver, const gov::Task& spec,
                                           TaskRequest& out);

/// A task of several pod sets (gov::Task::pod_sets): each pod set resolved as a task of the
/// task's team and class; `out` gets their sums (what rules see), `pod_sets` (when not null)
/// each one (resized to the pod sets and filled in place, so a reused vector keeps its names'
/// capacity). Errors name the pod set. A task whose only pod set is `main` is a task of one pod
/// set: resolve_request and resolve_task resolve it as such (resolve_request's
/// `unavailable_partition` then views a per-thread copy, valid until the thread's next call).
/// Allocates nothing once warm, but for errors and for profiles interned the first time.
std::optional<std::string> resolve_pod_sets(const Resolver& resolver, const gov::Task& spec, TaskRequest& out,
                                            std::vector<PodSetRequest>* pod_sets);
/// Whether `spec` is one pod set named `main` (decided as a task without pod sets).
bool is_single_main(const gov::Task& spec);

/// resolve_request, then the rest of a Task (id, duration); an unknown team's name is kept in
/// `unknown_team`.
std::optional<std::string> resolve_task(const Resolver& resolver, const gov::Task& spec, Task& out);

/// The TaskRequest part of a resolved task.
TaskRequest request_of(const Task& task);

}  // namespace gov::engine
