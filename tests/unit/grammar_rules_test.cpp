// Table-driven tests of the grammar: for every rule, inputs it must accept whole and
// inputs it must reject; and PEGTL's analyze() finds no problem in the grammar.
#include <catch2/catch.hpp>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze.hpp>

#include "grammar/rules.hpp"

namespace pegtl = tao::pegtl;
namespace r = gov::grammar::rules;

namespace {

/// True when Rule matches the whole input. A must<> failure inside counts as a rejection.
template <typename Rule>
bool matches(const std::string& input) {
  pegtl::memory_input in(input, "test");
  try {
    return pegtl::parse<pegtl::seq<Rule, pegtl::eof>>(in);
  } catch (const pegtl::parse_error&) {
    return false;
  }
}

template <typename Rule>
void check_rule(const char* rule_name, std::initializer_list<const char*> accepted,
                std::initializer_list<const char*> rejected) {
  for (const char* input : accepted) {
    INFO(rule_name << " should accept: " << input);
    CHECK(matches<Rule>(input));
  }
  for (const char* input : rejected) {
    INFO(rule_name << " should reject: " << input);
    CHECK_FALSE(matches<Rule>(input));
  }
}

#define GOV_RULE(rule, ...) check_rule<r::rule>(#rule, __VA_ARGS__)

}  // namespace

TEST_CASE("the grammar has no analyze() problems", "[grammar]") {
  CHECK(pegtl::analyze<r::file>(-1) == 0);
}

TEST_CASE("lexical rules", "[grammar]") {
  GOV_RULE(comment, {"# hello", "// hello", "#", "# ünïcode"}, {"/ x", "hello"});
  GOV_RULE(sp, {"", "  \t\n", " # c\n  // d\n"}, {"x"});
  GOV_RULE(sp1, {" ", "\n# c\n"}, {""});
  GOV_RULE(name, {"team-a", "fine-tuning", "ml.g5.8xlarge", "ml.p6-b200.48xlarge", "task.gpus", "a", "a1",
                  "team.used.gpus", "a--b", "teams", "android", "order"},
           {"Team", "team_a", "1team", "-a", "a-", "team", "and", "not", "in", "true", "ml.", ""});
  GOV_RULE(key, {"borrow-limit", "catalog", "priority", "team"}, {"Key", "1x", "a_b"});
  GOV_RULE(reserved_word, {"import", "catalog", "instance", "cluster", "policy", "team", "quota", "rule", "test",
                           "priority", "when", "deny", "warn", "submit", "finish", "cancel", "expect", "at", "and",
                           "or", "not", "in", "true", "false"},
           {"teams", "team-a", "policy.x", "on", "by"});
  // Unit-like words after a blank are taken as units so that the parser can name a wrong one.
  GOV_RULE(number, {"4", "10_000", "0.5", "128 GiB", "128GiB", "500m", "50%", "50 %", "2 TiB", "1.25", "128 GB",
                    "128 gib", "500 m"},
           {"1.", ".5", "_1", "1__0", "-1", "4 gpus", "4 and"});
  GOV_RULE(digits, {"0", "123", "1_000"}, {"", "a", "1_"});
  GOV_RULE(unit, {"%", "m", "GiB", " GiB", "\tMiB", "GB", " m", " gb", " %"}, {" ", " gpus", " mx"});
  GOV_RULE(boolean, {"true", "false"}, {"True", "truex", "yes"});
  GOV_RULE(string_literal, {"\"\"", "\"plain\"", "\"esc \\\" \\\\ \\n \\t \\{ \\}\"", "\"{task.gpus} GPUs\"",
                            "\"a {x + 1} b\"", "\"ünïcode\"", "\"a } b\""},
           {"\"open", "\"bad \\q\"", "\"{task.gpus\"", "\"line\nbreak\"", "'single'"});
  GOV_RULE(escape, {"\\n", "\\\""}, {"\\x", "n"});
  GOV_RULE(interpolation, {"{a}", "{ a.b }", "{a + 1}"}, {"{}", "{a", "a}"});
}

TEST_CASE("expression rules", "[grammar]") {
  GOV_RULE(expr, {"a", "task.gpus > 4", "a and b or c", "not a", "not not a", "a == b", "a != b", "a <= b",
                  "a >= b", "a < b", "a > b", "a in [b, c]", "a not in [b]", "\"x\" in task.labels", "a + b * c",
                  "a - b", "(a or b) and c", "-a", "-(a + 1)", "task.labels[\"k\"]", "x[\"a\"][\"b\"]", "[]",
                  "[a, b,]", "1 GiB * 2", "a / 2", "true", "128 GiB", "50%", "\"s\"", "a == \"\""},
           {"", "a <", "a < b < c", "a == b == c", "a and", "or a", "a -b", "a = b", "(a", "[a", "a[\"k\"",
            "a +", "not"});
  GOV_RULE(cmp_op, {"==", "!=", "<=", ">=", "<", ">", "in", "not in", "not  in"}, {"=", "=>", "inn"});
  GOV_RULE(add_op, {" - ", " + ", "+", "\n-\n"}, {"-", "- ", " -"});
  GOV_RULE(mul_op, {"*", "/"}, {"%", "x"});
  GOV_RULE(paren, {"(a)", "( a and b )"}, {"()", "(a"});
  GOV_RULE(list_expr, {"[]", "[a]", "[a, b]", "[ a , b , ]"}, {"[", "[a b]", "[,]"});
  GOV_RULE(index_suffix, {"[\"k\"]", "[ a ]"}, {"[]", "[\"k\""});
  GOV_RULE(negate, {"-a", "-1", "--a"}, {"- a", "-"});
  GOV_RULE(not_prefix, {"not a", "not (a)"}, {"nota", "not"});
  GOV_RULE(operand, {"a", "-a", "a[\"x\"]", "(a)"}, {"", "+a"});
  GOV_RULE(mul_expr, {"a * b", "a*b", "a / b * c"}, {"a *", "* a"});
  GOV_RULE(add_expr, {"a + b", "a+b", "a - b - c"}, {"a -b", "a +"});
  GOV_RULE(cmp_expr, {"a", "a == b", "a in b"}, {"a == b == c", "a = b"});
  GOV_RULE(not_expr, {"not a == b", "a"}, {"not"});
  GOV_RULE(and_expr, {"a and b and c", "a"}, {"a and", "a and and b"});
  GOV_RULE(or_expr, {"a or b", "a or b and c"}, {"a or"});
  GOV_RULE(condition, {"task.gpus > 4 and task.priority == experimentation"}, {""});
}

