// Issue 26, points 14 and 15b and clearer errors, in C++ and C: calls back into the engine from
// its own on_step are refused (GOV_ERROR_REENTRANT) instead of wedging it, the bound on live
// tasks (max_tasks), gov_engine_step's bound on events and out-of-memory messages that say what
// ran out.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>
#include <gov/gov.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::repo_path;

const std::string kWorkshop = "policies/examples/workshop-g5.gov";

constexpr auto gpu_task = &gov::test::g5_gpu_task;

constexpr auto c_gpu_task = &gov::test::g5_gpu_c_task;

/// Fails the process (and so the test) when `done` is not called within `limit`: a test that
/// used to hang ends with a message instead. No assertion on time: the bound is only a guard.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, std::string what) : what_(std::move(what)) {
    thread_ = std::thread([this, limit] {
      std::unique_lock lock(mutex_);
      if (!wakeup_.wait_for(lock, limit, [this] { return done_; })) {
        std::fprintf(stderr, "watchdog: %s did not finish in %lld s (the engine is wedged)\n", what_.c_str(),
                     static_cast<long long>(limit.count()));
        std::abort();
      }
    });
  }
  ~Watchdog() { done(); }
  void done() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wakeup_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::string what_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool done_ = false;
  std::thread thread_;
};

/// Runs `call` and returns the code of the gov::Error it threw (nullopt when it did not throw).
template <typename Call>
std::optional<gov::ErrorCode> error_of(Call&& call) {
  try {
    call();
  } catch (const gov::Error& e) {
    return e.code();
  }
  return std::nullopt;
}

}  // namespace

// ------------------------------------------------------------------ point 14: re-entry

TEST_CASE("calls back into the engine from on_step are refused and the engine stays usable",
          "[security][embed-reentry]") {
  gov::Engine* self = nullptr;
  bool armed = false;
  std::vector<std::pair<std::string, std::optional<gov::ErrorCode>>> results;
  gov::Options options;
  options.on_step = [&](const gov::Step&) {
    if (!armed) return;
    armed = false;
    gov::Engine& e = *self;
    results.emplace_back("submit", error_of([&] { e.submit(gpu_task("inner", "team-a", 1), 0); }));
    results.emplace_back("finish", error_of([&] { e.finish("a1", 0); }));
    results.emplace_back("step", error_of([&] { e.step(0, {}); }));
    results.emplace_back("tick", error_of([&] { e.tick(0); }));
    results.emplace_back("check", error_of([&] { e.check(gpu_task("probe", "team-a", 1)); }));
    results.emplace_back("snapshot", error_of([&] { e.snapshot(); }));
    results.emplace_back("decision", error_of([&] { e.decision("a1"); }));
    results.emplace_back("explain", error_of([&] { e.explain("a1"); }));
    results.emplace_back("now", error_of([&] { e.now(); }));
    results.emplace_back("reload", error_of([&] { e.reload(); }));
    results.emplace_back("stop_watching", error_of([&] { e.stop_watching(); }));
  };
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
  self = &engine;
  armed = true;
  const gov::Decision first = engine.submit(gpu_task("a1", "team-a", 1), 0);
  CHECK(first.outcome == gov::Outcome::admitted);
  REQUIRE(results.size() == 11);
  for (const auto& [call, code] : results) {
    INFO(call);
    REQUIRE(code.has_value());
    CHECK(*code == gov::ErrorCode::reentrant);
  }
  // Nothing the refused calls asked for happened, and the engine still takes steps and queries
  // (before the fix the refused rdlock was unlocked, releasing the step's write lock).
  CHECK_FALSE(engine.decision("inner").has_value());
  const gov::Decision second = engine.submit(gpu_task("a2", "team-a", 1), 1);
  CHECK(second.outcome == gov::Outcome::admitted);
  CHECK(engine.snapshot().tasks.size() == 2);
  CHECK(engine.finish("a1", 2).has_value());
  CHECK(engine.check(gpu_task("probe", "team-a", 1)).verdict == gov::Admission::Verdict::admit);
}

