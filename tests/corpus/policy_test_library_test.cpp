// gov::policy_test, the library behind `gov test` and the corpus cases: its structured results
// (the failing step, its span, the expectation, what differs, the decision, the stream).
#include <catch2/catch.hpp>

#include "compiler/diagnostics/render.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "compiler/driver/driver.hpp"
#include "runtime/policy_test/policy_test.hpp"
#include "tests/support/test_support.hpp"

namespace {

const char* const kPolicy = R"(import "../../policies/catalog/aws-ml.gov"

cluster small {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 2 }
}

policy {
  priority training = 50
}

team ta {
  quota ml.g5.8xlarge { instances = 1 }
}

team tb {
  quota ml.g5.8xlarge { instances = 1 }
}

test "passes" {
  submit a { team = ta, gpus = 1 }
  expect a admitted on ml.g5.8xlarge
  at 5
  finish a
  expect a finished
}

test "wrong outcome" {
  submit a { team = ta, gpus = 1 }
  submit b { team = ta, gpus = 1 }
  expect a admitted
  expect b admitted
  submit c { team = tb, gpus = 1 }
}

test "no further decision" {
  submit a { team = ta, gpus = 1 }
  expect a admitted
  expect a admitted
}
)";

/// The policy above, written under the build tree next to a copy of the catalog.
struct Loaded {
  gov::test::TempDir dir{"policy-test"};
  std::optional<gov::Engine> engine;
  std::shared_ptr<const gov::driver::Policy> policy;
  explicit Loaded(gov::driver::BackEnd back_end) {
    dir.copy_catalog();
    gov::Options options;
    options.back_end =
        back_end == gov::driver::BackEnd::jit ? gov::Options::BackEnd::jit : gov::Options::BackEnd::interpreter;
    try {
      engine.emplace(gov::Engine::compile_file(dir.write("tests/corpus/small.gov", kPolicy), options));
    } catch (const gov::Error& error) {
      FAIL(error.what());
    }
    policy = gov::EngineInternals::runnable(*engine);
  }
  const gov::check::Test& block(size_t i) const { return policy->checked.result.policy.tests.at(i); }
  std::string location(const gov::Location& where) const {
    return gov::format_location(where, policy->checked.program.sources);
  }
};

}  // namespace

TEST_CASE("policy_test runs every block and returns one result each, in order", "[policy_test]") {
  const Loaded loaded(gov::driver::BackEnd::interpreter);
  const auto results =
      gov::policy_test::run(*loaded.engine, loaded.policy->checked.result.policy.tests);
  REQUIRE(results.size() == 3);
  CHECK(results[0].name == "passes");
  CHECK(results[0].passed());
  CHECK(loaded.location(results[0].where).ends_with("small.gov:20:6"));
  CHECK(results[1].name == "wrong outcome");
  CHECK(!results[1].passed());
  CHECK(results[2].name == "no further decision");
  CHECK(!results[2].passed());
}

TEST_CASE("policy_test's decisions are the block's decision stream in JSON lines", "[policy_test]") {
  const Loaded loaded(gov::driver::BackEnd::interpreter);
  const auto result = gov::policy_test::run_case(*loaded.engine, loaded.block(0));
  REQUIRE(result.decisions.size() == 2);
  CHECK(result.decisions[0].starts_with(R"({"at":0,"task":"a","outcome":"admitted","team":"ta","flavor":"ml.g5.8xlarge")"));
  CHECK(result.decisions[1] == R"({"at":5,"task":"a","outcome":"finished","team":"ta"})");
}

TEST_CASE("policy_test reports the first failing expect: step, span, expectation, difference, decision",
          "[policy_test]") {
  for (const auto back_end : {gov::driver::BackEnd::interpreter, gov::driver::BackEnd::jit}) {
    const Loaded loaded(back_end);
    const auto result = gov::policy_test::run_case(*loaded.engine, loaded.block(1));
    REQUIRE(result.failure);
    const gov::policy_test::Failure& failure = *result.failure;
    CHECK(failure.step == 3);
    CHECK(loaded.location(failure.where).ends_with("small.gov:32:3"));
    CHECK(failure.expected == "b admitted");
    CHECK(failure.actual == "outcome is pending");
    REQUIRE(failure.decision);
    CHECK(failure.decision->find("b  ta  pending (waiting-for-quota") != std::string::npos);
    // It stops there: `submit c` never runs.
    CHECK(result.decisions.size() == 2);
  }
}

TEST_CASE("policy_test reports an expect with no decision left to match", "[policy_test]") {
  const Loaded loaded(gov::driver::BackEnd::interpreter);
  const auto result = gov::policy_test::run_case(*loaded.engine, loaded.block(2));
  REQUIRE(result.failure);
  CHECK(result.failure->step == 2);
  CHECK(loaded.location(result.failure->where).ends_with("small.gov:39:3"));
  CHECK(result.failure->expected == "a admitted");
  CHECK(result.failure->actual == "a has no further decision");
  CHECK(!result.failure->decision);
}
