// The reference interpreter of rules: the oracle every other back end must agree with.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"

namespace gov::interp {

/// Evaluates rules by walking their instructions. Holds a reference to the module, which
/// must outlive it. Thread-safe (no mutable state).
class Interpreter final : public ir::Evaluator {
 public:
  explicit Interpreter(const ir::Module& module) : module_(module) {}

  void evaluate_rules(const ir::RuleInput& input, std::span<uint8_t> verdicts) const override;
  std::string_view name() const override { return "interp"; }

  /// Every register of one rule, for rendering its message (the slow path).
  std::vector<int64_t> registers(size_t rule, const ir::RuleInput& input) const;
  bool matches(size_t rule, const ir::RuleInput& input) const;

 private:
  const ir::Module& module_;
};

/// A rule's message for a matched task: text, register values by type (priorities by
/// class name when one has that weight, teams and flavors by name, sizes as `128 GiB`,
/// millicores as `0.5`), labels from `labels` (absent ones as "").
std::string render_message(const ir::Module& module, size_t rule, const std::vector<int64_t>& registers,
                           const std::vector<std::pair<std::string, std::string>>& labels,
                           std::string_view task_id);

/// A value as text, by type (also used by the engine's explanations).
std::string value_text(const ir::Module& module, ir::ValueType type, int64_t value);

}  // namespace gov::interp
