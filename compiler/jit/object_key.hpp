// Cache keys of object code: what the generated machine code depends on, hashed.
#pragma once

#include "compiler/ir/decisions.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/jit/target.hpp"

namespace gov::jit {

/// SHA-256 of the canonical serialisation of `module`'s rule conditions, sets and label-key
/// count, with LLVM's version, `machine`, `options` and the layout of ir::RuleInput. Pure.
Key compute_key(const ir::Module& module, const MachineDescription& machine,
                const Options& options);

}  // namespace gov::jit
