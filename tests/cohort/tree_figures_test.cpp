// What a policy with a tree of cohorts answers outside the cycle: Engine::check_admission (plain
// and prepared, both back ends) reads the tree's `team.available` in rules and chooses the
// flavor by the borrowing level, as the cycle does (tests/corpus/cohort-tree-figures.gov,
// cohort-tree-borrowing-level-flavor.gov).
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "compiler/driver/driver.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/jit/jit.hpp"
#include "runtime/engine/engine.hpp"
#include "tests/engine/engine_test_support.hpp"
#include "tests/support/test_support.hpp"

namespace gov::engine::test {
namespace {

using Verdict = AdmissionCheck::Verdict;

ir::Module corpus_module(const std::string& file) {
  const std::string path = gov::test::repo_path("tests/corpus/" + file);
  driver::Result loaded =
      driver::load(driver::Source::file(path, GOV_SOURCE_DIR), driver::Request::up_to(driver::Stage::lower));
  REQUIRE(loaded.ok());
  return std::move(loaded.policy->module);
}

/// check_admission, plain and prepared, which must agree.
AdmissionCheck checked(Engine& engine, const gov::Task& task) {
  const AdmissionCheck plain = engine.check_admission(task);
  const AdmissionCheck prepared = engine.check_admission(engine.prepare(task));
  CHECK(plain.verdict == prepared.verdict);
  CHECK(plain.flavor == prepared.flavor);
  CHECK(plain.rule == prepared.rule);
  CHECK(plain.warnings == prepared.warnings);
  return plain;
}

void figures_in_a_tree(const ir::Module& module, const ir::Evaluator& evaluator) {
  Engine engine(module, evaluator);
  // t may take 2 (c's subtree, c borrows nothing from r): the flat formula would say 6.
  const AdmissionCheck three = checked(engine, TaskBuilder("t1", "t").type("ml.g5.8xlarge").gpus(3));
  CHECK(three.verdict == Verdict::reject);
  CHECK(three.rule == 0);
  const AdmissionCheck two = checked(engine, TaskBuilder("t2", "t").type("ml.g5.8xlarge").gpus(2));
  CHECK(two.verdict == Verdict::admit);
  CHECK(two.warnings == 1);
  CHECK(two.borrows);
  // The explanation's cohort idle is t's cohort's: c's 2 are all used (the roots' total has 4).
  const Event submit = Event::submit(TaskBuilder("t2", "t").type("ml.g5.8xlarge").gpus(2).spec);
  engine.step(0, std::span<const Event>(&submit, 1));
  const std::optional<Explanation> explained = engine.explain("t2");
  REQUIRE(explained.has_value());
  REQUIRE(explained->state == TaskState::admitted);
  REQUIRE_FALSE(explained->flavors.empty());
  bool gpu_row = false;
  for (const ResourceFigures& figures : explained->flavors.front().resources) {
    if (figures.resource != gov::Resource::gpu || !figures.partition.empty()) continue;
    gpu_row = true;
    CHECK(figures.cohort_idle == 0);
    CHECK(figures.available == 0);
  }
  CHECK(gpu_row);
}

void level_in_a_tree(const ir::Module& module, const ir::Evaluator& evaluator) {
  Engine engine(module, evaluator);
  // Both types borrow: ml.g5.16xlarge from lab's department (level 1), ml.g5.8xlarge from r (2).
  const AdmissionCheck check = checked(engine, TaskBuilder("l1", "lab").gpus(1));
  REQUIRE(check.verdict == Verdict::admit);
  CHECK(module.flavors[static_cast<size_t>(check.flavor)].name == "ml.g5.16xlarge");
}

}  // namespace

TEST_CASE("check_admission reads the tree's team.available, interpreter", "[hiercases]") {
  const ir::Module module = corpus_module("cohort-tree-figures.gov");
  const interp::Interpreter interpreter(module);
  figures_in_a_tree(module, interpreter);
}

TEST_CASE("check_admission reads the tree's team.available, jit", "[hiercases][jit]") {
  const ir::Module module = corpus_module("cohort-tree-figures.gov");
  auto jit = gov::jit::compile_and_load(module);
  REQUIRE(jit.ok());
  figures_in_a_tree(module, *jit.value());
}

TEST_CASE("check_admission chooses the flavor of the lowest borrowing level, interpreter", "[hiercases]") {
  const ir::Module module = corpus_module("cohort-tree-borrowing-level-flavor.gov");
  const interp::Interpreter interpreter(module);
  level_in_a_tree(module, interpreter);
}

TEST_CASE("check_admission chooses the flavor of the lowest borrowing level, jit", "[hiercases][jit]") {
  const ir::Module module = corpus_module("cohort-tree-borrowing-level-flavor.gov");
  auto jit = gov::jit::compile_and_load(module);
  REQUIRE(jit.ok());
  level_in_a_tree(module, *jit.value());
}

}  // namespace gov::engine::test
