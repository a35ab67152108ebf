// Golden diagnostics: each tests/diagnostics/<case>.gov is checked with `gov check` (or
// the command named on a first line `# gov: <command> [options]`) and its stderr must
// equal <case>.expected byte for byte. GOV_UPDATE_GOLDEN=1 rewrites the expected files;
// review the diff.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "tests/support/test_support.hpp"

namespace {

std::string command_for(const std::string& text) {
  const std::string marker = "# gov: ";
  if (text.rfind(marker, 0) == 0) return text.substr(marker.size(), text.find('\n') - marker.size());
  return "check";
}

}  // namespace

TEST_CASE("golden diagnostics", "[golden]") {
  const bool update = std::getenv("GOV_UPDATE_GOLDEN") != nullptr;
  const auto cases = gov::test::files_under("tests/diagnostics", ".gov");
  REQUIRE(cases.size() >= 30);
  for (const std::string& path : cases) {
    const std::string relative = std::filesystem::relative(path, GOV_SOURCE_DIR).string();
    const std::string expected_path = path.substr(0, path.size() - 4) + ".expected";
    const std::string command = command_for(gov::test::read_text(path));
    const auto result = gov::test::run_gov(command + " " + relative);
    const std::string actual = result.err + "exit status: " + std::to_string(result.exit_code) + "\n";
    if (update) {
      gov::test::write_text(expected_path, actual);
      continue;
    }
    INFO("case " << relative << " (GOV_UPDATE_GOLDEN=1 rewrites the expected output)");
    REQUIRE(std::filesystem::exists(expected_path));
    CHECK(actual == gov::test::read_text(expected_path));
  }
}

TEST_CASE("every syntax error code has a golden case", "[golden]") {
  std::string all;
  for (const std::string& path : gov::test::files_under("tests/diagnostics", ".expected")) {
    all += gov::test::read_text(path);
  }
  for (const char* code : {"E0002", "E0003", "E0004", "E0007", "E0008", "E0010", "E0011", "E0012", "E0020", "E0021", "E0030",
                           "E0031", "E0032", "E0033", "E0034", "E0035", "E0036", "E0040", "E0041", "E0042",
                           "E0043", "E0044", "E0045"}) {
    INFO("code " << code);
    CHECK(all.find(std::string("[") + code + "]") != std::string::npos);
  }
}
