// Generates typed random rule code over every ir::Op, and inputs that hit its edge cases.
#include "compiler/jit/fuzz/rule_generator.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

namespace gov::jit::fuzz {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// Values where checked arithmetic changes behaviour: the bounds, their neighbours, the
/// square root of the bounds (where multiplication starts to overflow), zero and -1.
constexpr std::array<int64_t, 20> kBoundaryValues = {0,
                                                     1,
                                                     -1,
                                                     2,
                                                     -2,
                                                     3,
                                                     7,
                                                     kMax,
                                                     kMin,
                                                     kMax - 1,
                                                     kMin + 1,
                                                     kMax / 2,
                                                     kMin / 2,
                                                     3037000499,
                                                     -3037000499,
                                                     3037000500,
                                                     -3037000500,
                                                     int64_t{1} << 32,
                                                     int64_t{1} << 62,
                                                     262144};

using Rng = std::mt19937_64;

size_t below(Rng& rng, size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}
bool chance(Rng& rng, unsigned percent) {
  return below(rng, 100) < percent;
}

int64_t random_value(Rng& rng) {
  switch (below(rng, 4)) {
    case 0:
      return kBoundaryValues[below(rng, kBoundaryValues.size())];
    case 1:
      return static_cast<int64_t>(below(rng, 21)) - 10;
    case 2:
      return static_cast<int64_t>(rng());
    default:
      return static_cast<int64_t>(below(rng, 2000)) - 1000;
  }
}

std::vector<int64_t> random_set(Rng& rng) {
  std::vector<int64_t> set;
  const size_t size = below(rng, 13);  // 0..12: empty sets included
  const bool dense = chance(rng, 40);  // a run of small ids, as team and flavor sets are
  const int64_t start = static_cast<int64_t>(below(rng, 8));
  for (size_t i = 0; i < size; ++i)
    set.push_back(dense ? start + static_cast<int64_t>(below(rng, 16)) : random_value(rng));
  return set;  // duplicates are allowed, as in the IR
}

constexpr ir::ValueType kBoolean = ir::ValueType::boolean;
constexpr ir::ValueType kInteger = ir::ValueType::integer;

ir::Instr instr(ir::Op op, ir::ValueType type, int32_t a, int32_t b, int64_t imm = 0) {
  return {op, type, a, b, imm};
}

/// An index into a table of `size` entries, as an immediate.
int64_t index_below(Rng& rng, size_t size) {
  return static_cast<int64_t>(below(rng, size));
}

/// Builds one rule's code, remembering which registers hold booleans.
class RuleBuilder {
 public:
  RuleBuilder(Rng& rng, const ir::Module& module, const GeneratorOptions& options)
      : rng_(rng), module_(module), options_(options) {}

  ir::Rule build(size_t index);

 private:
  ir::Instr leaf();
  ir::Instr operation(bool last);
  ir::Instr binary(ir::Op op, ir::ValueType type, bool boolean_operands);
  int32_t pick(bool want_boolean);
  void push(const ir::Instr& in) {
    code_.push_back(in);
    boolean_.push_back(in.type == ir::ValueType::boolean);
  }

