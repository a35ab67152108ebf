// Hand-built IR for the JIT tests: one-line constructors of instructions and rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/module.hpp"

namespace gov::test::jit {

inline ir::Instr constant(int64_t v) {
  return {ir::Op::constant, ir::ValueType::integer, -1, -1, v};
}
inline ir::Instr task(int64_t field) {
  return {ir::Op::task_field, ir::ValueType::integer, -1, -1, field};
}
inline ir::Instr team(int64_t stat) {
  return {ir::Op::team_stat, ir::ValueType::integer, -1, -1, stat};
}
inline ir::Instr cluster(int64_t stat) {
  return {ir::Op::cluster_stat, ir::ValueType::integer, -1, -1, stat};
}
inline ir::Instr label_value(int64_t key) {
  return {ir::Op::label_value, ir::ValueType::string, -1, -1, key};
}
inline ir::Instr label_present(int64_t key) {
  return {ir::Op::label_present, ir::ValueType::boolean, -1, -1, key};
}
inline ir::Instr unary(ir::Op op, int32_t a) {
  return {op, ir::ValueType::integer, a, -1, 0};
}
inline ir::Instr binary(ir::Op op, int32_t a, int32_t b) {
  return {op, ir::ValueType::integer, a, b, 0};
}
inline ir::Instr in_set(int32_t a, int64_t set) {
  return {ir::Op::in_set, ir::ValueType::boolean, a, -1, set};
}

/// A rule whose condition is all of `condition`, followed by `message` instructions.
inline ir::Rule rule(std::vector<ir::Instr> condition, std::vector<ir::Instr> message = {}) {
  ir::Rule r;
  r.name = "rule";
  r.condition_length = static_cast<uint32_t>(condition.size());
  r.code = std::move(condition);
  r.code.insert(r.code.end(), message.begin(), message.end());
  return r;
}

/// A module with only rules (and the tables they index).
inline ir::Module module_of(std::vector<ir::Rule> rules,
                            std::vector<std::vector<int64_t>> sets = {},
                            std::vector<std::string> label_keys = {}) {
  ir::Module m;
  m.strings = {""};
  for (size_t i = 0; i < rules.size(); ++i) rules[i].name = "rule" + std::to_string(i);
  m.rules = std::move(rules);
  m.sets = std::move(sets);
  m.label_keys = std::move(label_keys);
  return m;
}

}  // namespace gov::test::jit
