// The engine's decisions besides rules -> LLVM IR: `gov_fit`, `gov_priority` and
// `gov_may_preempt`, the compiled forms of compiler/ir/decisions.hpp.
#pragma once

#include <string_view>

#include "compiler/ir/module.hpp"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace gov::jit {

/// `uint32_t gov_fit(const ir::FitInput*)`: ir::fit(...).packed().
inline constexpr std::string_view kFitSymbol = "gov_fit";
/// `int32_t gov_priority(int32_t class_index)`: ir::priority(module, class_index).
inline constexpr std::string_view kPrioritySymbol = "gov_priority";
/// `uint8_t gov_may_preempt(const ir::PreemptionPair*)`: ir::may_preempt(module, pair).
inline constexpr std::string_view kMayPreemptSymbol = "gov_may_preempt";

/// `void gov_decide(const ir::DecideInput*, ir::DecideResult*)`: Evaluator::decide. It calls the
/// rules' function with a stack buffer of its own for their verdicts, which nothing reads: where
/// LLVM inlines that function (small policies) the stores are dropped. The team's instance types
/// are unrolled per team.
/// A rejected task is not fitted. Each (team, instance type) fit has a fast path for the
/// usual inputs — every request and usage it reads in [0, 2^62), checked with one `or` and
/// one compare — where the cell's constants are folded and arithmetic that provably cannot
/// saturate is plain; other inputs call gov_fit out of line. Same results as the reference
/// for every input.
inline constexpr std::string_view kDecideSymbol = "gov_decide";

/// Adds the four functions to `out`, with the module's quota cells, class weights and team
/// policies as constant tables (indexed, bounds-checked: no hash lookups, no out-of-range
/// reads, saturating arithmetic exactly as the reference).
/// `out` must already define `gov_rules` and `gov.rules.indexed` (lower_rules.hpp).
void lower_decisions(const ir::Module& module, llvm::Module& out, const llvm::TargetMachine& machine);

}  // namespace gov::jit