TEST_CASE("value rules", "[grammar]") {
  GOV_RULE(value, {"4", "50%", "128 GiB", "\"s\"", "true", "aws-ml", "{ ml.g5.8xlarge: 4 }", "{ gpus = 1 }", "{}",
                   "[a, b]", "{ project: \"llm\", \"app.kubernetes.io/name\": \"x\" }", "{ a = { b = 1 } }"},
           {"", "{ gpus = 1", "{ a: }", "[a", "=", "{ a = 1, b: 2 }"});
  GOV_RULE(property, {"gpus = 4", "borrow-limit = 50%", "catalog = aws-ml", "a=1"}, {"gpus 4", "gpus =", "= 4"});
  GOV_RULE(map_entry, {"ml.g5.8xlarge: 4", "\"k\": \"v\"", "k :1"}, {"k = 1", "k:"});
  GOV_RULE(block_value, {"{ a = 1 }", "{ a = 1, b = 2 }", "{\n a = 1\n b = 2\n}"}, {"{}", "{ a: 1 }"});
  GOV_RULE(map_value, {"{}", "{ a: 1 }", "{ a: 1, b: 2, }"}, {"{ a = 1 }", "{ a: 1"});
  GOV_RULE(list_value, {"[]", "[1, 2]", "[a,]"}, {"[1 2]", "[1"});
}

TEST_CASE("declaration rules", "[grammar]") {
  GOV_RULE(import_decl, {"import \"../catalog/aws-ml.gov\""}, {"import", "import x", "import \"x"});
  GOV_RULE(instance_decl, {"instance ml.g5.8xlarge { gpus = 1, vcpus = 32 }", "instance x {}"},
           {"instance { }", "instance x", "instance x { gpus = 1"});
  GOV_RULE(catalog_decl, {"catalog aws-ml {\n  instance a { vcpus = 2 }\n  instance b { vcpus = 4 }\n}", "catalog c {}"},
           {"catalog {}", "catalog c { gpus = 1 }"});
  GOV_RULE(cluster_decl, {"cluster c {\n  catalog = aws-ml\n  capacity = { a: 4 }\n}"}, {"cluster c", "cluster {}"});
  GOV_RULE(priority_decl, {"priority inference = 90", "priority a=1"}, {"priority = 90", "priority a 90", "priority a = x"});
  GOV_RULE(policy_decl, {"policy {\n  idle-compute = fair-share\n  priority a = 1\n}", "policy {}"},
           {"policy x {}", "policy { priority }"});
  GOV_RULE(quota_decl, {"quota ml.g5.8xlarge { instances = 2 }", "quota a { gpus = 2, vcpus = 48 }"},
           {"quota { }", "quota a"});
  GOV_RULE(team_decl, {"team team-a {\n  quota a { instances = 2 }\n  borrow-limit = 50%\n}", "team t {}"},
           {"team {}", "team t { quota }", "team Team {}", "team rule {}"});
  GOV_RULE(rule_decl, {"rule r {\n  when a > 1\n  deny \"no\"\n}", "rule r { when a warn \"w\" }"},
           {"rule r { deny \"x\" }", "rule r { when a }", "rule r { when a deny }", "rule r { when deny \"x\" }"});
  GOV_RULE(submit_step, {"submit a1 { team = team-a, gpus = 3 }"}, {"submit { }", "submit a1"});
  GOV_RULE(finish_step, {"finish a1"}, {"finish", "finish 1a"});
  GOV_RULE(cancel_step, {"cancel a1"}, {"cancel"});
  GOV_RULE(at_step, {"at 90", "at 1.5"}, {"at", "at x"});
  GOV_RULE(expect_step, {"expect a1 admitted", "expect a1 admitted borrowing { gpus = 1 }",
                         "expect a1 preempted by b1 reclaim", "expect a1 pending waiting-for-quota short { gpus = 1 }",
                         "expect a1 admitted on ml.g5.8xlarge warned by big-borrow message \"m\"",
                         "expect a1 rejected by cap"},
           {"expect a1", "expect admitted", "expect a1 admitted warned big", "expect a1 admitted message"});
  GOV_RULE(step, {"submit a { }", "finish a", "cancel a", "at 1", "expect a admitted"}, {"wait 1", ""});
  GOV_RULE(test_decl, {"test \"t\" {\n  submit a { gpus = 1 }\n  expect a admitted\n}", "test \"t\" {}"},
           {"test t {}", "test \"t\" { bogus }"});
  GOV_RULE(declaration, {"import \"x\"", "team t {}", "policy {}"}, {"bogus", "teams t {}"});
}
