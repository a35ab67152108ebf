// The `test` language as a library: runs a checked policy's `test` blocks through the engine,
// matches every `expect` step against the decision it names, and returns structured results
// (what `gov test` prints, what the corpus tests assert on).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "compiler/check/policy.hpp"
#include "compiler/diagnostics/source_file.hpp"
#include "gov/engine.hpp"

namespace gov::policy_test {

/// The first `expect` step of a block that its decisions did not satisfy.
struct Failure {
  size_t step = 0;       // index of the failing step in check::Test::steps
  Location where;        // the source span of that `expect`
  std::string expected;  // the expectation, normalised: `a admitted on ml.g5.8xlarge by r`
  /// What differs, as a clause: `outcome is pending`, `it is on ml.p5.48xlarge`, `rule r did
  /// not warn`; or `a has no further decision` when the task had none left to match.
  std::string actual;
  /// The decision the expectation was matched against, as one line (trace::decision_text);
  /// nullopt when the task had no further decision.
  std::optional<std::string> decision;
  /// Every decision of every task since the previous `expect` (or the start), one line each
  /// (trace::decision_text): the stream the expectation was read against, for the report.
  std::vector<std::string> recent;
};

/// The result of one `test` block.
struct CaseResult {
  std::string name;                 // the block's name, as written (unescaped)
  Location where;                   // the block
  std::optional<Failure> failure;   // absent when every `expect` held
  /// Every decision the block's steps produced up to the end (or up to the failing `expect`),
  /// in engine order, each as one JSON line of the decision stream (trace::decision_json, no
  /// newline): what the two back ends must agree on byte for byte.
  std::vector<std::string> decisions;
  /// The same decisions as people read them (trace::decision_text, as `gov simulate --format
  /// text` prints them): what `gov test -v` shows.
  std::vector<std::string> decision_lines;

  bool passed() const { return !failure; }
};

/// Runs one block from an empty cluster in a fresh engine on `policy`'s compiled version
/// (gov::Engine::fresh(): the embedding API, as a controller runs it; `policy` itself is not
/// changed, and its options, such as the message dialect, apply). `submit`, `finish` and `cancel` happen at the current time,
/// `at` moves it (the finishes due at the new time join the instant of the next event), and
/// each `expect` takes the next decision of its task that no earlier `expect` took; `expect
/// eventually` takes the task's latest decision so far and drops the ones before it. Stops at
/// the first `expect` that does not hold. Pure apart from the engine it creates; thread-safe.
CaseResult run_case(const gov::Engine& policy, const check::Test& test);

/// run_case for every block of `tests`, in order (a checked policy's `policy.tests`).
std::vector<CaseResult> run(const gov::Engine& policy, const std::vector<check::Test>& tests);

/// The expectation of an `expect` step as the user wrote it, normalised (Failure::expected).
std::string expectation_text(const check::TestStep& step);

}  // namespace gov::policy_test
