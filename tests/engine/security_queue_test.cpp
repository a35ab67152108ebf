// Issue 26, point 11: one team's deep queue. A finish used to bring every parked task back and
// retry each in a cycle of its own (O(n) per finish, quadratic over a trace); the work of a
// finish must now grow like log n, and the decisions must stay those of the cycle-by-cycle
// run (self-check runs take every cycle).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {

namespace {

/// Team `a` holds 2 GPUs; `r0` … `r<running - 1>` run and `queued` one-GPU tasks wait behind
/// them, each submitted in a step of its own (each parked with its own pending decision).
Harness deep_queue(size_t queued, size_t running, EngineOptions options = {}) {
  Harness h(gpu_module({{"a", 2, /*borrowing_limit=*/0}}), options);
  for (size_t i = 0; i < running; ++i) h.submit(0, TaskBuilder("r" + std::to_string(i), "a").gpus(1).priority("high"));
  for (size_t i = 0; i < queued; ++i)
    h.submit(static_cast<Time>(i + 1) * kSecond, TaskBuilder("q" + std::to_string(i), "a").gpus(1));
  return h;
}

size_t parked_count(const Engine& engine) {
  size_t parked = 0;
  for (const TaskRow& row : engine.snapshot().tasks) parked += row.parked ? 1 : 0;
  return parked;
}

/// The queue work of finishing `r0` (one queued task is admitted, the rest park again).
uint64_t finish_work(size_t queued) {
  Harness h = deep_queue(queued, 2);
  REQUIRE(parked_count(*h.engine) == queued);
  const uint64_t before = h.engine->queue_work();
  const std::vector<Decision> d = h.finish(static_cast<Time>(queued + 1) * kSecond, "r0");
  const uint64_t work = h.engine->queue_work() - before;
  REQUIRE(d.size() == 2);
  CHECK(d[0].outcome == Outcome::finished);
  CHECK(d[1].outcome == Outcome::admitted);
  CHECK(d[1].task == "q0");
  CHECK(parked_count(*h.engine) == queued - 1);
  return work;
}

using Record = std::function<void(const std::vector<Decision>&)>;

using Scenario = std::function<void(Harness&, const Record&)>;

/// The decision stream (JSON lines) of `scenario` on an engine of `module`; with `self_check`,
/// every cycle is taken and nothing is cached.
std::vector<std::string> stream_of(ir::Module module, bool self_check, const Scenario& scenario) {
  EngineOptions options;
  options.self_check = self_check;
  Harness h(std::move(module), options);
  std::vector<std::string> lines;
  scenario(h, [&lines](const std::vector<Decision>& decisions) {
    for (const std::string& line : json_lines(decisions)) lines.push_back(line);
  });
  REQUIRE(h.engine->self_check_failures().empty());
  return lines;
}

/// stream_of team `a` (3 GPUs) and team `b` (1 GPU), neither borrowing.
std::vector<std::string> two_team_stream(bool self_check, const Scenario& scenario) {
  return stream_of(gpu_module({{"a", 3, /*borrowing_limit=*/0}, {"b", 1, /*borrowing_limit=*/0}}), self_check, scenario);
}

}  // namespace

