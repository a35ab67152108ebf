// gov-bench: the hot-path decision (Engine::check_admission: resolve, rules, quota fit) and
// rules alone, JIT against interpreter in one run, plus JIT compile and cached-load times, for
// the workshop policy with ten rules (docs/benchmarks.md).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "compiler/interp/interpreter.hpp"
#include "compiler/jit/jit.hpp"
#include "runtime/engine/engine.hpp"
#include "tools/bench/workload.hpp"

namespace {

using gov::bench::Workload;

constexpr uint64_t kSeed = 20240601;
constexpr size_t kTasks = 1024;  // a power of two: the input index wraps with a mask
constexpr int kRepetitions = 7;

/// Console (or JSON) output as usual, remembering each benchmark's median real time.
/// Median real and CPU time of one benchmark, in its time unit.
struct Median {
  double real = 0;
  double cpu = 0;
};

/// Console (or JSON) output as usual, remembering each benchmark's median times.
template <typename Base>
class MedianReporter : public Base {
 public:
  using Base::Base;

  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    for (const auto& run : runs) {
      if (run.aggregate_name != "median") continue;
      medians_[run.run_name.function_name] = {run.GetAdjustedRealTime(), run.GetAdjustedCPUTime()};
    }
    Base::ReportRuns(runs);
  }
  Median median(const std::string& name) const {
    auto it = medians_.find(name);
    return it == medians_.end() ? Median{} : it->second;
  }

 private:
  std::map<std::string, Median> medians_;
};

