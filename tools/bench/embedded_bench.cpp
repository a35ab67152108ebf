// The embedded path (issue "Embedding runtime"; docs/embedding.md): decisions per second through
// the C++ API (gov::Engine) and through the C ABI (gov.h) on the workshop policy with the JIT,
// in one run so that the two can be compared:
//   embedded/check/engine            for reference: engine::Engine::check_admission itself, with
//                                    no lock and no conversion (single-threaded use only)
//   embedded/check-prepared/{cpp,c}  the same for tasks prepared once (Engine::prepare): no name
//                                    lookups, no copy of the task
//   embedded/check/{cpp,c}           the hot-path query (Engine::check / gov_engine_check): rules
//                                    and quota fit for one task, no state change; also with two
//                                    threads asking at once (queries share the state lock)
//   embedded/submit-finish/{cpp,c}   two state changes per iteration: submit a task (admitted at
//                                    once), finish it; each is one engine step, decisions out
//   embedded/{check,submit-finish}/cpp/pod-sets
//                                    the same for a task of two pod sets (a master of 1 GPU, a
//                                    worker of 1 GPU; issue 18): the general path
//   embedded/{check,submit-finish}/cpp/tree
//                                    the same on a three-level tree of cohorts (issue 20,
//                                    tests/corpus/cohort-tree.gov: org → eng → web): the
//                                    per-resource path with the tree's formulas
//   embedded/submit-finish/cpp/under-checks
//                                    the same while 3 more threads call check() without pause:
//                                    the state lock prefers writers, so steps are not starved
// items_per_second counts decisions; `allocations` the heap allocations per check in steady
// state (0: allocation-free; counted when the suite's counting allocator is linked in).
#include <benchmark/benchmark.h>

#include <gov/engine.hpp>
#include <gov/gov.h>

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compiler/driver/driver.hpp"
#include "runtime/engine/engine.hpp"