  Rng& rng_;
  const ir::Module& module_;
  const GeneratorOptions& options_;
  std::vector<ir::Instr> code_;
  std::vector<bool> boolean_;
};

ir::Rule RuleBuilder::build(size_t index) {
  ir::Rule rule;
  rule.name = "r" + std::to_string(index);
  rule.action = chance(rng_, 50) ? ir::RuleAction::deny : ir::RuleAction::warn;
  const size_t length = chance(rng_, 2) ? 0 : 1 + below(rng_, options_.max_condition);
  for (size_t i = 0; i < length; ++i)
    push(i == 0 || chance(rng_, 30) ? leaf() : operation(i + 1 == length));
  rule.condition_length = static_cast<uint32_t>(length);
  // Message values come after the condition; evaluating the verdict must ignore them.
  for (size_t i = below(rng_, 3); i > 0; --i) push(leaf());
  rule.code = std::move(code_);
  return rule;
}

ir::Instr RuleBuilder::leaf() {
  constexpr size_t kStats = ir::kTeamStatCount * ir::kResourceCount;
  constexpr size_t kClusterStats = ir::kClusterStatCount * ir::kResourceCount;
  const size_t keys = module_.label_keys.size();
  switch (below(rng_, keys > 0 ? 7 : 5)) {
    case 0:
      return instr(ir::Op::constant, kInteger, -1, -1, random_value(rng_));
    case 1:
      return instr(ir::Op::constant, kBoolean, -1, -1, index_below(rng_, 2));
    case 2:
      return instr(ir::Op::task_field, kInteger, -1, -1, index_below(rng_, ir::kTaskFieldCount));
    case 3:
      return instr(ir::Op::team_stat, kInteger, -1, -1, index_below(rng_, kStats));
    case 4:
      return instr(ir::Op::cluster_stat, kInteger, -1, -1, index_below(rng_, kClusterStats));
    case 5:
      return instr(ir::Op::label_value, ir::ValueType::string, -1, -1, index_below(rng_, keys));
    default:
      return instr(ir::Op::label_present, kBoolean, -1, -1, index_below(rng_, keys));
  }
}

ir::Instr RuleBuilder::operation(bool last) {
  static constexpr std::array<ir::Op, 6> kCompare = {ir::Op::eq, ir::Op::ne, ir::Op::lt,
                                                     ir::Op::le, ir::Op::gt, ir::Op::ge};
  static constexpr std::array<ir::Op, 4> kArithmetic = {ir::Op::add, ir::Op::sub, ir::Op::mul,
                                                        ir::Op::div};
  // The verdict is usually a boolean, as the checker guarantees; sometimes an integer.
  // Every random draw is its own statement: argument evaluation order is unspecified, and
  // a seed must give the same module with every compiler.
  switch (last && chance(rng_, 85) ? below(rng_, 3) : below(rng_, 6)) {
    case 0:
      return binary(kCompare[below(rng_, kCompare.size())], kBoolean, false);
    case 1:
      return binary(chance(rng_, 50) ? ir::Op::logical_and : ir::Op::logical_or, kBoolean, true);
    case 2:
      if (!module_.sets.empty() && chance(rng_, 50)) {
        const int32_t a = pick(false);
        return instr(ir::Op::in_set, kBoolean, a, -1, index_below(rng_, module_.sets.size()));
      }
      return instr(ir::Op::logical_not, kBoolean, pick(true), -1);
    case 5:
      return instr(ir::Op::neg, kInteger, pick(false), -1);
    default:
      return binary(kArithmetic[below(rng_, kArithmetic.size())], kInteger, false);
  }
}

ir::Instr RuleBuilder::binary(ir::Op op, ir::ValueType type, bool boolean_operands) {
  const int32_t a = pick(boolean_operands);
  const int32_t b = pick(boolean_operands);
  return instr(op, type, a, b);
}

/// An earlier register, usually of the wanted kind and usually a recent one (deep chains).
int32_t RuleBuilder::pick(bool want_boolean) {
  std::vector<int32_t> candidates;
  for (size_t r = 0; r < code_.size(); ++r) {
    if (boolean_[r] == want_boolean) candidates.push_back(static_cast<int32_t>(r));
  }
  if (candidates.empty() || chance(rng_, options_.ill_typed_percent)) {
    return static_cast<int32_t>(below(rng_, code_.size()));
  }
  if (chance(rng_, 60))
    return candidates[candidates.size() - 1 - below(rng_, std::min<size_t>(candidates.size(), 4))];
  return candidates[below(rng_, candidates.size())];
}

}  // namespace

ir::Module random_module(Rng& rng, const GeneratorOptions& options) {
  ir::Module module;
  module.strings = {"", "a", "b", "c"};
  for (size_t k = below(rng, options.max_label_keys + 1); k > 0; --k)
    module.label_keys.push_back("k" + std::to_string(k));
  for (size_t s = below(rng, options.max_sets + 1); s > 0; --s)
    module.sets.push_back(random_set(rng));
  for (size_t r = 0; r < options.rules; ++r)
    module.rules.push_back(RuleBuilder(rng, module, options).build(r));
  return module;
}

ir::RuleInput InputCase::view() const {
  ir::RuleInput input = fields;
  input.labels = has_labels ? labels.data() : nullptr;
  return input;
}

std::vector<int64_t> interesting_values(const ir::Module& module) {
  std::vector<int64_t> values(kBoundaryValues.begin(), kBoundaryValues.end());
  const auto add_near = [&values](int64_t v) {
    values.push_back(v);
    if (v != kMax) values.push_back(v + 1);
    if (v != kMin) values.push_back(v - 1);
  };
  for (const ir::Rule& rule : module.rules) {
    for (const ir::Instr& in : rule.code) {
      if (in.op == ir::Op::constant) add_near(in.imm);
    }
  }
  for (const std::vector<int64_t>& set : module.sets) {
    for (int64_t v : set) add_near(v);
  }
  return values;
}

namespace {

int64_t random_label(Rng& rng, const ir::Module& module) {
  switch (below(rng, 5)) {
    case 0:
      return ir::kAbsentLabel;
    case 1:
      return 0;  // present but empty
    case 2:
      return ir::kOtherString;
    case 3:
      return random_value(rng);
    default:
      return static_cast<int64_t>(below(rng, module.strings.size()));
  }
}

}  // namespace

InputGenerator::InputGenerator(const ir::Module& module)
    : module_(module), pool_(interesting_values(module)) {}

InputCase InputGenerator::next(Rng& rng) const {
  InputCase input;
  const auto fill = [&](auto& array) {
    for (int64_t& v : array)
      v = chance(rng, 60) ? pool_[below(rng, pool_.size())] : random_value(rng);
  };
  fill(input.fields.task);
  fill(input.fields.team);
  fill(input.fields.cluster);
  input.has_labels = !chance(rng, 10);
  for (size_t k = 0; k < module_.label_keys.size(); ++k)
    input.labels.push_back(random_label(rng, module_));
  return input;
}

}  // namespace gov::jit::fuzz