TEST_CASE("an on_step callback may use another engine", "[security][embed-reentry]") {
  gov::Engine other = gov::Engine::compile_file(repo_path(kWorkshop));
  std::optional<gov::Admission> seen;
  gov::Options options;
  options.on_step = [&](const gov::Step&) { seen = other.check(gpu_task("probe", "team-b", 1)); };
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
  engine.submit(gpu_task("a1", "team-a", 1), 0);
  REQUIRE(seen.has_value());
  CHECK(seen->verdict == gov::Admission::Verdict::admit);
}

TEST_CASE("threads whose on_step calls back into the engine no longer wedge it", "[security][embed-reentry]") {
  // Before the fix, 4 threads submitting while on_step called check() wedged 3 runs of 3: the
  // callback's refused rdlock was unlocked, releasing the write lock of the step in progress.
  Watchdog watchdog(std::chrono::seconds(60), "4 threads re-entering from on_step");
  std::atomic<gov::Engine*> self{nullptr};
  std::atomic<size_t> refused{0};
  std::atomic<size_t> accepted{0};
  gov::Options options;
  options.on_step = [&](const gov::Step&) {
    gov::Engine* e = self.load();
    if (e == nullptr) return;
    const std::optional<gov::ErrorCode> code = error_of([&] { e->check(gpu_task("probe", "team-a", 1)); });
    (code == gov::ErrorCode::reentrant ? refused : accepted).fetch_add(1);
  };
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
  self = &engine;
  constexpr int kThreads = 4;
  constexpr int kTasksPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&engine, t] {
      for (int i = 0; i < kTasksPerThread; ++i) {
        const std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        engine.submit(gpu_task(id, t % 2 == 0 ? "team-a" : "team-b", 1), i);
        engine.check(gpu_task("probe", "team-a", 1));
        engine.cancel(id, i);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  watchdog.done();
  CHECK(accepted.load() == 0);
  CHECK(refused.load() == 2 * kThreads * kTasksPerThread);
  CHECK(engine.snapshot().tasks.empty());
}

namespace {

struct CallbackState {
  gov_engine* engine = nullptr;
  bool armed = false;
  std::vector<std::pair<std::string, gov_status>> results;
  std::string message;
};

void reentering_callback(const gov_decisions*, void* user_data) {
  auto* state = static_cast<CallbackState*>(user_data);
  if (!state->armed) return;
  state->armed = false;
  gov_task task = c_gpu_task("inner", "team-a", 1);
  gov_decisions* out = nullptr;
  state->results.emplace_back("submit", gov_engine_submit(state->engine, 0, &task, &out));
  state->message = gov_last_error();
  gov_admission admission;
  state->results.emplace_back("check", gov_engine_check(state->engine, &task, &admission));
  gov_snapshot* snapshot = nullptr;
  state->results.emplace_back("snapshot", gov_engine_snapshot(state->engine, &snapshot));
  state->results.emplace_back("reload", gov_engine_reload(state->engine, &out));
  state->results.emplace_back("finish", gov_engine_finish(state->engine, 0, "a1", &out));
  state->results.emplace_back("decision", gov_engine_decision(state->engine, "a1", &out));
}

}  // namespace

TEST_CASE("C: calls back into the engine from on_step return GOV_ERROR_REENTRANT", "[security][embed-reentry]") {
  CallbackState state;
  gov_open_options options;
  gov_open_options_init(&options);
  options.on_step = reentering_callback;
  options.on_step_user_data = &state;
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(repo_path(kWorkshop).c_str(), &options, &engine) == GOV_OK);
  state.engine = engine;
  state.armed = true;
  gov_task a1 = c_gpu_task("a1", "team-a", 1);
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_submit(engine, 0, &a1, &step) == GOV_OK);
  gov_decisions_free(step);
  REQUIRE(state.results.size() == 6);
  for (const auto& [call, status] : state.results) {
    INFO(call);
    CHECK(status == GOV_ERROR_REENTRANT);
  }
  CHECK(std::string(gov_status_name(GOV_ERROR_REENTRANT)) == "reentrant");
  CHECK(state.message.find("on_step") != std::string::npos);
  // Still usable.
  gov_task a2 = c_gpu_task("a2", "team-a", 1);
  REQUIRE(gov_engine_submit(engine, 1, &a2, &step) == GOV_OK);
  CHECK(gov_decisions_find(step, "a2")->outcome == GOV_ADMITTED);
  gov_decisions_free(step);
  gov_decisions* inner = nullptr;
  CHECK(gov_engine_decision(engine, "inner", &inner) == GOV_ERROR_NOT_FOUND);
  gov_snapshot* snapshot = nullptr;
  REQUIRE(gov_engine_snapshot(engine, &snapshot) == GOV_OK);
  gov_snapshot_free(snapshot);
  gov_engine_close(engine);
}

