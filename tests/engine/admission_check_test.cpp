// Engine::check_admission, the hot path, against what step() actually decides: whenever no task
// is pending, checking a task and then submitting it must agree (admit in the same instance
// type, reject by the same rule, invalid, or not admitted now), with both back ends; and the
// prepared form answers like the plain one.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <array>
#include <memory>
#include <random>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/decisions.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "runtime/engine/engine.hpp"
#include "tests/engine/engine_test_support.hpp"
#include "tests/support/test_support.hpp"

namespace gov::engine::test {
namespace {

using Verdict = AdmissionCheck::Verdict;

ir::Module benchmark_module() {
  const std::string path = gov::test::repo_path("tools/bench/workshop-rules.gov");
  driver::Result loaded =
      driver::load(driver::Source::file(path, GOV_SOURCE_DIR), driver::Request::up_to(driver::Stage::lower));
  REQUIRE(loaded.ok());
  return std::move(loaded.policy->module);
}

/// Tasks that hit every rule of the benchmark policy now and then, and every way to fit.
gov::Task random_task(std::mt19937_64& rng, int serial) {
  const auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  static const char* const kClasses[] = {"inference", "experimentation", "training", "fine-tuning"};
  TaskBuilder task(fmt::format("t{}", serial), pick(2) == 0 ? "team-a" : "team-b");
  if (pick(5) != 0) task.priority(kClasses[pick(4)]);
  if (pick(3) == 0) {
    task.instances(1 + pick(2));
    if (pick(2) == 0) task.type("ml.g5.8xlarge");
  } else {
    task.gpus(pick(4)).vcpu_millis(1000 * (1 + pick(40))).memory_mib(1024 * (1 + pick(200)));
  }
  if (pick(10) == 0) task.pods(1 + pick(20));
  if (pick(6) != 0) task.label("project", "p");
  if (pick(6) != 0) task.label("cost-center", pick(3) == 0 ? "" : "cc");
  if (pick(20) == 0) task.type("ml.p5.48xlarge");  // not the team's: invalid or no match
  if (pick(30) == 0) task.spec.team = "team-z";   // unknown
  return task;
}

const Decision* decision_for(const std::vector<Decision>& decisions, const std::string& id) {
  for (const Decision& d : decisions) {
    if (d.task == id) return &d;
  }
  return nullptr;
}

void check_agreement(const ir::Module& module, const ir::Evaluator& evaluator) {
  Engine engine(module, evaluator);
  std::mt19937_64 rng(7);
  std::vector<std::string> admitted;
  size_t compared = 0;
  size_t admits = 0;
  size_t rejects = 0;
  for (int serial = 0; serial < 3000; ++serial) {
    const Time at = serial * kSecond;
    if (!admitted.empty() && rng() % 3 == 0) {  // free room now and then
      const size_t victim = rng() % admitted.size();
      const Event finish = Event::finish(admitted[victim]);
      engine.step(at, std::span<const Event>(&finish, 1));
      admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    const gov::Task spec = random_task(rng, serial);
    const bool nothing_pending = engine.snapshot().count(TaskState::pending) == 0;
    const AdmissionCheck check = engine.check_admission(spec);
    const AdmissionCheck prepared = engine.check_admission(engine.prepare(spec));
    CHECK(prepared.verdict == check.verdict);
    CHECK(prepared.flavor == check.flavor);
    CHECK(prepared.rule == check.rule);
    CHECK(prepared.warnings == check.warnings);
    CHECK(prepared.borrows == check.borrows);
    const Event submit = Event::submit(spec);
    const std::vector<Decision> decisions = engine.step(at, std::span<const Event>(&submit, 1));
    for (const Decision& d : decisions) {
      if (d.outcome == Outcome::admitted) admitted.push_back(d.task);
      if (d.outcome == Outcome::preempted || d.outcome == Outcome::finished)
        std::erase(admitted, d.task);
    }
    // Cancel what waits, so that the next check starts from an empty queue again.
    if (engine.snapshot().count(TaskState::pending) > 0) {
      for (const TaskRow& row : engine.snapshot().tasks) {
        if (row.state != TaskState::pending) continue;
        const Event cancel = Event::cancel(row.id);
        engine.step(at, std::span<const Event>(&cancel, 1));
      }
    }
    if (!nothing_pending) continue;
    const Decision* first = decision_for(decisions, spec.id);
    REQUIRE(first != nullptr);
    INFO("task " << spec.id << " at " << at << ": " << outcome_name(first->outcome) << " "
                 << first->message);
    ++compared;
    switch (check.verdict) {
      case Verdict::admit:
        ++admits;
        REQUIRE(first->outcome == Outcome::admitted);
        CHECK(first->flavor == module.flavors[static_cast<size_t>(check.flavor)].name);
        CHECK(check.borrows == !first->borrowed.empty());
        break;
      case Verdict::reject:
        ++rejects;
        REQUIRE(first->outcome == Outcome::rejected);
        CHECK(first->rule == module.rules[static_cast<size_t>(check.rule)].name);
        break;
      case Verdict::invalid:
        CHECK(first->outcome == Outcome::invalid);
        break;
      case Verdict::pending:
        CHECK(first->outcome == Outcome::pending);
        break;
    }
  }
  WARN(evaluator.name() << ": " << compared << " checks compared, " << admits << " admits, "
                        << rejects << " rejects");
  CHECK(admits > 100);
  CHECK(rejects > 100);
}

}  // namespace

TEST_CASE("check_admission agrees with step on the benchmark policy, interpreter", "[engine]") {
  const ir::Module module = benchmark_module();
  const interp::Interpreter interpreter(module);
  check_agreement(module, interpreter);
}

TEST_CASE("check_admission agrees with step on the benchmark policy, jit", "[engine][jit]") {
  const ir::Module module = benchmark_module();
  auto jit = gov::jit::compile_and_load(module);
  REQUIRE(jit.ok());
  check_agreement(module, *jit.value());
}

namespace {

/// A rejected task is not fitted: decide answers the deny rule and no instance type, even when
/// the task would fit (ir::conclude; the JIT branches past its fit code).
void check_rejected_is_not_fitted(const ir::Module& module, const ir::Evaluator& evaluator) {
  const ir::QuotaTable table = ir::quota_table(module);
  const std::vector<ir::Amount> usage(table.cells.size() * ir::kColumnCount, 0);  // a row per slot
  const std::vector<ir::Amount> pools(table.flavor_count * ir::kResourceCount, 0);
  std::array<int64_t, ir::kTaskFieldCount> task{};
  const auto field = [&task](ir::TaskField f) -> int64_t& { return task[static_cast<size_t>(f)]; };
  field(ir::TaskField::team) = 0;
  for (size_t f = 0; f < module.flavors.size(); ++f) {
    if (module.flavors[f].name == "ml.g5.8xlarge") field(ir::TaskField::flavor) = static_cast<int64_t>(f);
  }
  field(ir::TaskField::gpus) = 1;
  field(ir::TaskField::vcpus) = 1000;
  field(ir::TaskField::memory) = 1024;
  field(ir::TaskField::pods) = 1;
  field(ir::TaskField::id) = ir::kOtherString;
  const std::vector<int64_t> labels(module.label_keys.size(), ir::kOtherString);
  const ir::DecideInput input{task.data(), labels.data(), {usage.data(), pools.data(), pools.data()}};

  const ir::DecideResult fits = evaluator.decide(input);
  REQUIRE(fits.deny_rule == -1);
  REQUIRE(fits.flavor >= 0);  // the task fits when no rule denies it

  field(ir::TaskField::pods) = 17;  // too-many-pods
  const ir::DecideResult denied = evaluator.decide(input);
  CHECK(denied.deny_rule >= 0);
  CHECK(module.rules[static_cast<size_t>(denied.deny_rule)].name == "too-many-pods");
  CHECK(denied.flavor == -1);
  CHECK(denied.borrows == 0);
}

}  // namespace

TEST_CASE("decide does not fit a rejected task in either back end", "[engine][jit]") {
  const ir::Module module = benchmark_module();
  const interp::Interpreter interpreter(module);
  check_rejected_is_not_fitted(module, interpreter);
  auto jit = gov::jit::compile_and_load(module);
  REQUIRE(jit.ok());
  check_rejected_is_not_fitted(module, *jit.value());
}

TEST_CASE("check_admission changes nothing", "[engine]") {
  Harness h(workshop_module());
  h.submit(0, TaskBuilder("a", "team-a").gpus(1).vcpu_millis(1000).memory_mib(1024));
  const Snapshot before = h.engine->snapshot();
  const AdmissionCheck check =
      h.engine->check_admission(TaskBuilder("b", "team-a").gpus(1).vcpu_millis(1000).memory_mib(1024));
  CHECK(check.verdict == Verdict::admit);
  CHECK(check.flavor == 0);
  const Snapshot after = h.engine->snapshot();
  CHECK(after.tasks.size() == before.tasks.size());
  CHECK(after.usage.size() == before.usage.size());
  for (size_t i = 0; i < after.usage.size(); ++i) CHECK(after.usage[i].used == before.usage[i].used);
}

TEST_CASE("a prepared task answers for engines of its own policy only", "[engine]") {
  const ir::Module module = benchmark_module();
  const ir::Module other = benchmark_module();  // equal content, another policy object
  const interp::Interpreter interpreter(module);
  const interp::Interpreter other_interpreter(other);
  const Engine engine(module, interpreter);
  const Engine same_policy(module, interpreter);
  const Engine other_policy(other, other_interpreter);
  const gov::Task task = TaskBuilder("t1", "team-a").type("ml.g5.8xlarge").gpus(1)
                            .vcpu_millis(1000).memory_mib(1024)
                            .label("project", "p").label("cost-center", "cc");
  const PreparedTask prepared = engine.prepare(task);
  CHECK(engine.check_admission(prepared).verdict == Verdict::admit);
  CHECK(same_policy.check_admission(prepared).verdict == Verdict::admit);
  // Indices and string ids belong to the module that resolved them: another one says invalid.
  const AdmissionCheck foreign = other_policy.check_admission(prepared);
  CHECK(foreign.verdict == Verdict::invalid);
  CHECK(foreign.team == prepared.team);
  // An invalid task stays invalid when prepared.
  CHECK(engine.check_admission(engine.prepare(TaskBuilder("t2", "team-z").gpus(1))).verdict ==
        Verdict::invalid);
}

namespace {

/// The benchmark policy's ten rules `copies` times over (renamed): past 256 rules the verdicts
/// go to a per-thread buffer instead of the stack, and the JIT splits the rules into functions.
ir::Module with_rule_copies(ir::Module module, int copies) {
  const std::vector<ir::Rule> original = module.rules;
  module.rules.clear();
  for (int c = 0; c < copies; ++c) {
    for (ir::Rule rule : original) {
      rule.name += fmt::format("-copy-{}", c);
      module.rules.push_back(std::move(rule));
    }
  }
  return module;
}

/// check_admission with the rules copied answers like with the originals: the same verdict,
/// instance type and first deny rule, and every copy's matches as warnings.
void check_many_rules(const ir::Module& small, const ir::Evaluator& small_evaluator,
                      const ir::Module& large, const ir::Evaluator& large_evaluator, int copies) {
  const Engine few(small, small_evaluator);
  const Engine many(large, large_evaluator);
  std::mt19937_64 rng(11);
  size_t rejects = 0;
  for (int serial = 0; serial < 500; ++serial) {
    const gov::Task spec = random_task(rng, serial);
    const AdmissionCheck a = few.check_admission(few.prepare(spec));
    const AdmissionCheck b = many.check_admission(many.prepare(spec));
    INFO("task " << serial);
    REQUIRE(a.verdict == b.verdict);
    CHECK(a.flavor == b.flavor);
    CHECK(a.rule == b.rule);  // the first deny is among the first copy
    const uint32_t deny = a.verdict == Verdict::reject ? 1 : 0;
    CHECK(b.warnings == static_cast<uint32_t>(copies) * (a.warnings + deny) - deny);
    rejects += deny;
  }
  CHECK(rejects > 50);
}

}  // namespace

TEST_CASE("check_admission of a policy with more rules than fit on the stack", "[engine][jit]") {
  constexpr int kCopies = 30;  // 300 rules
  const ir::Module small = benchmark_module();
  const ir::Module large = with_rule_copies(small, kCopies);
  REQUIRE(large.rules.size() == 300);
  const interp::Interpreter small_interpreter(small);
  const interp::Interpreter large_interpreter(large);
  check_many_rules(small, small_interpreter, large, large_interpreter, kCopies);
  auto small_jit = gov::jit::compile_and_load(small);
  auto large_jit = gov::jit::compile_and_load(large);
  REQUIRE(small_jit.ok());
  REQUIRE(large_jit.ok());
  check_many_rules(small, *small_jit.value(), large, *large_jit.value(), kCopies);
}

}  // namespace gov::engine::test
