// The gov side of the peer comparison (docs/benchmarks.md: rules only, at least 100x faster than
// Cedar, same run): the ten workshop rules on the 10,000 tasks of workshop-tasks.json, JIT and
// interpreter, one task's rules per iteration. tools/bench/peers/ times Cedar and CEL on the same
// file; tools/bench-report divides.
#include <benchmark/benchmark.h>

#include "tools/bench/bench_support.hpp"
#include "tools/bench/registration.hpp"
#include "tools/bench/workshop_tasks.hpp"

namespace gov::bench {
namespace {

struct PeerInput {
  const Policy* policy = nullptr;
  std::unique_ptr<RuleTasks> tasks;
  std::string error;
};

const PeerInput& peer_input() {
  static const PeerInput input = [] {
    PeerInput in;
    in.policy = cached_policy(GOV_SOURCE_DIR "/tools/bench/workshop-rules.gov", in.error);
    if (in.policy != nullptr) in.tasks = read_rule_tasks(input_path("workshop-tasks.json"), in.policy->module, in.error);
    return in;
  }();
  return input;
}

void rules(benchmark::State& state, bool use_jit) {
  const PeerInput& input = peer_input();
  if (input.tasks == nullptr || (use_jit && !input.policy->jit)) {
    state.SkipWithError(input.error.empty() ? "JIT unavailable" : input.error.c_str());
    return;
  }
  const ir::Evaluator& evaluator = input.policy->evaluator(use_jit);
  const std::vector<ir::RuleInput>& tasks = input.tasks->inputs;
  std::vector<uint8_t> verdicts(input.policy->module.rules.size());
  size_t i = 0;
  for (auto _ : state) {
    evaluator.evaluate_rules(tasks[i], verdicts);
    benchmark::DoNotOptimize(verdicts.data());
    i = i + 1 == tasks.size() ? 0 : i + 1;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["tasks"] = static_cast<double>(tasks.size());
}

[[maybe_unused]] const bool registered = [] {
  for (bool jit : {true, false}) {
    repeated(benchmark::RegisterBenchmark(jit ? "peers/gov-jit" : "peers/gov-interp",
                                          [jit](benchmark::State& s) { rules(s, jit); })
                 ->Unit(benchmark::kNanosecond),
             5);
  }
  return true;
}();

}  // namespace
}  // namespace gov::bench
