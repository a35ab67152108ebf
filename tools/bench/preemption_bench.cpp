// Preemption search (docs/benchmarks.md: one team over quota, 10,000 admitted tasks in the cohort,
// <= 50 us median) and its scaling with the number of admitted tasks (10 -> 100,000): the target
// search alone, and the whole nomination a cycle computes for the head (flavor assignment, whose
// oracle simulates the search, then the victims).
#include <benchmark/benchmark.h>

#include <map>

#include "runtime/engine/flavor_assigner.hpp"
#include "runtime/engine/preemption.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/registration.hpp"
#include "tools/bench/cohort_state.hpp"

namespace gov::bench {
namespace {

constexpr size_t kCounts[] = {10, 100, 1000, 10000, 100000};

/// One cohort per size, built on first use and kept (building 100,000 admissions takes a while).
Cohort* cohort_for(size_t count, std::string& error) {
  static std::map<size_t, std::unique_ptr<Cohort>> cohorts;
  auto it = cohorts.find(count);
  if (it == cohorts.end()) it = cohorts.emplace(count, make_cohort(count, /*use_jit=*/true, error)).first;
  return it->second.get();
}

void report(benchmark::State& state, const Cohort& cohort, size_t victims, uint64_t allocations) {
  state.counters["admitted"] = static_cast<double>(cohort.admitted);
  state.counters["victims"] = static_cast<double>(victims);
  state.counters["allocs_per_op"] = benchmark::Counter(static_cast<double>(allocations),
                                                       benchmark::Counter::kAvgIterations);
}

/// find_targets for the preemptor's request in its flavor, contested resource: GPUs.
void search(benchmark::State& state, size_t count) {
  std::string error;
  Cohort* cohort = cohort_for(count, error);
  if (cohort == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  engine::EngineCore& core = *cohort->core;
  engine::FlavorAssigner assigner(core.search_context());
  assigner.set_now(core.now);
  const engine::PreemptionRequest request =
      assigner.request_for(cohort->preemptor, cohort->flavor, engine::resource_bit(ir::Resource::gpu));
  std::vector<engine::Target> targets;
  engine::find_targets(core.search_context(), request, targets);  // warm: sizes `targets`
  if (targets.empty()) {
    state.SkipWithError("the preemptor finds no victims: the cohort is not what the benchmark expects");
    return;
  }
  const uint64_t before = allocation_count();
  for (auto _ : state) {
    engine::find_targets(core.search_context(), request, targets);
    benchmark::DoNotOptimize(targets.data());
  }
  report(state, *cohort, targets.size(), allocation_count() - before);
}

/// What a cycle computes for the head without the nomination cache: the flavor assignment (its
/// preemption oracle runs the search) and then the victims (reusing the oracle's simulation).
void nominate(benchmark::State& state, size_t count) {
  std::string error;
  Cohort* cohort = cohort_for(count, error);
  if (cohort == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  engine::EngineCore& core = *cohort->core;
  engine::FlavorAssigner assigner(core.search_context());
  assigner.set_now(core.now);
  engine::Assignment assignment;
  std::vector<engine::Target> targets;
  const uint64_t before = allocation_count();
  for (auto _ : state) {
    assigner.assign(cohort->preemptor, assignment);
    targets.clear();
    if (assignment.preempt_mode()) assigner.targets_for(cohort->preemptor, assignment, targets);
    benchmark::DoNotOptimize(targets.data());
  }
  if (targets.empty()) {
    state.SkipWithError("the nomination has no victims: the cohort is not what the benchmark expects");
    return;
  }
  report(state, *cohort, targets.size(), allocation_count() - before);
}

[[maybe_unused]] const bool registered = [] {
  for (size_t count : kCounts) {
    repeated(benchmark::RegisterBenchmark(("preemption/search/" + std::to_string(count)).c_str(),
                                          [count](benchmark::State& s) { search(s, count); })
                 ->Unit(benchmark::kMicrosecond),
             5);
    repeated(benchmark::RegisterBenchmark(("preemption/nominate/" + std::to_string(count)).c_str(),
                                          [count](benchmark::State& s) { nominate(s, count); })
                 ->Unit(benchmark::kMicrosecond),
             5);
  }
  return true;
}();

}  // namespace
}  // namespace gov::bench
