// The interface both back ends implement: the interpreter (the reference) and the JIT.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "compiler/ir/module.hpp"

namespace gov::ir {

/// Evaluates a module's rules. Implementations are immutable after construction and safe
/// to call from many threads at once; they never throw and never read outside `input`.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Writes 1 into verdicts[i] when rule i matches `input`, else 0; `verdicts` has one
  /// entry per Module::rules entry.
  virtual void evaluate_rules(const RuleInput& input, std::span<uint8_t> verdicts) const = 0;
  /// "interp" or "jit".
  virtual std::string_view name() const = 0;
};

/// Checked arithmetic shared by every back end, so that they agree on every input:
/// results saturate at the int64 bounds and division by zero gives 0.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_sub(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);
int64_t checked_div(int64_t a, int64_t b);
int64_t checked_neg(int64_t a);

}  // namespace gov::ir
