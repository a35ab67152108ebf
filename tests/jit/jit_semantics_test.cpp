// The JIT on hand-built rules: checked arithmetic at the int64 bounds, comparisons, logic,
// labels, sets and verdicts, against the expected values and the interpreter.
#include <array>
#include <catch2/catch.hpp>
#include <limits>

#include "compiler/check/limits.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/jit/jit.hpp"
#include "tests/jit/jit_builders.hpp"

namespace gov::test::jit {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr std::array<int64_t, 15> kEdges = {0,
                                            1,
                                            -1,
                                            2,
                                            -2,
                                            7,
                                            -7,
                                            kMax,
                                            kMin,
                                            kMax - 1,
                                            kMin + 1,
                                            3037000499,
                                            -3037000500,
                                            int64_t{1} << 32,
                                            -(int64_t{1} << 31)};

std::unique_ptr<gov::jit::JitEvaluator> jit_for(const ir::Module& module) {
  auto jit = gov::jit::compile_and_load(module);
  INFO((jit.ok() ? std::string() : jit.error().message));
  REQUIRE(jit.ok());
  return std::move(jit).value();
}

std::vector<uint8_t> verdicts_of(const ir::Evaluator& evaluator, size_t rules,
                                 const ir::RuleInput& input) {
  std::vector<uint8_t> verdicts(rules, 0xAA);
  evaluator.evaluate_rules(input, verdicts);
  return verdicts;
}

/// Both back ends give `expected` for every rule of `module` on `input`.
void check_both(const ir::Module& module, const ir::Evaluator& jit, const ir::RuleInput& input,
                const std::vector<uint8_t>& expected) {
  CHECK(verdicts_of(jit, module.rules.size(), input) == expected);
  CHECK(verdicts_of(interp::Interpreter(module), module.rules.size(), input) == expected);
}

struct ArithmeticCase {
  ir::Op op;
  int64_t (*expected)(int64_t, int64_t);
};

const std::array<ArithmeticCase, 4> kArithmetic = {{{ir::Op::add, ir::checked_add},
                                                    {ir::Op::sub, ir::checked_sub},
                                                    {ir::Op::mul, ir::checked_mul},
                                                    {ir::Op::div, ir::checked_div}}};

int64_t negated(int64_t a, int64_t) {
  return ir::checked_neg(a);
}

}  // namespace

TEST_CASE("jit arithmetic saturates like ir::checked_add/sub/mul/div at the int64 bounds",
          "[jit]") {
  for (const ArithmeticCase& c : kArithmetic) {
    // Runtime operands: op(task[0], task[1]) == task[2], one input per pair.
    const ir::Module runtime = module_of(
        {rule({task(0), task(1), binary(c.op, 0, 1), task(2), binary(ir::Op::eq, 2, 3)})});
    const auto jit = jit_for(runtime);
    // Constant operands: one rule per pair, folded by the optimiser at compile time.
    std::vector<ir::Rule> folded;
    for (int64_t a : kEdges) {
      for (int64_t b : kEdges) {
        folded.push_back(rule({constant(a), constant(b), binary(c.op, 0, 1),
                               constant(c.expected(a, b)), binary(ir::Op::eq, 2, 3)}));
        ir::RuleInput input;
        input.task = {a, b, c.expected(a, b)};
        INFO(ir::op_name(c.op) << "(" << a << ", " << b << ") should be " << c.expected(a, b));
        CHECK(verdicts_of(*jit, 1, input) == std::vector<uint8_t>{1});
      }
    }
    const ir::Module constants = module_of(std::move(folded));
    CHECK(verdicts_of(*jit_for(constants), constants.rules.size(), {}) ==
          std::vector<uint8_t>(constants.rules.size(), 1));
  }
}

TEST_CASE("jit neg saturates: neg(INT64_MIN) is INT64_MAX", "[jit]") {
  const ir::Module m =
      module_of({rule({task(0), unary(ir::Op::neg, 0), task(1), binary(ir::Op::eq, 1, 2)})});
  const auto jit = jit_for(m);
  for (int64_t a : kEdges) {
    ir::RuleInput input;
    input.task = {a, negated(a, 0)};
    INFO("neg(" << a << ")");
    check_both(m, *jit, input, {1});
  }
  CHECK(ir::checked_neg(kMin) == kMax);
}

