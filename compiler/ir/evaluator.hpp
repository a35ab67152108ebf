// The interface both back ends implement: the interpreter (the reference) and the JIT.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "compiler/ir/decisions.hpp"
#include "compiler/model/arithmetic.hpp"
#include "compiler/ir/module.hpp"

namespace gov::ir {

/// Evaluates what the engine asks on its hot path, for one module: the rules, their message
/// values, a task's priority, the quota fit and the may-preempt predicate (decisions.hpp
/// defines the last three). Implementations are immutable after construction and safe to
/// call from many threads at once; they never throw and never read outside their inputs, for
/// any input, and allocate nothing (the interpreter only for rules over 256 instructions).
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Writes 1 into verdicts[i] when rule i matches `input`, else 0; `verdicts` has one
  /// entry per Module::rules entry.
  virtual void evaluate_rules(const RuleInput& input, std::span<uint8_t> verdicts) const = 0;
  /// For a matched rule: values[p] = the value of message part p when it is a `value` part
  /// (other entries are left alone); `values` has one entry per part of the rule's message.
  /// Does nothing for a rule index out of range.
  virtual void message_values(size_t rule, const RuleInput& input,
                              std::span<int64_t> values) const = 0;
  /// ir::priority(module, class_index).
  virtual int32_t priority(int32_t class_index) const = 0;
  /// ir::fit(quota_table(module), input).
  virtual FitResult fit(const FitInput& input) const = 0;
  /// ir::may_preempt(module, pair).
  virtual bool may_preempt(const PreemptionPair& pair) const = 0;
  /// The whole hot-path decision: ir::fill_figures for the slots rules read, the rules, then
  /// ir::conclude. The verdicts themselves are not given back (evaluate_rules gives them): the
  /// hot path reads only the conclusion, and under the JIT verdicts that no one reads are not
  /// stored at all. Out-of-range team or flavor: the empty result.
  virtual DecideResult decide(const DecideInput& input) const = 0;
  /// "interp" or "jit".
  virtual std::string_view name() const = 0;

  /// decide() as a plain function, when the back end has one (the JIT's native gov_decide),
  /// else null: the hot path calls it without a virtual call. Same contract as decide().
  using DecideFunction = void (*)(const DecideInput* input, DecideResult* result);
  DecideFunction decide_function() const { return decide_function_; }

 protected:
  DecideFunction decide_function_ = nullptr;
};

/// Checked arithmetic shared by every back end (gov::model), so that they agree on every input:
/// results saturate at the int64 bounds and division by zero gives 0.
using model::checked_add;
using model::checked_div;
using model::checked_mul;
using model::checked_neg;
using model::checked_sub;

}  // namespace gov::ir
