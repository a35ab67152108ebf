// The examples (runtime/examples: a C++ controller loop, a plain C program, a Go program over
// cgo) open a store, replay a trace and print the decision stream; it must be byte for byte
// what `gov simulate` prints for the same policy file and trace: the HyperPod walkthrough and a
// generated 10,000-event trace.
#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <string>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::quoted;
using gov::test::repo_path;
using gov::test::run_program;

bool sanitized() { return std::string(GOV_SANITIZED).size() > 0; }

std::string library_dir() { return std::filesystem::path(GOV_SHARED_LIBRARY).parent_path().string(); }

/// Builds the Go example once per process; returns its path, or "" after reporting why not.
std::string go_example() {
  static std::once_flag once;
  static std::string binary;
  static std::string failure;
  std::call_once(once, [] {
    if (run_program("command -v go").exit_code != 0) {
      failure = "the Go example needs the Go toolchain, and `go` is not on PATH: run tools/deps (it installs golang-go)";
      return;
    }
    const std::string out = gov::test::build_path("bin/gov-example-go");
    const std::string build = gov::test::build_path("go");
    // Standard library only: no module downloads (GOPROXY=off), caches in the build tree.
    const std::string command =
        "cd runtime/examples/go && GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOCACHE=" + quoted(build + "/cache") +
        " GOPATH=" + quoted(build + "/path") + " CGO_ENABLED=1 CGO_CFLAGS=" + quoted("-I" + repo_path("runtime/include")) +
        " CGO_LDFLAGS=" + quoted("-L" + library_dir() + " -Wl,-rpath," + library_dir()) + " go build -o " + quoted(out) + " .";
    const gov::test::ProgramResult built = run_program(command);
    if (built.exit_code != 0) {
      failure = "go build failed:\n" + built.out + built.err;
      return;
    }
    binary = out;
  });
  INFO(failure);
  CHECK(failure.empty());
  return binary;
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
  gov::test::ScratchDir dir("examples");
  const std::string db = dir / "policies.db";
  const auto applied = run_program(quoted(GOV_BINARY) + " apply " + quoted(policy) + " --db " + quoted(db));
  INFO(applied.err);
  REQUIRE(applied.exit_code == 0);

  const std::string args = " --db " + quoted(db) + " --trace " + quoted(trace);
  for (const std::string& example : {std::string(GOV_EXAMPLE_CPP), std::string(GOV_EXAMPLE_C)}) {
    const auto run = run_program(quoted(example) + args);
    INFO(example << ": " << run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.out == expected);
  }
  if (sanitized()) {
    WARN("not building the Go example against a sanitizer build of libgov");
    return;
  }
  const std::string go = go_example();
  if (go.empty()) return;
  const auto run = run_program(quoted(go) + " -db " + quoted(db) + " -trace " + quoted(trace));
  INFO("go: " << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == expected);
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

TEST_CASE("the examples report a bad trace and a missing store clearly", "[embed][examples]") {
  gov::test::ScratchDir dir("examples-errors");
  const std::string trace = dir / "bad.json";
  gov::test::write_text(trace, R"({"events":[{"at":0,"submit":{"id":"a","team":"team-z","gpus":1}}]})");
  const std::string policy = repo_path("policies/examples/workshop-g5.gov");
  for (const std::string& example : {std::string(GOV_EXAMPLE_CPP), std::string(GOV_EXAMPLE_C)}) {
    const auto bad = run_program(quoted(example) + " --file " + quoted(policy) + " --trace " + quoted(trace));
    CHECK(bad.exit_code == 1);
    CHECK(bad.err.find("unknown team") != std::string::npos);
    const auto missing = run_program(quoted(example) + " --db " + quoted(dir / "none.db") + " --trace " + quoted(trace));
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("none.db") != std::string::npos);
    CHECK(run_program(quoted(example)).exit_code == 2);  // usage
  }
}