namespace {

struct ClosingCallback {
  gov_engine* engine = nullptr;
  std::atomic<int> calls{0};
};

void closing_callback(const gov_decisions*, void* user_data) {
  auto* state = static_cast<ClosingCallback*>(user_data);
  state->calls.fetch_add(1);
  gov_engine_close(state->engine);  // refused: the step running this callback still uses it
}

}  // namespace

// gov_engine_close from on_step freed the engine under the step that ran the callback (a use after
// free on the submitting thread), and on the watcher's thread made the watcher join itself (an
// exception through the C ABI: the process aborted). It is now refused by doing nothing.
TEST_CASE("C: gov_engine_close from the engine's own on_step does nothing", "[security][embed-reentry]") {
  gov::test::ScratchDir dir("c-close-in-callback");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, repo_path(kWorkshop), "workshop-g5");
  ClosingCallback state;
  gov_open_options options;
  gov_open_options_init(&options);
  options.on_step = closing_callback;
  options.on_step_user_data = &state;
  REQUIRE(gov_engine_open(db.c_str(), &options, &state.engine) == GOV_OK);

  // On the submitting thread.
  gov_task a1 = c_gpu_task("a1", "team-a", 1);
  REQUIRE(gov_engine_submit(state.engine, 0, &a1, nullptr) == GOV_OK);
  CHECK(state.calls.load() == 1);
  gov_task a2 = c_gpu_task("a2", "team-a", 1);
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_submit(state.engine, 1, &a2, &step) == GOV_OK);  // still open
  CHECK(gov_decisions_find(step, "a2")->outcome == GOV_ADMITTED);
  gov_decisions_free(step);

  // On the watcher's thread: a new version's reload step runs the callback there.
  REQUIRE(gov_engine_watch(state.engine, 10) == GOV_OK);
  CHECK(gov::test::apply_policy_file(db, repo_path("tests/diff/workshop-g5-team-a-3.gov"), "workshop-g5") == 2);
  // Waits for the reload (not a timing assertion: the deadline only ends a hung test).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (state.calls.load() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(state.calls.load() == 3);
  CHECK(gov_engine_version(state.engine) == 2);
  gov_snapshot* snapshot = nullptr;
  REQUIRE(gov_engine_snapshot(state.engine, &snapshot) == GOV_OK);
  gov_snapshot_free(snapshot);
  gov_engine_close(state.engine);  // from outside the callback: closed
}

// ------------------------------------------------------------------ point 15b: max_tasks

