#include "compiler/interp/interpreter.hpp"

#include <algorithm>
#include <cstddef>

namespace gov::interp {
namespace {

using ir::Op;

/// Runs the first `n` instructions of `rule` into registers `r`; returns the last value.
int64_t run(const ir::Module& module, const ir::Rule& rule, const ir::RuleInput& input, int64_t* r, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const ir::Instr& in = rule.code[i];
    const int64_t a = in.a >= 0 ? r[in.a] : 0;
    const int64_t b = in.b >= 0 ? r[in.b] : 0;
    int64_t v = 0;
    switch (in.op) {
      case Op::constant: v = in.imm; break;
      case Op::task_field: v = input.task[static_cast<size_t>(in.imm)]; break;
      case Op::team_stat: v = input.team[static_cast<size_t>(in.imm)]; break;
      case Op::cluster_stat: v = input.cluster[static_cast<size_t>(in.imm)]; break;
      case Op::label_value: {
        const int64_t id = input.labels ? input.labels[in.imm] : ir::kAbsentLabel;
        v = id == ir::kAbsentLabel ? 0 : id;
        break;
      }
      case Op::label_present: v = input.labels && input.labels[in.imm] != ir::kAbsentLabel; break;
      case Op::eq: v = a == b; break;
      case Op::ne: v = a != b; break;
      case Op::lt: v = a < b; break;
      case Op::le: v = a <= b; break;
      case Op::gt: v = a > b; break;
      case Op::ge: v = a >= b; break;
      case Op::logical_and: v = (a != 0) && (b != 0); break;
      case Op::logical_or: v = (a != 0) || (b != 0); break;
      case Op::logical_not: v = a == 0; break;
      case Op::add: v = ir::checked_add(a, b); break;
      case Op::sub: v = ir::checked_sub(a, b); break;
      case Op::mul: v = ir::checked_mul(a, b); break;
      case Op::div: v = ir::checked_div(a, b); break;
      case Op::neg: v = ir::checked_neg(a); break;
      case Op::in_set: {
        const auto& set = module.sets[static_cast<size_t>(in.imm)];
        v = std::find(set.begin(), set.end(), a) != set.end();
        break;
      }
    }
    r[i] = v;
  }
  return n == 0 ? 0 : r[n - 1];
}

}  // namespace

bool Interpreter::verdict(size_t rule, const ir::RuleInput& input) const {
  // Registers live on the stack for small rules; large ones use a heap buffer.
  const ir::Rule& r_rule = module_.rules[rule];
  int64_t small[256];
  if (r_rule.condition_length <= std::size(small)) return run(module_, r_rule, input, small, r_rule.condition_length) != 0;
  std::vector<int64_t> large(r_rule.condition_length);
  return run(module_, r_rule, input, large.data(), r_rule.condition_length) != 0;
}

// Only the rules the index says can match are evaluated; the others cannot match (their guard
// requires another value of a key), so their verdict is 0 without evaluating them.
ir::DecideResult Interpreter::evaluate_candidates(const ir::RuleInput& input, std::span<uint8_t> verdicts) const {
  ir::DecideResult result;
  const bool keep = !verdicts.empty();
  if (index_ == nullptr) {
    for (size_t i = 0; i < module_.rules.size(); ++i) {
      const bool matched = verdict(i, input);
      if (keep) verdicts[i] = matched;
      count_match(i, matched, result);
    }
  } else {
    if (keep) std::fill(verdicts.begin(), verdicts.begin() + static_cast<std::ptrdiff_t>(module_.rules.size()), 0);
    ir::for_each_candidate(*index_, input, [&](uint32_t rule) {
      const bool matched = verdict(rule, input);
      if (keep) verdicts[rule] = matched;
      count_match(rule, matched, result);
    });
  }
  if (result.deny_rule >= 0) --result.warnings;  // counted as a match above: warnings are the others
  return result;
}

void Interpreter::count_match(size_t rule, bool matched, ir::DecideResult& result) const {
  if (!matched) return;
  ++result.warnings;
  const bool denies = module_.rules[rule].action == ir::RuleAction::deny;
  // The first deny rule in declared order, whatever order the candidates come in.
  if (denies && (result.deny_rule < 0 || rule < static_cast<size_t>(result.deny_rule)))
    result.deny_rule = static_cast<int32_t>(rule);
}

void Interpreter::evaluate_rules(const ir::RuleInput& input, std::span<uint8_t> verdicts) const {
  evaluate_candidates(input, verdicts);
}

void Interpreter::evaluate_every_rule(const ir::RuleInput& input, std::span<uint8_t> verdicts) const {
  for (size_t i = 0; i < module_.rules.size(); ++i) verdicts[i] = verdict(i, input);
}

std::vector<int64_t> Interpreter::registers(size_t rule, const ir::RuleInput& input) const {
  const ir::Rule& r_rule = module_.rules[rule];
  std::vector<int64_t> r(r_rule.code.size());
  run(module_, r_rule, input, r.data(), r_rule.code.size());
  return r;
}

void Interpreter::message_values(size_t rule, const ir::RuleInput& input,
                                 std::span<int64_t> values) const {
  if (rule >= module_.rules.size()) return;
  const ir::Rule& r_rule = module_.rules[rule];
  int64_t small[256];
  std::vector<int64_t> large;
  int64_t* registers = small;
  if (r_rule.code.size() > std::size(small)) {
    large.resize(r_rule.code.size());
    registers = large.data();
  }
  run(module_, r_rule, input, registers, r_rule.code.size());
  for (size_t p = 0; p < r_rule.message.size() && p < values.size(); ++p) {
    const ir::MessagePart& part = r_rule.message[p];
    const bool readable = part.reg >= 0 && static_cast<size_t>(part.reg) < r_rule.code.size();
    if (part.kind == ir::MessagePart::Kind::value && readable) values[p] = registers[part.reg];
  }
}

ir::DecideResult Interpreter::decide(const ir::DecideInput& in) const {
  if (!ir::decide_input_in_range(module_, in)) return {};
  ir::RuleInput input;
  std::copy_n(in.task, ir::kTaskFieldCount, input.task.begin());
  input.labels = in.labels;
  const auto team = static_cast<uint32_t>(in.task[static_cast<size_t>(ir::TaskField::team)]);
  const auto flavor = static_cast<int32_t>(in.task[static_cast<size_t>(ir::TaskField::flavor)]);
  ir::fill_figures(module_, quota_table_, in.usage, team, flavor, figure_slots_, input);
  return ir::conclude_fit(module_, quota_table_, in, evaluate_candidates(input, {}));
}

bool Interpreter::matches(size_t rule, const ir::RuleInput& input) const {
  const ir::Rule& r_rule = module_.rules[rule];
  std::vector<int64_t> r(r_rule.condition_length);
  return run(module_, r_rule, input, r.data(), r_rule.condition_length) != 0;
}

}  // namespace gov::interp
