// Issue 26, point 5a: file names and user text never drive a terminal or a CI log. Control,
// bidi and invisible characters in paths and messages are escaped in every output format.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "compiler/diagnostics/formats.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/support/terminal_text.hpp"
#include "runtime/trace/json.hpp"
#include "tests/security/security_support.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using gov::test::Scratch;

namespace {

// A name that, printed raw, ends the annotation line, starts a GitHub workflow command and
// turns the terminal red.
const std::string kHostileName = "x\n::error file=evil.gov,line=1::INJECTED\x1b[31m.gov";

/// Whether `text` holds a byte a terminal acts on other than the line break: C0 controls
/// but '\n', DEL, or a C1 control or bidi control encoded in UTF-8.
bool has_raw_control(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) return true;
  }
  return text.find("\xE2\x80\xAE") != std::string::npos;
}

size_t count_lines_starting_with(const std::string& text, const std::string& prefix) {
  size_t count = 0;
  size_t start = 0;
  while (start < text.size()) {
    if (text.compare(start, prefix.size(), prefix) == 0) ++count;
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return count;
}

/// Writes a policy with one error (a string where a choice is expected) under `name`.
std::string write_hostile_policy(const Scratch& scratch, const std::string& name) {
  const fs::path file = scratch.path / name;
  gov::test::write_text(file.string(), "team a {\n  sharing = \"lend\"\n}\n");
  return file.string();
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

TEST_CASE("escape_for_terminal writes controls bidi and invisible characters as escapes", "[security][terminal]") {
  CHECK(gov::escape_for_terminal("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(gov::escape_for_terminal("\x1b[31mred") == "\\x1b[31mred");
  CHECK(gov::escape_for_terminal("\x7f") == "\\x7f");
  CHECK(gov::escape_for_terminal("\xC2\x9B" "2J") == "\\u{9b}2J");  // C1 CSI
  CHECK(gov::escape_for_terminal("a\xE2\x80\xAE" "b") == "a\\u{202e}b");
  CHECK(gov::escape_for_terminal("\xE2\x80\x8B") == "\\u{200b}");
  CHECK(gov::escape_for_terminal("bad \xFF byte") == "bad \\xff byte");
  // Ordinary text, backslashes and visible non-ASCII pass through.
  CHECK(gov::escape_for_terminal("unknown escape `\\q` in caf\xC3\xA9") == "unknown escape `\\q` in caf\xC3\xA9");
  CHECK(gov::display_path("dir\\x\n.gov") == "dir\\\\x\\n.gov");
  CHECK_FALSE(has_raw_control(gov::escape_for_terminal(kHostileName)));
  CHECK(gov::describe_code_point(0x202E) == "U+202E RIGHT-TO-LEFT OVERRIDE");
  CHECK(gov::describe_code_point(0xFEFF) == "U+FEFF ZERO WIDTH NO-BREAK SPACE");
  CHECK(gov::describe_code_point(0x41) == "U+0041");
}

TEST_CASE("the text renderer escapes hostile paths and messages", "[security][terminal]") {
  gov::SourceMap sources;
  const gov::SourceId id = sources.add(kHostileName, "team a {\n  x = 1\n}\n");
  gov::Diagnostics diagnostics;
  gov::Diagnostic& d = diagnostics.report(gov::make_diagnostic(gov::Code::unknown_property, {id, {11, 12}},
                                                               "unknown property `\x1b]0;title\x07`", "here\x1b[2J"));
  d.help = "help\nwith a line break";
  d.notes.push_back({gov::Location{id, {0, 4}}, "note \xE2\x80\xAE reversed"});
  const std::string out = gov::render_all(diagnostics, sources);
  INFO(out);
  CHECK_FALSE(has_raw_control(out));
  CHECK(out.rfind("x\\n::error file=evil.gov,line=1::INJECTED\\x1b[31m.gov:2:3: error[E0040]: unknown property "
                  "`\\x1b]0;title\\x07`\n",
                  0) == 0);
  CHECK(out.find("= help: help\\nwith a line break\n") != std::string::npos);
  CHECK(out.find("note: note \\u{202e} reversed\n") != std::string::npos);
  CHECK(out.find("--> x\\n::error") != std::string::npos);
}

TEST_CASE("a newline and a workflow command in a file name give one github annotation", "[security][terminal]") {
  Scratch scratch("terminal");
  const std::string path = write_hostile_policy(scratch, kHostileName);
  const auto result = gov::test::run_gov("lint --format github " + quoted(path));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 1);
  CHECK(count_lines_starting_with(result.out, "::") == 1);
  CHECK(result.out.find("::error ") == 0);
  CHECK(result.out.find("INJECTED") != std::string::npos);
  CHECK(result.out.find("x%0A%3A%3Aerror file=evil.gov%2Cline=1%3A%3AINJECTED\\x1b[31m.gov,line=2,") !=
        std::string::npos);
  CHECK(result.out.find('\n') == result.out.size() - 1);
  CHECK_FALSE(has_raw_control(result.out));
  CHECK_FALSE(has_raw_control(result.err));
}

TEST_CASE("ESC in a file name never reaches text json sarif or github output raw", "[security][terminal]") {
  Scratch scratch("terminal");
  const std::string name = "red\x1b[31m\xE2\x80\xAE\xC2\x9B.gov";
  const std::string path = write_hostile_policy(scratch, name);

  const auto text = gov::test::run_gov("lint " + quoted(path));
  INFO(text.err);
  CHECK(text.exit_code == 1);
  CHECK_FALSE(has_raw_control(text.out + text.err));
  CHECK(text.err.find("red\\x1b[31m\\u{202e}\\u{9b}.gov:2:13: error[E0042]") != std::string::npos);

  const auto github = gov::test::run_gov("lint --format github " + quoted(path));
  CHECK_FALSE(has_raw_control(github.out + github.err));
  CHECK(count_lines_starting_with(github.out, "::") == 1);

  for (const char* format : {"json", "sarif"}) {
    const auto result = gov::test::run_gov(std::string("lint --format ") + format + " " + quoted(path));
    INFO(format << ": " << result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK_FALSE(has_raw_control(result.out + result.err));
    const gov::support::Expected<gov::trace::JsonValue> parsed = gov::trace::parse_json(result.out);
    REQUIRE(parsed.ok());
    if (std::string(format) == "json") {
      // The escaping is JSON's: the decoded file name is the real one.
      const gov::trace::JsonValue* diagnostics = parsed->find("diagnostics");
      REQUIRE(diagnostics != nullptr);
      REQUIRE(diagnostics->items.size() == 1);
      const gov::trace::JsonValue* file = diagnostics->items[0].find("file");
      REQUIRE(file != nullptr);
      CHECK(file->text == path);
    } else {
      CHECK(result.out.find("red%1B%5B31m%E2%80%AE%C2%9B.gov") != std::string::npos);
    }
  }
}

TEST_CASE("cli messages naming a file escape it", "[security][terminal]") {
  const std::string missing = "/nonexistent/dir/\x1b[31mred\n::error::x.gov";
  for (const char* command : {"check", "lint", "fmt --check", "test", "inspect"}) {
    const auto result = gov::test::run_gov(std::string(command) + " " + quoted(missing));
    INFO(command << ": " << result.err);
    CHECK(result.exit_code != 0);
    CHECK_FALSE(has_raw_control(result.out + result.err));
    CHECK(result.err.find("\\x1b[31mred\\n::error::x.gov") != std::string::npos);
  }
  const auto trace = gov::test::run_gov("simulate policies/examples/workshop-g5.gov --trace " + quoted(missing));
  INFO(trace.err);
  CHECK_FALSE(has_raw_control(trace.out + trace.err));
  CHECK(trace.err.find("cannot read `/nonexistent/dir/\\x1b[31mred\\n::error::x.gov`") != std::string::npos);
}