TEST_CASE("a submit past max_tasks live tasks is refused and changes nothing", "[security][embed-limits]") {
  gov::Options options;
  options.max_tasks = 3;
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
  CHECK(engine.submit(gpu_task("a1", "team-a", 3), 0).outcome == gov::Outcome::admitted);
  CHECK(engine.submit(gpu_task("a2", "team-a", 3), 0).outcome == gov::Outcome::pending);
  // Tasks that never become live do not count.
  CHECK(engine.submit(gpu_task("bad", "no-such-team", 1), 0).outcome == gov::Outcome::invalid);
  CHECK(engine.submit(gpu_task("b1", "team-b", 1), 0).outcome == gov::Outcome::admitted);
  const gov::Snapshot before = engine.snapshot();
  REQUIRE(before.tasks.size() == 3);
  try {
    engine.submit(gpu_task("b2", "team-b", 1), 1);
    FAIL("the fourth live task was accepted");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::limit);
    CHECK(std::string(e.what()) ==
          "submit of task `b2` refused: the engine holds 3 live tasks (pending or admitted) and `max_tasks` is 3");
  }
  // A step with two submits and room for none is refused as a whole.
  std::vector<gov::Event> two = {gov::Event::submit(gpu_task("b3", "team-b", 1)),
                                 gov::Event::submit(gpu_task("b4", "team-b", 1))};
  CHECK(error_of([&] { engine.step(1, two); }) == gov::ErrorCode::limit);
  const gov::Snapshot after = engine.snapshot();
  CHECK(after.sequence == before.sequence);
  CHECK(after.tasks.size() == 3);
  CHECK(engine.now() == 0);
  CHECK_FALSE(engine.decision("b2").has_value());
  // Ending a task makes room again.
  CHECK(engine.cancel("a2", 2).has_value());
  CHECK(engine.submit(gpu_task("b2", "team-b", 1), 2).outcome != gov::Outcome::invalid);
  CHECK(engine.snapshot().tasks.size() == 3);
  CHECK(error_of([&] { engine.submit(gpu_task("b5", "team-b", 1), 2); }) == gov::ErrorCode::limit);
}

TEST_CASE("max_tasks 0 is the default bound", "[security][embed-limits]") {
  gov::Options options;
  CHECK(options.max_tasks == 1'000'000);
  options.max_tasks = 0;
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
  for (int i = 0; i < 10; ++i) engine.submit(gpu_task("t" + std::to_string(i), "team-a", 1), 0);
  CHECK(engine.snapshot().tasks.size() == 10);
}

TEST_CASE("C: max_tasks in gov_open_options bounds live tasks with GOV_ERROR_LIMIT", "[security][embed-limits]") {
  gov_open_options options;
  gov_open_options_init(&options);
  CHECK(options.max_tasks == GOV_DEFAULT_MAX_TASKS);
  CHECK(GOV_DEFAULT_MAX_TASKS == 1000000);
  options.max_tasks = 2;
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(repo_path(kWorkshop).c_str(), &options, &engine) == GOV_OK);
  gov_task a1 = c_gpu_task("a1", "team-a", 1);
  gov_task a2 = c_gpu_task("a2", "team-a", 1);
  gov_task a3 = c_gpu_task("a3", "team-a", 1);
  REQUIRE(gov_engine_submit(engine, 0, &a1, nullptr) == GOV_OK);
  REQUIRE(gov_engine_submit(engine, 0, &a2, nullptr) == GOV_OK);
  gov_decisions* out = nullptr;
  CHECK(gov_engine_submit(engine, 0, &a3, &out) == GOV_ERROR_LIMIT);
  CHECK(out == nullptr);
  CHECK(std::string(gov_last_error()).find("`max_tasks` is 2") != std::string::npos);
  CHECK(std::string(gov_status_name(GOV_ERROR_LIMIT)) == "limit");
  CHECK(gov_engine_decision(engine, "a3", &out) == GOV_ERROR_NOT_FOUND);
  REQUIRE(gov_engine_finish(engine, 1, "a1", nullptr) == GOV_OK);
  CHECK(gov_engine_submit(engine, 1, &a3, nullptr) == GOV_OK);
  gov_engine_close(engine);
}

// ------------------------------------------------------------------ clearer errors

TEST_CASE("C: gov_engine_step refuses a count over GOV_MAX_STEP_EVENTS before reserving", "[security][embed-errors]") {
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(repo_path(kWorkshop).c_str(), nullptr, &engine) == GOV_OK);
  gov_event event{};
  event.kind = GOV_EVENT_CANCEL;
  event.id = "none";
  gov_decisions* out = nullptr;
  CHECK(gov_engine_step(engine, 0, &event, SIZE_MAX, &out) == GOV_ERROR_INVALID_ARGUMENT);
  const std::string message = gov_last_error();
  CHECK(message.find("over the bound of 1000000 events per step") != std::string::npos);
  CHECK(message.find("reserve") == std::string::npos);
  CHECK(gov_engine_step(engine, 0, &event, GOV_MAX_STEP_EVENTS + 1, &out) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(gov_engine_step(engine, 0, &event, 1, &out) == GOV_OK);
  gov_decisions_free(out);
  gov_engine_close(engine);
}

