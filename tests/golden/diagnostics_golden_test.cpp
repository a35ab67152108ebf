// Golden files, one test case each (registered at run time, so one CTest entry each):
// - `golden/diagnostics/<case>`: tests/diagnostics/<case>.gov is checked with `gov check` (or
//   the command named on a first line `# gov: <command> [options]`); its stderr and exit status
//   must equal <case>.expected byte for byte.
// - `golden/emit/<policy>/ast` and `.../ir`: `gov check --emit=ast|ir` of
//   tests/golden/emit/<policy>.gov must print <policy>.ast.expected / <policy>.ir.expected
//   exactly, with nothing on stderr and exit status 0.
// GOV_UPDATE_GOLDEN=1 rewrites the expected files instead of comparing (`GOV_UPDATE_GOLDEN=1
// build/bin/gov_tests "[golden]"`); review the diff.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "tests/support/dynamic_cases.hpp"
#include "tests/support/test_support.hpp"

namespace {

bool updating() { return std::getenv("GOV_UPDATE_GOLDEN") != nullptr; }

std::string relative_path(const std::string& path) { return std::filesystem::relative(path, GOV_SOURCE_DIR).string(); }

/// `path` without its last `suffix_size` characters.
std::string without_suffix(const std::string& path, size_t suffix_size) { return path.substr(0, path.size() - suffix_size); }

std::string command_for(const std::string& text) {
  const std::string marker = "# gov: ";
  if (text.rfind(marker, 0) == 0) return text.substr(marker.size(), text.find('\n') - marker.size());
  return "check";
}

/// Compares `actual` with the file at `expected_path`, or rewrites it when updating.
void compare_or_update(const std::string& actual, const std::string& expected_path) {
  if (updating()) {
    gov::test::write_text(expected_path, actual);
    return;
  }
  INFO("expected output " << relative_path(expected_path) << " (GOV_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(std::filesystem::exists(expected_path));
  CHECK(actual == gov::test::read_text(expected_path));
}

void diagnostics_case(const std::string& path) {
  const std::string command = command_for(gov::test::read_text(path));
  const auto result = gov::test::run_gov(command + " " + relative_path(path));
  compare_or_update(result.err + "exit status: " + std::to_string(result.exit_code) + "\n",
                    without_suffix(path, 4) + ".expected");
}

void emit_case(const std::string& path, const std::string& stage) {
  const auto result = gov::test::run_gov("check --emit=" + stage + " " + relative_path(path));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.empty());
  compare_or_update(result.out, without_suffix(path, 4) + "." + stage + ".expected");
}

void register_golden() {
  for (const std::string& path : gov::test::files_under("tests/diagnostics", ".gov")) {
    const std::string name = std::filesystem::path(path).stem().string();
    gov::test::register_case("golden/diagnostics/" + name, "[golden]", [path] { diagnostics_case(path); }, __FILE__,
                             __LINE__);
  }
  for (const std::string& path : gov::test::files_under("tests/golden/emit", ".gov")) {
    const std::string name = std::filesystem::path(path).stem().string();
    for (const std::string stage : {"ast", "ir"}) {
      gov::test::register_case("golden/emit/" + name + "/" + stage, "[golden]", [path, stage] { emit_case(path, stage); },
                               __FILE__, __LINE__);
    }
  }
}

[[maybe_unused]] const bool registered = gov::test::add_registrar(&register_golden);

}  // namespace

TEST_CASE("every golden expected file has its case", "[golden]") {
  // A case renamed or removed without its expected output would leave a file nothing compares.
  for (const auto& [directory, suffix] : {std::pair<std::string, std::string>{"tests/diagnostics", ".expected"},
                                          {"tests/golden/emit", ".ast.expected"},
                                          {"tests/golden/emit", ".ir.expected"}}) {
    const auto expected = gov::test::files_under(directory, suffix);
    CHECK(!expected.empty());
    for (const std::string& path : expected) {
      INFO(relative_path(path));
      CHECK(std::filesystem::exists(without_suffix(path, suffix.size()) + ".gov"));
    }
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
