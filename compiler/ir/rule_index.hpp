// The rule index (Cedar's policy slicing): which rules can match a task, from the equality tests
// on the task's team, class, instance type, id and labels that rules' guards start with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/module.hpp"

namespace gov::ir {

/// A key test that allows more values than this is not indexed: a rule is evaluated through
/// every bucket of its values, and the JIT inlines it once per bucket.
inline constexpr size_t kMaxKeyValues = 16;

/// A key and the values a rule's guard allows it (sorted, unique; empty: none).
struct KeyTest {
  RuleKey key;
  std::vector<int64_t> values;
  friend bool operator==(const KeyTest&, const KeyTest&) = default;
};

/// The key tests `rule`'s condition requires for it to match, by key: the conjuncts of its
/// verdict (through `and`) that compare a key with constants (`==`, `in`), a disjunction (`or`)
/// of tests of one key as the union of their values, a conjunction of two as the intersection.
/// Sound: whenever the condition holds, each key's value is among its values. Tests of more
/// than kMaxKeyValues values are left out. Defined for any code (a malformed instruction
/// contributes no test).
std::vector<KeyTest> required_keys(const Module& module, const Rule& rule);

/// The index of the module's rules (RuleIndex, `built` set): each rule goes to `never` when a
/// key test allows no value, else to the dimension of its most selective key test (the fewest
/// values for the key's range of values: teams, classes, instance types; labels and ids as open
/// sets of at least 64; ties to the lower key), else to `always`. Deterministic; lists are
/// ascending.
RuleIndex index_rules(const Module& module);

/// The value `key` has for `input`, as the rules' code reads it: a task field, or a label's id
/// with an absent label (or no labels at all) read as 0, the empty string.
inline int64_t key_value(const RuleKey& key, const RuleInput& input) {
  if (key.source == RuleKey::Source::task_field) return input.task[static_cast<size_t>(key.index)];
  if (input.labels == nullptr) return 0;
  const int64_t id = input.labels[key.index];
  return id == kAbsentLabel ? 0 : id;
}

/// The rules of `dimension` for `value`, or null when no bucket has it (binary search).
const std::vector<uint32_t>* bucket_of(const RuleDimension& dimension, int64_t value);

/// Calls f(rule) for every rule the index says can match `input`: `always`, then each
/// dimension's bucket of the input's value; each rule at most once, ascending within a list.
/// Rules are pure, so the order they are evaluated in changes no verdict.
template <typename F>
void for_each_candidate(const RuleIndex& index, const RuleInput& input, F&& f) {
  for (uint32_t rule : index.always) f(rule);
  for (const RuleDimension& dimension : index.dimensions) {
    if (const std::vector<uint32_t>* rules = bucket_of(dimension, key_value(dimension.key, input))) {
      for (uint32_t rule : *rules) f(rule);
    }
  }
}

/// The index a back end may skip rules on: `module.rule_index` when it is built and is the one
/// the rules give (ir::index_rules), else null (never built, or the rules changed after it was:
/// then every rule is evaluated, so a stale index costs time, never a verdict).
const RuleIndex* usable_rule_index(const Module& module);

/// `task.team`, `task.priority`, `task.instance-type`, `task.id` or `task.labels["key"]`.
std::string key_name(const Module& module, const RuleKey& key);

}  // namespace gov::ir
