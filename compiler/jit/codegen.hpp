// Optimisation (new pass manager) and machine-code emission for a lowered rules module.
#pragma once

#include <string>

#include "compiler/jit/jit.hpp"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace gov::jit {

/// Checks `module` with LLVM's verifier (ErrorKind::llvm on a lowering bug), then runs the
/// default per-module pipeline at `level` (0..3) tuned for `machine`. Modifies `module`.
Result<bool> optimize(llvm::Module& module, llvm::TargetMachine& machine, unsigned level);

enum class EmitKind : uint8_t { object, assembly };

/// The machine code of `module` as a relocatable object file or as assembly text; counts
/// one run of the code generator (codegen_count()). ErrorKind::llvm when the target cannot
/// emit that kind of file.
Result<std::string> emit_machine_code(llvm::Module& module, llvm::TargetMachine& machine,
                                      EmitKind kind);

}  // namespace gov::jit
