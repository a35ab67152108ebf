// The examples (runtime/examples: a C++ controller loop, a plain C program, a Go program over
// cgo) open a store, replay a trace and print the decision stream; it must be byte for byte
// what `gov simulate` prints for the same policy file and trace: the HyperPod walkthrough and a
// generated 10,000-event trace.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::quoted;
using gov::test::repo_path;
using gov::test::run_program;

bool sanitized() { return std::string(GOV_SANITIZED).size() > 0; }

/// The examples as a user builds them (issue 25, build recipes): gov installed into a temporary
/// prefix (`cmake --install`), each example copied from PREFIX/share/gov/examples to a temporary
/// directory and built against the prefix — C and C++ with CMake's find_package(gov), C again with
/// the pkg-config one-liner, Go with cgo and pkg-config — and run without LD_LIBRARY_PATH.
/// Built once per process.
struct InstalledExamples {
  std::string cpp, c_cmake, c_pkg_config, go;
  std::string prefix;  // where gov was installed
  std::string failure;  // why they could not be built ("" when they were)
  /// Every example's command line prefix, with its name.
  std::vector<std::pair<std::string, std::string>> all() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [name, binary] : {std::pair{"c++ (cmake)", cpp}, std::pair{"c (cmake)", c_cmake},
                                       std::pair{"c (pkg-config)", c_pkg_config}, std::pair{"go", go}}) {
      if (!binary.empty()) out.emplace_back(name, "env -u LD_LIBRARY_PATH " + quoted(binary));
    }
    return out;
  }
};

const InstalledExamples& installed_examples() {
  static std::once_flag once;
  static InstalledExamples examples;
  static std::optional<gov::test::ScratchDir> dir;
  std::call_once(once, [] {
    dir.emplace("examples-installed");
    const std::string prefix = *dir / "prefix";
    const auto step = [](const std::string& what, const std::string& command) {
      const gov::test::ProgramResult result = run_program(command);
      if (result.exit_code == 0) return true;
      examples.failure = what + " failed:\n" + command + "\n" + result.out + result.err;
      return false;
    };
    if (!step("cmake --install", gov::test::quoted(GOV_CMAKE_COMMAND) + " --install " + gov::test::quoted(GOV_BUILD_ROOT) + " --prefix " +
                                     gov::test::quoted(prefix))) {
      return;
    }
    std::string libdir;
    for (const char* candidate : {"lib", "lib64", "lib/x86_64-linux-gnu"})
      if (std::filesystem::exists(prefix + "/" + candidate + "/pkgconfig/gov.pc")) libdir = prefix + "/" + candidate;
    if (libdir.empty()) {
      examples.failure = "the install has no pkgconfig/gov.pc";
      return;
    }
    examples.prefix = prefix;
    // A temporary copy of the installed examples: nothing of the source or build tree.
    const std::string copy = *dir / "examples";
    std::filesystem::copy(prefix + "/share/gov/examples", copy, std::filesystem::copy_options::recursive);
    const std::string build = copy + "/build";
    if (!step("configuring the examples", gov::test::quoted(GOV_CMAKE_COMMAND) + " -S " + gov::test::quoted(copy) + " -B " + gov::test::quoted(build) +
                                              " -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=" +
                                              gov::test::quoted(GOV_CXX_COMPILER) + " -DCMAKE_PREFIX_PATH=" + gov::test::quoted(prefix)) ||
        !step("building the examples", gov::test::quoted(GOV_CMAKE_COMMAND) + " --build " + gov::test::quoted(build))) {
      return;
    }
    examples.cpp = build + "/gov-example-cpp";
    examples.c_cmake = build + "/gov-example-c";
    const std::string pkg_config = "PKG_CONFIG_PATH=" + gov::test::quoted(libdir + "/pkgconfig") + " pkg-config";
    examples.c_pkg_config = *dir / "replay-c";
    if (!step("the pkg-config one-liner", "cc -std=c99 -Wall -Wextra -Werror -o " + gov::test::quoted(examples.c_pkg_config) + " " +
                                              gov::test::quoted(copy + "/c/replay.c") + " $(" + pkg_config + " --cflags --libs gov)")) {
      examples.c_pkg_config.clear();
      return;
    }
    if (run_program("command -v go").exit_code != 0) {
      examples.failure = "the Go example needs the Go toolchain, and `go` is not on PATH: run tools/deps (it installs golang-go)";
      return;
    }
    // Standard library only: no module downloads (GOPROXY=off), caches in the build tree.
    const std::string go_env = "GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOCACHE=" +
                               gov::test::quoted(gov::test::build_path("go/cache")) + " GOPATH=" +
                               gov::test::quoted(gov::test::build_path("go/path")) + " CGO_ENABLED=1";
    const std::string go_binary = *dir / "replay-go";
    if (!step("building the Go example",
              "cd " + gov::test::quoted(copy + "/go") + " && " + go_env + " go mod edit -replace gov.dev/gov=" +
                  gov::test::quoted(prefix + "/share/gov/go/gov") + " && " + go_env + " CGO_CFLAGS=\"$(" + pkg_config +
                  " --cflags gov)\" CGO_LDFLAGS=\"$(" + pkg_config + " --libs gov)\" go build -o " + gov::test::quoted(go_binary) +
                  " .")) {
      return;
    }
    examples.go = go_binary;
  });
  return examples;
}

