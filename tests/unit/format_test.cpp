// `gov fmt`: idempotent, meaning-preserving, comments kept; on the shipped policies and on
// randomly mutated inputs.
#include <catch2/catch.hpp>

#include <random>

#include "compiler/ast/printer.hpp"
#include "compiler/format/format.hpp"
#include "tests/support/test_support.hpp"

using gov::test::parse_text;
using gov::test::rendered;

namespace {

std::string formatted(const gov::test::Parsed& p) { return gov::format::format(p.result.file, p.sources.get(0)); }
std::string tree(const gov::test::Parsed& p) { return gov::ast::print(p.result.file, {/*spans=*/false}); }

/// Formats `text` twice and checks the fixed point and the unchanged AST and comments.
void check_format_properties(const std::string& text, const std::string& name) {
  auto original = parse_text(text, name);
  REQUIRE(original.result.ok());
  const std::string once = formatted(original);
  auto reparsed = parse_text(once, name);
  INFO("formatted output:\n" << once << rendered(reparsed));
  REQUIRE(reparsed.result.ok());
  CHECK(tree(reparsed) == tree(original));
  CHECK(reparsed.result.file.comments.size() == original.result.file.comments.size());
  CHECK(formatted(reparsed) == once);
}

}  // namespace

TEST_CASE("the shipped policies are formatted, and formatting them is a fixed point", "[format]") {
  for (const std::string& path : gov::test::files_under("policies", ".gov")) {
    INFO(path);
    const std::string text = gov::test::read_text(path);
    check_format_properties(text, path);
    CHECK(formatted(parse_text(text, path)) == text);
  }
}

TEST_CASE("formatting normalises layout and keeps comments", "[format]") {
  const std::string messy =
      "# header\n\n\n\nteam   team-a{borrow-limit=50%   # trailing\n"
      "quota ml.g5.8xlarge{instances=2}\n\n\n  # own line\n  fair-share-weight=0,active=true}\n"
      "rule r{when not(a in [b,c])and(x+1)*2>3 deny \"m {task.gpus}\"}\n"
      "test \"t\"{submit a1{team=team-a,gpus=3}\nexpect a1 admitted borrowing{gpus=1}}";
  auto p = parse_text(messy);
  INFO(rendered(p));
  REQUIRE(p.result.ok());
  const std::string out = formatted(p);
  CHECK(out ==
        "# header\n\n"
        "team team-a {  # trailing\n"
        "  borrow-limit = 50%\n"
        "  quota ml.g5.8xlarge { instances = 2 }\n\n"
        "  # own line\n"
        "  fair-share-weight = 0\n"
        "  active            = true\n"
        "}\n\n"
        "rule r {\n"
        "  when not (a in [b, c]) and (x + 1) * 2 > 3\n"
        "  deny \"m {task.gpus}\"\n"
        "}\n\n"
        "test \"t\" {\n"
        "  submit a1 { team = team-a, gpus = 3 }\n"
        "  expect a1 admitted borrowing { gpus = 1 }\n"
        "}\n");
  check_format_properties(messy, "messy.gov");
}

TEST_CASE("formatting randomly mutated policies is stable wherever they parse", "[format][property]") {
  std::vector<std::string> seeds;
  for (const std::string& path : gov::test::files_under("policies/examples", ".gov")) {
    seeds.push_back(gov::test::read_text(path));
  }
  const std::string alphabet = " \n\t{}[]()=,:#\"%-+*<>.";
  std::mt19937 random(7);
  int parsed = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string text = seeds[random() % seeds.size()];
    const int edits = 1 + static_cast<int>(random() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = random() % text.size();
      switch (random() % 3) {
        case 0: text.erase(at, 1 + random() % 8); break;
        case 1: text.insert(at, 1, alphabet[random() % alphabet.size()]); break;
        default: text[at] = alphabet[random() % alphabet.size()]; break;
      }
    }
    auto p = parse_text(text);
    if (!p.result.ok()) continue;
    ++parsed;
    INFO("round " << round);
    check_format_properties(text, "mutated.gov");
  }
  CHECK(parsed > 100);
}