TEST_CASE("C: running out of memory in a submit says which task", "[security][embed-errors]") {
  if (std::string(GOV_SANITIZED) != "") {
    WARN("skipped under sanitizers: their allocators ignore RLIMIT_AS");
    return;
  }
  // In a forked child, under an address-space limit, submit tasks until one fails; the child
  // writes the status and message to a pipe. The engine allows far more tasks than fit.
  int pipe_ends[2];
  REQUIRE(pipe(pipe_ends) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(pipe_ends[0]);
    gov_open_options options;
    gov_open_options_init(&options);
    options.back_end = GOV_BACK_END_INTERPRETER;
    options.max_tasks = SIZE_MAX;
    gov_engine* engine = nullptr;
    std::string report = "open failed";
    if (gov_engine_open_file(repo_path(kWorkshop).c_str(), &options, &engine) == GOV_OK) {
      rlimit limit{};
      getrlimit(RLIMIT_AS, &limit);
      // Room for what is mapped now plus 64 MiB: a few hundred thousand tasks at most.
      std::FILE* status = std::fopen("/proc/self/statm", "r");
      unsigned long pages = 0;
      if (status != nullptr && std::fscanf(status, "%lu", &pages) == 1) {
        limit.rlim_cur = pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{64} << 20);
        setrlimit(RLIMIT_AS, &limit);
      }
      if (status != nullptr) std::fclose(status);
      report = "no failure";
      static char id[64];
      gov_task task = c_gpu_task(id, "team-a", 4);  // never fits: every task stays pending
      task.amounts[GOV_GPU] = 4;
      for (long i = 0; i < 100'000'000; ++i) {
        std::snprintf(id, sizeof id, "task-with-a-long-identifier-%ld", i);
        const gov_status result = gov_engine_submit(engine, 0, &task, nullptr);
        if (result == GOV_OK) continue;
        report = std::string(gov_status_name(result)) + ": " + gov_last_error();
        break;
      }
    }
    [[maybe_unused]] const ssize_t written = write(pipe_ends[1], report.data(), report.size());
    _exit(0);
  }
  close(pipe_ends[1]);
  std::string report;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) report.append(buffer, static_cast<size_t>(n));
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  INFO(report);
  CHECK(WIFEXITED(status));
  CHECK(report.rfind("out-of-memory: out of memory in gov_engine_submit while submitting task "
                     "`task-with-a-long-identifier-",
                     0) == 0);
}

TEST_CASE("gov simulate out of memory says where the replay was", "[security][embed-errors]") {
  if (std::string(GOV_SANITIZED) != "") {
    WARN("skipped under sanitizers: their allocators ignore ulimit -v");
    return;
  }
  // 400,000 tasks of one team, most of them waiting (tools/gen-queue): more than 1 GB of address
  // space to replay. Under 500 MB the check pass reads the trace and the replay runs out
  // (measured: at event 154,601 on 2026-11-27; the report of it printed the decisions so far
  // with fmt::print, whose copy ran out again and lost the place until then).
  gov::test::ScratchDir dir("gov-oom-cli");
  const std::string trace = dir / "queue.trace.json";
  const gov::test::ProgramResult made = gov::test::run_program(
      "tools/gen-queue 400000 " + gov::test::quoted(trace));
  REQUIRE(made.exit_code == 0);
  const gov::test::ProgramResult result = gov::test::run_program(
      "ulimit -v 500000 && " + gov::test::quoted(GOV_BINARY) + " simulate " + gov::test::quoted(repo_path(kWorkshop)) +
      " --trace " + gov::test::quoted(trace) + " --engine interp > /dev/null");
  INFO(result.err);
  CHECK(result.exit_code == 1);
  CHECK(result.err.rfind("error: out of memory while replaying the trace `" + trace + "` (at event ", 0) == 0);
  CHECK(result.err.find("bad_alloc") == std::string::npos);
}
