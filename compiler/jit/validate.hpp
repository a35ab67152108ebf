// Well-formedness of rule code before it is compiled: the JIT trusts what passes.
#pragma once

#include <optional>

#include "compiler/ir/module.hpp"
#include "compiler/jit/jit.hpp"

namespace gov::jit {

/// Whether instruction operand `a` / `b` is read by `op` (the interpreter reads a missing
/// operand, -1, as 0).
bool reads_a(ir::Op op);
bool reads_b(ir::Op op);

/// An invalid_module error for the first malformed instruction: an operand that is not an
/// earlier register, an index outside its table (task, team, cluster, label keys, sets), a
/// condition longer than the rule's code, or a message value that is not a register of the
/// rule, a quota for an instance type outside the module or a second quota of a team for
/// one. Pure; thread-safe.
std::optional<Error> validate(const ir::Module& module);

}  // namespace gov::jit
