// The limits of docs/limits.md, each at its bound and one past it, scaled to run in the normal
// suite: past a limit comes one clear error, never a crash, a hang or exhausted memory. The
// full-size hostile inputs (100,000 teams, a 1 GB trace, a million versions) run in tools/hostile.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/check/check.hpp"
#include "compiler/check/limits.hpp"
#include "compiler/check/program.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "grammar/parse.hpp"
#include "runtime/trace/json.hpp"
#include "runtime/trace/trace_file.hpp"
#include "tests/support/test_support.hpp"

namespace gov {
namespace {

namespace fs = std::filesystem;

size_t count_code(const Diagnostics& diagnostics, Code code) {
  size_t n = 0;
  for (const Diagnostic& d : diagnostics.items()) n += d.code == code ? 1 : 0;
  return n;
}

const Diagnostic* first_with(const Diagnostics& diagnostics, Code code) {
  for (const Diagnostic& d : diagnostics.items()) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

/// A fresh directory, removed with its contents.
struct ScratchDir {
  fs::path root;
  ScratchDir() {
    root = fs::temp_directory_path() / fmt::format("gov-limits-{}-{}", ::getpid(), counter()++);
    fs::create_directories(root);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = root / name;
    test::write_text(path.string(), text);
    return path.string();
  }
};

std::string teams(size_t n, const std::string& prefix = "t") {
  std::string text;
  for (size_t i = 0; i < n; ++i) text += fmt::format("team {}{} {{}}\n", prefix, i);
  return text;
}

}  // namespace

// ------------------------------------------------------------------ expressions

TEST_CASE("chains inside parentheses inside chains stop at the operator budget", "[limits]") {
  // 40 levels of parentheses, each a chain of 400 `+`: 16,000 operators, a tree 16,000 deep
  // for every later stage to walk. It crashed `gov check` (stack overflow) before the budget.
  std::string expression = "task.gpus";
  for (int level = 0; level < 40; ++level) {
    std::string chain = "(" + expression;
    for (int i = 0; i < 400; ++i) chain += " + 1";
    expression = chain + ")";
  }
  auto p = test::parse_text("rule r {\n  when " + expression + " > 0\n  deny \"x\"\n}\n");
  REQUIRE(count_code(p.result.diagnostics, Code::nesting_too_deep) == 1);
  CHECK(first_with(p.result.diagnostics, Code::nesting_too_deep)->message ==
        fmt::format("more than {} operators in one declaration", grammar::kMaxDeclarationOperators));
}

TEST_CASE("a rule with 10,000 `and` terms is refused, one at the operator budget checks", "[limits]") {
  auto rule = [](size_t terms) {
    std::string condition = "task.gpus > 0";
    for (size_t i = 1; i < terms; ++i) condition += " and task.gpus > 0";
    return "rule r {\n  when " + condition + "\n  deny \"x\"\n}\n";
  };
  auto refused = test::program_from_text("r.gov", rule(10'000));
  CHECK(count_code(refused.diagnostics, Code::nesting_too_deep) == 1);
  // 1,365 terms: 1,364 `and` and 1,365 `>`, 2,729 operators, within the budget of 4,096. The
  // checker, the lowering and the printers walk its 1,365-deep tree.
  auto accepted = test::program_from_text("r.gov", rule(1'365));
  REQUIRE_FALSE(accepted.diagnostics.has_errors());
  const check::CheckResult checked = check::check(accepted);
  INFO(render_all(checked.diagnostics, accepted.sources));
  CHECK(checked.ok());
}

TEST_CASE("each declaration has its own operator budget", "[limits]") {
  std::string text;
  for (int r = 0; r < 3; ++r) {
    std::string condition = "task.gpus > 0";
    for (int i = 1; i < 1500; ++i) condition += " and task.gpus > 0";  // 2,999 operators each
    text += fmt::format("rule r{} {{\n  when {}\n  deny \"x\"\n}}\n", r, condition);
  }
  auto p = test::parse_text(text);
  INFO(test::rendered(p));
  CHECK(p.result.ok());
}

// ------------------------------------------------------------------ strings and names

TEST_CASE("strings and names longer than their limits are refused with E0005", "[limits]") {
  const std::string at_limit(grammar::kMaxStringBytes, 'm');
  CHECK(test::parse_text("rule r { when task.gpus > 1 deny \"" + at_limit + "\" }\n").result.ok());
  auto long_string = test::parse_text("rule r { when task.gpus > 1 deny \"" + at_limit + "m\" }\n");
  REQUIRE(count_code(long_string.result.diagnostics, Code::too_long) == 1);
  CHECK(first_with(long_string.result.diagnostics, Code::too_long)->message ==
        fmt::format("string of {} bytes; gov reads strings of at most {} bytes", grammar::kMaxStringBytes + 1,
                    grammar::kMaxStringBytes));
  // Escapes count as the characters they stand for.
  std::string escapes;
  for (size_t i = 0; i < grammar::kMaxStringBytes / 2 + 1; ++i) escapes += "\\n\\t";
  CHECK(count_code(test::parse_text("rule r { when task.gpus > 1 deny \"" + escapes + "\" }\n").result.diagnostics,
                   Code::too_long) == 1);

  const std::string name(grammar::kMaxNameBytes, 'a');
  CHECK(test::parse_text("team " + name + " {}\n").result.ok());
  auto long_name = test::parse_text("team " + name + "a {}\n");
  REQUIRE(count_code(long_name.result.diagnostics, Code::too_long) == 1);
  CHECK(first_with(long_name.result.diagnostics, Code::too_long)->message ==
        fmt::format("name of {} bytes; gov reads names of at most {} bytes", grammar::kMaxNameBytes + 1,
                    grammar::kMaxNameBytes));
}

// A hostile-input helper's inputs: a message of 2.7 million `{1}` pieces (literal text was the
// only part counted) and a list of 4 million elements (no bound at all) made `gov check` use
// 3.6 and 3.8 GB in PEGTL's tree before any other limit was looked at.
TEST_CASE("interpolations count toward a string's bytes by their source", "[limits]") {
  std::string pieces;
  for (size_t i = 0; i < grammar::kMaxStringBytes / 3 + 1; ++i) pieces += "{1}";
  auto parsed = test::parse_text("rule r { when task.gpus > 1 warn \"" + pieces + "\" }\n");
  REQUIRE(count_code(parsed.result.diagnostics, Code::too_long) == 1);
}

TEST_CASE("a file of more syntax elements than the parser keeps is one E0006 error", "[limits]") {
  // At least one node per element: one more element than the bound is enough.
  std::string list = "rule r {\n  when task.gpus in [1";
  for (size_t i = 0; i < grammar::kMaxSyntaxNodes; ++i) list += ",1";
  list += "]\n  deny \"x\"\n}\n";
  REQUIRE(list.size() < grammar::kMaxFileBytes);
  auto parsed = test::parse_text(list);
  REQUIRE(parsed.result.diagnostics.items().size() == 1);
  const Diagnostic& d = parsed.result.diagnostics.items().front();
  CHECK(d.code == Code::too_many);
  CHECK(d.message.find(fmt::format("more than {} syntax elements", grammar::kMaxSyntaxNodes)) != std::string::npos);
  CHECK(parsed.result.file.declarations.empty());
  // The largest benchmark policy (10,000 teams in 2 MiB) is far below: a quarter of the bound.
  CHECK(test::parse_text(teams(10'000)).result.ok());
}

// ------------------------------------------------------------------ declarations
// ------------------------------------------------------------------ declarations

TEST_CASE("10,000 teams load, team 10,001 is refused with E0006 where it stands", "[limits]") {
  auto at_limit = test::program_from_text("t.gov", teams(check::kMaxTeams));
  CHECK_FALSE(at_limit.diagnostics.has_errors());
  auto over = test::program_from_text("t.gov", teams(check::kMaxTeams + 1));
  REQUIRE(count_code(over.diagnostics, Code::too_many) == 1);
  const Diagnostic& d = *first_with(over.diagnostics, Code::too_many);
  CHECK(d.message == "more than 10000 teams in one policy");
  CHECK(over.sources.get(d.primary.source).slice(d.primary.span) == "team t10000 {}");
}

TEST_CASE("rules, tests and instance types have limits of their own", "[limits]") {
  std::string rules;
  for (size_t i = 0; i <= check::kMaxRules; ++i) rules += fmt::format("rule r{} {{ when task.gpus > 1 deny \"x\" }}\n", i);
  auto many_rules = test::program_from_text("r.gov", rules);
  REQUIRE(count_code(many_rules.diagnostics, Code::too_many) == 1);
  CHECK(first_with(many_rules.diagnostics, Code::too_many)->message == "more than 10000 rules in one policy");

  std::string tests;
  for (size_t i = 0; i <= check::kMaxTests; ++i) tests += fmt::format("test \"t{}\" {{ submit a {{ team = x }} }}\n", i);
  auto many_tests = test::program_from_text("t.gov", tests);
  REQUIRE(count_code(many_tests.diagnostics, Code::too_many) == 1);
  CHECK(first_with(many_tests.diagnostics, Code::too_many)->message == "more than 10000 tests in one policy");

  std::string catalog = "catalog c {\n";
  for (size_t i = 0; i <= check::kMaxInstanceTypes; ++i) catalog += fmt::format("  instance ml.x{} {{ vcpus = 1, memory = 1 GiB }}\n", i);
  auto many_types = test::program_from_text("c.gov", catalog + "}\n");
  REQUIRE(count_code(many_types.diagnostics, Code::too_many) == 1);
  CHECK(first_with(many_types.diagnostics, Code::too_many)->message ==
        "more than 10000 instance types in one policy");
}

TEST_CASE("declaration limits count over imports, and no import is read past them", "[limits]") {
  ScratchDir dir;
  dir.write("c.gov", "team never-read {}\n");
  dir.write("b.gov", "import \"c.gov\"\n" + teams(5'000, "b"));
  const std::string entry = dir.write("a.gov", "import \"b.gov\"\n" + teams(5'001, "a"));
  const check::Program program = test::program_from_file(entry, dir.root.string());
  REQUIRE(count_code(program.diagnostics, Code::too_many) == 1);
  const Diagnostic& d = *first_with(program.diagnostics, Code::too_many);
  CHECK(program.sources.get(d.primary.source).path().ends_with("b.gov"));
  CHECK(program.files.size() == 2);  // c.gov is not read
}

TEST_CASE("an import cycle through 50 files is one clear error", "[limits]") {
  ScratchDir dir;
  for (int i = 0; i < 50; ++i) dir.write(fmt::format("f{}.gov", i), fmt::format("import \"f{}.gov\"\nteam t{} {{}}\n", (i + 1) % 50, i));
  const check::Program program = test::program_from_file((dir.root / "f0.gov").string(), dir.root.string());
  // The chain reaches the import depth limit (32) before it closes the cycle.
  REQUIRE(program.diagnostics.items().size() == 1);
  CHECK(program.diagnostics.items()[0].code == Code::import_too_deep);
  CHECK(program.files.size() == check::kMaxImportDepth + 1);

  ScratchDir short_cycle;  // within the depth limit the cycle itself is reported
  for (int i = 0; i < 20; ++i) short_cycle.write(fmt::format("f{}.gov", i), fmt::format("import \"f{}.gov\"\n", (i + 1) % 20));
  const check::Program cycle =
      test::program_from_file((short_cycle.root / "f0.gov").string(), short_cycle.root.string());
  REQUIRE(cycle.diagnostics.items().size() == 1);
  CHECK(cycle.diagnostics.items()[0].code == Code::import_cycle);
}

// ------------------------------------------------------------------ sets

TEST_CASE("a set of 100,000 members compiles to a table search that agrees with the interpreter", "[limits][jit]") {
  // A switch of 400,000 cases took LLVM 18 minutes to compile; large sets are now a branchless
  // binary search over a constant table. Members, their neighbours and the int64 bounds.
  std::mt19937_64 random(7);
  ir::Module module;
  module.strings = {""};
  std::vector<int64_t> set;
  for (int i = 0; i < 100'000; ++i) set.push_back(static_cast<int64_t>(random()) / 2);
  set.push_back(std::numeric_limits<int64_t>::min());
  set.push_back(std::numeric_limits<int64_t>::max());
  set.push_back(set[5]);  // a duplicate
  module.sets.push_back(set);
  module.sets.push_back({1, 2, 3});  // a small one: still a switch
  ir::Rule rule;
  rule.name = "big";
  rule.code = {{ir::Op::task_field, ir::ValueType::integer, -1, -1, static_cast<int64_t>(ir::TaskField::gpus)},
               {ir::Op::in_set, ir::ValueType::boolean, 0, -1, 0},
               {ir::Op::in_set, ir::ValueType::boolean, 0, -1, 1},
               {ir::Op::logical_or, ir::ValueType::boolean, 1, 2, 0}};
  rule.condition_length = 4;
  module.rules.push_back(rule);
  rule.name = "small";
  rule.code[3] = {ir::Op::logical_and, ir::ValueType::boolean, 2, 2, 0};
  module.rules.push_back(rule);

  auto jit = jit::compile_and_load(module);
  REQUIRE(jit.ok());
  const interp::Interpreter interpreter(module);
  size_t members = 0;
  std::vector<int64_t> probes = {0, 1, 2, 3, 4, -1, std::numeric_limits<int64_t>::min() + 1,
                                 std::numeric_limits<int64_t>::max() - 1};
  for (size_t i = 0; i < set.size(); i += 97) {
    probes.push_back(set[i]);
    if (set[i] != std::numeric_limits<int64_t>::max()) probes.push_back(set[i] + 1);
    if (set[i] != std::numeric_limits<int64_t>::min()) probes.push_back(set[i] - 1);
  }
  probes.push_back(std::numeric_limits<int64_t>::min());
  probes.push_back(std::numeric_limits<int64_t>::max());
  for (int64_t probe : probes) {
    ir::RuleInput input;
    input.task[static_cast<size_t>(ir::TaskField::gpus)] = probe;
    std::array<uint8_t, 2> expected{};
    std::array<uint8_t, 2> actual{};
    interpreter.evaluate_rules(input, expected);
    jit.value()->evaluate_rules(input, actual);
    INFO("probe " << probe);
    REQUIRE(expected == actual);
    members += expected[0];
  }
  CHECK(members > set.size() / 97);  // the members themselves were found
}

TEST_CASE("lowering a set of 100,000 distinct strings interns each once", "[limits]") {
  std::string items;
  for (int i = 0; i < 100'000; ++i) items += fmt::format("{}\"s{}\"", i == 0 ? "" : ", ", i);
  const std::string text = "catalog c { instance ml.x { vcpus = 1, memory = 1 GiB } }\n"
                           "cluster k { catalog = c, capacity = { ml.x: 1 } }\n"
                           "policy { idle-compute = fcfs }\n"
                           "team t { quota ml.x { instances = 1 } }\n"
                           "rule r { when task.id in [" + items + ", \"s7\"] deny \"x\" }\n";
  const check::Program program = test::program_from_text("p.gov", text);
  REQUIRE_FALSE(program.diagnostics.has_errors());
  const check::CheckResult checked = check::check(program, {/*require_cluster=*/true});
  INFO(render_all(checked.diagnostics, program.sources));
  REQUIRE(checked.ok());
  const ir::Module module = lower::lower(checked.policy);
  CHECK(module.strings.size() == 100'001);  // "" and s0 .. s99999, s7 once
  REQUIRE(module.sets.size() == 1);
  CHECK(module.sets[0].size() == 100'001);
  CHECK(module.strings[static_cast<size_t>(module.sets[0].back())] == "s7");
}

// ------------------------------------------------------------------ suggestions

TEST_CASE("did-you-mean work is bounded: later unknown names come without a suggestion", "[limits]") {
  // 3,000 teams and 3,000 near-miss references: 9,000,000 comparisons unbounded (minutes once
  // it was 100,000 of each); with the budget, the first errors have suggestions, the last not.
  std::string text = teams(3'000, "team-");
  for (int i = 0; i < 3'000; ++i) text += fmt::format("rule r{} {{ when task.team == taem-{} deny \"x\" }}\n", i, i);
  const check::Program program = test::program_from_text("p.gov", text);
  REQUIRE_FALSE(program.diagnostics.has_errors());
  const check::CheckResult checked = check::check(program);
  REQUIRE(count_code(checked.diagnostics, Code::unknown_team) == 3'000);
  const Diagnostic& first = *first_with(checked.diagnostics, Code::unknown_team);
  REQUIRE(first.help);
  CHECK(first.help->find("did you mean `team-0`?") != std::string::npos);
  const Diagnostic& last = checked.diagnostics.items().back();
  CHECK(last.code == Code::unknown_team);
  CHECK_FALSE((last.help && last.help->find("did you mean") != std::string::npos));
  // The same input gives the same suggestions.
  CHECK(render_all(check::check(program).diagnostics, program.sources) == render_all(checked.diagnostics, program.sources));
}

TEST_CASE("a suggestion budget stops closest_match and ends with its scope", "[limits]") {
  const std::vector<std::string> candidates = {"team-a", "team-b"};
  {
    const SuggestionBudget budget(/*cells=*/100);
    CHECK(closest_match("team-c", candidates) == "team-a");  // 2 + 2 * 49 cells
    CHECK_FALSE(closest_match("team-c", candidates));         // spent
    {
      const SuggestionBudget inner(/*cells=*/1'000);
      CHECK(closest_match("team-c", candidates) == "team-a");
    }
    CHECK_FALSE(closest_match("team-c", candidates));
  }
  CHECK(closest_match("team-c", candidates) == "team-a");  // no budget: unbounded
}

// ------------------------------------------------------------------ traces

TEST_CASE("a JSON value longer than max_value_bytes is an error, not a big allocation", "[limits]") {
  trace::JsonLimits limits;
  limits.max_value_bytes = 64;
  const std::string text = "[\"" + std::string(100, 'x') + "\", 1]";
  trace::JsonReader reader(text, limits);
  REQUIRE(reader.enter_array());
  REQUIRE(reader.next_element() == trace::JsonStep::item);
  trace::JsonValue value;
  CHECK_FALSE(reader.read_value(value));
  REQUIRE(reader.error());
  CHECK(reader.error()->message == "line 1, column 2: this value is longer than 64 bytes");
  CHECK(reader.error()->kind == support::ErrorKind::invalid);
  CHECK(reader.error()->position->column == 2);

  trace::JsonReader fits(text, {});
  REQUIRE(fits.enter_array());
  REQUIRE(fits.next_element() == trace::JsonStep::item);
  CHECK(fits.read_value(value));
  CHECK(value.text.size() == 100);
}

TEST_CASE("a trace file reads the same in chunks after its pages are dropped and rewound", "[limits]") {
  ScratchDir dir;
  std::string text;
  for (int i = 0; i < 300'000; ++i) text += fmt::format("line {}\n", i);
  const std::string path = dir.write("big.txt", text);
  support::Expected<trace::TraceFile> file = trace::TraceFile::open(path, text.size());
  REQUIRE(file);
  REQUIRE(file->text().size() == text.size());
  size_t largest_window = 0;
  for (size_t at = 0; at < text.size(); at += 4096) {  // a reader moving on, 4 KiB at a time
    const size_t end = std::min(text.size(), at + 4096);
    REQUIRE(file->fill(end, at) >= end);
    CHECK(file->text().substr(at, end - at) == std::string_view(text).substr(at, end - at));
    largest_window = std::max(largest_window, file->window_bytes());
  }
  CHECK(largest_window <= trace::TraceFile::kChunkBytes + 8192);  // not the file's 2.3 MB
  file->rewind();
  CHECK(file->fill(text.size(), 0) == text.size());
  CHECK(file->text() == text);  // read from the file again
  CHECK_FALSE(file->error());

  const auto open_error = [](const std::string& file_path, size_t limit) {
    support::Expected<trace::TraceFile> opened = trace::TraceFile::open(file_path, limit);
    REQUIRE_FALSE(opened);
    CHECK(opened.error().kind == support::ErrorKind::io);
    return opened.error().message;
  };
  CHECK(open_error(path, text.size() - 1) ==
        fmt::format("file is {} bytes; gov reads at most {} bytes", text.size(), text.size() - 1));
  CHECK(open_error(dir.root.string(), 100) == "is a directory");
  CHECK(open_error((dir.root / "missing").string(), 100) == "No such file or directory");
  support::Expected<trace::TraceFile> empty = trace::TraceFile::open(dir.write("empty.txt", ""), 100);
  REQUIRE(empty);
  CHECK(empty->text().empty());
  CHECK(empty->fill(1, 0) == 0);
}

}  // namespace gov
