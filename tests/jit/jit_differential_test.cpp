// Randomised differential tests: the JIT against the interpreter on random rule code and on
// the shipped example policies; any disagreement prints a shrunk reproducer.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <random>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/jit/fuzz/differential.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "tests/jit/jit_builders.hpp"
#include "tests/support/test_support.hpp"

namespace gov::test::jit {
namespace {

using namespace gov::jit::fuzz;

/// GOV_JIT_SEED picks other seeds for a local campaign; the default keeps CI deterministic.
uint64_t base_seed() {
  const char* seed = std::getenv("GOV_JIT_SEED");
  return seed != nullptr ? std::strtoull(seed, nullptr, 10) : 1;
}

void require_agreement(const TrialOutcome& outcome, uint64_t seed) {
  if (outcome.error) FAIL("seed " << seed << ": the JIT failed: " << outcome.error->message);
  if (outcome.mismatch)
    FAIL("seed " << seed << " (tools/jit-fuzz --seed " << seed << " --iterations 1):\n"
                 << describe(*outcome.mismatch));
}

}  // namespace

/// Half of the 1,000 × 1,000 campaign: two test cases, so that ctest runs them on both cores.
void differential_half(uint64_t half) {
  constexpr uint64_t kModules = 500;
  constexpr size_t kInputs = 1000;
  GeneratorOptions options;
  options.rules = 4;
  const uint64_t first = base_seed() + half * kModules;
  const auto start = std::chrono::steady_clock::now();
  size_t rules = 0;
  size_t verdicts = 0;
  size_t decisions = 0;
  for (uint64_t seed = first; seed < first + kModules; ++seed) {
    const TrialOutcome outcome = run_trial(seed, options, kInputs);
    require_agreement(outcome, seed);
    rules += outcome.rules;
    verdicts += outcome.verdicts;
    decisions += outcome.decisions;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN(kModules << " modules (" << rules << " rules) x " << kInputs << " inputs: " << verdicts
                << " verdicts and " << decisions
                << " other answers (message values, priority, fit, may-preempt, decide) agree, "
                << seconds << " s");
  CHECK(rules >= 500);
}

TEST_CASE("jit agrees with the interpreter on 1000 random modules x 1000 inputs, first half",
          "[jit]") {
  differential_half(0);
}

TEST_CASE("jit agrees with the interpreter on 1000 random modules x 1000 inputs, second half",
          "[jit]") {
  differential_half(1);
}

TEST_CASE("jit agrees with the interpreter on long rules", "[jit]") {
  GeneratorOptions options;
  options.rules = 16;
  options.max_condition = 200;
  options.max_sets = 8;
  for (uint64_t seed = base_seed() + 100000; seed < base_seed() + 100020; ++seed) {
    require_agreement(run_trial(seed, options, 2000), seed);
  }
}

TEST_CASE("jit agrees with the interpreter on modules of 300 to 700 rules", "[jit]") {
  // Past 256 rules gov_rules calls one function per 256 rules and gov_decide concludes in a
  // loop (lower_rules.cpp, lower_decisions.cpp): the chunk boundaries and the loop must give
  // the reference's verdicts, first deny rule and warning count.
  GeneratorOptions options;
  options.max_condition = 8;
  for (size_t rules : {300u, 512u, 700u}) {
    options.rules = rules;
    const uint64_t seed = base_seed() + 200000 + rules;
    const TrialOutcome outcome = run_trial(seed, options, 300);
    require_agreement(outcome, seed);
    CHECK(outcome.rules == rules);
  }
}

TEST_CASE("jit agrees with the interpreter at O0 O2 O3 and for the generic CPU", "[jit]") {
  GeneratorOptions options;
  options.rules = 8;
  for (const gov::jit::Options jit_options :
       {gov::jit::Options{0, true}, gov::jit::Options{2, true}, gov::jit::Options{3, true},
        gov::jit::Options{1, false}}) {
    INFO("O" << jit_options.opt_level << (jit_options.host_cpu ? " host CPU" : " generic CPU"));
    for (uint64_t seed = base_seed() + 200000; seed < base_seed() + 200025; ++seed) {
      require_agreement(run_trial(seed, options, 1000, jit_options), seed);
    }
  }
}

/// A stand-in for a code generator bug: flips the verdict of every rule that multiplies.
class BrokenMul final : public ir::Evaluator {
 public:
  explicit BrokenMul(const ir::Module& module) : module_(module), real_(module) {}
  void evaluate_rules(const ir::RuleInput& input, std::span<uint8_t> verdicts) const override {
    real_.evaluate_rules(input, verdicts);
    for (size_t r = 0; r < module_.rules.size(); ++r) {
      const ir::Rule& rule = module_.rules[r];
      for (size_t i = 0; i < rule.condition_length; ++i) {
        if (rule.code[i].op == ir::Op::mul) {
          verdicts[r] ^= 1;
          break;
        }
      }
    }
  }
  void message_values(size_t rule, const ir::RuleInput& input,
                      std::span<int64_t> values) const override {
    real_.message_values(rule, input, values);
  }
  int32_t priority(int32_t class_index) const override { return real_.priority(class_index); }
  ir::FitResult fit(const ir::FitInput& input) const override { return real_.fit(input); }
  bool may_preempt(const ir::PreemptionPair& pair) const override {
    return real_.may_preempt(pair);
  }
  ir::DecideResult decide(const ir::DecideInput& input) const override { return real_.decide(input); }
  std::string_view name() const override { return "broken-mul"; }

 private:
  const ir::Module& module_;
  interp::Interpreter real_;
};

TEST_CASE("jit differential shrinking reduces a disagreement to the faulty instruction", "[jit]") {
  const ir::Module module = module_of(
      {rule({task(0), constant(3), binary(ir::Op::gt, 0, 1)}),
       rule({task(3), task(6), binary(ir::Op::add, 0, 1), constant(2), binary(ir::Op::mul, 2, 3),
             task(9), binary(ir::Op::sub, 4, 5), constant(0), binary(ir::Op::gt, 6, 7),
             label_present(0), binary(ir::Op::logical_and, 8, 9)},
            {task(1)})},
      {}, {"k"});
  InputCase input;
  input.fields.task[3] = 5;
  input.fields.task[6] = -9;
  input.labels = {0};
  const std::vector<InputCase> inputs = {input};
  const BrokenMul broken(module);
  const auto found = first_mismatch(module, broken, inputs);
  REQUIRE(found);
  CHECK(found->rule == 1);
  const BackEnd back_end = [](const ir::Module& m) { return std::make_unique<BrokenMul>(m); };
  // BrokenMul keeps a reference to the module it was made for: shrink() keeps it alive.
  const Mismatch small = shrink(*found, back_end);
  REQUIRE(small.module.rules.size() == 1);
  const ir::Rule& rule = small.module.rules[0];
  INFO(describe(small));
  CHECK(rule.condition_length == 3);  // constant, constant, mul
  CHECK(rule.code.back().op == ir::Op::mul);
  CHECK(small.jit != small.interp);
  CHECK(describe(small).find("disagree on rule 0") != std::string::npos);
}

TEST_CASE("jit agrees with the interpreter on the example and benchmark policies", "[jit]") {
  std::vector<std::string> paths = files_under("policies/examples", ".gov");
  paths.push_back(repo_path("tools/bench/workshop-rules.gov"));
  size_t rules = 0;
  for (const std::string& path : paths) {
    driver::Result loaded =
        driver::load(driver::Source::file(path, GOV_SOURCE_DIR), driver::Request::up_to(driver::Stage::lower));
    if (!loaded.ok()) continue;  // catalog-only or rules-only files
    const ir::Module& module = loaded.policy->module;
    auto jit = gov::jit::compile_and_load(module);
    INFO(path);
    REQUIRE(jit.ok());
    std::mt19937_64 rng(42);
    const InputGenerator generator(module);
    std::vector<InputCase> inputs;
    for (int i = 0; i < 2000; ++i) inputs.push_back(generator.next(rng));
    const auto mismatch = first_mismatch(module, *jit.value(), inputs);
    if (mismatch) FAIL(describe(shrink(*mismatch)));
    rules += module.rules.size();
  }
  CHECK(rules >= 22);  // rules.gov has 12, the benchmark policy 10
}

}  // namespace gov::test::jit
