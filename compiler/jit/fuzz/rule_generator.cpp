// Generates typed random rule code over every ir::Op, and inputs that hit its edge cases.
#include "compiler/jit/fuzz/rule_generator.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "compiler/ir/decisions.hpp"
#include "compiler/ir/rule_index.hpp"

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

/// Mostly realistic amounts (what quotas look like), sometimes 0, sometimes a boundary.
int64_t random_amount(Rng& rng) {
  switch (below(rng, 6)) {
    case 0:
      return 0;
    case 1:
      return kBoundaryValues[below(rng, kBoundaryValues.size())];
    case 2:
      return static_cast<int64_t>(below(rng, 4096)) * 1024;  // MiB-sized
    default:
      return static_cast<int64_t>(below(rng, 65));
  }
}

ir::Resources random_resources(Rng& rng, unsigned unlimited_percent) {
  ir::Resources amounts{};  // the five resources; the random modules have no partition columns
  for (size_t i = 0; i < ir::kResourceCount; ++i)
    amounts[i] = chance(rng, unlimited_percent) ? ir::kUnlimited : random_amount(rng);
  return amounts;
}

void add_random_quotas(Rng& rng, ir::Module& module, const GeneratorOptions& options) {
  for (size_t f = below(rng, options.max_flavors + 1); f > 0; --f) {
    ir::Flavor flavor;
    flavor.name = "f" + std::to_string(module.flavors.size());
    for (size_t i = 0; i < ir::kResourceCount; ++i) flavor.per_instance[i] = static_cast<int64_t>(below(rng, 9));
    flavor.capacity = static_cast<int64_t>(below(rng, 20));
    module.flavors.push_back(flavor);
  }
  for (size_t c = below(rng, options.max_classes + 1); c > 0; --c) {
    const int32_t weight = chance(rng, 10) ? static_cast<int32_t>(rng())
                                           : static_cast<int32_t>(below(rng, 2001)) - 1000;
    module.classes.push_back({"c" + std::to_string(module.classes.size()), weight});
  }
  module.settings.rank_by_priority = !chance(rng, 20);
  module.settings.fair_sharing = chance(rng, 50);
  module.settings.idle_resource_sharing = chance(rng, 30);
  module.settings.default_class =
      module.classes.empty() || chance(rng, 50) ? -1 : static_cast<int32_t>(below(rng, module.classes.size()));
  // Now and then a policy with many teams: past the JIT's kUnrolledCells, gov_decide walks
  // tables instead of one block per team, and both forms must agree with the interpreter.
  const size_t team_count = chance(rng, 15) ? 40 + below(rng, 41) : below(rng, options.max_teams + 1);
  for (size_t t = team_count; t > 0; --t) {
    ir::Team team;
    team.name = "t" + std::to_string(module.teams.size());
    for (size_t f = 0; f < module.flavors.size(); ++f) {
      if (chance(rng, 30)) continue;
      ir::FlavorQuota quota;
      quota.flavor = static_cast<uint32_t>(f);
      quota.nominal = random_resources(rng, 0);
      for (ir::Amount& amount : quota.nominal) amount = std::max<ir::Amount>(0, amount);
      quota.borrowing_limit = random_resources(rng, 40);
      for (ir::Amount& amount : quota.borrowing_limit) amount = std::max<ir::Amount>(0, amount);
      quota.lending_limit = random_resources(rng, 60);
      for (ir::Amount& amount : quota.lending_limit) amount = std::max<ir::Amount>(0, amount);
      team.quotas.push_back(quota);
    }
    // Declared order is the order instance types are tried and need not be the catalog's (the
    // JIT finds a team's cell of an instance type in a copy of its list sorted by type): every
    // other team declares them in descending order (no draw, so the generator's stream is as it was).
    if (module.teams.size() % 2 == 1) std::reverse(team.quotas.begin(), team.quotas.end());
    team.sharing = static_cast<ir::Sharing>(below(rng, 3));
    team.within_team = static_cast<ir::WithinTeam>(below(rng, 3));
    team.reclaim_within_cohort = static_cast<ir::ReclaimWithinCohort>(below(rng, 3));
    team.when_can_borrow = static_cast<ir::WhenCanBorrow>(below(rng, 2));
    team.flavor_preference = static_cast<ir::FlavorPreference>(below(rng, 2));
    team.active = !chance(rng, 10);
    module.teams.push_back(team);
  }
  // Every rule shows its message registers (and some text) in its message.
  for (ir::Rule& rule : module.rules) {
    rule.message.push_back({ir::MessagePart::Kind::text, "rule " + rule.name + ": ", -1, {}, -1});
    for (size_t reg = rule.condition_length; reg < rule.code.size(); ++reg) {
      rule.message.push_back(
          {ir::MessagePart::Kind::value, "", static_cast<int32_t>(reg), rule.code[reg].type, -1});
    }
    if (rule.condition_length > 0 && chance(rng, 50)) {
      const auto reg = static_cast<int32_t>(below(rng, rule.condition_length));
      rule.message.push_back({ir::MessagePart::Kind::value, "", reg, rule.code[reg].type, -1});
    }
  }
}

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
  add_random_quotas(rng, module, options);
  module.rule_index = ir::index_rules(module);  // as lowering builds it: the back ends use it
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
    : module_(module), pool_(interesting_values(module)) {
  const ir::QuotaTable table = ir::quota_table(module);
  const auto add_near = [this](int64_t v) {
    amounts_.push_back(v);
    if (v != kMax) amounts_.push_back(v + 1);
    if (v != kMin) amounts_.push_back(v - 1);
  };
  for (const ir::QuotaCell& cell : table.cells) {
    for (size_t i = 0; i < ir::kResourceCount; ++i) {
      add_near(cell.nominal[i]);
      add_near(cell.local[i]);
      add_near(cell.lendable[i]);
      if (cell.borrowing_limit[i] != ir::kUnlimited) add_near(cell.borrowing_limit[i]);
    }
  }
  for (const ir::Resources& quota : table.cohort_quota) {
    for (size_t i = 0; i < ir::kResourceCount; ++i) add_near(quota[i]);
  }
  for (int64_t v = 0; v <= 16; ++v) amounts_.push_back(v);
}

