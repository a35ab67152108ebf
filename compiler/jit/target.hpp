// The machine gov::jit generates code for: native target initialisation and TargetMachines.
#pragma once

#include <memory>
#include <string>

#include "compiler/jit/jit.hpp"

namespace llvm {
class TargetMachine;
}

namespace gov::jit {

/// What code is generated for: part of every key.
struct MachineDescription {
  std::string triple;    // the process triple, e.g. x86_64-pc-linux-gnu
  std::string cpu;       // the host CPU name, or "generic" without Options::host_cpu
  std::string features;  // sorted "+a,-b" feature string ("" without Options::host_cpu)
};

/// Initialises LLVM's native target, asm printer and parser once per process (the first
/// call does the work; later calls return its outcome). Thread-safe. ErrorKind::llvm when
/// this LLVM has no native target.
Result<bool> initialize_native_target();

/// This machine as seen by `options`. Requires initialize_native_target(). Thread-safe.
MachineDescription describe_machine(const Options& options);

/// A fresh TargetMachine for `machine` at `options.opt_level` (PIC, small code model), owned
/// by the caller; not shareable between threads. ErrorKind::llvm when the triple has no target.
Result<std::unique_ptr<llvm::TargetMachine>> create_target_machine(
    const MachineDescription& machine, const Options& options);

/// `options.opt_level` clamped to 0..3.
unsigned opt_level(const Options& options);

}  // namespace gov::jit
