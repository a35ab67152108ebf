// Random, well-typed rule code and random inputs for differential tests of the back ends.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

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
};

/// A module whose rules use every operator over random earlier registers, constants near
/// the int64 bounds, zero divisors, constant sets (dense, sparse, empty, with duplicates)
/// and labels; each rule also has a few message instructions after its condition. Only
/// the rule-related tables (rules, strings, label keys, sets) are filled. Deterministic
/// for a given `rng` state.
ir::Module random_module(std::mt19937_64& rng, const GeneratorOptions& options = {});

/// A RuleInput that owns its label ids; view() points `labels` at them (or at nothing).
struct InputCase {
  ir::RuleInput fields;
  std::vector<int64_t> labels;  // one id per label key
  bool has_labels = true;       // false: RuleInput::labels is null

  ir::RuleInput view() const;
};

/// Random inputs for one module, biased towards its constants and set members, the int64
/// bounds and small numbers; labels absent, empty, other, or a string id. Holds a
/// reference to `module`, which must outlive it.
class InputGenerator {
 public:
  explicit InputGenerator(const ir::Module& module);
  InputCase next(std::mt19937_64& rng) const;

 private:
  const ir::Module& module_;
  std::vector<int64_t> pool_;
};

/// Values worth trying as inputs of `module`: the boundary pool plus every constant and
/// set member (and their neighbours) in its rules.
std::vector<int64_t> interesting_values(const ir::Module& module);

}  // namespace gov::jit::fuzz
