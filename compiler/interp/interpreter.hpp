// The reference interpreter of rules: the oracle every other back end must agree with.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/ir/rule_index.hpp"

namespace gov::interp {

/// Evaluates rules by walking their instructions, and the other decisions with the reference
/// definitions of decisions.hpp. Holds a reference to the module, which must outlive it.
/// Thread-safe (no mutable state).
class Interpreter final : public ir::Evaluator {
 public:
  explicit Interpreter(const ir::Module& module)
      : module_(module),
        quota_table_(ir::quota_table(module)),
        figure_slots_(ir::figure_slots(module)),
        index_(ir::usable_rule_index(module)) {}

  /// Through the module's rule index when it is usable (ir::usable_rule_index): only the rules
  /// it says can match are evaluated, the others' verdicts are 0.
  void evaluate_rules(const ir::RuleInput& input, std::span<uint8_t> verdicts) const override;
  /// Every rule, index or not: the reference the indexed evaluation is tested against.
  void evaluate_every_rule(const ir::RuleInput& input, std::span<uint8_t> verdicts) const;
  void message_values(size_t rule, const ir::RuleInput& input,
                      std::span<int64_t> values) const override;
  int32_t priority(int32_t class_index) const override {
    return ir::priority(module_, class_index);
  }
  ir::FitResult fit(const ir::FitInput& input) const override {
    return ir::fit(quota_table_, input);
  }
  bool may_preempt(const ir::PreemptionPair& pair) const override {
    return ir::may_preempt(module_, pair);
  }
  ir::DecideResult decide(const ir::DecideInput& input) const override;
  std::string_view name() const override { return "interp"; }

  /// Every register of one rule, for rendering its message (the slow path).
  std::vector<int64_t> registers(size_t rule, const ir::RuleInput& input) const;
  bool matches(size_t rule, const ir::RuleInput& input) const;

 private:
  bool verdict(size_t rule, const ir::RuleInput& input) const;
  /// evaluate_rules, with the first matching deny rule and the other matches counted on the way
  /// (only over the rules evaluated: the others did not match). An empty `verdicts` keeps
  /// no verdict, only the count (decide).
  ir::DecideResult evaluate_candidates(const ir::RuleInput& input, std::span<uint8_t> verdicts) const;
  void count_match(size_t rule, bool matched, ir::DecideResult& result) const;

  const ir::Module& module_;
  ir::QuotaTable quota_table_;
  ir::FigureSlots figure_slots_;
  const ir::RuleIndex* index_;  // null: every rule is evaluated
};

}  // namespace gov::interp
