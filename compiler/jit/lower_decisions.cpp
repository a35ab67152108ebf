// Lowers the fit test, gov_decide, the priority and the may-preempt predicate to straight-line
// code over constant tables built from the module. The work is in decision_tables.cpp (tables
// and bounded arithmetic), lower_fit.cpp, lower_decide.cpp and lower_preemption.cpp.
#include "compiler/jit/lower_decisions.hpp"

#include "compiler/jit/decision_lowering.hpp"

namespace gov::jit {

void lower_decisions(const ir::Module& module, llvm::Module& out, const llvm::TargetMachine& machine) {
  detail::DecisionLowering lowering(module, out, machine);
  lowering.build_tables();
  lowering.fit();  // first: gov_decide calls it
  lowering.decide();
  lowering.priority();
  lowering.may_preempt();
}

}  // namespace gov::jit
