// `gov diff --files`: the semantic diff in each format, against golden files
// (GOV_UPDATE_GOLDEN=1 rewrites them), and "no changes" exits 0.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

TEST_CASE("gov diff reports team-a's new quota and the capacity consequence", "[diff]") {
  const bool update = std::getenv("GOV_UPDATE_GOLDEN") != nullptr;
  for (const std::string format : {"text", "json", "markdown"}) {
    INFO("format " << format);
    auto result = run_gov("diff --files policies/examples/workshop-g5.gov tests/diff/workshop-g5-team-a-3.gov --format " +
                          format);
    CHECK(result.exit_code == 0);
    CHECK(result.err.empty());
    const std::string expected = gov::test::repo_path("tests/diff/workshop-g5-team-a-3." + format + ".expected");
    if (update) {
      gov::test::write_text(expected, result.out);
      continue;
    }
    CHECK(result.out == gov::test::read_text(expected));
  }
  auto text = run_gov("diff --files policies/examples/workshop-g5.gov tests/diff/workshop-g5-team-a-3.gov");
  CHECK(text.out.find("ml.g5.8xlarge gpu nominal: 2 → 3 (+1)") != std::string::npos);
  CHECK(text.out.find("ml.g5.8xlarge gpu borrowing limit: 1 → 3 (+2)") != std::string::npos);
  CHECK(text.out.find("now exceed the cluster's 4 instances") != std::string::npos);
  CHECK(text.out.find("team team-b") == std::string::npos);  // nothing else changed
}

TEST_CASE("gov diff of a policy with itself says so and exits 0", "[diff]") {
  auto result = run_gov("diff --files policies/examples/workshop-g5.gov policies/examples/workshop-g5.gov");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("no changes") != std::string::npos);
}

TEST_CASE("gov diff flags lost accelerators and reordered classes", "[diff]") {
  // Next to a copy of the catalog, so that the catalog import stays under the policy root.
  const gov::test::TempDir dir("diff-controls");
  dir.copy_catalog();
  const std::string stem = dir / "policies/examples/rules";
  const std::string before = gov::test::read_text(gov::test::repo_path("policies/examples/rules.gov"));
  std::string after = before;
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = after.find(from);
    REQUIRE(at != std::string::npos);
    after.replace(at, from.size(), to);
  };
  replace("priority training        = 70", "priority training        = 85");
  dir.write("policies/examples/rules-before.gov", before);
  dir.write("policies/examples/rules-after.gov", after);
  auto result = run_gov("diff --files " + stem + "-before.gov " + stem + "-after.gov --format json");
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("\"kind\":\"class-order\"") != std::string::npos);
  CHECK(result.out.find("\"field\":\"training weight\",\"class\":\"training\",\"property\":\"weight\",\"before\":70,\"after\":85,\"delta\":15") != std::string::npos);
}
