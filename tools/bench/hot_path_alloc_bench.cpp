// The allocation-free proof of the hot path (issue: "the decision for the hot path is
// allocation-free in steady state"): Engine::check_admission on the workshop policy, for 1,024
// different tasks of workshop-tasks.json, from a gov::Task and from a PreparedTask, after one
// warm-up call each, with every operator new of the process counted (alloc_counter.cpp). The
// benchmark reports the allocations it saw (counters allocations_from_spec, allocations_prepared)
// and fails (SkipWithError) when there is any; it also times the prepared call, both back ends.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "runtime/trace/json.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/registration.hpp"

namespace gov::bench {
namespace {

constexpr size_t kTasks = 1024;

/// workshop-tasks.json as the Tasks a controller would pass (names, amounts in base units,
/// labels), the first kTasks of them.
std::vector<gov::Task> task_specs(std::string& error) {
  std::ifstream file(input_path("workshop-tasks.json"));
  if (!file) {
    error = "cannot read workshop-tasks.json (run tools/gen-bench first)";
    return {};
  }
  std::ostringstream text;
  text << file.rdbuf();
  const support::Expected<trace::JsonValue> json = trace::parse_json(text.str());
  const trace::JsonValue* tasks = json.ok() ? json->find("tasks") : nullptr;
  if (tasks == nullptr) {
    error = "workshop-tasks.json is not {\"tasks\": [...]}";
    return {};
  }
  std::vector<gov::Task> specs;
  for (const trace::JsonValue& t : tasks->items) {
    if (specs.size() == kTasks) break;
    const auto text_of = [&t](std::string_view key) {
      const trace::JsonValue* v = t.find(key);
      return v != nullptr ? v->text : std::string();
    };
    const auto int_of = [&t](std::string_view key) {
      const trace::JsonValue* v = t.find(key);
      return v != nullptr ? v->as_int64().value_or(0) : 0;
    };
    gov::Task spec;
    spec.id = text_of("id");
    spec.team = text_of("team");
    spec.priority = text_of("priority");
    if (const std::string type = text_of("instance_type"); !type.empty()) spec.instance_type = type;
    spec.amounts[ir::index(ir::Resource::gpu)] = int_of("gpus");
    spec.amounts[ir::index(ir::Resource::vcpu)] = int_of("vcpus") * 1000;
    spec.amounts[ir::index(ir::Resource::memory)] = int_of("memory_mib");
    if (const trace::JsonValue* labels = t.find("labels")) {
      for (size_t i = 0; i < labels->keys.size(); ++i) spec.labels.emplace_back(labels->keys[i].text, labels->items[i].text);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

void check_admission(benchmark::State& state, bool use_jit) {
  std::string error;
  const Policy* policy = cached_policy(GOV_SOURCE_DIR "/tools/bench/workshop-rules.gov", error);
  static const std::vector<gov::Task> specs = task_specs(error);
  if (policy == nullptr || specs.empty() || (use_jit && !policy->jit)) {
    state.SkipWithError(error.empty() ? "JIT unavailable" : error.c_str());
    return;
  }
  engine::Engine engine(policy->module, policy->evaluator(use_jit));
  // Some usage, so that the quota fit has something to compare: team-a borrows one GPU.
  gov::Task busy;
  busy.id = "busy";
  busy.team = "team-a";
  busy.instance_type = "ml.g5.8xlarge";
  busy.amounts[ir::index(ir::Resource::gpu)] = 3;
  busy.labels = {{"project", "llm"}, {"cost-center", "cc-1"}};
  const std::vector<gov::Event> events = {gov::Event::submit(busy)};
  engine.step(0, events);
  std::vector<engine::PreparedTask> prepared;  // what a controller keeps per workload
  for (const gov::Task& spec : specs) prepared.push_back(engine.prepare(spec));
  for (size_t i = 0; i < specs.size(); ++i) {  // warm-up: per-thread scratch buffers grow once
    benchmark::DoNotOptimize(engine.check_admission(specs[i]));
    benchmark::DoNotOptimize(engine.check_admission(prepared[i]));
  }

  // Steady state: every task once more in both forms, counting every allocation.
  uint64_t before = allocation_count();
  for (const gov::Task& spec : specs) benchmark::DoNotOptimize(engine.check_admission(spec));
  const uint64_t from_spec = allocation_count() - before;
  before = allocation_count();
  for (const engine::PreparedTask& task : prepared) benchmark::DoNotOptimize(engine.check_admission(task));
  const uint64_t from_prepared = allocation_count() - before;
  // The timed loop (prepared tasks, as decision/jit) is counted too.
  before = allocation_count();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.check_admission(prepared[i]));
    i = (i + 1) & (kTasks - 1);
  }
  const uint64_t timed = allocation_count() - before;
  state.counters["allocations_from_spec"] = static_cast<double>(from_spec);
  state.counters["allocations_prepared"] = static_cast<double>(from_prepared + timed);
  state.counters["decisions_counted"] = static_cast<double>(2 * specs.size() + state.iterations());
  if (from_spec + from_prepared + timed != 0) state.SkipWithError("check_admission allocated in steady state");
}

[[maybe_unused]] const bool registered = [] {
  for (bool jit : {true, false}) {
    repeated(benchmark::RegisterBenchmark(jit ? "hot-path-alloc/jit" : "hot-path-alloc/interp",
                                          [jit](benchmark::State& s) { check_admission(s, jit); })
                 ->Unit(benchmark::kNanosecond),
             3);
  }
  return true;
}();

}  // namespace
}  // namespace gov::bench
