// The parser's AST: shapes, spans, and declaration-level error recovery.
#include <catch2/catch.hpp>

#include "compiler/ast/printer.hpp"
#include "compiler/ast/source_text.hpp"
#include "tests/support/test_support.hpp"

using gov::test::parse_text;
using gov::test::rendered;
namespace ast = gov::ast;

namespace {

size_t count_code(const gov::test::Parsed& p, gov::Code code) {
  size_t n = 0;
  for (const auto& d : p.result.diagnostics.items()) n += d.code == code;
  return n;
}

}  // namespace

TEST_CASE("a team declaration becomes a Team with quotas and properties in order", "[parse]") {
  auto p = parse_text("team team-a {\n  quota ml.g5.8xlarge { instances = 2 }\n  borrow-limit = 50%\n}\n");
  INFO(rendered(p));
  REQUIRE(p.result.ok());
  REQUIRE(p.result.file.declarations.size() == 1);
  const auto& team = std::get<ast::Team>(p.result.file.declarations[0]);
  CHECK(team.name.text == "team-a");
  CHECK(team.name.span == gov::Span{5, 11});
  REQUIRE(team.items.size() == 2);
  const auto& quota = std::get<ast::Quota>(team.items[0]);
  CHECK(quota.instance_type.text == "ml.g5.8xlarge");
  CHECK(quota.properties[0].value->number.micros == 2'000'000);
  const auto& limit = std::get<ast::Property>(team.items[1]);
  CHECK(limit.key.text == "borrow-limit");
  CHECK(limit.value->number.unit == ast::Unit::percent);
  CHECK(limit.value->number.micros == 50'000'000);
}

TEST_CASE("numbers are exact and carry their unit", "[parse]") {
  auto p = parse_text("catalog c {\n  instance x { vcpus = 0.5, memory = 128 GiB, accelerator-memory = 22888MiB }\n"
                      "  instance y { vcpus = 500m, memory = 2 TiB }\n}\n");
  INFO(rendered(p));
  REQUIRE(p.result.ok());
  const auto& catalog = std::get<ast::Catalog>(p.result.file.declarations[0]);
  const auto& x = catalog.instances[0].properties;
  CHECK(x[0].value->number.micros == 500'000);
  CHECK(x[0].value->number.has_decimals);
  CHECK(x[1].value->number.unit == ast::Unit::gib);
  CHECK(x[2].value->number.unit == ast::Unit::mib);
  CHECK(x[2].value->number.micros == 22888'000'000);
  const auto& y = catalog.instances[1].properties;
  CHECK(y[0].value->number.unit == ast::Unit::milli);
  CHECK(ast::number_text(y[1].value->number) == "2 TiB");
}

TEST_CASE("expressions follow precedence and associativity", "[parse]") {
  // The condition's tree on one line: "(binary or (name a) (binary and (name b) (name c)))".
  auto tree = [](const std::string& condition) {
    auto p = parse_text("rule r {\n  when " + condition + "\n  deny \"x\"\n}\n");
    INFO(rendered(p));
    REQUIRE(p.result.ok());
    std::string printed = ast::print(p.result.file, {/*spans=*/false});
    std::string flat;
    for (size_t i = 0; i < printed.size(); ++i) {
      if (printed[i] == '\n') {
        while (i + 1 < printed.size() && printed[i + 1] == ' ') ++i;
        flat += ' ';
      } else {
        flat += printed[i];
      }
    }
    const size_t when = flat.find("(when ") + 6;
    return flat.substr(when, flat.find(" (deny") - when - 1);
  };
  CHECK(tree("a or b and c") == "(binary or (name a) (binary and (name b) (name c)))");
  CHECK(tree("a - b - c") == "(binary - (binary - (name a) (name b)) (name c))");
  CHECK(tree("not a == b") == "(not (binary == (name a) (name b)))");
  CHECK(tree("a + b * c") == "(binary + (name a) (binary * (name b) (name c)))");
  CHECK(tree("task.labels[\"k\"] == \"\"") == "(binary == (index (name task.labels) (string \"k\")) (string \"\"))");
  CHECK(tree("x not in [a, b]") == "(binary not in (name x) (list (name a) (name b)))");
  CHECK(tree("-a * b") == "(binary * (negate (name a)) (name b))");
  CHECK(tree("(a or b) and c") == "(binary and (binary or (name a) (name b)) (name c))");
  CHECK(tree("a > 2 GiB") == "(binary > (name a) (number 2 GiB))");
}

TEST_CASE("strings keep text and interpolations apart", "[parse]") {
  auto p = parse_text("rule r {\n  when true\n  deny \"at most {task.gpus} GPUs \\{literal\\}\"\n}\n");
  INFO(rendered(p));
  REQUIRE(p.result.ok());
  const auto& rule = std::get<ast::Rule>(p.result.file.declarations[0]);
  REQUIRE(rule.message.parts.size() == 3);
  CHECK(rule.message.parts[0].text == "at most ");
  CHECK(rule.message.parts[1].expr->name.text == "task.gpus");
  CHECK(rule.message.parts[2].text == " GPUs {literal}");
  CHECK(rule.action == ast::RuleAction::deny);
}

TEST_CASE("test blocks hold steps and expect clauses", "[parse]") {
  auto p = parse_text(
      "test \"t\" {\n  submit a1 { team = team-a, gpus = 3 }\n  at 90\n"
      "  expect a1 preempted by b1 reclaim message \"m\"\n  finish a1\n  cancel a1\n}\n");
  INFO(rendered(p));
  REQUIRE(p.result.ok());
  const auto& test = std::get<ast::Test>(p.result.file.declarations[0]);
  CHECK(test.name.plain() == "t");
  REQUIRE(test.steps.size() == 5);
  CHECK(test.steps[0].kind == ast::Step::Kind::submit);
  CHECK(test.steps[1].time.micros == 90'000'000);
  const auto& expect = test.steps[2];
  CHECK(expect.outcome.text == "preempted");
  REQUIRE(expect.clauses.size() == 3);
  CHECK(expect.clauses[0].kind == ast::ExpectClause::Kind::by);
  CHECK(expect.clauses[1].kind == ast::ExpectClause::Kind::word);
  CHECK(expect.clauses[2].message.plain() == "m");
}

TEST_CASE("comments are collected in source order", "[parse]") {
  auto p = parse_text("# one\nteam a { # two\n  borrow-limit = 50% // three\n}\n# four\n");
  REQUIRE(p.result.ok());
  REQUIRE(p.result.file.comments.size() == 4);
  CHECK(p.sources.get(0).slice(p.result.file.comments[2].span) == "// three");
}

TEST_CASE("three broken declarations give exactly three errors", "[parse][recovery]") {
  auto p = parse_text(
      "team a {\n  borrow-limit 50%\n}\n\n"
      "team b {\n  quota ml.g5.8xlarge { instances = 2 }\n}\n\n"
      "rule r {\n  when a <\n  deny \"x\"\n}\n\n"
      "policy {\n  priority = 10\n}\n\n"
      "team c {}\n");
  INFO(rendered(p));
  CHECK(p.result.diagnostics.items().size() == 3);
  // The two good declarations survive.
  CHECK(p.result.file.declarations.size() == 2);
}

TEST_CASE("a missing closing brace before the next declaration is one error", "[parse][recovery]") {
  auto p = parse_text("team a {\n  borrow-limit = 50%\n\nteam b {}\n");
  INFO(rendered(p));
  REQUIRE(p.result.diagnostics.items().size() == 1);
  CHECK(p.result.file.declarations.size() == 1);  // team b parsed after recovery
}

TEST_CASE("a missing closing brace at the end of the file points at the opening brace", "[parse][recovery]") {
  auto p = parse_text("team a {\n  quota x { instances = 1 }\n");
  INFO(rendered(p));
  REQUIRE(count_code(p, gov::Code::unclosed_block) == 1);
  const auto& d = p.result.diagnostics.items()[0];
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].where->span.begin == 7);
}

