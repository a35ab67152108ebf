// The engine's state and the transitions of a task's life (admit, evict, finish, cancel, pending
// decisions), shared by the event handling (engine.cpp) and the admission cycle (cycle.cpp).
// Internal to gov::engine.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/engine/engine_options.hpp"
#include "runtime/engine/explain.hpp"
#include "runtime/engine/flavor_assigner.hpp"
#include "runtime/engine/preemption.hpp"
#include "runtime/engine/quota_state.hpp"
#include "runtime/engine/rules.hpp"
#include "runtime/engine/task_request.hpp"
#include "runtime/engine/task_store.hpp"

namespace gov::engine {

/// A duration-based finish, valid while the task still holds the admission it was set for.
struct FinishTimer {
  Time at = 0;
  uint64_t sequence = 0;  // ties at one time finish in the order the admissions happened
  uint32_t task = 0;
  uint32_t admission = 0;
};
struct FinishesLater {
  bool operator()(const FinishTimer& a, const FinishTimer& b) const {
    return a.at != b.at ? a.at > b.at : a.sequence > b.sequence;
  }
};

/// A pending decision about to be emitted (deduplicated against the task's last one).
struct PendingUpdate {
  PendingReason reason = PendingReason::waiting_for_quota;
  std::string_view message;
  const Assignment* assignment = nullptr;  // short / maximum come from it when set
  const std::vector<Target>* victims = nullptr;
  /// Names `message`'s text when nonzero (Nomination::message_serial): a task whose last
  /// message has the same serial has the same text, and the strings are not compared.
  uint64_t message_serial = 0;
  /// The text the decision shows when it is not `message` (another dialect's words for the same
  /// reasons); `message`, in Kueue HEAD's words, is what tells whether the decision changed.
  std::optional<std::string_view> shown = std::nullopt;
};

struct EngineCore {
  EngineCore(const ir::Module& module, const ir::Evaluator& evaluator, EngineOptions options);

  SearchContext search_context() {
    return SearchContext{module, evaluator, tasks, quota, now, /*shortcuts=*/!options.self_check,
                         options.self_check ? &self_check_failures : nullptr,
                         options.self_check ? nullptr : &own_held_memo};
  }
  const std::string& team_name(const Task& task) const;
  Resolver resolver() const { return {module, evaluator, names, &unavailable_partitions}; }

  const ir::Module& module;
  const ir::Evaluator& evaluator;
  const size_t rule_count;  // module.rules.size(), which the hot path would recompute per call
  EngineOptions options;
  ir::ModuleNames names;
  mutable UnavailablePartitions unavailable_partitions;  // interned by resolve_task
  QuotaState quota;
  TaskStore tasks;
  OwnHeldMemo own_held_memo;  // the searches' (SearchContext::own_held_memo)
  BetweenCycles between_cycles;  // the scheduler's nominations' (SearchContext::between_cycles)
  AdmissionRules rules;
  Time now = 0;
  uint64_t admissions = 0;
  /// Bumped by every change to usage or to the admitted tasks (admit, evict, release): what
  /// nominations computed under one epoch stay valid for (NominationCache).
  uint64_t epoch = 0;
  std::priority_queue<FinishTimer, std::vector<FinishTimer>, FinishesLater> timers;
  std::vector<std::string> self_check_failures;
};

/// A decision about `task` with `at`, `task` and `team` filled in.
Decision base_decision(const EngineCore& core, const Task& task, Outcome outcome);

/// Reserves quota for a task in a flavor and emits its `admitted` decision (usage, borrowed,
/// warnings); starts its duration timer.
void admit(EngineCore& core, uint32_t task, uint32_t flavor, std::vector<Decision>& out);
/// The same for a task of several pod sets, each on its flavor (a task of one pod set: the
/// first flavor); its decision names each pod set's flavor and usage.
void admit(EngineCore& core, uint32_t task, std::span<const int32_t> pod_set_flavors, std::vector<Decision>& out);
/// As the assignment says.
void admit(EngineCore& core, uint32_t task, const Assignment& assignment, std::vector<Decision>& out);
/// Gives back what an admitted task holds (its candidate lists are the caller's).
void uncharge(EngineCore& core, const Task& task);
/// Takes a preempted task's quota back and returns it to its team's queue (it competes again).
void evict(EngineCore& core, uint32_t task);
/// Ends a task (finished or cancelled), frees what it holds, emits the decision and brings the
/// cohort's parked heads back (docs/semantics.md §3: a finish or a cancel does so at once).
void release(EngineCore& core, uint32_t task, Outcome outcome, std::vector<Decision>& out);
/// Emits a pending decision unless it repeats the task's last one (same reason and message).
void emit_pending(EngineCore& core, uint32_t task, const PendingUpdate& update,
                  std::vector<Decision>& out);
/// Emits a `preempted` decision for a victim.
void emit_preempted(EngineCore& core, const Target& target, uint32_t preemptor,
                    std::vector<Decision>& out);

/// Engine::check_admission and prepare (admission_check.cpp; the prepared form is inline in
/// admission_check.hpp).
AdmissionCheck check_admission(const EngineCore& core, const gov::Task& spec);
PreparedTask prepare(const EngineCore& core, const gov::Task& spec);
/// prepare into `out`, reusing its buffers (no allocation once warm).
void prepare_into(const EngineCore& core, const gov::Task& spec, PreparedTask& out);

/// The explanation of a task against the current state (explain.cpp); simulates on a copy of
/// the quota state, so the engine is unchanged.
Explanation explain_task(const EngineCore& core, uint32_t task);

}  // namespace gov::engine
