// The last step of Engine::check_admission: one Evaluator::decide call (rules and quota fit;
// native code under the JIT) on a resolved task, mapped to an AdmissionCheck. Inline, so that
// the prepared form of check_admission is a single function around the generated code: the
// hot path is measured with its wrapper (docs/benchmarks.md), and a call level or a rebuilt view
// there costs as much as a rule. Internal to gov::engine.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/engine/engine_core.hpp"

namespace gov::engine {

/// Evaluator::decide, natively under the JIT (no virtual call).
[[gnu::always_inline]] inline ir::DecideResult evaluate_decide(const EngineCore& core,
                                                              const ir::DecideInput& input) {
  ir::DecideResult result;
  if (const ir::Evaluator::DecideFunction native = core.evaluator.decide_function()) {
    native(&input, &result);
  } else {
    result = core.evaluator.decide(input);
  }
  return result;
}

/// Evaluator::decide on a task's fields (RuleInput::task layout) and label ids, against the
/// core's current usage; `team` and `priority` are copied into the answer. Always inlined, so
/// that the prepared check_admission is one function around the generated code.
[[gnu::always_inline]] inline AdmissionCheck decide(const EngineCore& core, int32_t team,
                                                   int32_t priority, const int64_t* fields,
                                                   const int64_t* label_ids) {
  const ir::DecideInput input{fields, label_ids, core.quota.usage_view()};
  const ir::DecideResult result = evaluate_decide(core, input);
  // Copied as they are: a rejected task has no flavor and a task that is not fitted does not
  // borrow (ir::DecideResult), so every field already holds what its verdict asks.
  AdmissionCheck out;
  out.team = team;
  out.priority = priority;
  out.warnings = result.warnings;
  out.rule = result.deny_rule;
  out.flavor = result.flavor;
  out.borrows = result.borrows != 0;
  out.verdict = result.deny_rule >= 0 ? AdmissionCheck::Verdict::reject
                : result.flavor >= 0  ? AdmissionCheck::Verdict::admit
                                      : AdmissionCheck::Verdict::pending;
  return out;
}

/// `checked` (decide's answer) for a task that asks for GPU partitions: the back ends' fused
/// fit covers the five resources, so the flavor is chosen again with the partition columns
/// checked by the reference formulas, by conclude's rule (admission_check.cpp). Out of line:
/// partition requests are rare, and the common case keeps its registers.
AdmissionCheck with_partitions(const EngineCore& core, AdmissionCheck checked, int32_t requested_flavor,
                               const ir::Resources& request);

/// `checked` (decide's answer on the task's totals) for a task of several pod sets: each pod set
/// in order takes a flavor by conclude's rule, its request counted on top of the earlier pod
/// sets' in the same flavor; the task is admitted only if every pod set gets one (on the first
/// pod set's flavor, borrowing if any pod set borrows). Out of line.
AdmissionCheck with_pod_sets(const EngineCore& core, AdmissionCheck checked, std::span<const PreparedPodSet> pod_sets);

/// `checked` with an admission turned into pending: the task asks for a GPU partition profile no
/// quota gives (no flavor has it).
AdmissionCheck no_flavor(AdmissionCheck checked);

/// check_admission of a prepared task that asks for GPU partitions (out of line).
AdmissionCheck check_with_partitions(const EngineCore& core, const PreparedTask& task);

/// check_admission of a prepared task. An invalid task, or one prepared against another
/// policy (other indices and string ids), answers `invalid`.
[[gnu::always_inline]] inline AdmissionCheck check_admission(const EngineCore& core,
                                                            const PreparedTask& task) {
  if (task.policy != &core.module) [[unlikely]] {
    AdmissionCheck out;
    out.team = task.team;
    out.priority = task.priority;
    return out;
  }
  // The flag is tested before decide, so that the common path returns decide's answer in place:
  // a copy of it kept for the partition path stalled the return on store forwarding (+5 ns).
  if (task.partitions) [[unlikely]] return check_with_partitions(core, task);
  return decide(core, task.team, task.priority, task.fields.data(), task.label_ids.data());
}

}  // namespace gov::engine
