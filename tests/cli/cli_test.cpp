// The `gov` command line: help for every command, exit codes, fmt --check.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

TEST_CASE("gov --help lists every command and each has --help", "[cli]") {
  auto help = run_gov("--help");
  CHECK(help.exit_code == 0);
  for (const char* command : {"check", "lint", "fmt", "test", "inspect", "simulate", "eval", "diff", "apply", "log",
                              "show", "rollback", "explain"}) {
    INFO(command);
    CHECK(help.out.find(std::string("  ") + command) != std::string::npos);
    auto sub = run_gov(std::string(command) + " --help");
    CHECK(sub.exit_code == 0);
    CHECK(sub.out.find("Usage: gov " + std::string(command)) != std::string::npos);
    CHECK(sub.out.find("--help") != std::string::npos);
  }
  CHECK(run_gov("check --help").out.find("--emit") != std::string::npos);
  CHECK(run_gov("fmt --help").out.find("--check") != std::string::npos);
}

TEST_CASE("usage errors exit 2 with one clear line", "[cli]") {
  CHECK(run_gov("").exit_code == 2);
  auto unknown = run_gov("frobnicate");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown command `frobnicate`") != std::string::npos);
  auto option = run_gov("check --bogus policies/examples/workshop-g5.gov");
  CHECK(option.exit_code == 2);
  CHECK(option.err.find("unknown option `--bogus`") != std::string::npos);
  auto missing = run_gov("check does/not/exist.gov");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("cannot read `does/not/exist.gov`") != std::string::npos);
}

TEST_CASE("gov check exits 0 on the shipped policies and 1 on errors", "[cli]") {
  CHECK(run_gov("check policies/catalog/aws-ml.gov policies/examples/workshop-g5.gov").exit_code == 0);
  CHECK(run_gov("check tests/diagnostics/01-missing-brace-at-eof-team.gov").exit_code == 1);
}

TEST_CASE("gov check --emit=ast prints the tree with spans", "[cli]") {
  auto result = run_gov("check --emit=ast policies/examples/workshop-g5.gov");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("(team team-a @") != std::string::npos);
  CHECK(result.out.find("(quota ml.g5.8xlarge") != std::string::npos);
}

TEST_CASE("gov fmt --check lists unformatted files and gov fmt fixes them", "[cli]") {
  const auto dir = std::filesystem::temp_directory_path() / ("gov-fmt-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "messy.gov").string();
  gov::test::write_text(path, "team a{borrow-limit=50%}\n");
  auto check = run_gov("fmt --check '" + path + "'");
  CHECK(check.exit_code == 1);
  CHECK(check.out == path + "\n");
  CHECK(run_gov("fmt '" + path + "'").exit_code == 0);
  CHECK(gov::test::read_text(path) == "team a {\n  borrow-limit = 50%\n}\n");
  CHECK(run_gov("fmt --check '" + path + "'").exit_code == 0);
  gov::test::write_text(path, "team a {\n");
  CHECK(run_gov("fmt '" + path + "'").exit_code == 1);
  CHECK(gov::test::read_text(path) == "team a {\n");  // never rewrites a broken file
  std::filesystem::remove_all(dir);
}

TEST_CASE("gov explain prints what a code means", "[cli]") {
  auto result = run_gov("explain E0020");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("unknown-unit") != std::string::npos);
  CHECK(run_gov("explain E9999").exit_code == 2);
  // A code in lower case is the code (a what-if analyst's finding, session 43); a name is not
  // upper-cased.
  CHECK(run_gov("explain e0020").out == result.out);
  CHECK(run_gov("explain UNKNOWN-UNIT").exit_code == 2);
}

TEST_CASE("gov check renders huge lines in a bounded window", "[cli][hostile]") {
  // Rendering once split a whole 10 MB line into display cells; now only a window is.
  const auto dir = std::filesystem::temp_directory_path();
  const std::string big = (dir / ("gov-big-" + std::to_string(::getpid()) + ".gov")).string();
  gov::test::write_text(big, std::string(10'000'000, 'x'));
  auto too_large = run_gov("check '" + big + "'");
  CHECK(too_large.exit_code == 1);
  CHECK(too_large.err.find("error[E0001]") != std::string::npos);
  CHECK(too_large.err.size() < 1000);
  gov::test::write_text(big, std::string(1'000'000, 'y') + " = 1\n");
  auto long_line = run_gov("check '" + big + "'");
  CHECK(long_line.exit_code == 1);
  CHECK(long_line.err.size() < 1000);
  std::filesystem::remove(big);
}