TEST_CASE("a finish with a deep queue of one team does work logarithmic in its length",
          "[security][engine-queue]") {
  const uint64_t small = finish_work(1'000);
  const uint64_t large = finish_work(16'000);
  INFO("queue work of one finish: " << small << " at 1,000 queued, " << large << " at 16,000");
  // Linear work (a cycle per queued task, as before) grows 16 times; log n grows by 1.4.
  CHECK(large < 2 * small);
}

TEST_CASE("a finish with a new task queued behind a deep queue does work logarithmic in its length",
          "[security][engine-queue]") {
  // The new task, with no decision yet, is a class of its own at the end of the queue: finding
  // its cycle by walking the queue from the front cost O(n) per event (the quiet-cycle skip tried
  // before every cycle did, in session 19, until the OOM test of a 400,000-task queue timed out).
  const auto work = [](size_t queued) {
    Harness h = deep_queue(queued, 2);
    const Time at = static_cast<Time>(queued + 1) * kSecond;
    const uint64_t before = h.engine->queue_work();
    std::vector<Event> events;
    events.push_back(Event::finish("r0"));
    events.push_back(Event::submit(static_cast<gov::Task>(TaskBuilder("late", "a").gpus(1))));
    std::vector<Decision> d;
    h.engine->step(at, events, d);
    REQUIRE(d.size() == 3);
    CHECK(d[1].task == "q0");
    CHECK(d[1].outcome == Outcome::admitted);
    CHECK(d[2].task == "late");
    CHECK(d[2].outcome == Outcome::pending);
    return h.engine->queue_work() - before;
  };
  const uint64_t small = work(1'000);
  const uint64_t large = work(16'000);
  INFO("queue work of one finish and one submission: " << small << " at 1,000 queued, " << large << " at 16,000");
  CHECK(large < 2 * small);
}

// Like tasks wait as one group record behind their first (TaskStore's ShapeGroup). A preempted
// task of their shape queues again while they are parked, so the requeue that follows meets two
// groups of one shape: the small one must join the large one, not the other way round, or each
// such eviction costs O(n) relabelled tasks (which no queue comparison counts).
TEST_CASE("a preemption beside a deep queue of like tasks does work logarithmic in its length",
          "[security][engine-queue]") {
  const auto work = [](size_t queued) {
    Harness h(gpu_module({{"a", 2, /*borrowing_limit=*/0}}));
    h.submit(0, TaskBuilder("r0", "a").gpus(1).priority("low"));
    h.submit(0, TaskBuilder("r1", "a").gpus(1).priority("low"));
    for (size_t i = 0; i < queued; ++i)
      h.submit(static_cast<Time>(i + 1) * kSecond, TaskBuilder("q" + std::to_string(i), "a").gpus(1).priority("low"));
    REQUIRE(parked_count(*h.engine) == queued);
    const uint64_t before = h.engine->queue_work();
    const std::vector<Decision> d =
        h.submit(static_cast<Time>(queued + 1) * kSecond, TaskBuilder("top", "a").gpus(1).priority("high"));
    const uint64_t spent = h.engine->queue_work() - before;
    CHECK(std::count_if(d.begin(), d.end(), [](const Decision& x) { return x.outcome == Outcome::preempted; }) == 1);
    CHECK(std::any_of(d.begin(), d.end(),
                      [](const Decision& x) { return x.task == "top" && x.outcome == Outcome::admitted; }));
    CHECK(parked_count(*h.engine) == queued + 1);  // the preempted task waits with its like tasks
    return spent;
  };
  const uint64_t small = work(1'000);
  const uint64_t large = work(16'000);
  INFO("queue work of one preemption: " << small << " at 1,000 queued, " << large << " at 16,000");
  CHECK(large < 2 * small);
}

TEST_CASE("parking a deep queue at once gives the decisions of the cycle-by-cycle run",
          "[security][engine-queue]") {
  // Two shapes and two priorities interleaved, finishes, cancels and new submissions: the bulk
  // park applies only where every active task is of the parked head's class (which the next case
  // reaches); here the quiet-cycle skip walks the queue.
  const auto scenario = [](Harness& h, const Record& record) {
    for (int i = 0; i < 3; ++i)
      record(h.submit(0, TaskBuilder("r" + std::to_string(i), "a").gpus(1).priority("high").duration(40 * kSecond)));
    for (int i = 0; i < 400; ++i) {
      TaskBuilder task("q" + std::to_string(i), i % 7 == 3 ? "b" : "a");
      task.gpus(i % 5 == 0 ? 2 : 1).duration(static_cast<Time>(5 + i % 3) * kSecond);
      if (i % 4 == 1) task.priority("mid");
      record(h.submit(static_cast<Time>(i) * kSecond, task));
      if (i % 9 == 4) record(h.cancel(static_cast<Time>(i) * kSecond, "q" + std::to_string(i - 2)));
    }
    record(h.advance(10'000 * kSecond));
  };
  const std::vector<std::string> checked = two_team_stream(true, scenario);
  const std::vector<std::string> fast = two_team_stream(false, scenario);
  CHECK(checked.size() > 150);
  CHECK(fast == checked);
}

TEST_CASE("parking a deep queue of one class at once gives the decisions of the cycle-by-cycle run",
          "[security][engine-queue]") {
  // One class of 2-GPU tasks queued a thousand deep in a team of 3 GPUs (the bulk park
  // applies), with a tail of another class (1-GPU tasks
  // submitted in the instant, with no decision yet, which fit), cancels, a second team's
  // occasional work, and late tasks that end the one-class queue.
  const auto scenario = [](Harness& h, const Record& record) {
    for (int i = 0; i < 1'200; ++i) {
      const Time at = static_cast<Time>(i) * kSecond;
      record(h.submit(at, TaskBuilder("q" + std::to_string(i), "a").gpus(2).duration(8 * kSecond)));
      if (i % 25 == 10) record(h.submit(at, TaskBuilder("b" + std::to_string(i), "b").gpus(1).duration(2 * kSecond)));
      if (i % 8 == 3)  // queued last, and admitted in the GPU the 2-GPU tasks leave
        record(h.submit(at, TaskBuilder("one" + std::to_string(i), "a").gpus(1).priority("low").duration(kSecond)));
      if (i == 650) {  // a tail of another class, then a task of it ahead of the queue
        for (int k = 0; k < 3; ++k)
          record(h.submit(at, TaskBuilder("wide" + std::to_string(k), "a").gpus(2).duration(3 * kSecond)));
        record(h.submit(at, TaskBuilder("urgent", "a").gpus(2).priority("high").duration(3 * kSecond)));
      }
      if (i % 31 == 7) record(h.cancel(at, "q" + std::to_string(i / 2)));
    }
    record(h.advance(10'000 * kSecond));
  };
  const std::vector<std::string> checked = two_team_stream(true, scenario);
  const std::vector<std::string> fast = two_team_stream(false, scenario);
  CHECK(checked.size() > 1'000);
  CHECK(fast == checked);
}

namespace {

/// stream_of team `a` (3 GPUs of type `gpu`) and team `b` (1 GPU of type `gpu2`): b's work never
/// touches the type a's verdicts depend on.
std::vector<std::string> two_type_stream(bool self_check, const Scenario& scenario) {
  ir::Module m = gpu_module({{"a", 3, /*borrowing_limit=*/0}});
  m.flavors.push_back(make_flavor("gpu2", gpus(1), 1));
  m.teams.push_back(make_team("b", {make_quota(1, gpus(1), gpus(0))}));
  return stream_of(std::move(m), self_check, scenario);
}

}  // namespace

TEST_CASE("quiet verdicts kept for a team are forgotten when its class table is rebuilt",
          "[security][engine-queue]") {
  // Team a waits behind a task that holds its 3 GPUs: 80 tasks of 80 classes (1 to 80 GPUs).
  // Team b's finishes bring a's parked tasks back again and again, and the quiet-cycle skip keeps
  // its verdicts on a's classes (a's type is untouched). Cancels then leave a's class table many
  // times larger than its queue, so the next submission rebuilds it with new slot numbers, and
  // new tasks of new classes, queued behind the quiet ones, take the slots quiet classes had:
  // their first pending decisions must still be made.
  const auto scenario = [](Harness& h, const Record& record) {
    record(h.submit(0, TaskBuilder("holder", "a").gpus(3).priority("high")));
    for (int k = 0; k < 80; ++k)
      record(h.submit(static_cast<Time>(k + 1) * kSecond, TaskBuilder("c" + std::to_string(k), "a").gpus(k + 1).priority("mid")));
    Time at = 100 * kSecond;
    for (int round = 0; round < 3; ++round, at += 10 * kSecond)
      record(h.submit(at, TaskBuilder("b" + std::to_string(round), "b").gpus(1).duration(2 * kSecond)));
    for (int k = 4; k < 80; ++k) record(h.cancel(at, "c" + std::to_string(k)));
    at += 10 * kSecond;
    record(h.submit(at, TaskBuilder("b-last", "b").gpus(1).duration(2 * kSecond)));
    std::vector<gov::Task> late;  // due as b-last finishes
    for (int k = 0; k < 6; ++k)
      late.push_back(TaskBuilder("new" + std::to_string(k), "a").gpus(k % 3 + 1).priority("low").duration(kSecond));
    record(h.submit_all(at + 2 * kSecond, late));
    record(h.advance(at + 100 * kSecond));
  };
  const std::vector<std::string> checked = two_type_stream(true, scenario);
  const std::vector<std::string> fast = two_type_stream(false, scenario);
  CHECK(checked.size() > 100);
  CHECK(fast == checked);
}

}  // namespace gov::engine::test
