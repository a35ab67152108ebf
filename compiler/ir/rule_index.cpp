#include "compiler/ir/rule_index.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace gov::ir {
namespace {

/// The task fields an index may dispatch on: values that are indices or string ids, which
/// guards compare with constants.
bool is_key_field(int64_t field) {
  return field == static_cast<int64_t>(TaskField::team) || field == static_cast<int64_t>(TaskField::priority) ||
         field == static_cast<int64_t>(TaskField::flavor) || field == static_cast<int64_t>(TaskField::id);
}

/// The key register `reg` reads, when it is one (a key field or a label's value).
std::optional<RuleKey> key_of(const Module& module, const Rule& rule, int32_t reg) {
  if (reg < 0 || static_cast<size_t>(reg) >= rule.code.size()) return std::nullopt;
  const Instr& in = rule.code[static_cast<size_t>(reg)];
  if (in.op == Op::task_field && is_key_field(in.imm)) return RuleKey{RuleKey::Source::task_field, in.imm};
  if (in.op == Op::label_value && in.imm >= 0 && static_cast<size_t>(in.imm) < module.label_keys.size())
    return RuleKey{RuleKey::Source::label, in.imm};
  return std::nullopt;
}

std::optional<int64_t> constant_of(const Rule& rule, int32_t reg) {
  if (reg < 0 || static_cast<size_t>(reg) >= rule.code.size()) return std::nullopt;
  const Instr& in = rule.code[static_cast<size_t>(reg)];
  if (in.op != Op::constant) return std::nullopt;
  return in.imm;
}

using Tests = std::vector<KeyTest>;  // sorted by key

/// Both must hold: every key of either, the intersection where both test one.
Tests conjunction(const Tests& a, const Tests& b) {
  Tests out;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].key < b[j].key)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].key < a[i].key) {
      out.push_back(b[j++]);
    } else {
      KeyTest both{a[i].key, {}};
      std::set_intersection(a[i].values.begin(), a[i].values.end(), b[j].values.begin(), b[j].values.end(),
                            std::back_inserter(both.values));
      out.push_back(std::move(both));
      ++i, ++j;
    }
  }
  return out;
}

/// One must hold: the keys both test, with the union of their values (when it stays small).
Tests disjunction(const Tests& a, const Tests& b) {
  Tests out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].key < b[j].key) {
      ++i;
    } else if (b[j].key < a[i].key) {
      ++j;
    } else {
      KeyTest either{a[i].key, {}};
      std::set_union(a[i].values.begin(), a[i].values.end(), b[j].values.begin(), b[j].values.end(),
                     std::back_inserter(either.values));
      if (either.values.size() <= kMaxKeyValues) out.push_back(std::move(either));
      ++i, ++j;
    }
  }
  return out;
}

/// A register's own test: `key == constant` (either side), or `key in set`.
Tests leaf(const Module& module, const Rule& rule, const Instr& in) {
  if (in.op == Op::eq) {
    std::optional<RuleKey> key = key_of(module, rule, in.a);
    std::optional<int64_t> value = constant_of(rule, in.b);
    if (!key || !value) {
      key = key_of(module, rule, in.b);
      value = constant_of(rule, in.a);
    }
    if (key && value) return {KeyTest{*key, {*value}}};
    return {};
  }
  if (in.op == Op::in_set) {
    const std::optional<RuleKey> key = key_of(module, rule, in.a);
    if (!key || in.imm < 0 || static_cast<size_t>(in.imm) >= module.sets.size()) return {};
    std::vector<int64_t> values = module.sets[static_cast<size_t>(in.imm)];
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    if (values.size() > kMaxKeyValues) return {};
    return {KeyTest{*key, std::move(values)}};
  }
  return {};
}

/// Labels and ids are open sets (the module knows only the constants its rules compare them
/// with): counted as at least this many values.
constexpr size_t kOpenRange = 64;

