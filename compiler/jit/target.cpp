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

/// Code generator passes gov turns off. gov's code is straight-line tests and short table
/// walks, compiled once per policy version and run millions of times: each switch below was
/// measured (callgrind of compile.gov's `emit_asm` and the hot paths' instructions per
/// `check_admission`; docs/perf/analysis.md) to cost compile time and to leave every hot path
/// with the same instructions or fewer.
struct CodegenSwitch {
  const char* option;
  const char* value;
};
constexpr CodegenSwitch kCodegenSwitches[] = {
    // The x86 machine combiner reassociates arithmetic for instruction-level parallelism; its
    // trace metrics were 12% of the compile (session 22).
    {"x86-machine-combiner", "false"},
    // The pre-register-allocation machine scheduler: 6.7% of the compile, the same
    // instructions on every hot path (an out-of-order core reorders them anyway).
    {"enable-misched", "false"},
    // Loop strength reduction (the table walks are the only loops): 2.5% of the compile.
    {"disable-lsr", "true"},
    // The x86 pass that turns cmov groups in loops into branches: 1.4% of the compile; the
    // table walk keeps its branch-free selects.
    {"x86-cmov-converter", "false"},
};

/// Applies kCodegenSwitches. LLVM keeps them as process-wide options, so they hold for every
/// LLVM user in the process; an option this LLVM does not have is left alone.
void tune_code_generator() {
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  for (const CodegenSwitch& change : kCodegenSwitches) {
    const auto found = options.find(change.option);
    if (found == options.end()) continue;
    // addOccurrence parses the value with the option's own parser (it returns true on failure,
    // which leaves the option as it was).
    (void)found->second->addOccurrence(0, change.option, change.value);
  }
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
