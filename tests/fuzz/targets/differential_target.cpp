// Fuzz target `differential`: the JIT against the reference interpreter on rule code, quotas
// and preemption settings decoded from the input bytes (so coverage feedback steers what
// code gets generated, unlike tools/jit-fuzz's seeded generator), with inputs decoded from
// the rest of the bytes plus generated ones near the module's constants. Properties: both
// back ends give the same verdicts, message values, priorities, fit results, may-preempt
// answers and whole decisions; a module with one out-of-range operand or index is refused with invalid_module,
// never compiled; a serialised object with a byte changed does not deserialise.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/decisions.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/jit/fuzz/differential.hpp"
#include "compiler/jit/fuzz/rule_generator.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/jit/validate.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

using gov::fuzz::ByteReader;
namespace ir = gov::ir;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// A value: mostly where checked arithmetic changes behaviour, sometimes any 64 bits.
int64_t value(ByteReader& in) {
  static constexpr std::array<int64_t, 16> kEdges = {
      0, 1, -1, 2, kMax, kMin, kMax - 1, kMin + 1, 3037000499, -3037000499, 3037000500,
      -3037000500, int64_t{1} << 32, int64_t{1} << 62, 1000, 262144};
  switch (in.below(4)) {
    case 0: return kEdges[in.below(kEdges.size())];
    case 1: return static_cast<int64_t>(in.below(21)) - 10;
    case 2: return in.i64();
    default: return static_cast<int64_t>(in.below(4096)) - 2048;
  }
}

/// A quota amount: small, zero, huge or unlimited.
ir::Amount amount(ByteReader& in) {
  switch (in.below(4)) {
    case 0: return ir::kUnlimited;
    case 1: return value(in);
    default: return static_cast<ir::Amount>(in.below(64));
  }
}

ir::Resources resources(ByteReader& in) {
  ir::Resources r{};
  for (size_t i = 0; i < ir::kResourceCount; ++i) r[i] = amount(in);  // no partition columns
  return r;
}

constexpr std::array<ir::Op, 24> kOps = {
    ir::Op::constant, ir::Op::task_field, ir::Op::team_stat, ir::Op::cluster_stat, ir::Op::label_value,
    ir::Op::label_present, ir::Op::eq, ir::Op::ne, ir::Op::lt, ir::Op::le, ir::Op::gt, ir::Op::ge,
    ir::Op::logical_and, ir::Op::logical_or, ir::Op::logical_not, ir::Op::add, ir::Op::sub, ir::Op::mul,
    ir::Op::div, ir::Op::neg, ir::Op::in_set, ir::Op::constant, ir::Op::task_field, ir::Op::eq};

/// One instruction at register `index`: operands are earlier registers of any type (the back
/// ends must agree on ill-typed code too), the result type is the operator's.
ir::Instr instruction(ByteReader& in, const ir::Module& module, size_t index) {
  ir::Op op = kOps[in.below(kOps.size())];
  if (index == 0 && gov::jit::reads_a(op)) op = ir::Op::task_field;  // nothing to read yet
  if (op == ir::Op::in_set && module.sets.empty()) op = ir::Op::logical_not;
  if ((op == ir::Op::label_value || op == ir::Op::label_present) && module.label_keys.empty()) op = ir::Op::constant;
  ir::Instr instr{op, ir::ValueType::integer, -1, -1, 0};
  const auto reg = [&] { return static_cast<int32_t>(in.below(static_cast<uint32_t>(index))); };
  if (gov::jit::reads_a(op)) instr.a = reg();
  if (gov::jit::reads_b(op)) instr.b = reg();
  switch (op) {
    case ir::Op::constant:
      instr.type = in.flag() ? ir::ValueType::boolean : ir::ValueType::integer;
      instr.imm = instr.type == ir::ValueType::boolean ? in.below(2) : value(in);
      break;
    case ir::Op::task_field: instr.imm = in.below(ir::kTaskFieldCount); break;
    case ir::Op::team_stat: instr.imm = in.below(ir::kTeamStatCount * ir::kResourceCount); break;
    case ir::Op::cluster_stat: instr.imm = in.below(ir::kClusterStatCount * ir::kResourceCount); break;
    case ir::Op::label_value:
      instr.type = ir::ValueType::string;
      instr.imm = in.below(static_cast<uint32_t>(module.label_keys.size()));
      break;
    case ir::Op::label_present:
      instr.type = ir::ValueType::boolean;
      instr.imm = in.below(static_cast<uint32_t>(module.label_keys.size()));
      break;
    case ir::Op::in_set:
      instr.type = ir::ValueType::boolean;
      instr.imm = in.below(static_cast<uint32_t>(module.sets.size()));
      break;
    case ir::Op::eq: case ir::Op::ne: case ir::Op::lt: case ir::Op::le: case ir::Op::gt: case ir::Op::ge:
    case ir::Op::logical_and: case ir::Op::logical_or: case ir::Op::logical_not:
      instr.type = ir::ValueType::boolean;
      break;
    case ir::Op::add: case ir::Op::sub: case ir::Op::mul: case ir::Op::div: case ir::Op::neg:
      break;
  }
  return instr;
}

