// Runs gov's pass pipeline (level 1) or PassBuilder's O-level one and the target's code generator; counts codegen runs.
#include "compiler/jit/codegen.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>

namespace gov::jit {
namespace {

std::atomic<uint64_t> codegen_runs{0};

/// Level 1, the engine's: the passes gov's generated IR needs, once each. The code the lowering
/// emits is straight-line tests and table walks whose helpers are `alwaysinline`: it needs
/// inlining, scalar replacement of the lowering's allocas, common subexpressions (the rules test
/// the same task fields), one InstCombine, CFG simplification and dead-bit elimination. LLVM's
/// O1 pipeline runs InstCombine five times and loop passes the code has no use for; on
/// compile.gov this pipeline takes 30% fewer instructions to compile (LLVM's part) and gives the
/// same or shorter hot paths (docs/perf/analysis.md, "JIT compile, session 12").
constexpr const char* kGovPipeline =
    "always-inline,globalopt,"
    "function(sroa,early-cse<memssa>,simplifycfg,instcombine<no-verify-fixpoint>,simplifycfg,bdce)";

llvm::OptimizationLevel optimization_level(unsigned level) {
  switch (level) {
    case 0:
      return llvm::OptimizationLevel::O0;
    case 1:
      return llvm::OptimizationLevel::O1;
    case 2:
      return llvm::OptimizationLevel::O2;
    default:
      return llvm::OptimizationLevel::O3;
  }
}

}  // namespace

uint64_t codegen_count() {
  return codegen_runs.load(std::memory_order_relaxed);
}

Result<bool> optimize(llvm::Module& module, llvm::TargetMachine& machine, unsigned level) {
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(module, &problem_stream)) {
    return Error{ErrorKind::llvm, "the generated LLVM IR is invalid (a gov bug): " + problems};
  }
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  const llvm::OptimizationLevel o_level = optimization_level(level);
  llvm::ModulePassManager passes;
  if (o_level == llvm::OptimizationLevel::O0) {
    passes = builder.buildO0DefaultPipeline(o_level);
  } else if (o_level == llvm::OptimizationLevel::O1) {
    if (llvm::Error error = builder.parsePassPipeline(passes, kGovPipeline)) {
      return Error{ErrorKind::llvm, "gov's pass pipeline does not parse (a gov bug): " + llvm::toString(std::move(error))};
    }
  } else {
    passes = builder.buildPerModuleDefaultPipeline(o_level);
  }
  passes.run(module, modules);
  return true;
}

Result<std::string> emit_machine_code(llvm::Module& module, llvm::TargetMachine& machine,
                                      EmitKind kind) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  const auto file_type = kind == EmitKind::object ? llvm::CodeGenFileType::ObjectFile
                                                  : llvm::CodeGenFileType::AssemblyFile;
  // addPassesToEmitFile returns true when the target cannot emit this file type.
  if (machine.addPassesToEmitFile(passes, stream, nullptr, file_type)) {
    return Error{ErrorKind::llvm,
                 "the LLVM target cannot emit " +
                     std::string(kind == EmitKind::object ? "objects" : "assembly")};
  }
  passes.run(module);
  codegen_runs.fetch_add(1, std::memory_order_relaxed);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace gov::jit