/// The installed examples, or none after reporting why (sanitizer builds: not built).
const InstalledExamples* examples_or_skip() {
  if (sanitized()) {
    WARN("not building the examples against a sanitizer build of libgov");
    return nullptr;
  }
  const InstalledExamples& examples = installed_examples();
  INFO(examples.failure);
  CHECK(examples.failure.empty());
  return &examples;
}

/// What `gov simulate FILE --trace TRACE` prints.
std::string simulate(const std::string& policy, const std::string& trace) {
  const auto result = run_program(quoted(GOV_BINARY) + " simulate " + quoted(policy) + " --trace " + quoted(trace));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  return result.out;
}

/// Applies `policy` to a fresh store with `gov apply` and checks every example's stream.
void check_examples(const std::string& policy, const std::string& trace, const std::string& expected) {
  const InstalledExamples* examples = examples_or_skip();
  if (examples == nullptr) return;
  gov::test::ScratchDir dir("examples");
  const std::string db = dir / "policies.db";
  const auto applied = run_program(quoted(GOV_BINARY) + " apply " + quoted(policy) + " --db " + quoted(db));
  INFO(applied.err);
  REQUIRE(applied.exit_code == 0);
  for (const auto& [name, command] : examples->all()) {
    // Go's flag package takes --db as -db.
    const auto run = run_program(command + " --db " + quoted(db) + " --trace " + quoted(trace));
    INFO(name << ": " << run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.out == expected);
  }
}

}  // namespace

TEST_CASE("the C, C++ and Go examples print gov simulate's stream for the walkthrough", "[embed][examples]") {
  const std::string policy = repo_path("policies/examples/workshop-g5.gov");
  const std::string trace = repo_path("policies/examples/workshop-g5.trace.json");
  const std::string expected = simulate(policy, trace);
  CHECK(expected == gov::test::read_text(repo_path("tests/walkthrough/expected.jsonl")));
  check_examples(policy, trace, expected);
}