TEST_CASE("shape errors are all reported, not just the first", "[parse][schema]") {
  auto p = parse_text(
      "team a {\n  borow-limit = 50%\n  sharing = lend-borrow\n  fair-share-weight = 10%\n"
      "  active = true\n  active = false\n}\n");
  INFO(rendered(p));
  CHECK(count_code(p, gov::Code::unknown_property) == 1);
  CHECK(count_code(p, gov::Code::unknown_enum_value) == 1);
  CHECK(count_code(p, gov::Code::wrong_value_kind) == 1);
  CHECK(count_code(p, gov::Code::duplicate_property) == 1);
  CHECK(rendered(p).find("did you mean `borrow-limit`?") != std::string::npos);
  CHECK(rendered(p).find("did you mean `lend-and-borrow`?") != std::string::npos);
}

TEST_CASE("a percentage written without % gets a fix", "[parse][schema]") {
  auto p = parse_text("team a {\n  borrow-limit = 150\n}\n");
  REQUIRE(count_code(p, gov::Code::wrong_value_kind) == 1);
  CHECK(rendered(p).find("help: write `150%`") != std::string::npos);
}

TEST_CASE("binary units only: GB is an error that suggests GiB", "[parse]") {
  auto p = parse_text("catalog c {\n  instance x { memory = 128 GB }\n}\n");
  REQUIRE(count_code(p, gov::Code::unknown_unit) == 1);
  CHECK(rendered(p).find("did you mean `GiB`?") != std::string::npos);
}

TEST_CASE("a reserved word as a name and an invalid name are explained", "[parse]") {
  auto reserved = parse_text("team rule {}\n");
  CHECK(count_code(reserved, gov::Code::reserved_word) == 1);
  auto invalid = parse_text("team Team_A {}\n");
  CHECK(count_code(invalid, gov::Code::invalid_name) == 1);
  CHECK(rendered(invalid).find("like `team-a`") != std::string::npos);
}

TEST_CASE("every example policy and the catalog parse without errors", "[parse]") {
  for (const std::string& path : gov::test::files_under("policies", ".gov")) {
    auto p = parse_text(gov::test::read_text(path), path);
    INFO(rendered(p));
    CHECK(p.result.ok());
  }
}
