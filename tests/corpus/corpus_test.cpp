// The decision corpus (tests/corpus/*.gov: policies with `test` blocks). Every block is its own
// test case, registered at run time under both back ends (`corpus/<file>/<block>/interp` and
// `.../jit`), run in process through gov::policy_test; under the JIT its decision stream must
// also equal the interpreter's byte for byte.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"
#include "grammar/parse.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/policy_test/policy_test.hpp"
#include "tests/support/dynamic_cases.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

using gov::driver::BackEnd;

/// A corpus file compiled into an engine (the embedding API), with its checked program.
struct Opened {
  gov::Engine engine;
  std::shared_ptr<const gov::driver::Policy> policy;
};

/// The corpus file at `path` ready to run (the one place these tests load a policy).
Opened load_policy(const std::string& path, BackEnd back_end) {
  gov::Options options;
  options.back_end = back_end == BackEnd::jit ? gov::Options::BackEnd::jit : gov::Options::BackEnd::interpreter;
  std::optional<gov::Engine> engine;
  try {
    engine.emplace(gov::Engine::compile_file(path, options));
  } catch (const gov::Error& error) {
    FAIL("loading " << path << ": " << error.what());
  }
  if (back_end == BackEnd::jit) {
    // The JIT falls back to the interpreter where LLVM cannot be used: that would compare the
    // interpreter with itself.
    INFO(engine->policy().warning);
    REQUIRE(engine->policy().back_end == "jit");
  }
  std::shared_ptr<const gov::driver::Policy> policy = gov::EngineInternals::runnable(*engine);
  return Opened{std::move(*engine), std::move(policy)};
}

/// A failed block as `gov test` reports it.
std::string failure_text(const gov::policy_test::CaseResult& result, const gov::SourceMap& sources) {
  if (result.passed()) return "passed";
  const gov::policy_test::Failure& f = *result.failure;
  return fmt::format("{}: expected {}\n  but {}{}{}", gov::format_location(f.where, sources), f.expected, f.actual,
                     f.decision ? ":\n    " : "", f.decision.value_or(""));
}

/// The block `index` of the corpus file `path`, named `name`, under `back_end`: every `expect`
/// holds, and under the JIT the decision stream equals the interpreter's.
void run_block(const std::string& path, size_t index, const std::string& name, BackEnd back_end) {
  const Opened opened = load_policy(path, back_end);
  const std::vector<gov::check::Test>& tests = opened.policy->checked.result.policy.tests;
  // Registration reads the blocks from the syntax tree; the checked policy must agree.
  REQUIRE(index < tests.size());
  REQUIRE(tests[index].name == name);
  const gov::policy_test::CaseResult result =
      gov::policy_test::run_case(opened.engine, tests[index]);
  INFO(failure_text(result, opened.policy->checked.program.sources));
  CHECK(result.passed());
  CHECK(!result.decisions.empty());
  if (back_end != BackEnd::jit) return;
  const Opened reference = load_policy(path, BackEnd::interpreter);
  const gov::policy_test::CaseResult expected =
      gov::policy_test::run_case(reference.engine, reference.policy->checked.result.policy.tests[index]);
  size_t first = 0;
  while (first < result.decisions.size() && first < expected.decisions.size() &&
         result.decisions[first] == expected.decisions[first]) {
    ++first;
  }
  INFO("first difference at decision " << first << "\n  interp: "
                                       << (first < expected.decisions.size() ? expected.decisions[first] : "(none)")
                                       << "\n  jit:    "
                                       << (first < result.decisions.size() ? result.decisions[first] : "(none)"));
  CHECK(result.decisions == expected.decisions);
}

/// The names of the `test` blocks of the corpus file at `path` as written, or why there are none
/// to run (syntax only: registration runs in every test process, so it neither checks nor
/// compiles).
struct Blocks {
  std::vector<std::string> names;
  std::string error;
};
Blocks blocks_of(const std::string& path) {
  gov::SourceMap sources;
  const gov::SourceId id = sources.add(path, gov::test::read_text(path));
  const gov::grammar::ParseResult parsed = gov::grammar::parse(sources, id);
  Blocks blocks;
  for (const gov::ast::Declaration& declaration : parsed.file.declarations) {
    if (const auto* test = std::get_if<gov::ast::Test>(&declaration)) blocks.names.push_back(test->name.plain());
  }
  if (!parsed.ok()) {
    blocks.error = gov::render_all(parsed.diagnostics, sources);
  } else if (blocks.names.empty()) {
    blocks.error = "it has no `test` block";
  }
  return blocks;
}

/// One case per block and back end; a file whose blocks cannot be read gets one failing case.
void register_file(const std::string& path) {
  const std::string relative = path.substr(gov::test::repo_path("tests/corpus/").size());
  const std::string file = relative.substr(0, relative.size() - 4);  // without `.gov`
  const Blocks blocks = blocks_of(path);
  if (!blocks.error.empty()) {
    gov::test::register_case("corpus/" + file, "[corpus]", [path, why = blocks.error] { FAIL(path << ": " << why); },
                             __FILE__, __LINE__);
    return;
  }
  for (size_t i = 0; i < blocks.names.size(); ++i) {
    for (const BackEnd back_end : {BackEnd::interpreter, BackEnd::jit}) {
      const std::string& block = blocks.names[i];
      const std::string name = fmt::format("corpus/{}/{}/{}", file, block, back_end == BackEnd::jit ? "jit" : "interp");
      gov::test::register_case(name, "[corpus]", [=] { run_block(path, i, block, back_end); }, __FILE__, __LINE__);
    }
  }
}

