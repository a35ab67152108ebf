// IR module -> LLVM IR: `gov_rules` (every rule's verdict), `gov_messages` (a matched rule's
// message values) and the decisions of lower_decisions.hpp.
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

/// `void gov_rules(const ir::RuleInput*, uint8_t* verdicts)`.
inline constexpr std::string_view kRulesSymbol = "gov_rules";
/// `i64 gov.rules.indexed(const ir::RuleInput*, uint8_t* verdicts)`, internal: the verdicts
/// through the module's rule index, the first matching deny rule (i32, -1 for none) in the low
/// half of the result and the number of matches in the high half.
inline constexpr std::string_view kIndexedRulesSymbol = "gov.rules.indexed";
/// `void gov_messages(const ir::RuleInput*, uint64_t rule, int64_t* values)`.
inline constexpr std::string_view kMessagesSymbol = "gov_messages";

/// Builds (unoptimised) the five functions the object exports, for `module`, which must have
/// passed validate(): `gov_rules` writes verdicts[i] = 1 when rule i's condition holds, else
/// 0, evaluating only the rules the module's rule index says can match (ir::RuleIndex); `gov_messages` writes the values a rule's message shows (Evaluator::message_values);
/// `gov_fit`, `gov_priority`, `gov_may_preempt` as lower_decisions.hpp says. All with the
/// interpreter's semantics (saturating arithmetic, x / 0 = 0, absent labels read as "").
/// Registers are SSA values; there are no loops, no traps and no undefined behaviour for any
/// input. The result lives in `context` and carries `machine`'s triple, data layout, CPU and
/// features.
std::unique_ptr<llvm::Module> lower_rules(const ir::Module& module, llvm::LLVMContext& context,
                                          const llvm::TargetMachine& machine);

}  // namespace gov::jit
