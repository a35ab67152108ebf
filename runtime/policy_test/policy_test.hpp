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
#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/engine_options.hpp"

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

  bool passed() const { return !failure; }
};

/// Runs one block from an empty cluster with a fresh engine over `module` and `evaluator`
/// (both must outlive the call). `submit`, `finish` and `cancel` happen at the current time,
/// `at` moves it (the finishes due at the new time join the instant of the next event), and
/// each `expect` takes the next decision of its task that no earlier `expect` took. Stops at the
/// first `expect` that does not hold. Pure apart from the engine it creates; thread-safe when the
/// evaluator is (both back ends are).
CaseResult run_case(const ir::Module& module, const ir::Evaluator& evaluator, const check::Test& test,
                    const engine::EngineOptions& options = {});

/// run_case for every block of `tests`, in order (a checked policy's `policy.tests`).
std::vector<CaseResult> run(const ir::Module& module, const ir::Evaluator& evaluator,
                            const std::vector<check::Test>& tests, const engine::EngineOptions& options = {});

/// The expectation of an `expect` step as the user wrote it, normalised (Failure::expected).
std::string expectation_text(const check::TestStep& step);

}  // namespace gov::policy_test
