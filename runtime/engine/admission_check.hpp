// The last step of Engine::check_admission: one Evaluator::decide call (rules and quota fit;
// native code under the JIT) on a resolved task, mapped to an AdmissionCheck. Inline, so that
// the prepared form of check_admission is a single function around the generated code: the
// hot path is measured with its wrapper (docs/benchmarks.md), and a call level or a rebuilt view
// there costs as much as a rule. Internal to gov::engine.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "runtime/engine/engine_core.hpp"

namespace gov::engine {

/// Verdicts of up to this many rules go to the stack; more, to a per-thread buffer.
inline constexpr size_t kVerdictsOnStack = 256;

/// Evaluator::decide, natively under the JIT (no virtual call), with `verdicts` room for
/// every rule.
[[gnu::always_inline]] inline ir::DecideResult evaluate_decide(const EngineCore& core,
                                                              const ir::DecideInput& input,
                                                              uint8_t* verdicts) {
  ir::DecideResult result;
  if (const ir::Evaluator::DecideFunction native = core.evaluator.decide_function()) {
    native(&input, verdicts, &result);
  } else {
    result = core.evaluator.decide(input, std::span<uint8_t>(verdicts, core.rule_count));
  }
  return result;
}

/// evaluate_decide with more than kVerdictsOnStack rules (admission_check.cpp): out of line,
/// so that the common case keeps its registers.
ir::DecideResult evaluate_decide_many_rules(const EngineCore& core, const ir::DecideInput& input);

/// Evaluator::decide on a task's fields (RuleInput::task layout) and label ids, against the
/// core's current usage; `team` and `priority` are copied into the answer. Always inlined
/// (GCC keeps a function with a 256-byte array out of line otherwise).
[[gnu::always_inline]] inline AdmissionCheck decide(const EngineCore& core, int32_t team,
                                                   int32_t priority, const int64_t* fields,
                                                   const int64_t* label_ids) {
  const ir::DecideInput input{fields, label_ids, core.quota.usage_view()};
  ir::DecideResult result;
  if (core.rule_count <= kVerdictsOnStack) [[likely]] {
    uint8_t verdicts[kVerdictsOnStack];
    result = evaluate_decide(core, input, verdicts);
  } else {
    result = evaluate_decide_many_rules(core, input);
  }
  AdmissionCheck out;
  out.team = team;
  out.priority = priority;
  out.warnings = result.warnings;
  if (result.deny_rule >= 0) {
    out.verdict = AdmissionCheck::Verdict::reject;
    out.rule = result.deny_rule;
  } else if (result.flavor >= 0) {
    out.verdict = AdmissionCheck::Verdict::admit;
    out.flavor = result.flavor;
    out.borrows = result.borrows != 0;
  } else {
    out.verdict = AdmissionCheck::Verdict::pending;
  }
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