ir::Rule rule(ByteReader& in, const ir::Module& module, size_t number) {
  ir::Rule rule;
  rule.name = fmt::format("r{}", number);
  rule.action = in.flag() ? ir::RuleAction::deny : ir::RuleAction::warn;
  rule.condition_length = in.below(33);
  const size_t message_code = in.below(4);
  for (size_t i = 0; i < rule.condition_length + message_code; ++i) rule.code.push_back(instruction(in, module, i));
  if (!rule.code.empty()) {
    for (size_t p = in.below(4); p > 0; --p) {
      ir::MessagePart part;
      part.kind = ir::MessagePart::Kind::value;
      part.reg = static_cast<int32_t>(in.below(static_cast<uint32_t>(rule.code.size())));
      part.type = rule.code[static_cast<size_t>(part.reg)].type;
      rule.message.push_back(part);
    }
  }
  return rule;
}

void decode_quotas(ByteReader& in, ir::Module& module) {
  for (size_t f = 1 + in.below(3); f > 0; --f) {
    module.flavors.push_back({fmt::format("f{}", f), resources(in), static_cast<int64_t>(in.below(16))});
  }
  for (size_t c = in.below(4); c > 0; --c) {
    module.classes.push_back({fmt::format("c{}", c), static_cast<int32_t>(value(in))});
  }
  for (size_t t = 1 + in.below(4); t > 0; --t) {
    ir::Team team;
    team.name = fmt::format("t{}", t);
    for (uint32_t f = 0; f < module.flavors.size(); ++f) {
      if (!in.flag()) continue;
      team.quotas.push_back({f, resources(in), resources(in), resources(in)});
    }
    team.sharing = static_cast<ir::Sharing>(in.below(3));
    team.within_team = static_cast<ir::WithinTeam>(in.below(3));
    team.reclaim_within_cohort = static_cast<ir::ReclaimWithinCohort>(in.below(3));
    team.borrow_within_cohort = static_cast<ir::BorrowWithinCohort>(in.below(2));
    team.borrow_priority_threshold = static_cast<int32_t>(value(in));
    team.fair_share_weight_micros = static_cast<int64_t>(in.below(8)) * gov::model::kWeightScale;
    team.active = in.below(8) != 0;
    module.teams.push_back(std::move(team));
  }
  module.settings.rank_by_priority = in.flag();
  module.settings.fair_sharing = in.flag();
  module.settings.idle_resource_sharing = in.flag();
  module.settings.default_class = static_cast<int32_t>(in.below(static_cast<uint32_t>(module.classes.size() + 1))) - 1;
}

ir::Module decode_module(ByteReader& in) {
  ir::Module module;
  module.cluster = "fuzz";
  module.strings = {"", "a", "b", "c"};
  for (size_t k = in.below(4); k > 0; --k) module.label_keys.push_back(fmt::format("k{}", k));
  for (size_t s = in.below(4); s > 0; --s) {
    std::vector<int64_t> set;
    if (in.below(4) == 0) {
      // A large set (the JIT searches a table above 64 members): a progression with gaps.
      const auto start = static_cast<uint64_t>(value(in));  // wraps around at the int64 bounds
      const uint64_t stride = 1 + in.below(1000);
      for (uint64_t n = 65 + in.below(400); n > 0; --n) set.push_back(static_cast<int64_t>(start + n * stride));
    }
    for (size_t n = in.below(9); n > 0; --n) set.push_back(value(in));
    module.sets.push_back(std::move(set));
  }
  decode_quotas(in, module);
  for (size_t r = 1 + in.below(8); r > 0; --r) module.rules.push_back(rule(in, module, module.rules.size()));
  return module;
}