namespace gov::bench {

/// Heap allocations of the calling thread so far: defined by the suite's counting allocator
/// (alloc_counter.cpp) when it is linked in; weak, so that this file does not depend on it.
[[gnu::weak]] uint64_t allocation_count();

namespace {

/// Allocations so far, or 0 without the counting allocator.
uint64_t allocations() { return allocation_count != nullptr ? allocation_count() : 0; }

/// Reports the allocations per iteration since `before`, when they are counted at all.
void report_allocations(benchmark::State& state, uint64_t before) {
  if (allocation_count == nullptr) return;
  state.counters["allocations"] =
      benchmark::Counter(static_cast<double>(allocations() - before), benchmark::Counter::kAvgIterations);
}

benchmark::internal::Benchmark* repeated(benchmark::internal::Benchmark* b) {
  return b->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
}

const std::string& policy_path() {
  static const std::string path = std::string(GOV_SOURCE_DIR) + "/policies/examples/workshop-g5.gov";
  return path;
}

constexpr std::array<int64_t, 4> kGpus = {1, 2, 3, 4};  // 4 is over team-a's maximum: pending

gov::Engine& cpp_engine() {
  static gov::Engine engine = gov::Engine::compile_file(policy_path());
  return engine;
}

gov_engine* c_engine() {
  static gov_engine* engine = [] {
    gov_engine* e = nullptr;
    return gov_engine_open_file(policy_path().c_str(), nullptr, &e) == GOV_OK ? e : nullptr;
  }();
  return engine;
}

void check_engine(benchmark::State& state) {
  driver::Result loaded =
      driver::load(driver::Source::file(policy_path()), driver::Request::running(driver::BackEnd::jit));
  if (!loaded.ok()) {
    state.SkipWithError(loaded.error->message.c_str());
    return;
  }
  engine::Engine engine(loaded.policy->module, *loaded.policy->evaluator);
  gov::Task task;
  task.id = "probe";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  size_t i = 0;
  for (auto _ : state) {
    task.amounts[0] = kGpus[i++ & 3];
    benchmark::DoNotOptimize(engine.check_admission(task));
  }
  state.SetItemsProcessed(state.iterations());
}

void check_cpp(benchmark::State& state) {
  gov::Engine& engine = cpp_engine();
  gov::Task task;
  task.id = "probe";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  size_t i = 0;
  for (int warm = 0; warm < 64; ++warm) engine.check(task);
  const uint64_t before = allocations();
  for (auto _ : state) {
    task.set(gov::Resource::gpu, kGpus[i++ & 3]);
    benchmark::DoNotOptimize(engine.check(task));
  }
  report_allocations(state, before);
  state.SetItemsProcessed(state.iterations());
}

void check_c(benchmark::State& state) {
  gov_engine* engine = c_engine();
  if (engine == nullptr) {
    state.SkipWithError(gov_last_error());
    return;
  }
  gov_task task;
  gov_task_init(&task);
  task.id = "probe";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  gov_admission admission;
  size_t i = 0;
  for (int warm = 0; warm < 64; ++warm) gov_engine_check(engine, &task, &admission);
  const uint64_t before = allocations();
  for (auto _ : state) {
    task.amounts[GOV_GPU] = kGpus[i++ & 3];
    benchmark::DoNotOptimize(gov_engine_check(engine, &task, &admission));
  }
  report_allocations(state, before);
  state.SetItemsProcessed(state.iterations());
}

void check_prepared_cpp(benchmark::State& state) {
  gov::Engine& engine = cpp_engine();
  std::array<gov::PreparedTask, kGpus.size()> tasks;
  for (size_t k = 0; k < kGpus.size(); ++k) {
    gov::Task task;
    task.id = "probe";
    task.team = "team-a";
    task.instance_type = "ml.g5.8xlarge";
    task.set(gov::Resource::gpu, kGpus[k]);
    tasks[k] = engine.prepare(task);
  }
  size_t i = 0;
  for (int warm = 0; warm < 64; ++warm) engine.check(tasks[0]);
  const uint64_t before = allocations();
  for (auto _ : state) benchmark::DoNotOptimize(engine.check(tasks[i++ & 3]));
  report_allocations(state, before);
  state.SetItemsProcessed(state.iterations());
}

void check_prepared_c(benchmark::State& state) {
  gov_engine* engine = c_engine();
  if (engine == nullptr) {
    state.SkipWithError(gov_last_error());
    return;
  }
  std::array<gov_prepared_task*, kGpus.size()> tasks{};
  for (size_t k = 0; k < kGpus.size(); ++k) {
    gov_task task;
    gov_task_init(&task);
    task.id = "probe";
    task.team = "team-a";
    task.instance_type = "ml.g5.8xlarge";
    task.amounts[GOV_GPU] = kGpus[k];
    gov_engine_prepare(engine, &task, &tasks[k]);
  }
  gov_admission admission;
  size_t i = 0;
  for (int warm = 0; warm < 64; ++warm) gov_engine_check_prepared(engine, tasks[0], &admission);
  const uint64_t before = allocations();
  for (auto _ : state) benchmark::DoNotOptimize(gov_engine_check_prepared(engine, tasks[i++ & 3], &admission));
  report_allocations(state, before);
  state.SetItemsProcessed(state.iterations());
  for (gov_prepared_task* t : tasks) gov_prepared_task_free(t);
}

void submit_finish_cpp(benchmark::State& state) {
  gov::Engine engine = gov::Engine::compile_file(policy_path());
  gov::Task task;
  task.id = "t";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  task.set(gov::Resource::gpu, 1);
  gov::Time at = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.submit(task, ++at));
    benchmark::DoNotOptimize(engine.finish(task.id, at));
  }
  state.SetItemsProcessed(2 * state.iterations());
}

/// team-a's task of two pod sets, a master and a worker of 1 GPU each, both on ml.g5.8xlarge.
gov::Task two_pod_sets() {
  gov::Task task;
  task.id = "t";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  for (const char* name : {"master", "worker"}) {
    gov::PodSet pod_set;
    pod_set.name = name;
    pod_set.set(gov::Resource::gpu, 1);
    task.pod_sets.push_back(pod_set);
  }
  return task;
}

void check_pod_sets_cpp(benchmark::State& state) {
  gov::Engine& engine = cpp_engine();
  gov::Task task = two_pod_sets();
  size_t i = 0;
  for (int warm = 0; warm < 64; ++warm) engine.check(task);
  const uint64_t before = allocations();
  for (auto _ : state) {
    task.pod_sets[1].set(gov::Resource::gpu, kGpus[i++ & 3]);  // 2 to 5 GPUs in all: some pending
    benchmark::DoNotOptimize(engine.check(task));
  }
  report_allocations(state, before);
  state.SetItemsProcessed(state.iterations());
}

void submit_finish_pod_sets_cpp(benchmark::State& state) {
  gov::Engine engine = gov::Engine::compile_file(policy_path());
  const gov::Task task = two_pod_sets();
  gov::Time at = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.submit(task, ++at));
    benchmark::DoNotOptimize(engine.finish(task.id, at));
  }
  state.SetItemsProcessed(2 * state.iterations());
}

