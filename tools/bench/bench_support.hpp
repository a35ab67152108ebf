// Shared pieces of the benchmark suite: where the generated inputs are (tools/gen-bench), loading
// a policy into both back ends, reading a trace into engine events, and process measurements
// (allocation count, resident memory).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/engine.hpp"

namespace gov::bench {

/// The folder tools/gen-bench wrote: $GOV_BENCH_INPUTS when set, else `bench-inputs` next to
/// the binary's `bin/` folder (the build directory), which is where tools/gen-bench writes by
/// default.
std::string inputs_dir();
/// inputs_dir() + "/" + name.
std::string input_path(const std::string& name);

/// A checked, lowered policy with both evaluators. Not movable (the interpreter refers to
/// `module`): held by unique_ptr.
struct Policy {
  ir::Module module;
  std::unique_ptr<interp::Interpreter> interp;
  std::unique_ptr<ir::Evaluator> jit;  // null when LLVM is unavailable (the error says why)
  std::string jit_error;

  const ir::Evaluator& evaluator(bool use_jit) const { return use_jit ? *jit : *interp; }
};

/// Loads, checks and lowers the policy at `path` and JIT-compiles its rules. nullptr with
/// `error` set when it cannot be read or does not check.
std::unique_ptr<Policy> load_policy(const std::string& path, std::string& error);

/// The same, remembered per path for the life of the process (benchmarks run many
/// repetitions). Never returns null: on failure `error` is set and the entry is empty.
const Policy* cached_policy(const std::string& path, std::string& error);

/// A trace's events grouped by time, as `gov simulate` applies them: all events of one
/// instant go to Engine::step together.
struct Instant {
  gov::Time at = 0;
  std::vector<gov::Event> events;
};
struct Trace {
  std::vector<Instant> instants;
  size_t events = 0;
};

/// Reads a trace file (up to 1 GiB) against `module`. False with `error` set on a problem.
bool read_trace_file(const std::string& path, const ir::Module& module, Trace& out,
                     std::string& error);

/// Heap allocations (operator new and malloc-family calls through operator new) made by this
/// process so far, counted by the replacement operator new in alloc_counter.cpp.
uint64_t allocation_count();

/// Resident set size of this process now, and its peak (VmHWM), in bytes (/proc/self/status).
uint64_t resident_bytes();
uint64_t peak_resident_bytes();
/// Bytes the allocator has handed out and not taken back: jemalloc's stats.allocated when
/// gov-bench links it (cmake/GovAllocator.cmake), else glibc's mallinfo2().uordblks + hblkhd.
uint64_t heap_bytes_in_use();

}  // namespace gov::bench
