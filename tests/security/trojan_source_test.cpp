// Issue 26, point 5b: bidi controls (Trojan Source) and invisible characters are errors that
// name each character; the `\u{...}` escape writes them into strings visibly.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include "compiler/support/terminal_text.hpp"
#include "compiler/format/format.hpp"
#include "tests/support/test_support.hpp"

namespace {

std::string utf8(uint32_t c) {
  std::string out;
  if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
  } else {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  }
  out += static_cast<char>(0x80 | (c & 0x3F));
  return out;
}

size_t count_code(const gov::Diagnostics& diagnostics, gov::Code code) {
  size_t n = 0;
  for (const gov::Diagnostic& d : diagnostics.items()) n += d.code == code ? 1 : 0;
  return n;
}

const gov::ast::Rule& first_rule(const gov::test::Parsed& parsed) {
  return std::get<gov::ast::Rule>(parsed.result.file.declarations.at(0));
}

}  // namespace

TEST_CASE("every bidi control is refused in comments strings and names", "[security][trojan]") {
  for (const uint32_t c : {0x202Au, 0x202Bu, 0x202Cu, 0x202Du, 0x202Eu, 0x2066u, 0x2067u, 0x2068u, 0x2069u, 0x200Eu,
                           0x200Fu, 0x061Cu}) {
    const std::string ch = utf8(c);
    for (const std::string& text : {"# note " + ch + "\nteam a {\n}\n",                            // comment
                                    "rule r { when task.gpus > 1 deny \"a" + ch + "b\" }\n",      // string
                                    "team a" + ch + " {\n}\n",                                     // name
                                    "rule r { when task.labels[\"k" + ch + "\"] == \"v\" deny \"m\" }\n"}) {
      const auto parsed = gov::test::parse_text(text);
      INFO(gov::describe_code_point(c) << " in: " << text << gov::test::rendered(parsed));
      REQUIRE(count_code(parsed.result.diagnostics, gov::Code::text_direction_control) == 1);
      const gov::Diagnostic& d = parsed.result.diagnostics.items().front();
      CHECK(d.message.find(gov::describe_code_point(c)) != std::string::npos);
      CHECK(parsed.sources.get(0).slice(d.primary.span) == ch);
      CHECK_FALSE(parsed.result.ok());
    }
  }
}

TEST_CASE("one text direction diagnostic per comment string or line with a caret at each", "[security][trojan]") {
  const std::string rlo = utf8(0x202E), lri = utf8(0x2066), pdi = utf8(0x2069);
  const std::string text = "team a {\n  // " + rlo + " } " + lri + "if admin" + pdi + " " + lri +
                           " begin\n  sharing = lend # " + rlo + "\n}\nrule r { when task.gpus > 1 deny \"" + rlo +
                           "x" + rlo + "\" }\n";
  const auto parsed = gov::test::parse_text(text);
  const std::string out = gov::test::rendered(parsed);
  INFO(out);
  REQUIRE(parsed.result.diagnostics.items().size() == 3);
  const gov::Diagnostic& comment = parsed.result.diagnostics.items()[0];
  CHECK(comment.marks.size() == 3);
  CHECK(comment.message ==
        "text direction control characters in a comment: U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT "
        "ISOLATE, U+2069 POP DIRECTIONAL ISOLATE");
  CHECK(parsed.result.diagnostics.items()[2].help == "if the string should hold it, write it as an escape: `\\u{202e}`");
  CHECK(out.find("  |      ^^^^^^^^   ^^^^^^^^        ^^^^^^^^ ^^^^^^^^ change the order") != std::string::npos);
  // The rendered source never carries the raw characters.
  CHECK(out.find(rlo) == std::string::npos);
  CHECK(out.find(lri) == std::string::npos);
}

TEST_CASE("hidden character reports are bounded per file", "[security][trojan]") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "# " + utf8(0x202E) + utf8(0x202E) + "\n";
  std::string line = "#";
  for (int i = 0; i < 100; ++i) line += " " + utf8(0x2066);
  text += line + "\n";
  const auto parsed = gov::test::parse_text(text);
  const auto& items = parsed.result.diagnostics.items();
  REQUIRE(items.size() == 50);
  CHECK(items.back().notes.back().message ==
        "951 more comments, strings or lines have such characters; only the first 50 are reported");
  const auto wide = gov::test::parse_text(line + "\n");
  REQUIRE(wide.result.diagnostics.items().size() == 1);
  CHECK(wide.result.diagnostics.items()[0].marks.size() == 15);  // 16 carets with the primary
}

TEST_CASE("the unicode escape writes a bidi control and fmt keeps it escaped", "[security][trojan]") {
  const std::string source = "rule r {\n  when task.gpus > 1\n  deny \"a \\u{202E} b \\u{200b} \\u{e9}\"\n}\n";
  const auto parsed = gov::test::parse_text(source);
  INFO(gov::test::rendered(parsed));
  REQUIRE(parsed.result.ok());
  CHECK(first_rule(parsed).message.plain() == "a " + utf8(0x202E) + " b " + utf8(0x200B) + " " + utf8(0xE9));
  const std::string formatted = gov::format::format(parsed.result.file, parsed.sources.get(0));
  CHECK(formatted.find("deny \"a \\u{202e} b \\u{200b} \xC3\xA9\"") != std::string::npos);
  const auto again = gov::test::parse_text(formatted);
  REQUIRE(again.result.ok());
  CHECK(first_rule(again).message.plain() == first_rule(parsed).message.plain());
}

TEST_CASE("text-direction-control is an error that cannot be allowed", "[security][trojan]") {
  const auto result = gov::test::run_gov("lint --allow text-direction-control tests/diagnostics/141-text-direction-in-string.gov");
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("E0007 is an error; only warnings can be allowed") != std::string::npos);
  const auto explain = gov::test::run_gov("explain E0007");
  CHECK(explain.exit_code == 0);
  CHECK(explain.out.find("text-direction-control") != std::string::npos);
}

TEST_CASE("invisible characters are data in strings and comments and errors elsewhere", "[security][trojan]") {
  const std::string zwsp = utf8(0x200B), nbsp = utf8(0xA0), bom = "\xEF\xBB\xBF";
  for (const std::string& text : {"# a" + zwsp + nbsp + "b\nrule r { when task.gpus > 1 deny \"a" + zwsp + "b\" }\n",
                                  bom + "team a {\n}\n"}) {
    const auto parsed = gov::test::parse_text(text);
    INFO(gov::test::rendered(parsed));
    CHECK(parsed.result.ok());
  }
  const auto named = gov::test::parse_text("team" + zwsp + " research {\n}\n");
  REQUIRE(named.result.diagnostics.items().size() == 1);
  CHECK(named.result.diagnostics.items()[0].code == gov::Code::invisible_character);
  CHECK(named.result.diagnostics.items()[0].message == "invisible character U+200B ZERO WIDTH SPACE after `team`");
  const auto second_bom = gov::test::parse_text(bom + bom + "team a {\n}\n");
  REQUIRE(second_bom.result.diagnostics.items().size() == 1);
  CHECK(second_bom.result.diagnostics.items()[0].message == "unexpected byte order mark (U+FEFF)");
  const auto c1 = gov::test::parse_text("team a {\n}\n# \xC2\x85\n");
  REQUIRE(c1.result.diagnostics.items().size() == 1);
  CHECK(c1.result.diagnostics.items()[0].code == gov::Code::control_character);
}
