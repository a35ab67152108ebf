// Compile latency (docs/benchmarks.md: 64 teams, 100 rules; parse + check <= 10 ms, JIT compile
// <= 100 ms, load the cached object from the store <= 5 ms). The store row opens the SQLite store
// read-only, looks the object up by the module's key, checks and deserialises it and links it:
// everything a controller does between "a new version is active" and "decisions use it",
// except reading and checking the source (the parse + check row).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/store/store.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/registration.hpp"

namespace gov::bench {
namespace {

const std::string& compile_policy_path() {
  static const std::string path = input_path("compile.gov");
  return path;
}

void parse_and_check(benchmark::State& state) {
  size_t rules = 0;
  for (auto _ : state) {
    const driver::Result loaded =
        driver::load(driver::Source::file(compile_policy_path(), "/"), driver::Request::up_to(driver::Stage::check));
    if (!loaded.ok() || loaded.policy->checked.program.diagnostics.has_errors()) {
      state.SkipWithError("compile.gov does not load (run tools/gen-bench first)");
      return;
    }
    if (!loaded.policy->checked.ok()) {
      state.SkipWithError("compile.gov does not check");
      return;
    }
    rules = loaded.policy->checked.result.policy.rules.size();
    benchmark::DoNotOptimize(rules);
  }
  state.counters["rules"] = static_cast<double>(rules);
}

const Policy* compile_policy(benchmark::State& state) {
  std::string error;
  const Policy* policy = cached_policy(compile_policy_path(), error);
  if (policy == nullptr) state.SkipWithError(error.c_str());
  return policy;
}

void lower_module(benchmark::State& state) {
  // Lowering needs the checked policy; check once, lower many times.
  const driver::Result loaded =
      driver::load(driver::Source::file(compile_policy_path(), "/"), driver::Request::up_to(driver::Stage::check));
  if (!loaded.ok() || !loaded.policy->checked.ok()) {
    state.SkipWithError("compile.gov does not check (run tools/gen-bench first)");
    return;
  }
  const check::Policy& checked = loaded.policy->checked.result.policy;
  for (auto _ : state) benchmark::DoNotOptimize(lower::lower(checked).rules.size());
}

void jit_compile(benchmark::State& state) {
  const Policy* policy = compile_policy(state);
  if (policy == nullptr) return;
  for (auto _ : state) {
    auto object = jit::compile(policy->module);
    if (!object.ok()) {
      state.SkipWithError(object.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(object.value().bytes.data());
  }
}

/// The object of a large policy (issue 21: a 10,000-team policy compiles to an object under
/// 10 MB; the quota tables hold the declared cells only). One compile, timed; the counters are
/// the sizes of the relocatable object and of what the store keeps (ObjectCode::serialize).
void large_object(benchmark::State& state) {
  std::string error;
  const Policy* policy = cached_policy(input_path("object-10000.gov"), error);
  if (policy == nullptr || !error.empty()) {
    state.SkipWithError(error.empty() ? "object-10000.gov does not load (run tools/gen-bench)" : error.c_str());
    return;
  }
  size_t object_bytes = 0, stored_bytes = 0;
  for (auto _ : state) {
    auto object = jit::compile(policy->module);
    if (!object.ok()) {
      state.SkipWithError(object.error().message.c_str());
      return;
    }
    object_bytes = object.value().bytes.size();
    stored_bytes = object.value().serialize().size();
  }
  state.counters["teams"] = static_cast<double>(policy->module.teams.size());
  state.counters["object_bytes"] = static_cast<double>(object_bytes);
  state.counters["stored_bytes"] = static_cast<double>(stored_bytes);
  // An engine of the policy, idle (outside the timing): what its quota, usage and queue tables
  // take, which grows with the quotas declared, not with teams × the catalog's instance types.
  const uint64_t heap_before = heap_bytes_in_use();
  {
    const engine::Engine engine(policy->module, policy->evaluator(/*use_jit=*/false));
    state.counters["engine_heap_MiB"] =
        static_cast<double>(heap_bytes_in_use() - heap_before) / (1024.0 * 1024.0);
  }
}

/// A store with one version of compile.gov and its compiled object, in a temporary folder or
/// (postgresql) on the server of $GOV_BENCH_PG.
struct StoreFixture {
  std::string path;
  std::string policy = "bench";
  std::string error;
};

StoreFixture make_store_fixture(const Policy& policy, bool postgresql) {
  StoreFixture f;
  const auto dir = std::filesystem::temp_directory_path() / ("gov-bench-" + std::to_string(getpid()));
  if (postgresql) {
    const char* url = std::getenv("GOV_BENCH_PG");
    if (url == nullptr || *url == '\0') {
      f.error = "set GOV_BENCH_PG to a postgresql:// URL to measure the PostgreSQL store";
      return f;
    }
    f.path = url;
  } else {
    std::filesystem::create_directories(dir);
    f.path = (dir / "policies.db").string();
    std::filesystem::remove(f.path);
  }
  auto object = jit::compile(policy.module);
  auto db = store::Store::open(f.path);
  if (!object.ok() || !db.ok()) {
    f.error = !db.ok() ? db.error().message : "cannot compile the benchmark policy";
    return f;
  }
  std::ifstream file(compile_policy_path());
  std::ostringstream text;
  text << file.rdbuf();
  store::ApplyRequest request;
  request.policy = f.policy;
  request.files = {{"compile.gov", text.str()}};  // stored paths are relative to the policy root
  request.author = "gov-bench";
  const auto bytes = object.value().serialize();
  request.object = store::CompiledObject{jit::to_hex(object.value().key), {bytes.begin(), bytes.end()}};
  if (auto applied = db.value().apply(request); !applied.ok()) f.error = applied.error().message;
  return f;
}

const StoreFixture& store_fixture(const Policy& policy, bool postgresql) {
  static StoreFixture sqlite_fixture = make_store_fixture(policy, false);
  if (!postgresql) return sqlite_fixture;
  static StoreFixture postgres_fixture = make_store_fixture(policy, true);
  return postgres_fixture;
}

/// Opens the store, finds the active version's object for this machine and links it.
bool load_once(const Policy& policy, const StoreFixture& fixture, const store::OpenOptions& options,
               benchmark::State& state) {
  auto db = store::Store::open(fixture.path, options);
  if (!db.ok()) {
    state.SkipWithError("cannot open the benchmark store");
    return false;
  }
  auto active = db.value().active(fixture.policy);
  auto key = jit::key_for(policy.module);
  if (!active.ok() || !key.ok()) {
    state.SkipWithError("cannot read the benchmark store");
    return false;
  }
  auto bytes = db.value().get_object(fixture.policy, active.value().number, jit::to_hex(key.value()));
  if (!bytes.ok() || !bytes.value()) {
    state.SkipWithError("the benchmark store has no object for this machine");
    return false;
  }
  auto object = jit::ObjectCode::deserialize(*bytes.value());
  if (!object.ok()) {
    state.SkipWithError(object.error().message.c_str());
    return false;
  }
  auto evaluator = jit::load(policy.module, object.value());
  if (!evaluator.ok()) {
    state.SkipWithError(evaluator.error().message.c_str());
    return false;
  }
  benchmark::DoNotOptimize(evaluator.value().get());
  return true;
}

void load_from_store(benchmark::State& state, bool postgresql) {
  const Policy* policy = compile_policy(state);
  if (policy == nullptr) return;
  const StoreFixture& fixture = store_fixture(*policy, postgresql);
  if (!fixture.error.empty()) {
    state.SkipWithError(fixture.error.c_str());
    return;
  }
  store::OpenOptions options;
  options.create = false;
  options.read_only = true;
  for (auto _ : state) {
    if (!load_once(*policy, fixture, options, state)) return;
  }
}

/// The link step alone (object bytes already in memory), for comparison with the store row.
void load_object(benchmark::State& state) {
  const Policy* policy = compile_policy(state);
  if (policy == nullptr) return;
  auto object = jit::compile(policy->module);
  if (!object.ok()) {
    state.SkipWithError(object.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto evaluator = jit::load(policy->module, object.value());
    benchmark::DoNotOptimize(evaluator.ok());
  }
}

[[maybe_unused]] const bool registered = [] {
  const auto setup = [](benchmark::internal::Benchmark* b) {
    repeated(b->Unit(benchmark::kMillisecond), 5);
  };
  setup(benchmark::RegisterBenchmark("compile/parse-check", parse_and_check));
  setup(benchmark::RegisterBenchmark("compile/lower", lower_module));
  setup(benchmark::RegisterBenchmark("compile/jit", jit_compile));
  setup(benchmark::RegisterBenchmark("compile/load-object", load_object));
  setup(benchmark::RegisterBenchmark("compile/load-from-store", load_from_store, false));
  setup(benchmark::RegisterBenchmark("compile/load-from-store/postgresql", load_from_store, true));
  benchmark::RegisterBenchmark("compile/object/teams-10000", large_object)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  return true;
}();

}  // namespace
}  // namespace gov::bench
