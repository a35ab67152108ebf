// Native target set-up: initialise once, describe the host, build TargetMachines.
#include "compiler/jit/target.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace gov::jit {

namespace {

/// Turns off the x86 back end's machine combiner, which reassociates arithmetic for
/// instruction-level parallelism at the Default code generation level. On gov's straight-line
/// code it gains nothing (the workshop policy's gov_decide runs 224 instructions without it, 225
/// with it) and its trace metrics took 12% of compile.gov's JIT compile (319 M → 281 M
/// instructions; docs/perf/analysis.md, session 22). LLVM keeps the switch as a process-wide
/// option, so this holds for every LLVM user in the process; an LLVM without the option is left
/// as it is.
void tune_code_generator() {
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  const auto found = options.find("x86-machine-combiner");
  if (found == options.end()) return;
  // addOccurrence parses the value with the option's own parser (it returns true on failure,
  // which leaves the option as it was).
  (void)found->second->addOccurrence(0, "x86-machine-combiner", "false");
}

}  // namespace

Result<bool> initialize_native_target() {
  static std::once_flag once;
  static bool failed = false;
  std::call_once(once, [] {
    // Each returns true on failure; the asm printer is what emits objects and assembly.
    failed = llvm::InitializeNativeTarget() || llvm::InitializeNativeTargetAsmPrinter() ||
             llvm::InitializeNativeTargetAsmParser();
    if (!failed) tune_code_generator();
  });
  if (failed)
    return Error{ErrorKind::llvm, "LLVM has no native target for " + llvm::sys::getProcessTriple()};
  return true;
}

namespace {

/// The host's features as a sorted "+a,-b" string: StringMap order is not stable.
std::string host_features() {
  std::vector<std::string> features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    features.push_back((feature.second ? "+" : "-") + feature.first().str());
  }
  std::sort(features.begin(), features.end());
  std::string joined;
  for (const std::string& feature : features) {
    if (!joined.empty()) joined += ',';
    joined += feature;
  }
  return joined;
}

}  // namespace

MachineDescription describe_machine(const Options& options) {
  // The host does not change while the process runs: ask (cpuid) once.
  static const MachineDescription host{llvm::sys::getProcessTriple(),
                                       llvm::sys::getHostCPUName().str(), host_features()};
  if (options.host_cpu) return host;
  return MachineDescription{host.triple, "generic", ""};
}

unsigned opt_level(const Options& options) {
  return std::min(options.opt_level, 3u);
}

Result<std::unique_ptr<llvm::TargetMachine>> create_target_machine(
    const MachineDescription& machine, const Options& options) {
  std::string message;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(machine.triple, message);
  if (target == nullptr)
    return Error{ErrorKind::llvm, "no LLVM target for `" + machine.triple + "`: " + message};
  // The code generator's Less level (for IR level 1) measured slower to compile, not faster.
  const unsigned ir_level = opt_level(options);
  const auto level = llvm::CodeGenOpt::getLevel(ir_level == 0 ? 0 : ir_level == 3 ? 3 : 2);
  llvm::TargetMachine* created = target->createTargetMachine(
      machine.triple, machine.cpu, machine.features, llvm::TargetOptions{}, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, level.value_or(llvm::CodeGenOptLevel::Default));
  if (created == nullptr)
    return Error{ErrorKind::llvm,
                 "LLVM could not create a target machine for `" + machine.triple + "`"};
  return std::unique_ptr<llvm::TargetMachine>(created);
}

}  // namespace gov::jit