int64_t InputGenerator::amount(Rng& rng) const {
  if (chance(rng, 20)) return 0;
  if (chance(rng, 75)) return amounts_[below(rng, amounts_.size())];
  return random_value(rng);
}

DecisionCase InputGenerator::decision(Rng& rng) const {
  DecisionCase out;
  // Sometimes one past the end, or anything: out-of-range indices must answer "no".
  const auto index = [&rng](size_t size) -> uint32_t {
    if (chance(rng, 5)) return static_cast<uint32_t>(rng());
    return static_cast<uint32_t>(below(rng, size + 1));
  };
  out.team = index(module_.teams.size());
  out.flavor = index(module_.flavors.size());
  for (size_t i = 0; i < ir::kResourceCount; ++i) {
    out.request[i] = amount(rng);
    out.usage[i] = amount(rng);
    out.cohort_usage[i] = amount(rng);
  }
  out.class_index = chance(rng, 10) ? static_cast<int32_t>(rng())
                                    : static_cast<int32_t>(below(rng, module_.classes.size() + 2)) - 1;
  out.pair.preemptor_team = index(module_.teams.size());
  out.pair.candidate_team = chance(rng, 40) ? out.pair.preemptor_team : index(module_.teams.size());
  const auto priority = [&rng]() -> int32_t {
    if (chance(rng, 10)) return static_cast<int32_t>(rng());
    return static_cast<int32_t>(below(rng, 7)) - 3;
  };
  out.pair.preemptor_priority = priority();
  out.pair.candidate_priority = chance(rng, 30) ? out.pair.preemptor_priority : priority();
  out.pair.preemptor_submitted = static_cast<int64_t>(below(rng, 5));
  out.pair.candidate_submitted = chance(rng, 20) ? random_value(rng) : static_cast<int64_t>(below(rng, 5));
  for (int64_t& field : out.task) field = amount(rng);
  const auto field = [](ir::TaskField f) { return static_cast<size_t>(f); };
  out.task[field(ir::TaskField::team)] =
      chance(rng, 3) ? random_value(rng) : static_cast<int64_t>(below(rng, module_.teams.size() + 1));
  out.task[field(ir::TaskField::flavor)] =
      chance(rng, 3) ? random_value(rng) : static_cast<int64_t>(below(rng, module_.flavors.size() + 2)) - 1;
  // Rows of ir::kColumnCount amounts, as the engine keeps them; the back ends read the five
  // resources of each (partition columns are the engine's, zero here).
  const auto rows = [&](std::vector<int64_t>& table, size_t count) {
    for (size_t row = 0; row < count; ++row) {
      for (size_t i = 0; i < ir::kColumnCount; ++i) table.push_back(i < ir::kResourceCount ? amount(rng) : 0);
    }
  };
  // The usage table has a row per quota cell slot (ir::UsageView): row 0, the absent cell's,
  // is zeros, then one per declared quota.
  out.usage_table.assign(ir::kColumnCount, 0);
  size_t declared = 0;
  for (const ir::Team& team : module_.teams) declared += team.quotas.size();
  rows(out.usage_table, declared);
  for (size_t f = 0; f < module_.flavors.size(); ++f) {
    rows(out.cohort_table, 1);
    rows(out.flavor_table, 1);
  }
  return out;
}

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
  input.decision = decision(rng);
  return input;
}

}  // namespace gov::jit::fuzz
