// Runs PassBuilder's O-level pipeline and the target's code generator; counts codegen runs.
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
  llvm::ModulePassManager passes = o_level == llvm::OptimizationLevel::O0
                                       ? builder.buildO0DefaultPipeline(o_level)
                                       : builder.buildPerModuleDefaultPipeline(o_level);
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