void submit_finish_under_checks(benchmark::State& state) {
  gov::Engine engine = gov::Engine::compile_file(policy_path());
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&engine, &stop] {
      gov::Task probe;
      probe.id = "probe";
      probe.team = "team-a";
      probe.instance_type = "ml.g5.8xlarge";
      probe.set(gov::Resource::gpu, 1);
      while (!stop.load(std::memory_order_relaxed)) benchmark::DoNotOptimize(engine.check(probe));
    });
  }
  gov::Task task;
  task.id = "t";
  task.team = "team-b";
  task.instance_type = "ml.g5.8xlarge";
  task.set(gov::Resource::gpu, 1);
  gov::Time at = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.submit(task, ++at));
    benchmark::DoNotOptimize(engine.finish(task.id, at));
  }
  stop.store(true);
  for (std::thread& r : readers) r.join();
  state.SetItemsProcessed(2 * state.iterations());
}

void submit_finish_c(benchmark::State& state) {
  gov_engine* engine = nullptr;
  if (gov_engine_open_file(policy_path().c_str(), nullptr, &engine) != GOV_OK) {
    state.SkipWithError(gov_last_error());
    return;
  }
  gov_task task;
  gov_task_init(&task);
  task.id = "t";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  task.amounts[GOV_GPU] = 1;
  int64_t at = 0;
  for (auto _ : state) {
    gov_decisions* step = nullptr;
    gov_engine_submit(engine, ++at, &task, &step);
    benchmark::DoNotOptimize(gov_decisions_get(step, 0)->outcome);
    gov_decisions_free(step);
    gov_engine_finish(engine, at, task.id, &step);
    benchmark::DoNotOptimize(gov_decisions_get(step, 0)->outcome);
    gov_decisions_free(step);
  }
  gov_engine_close(engine);
  state.SetItemsProcessed(2 * state.iterations());
}

gov::Engine& tree_engine() {
  static gov::Engine engine = gov::Engine::compile_file(std::string(GOV_SOURCE_DIR) + "/tests/corpus/cohort-tree.gov");
  return engine;
}

void check_tree_cpp(benchmark::State& state) {
  gov::Engine& engine = tree_engine();
  gov::Task task;
  task.id = "probe";
  task.team = "web";
  task.instance_type = "ml.g5.8xlarge";
  size_t i = 0;
  for (int warm = 0; warm < 64; ++warm) engine.check(task);
  const uint64_t before = allocations();
  for (auto _ : state) {
    task.set(gov::Resource::gpu, kGpus[i++ & 3]);  // 4 is over web's maximum (3): pending
    benchmark::DoNotOptimize(engine.check(task));
  }
  report_allocations(state, before);
  state.SetItemsProcessed(state.iterations());
}

void submit_finish_tree_cpp(benchmark::State& state) {
  gov::Engine engine = gov::Engine::compile_file(std::string(GOV_SOURCE_DIR) + "/tests/corpus/cohort-tree.gov");
  gov::Task task;
  task.id = "t";
  task.team = "web";
  task.instance_type = "ml.g5.8xlarge";
  task.set(gov::Resource::gpu, 2);  // borrows from eng
  gov::Time at = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.submit(task, ++at));
    benchmark::DoNotOptimize(engine.finish(task.id, at));
  }
  state.SetItemsProcessed(2 * state.iterations());
}

[[maybe_unused]] const bool registered = [] {
  repeated(benchmark::RegisterBenchmark("embedded/check/engine", check_engine));
  repeated(benchmark::RegisterBenchmark("embedded/check/cpp", check_cpp));
  repeated(benchmark::RegisterBenchmark("embedded/check/c", check_c));
  repeated(benchmark::RegisterBenchmark("embedded/check-prepared/cpp", check_prepared_cpp));
  repeated(benchmark::RegisterBenchmark("embedded/check-prepared/c", check_prepared_c));
  // Two threads asking at once: items_per_second over real time is the pair's throughput.
  repeated(benchmark::RegisterBenchmark("embedded/check/cpp", check_cpp)->Threads(2)->UseRealTime());
  repeated(benchmark::RegisterBenchmark("embedded/check/c", check_c)->Threads(2)->UseRealTime());
  repeated(benchmark::RegisterBenchmark("embedded/submit-finish/cpp", submit_finish_cpp));
  repeated(benchmark::RegisterBenchmark("embedded/submit-finish/c", submit_finish_c));
  repeated(benchmark::RegisterBenchmark("embedded/check/cpp/pod-sets", check_pod_sets_cpp));
  repeated(benchmark::RegisterBenchmark("embedded/submit-finish/cpp/pod-sets", submit_finish_pod_sets_cpp));
  repeated(benchmark::RegisterBenchmark("embedded/check/cpp/tree", check_tree_cpp));
  repeated(benchmark::RegisterBenchmark("embedded/submit-finish/cpp/tree", submit_finish_tree_cpp));
  repeated(benchmark::RegisterBenchmark("embedded/submit-finish/cpp/under-checks", submit_finish_under_checks)
               ->UseRealTime());
  return true;
}();

}  // namespace
}  // namespace gov::bench
