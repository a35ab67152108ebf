// The admission engine: what SageMaker HyperPod task governance (Kueue underneath) would decide
// for a stream of task events on a compiled policy (docs/semantics.md §2–§6,
// docs/kueue-reference.md §2–§8).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/engine/engine_options.hpp"
#include "runtime/engine/explain.hpp"

namespace gov::engine {

/// The answer of Engine::check_admission: what submitting a task now would lead to, computed
/// without changing the engine. Plain data.
struct AdmissionCheck {
  enum class Verdict : uint8_t {
    admit,    // it fits now in `flavor` (borrowing when `borrows`)
    reject,   // the deny rule `rule` matches
    pending,  // it does not fit now (it would wait, or need preemption), or its team is inactive
              // or has no quota for the instance type it names
    invalid,  // unknown team, class or instance type, or bad amounts (as a submit would say)
  };
  Verdict verdict = Verdict::invalid;
  int32_t flavor = -1;   // admit: index into Module::flavors
  bool borrows = false;  // admit
  int32_t rule = -1;     // reject: index into Module::rules of the first matching deny rule
  uint32_t warnings = 0; // matching warn rules (and deny rules after the first)
  int32_t team = -1;     // the task's team, when known
  int32_t priority = 0;  // its effective priority
};

/// One pod set of a prepared task of several: what the check assigns a flavor.
struct PreparedPodSet {
  int32_t requested_flavor = -1;
  ir::Resources request{};
};

/// A task resolved once against an engine's policy (names to indices, labels to the ids rules
/// compare), to check many times without hashing a string: what a controller keeps per
/// workload. Valid for engines of the policy (ir::Module) that prepared it; another engine
/// answers `invalid`.
struct PreparedTask {
  const ir::Module* policy = nullptr;  // the module it was resolved against; null: invalid task
  int32_t team = -1;
  int32_t class_index = -1;
  int32_t priority = 0;
  int32_t requested_flavor = -1;
  int64_t instances = 0;
  int64_t pods = 1;
  ir::Resources request{};
  bool partitions = false;             // it asks for GPU partitions: the partition path below decide
  bool unavailable_partition = false;  // it asks for a GPU partition profile no quota gives
  std::vector<PreparedPodSet> pod_sets;  // several pod sets (then `partitions` is set too: the slow path)
  int64_t id_string = 0;             // the task id as a rule string id
  std::array<int64_t, ir::kTaskFieldCount> fields{};  // what rules read of the task (RuleInput::task)
  std::vector<int64_t> label_ids;    // one per label key the rules read
};

/// Decides admissions for one policy. Holds `module` and `evaluator` by reference: both must
/// outlive the engine. Deterministic: the same events give the same decisions. Not thread-safe
/// (one engine per thread, or external locking); movable, not copyable.
class Engine {
 public:
  Engine(const ir::Module& module, const ir::Evaluator& evaluator, EngineOptions options = {});
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Advances to `at` (milliseconds; an earlier time is taken as the current one): first every
  /// duration-based finish due at or before `at` happens, in time order, each instant running
  /// admission cycles to a fixed point with decisions stamped with its own time; then `events`
  /// apply in order; then cycles run until nothing changes. Returns the decisions in the order
  /// they happened. Unknown ids, finishing a task that is not admitted and cancelling a task that
  /// has ended do nothing.
  std::vector<Decision> step(Time at, std::span<const Event> events);
  /// The same, appending to `out` (reuse it to avoid allocation).
  void step(Time at, std::span<const Event> events, std::vector<Decision>& out);
  std::vector<Decision> advance(Time at) { return step(at, {}); }