/// How many values a key can take in a module (at least 1): the denominator of a test's share.
size_t key_range(const Module& module, const RuleKey& key) {
  const size_t strings = std::max(kOpenRange, module.strings.size() + 1);
  if (key.source == RuleKey::Source::label) return strings;
  switch (static_cast<TaskField>(key.index)) {
    case TaskField::team: return std::max<size_t>(1, module.teams.size());
    case TaskField::priority: return module.classes.size() + 1;
    case TaskField::flavor: return module.flavors.size() + 1;
    default: return strings;
  }
}

}  // namespace

std::vector<KeyTest> required_keys(const Module& module, const Rule& rule) {
  const size_t length = std::min<size_t>(rule.condition_length, rule.code.size());
  if (length == 0) return {};
  // Registers are defined in order and read only earlier ones: one pass computes each
  // register's tests from its operands'.
  std::vector<Tests> tests(length);
  const auto operand = [&](int32_t reg, size_t at) -> const Tests* {
    return reg >= 0 && static_cast<size_t>(reg) < at ? &tests[static_cast<size_t>(reg)] : nullptr;
  };
  for (size_t i = 0; i < length; ++i) {
    const Instr& in = rule.code[i];
    const Tests* a = operand(in.a, i);
    const Tests* b = operand(in.b, i);
    if (in.op == Op::logical_and && a && b) {
      tests[i] = conjunction(*a, *b);
    } else if (in.op == Op::logical_or && a && b) {
      tests[i] = disjunction(*a, *b);
    } else {
      tests[i] = leaf(module, rule, in);
    }
  }
  return tests[length - 1];
}

RuleIndex index_rules(const Module& module) {
  RuleIndex index;
  index.built = true;
  std::map<RuleKey, std::map<int64_t, std::vector<uint32_t>>> dimensions;
  for (size_t r = 0; r < module.rules.size(); ++r) {
    const auto rule = static_cast<uint32_t>(r);
    const std::vector<KeyTest> tests = required_keys(module, module.rules[r]);
    const KeyTest* best = nullptr;
    bool impossible = false;
    for (const KeyTest& test : tests) {
      if (test.values.empty()) impossible = true;
      // The smaller share of the key's values first: values / range, compared crosswise.
      if (best == nullptr || test.values.size() * key_range(module, best->key) <
                                 best->values.size() * key_range(module, test.key))
        best = &test;
    }
    if (impossible) {
      index.never.push_back(rule);
    } else if (best == nullptr) {
      index.always.push_back(rule);
    } else {
      for (int64_t value : best->values) dimensions[best->key][value].push_back(rule);
    }
  }
  for (auto& [key, buckets] : dimensions) {
    RuleDimension dimension{key, {}};
    for (auto& [value, rules] : buckets) dimension.buckets.push_back({value, std::move(rules)});
    index.dimensions.push_back(std::move(dimension));
  }
  return index;
}

const std::vector<uint32_t>* bucket_of(const RuleDimension& dimension, int64_t value) {
  const auto it = std::lower_bound(dimension.buckets.begin(), dimension.buckets.end(), value,
                                   [](const RuleBucket& bucket, int64_t v) { return bucket.value < v; });
  return it != dimension.buckets.end() && it->value == value ? &it->rules : nullptr;
}

const RuleIndex* usable_rule_index(const Module& module) {
  return module.rule_index.built && module.rule_index == index_rules(module) ? &module.rule_index : nullptr;
}

std::string key_name(const Module& module, const RuleKey& key) {
  if (key.source == RuleKey::Source::label) {
    const bool known = key.index >= 0 && static_cast<size_t>(key.index) < module.label_keys.size();
    return fmt::format("task.labels[\"{}\"]", known ? module.label_keys[static_cast<size_t>(key.index)] : "?");
  }
  switch (static_cast<TaskField>(key.index)) {
    case TaskField::team: return "task.team";
    case TaskField::priority: return "task.priority";
    case TaskField::flavor: return "task.instance-type";
    case TaskField::id: return "task.id";
    default: return fmt::format("task field {}", key.index);
  }
}

}  // namespace gov::ir
