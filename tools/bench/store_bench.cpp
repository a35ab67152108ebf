// The store's writes and reads on SQLite and on PostgreSQL side by side (issue 25): an apply of
// a new version (one transaction: files, audit entry, active marker; SQLite's fsync, the
// server's commit) and `log 20`. The PostgreSQL rows run when $GOV_BENCH_PG names a server.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "runtime/store/store.hpp"
#include "tools/bench/registration.hpp"

namespace gov::bench {
namespace {

// A store for one benchmark: a new SQLite file, or the server of $GOV_BENCH_PG (its tables in
// the URL's schema, a policy name of this process's own). nullopt after SkipWithError.
std::optional<store::Store> open_bench_store(benchmark::State& state, bool postgresql, const std::string& name) {
  std::string location;
  if (postgresql) {
    const char* url = std::getenv("GOV_BENCH_PG");
    if (url == nullptr || *url == '\0') {
      state.SkipWithError("set GOV_BENCH_PG to a postgresql:// URL to measure the PostgreSQL store");
      return std::nullopt;
    }
    location = url;
  } else {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("gov-bench-store-{}", ::getpid());
    std::filesystem::create_directories(dir);
    location = (dir / (name + ".db")).string();
    std::filesystem::remove(location);
  }
  auto store = store::Store::open(location);
  if (!store.ok()) {
    state.SkipWithError(store.error().message.c_str());
    return std::nullopt;
  }
  return std::move(store.value());
}

store::ApplyRequest request(const std::string& policy, int64_t n) {
  store::ApplyRequest apply;
  apply.policy = policy;
  apply.files = {{"policy.gov", fmt::format("// version {}\nteam team-a {{\n  fair-share-weight = 1\n}}\n", n)},
                 {"lib.gov", "// an import that does not change\n"}};
  apply.author = "gov-bench";
  apply.message = fmt::format("bench {}", n);
  return apply;
}

void apply_new_version(benchmark::State& state, bool postgresql) {
  const std::string policy = fmt::format("bench-apply-{}", ::getpid());
  auto store = open_bench_store(state, postgresql, "apply");
  if (!store) return;
  int64_t n = 0;
  for (auto _ : state) {
    auto applied = store->apply(request(policy, ++n));
    if (!applied.ok()) {
      state.SkipWithError(applied.error().message.c_str());
      return;
    }
  }
}

void log_20(benchmark::State& state, bool postgresql) {
  const std::string policy = fmt::format("bench-log-{}", ::getpid());
  auto store = open_bench_store(state, postgresql, "log");
  if (!store) return;
  auto filled = store->batch([&](store::Store& db) -> store::Result<void> {
    for (int64_t n = 1; n <= 1000; ++n) {
      auto applied = db.apply(request(policy, n));
      if (!applied.ok()) return applied.error();
    }
    return {};
  });
  if (!filled.ok()) {
    state.SkipWithError(filled.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto log = store->log(policy, 20);
    if (!log.ok() || log.value().size() != 20) {
      state.SkipWithError("log 20 failed");
      return;
    }
  }
}

[[maybe_unused]] const bool registered = [] {
  for (const bool postgresql : {false, true}) {
    const std::string backend = postgresql ? "postgresql" : "sqlite";
    benchmark::RegisterBenchmark(("store/apply/" + backend).c_str(), apply_new_version, postgresql)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(200);
    benchmark::RegisterBenchmark(("store/log-20/" + backend).c_str(), log_20, postgresql)
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
}  // namespace gov::bench