  /// Loads a cluster's state into a fresh engine: admitted tasks hold their quota as given (no
  /// quota check, no rules: a real cluster may be over quota), pending tasks queue with their
  /// submission times and compete at the next step; no decisions are emitted. Returns one
  /// failure per entry that could not be loaded (it is skipped), e.g. {admitted, 2, "unknown
  /// team `x`"}.
  std::vector<LoadFailure> load_state(const ClusterState& state);
  /// The live tasks as a ClusterState that load_state() of an engine under any policy version
  /// takes back: admitted tasks in the order they were admitted (with their flavors), pending
  /// ones by submitted_at (the queue-order time), then id, each as it was submitted. What a reload carries over.
  ClusterState export_state() const;

  /// Why the latest task with this id is where it is, computed against the current state; nullopt
  /// for an unknown id. Does not change the engine.
  std::optional<Explanation> explain(std::string_view task_id) const;
  /// The hot path of an admission controller: resolves the task, evaluates every rule, and
  /// tests the quota fit in each of its team's instance types in declared order (only the
  /// one it names, if it names one), all against the current state, without changing the
  /// engine. Pending tasks are not simulated: in a real cycle a task ahead in the queue may
  /// take the room first (step() decides that). Allocates nothing in steady state for a
  /// valid task (per-thread scratch buffers); safe to call from several threads at once as
  /// long as nobody calls step() or load_state() meanwhile.
  AdmissionCheck check_admission(const gov::Task& task) const;
  /// Resolves a task for the prepared form of check_admission (allocates; const, like it).
  PreparedTask prepare(const gov::Task& task) const;
  /// check_admission of a prepared task: no name lookups, no allocation.
  AdmissionCheck check_admission(const PreparedTask& task) const;
  /// The state now. `with_ended_tasks`: Snapshot::tasks also lists ended tasks (every task
  /// ever submitted, in submission order); otherwise pending and admitted ones only.
  Snapshot snapshot(bool with_ended_tasks = true) const;
  /// Every task submitted or loaded so far, ended ones included (O(1)).
  size_t task_count() const;
  /// Pending and admitted tasks (O(1)).
  size_t live_tasks() const;
  /// The latest task with an id: its team (index into module().teams; -1 for a task with an
  /// unknown team) and whether it is live (pending or admitted).
  struct TaskOfId {
    int32_t team = -1;
    bool live = false;
  };
  /// nullopt for an id never submitted or loaded. One hash lookup.
  std::optional<TaskOfId> task_of_id(std::string_view id) const;
  /// The work of queue operations so far: queue comparisons, shape groups moved and relabelled
  /// tasks, and admission cycles. For tests
  /// that check how it grows with the length of a queue (never part of a decision).
  uint64_t queue_work() const;
  /// The per-team work of the admission cycles so far: the teams they looked at for heads and
  /// for changed usage. For tests that check an event's work does not grow with the teams.
  uint64_t team_work() const;
  /// The nominations computed so far (flavor assignments and their searches), cached ones not
  /// counted. For tests that check what a change leaves alone.
  uint64_t nomination_work() const;
  /// A pending task's flavor scan is to resume where a cycle left it (Kueue's scan progress,
  /// docs/semantics-decisions.md "Flavor scan progress"): state that export_state does not carry,
  /// as a Kueue restart loses it. An engine rebuilt from its state now could decide otherwise.
  bool holds_scan_progress() const;
  Time now() const;
  /// When the next finish of a task admitted with a duration is due, or nullopt when no such
  /// task runs. Drops the timers of tasks preempted or ended since (they finish nothing), so
  /// that step(*next_finish(), {}) always finishes a task, exactly as the instant would inside a
  /// step to a later time.
  std::optional<Time> next_finish();
  /// A team's weighted dominant resource share now (docs/kueue-reference.md §6.1): what Kueue
  /// reports as kueue_cluster_queue_weighted_share. +inf for a borrowing team of weight 0, 0
  /// when it borrows nothing. `team` indexes module().teams.
  double weighted_share(uint32_t team) const;
  const ir::Module& module() const;
  /// Invariant violations found with EngineOptions::self_check (empty when none, or when off).
  const std::vector<std::string>& self_check_failures() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gov::engine
