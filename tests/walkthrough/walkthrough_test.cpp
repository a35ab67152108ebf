// The HyperPod walkthrough (docs/semantics.md §4) replayed by `gov simulate` gives the decision
// stream of docs/interfaces.md byte for byte, and the walkthrough's test blocks pass.
#include <catch2/catch.hpp>

#include <cstdio>
#include <unistd.h>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

TEST_CASE("gov simulate replays the HyperPod walkthrough exactly", "[walkthrough]") {
  auto result = run_gov("simulate policies/examples/workshop-g5.gov --trace policies/examples/workshop-g5.trace.json");
  INFO(result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out == gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl")));
}

TEST_CASE("the walkthrough decision stream is the one docs/interfaces.md shows", "[walkthrough]") {
  // The spec's example, copied here so that this test needs nothing outside the repository.
  const std::string expected = gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl"));
  CHECK(expected.find("\"task\":\"a1\",\"outcome\":\"preempted\",\"team\":\"team-a\",\"by\":\"b1\",\"kind\":\"reclaim\"") !=
        std::string::npos);
  CHECK(expected.find("Workload no longer fits after processing another workload") != std::string::npos);
}

TEST_CASE("gov test runs every example's test blocks", "[walkthrough]") {
  auto result = run_gov("test policies/examples/*.gov");
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out.find(" 0 failed") != std::string::npos);
  CHECK(result.out.find("walkthrough step 4") != std::string::npos);
}

TEST_CASE("gov simulate --format text ends with a per-team summary", "[walkthrough]") {
  auto result = run_gov("simulate policies/examples/workshop-g5.gov --trace policies/examples/workshop-g5.trace.json --format text");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("preemptions caused") != std::string::npos);
  CHECK(result.out.find("team-a") != std::string::npos);
}

TEST_CASE("gov test reports a failing expectation with expected and actual", "[walkthrough]") {
  const std::string path = "tests/walkthrough/tmp-failing-" + std::to_string(::getpid()) + ".gov";
  std::string text = gov::test::read_text(gov::test::repo_path("policies/examples/workshop-g5.gov"));
  text.replace(text.find("import \"../catalog/aws-ml.gov\""), std::string("import \"../catalog/aws-ml.gov\"").size(),
               "import \"../../policies/catalog/aws-ml.gov\"");
  const std::string good = "expect a1 admitted borrowing { gpus = 1 }";
  const size_t at = text.find(good);
  REQUIRE(at != std::string::npos);
  text.replace(at, good.size(), "expect a1 admitted borrowing { gpus = 2 }");
  gov::test::write_text(gov::test::repo_path(path), text);
  auto result = run_gov("test " + path);
  std::remove(gov::test::repo_path(path).c_str());
  CHECK(result.exit_code == 1);
  CHECK(result.out.find("FAIL") != std::string::npos);
  CHECK(result.out.find("expected a1 admitted borrowing { gpus = 2 }") != std::string::npos);
  CHECK(result.out.find("it borrows { gpus = 1 }") != std::string::npos);
  CHECK(result.out.find(" 1 failed") != std::string::npos);
}
