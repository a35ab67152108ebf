// Rule code -> LLVM IR: one function `gov_rules(const RuleInput*, uint8_t* verdicts)`.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/ir/module.hpp"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace gov::jit {

/// The only symbol the object exports.
inline constexpr std::string_view kRulesSymbol = "gov_rules";

/// Builds (unoptimised) `gov_rules` for `module`, which must have passed validate(): it
/// writes verdicts[i] = 1 when rule i's condition holds, else 0, with the interpreter's
/// semantics (saturating arithmetic, x / 0 = 0, absent labels read as ""). Registers are
/// SSA values; there are no traps and no undefined behaviour for any input. The result
/// lives in `context` and carries `machine`'s triple, data layout, CPU and features.
std::unique_ptr<llvm::Module> lower_rules(const ir::Module& module, llvm::LLVMContext& context,
                                          const llvm::TargetMachine& machine);

}  // namespace gov::jit