void register_corpus() {
  for (const std::string& path : gov::test::files_under("tests/corpus", ".gov")) register_file(path);
}

[[maybe_unused]] const bool registered = gov::test::add_registrar(&register_corpus);

size_t passed_count(const std::string& out) {
  const size_t at = out.rfind(" passed, ");
  if (at == std::string::npos) return 0;
  size_t start = out.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return std::stoul(out.substr(start, at - start));
}

}  // namespace

TEST_CASE("gov test runs every corpus block and each passes", "[corpus][cli]") {
  // The printer over gov::policy_test: one `ok` line per block the registration found.
  std::string files;
  size_t blocks = 0;
  for (const std::string& path : gov::test::files_under("tests/corpus", ".gov")) {
    files += " " + path.substr(std::string(GOV_SOURCE_DIR).size() + 1);
    blocks += blocks_of(path).names.size();
  }
  auto result = run_gov("test --engine interp" + files);
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("FAIL") == std::string::npos);
  CHECK(passed_count(result.out) == blocks);
}

TEST_CASE("the walkthrough's decision stream is byte-identical in both back ends", "[corpus]") {
  const std::string args = "simulate policies/examples/workshop-g5.gov --trace policies/examples/workshop-g5.trace.json";
  auto interp = run_gov(args + " --engine interp");
  auto jit = run_gov(args + " --engine jit");
  CHECK(interp.exit_code == 0);
  CHECK(jit.out == interp.out);
}

TEST_CASE("a generated trace over the rules example decides identically in both back ends", "[corpus]") {
  // 2,000 seeded random events exercising every rule of policies/examples/rules.gov.
  std::mt19937 random(2026);
  const std::vector<std::string> teams = {"research", "platform", "serving", "analytics"};
  const std::vector<std::string> types = {"ml.p5.48xlarge", "ml.g5.12xlarge", "ml.c5.2xlarge"};
  const std::vector<std::string> classes = {"inference", "experimentation", "training", "fine-tuning"};
  std::string trace = "{\"events\":[";
  std::vector<std::string> live;
  for (int i = 0; i < 2000; ++i) {
    const int at = i / 4;
    std::string event;
    if (!live.empty() && random() % 4 == 0) {
      const size_t k = random() % live.size();
      event = fmt::format("{{\"at\":{},\"{}\":\"{}\"}}", at, random() % 2 ? "finish" : "cancel", live[k]);
      live.erase(live.begin() + static_cast<long>(k));
    } else {
      const std::string id = "t" + std::to_string(i);
      const std::string& type = types[random() % types.size()];
      std::string labels = random() % 3 ? "\"labels\":{\"project\":\"p\",\"cost-center\":\"cc-1\"}," : "";
      const std::string amount = type == "ml.c5.2xlarge" ? fmt::format("\"vcpus\":{}", 1 + random() % 8)
                                                         : fmt::format("\"gpus\":{}", 1 + random() % 8);
      event = fmt::format("{{\"at\":{},\"submit\":{{\"id\":\"{}\",\"team\":\"{}\",\"instance_type\":\"{}\",{}\"priority\":\"{}\",{},\"duration\":{}}}}}",
                          at, id, teams[random() % teams.size()], type, labels, classes[random() % classes.size()], amount,
                          1 + random() % 50);
      live.push_back(id);
    }
    trace += (i ? "," : "") + event;
  }
  trace += "]}";
  const gov::test::TempDir dir("corpus-trace");
  const std::string path = dir.write("trace.json", trace);
  auto interp = run_gov("simulate policies/examples/rules.gov --engine interp --trace " + path);
  auto jit = run_gov("simulate policies/examples/rules.gov --engine jit --trace " + path);
  INFO(interp.err);
  CHECK(interp.exit_code == 0);
  CHECK(interp.out.find("\"outcome\":\"rejected\"") != std::string::npos);
  CHECK(interp.out.find("\"warnings\"") != std::string::npos);
  CHECK(jit.out == interp.out);
}

TEST_CASE("a case name that matches nothing fails under CTest's arguments", "[corpus]") {
  // CTest runs each entry as `gov_tests NAME --warn NoTests`; a stale entry (a block renamed
  // since the last discovery) must fail, not pass with "No tests ran".
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const auto run = [&](const std::string& args) {
    return std::system(("'" + self + "' " + args + " >/dev/null 2>&1").c_str());
  };
  const int stale = run("'corpus/no such file/no such block/jit' --warn NoTests");
  REQUIRE(WIFEXITED(stale));
  CHECK(WEXITSTATUS(stale) == 2);
  // Without the flag Catch2 v2 exits 0: the flag is what makes the entry fail.
  const int lenient = run("'corpus/no such file/no such block/jit'");
  REQUIRE(WIFEXITED(lenient));
  CHECK(WEXITSTATUS(lenient) == 0);
  // A registered name runs and passes (the first block of the first corpus file).
  const std::string first = gov::test::files_under("tests/corpus", ".gov").front();
  const std::string file = std::filesystem::path(first).stem().string();
  const std::string name = gov::test::safe_case_name("corpus/" + file + "/" + blocks_of(first).names.at(0) + "/interp");
  REQUIRE(name.find('\'') == std::string::npos);
  CHECK(run("'" + name + "' --warn NoTests") == 0);
}