/// An input whose rule fields come from the bytes; the whole-decision part (usage tables sized
/// for the module) comes from the generator, with the decoded task fields but its team and
/// instance type (mostly in range, so that decide() gets past its range check).
gov::jit::fuzz::InputCase decode_input(ByteReader& in, const ir::Module& module, const std::vector<int64_t>& pool,
                                       const gov::jit::fuzz::InputGenerator& generator, std::mt19937_64& rng) {
  gov::jit::fuzz::InputCase input = generator.next(rng);
  input.labels.clear();
  const auto fill = [&](auto& array) {
    for (int64_t& v : array) v = in.flag() ? pool[in.below(static_cast<uint32_t>(pool.size()))] : value(in);
  };
  fill(input.fields.task);
  fill(input.fields.team);
  fill(input.fields.cluster);
  input.has_labels = in.below(8) != 0;
  for (size_t k = 0; k < module.label_keys.size(); ++k) {
    input.labels.push_back(in.flag() ? static_cast<int64_t>(in.below(6)) - 2 : value(in));
  }
  for (size_t f = 0; f < ir::kTaskFieldCount; ++f) {
    const auto field = static_cast<ir::TaskField>(f);
    if (field != ir::TaskField::team && field != ir::TaskField::flavor) input.decision.task[f] = input.fields.task[f];
  }
  return input;
}

/// Breaks one condition instruction of a copy of `module`: an operand that is a later
/// register, or a table index out of range. nullopt when there is nothing to break.
std::optional<ir::Module> broken(ByteReader& in, const ir::Module& module) {
  ir::Module copy = module;
  for (ir::Rule& r : copy.rules) {
    if (r.condition_length == 0) continue;
    ir::Instr& victim = r.code[in.below(r.condition_length)];
    // A negative operand is not broken: both back ends read it as 0 (the IR's "no operand").
    if (gov::jit::reads_a(victim.op)) {
      victim.a = static_cast<int32_t>(r.code.size() + in.below(4));
    } else if (victim.op != ir::Op::constant) {
      victim.imm = in.flag() ? -1 : int64_t{1000} + in.below(4);
    } else {
      continue;
    }
    return copy;
  }
  return std::nullopt;
}

std::string rule_input_text(const ir::RuleInput& input) {
  return fmt::format("task {}\nteam {}\ncluster {}", fmt::join(input.task, " "), fmt::join(input.team, " "),
                     fmt::join(input.cluster, " "));
}

void compare_rules(const ir::Module& module, const ir::Evaluator& jit, const ir::Evaluator& interp,
                   const std::vector<gov::jit::fuzz::InputCase>& inputs) {
  if (auto mismatch = gov::jit::fuzz::first_mismatch(module, jit, inputs)) {
    gov::fuzz::fail("the JIT and the interpreter disagree on a verdict", gov::jit::fuzz::describe(*mismatch));
  }
  for (const gov::jit::fuzz::InputCase& input : inputs) {
    const ir::RuleInput view = input.view();
    for (size_t r = 0; r < module.rules.size(); ++r) {
      std::vector<int64_t> expected(module.rules[r].message.size(), 0x5a5a);
      std::vector<int64_t> actual(expected);
      interp.message_values(r, view, expected);
      jit.message_values(r, view, actual);
      if (expected != actual) {
        gov::fuzz::fail("the JIT and the interpreter disagree on message values",
                        fmt::format("rule {}: interp [{}] jit [{}]\n{}\n{}", r, fmt::join(expected, ", "),
                                    fmt::join(actual, ", "), ir::print(module), rule_input_text(view)));
      }
    }
  }
}