TEST_CASE("jit comparisons are signed and logic treats any non-zero as true", "[jit]") {
  const std::array<ir::Op, 8> ops = {ir::Op::eq,          ir::Op::ne,        ir::Op::lt,
                                     ir::Op::le,          ir::Op::gt,        ir::Op::ge,
                                     ir::Op::logical_and, ir::Op::logical_or};
  std::vector<ir::Rule> rules;
  for (ir::Op op : ops) rules.push_back(rule({task(0), task(1), binary(op, 0, 1)}));
  rules.push_back(rule({task(0), unary(ir::Op::logical_not, 0)}));
  rules.push_back(rule({task(0)}));  // an integer verdict: matches when non-zero
  const ir::Module m = module_of(std::move(rules));
  const auto jit = jit_for(m);
  for (int64_t a : kEdges) {
    for (int64_t b : kEdges) {
      ir::RuleInput input;
      input.task = {a, b};
      const std::vector<uint8_t> expected = {
          a == b, a != b, a<b, a <= b, a> b, a >= b, a != 0 && b != 0, a != 0 || b != 0,
          a == 0, a != 0};
      INFO("a = " << a << ", b = " << b);
      check_both(m, *jit, input, expected);
    }
  }
}

TEST_CASE("jit reads task and team and cluster figures at every index", "[jit]") {
  std::vector<ir::Rule> rules;
  for (int64_t i = 0; i < static_cast<int64_t>(ir::kTaskFieldCount); ++i)
    rules.push_back(rule({task(i), constant(i + 100), binary(ir::Op::eq, 0, 1)}));
  for (int64_t i = 0; i < static_cast<int64_t>(ir::kTeamStatCount * ir::kResourceCount); ++i)
    rules.push_back(rule({team(i), constant(i + 200), binary(ir::Op::eq, 0, 1)}));
  for (int64_t i = 0; i < static_cast<int64_t>(ir::kClusterStatCount * ir::kResourceCount); ++i)
    rules.push_back(rule({cluster(i), constant(i + 300), binary(ir::Op::eq, 0, 1)}));
  const ir::Module m = module_of(std::move(rules));
  ir::RuleInput input;
  for (size_t i = 0; i < input.task.size(); ++i) input.task[i] = static_cast<int64_t>(i) + 100;
  for (size_t i = 0; i < input.team.size(); ++i) input.team[i] = static_cast<int64_t>(i) + 200;
  for (size_t i = 0; i < input.cluster.size(); ++i)
    input.cluster[i] = static_cast<int64_t>(i) + 300;
  check_both(m, *jit_for(m), input, std::vector<uint8_t>(m.rules.size(), 1));
}

TEST_CASE("jit labels: absent reads as the empty string and a null labels pointer as all absent",
          "[jit]") {
  // Per key: present?, value == "" (id 0), value == id 3, value == other.
  std::vector<ir::Rule> rules;
  for (int64_t key = 0; key < 3; ++key) {
    rules.push_back(rule({label_present(key)}));
    rules.push_back(rule({label_value(key), constant(0), binary(ir::Op::eq, 0, 1)}));
    rules.push_back(rule({label_value(key), constant(3), binary(ir::Op::eq, 0, 1)}));
    rules.push_back(rule({label_value(key), constant(ir::kOtherString), binary(ir::Op::eq, 0, 1)}));
  }
  const ir::Module m = module_of(std::move(rules), {}, {"project", "cost-center", "owner"});
  const auto jit = jit_for(m);
  const std::array<int64_t, 3> labels = {ir::kAbsentLabel, 3, ir::kOtherString};
  ir::RuleInput input;
  input.labels = labels.data();
  check_both(m, *jit, input, {0, 1, 0, 0, /**/ 1, 0, 1, 0, /**/ 1, 0, 0, 1});
  const std::array<int64_t, 3> empty = {0, 0, 0};
  input.labels = empty.data();
  check_both(m, *jit, input, {1, 1, 0, 0, /**/ 1, 1, 0, 0, /**/ 1, 1, 0, 0});
  input.labels = nullptr;
  check_both(m, *jit, input, {0, 1, 0, 0, /**/ 0, 1, 0, 0, /**/ 0, 1, 0, 0});
}

