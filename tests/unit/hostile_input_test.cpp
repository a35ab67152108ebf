// Hostile input never crashes or hangs the parser: each case ends with a clear
// diagnostic (or parses, where the input is valid). CTest's timeout catches a hang;
// speed itself is measured by the benchmark program, not asserted here.
#include <catch2/catch.hpp>

#include <random>

#include "compiler/diagnostics/render.hpp"
#include "tests/support/test_support.hpp"

using gov::test::parse_text;
using gov::test::rendered;

namespace {

bool has_code(const gov::test::Parsed& p, gov::Code code) {
  for (const auto& d : p.result.diagnostics.items()) {
    if (d.code == code) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("an empty file is a valid, empty policy", "[hostile]") {
  auto p = parse_text("");
  CHECK(p.result.ok());
  CHECK(p.result.file.declarations.empty());
}

TEST_CASE("random binary bytes give an encoding error", "[hostile]") {
  std::mt19937 random(42);
  for (int round = 0; round < 200; ++round) {
    std::string bytes(1 + random() % 4096, '\0');
    for (char& c : bytes) c = static_cast<char>(random() & 0xFF);
    auto p = parse_text(bytes);
    INFO("round " << round);
    CHECK_FALSE(p.result.ok());
    CHECK(rendered(p).size() < 4096);  // the snippet never dumps the whole input
  }
}

TEST_CASE("invalid UTF-8 is reported at its byte", "[hostile]") {
  auto p = parse_text("team a {\n  # caf\xC3\x28\n}\n");
  REQUIRE(has_code(p, gov::Code::invalid_utf8));
  CHECK(p.result.diagnostics.items()[0].primary.span.begin == 16);
  auto overlong = parse_text("# \xC0\xAF\n");
  CHECK(has_code(overlong, gov::Code::invalid_utf8));
  auto surrogate = parse_text("# \xED\xA0\x80\n");
  CHECK(has_code(surrogate, gov::Code::invalid_utf8));
}

TEST_CASE("a 10 MB file is refused with E0001", "[hostile]") {
  std::string big;
  while (big.size() < 10'000'000) big += "team t { borrow-limit = 50% }\n";
  auto p = parse_text(big);
  CHECK(has_code(p, gov::Code::file_too_large));
}

TEST_CASE("100,000 nested parentheses give one nesting error", "[hostile]") {
  const std::string condition = std::string(100'000, '(') + "a" + std::string(100'000, ')');
  auto p = parse_text("rule r {\n  when " + condition + "\n  deny \"x\"\n}\n");
  REQUIRE(p.result.diagnostics.items().size() == 1);
  CHECK(has_code(p, gov::Code::nesting_too_deep));
}

TEST_CASE("deep prefix operators, lists and values are bounded too", "[hostile]") {
  std::string nots;
  for (int i = 0; i < 100'000; ++i) nots += "not ";
  CHECK(has_code(parse_text("rule r { when " + nots + "a deny \"x\" }"), gov::Code::nesting_too_deep));
  CHECK(has_code(parse_text("rule r { when " + std::string(100'000, '-') + "a deny \"x\" }"),
                 gov::Code::nesting_too_deep));
  CHECK(has_code(parse_text("rule r { when " + std::string(100'000, '[') + " deny \"x\" }"),
                 gov::Code::nesting_too_deep));
  std::string value;
  for (int i = 0; i < 100'000; ++i) value += "{ a = ";
  CHECK(has_code(parse_text("test \"t\" { submit a " + value + " }"), gov::Code::nesting_too_deep));
}

TEST_CASE("long operator chains parse up to the limit and are refused beyond it", "[hostile]") {
  auto chain = [](int terms) {
    std::string condition = "a";
    for (int i = 1; i < terms; ++i) condition += " and a";
    return "rule r {\n  when " + condition + "\n  deny \"x\"\n}\n";
  };
  auto ok = parse_text(chain(4000));
  INFO(rendered(ok));
  CHECK(ok.result.ok());
  CHECK(has_code(parse_text(chain(10'000)), gov::Code::nesting_too_deep));
}

TEST_CASE("a line of 1,000,000 characters is parsed and rendered in a window", "[hostile]") {
  auto garbage = parse_text(std::string(1'000'000, 'x') + "\n");
  REQUIRE(has_code(garbage, gov::Code::expected_declaration));
  CHECK(rendered(garbage).size() < 1000);
  auto long_name = parse_text("team " + std::string(1'000'000, 'a') + " {}\n");
  CHECK(has_code(long_name, gov::Code::too_long));  // names are at most 253 bytes
  CHECK(rendered(long_name).size() < 1000);
  auto long_comment = parse_text("# " + std::string(1'000'000, 'c') + "\nteam a {}\n");
  CHECK(long_comment.result.ok());
}

TEST_CASE("many broken declarations are each reported once", "[hostile]") {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "team t" + std::to_string(i) + " { borrow-limit 5 }\n";
  auto p = parse_text(text);
  CHECK(p.result.diagnostics.items().size() == 2000);
}
