// gov-bench: hot-path rule evaluation, JIT against interpreter in one run, plus JIT
// compile and cached-load times, for the workshop policy with ten rules (PERFORMANCE.md).
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
                         const gov::ir::Evaluator& interp, const gov::jit::ObjectCode& object) {
  const auto per_decision = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kNanosecond)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
  };
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

template <typename Reporter>
int run(Reporter& reporter) {
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const Median jit = reporter.median("rules/jit");
  const Median interp = reporter.median("rules/interp");
  if (jit.real <= 0 || jit.cpu <= 0) return 0;  // filtered out by --benchmark_filter
  // On stderr in JSON mode, so that stdout stays one JSON document.
  std::FILE* out =
      std::is_same_v<Reporter, MedianReporter<benchmark::JSONReporter>> ? stderr : stdout;
  fmt::print(out, "\nrules per decision, median of {} (targets: jit <= 50 ns, >= 10x interp)\n",
             kRepetitions);
  fmt::print(out, "  real time: jit {:.1f} ns, interp {:.1f} ns, jit {:.1f}x faster\n", jit.real,
             interp.real, interp.real / jit.real);
  fmt::print(out, "  CPU time:  jit {:.1f} ns, interp {:.1f} ns, jit {:.1f}x faster\n", jit.cpu,
             interp.cpu, interp.cpu / jit.cpu);
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
  register_benchmarks(*workload, *jit.value(), interp, object.value());
  if (json) {
    MedianReporter<benchmark::JSONReporter> reporter;
    return run(reporter);
  }
  const bool color = isatty(STDOUT_FILENO) != 0;
  MedianReporter<benchmark::ConsoleReporter> reporter(
      color ? benchmark::ConsoleReporter::OO_Defaults : benchmark::ConsoleReporter::OO_Tabular);
  return run(reporter);
}