TEST_CASE(
    "jit in_set over dense and sparse sets and sets at the bounds or with duplicates or empty",
    "[jit]") {
  const std::vector<std::vector<int64_t>> sets = {{0, 1, 2, 3},
                                                  {5, 900, -17, kMax, kMin},
                                                  {4, 4, 4},
                                                  {},
                                                  {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25}};
  std::vector<ir::Rule> rules;
  for (int64_t s = 0; s < static_cast<int64_t>(sets.size()); ++s)
    rules.push_back(rule({task(0), in_set(0, s)}));
  const ir::Module m = module_of(std::move(rules), sets);
  const auto jit = jit_for(m);
  std::vector<int64_t> probes(kEdges.begin(), kEdges.end());
  for (int64_t v = -20; v <= 30; ++v) probes.push_back(v);
  probes.insert(probes.end(), {900, -17, 899, 901});
  for (int64_t v : probes) {
    ir::RuleInput input;
    input.task[0] = v;
    std::vector<uint8_t> expected;
    for (const auto& set : sets)
      expected.push_back(std::find(set.begin(), set.end(), v) != set.end());
    INFO("value " << v);
    check_both(m, *jit, input, expected);
  }
}

TEST_CASE("jit verdicts: empty conditions never match and message code is not run", "[jit]") {
  // The message instruction divides by zero and reads a label: harmless, but not evaluated.
  const ir::Module m = module_of(
      {rule({}), rule({constant(1)}, {constant(0), binary(ir::Op::div, 0, 0), label_value(0)}),
       rule({constant(0)})},
      {}, {"k"});
  const auto jit = jit_for(m);
  check_both(m, *jit, {}, {0, 1, 0});
  CHECK(jit->name() == "jit");
  CHECK(jit->rule_count() == 3);
  const auto empty = module_of({});
  const auto none = jit_for(empty);
  none->evaluate_rules({}, {});
}

TEST_CASE("jit refuses malformed rule code with invalid_module", "[jit]") {
  const std::vector<ir::Module> bad = {
      module_of({rule({task(0), binary(ir::Op::add, 0, 1)})}),  // reads itself
      module_of({rule({binary(ir::Op::add, 3, 0)})}),           // reads a later register
      module_of({rule({task(11)})}),                            // past the task fields
      module_of({rule({team(-1)})}),
      module_of({rule({cluster(15)})}),
      module_of({rule({label_value(0)})}),             // no label keys
      module_of({rule({constant(1), in_set(0, 0)})}),  // no sets
  };
  for (const ir::Module& m : bad) {
    const auto compiled = gov::jit::compile(m);
    INFO(ir::print(m));
    REQUIRE_FALSE(compiled.ok());
    CHECK(compiled.error().kind == gov::jit::ErrorKind::invalid_module);
    CHECK(compiled.error().message.find("rule `rule0`") != std::string::npos);
  }
  ir::Module longer = module_of({rule({constant(1)})});
  longer.rules[0].condition_length = 2;
  CHECK(gov::jit::compile(longer).error().kind == gov::jit::ErrorKind::invalid_module);
  // gov_decide keeps a byte per rule on its stack: past the checker's bound, the JIT refuses.
  ir::Module many = module_of({rule({constant(0)})});
  many.rules.resize(gov::check::kMaxRules + 1, many.rules[0]);
  const auto refused = gov::jit::compile(many);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == gov::jit::ErrorKind::invalid_module);
  CHECK(refused.error().message == "10001 rules; gov compiles at most 10000");
}

TEST_CASE("jit emits optimised LLVM IR and assembly for gov check --emit", "[jit]") {
  const ir::Module m = module_of(
      {rule({task(3), constant(4), binary(ir::Op::gt, 0, 1)}),
       rule({task(3), task(6), binary(ir::Op::mul, 0, 1), constant(7), binary(ir::Op::lt, 2, 3)})});
  const auto llvm_ir = gov::jit::emit_llvm(m);
  REQUIRE(llvm_ir.ok());
  CHECK(llvm_ir.value().find("define void @gov_rules(") != std::string::npos);
  CHECK(llvm_ir.value().find("with.overflow") != std::string::npos);
  const uint64_t before = gov::jit::codegen_count();
  const auto assembly = gov::jit::emit_asm(m);
  REQUIRE(assembly.ok());
  CHECK(assembly.value().find("gov_rules:") != std::string::npos);
  CHECK(gov::jit::codegen_count() == before + 1);
}

}  // namespace gov::test::jit
