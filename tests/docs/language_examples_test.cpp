// docs/language.md's `test` example runs as it is written: it is the first test an author copies,
// and it once left out two decisions its `expect` steps must read (a helper found it failing).
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_support.hpp"

TEST_CASE("docs/language.md's test example passes against the workshop policy", "[docs]") {
  const std::string doc = gov::test::read_text(gov::test::repo_path("docs/language.md"));
  const size_t begin = doc.find("```gov\ntest \"");
  REQUIRE(begin != std::string::npos);
  const size_t body = begin + std::string("```gov\n").size();
  const size_t end = doc.find("```", body);
  REQUIRE(end != std::string::npos);
  const std::string example = doc.substr(body, end - body);

  // The example's cluster: the workshop's (team-a and team-b on ml.g5.8xlarge), without its tests.
  const std::string workshop = gov::test::read_text(gov::test::repo_path("policies/examples/workshop-g5.gov"));
  const size_t tests = workshop.find("\ntest \"");
  REQUIRE(tests != std::string::npos);
  gov::test::TempDir dir("language-example");
  dir.copy_catalog();
  const std::string path = dir.write("policies/examples/example.gov", workshop.substr(0, tests + 1) + "\n" + example);
  const gov::test::CommandResult result = gov::test::run_gov("test " + path);
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("1 passed, 0 failed") != std::string::npos);
}
