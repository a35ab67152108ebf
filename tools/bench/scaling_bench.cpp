// Scaling curves (docs/benchmarks.md: decisions/s as teams grow 2 -> 1,024 and rules 0 -> 1,000;
// flat or logarithmic per decision). For each generated policy (tools/gen-bench teams-N, rules-K,
// and sliced-K, whose tasks can each match at most 10 of K rules):
//  - rules only, JIT and interpreter: one task's rules over inputs generated from a seed;
//  - the hot path (Engine::check_admission: resolve, rules, quota fit), JIT and interpreter, also
//    against the number of admitted tasks (admitted-N);
//  - an engine event pair: a one-GPU task of the next team is submitted (rules, queue, cycle,
//    admission) and finished (release, cycle) through Engine::step, the public API, in a cluster
//    that is otherwise idle. Each iteration is two events and two decisions.
#include <benchmark/benchmark.h>

#include <array>
#include <map>

#include "tools/bench/bench_support.hpp"
#include "tools/bench/registration.hpp"
#include "tools/bench/workload.hpp"

namespace gov::bench {
namespace {

constexpr int kTeamCounts[] = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
constexpr int kRuleCounts[] = {0, 1, 3, 10, 30, 100, 300, 1000};
/// sliced-K.gov: K rules over 100 teams, at most 10 of which can match a task (the rule index).
constexpr int kSlicedRuleCounts[] = {10, 1000};
constexpr size_t kAdmittedCounts[] = {10, 100, 1000, 10000, 100000};
constexpr uint64_t kSeed = 20240601;
constexpr size_t kInputs = 1024;  // a power of two: the index wraps with a mask

/// Rule inputs for a generated policy (workload.hpp draws tasks over the module's teams,
/// classes and types), loaded once per file.
const Workload* inputs_for(const std::string& file, std::string& error) {
  static std::map<std::string, std::pair<std::unique_ptr<Workload>, std::string>> cache;
  auto it = cache.find(file);
  if (it == cache.end()) {
    std::string load_error;
    auto workload = make_workload(input_path(file), "/", kSeed, kInputs, &load_error);
    if (!workload) load_error += " (run tools/gen-bench first)";
    it = cache.emplace(file, std::make_pair(std::move(workload), load_error)).first;
  }
  error = it->second.second;
  return it->second.first.get();
}

void rules_only(benchmark::State& state, const std::string& file, bool use_jit) {
  std::string error;
  const Policy* policy = cached_policy(input_path(file), error);
  const Workload* workload = policy != nullptr ? inputs_for(file, error) : nullptr;
  if (workload == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  if (use_jit && !policy->jit) {
    state.SkipWithError(("JIT unavailable: " + policy->jit_error).c_str());
    return;
  }
  const ir::Evaluator& evaluator = policy->evaluator(use_jit);
  std::vector<uint8_t> verdicts(std::max<size_t>(1, policy->module.rules.size()));
  size_t i = 0;
  for (auto _ : state) {
    evaluator.evaluate_rules(workload->inputs[i], verdicts);
    benchmark::DoNotOptimize(verdicts.data());
    i = (i + 1) & (kInputs - 1);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["rules"] = static_cast<double>(policy->module.rules.size());
  state.counters["teams"] = static_cast<double>(policy->module.teams.size());
}

/// One submit event per team: a one-GPU task in the team's first instance type, with the labels
/// the generated rules ask for, so that no rule denies it.
std::vector<gov::Event> submits_for(const ir::Module& module) {
  std::vector<gov::Event> events;
  for (const ir::Team& team : module.teams) {
    gov::Task spec;
    spec.id = "x-" + team.name;
    spec.team = team.name;
    spec.priority = "training";
    spec.instance_type = module.flavors[team.quotas.front().flavor].name;
    spec.amounts[ir::index(ir::Resource::gpu)] = 1;
    spec.labels = {{"project", "llm"}, {"cost-center", "cc-1"}, {"tier", "interactive"}};
    events.push_back(gov::Event::submit(std::move(spec)));
  }
  return events;
}

void engine_events(benchmark::State& state, const std::string& file) {
  std::string error;
  const Policy* policy = cached_policy(input_path(file), error);
  if (policy == nullptr || !policy->jit) {
    state.SkipWithError(policy == nullptr ? error.c_str() : "JIT unavailable");
    return;
  }
  const std::vector<gov::Event> submits = submits_for(policy->module);
  std::vector<gov::Event> finishes;
  for (const gov::Event& submit : submits) finishes.push_back(gov::Event::finish(submit.task.id));
  engine::Engine engine(policy->module, *policy->jit);
  std::vector<gov::Decision> decisions;
  gov::Time now = 0;
  size_t team = 0;
  int64_t admitted = 0;
  const uint64_t allocations_before = allocation_count();
  for (auto _ : state) {
    engine.step(now, std::span(&submits[team], 1), decisions);
    engine.step(now, std::span(&finishes[team], 1), decisions);
    admitted += decisions.size() == 2 && decisions[0].outcome == gov::Outcome::admitted;
    decisions.clear();
    ++now;
    team = team + 1 == submits.size() ? 0 : team + 1;
  }
  if (admitted != state.iterations()) {
    state.SkipWithError("a submitted task was not admitted at once: the policy is not what the benchmark expects");
    return;
  }
  state.SetItemsProcessed(state.iterations() * 2);  // events
  state.counters["allocs_per_event"] = benchmark::Counter(
      static_cast<double>(allocation_count() - allocations_before) / 2, benchmark::Counter::kAvgIterations);
  state.counters["rules"] = static_cast<double>(policy->module.rules.size());
  state.counters["teams"] = static_cast<double>(policy->module.teams.size());
  state.counters["events_per_iteration"] = 2;
}

/// Engine::check_admission (resolve, rules, quota fit; no state change) for one task of each team
/// in turn, in an idle cluster.
void hot_path(benchmark::State& state, const std::string& file, bool use_jit) {
  std::string error;
  const Policy* policy = cached_policy(input_path(file), error);
  if (policy == nullptr || (use_jit && !policy->jit)) {
    state.SkipWithError(policy == nullptr ? error.c_str() : "JIT unavailable");
    return;
  }
  const std::vector<gov::Event> submits = submits_for(policy->module);
  engine::Engine engine(policy->module, policy->evaluator(use_jit));
  size_t team = 0;
  int64_t admits = 0;
  for (auto _ : state) {
    const engine::AdmissionCheck check = engine.check_admission(submits[team].task);
    admits += check.verdict == engine::AdmissionCheck::Verdict::admit;
    team = team + 1 == submits.size() ? 0 : team + 1;
  }
  if (admits != state.iterations()) {
    state.SkipWithError("a task of the idle cluster would not be admitted: the policy is not what the benchmark expects");
    return;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["rules"] = static_cast<double>(policy->module.rules.size());
  state.counters["teams"] = static_cast<double>(policy->module.teams.size());
}

/// The same with N admitted tasks in the cohort (admitted-N, replayed through Engine::step): a
/// one-GPU task of each team in turn; the cluster is full, so the answer is pending.
void hot_path_admitted(benchmark::State& state, size_t count, bool use_jit) {
  const std::string name = "admitted-" + std::to_string(count);
  std::string error;
  const Policy* policy = cached_policy(input_path(name + ".gov"), error);
  Trace trace;
  if (policy == nullptr || (use_jit && !policy->jit) ||
      !read_trace_file(input_path(name + ".trace.json"), policy->module, trace, error)) {
    state.SkipWithError(error.empty() ? "JIT unavailable" : error.c_str());
    return;
  }
  engine::Engine engine(policy->module, policy->evaluator(use_jit));
  for (const Instant& instant : trace.instants) engine.step(instant.at, instant.events);
  const std::vector<gov::Event> submits = submits_for(policy->module);
  size_t team = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.check_admission(submits[team].task));
    team = team + 1 == submits.size() ? 0 : team + 1;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["admitted"] = static_cast<double>(engine.snapshot().count(gov::TaskState::admitted));
}

[[maybe_unused]] const bool registered = [] {
  const auto setup = [](benchmark::internal::Benchmark* b) {
    repeated(b->Unit(benchmark::kNanosecond), 3);
  };
  // The five rows of one input file (teams-N.gov or rules-K.gov), named scaling/ROW/SIZE.
  const auto register_size = [&setup](const std::string& size) {
    const std::string file = size + ".gov";
    const std::string suffix = "/" + size;
    setup(benchmark::RegisterBenchmark(("scaling/rules-jit" + suffix).c_str(),
                                       [file](benchmark::State& s) { rules_only(s, file, true); }));
    setup(benchmark::RegisterBenchmark(("scaling/rules-interp" + suffix).c_str(),
                                       [file](benchmark::State& s) { rules_only(s, file, false); }));
    setup(benchmark::RegisterBenchmark(("scaling/engine-event" + suffix).c_str(),
                                       [file](benchmark::State& s) { engine_events(s, file); }));
    setup(benchmark::RegisterBenchmark(("scaling/hot-path-jit" + suffix).c_str(),
                                       [file](benchmark::State& s) { hot_path(s, file, true); }));
    setup(benchmark::RegisterBenchmark(("scaling/hot-path-interp" + suffix).c_str(),
                                       [file](benchmark::State& s) { hot_path(s, file, false); }));
  };
  for (int n : kTeamCounts) register_size("teams-" + std::to_string(n));
  for (int k : kRuleCounts) register_size("rules-" + std::to_string(k));
  for (int k : kSlicedRuleCounts) register_size("sliced-" + std::to_string(k));
  for (size_t n : kAdmittedCounts) {
    const std::string suffix = "/admitted-" + std::to_string(n);
    setup(benchmark::RegisterBenchmark(("scaling/hot-path-jit" + suffix).c_str(),
                                       [n](benchmark::State& s) { hot_path_admitted(s, n, true); }));
  }
  return true;
}();

}  // namespace
}  // namespace gov::bench
