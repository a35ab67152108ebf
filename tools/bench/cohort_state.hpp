// A cohort with N admitted tasks for the preemption benchmarks (tools/gen-bench admitted-N):
// eight teams on ml.g5.8xlarge, team-0002 borrowing what team-0001 lends, the others at nominal,
// the cluster full; and a pending task of team-0001 that can only get in by reclaiming.
// Built directly in an EngineCore (engine-internal), so that the target search can be timed alone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/engine/engine_core.hpp"
#include "tools/bench/bench_support.hpp"

namespace gov::bench {

struct Cohort {
  const Policy* policy = nullptr;
  std::unique_ptr<engine::EngineCore> core;
  uint32_t preemptor = 0;  // pending, of team-0001, in no queue
  uint32_t flavor = 0;     // ml.g5.8xlarge
  size_t admitted = 0;
};

/// Loads admitted-`count`.gov and its trace from the inputs folder and admits every task of the
/// trace (like Engine::load_state: no quota check, no rules). nullptr with `error` set on a
/// problem. `use_jit` picks the evaluator the engine holds.
std::unique_ptr<Cohort> make_cohort(size_t count, bool use_jit, std::string& error);

}  // namespace gov::bench