TEST_CASE("the C, C++ and Go examples print gov simulate's stream for a generated 10,000-event trace",
          "[embed][examples]") {
  gov::test::ScratchDir dir("examples-trace");
  const std::string trace = dir / "trace.json";
  gov::test::write_text(trace, gov::test::generate_rules_trace(10'000, /*seed=*/20261122));
  const std::string policy = repo_path("policies/examples/rules.gov");
  const std::string expected = simulate(policy, trace);
  // The trace exercises every kind of decision.
  for (const char* outcome : {"admitted", "pending", "preempted", "rejected", "finished", "cancelled"}) {
    INFO(outcome);
    CHECK(expected.find(std::string("\"outcome\":\"") + outcome + "\"") != std::string::npos);
  }
  // About one line per event: 9,904 since a `finish` of a pending task cancels it (issue 27;
  // it used to be ignored, and the task kept emitting pending lines), 10,000+ before.
  CHECK(std::count(expected.begin(), expected.end(), '\n') > 9'000);
  check_examples(policy, trace, expected);
}

// Every field a submit may have: GPU partitions (also per pod), `created` (also negative), pod
// sets. The Go example's reader knew none of the three and refused such traces.
TEST_CASE("the C, C++ and Go examples read partitions, created times and pod sets", "[embed][examples]") {
  gov::test::ScratchDir dir("examples-fields");
  const std::string trace = dir / "trace.json";
  gov::test::write_text(trace, R"({"events":[
    {"at":0,"submit":{"id":"nb1","team":"research","priority":"notebook","partitions":{"mig-1g.5gb":21},"created":-5.5}},
    {"at":0,"submit":{"id":"ep1","team":"inference","priority":"inference","pods":2,"per_pod":{"vcpus":4,"partitions":{"mig-1g.5gb":6}}}},
    {"at":1,"submit":{"id":"pt1","team":"training","duration":30,"pod_sets":[
      {"name":"master","pods":1,"per_pod":{"vcpus":4}},
      {"name":"worker","pods":2,"per_pod":{"gpus":2,"vcpus":8}}]}},
    {"at":2,"submit":{"id":"nb2","team":"research","priority":"notebook","partitions":{"mig-1g.5gb":4},"created":1.25}},
    {"at":40,"finish":"nb1"}]})");
  const std::string policy = repo_path("policies/examples/mig-partitions.gov");
  const std::string expected = simulate(policy, trace);
  CHECK(expected.find("\"pod_sets\":[{\"name\":\"master\"") != std::string::npos);
  CHECK(expected.find("\"task\":\"nb1\",\"outcome\":\"admitted\"") != std::string::npos);
  check_examples(policy, trace, expected);
}

TEST_CASE("the examples report a bad trace and a missing store clearly", "[embed][examples]") {
  const InstalledExamples* examples = examples_or_skip();
  if (examples == nullptr) return;
  gov::test::ScratchDir dir("examples-errors");
  const std::string trace = dir / "bad.json";
  gov::test::write_text(trace, R"({"events":[{"at":0,"submit":{"id":"a","team":"team-z","gpus":1}}]})");
  const std::string policy = repo_path("policies/examples/workshop-g5.gov");
  for (const auto& [name, command] : examples->all()) {
    INFO(name);
    // The C and C++ examples read the trace with gov_trace_read / gov::read_trace, which checks
    // it against the policy; the Go one reads it with encoding/json and submits what it reads
    // (an unknown team is then that task's `invalid` decision).
    if (name != "go") {
      const auto bad = run_program(command + " --file " + quoted(policy) + " --trace " + quoted(trace));
      CHECK(bad.exit_code == 1);
      CHECK(bad.err.find("unknown team") != std::string::npos);
    }
    const auto missing = run_program(command + " --db " + quoted(dir / "none.db") + " --trace " + quoted(trace));
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("none.db") != std::string::npos);
    CHECK(run_program(command).exit_code == 2);  // usage
  }
  // Each binary finds the installed libgov by its own run path, not the build tree's.
  for (const std::string& binary : {examples->cpp, examples->c_cmake, examples->c_pkg_config, examples->go}) {
    if (binary.empty()) continue;
    const auto linked = run_program("env -u LD_LIBRARY_PATH ldd " + quoted(binary));
    INFO(binary << ":\n" << linked.out);
    CHECK(linked.out.find("libgov.so.0 => " + examples->prefix + "/") != std::string::npos);
    CHECK(linked.out.find(GOV_BUILD_ROOT) == std::string::npos);
  }
}
