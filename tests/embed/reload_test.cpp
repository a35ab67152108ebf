// Reload semantics: the task state carries over to the new version, admitted tasks that no
// longer fit stay admitted (a quota change does not evict), pending tasks compete under the new
// quotas at once, tasks the new version cannot hold end as `invalid`, and the watcher reloads
// by itself.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

constexpr auto gpus = &gov::test::g5_gpu_task;

int64_t team_gpu(const gov::Snapshot& snapshot, const std::string& team, int64_t gov::UsageRow::*field) {
  for (const gov::UsageRow& row : snapshot.usage)
    if (row.team == team && row.resource == gov::Resource::gpu) return row.*field;
  FAIL("no gpu row for " << team);
  return -1;
}

/// Waits (up to 30 s, polling) for `done`; the tests assert on the outcome, never on timing.
template <typename Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

TEST_CASE("reload: a larger quota admits pending tasks in the reload's own step", "[embed][reload]") {
  gov::test::ScratchDir dir("reload-grow");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  gov::Engine engine = gov::Engine::open_store(db);
  const gov::Decision waiting = engine.submit(gpus("a4", "team-a", 4), 1000);
  CHECK(waiting.outcome == gov::Outcome::pending);
  CHECK(waiting.reason == gov::PendingReason::exceeds_max_quota);
  CHECK(waiting.maximum == gov::ResourceAmounts{{gov::Resource::gpu, 3}});

  CHECK(engine.reload().sequence == 0);  // nothing new yet
  CHECK(gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v2.gov", 3), "p") == 2);
  CHECK(engine.version() == 1);  // no watcher: the engine keeps its version until asked
  const gov::Step step = engine.reload();
  CHECK(step.version == 2);
  CHECK(step.sequence == 2);
  CHECK(step.at == 1000);
  const gov::Decision* admitted = step.find("a4");
  REQUIRE(admitted != nullptr);
  CHECK(admitted->outcome == gov::Outcome::admitted);
  CHECK(admitted->version == 2);
  CHECK(engine.version() == 2);
  CHECK(engine.policy().version == 2);
  CHECK(engine.decision("a4")->outcome == gov::Outcome::admitted);
  CHECK(engine.snapshot().version == 2);
}

TEST_CASE("reload: a smaller quota does not evict, the next cycle uses it", "[embed][reload]") {
  gov::test::ScratchDir dir("reload-shrink");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v2.gov", 3), "p");
  gov::Engine engine = gov::Engine::open_store(db);
  REQUIRE(engine.version() == 2);
  gov::Task long_running = gpus("a1", "team-a", 4);
  long_running.duration = 60'000;
  REQUIRE(engine.submit(long_running, 0).outcome == gov::Outcome::admitted);

  const gov::Step step = engine.reload(1);  // back to 2 instances: at most 3 GPUs for team-a
  CHECK(step.version == 1);
  CHECK(step.find("a1") == nullptr);  // nothing happens to a1
  const gov::Snapshot snapshot = engine.snapshot();
  REQUIRE(snapshot.tasks.size() == 1);
  CHECK(snapshot.tasks[0].state == gov::TaskState::admitted);
  CHECK(snapshot.tasks[0].admitted_at == 0);
  CHECK(team_gpu(snapshot, "team-a", &gov::UsageRow::used) == 4);
  CHECK(team_gpu(snapshot, "team-a", &gov::UsageRow::nominal) == 2);

  // The new quota applies to the next admission; the old task's duration still runs.
  const gov::Decision next = engine.submit(gpus("a2", "team-a", 4), 1000);
  CHECK(next.reason == gov::PendingReason::exceeds_max_quota);
  CHECK(next.version == 1);
  const gov::Step later = engine.tick(60'000);
  REQUIRE(later.find("a1") != nullptr);
  CHECK(later.find("a1")->outcome == gov::Outcome::finished);
  CHECK(later.find("a1")->at == 60'000);
}

TEST_CASE("reload: tasks of a team the new version drops end as invalid", "[embed][reload]") {
  gov::test::ScratchDir dir("reload-drop");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  gov::Engine engine = gov::Engine::open_store(db);
  engine.submit(gpus("a1", "team-a", 1), 0);
  engine.submit(gpus("b1", "team-b", 2), 0);
  engine.submit(gpus("b2", "team-b", 2), 0);
  REQUIRE(engine.decision("b2")->outcome == gov::Outcome::pending);

  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v2.gov", 2, /*with_team_b=*/false), "p");
  const gov::Step step = engine.reload();
  REQUIRE(step.find("b1") != nullptr);
  CHECK(step.find("b1")->outcome == gov::Outcome::invalid);
  CHECK(step.find("b1")->message.find("policy version 2") != std::string::npos);
  CHECK(step.find("b1")->message.find("team-b") != std::string::npos);
  REQUIRE(step.find("b2") != nullptr);
  CHECK(step.find("b2")->outcome == gov::Outcome::invalid);
  CHECK(engine.decision("b1")->outcome == gov::Outcome::invalid);  // replaces its live record
  const gov::Snapshot snapshot = engine.snapshot();
  REQUIRE(snapshot.tasks.size() == 1);
  CHECK(snapshot.tasks[0].id == "a1");
  CHECK(snapshot.tasks[0].state == gov::TaskState::admitted);
  // b1's id is free again under the new version (and invalid there: team-b is gone).
  CHECK(engine.submit(gpus("b1", "team-a", 1), 1).outcome == gov::Outcome::admitted);
}

TEST_CASE("reload of a file engine recompiles only a changed file", "[embed][reload]") {
  gov::test::ScratchDir dir("reload-file");
  const std::string path = gov::test::write_workshop_variant(dir, "policy.gov", 2);
  gov::Engine engine = gov::Engine::compile_file(path);
  engine.submit(gpus("a1", "team-a", 1), 0);
  CHECK(engine.reload().sequence == 0);
  gov::test::write_workshop_variant(dir, "policy.gov", 3);
  const gov::Step step = engine.reload();
  CHECK(step.version == 2);
  CHECK(engine.decision("a1")->outcome == gov::Outcome::admitted);
  CHECK(team_gpu(engine.snapshot(), "team-a", &gov::UsageRow::nominal) == 3);
  try {
    engine.reload(1);
    FAIL("a file engine reloaded a stored version");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::invalid_argument);
  }
}

TEST_CASE("reload: a version that fails leaves the engine on the old one", "[embed][reload]") {
  gov::test::ScratchDir dir("reload-fail");
  const std::string path = gov::test::write_workshop_variant(dir, "policy.gov", 2);
  gov::Engine engine = gov::Engine::compile_file(path);
  engine.submit(gpus("a1", "team-a", 1), 0);
  gov::test::write_text(path, "team broken {\n");
  try {
    engine.reload();
    FAIL("a broken policy was loaded");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::policy);
  }
  CHECK(engine.version() == 1);
  CHECK(engine.submit(gpus("a2", "team-a", 1), 1).version == 1);

  gov::test::ScratchDir store_dir("reload-fail-store");
  const std::string db = store_dir / "policies.db";
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(store_dir, "v1.gov", 2), "p");
  gov::Engine stored = gov::Engine::open_store(db);
  try {
    stored.reload(7);
    FAIL("a missing version was loaded");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::not_found);
    CHECK(std::string(e.what()).find("7") != std::string::npos);
  }
}