TEST_CASE("a map written over several lines stays so, each entry with its comment", "[format]") {
  const std::string messy =
      "cluster c {\n"
      "  catalog = aws-ml\n"
      "  capacity = {   # what we run\n"
      "    # GPUs\n"
      "    ml.g5.8xlarge: 4,   # the workshop pool\n"
      "    ml.p5.48xlarge: 2,  # on order\n"
      "  }\n"
      "  # the end\n"
      "}\n";
  const std::string canonical =
      "cluster c {\n"
      "  catalog  = aws-ml\n"
      "  capacity = {  # what we run\n"
      "    # GPUs\n"
      "    ml.g5.8xlarge:  4  # the workshop pool\n"
      "    ml.p5.48xlarge: 2  # on order\n"
      "  }\n"
      "  # the end\n"
      "}\n";
  auto parsed = parse_text(messy, "maps.gov");
  REQUIRE(parsed.result.ok());
  CHECK(formatted(parsed) == canonical);
  check_format_properties(messy, "maps.gov");
  // Written on one line, a map stays on one line.
  auto one_line = parse_text("cluster c {\n  capacity = { ml.g5.8xlarge: 4, ml.p5.48xlarge: 2 }\n}\n", "one.gov");
  REQUIRE(one_line.result.ok());
  CHECK(formatted(one_line) == "cluster c {\n  capacity = { ml.g5.8xlarge: 4, ml.p5.48xlarge: 2 }\n}\n");
}

TEST_CASE("a quota or a submit written over several lines stays so, each property with its comment", "[format]") {
  const std::string messy =
      "team research {\n"
      "  quota ml.g5.8xlarge {\n"
      "    instances = 2       # guaranteed\n"
      "    borrow-limit = {\n"
      "      gpus = 1  # one more\n"
      "    }\n"
      "  }\n"
      "  quota ml.g5.12xlarge { instances = 1 } # c\n"
      "}\n"
      "test \"t\" {\n"
      "  submit a {\n"
      "    team = research   # who\n"
      "    gpus = 1\n"
      "  }\n"
      "  expect a admitted\n"
      "}\n";
  const std::string canonical =
      "team research {\n"
      "  quota ml.g5.8xlarge {\n"
      "    instances    = 2  # guaranteed\n"
      "    borrow-limit = {\n"
      "      gpus = 1  # one more\n"
      "    }\n"
      "  }\n"
      "  quota ml.g5.12xlarge { instances = 1 }  # c\n"
      "}\n"
      "\n"
      "test \"t\" {\n"
      "  submit a {\n"
      "    team = research  # who\n"
      "    gpus = 1\n"
      "  }\n"
      "  expect a admitted\n"
      "}\n";
  auto parsed = parse_text(messy, "blocks.gov");
  REQUIRE(parsed.result.ok());
  CHECK(formatted(parsed) == canonical);
  check_format_properties(messy, "blocks.gov");
  // Written on one line, each stays on one line.
  auto one_line = parse_text("team research {\n  quota ml.g5.8xlarge { instances = 2, borrow-limit = { gpus = 1 } }\n}\n",
                             "one.gov");
  REQUIRE(one_line.result.ok());
  CHECK(formatted(one_line) == "team research {\n  quota ml.g5.8xlarge { instances = 2, borrow-limit = { gpus = 1 } }\n}\n");
}

// A trailing comment on a line that holds two properties is the second's (it follows it), and
// the second, printed on one line, takes it above itself rather than leaving it to the first.
TEST_CASE("a comment after the second property of a line does not go to the first", "[format]") {
  const std::string messy =
      "test \"t\" {\n"
      "  submit a {\n"
      "    gpus = 1, labels = { k: \"v\" # about the labels\n"
      "    }\n"
      "  }\n"
      "}\n";
  const std::string canonical =
      "test \"t\" {\n"
      "  submit a {\n"
      "    gpus   = 1\n"
      "    # about the labels\n"
      "    labels = { k: \"v\" }\n"
      "  }\n"
      "}\n";
  auto parsed = parse_text(messy, "shared-line.gov");
  REQUIRE(parsed.result.ok());
  CHECK(formatted(parsed) == canonical);
  check_format_properties(messy, "shared-line.gov");
}

TEST_CASE("a negation of a negation keeps its parentheses", "[format]") {
  const std::string text = "rule r {\n  when -(-task.gpus) > 2 and -(-(-task.gpus)) < 0\n  deny \"x\"\n}\n";
  auto parsed = parse_text(text, "neg.gov");
  REQUIRE(parsed.result.ok());
  CHECK(formatted(parsed) == text);  // not `--task.gpus`, which parses alike but reads as a decrement
  check_format_properties(text, "neg.gov");
}

TEST_CASE("an empty block closes on its header line unless a comment is inside", "[format]") {
  const std::string text =
      "cohort org {\n}\n\ncohort dept {\n  parent = org\n}\n\ncohort lab {  # kept\n}\n\n"
      "cohort ops {\n  # inside\n}\n";
  auto p = parse_text(text);
  INFO(rendered(p));
  REQUIRE(p.result.ok());
  CHECK(formatted(p) ==
        "cohort org {}\n\n"
        "cohort dept {\n  parent = org\n}\n\n"
        "cohort lab {  # kept\n}\n\n"
        "cohort ops {\n  # inside\n}\n");
  check_format_properties(text, "empty.gov");
}