void compare_decisions(ByteReader& in, const ir::Module& module, const ir::Evaluator& jit, const ir::Evaluator& interp) {
  for (int32_t c = -2; c <= static_cast<int32_t>(module.classes.size()) + 1; ++c) {
    gov::fuzz::require(jit.priority(c) == interp.priority(c), "the JIT and the interpreter disagree on a priority",
                       fmt::format("class {}: interp {} jit {}\n{}", c, interp.priority(c), jit.priority(c), ir::print(module)));
  }
  for (size_t n = 0; n < 16 && !in.empty(); ++n) {
    std::array<ir::Amount, ir::kResourceCount> request{}, usage{}, cohort{};
    for (size_t r = 0; r < ir::kResourceCount; ++r) {
      request[r] = amount(in);
      usage[r] = amount(in);
      cohort[r] = amount(in);
    }
    const ir::FitInput input{in.below(static_cast<uint32_t>(module.teams.size() + 1)),
                             in.below(static_cast<uint32_t>(module.flavors.size() + 1)), request.data(), usage.data(),
                             cohort.data()};
    const ir::FitResult expected = interp.fit(input);
    const ir::FitResult actual = jit.fit(input);
    gov::fuzz::require(expected == actual, "the JIT and the interpreter disagree on a fit",
                       fmt::format("team {} flavor {} request [{}] usage [{}] cohort [{}]: interp {:#x} jit {:#x}\n{}",
                                   input.team, input.flavor, fmt::join(request, " "), fmt::join(usage, " "),
                                   fmt::join(cohort, " "), expected.packed(), actual.packed(), ir::print(module)));
    const uint32_t teams = static_cast<uint32_t>(module.teams.size() + 1);
    const ir::PreemptionPair pair{in.below(teams), static_cast<int32_t>(value(in)), value(in),
                                  in.below(teams), static_cast<int32_t>(value(in)), value(in)};
    gov::fuzz::require(jit.may_preempt(pair) == interp.may_preempt(pair),
                       "the JIT and the interpreter disagree on may-preempt",
                       fmt::format("preemptor team {} priority {} at {}, candidate team {} priority {} at {}\n{}",
                                   pair.preemptor_team, pair.preemptor_priority, pair.preemptor_submitted,
                                   pair.candidate_team, pair.candidate_priority, pair.candidate_submitted,
                                   ir::print(module)));
  }
}

/// A serialised object with one byte changed must not deserialise.
void check_tampering(ByteReader& in, const ir::Module& module) {
  auto object = gov::jit::compile(module);
  gov::fuzz::require(object.ok(), "a valid module did not compile", object.ok() ? "" : object.error().message);
  std::vector<uint8_t> bytes = object.value().serialize();
  const size_t at = in.below(static_cast<uint32_t>(std::min<size_t>(bytes.size(), 65535)));
  bytes[at] ^= static_cast<uint8_t>(1 + in.below(255));
  gov::fuzz::require(!gov::jit::ObjectCode::deserialize(bytes).ok(), "a changed object deserialised",
                     fmt::format("byte {} of {}", at, bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const uint8_t mode = in.byte();
  const ir::Module module = decode_module(in);
  gov::fuzz::require(!gov::jit::validate(module).has_value(), "a decoded module is invalid", ir::print(module));
  if (mode % 16 == 1) {  // a broken module must be refused, not compiled
    if (std::optional<ir::Module> bad = broken(in, module)) {
      auto compiled = gov::jit::compile(*bad);
      gov::fuzz::require(!compiled.ok() && compiled.error().kind == gov::jit::ErrorKind::invalid_module,
                         "a module with an out-of-range operand or index was not refused", ir::print(*bad));
    }
    return 0;
  }
  if (mode % 16 == 2) {
    check_tampering(in, module);
    return 0;
  }
  auto loaded = gov::jit::compile_and_load(module);
  gov::fuzz::require(loaded.ok(), "a valid module did not compile and load", loaded.ok() ? "" : loaded.error().message);
  const ir::Evaluator& jit = *loaded.value();
  const gov::interp::Interpreter interp(module);
  const std::vector<int64_t> pool = gov::jit::fuzz::interesting_values(module);
  std::mt19937_64 rng(size * 0x9E3779B97F4A7C15ull + mode);
  const gov::jit::fuzz::InputGenerator generator(module);
  std::vector<gov::jit::fuzz::InputCase> inputs;
  for (size_t n = 0; n < 8 && !in.empty(); ++n) inputs.push_back(decode_input(in, module, pool, generator, rng));
  for (size_t n = 0; n < 64; ++n) inputs.push_back(generator.next(rng));
  compare_rules(module, jit, interp, inputs);
  compare_decisions(in, module, jit, interp);
  return 0;
}