TEST_CASE("the watcher reloads when the store's active version changes", "[embed][reload][watch]") {
  gov::test::ScratchDir dir("reload-watch");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  std::mutex mutex;
  std::vector<gov::Step> steps;
  gov::Options options;
  options.on_step = [&](const gov::Step& step) {
    std::lock_guard lock(mutex);
    steps.push_back(step);
  };
  gov::Engine engine = gov::Engine::open_store(db, options);
  engine.submit(gpus("a4", "team-a", 4), 0);
  engine.watch(std::chrono::milliseconds(10));
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v2.gov", 3), "p");
  REQUIRE(eventually([&] { return engine.version() == 2; }));
  REQUIRE(eventually([&] { return engine.decision("a4")->outcome == gov::Outcome::admitted; }));
  engine.stop_watching();
  std::lock_guard lock(mutex);
  REQUIRE(steps.size() == 2);
  CHECK(steps[1].version == 2);
  REQUIRE(steps[1].find("a4") != nullptr);
  CHECK(steps[1].find("a4")->outcome == gov::Outcome::admitted);
}

TEST_CASE("the watcher reports a failed reload and keeps going", "[embed][reload][watch]") {
  gov::test::ScratchDir dir("reload-watch-file");
  const std::string path = gov::test::write_workshop_variant(dir, "policy.gov", 2);
  std::atomic<int> failures{0};
  gov::Options options;
  options.on_reload_error = [&](const gov::Error& e) {
    if (e.code() == gov::ErrorCode::policy) ++failures;
  };
  gov::Engine engine = gov::Engine::compile_file(path, options);
  engine.watch(std::chrono::milliseconds(10));
  gov::test::write_text(path, "team broken {\n");
  REQUIRE(eventually([&] { return failures.load() > 0; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // several more polls of the same file
  CHECK(failures.load() == 1);  // reported once
  CHECK(engine.version() == 1);
  gov::test::write_workshop_variant(dir, "policy.gov", 3);
  REQUIRE(eventually([&] { return engine.version() == 2; }));
  // Destroying the engine stops its watcher.
}

// An SRE helper's finding: a backup renamed over the store under a running controller moved the
// controller back to the backup's version through its stale connection, and then never to the
// versions applied after it, with nothing reported.
TEST_CASE("an engine whose store file was replaced keeps its version and says why", "[embed][reload][watch]") {
  gov::test::ScratchDir dir("reload-replaced");
  const std::string db = dir / "policies.db";
  const std::string backup = dir / "backup.db";
  gov::test::apply_policy_file(backup, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v2.gov", 3), "p");
  std::mutex mutex;
  std::vector<std::string> errors;
  gov::Options options;
  options.on_reload_error = [&](const gov::Error& e) {
    std::lock_guard lock(mutex);
    errors.push_back(std::string(e.what()));
  };
  gov::Engine engine = gov::Engine::open_store(db, options);
  REQUIRE(engine.version() == 2);
  REQUIRE(std::rename(backup.c_str(), db.c_str()) == 0);  // "restore from backup" with mv
  try {
    engine.reload();
    FAIL("a replaced store was read");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::store);
    CHECK(std::string(e.what()).find("was replaced under this engine (another file is at its path): it keeps "
                                     "version 2; restart it") != std::string::npos);
  }
  CHECK(engine.version() == 2);
  engine.watch(std::chrono::milliseconds(10));
  REQUIRE(eventually([&] {
    std::lock_guard lock(mutex);
    return !errors.empty();
  }));
  engine.stop_watching();
  CHECK(engine.version() == 2);
  {
    std::lock_guard lock(mutex);
    CHECK(errors.front().find("was replaced under this engine") != std::string::npos);
  }
  // A copy of the engine is refused too (a controller developer's finding, session 41: fresh()
  // opened the new file and ran version 2 where the store's version 2 is another content).
  try {
    (void)engine.fresh();
    FAIL("fresh() opened a replaced store");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::store);
    CHECK(std::string(e.what()).find("was replaced under this engine") != std::string::npos);
  }
  // A new engine reads the store now at the path: the backup's version 1.
  CHECK(gov::Engine::open_store(db).version() == 1);
  // A deleted store is said so too.
  REQUIRE(std::remove(db.c_str()) == 0);
  try {
    engine.reload();
    FAIL("a deleted store was read");
  } catch (const gov::Error& e) {
    CHECK(std::string(e.what()).find("(the file is gone from its path)") != std::string::npos);
  }
}

// A huge interval (milliseconds::max(), Go's math.MaxInt64) wrapped the wait's deadline into
// the past: the watcher polled without pause and picked up a change at once. It waits a year.
TEST_CASE("the watcher with the longest interval waits instead of polling without pause", "[embed][reload][watch]") {
  gov::test::ScratchDir dir("reload-watch-max");
  const std::string path = gov::test::write_workshop_variant(dir, "policy.gov", 2);
  gov::Engine engine = gov::Engine::compile_file(path);
  engine.watch(std::chrono::milliseconds::max());
  gov::test::write_workshop_variant(dir, "policy.gov", 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a polling watcher reloads in microseconds
  CHECK(engine.version() == 1);
  engine.watch(std::chrono::milliseconds(10));  // re-timed: the change is seen
  REQUIRE(eventually([&] { return engine.version() == 2; }));
}

TEST_CASE("a pinned engine stays on its version while the watcher runs and follows again when unpinned",
          "[embed][reload][watch]") {
  gov::test::ScratchDir dir("reload-pin");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v2.gov", 3), "p");
  gov::Engine engine = gov::Engine::open_store(db);
  REQUIRE(engine.version() == 2);
  engine.watch(std::chrono::milliseconds(5));
  // A rollback on this replica: without the pin, the watcher's next poll would load version 2 again.
  const gov::Step pinned = engine.pin(1);
  CHECK(pinned.version == 1);
  CHECK(engine.pinned());
  // A new active version, and many polls later, still version 1.
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v3.gov", 4), "p");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // forty polls, not a speed bound
  CHECK(engine.version() == 1);
  // A failed pin (no such version) changes neither the version nor the pin.
  CHECK_THROWS_AS(engine.pin(99), gov::Error);
  CHECK(engine.version() == 1);
  CHECK(engine.pinned());
  engine.unpin();
  CHECK_FALSE(engine.pinned());
  REQUIRE(eventually([&] { return engine.version() == 3; }));
  engine.stop_watching();
}

// A controller developer's finding (session 41): two threads stopping the watcher while a third
// starts it again left both stoppers joining a restarted watcher forever (or one thread joined
// twice, std::system_error out of the API). Watch and stop are serialised: every call returns,
// and after the last stop no watcher runs (a watch() after it starts one that stops cleanly).
TEST_CASE("watch and stop_watching from several threads at once all return", "[embed][reload][watch]") {
  gov::test::ScratchDir dir("reload-watch-race");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, gov::test::write_workshop_variant(dir, "v1.gov", 2), "p");
  gov::Engine engine = gov::Engine::open_store(db);
  constexpr int kRounds = 2000;
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    for (int i = 0; i < kRounds; ++i) engine.watch(std::chrono::milliseconds(1));
    ++done;
  });
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) engine.stop_watching();
      ++done;
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(done == 3);
  engine.stop_watching();
  engine.watch(std::chrono::milliseconds(1));
  engine.stop_watching();
  CHECK(engine.version() == 1);
}
