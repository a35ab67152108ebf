// Random, well-typed rule code and random inputs for differential tests of the back ends.
#pragma once

#include <cstdint>
#include <array>
#include <random>
#include <vector>

#include "compiler/ir/decisions.hpp"
#include "compiler/ir/module.hpp"

namespace gov::jit::fuzz {

struct GeneratorOptions {
  size_t rules = 8;           // rules per module
  size_t max_condition = 24;  // instructions per condition, at most
  size_t max_label_keys = 4;
  size_t max_sets = 4;
  /// Percent of operands picked from any earlier register, whatever its type (booleans
  /// in arithmetic, integers in `and`): the back ends must agree on those too.
  unsigned ill_typed_percent = 10;
  /// The quota side: up to this many teams, instance types and priority classes.
  size_t max_teams = 6;
  size_t max_flavors = 4;
  size_t max_classes = 5;
};

/// A module whose rules use every operator over random earlier registers, constants near
/// the int64 bounds, zero divisors, constant sets (dense, sparse, empty, with duplicates)
/// and labels; each rule also has a few message instructions after its condition, shown by
/// its message. The quota side is random too: instance types, priority classes (a default
/// one or none, ranked or fcfs), teams with quotas on some types (nominal, borrowing and
/// lending limits, each sometimes unlimited or 0), every sharing strategy and preemption
/// policy, idle-resource sharing on or off. Deterministic for a given `rng` state.
ir::Module random_module(std::mt19937_64& rng, const GeneratorOptions& options = {});

/// The inputs of the non-rule decisions: a fit test, a class index, a may-preempt pair.
/// Teams, flavors and classes are sometimes out of range.
struct DecisionCase {
  uint32_t team = 0;
  uint32_t flavor = 0;
  ir::Resources request{};
  ir::Resources usage{};
  ir::Resources cohort_usage{};
  int32_t class_index = -1;
  ir::PreemptionPair pair;
  // A whole decision: task fields (team and flavor mostly in range) and a usage state.
  std::array<int64_t, ir::kTaskFieldCount> task{};
  std::vector<ir::Amount> usage_table;   // per quota cell slot (ir::UsageView) × ir::kColumnCount
  std::vector<ir::Amount> cohort_table;  // flavors × resources
  std::vector<ir::Amount> flavor_table;  // flavors × resources

  ir::FitInput fit_input() const {
    return {team, flavor, request.data(), usage.data(), cohort_usage.data()};
  }
  ir::DecideInput decide_input(const int64_t* labels) const {
    return {task.data(), labels, {usage_table.data(), cohort_table.data(), flavor_table.data()}};
  }
};

/// A RuleInput that owns its label ids; view() points `labels` at them (or at nothing).
struct InputCase {
  ir::RuleInput fields;
  std::vector<int64_t> labels;  // one id per label key
  bool has_labels = true;       // false: RuleInput::labels is null
  DecisionCase decision;

  ir::RuleInput view() const;
};

/// Random inputs for one module, biased towards its constants and set members, the int64
/// bounds and small numbers; labels absent, empty, other, or a string id; amounts near its
/// quotas. Holds a reference to `module`, which must outlive it.
class InputGenerator {
 public:
  explicit InputGenerator(const ir::Module& module);
  InputCase next(std::mt19937_64& rng) const;

 private:
  DecisionCase decision(std::mt19937_64& rng) const;
  int64_t amount(std::mt19937_64& rng) const;

  const ir::Module& module_;
  std::vector<int64_t> pool_;
  std::vector<int64_t> amounts_;  // quota constants and their neighbours, small numbers
};

/// Values worth trying as inputs of `module`: the boundary pool plus every constant and
/// set member (and their neighbours) in its rules.
std::vector<int64_t> interesting_values(const ir::Module& module);

}  // namespace gov::jit::fuzz