/// One decision's rules per iteration, cycling through the tasks.
void evaluate(benchmark::State& state, const gov::ir::Evaluator& evaluator,
              const Workload& workload) {
  std::array<uint8_t, 64> verdicts{};
  size_t i = 0;
  for (auto _ : state) {
    evaluator.evaluate_rules(workload.inputs[i], verdicts);
    benchmark::DoNotOptimize(verdicts);
    i = (i + 1) & (kTasks - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

/// One hot-path decision per iteration, cycling through the tasks.
template <typename Task>
void decide(benchmark::State& state, const gov::engine::Engine& engine,
            const std::vector<Task>& tasks) {
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.check_admission(tasks[i]));
    i = (i + 1) & (kTasks - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

std::vector<gov::engine::PreparedTask> prepare_all(const gov::engine::Engine& engine,
                                                   const Workload& workload) {
  std::vector<gov::engine::PreparedTask> prepared;
  for (const gov::Task& task : workload.tasks) prepared.push_back(engine.prepare(task));
  return prepared;
}

/// An engine in a steady state: one task of each team admitted (some room left, some used).
std::unique_ptr<gov::engine::Engine> busy_engine(const Workload& workload,
                                                 const gov::ir::Evaluator& evaluator) {
  auto engine = std::make_unique<gov::engine::Engine>(workload.module, evaluator);
  std::vector<gov::Event> events;
  for (const gov::ir::Team& team : workload.module.teams) {
    gov::Task spec;
    spec.id = "running-" + team.name;
    spec.team = team.name;
    spec.amounts[gov::ir::index(gov::ir::Resource::gpu)] = 1;
    spec.labels = {{"project", "llm"}, {"cost-center", "cc-1"}};
    events.push_back(gov::Event::submit(spec));
  }
  engine->step(0, events);
  return engine;
}

/// Both engines answer every task the same way; the verdict mix goes to stderr.
bool decisions_agree(const gov::engine::Engine& jit, const gov::engine::Engine& interp,
                     const Workload& workload) {
  std::array<size_t, 4> mix{};
  for (const gov::Task& task : workload.tasks) {
    const gov::engine::AdmissionCheck a = jit.check_admission(task);
    const gov::engine::AdmissionCheck b = interp.check_admission(task);
    if (a.verdict != b.verdict || a.flavor != b.flavor || a.rule != b.rule ||
        a.borrows != b.borrows || a.warnings != b.warnings)
      return false;
    ++mix[static_cast<size_t>(a.verdict)];
  }
  fmt::print(stderr, "gov-bench: hot-path tasks: {} admit, {} reject, {} pending, {} invalid\n",
             mix[0], mix[1], mix[2], mix[3]);
  return true;
}

void compile(benchmark::State& state, const Workload& workload) {
  for (auto _ : state) benchmark::DoNotOptimize(gov::jit::compile(workload.module).ok());
}

void load(benchmark::State& state, const Workload& workload, const gov::jit::ObjectCode& object) {
  for (auto _ : state) benchmark::DoNotOptimize(gov::jit::load(workload.module, object).ok());
}

/// The JIT must agree with the interpreter on the workload before it is timed.
bool agree(const gov::ir::Evaluator& jit, const gov::ir::Evaluator& interp,
           const Workload& workload) {
  std::array<uint8_t, 64> a{};
  std::array<uint8_t, 64> b{};
  for (const gov::ir::RuleInput& input : workload.inputs) {
    jit.evaluate_rules(input, a);
    interp.evaluate_rules(input, b);
    if (a != b) return false;
  }
  return true;
}

void register_benchmarks(const Workload& workload, const gov::ir::Evaluator& jit,
                         const gov::ir::Evaluator& interp, const gov::jit::ObjectCode& object,
                         const gov::engine::Engine& jit_engine,
                         const gov::engine::Engine& interp_engine) {
  const auto per_decision = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kNanosecond)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
  };
  // Prepared tasks: what a controller keeps per workload (names and labels resolved once).
  static const auto jit_tasks = prepare_all(jit_engine, workload);
  static const auto interp_tasks = prepare_all(interp_engine, workload);
  per_decision(benchmark::RegisterBenchmark(
      "decision/jit", [&](benchmark::State& s) { decide(s, jit_engine, jit_tasks); }));
  per_decision(benchmark::RegisterBenchmark(
      "decision/interp", [&](benchmark::State& s) { decide(s, interp_engine, interp_tasks); }));
  per_decision(benchmark::RegisterBenchmark(
      "decision-from-spec/jit", [&](benchmark::State& s) { decide(s, jit_engine, workload.tasks); }));
  per_decision(benchmark::RegisterBenchmark("decision-from-spec/interp", [&](benchmark::State& s) {
    decide(s, interp_engine, workload.tasks);
  }));
  per_decision(benchmark::RegisterBenchmark(
      "rules/jit", [&](benchmark::State& s) { evaluate(s, jit, workload); }));
  per_decision(benchmark::RegisterBenchmark(
      "rules/interp", [&](benchmark::State& s) { evaluate(s, interp, workload); }));
  benchmark::RegisterBenchmark("jit/compile", [&](benchmark::State& s) { compile(s, workload); })
      ->Unit(benchmark::kMillisecond)
      ->Repetitions(3)
      ->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark("jit/load-cached",
                               [&](benchmark::State& s) { load(s, workload, object); })
      ->Unit(benchmark::kMicrosecond)
      ->Repetitions(3)
      ->ReportAggregatesOnly(true);
}

/// The JIT / interpreter ratio of one pair of benchmarks, when both ran.
template <typename Reporter>
void print_ratio(std::FILE* out, const Reporter& reporter, std::string_view what,
                 std::string_view title) {
  const Median jit = reporter.median(std::string(what) + "/jit");
  const Median interp = reporter.median(std::string(what) + "/interp");
  if (jit.real <= 0 || jit.cpu <= 0) return;  // filtered out by --benchmark_filter
  fmt::print(out, "\n{}, median of {}\n", title, kRepetitions);
  fmt::print(out, "  real time: jit {:.1f} ns, interp {:.1f} ns, jit {:.1f}x faster\n", jit.real,
             interp.real, interp.real / jit.real);
  fmt::print(out, "  CPU time:  jit {:.1f} ns, interp {:.1f} ns, jit {:.1f}x faster\n", jit.cpu,
             interp.cpu, interp.cpu / jit.cpu);
}

template <typename Reporter>
int run(Reporter& reporter) {
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // On stderr in JSON mode, so that stdout stays one JSON document.
  std::FILE* out =
      std::is_same_v<Reporter, MedianReporter<benchmark::JSONReporter>> ? stderr : stdout;
  print_ratio(out, reporter, "decision",
              "hot-path decision, prepared task (rules + quota fit; targets: jit <= 50 ns, >= 10x "
              "interp)");
  print_ratio(out, reporter, "decision-from-spec",
              "hot-path decision from a gov::Task (+ name and label lookups)");
  print_ratio(out, reporter, "rules", "rules only (prepared input)");
  return 0;
}

int fail(int status, std::string_view message) {
  fmt::print(stderr, "gov-bench: {}\n", message);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--json")
      json = true;
    else
      args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  std::string error;
  const auto workload = gov::bench::make_workload(GOV_SOURCE_DIR "/tools/bench/workshop-rules.gov",
                                                  GOV_SOURCE_DIR, kSeed, kTasks, &error);
  if (!workload) return fail(2, error);
  auto object = gov::jit::compile(workload->module);
  if (!object.ok()) return fail(2, "JIT unavailable: " + object.error().message);
  auto jit = gov::jit::load(workload->module, object.value());
  if (!jit.ok()) return fail(2, "JIT unavailable: " + jit.error().message);
  const gov::interp::Interpreter interp(workload->module);
  if (!agree(*jit.value(), interp, *workload)) return fail(1, "JIT and interpreter disagree");
  fmt::print(stderr, "gov-bench: {} rules, {} tasks from seed {}\n", workload->module.rules.size(),
             kTasks, kSeed);
  const auto jit_engine = busy_engine(*workload, *jit.value());
  const auto interp_engine = busy_engine(*workload, interp);
  if (!decisions_agree(*jit_engine, *interp_engine, *workload))
    return fail(1, "JIT and interpreter engines decide differently");
  register_benchmarks(*workload, *jit.value(), interp, object.value(), *jit_engine, *interp_engine);
  if (json) {
    MedianReporter<benchmark::JSONReporter> reporter;
    return run(reporter);
  }
  const bool color = isatty(STDOUT_FILENO) != 0;
  MedianReporter<benchmark::ConsoleReporter> reporter(
      color ? benchmark::ConsoleReporter::OO_Defaults : benchmark::ConsoleReporter::OO_Tabular);
  return run(reporter);
}
