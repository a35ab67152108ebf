// Differential testing of the JIT against the reference interpreter, with shrinking.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/jit/fuzz/rule_generator.hpp"
#include "compiler/jit/jit.hpp"

namespace gov::jit::fuzz {

/// What the back ends disagreed on.
enum class Check : uint8_t { verdict, message, priority, fit, may_preempt, decide };

/// One answer on which the JIT and the interpreter disagree for one input.
struct Mismatch {
  ir::Module module;  // the whole module, or after shrink() the failing rule alone
  size_t rule = 0;    // index into module.rules (verdict and message)
  InputCase input;
  uint8_t jit = 0;    // verdicts
  uint8_t interp = 0;
  Check check = Check::verdict;
  std::string answers;  // the two answers, for the other checks
};

/// The first answer on which `jit`, loaded for `module`, disagrees with the interpreter, in
/// input order: each rule's verdict, then each rule's message values, then the priority, the
/// fit and the may-preempt answer of the input's DecisionCase; nullopt when all agree.
std::optional<Mismatch> first_mismatch(const ir::Module& module, const ir::Evaluator& jit,
                                       std::span<const InputCase> inputs);

/// Makes the evaluator under test for a module; nullptr when it cannot (the candidate
/// then does not count as failing).
using BackEnd = std::function<std::unique_ptr<ir::Evaluator>(const ir::Module&)>;
/// compile_and_load() with `options`: the back end under test.
BackEnd jit_back_end(const Options& options = {});

/// A smaller verdict mismatch (others are returned as they are: their reproducer is the one
/// decision input and the constants describe() prints): the rule alone without its message code, then, while a freshly
/// built `back_end` still disagrees with the interpreter, the shortest failing prefix of
/// its condition, instructions replaced by the constant the interpreter computes for them,
/// and instructions the verdict no longer reads dropped. With the JIT, compiles up to a
/// few hundred tiny modules. A mismatch that needs the other rules is returned whole.
Mismatch shrink(Mismatch mismatch, const BackEnd& back_end = jit_back_end());

/// A reproducer to print: both answers, the module's IR, the input and, for rules, the
/// interpreter's register values.
std::string describe(const Mismatch& mismatch);

/// What one differential trial found.
struct TrialOutcome {
  std::optional<Mismatch> mismatch;  // shrunk
  std::optional<Error> error;        // the JIT could not compile or load a valid module
  size_t rules = 0;
  size_t verdicts = 0;   // verdicts compared: inputs × rules
  size_t decisions = 0;  // other answers compared: inputs × (messages + priority, fit,
                         // may-preempt, decide)
};

/// The random module of `seed` (random_module with `options`), compiled with
/// `jit_options` and loaded, run against the interpreter on `inputs` random inputs from the
/// same seed. Deterministic.
TrialOutcome run_trial(uint64_t seed, const GeneratorOptions& options, size_t inputs,
                       const Options& jit_options = {});

}  // namespace gov::jit::fuzz
