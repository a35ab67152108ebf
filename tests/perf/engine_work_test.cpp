// Issue 21: the work of one engine event does not grow with the teams. Each cycle looks only at
// the teams that have work (heads) and at the teams whose usage changed, not at every team; the
// work is counted (Engine::team_work), never timed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {

namespace {

/// `teams` teams of 2 GPUs each; team-0 submits a one-GPU task and finishes it, 50 times. Returns
/// the team work of those 100 events.
uint64_t submit_finish_work(size_t teams) {
  std::vector<GpuTeam> spec;
  for (size_t t = 0; t < teams; ++t) spec.push_back({"team-" + std::to_string(t), 2, /*borrowing_limit=*/0});
  Harness h(gpu_module(spec));
  const uint64_t before = h.engine->team_work();
  for (int i = 0; i < 50; ++i) {
    const std::string id = "t" + std::to_string(i);
    const std::vector<Decision> admitted = h.submit(static_cast<Time>(2 * i) * kSecond, TaskBuilder(id, "team-0").gpus(1));
    REQUIRE(admitted.size() == 1);
    CHECK(admitted[0].outcome == Outcome::admitted);
    const std::vector<Decision> finished = h.finish(static_cast<Time>(2 * i + 1) * kSecond, id);
    REQUIRE(finished.size() == 1);
    CHECK(finished[0].outcome == Outcome::finished);
  }
  return h.engine->team_work() - before;
}

}  // namespace

TEST_CASE("an engine event looks at the teams with work, not at every team", "[perf][engine]") {
  const uint64_t small = submit_finish_work(8);
  const uint64_t large = submit_finish_work(1'024);
  INFO("team work of 100 events: " << small << " with 8 teams, " << large << " with 1,024");
  // Scanning every team per cycle (as before) grows 128 times from 8 to 1,024 teams.
  CHECK(large == small);
  CHECK(small <= 100 * 4);
}

TEST_CASE("the teams with work are found again after their heads were taken", "[perf][engine]") {
  // Teams gain and lose work in turn; a team whose last head was taken leaves the list and comes
  // back with its next task. The decisions are those of a self-check run.
  const auto run = [](bool self_check) {
    EngineOptions options;
    options.self_check = self_check;
    std::vector<GpuTeam> spec;
    for (int t = 0; t < 12; ++t) spec.push_back({"team-" + std::to_string(t), 2, t % 3 == 0 ? ir::kUnlimited : 1});
    Harness h(gpu_module(spec, /*fair_sharing=*/true), options);
    std::vector<std::string> lines;
    const auto record = [&lines](const std::vector<Decision>& decisions) {
      for (const std::string& line : json_lines(decisions)) lines.push_back(line);
    };
    for (int i = 0; i < 200; ++i) {
      TaskBuilder task("q" + std::to_string(i), "team-" + std::to_string((i * 7) % 12));
      task.gpus(1 + i % 3).duration(static_cast<Time>(3 + i % 11) * kSecond);
      if (i % 5 == 2) task.priority("high");
      record(h.submit(static_cast<Time>(i / 3) * kSecond, task));
      if (i % 13 == 6) record(h.cancel(static_cast<Time>(i / 3) * kSecond, "q" + std::to_string(i - 4)));
    }
    record(h.advance(10'000 * kSecond));
    REQUIRE(h.engine->self_check_failures().empty());
    return lines;
  };
  const std::vector<std::string> checked = run(true);
  const std::vector<std::string> fast = run(false);
  CHECK(checked.size() > 400);
  CHECK(checked == fast);
}

namespace {

/// One type (1 GPU, 8 vCPUs, 64 GiB an instance) and team-a with 4 instances' worth and no
/// borrowing, in-team preemption of lower priority. team-a runs a 4-GPU `high` task, so its
/// 2-GPU `low` head waits at its own limit with no candidate; then `churn` tasks that ask memory
/// only come and go one after the other. Returns the decisions and the nominations computed over
/// the churn.
std::pair<std::vector<std::string>, uint64_t> memory_churn(bool self_check, int churn) {
  ir::Module m;
  m.cluster = "own";
  m.strings = {""};
  m.flavors.push_back(make_flavor("gpu", amounts(1, 0, 8000, 65536), 4));
  ir::Team team = make_team("team-a", {make_quota(0, amounts(4, 0, 32000, 262144), amounts(0))});
  team.within_team = ir::WithinTeam::lower_priority;
  m.teams.push_back(team);
  m.classes = {{"low", 10}, {"mid", 50}, {"high", 90}};
  EngineOptions options;
  options.self_check = self_check;
  Harness h(std::move(m), options);
  std::vector<std::string> lines;
  const auto record = [&lines](const std::vector<Decision>& decisions) {
    for (const std::string& line : json_lines(decisions)) lines.push_back(line);
  };
  record(h.submit(0, TaskBuilder("big", "team-a").gpus(4).memory_mib(4096).priority("high")));
  record(h.submit(1 * kSecond, TaskBuilder("wait", "team-a").gpus(2).memory_mib(1024).priority("low")));
  const uint64_t before = h.engine->nomination_work();
  for (int i = 0; i < churn; ++i) {
    const std::string id = "m" + std::to_string(i);
    const Time at = static_cast<Time>(2 + 2 * i) * kSecond;
    record(h.submit(at, TaskBuilder(id, "team-a").memory_mib(1024 * (1 + i % 3)).priority("mid")));
    record(h.finish(at + kSecond, id));
  }
  REQUIRE(h.engine->self_check_failures().empty());
  return {lines, h.engine->nomination_work() - before};
}

}  // namespace

TEST_CASE("a head waiting at its own limit is not assigned again when only what fits moves", "[perf][engine]") {
  // Each memory task changes team-a's admitted tasks and usage, and brings the parked head back
  // for a cycle; its GPUs are as short as before, so what its nomination read gives the same
  // answer (Scheduler::renew_own_answer) and it is not recomputed: only the memory tasks' own
  // nominations are (one per task at most). The decisions are those of a self-check run.
  constexpr int kChurn = 30;
  const auto [checked, checked_work] = memory_churn(true, kChurn);
  const auto [fast, fast_work] = memory_churn(false, kChurn);
  CHECK(checked == fast);
  CHECK(checked.size() == 2 + 2 * kChurn);  // big admitted, wait pending, then each m admitted and finished
  INFO("nominations computed over the churn: " << fast_work << " (self-check: " << checked_work << ")");
  CHECK(fast_work <= static_cast<uint64_t>(kChurn));
  CHECK(checked_work >= static_cast<uint64_t>(2 * kChurn));  // every head, every cycle
}

namespace {

/// team-a (1 GPU) runs a task on it and one on a GPU it borrows from team-b (2 GPUs, borrows
/// nothing), which runs a task on the other: the cohort is full. Then, in one step, `queued`
/// 1-GPU tasks of as many shapes (memory 1, 2, 3, ... MiB) queue in team-a, and team-b queues two
/// 3-GPU tasks, which can never fit, then a 1-GPU task, which reclaims the borrowed GPU. team-a's
/// nominations read the cohort (it borrows), so team-b's reclaim changes them. Returns the
/// decisions and the nominations computed in that step.
std::pair<std::vector<std::string>, uint64_t> long_queue_beside_short(bool self_check, int queued) {
  EngineOptions options;
  options.self_check = self_check;
  ir::Module m;
  m.cluster = "gpus";
  m.strings = {""};
  m.flavors.push_back(make_flavor("node", amounts(1, 0, 0, 65536), 3));
  m.teams.push_back(make_team("team-a", {make_quota(0, amounts(1, 0, 0, 65536), unlimited())}));
  m.teams.push_back(make_team("team-b", {make_quota(0, amounts(2, 0, 0, 131072), amounts(0))}));
  m.classes = {{"low", 10}, {"mid", 50}, {"high", 90}};
  Harness h(std::move(m), options);
  std::vector<std::string> lines;
  const auto record = [&lines](const std::vector<Decision>& decisions) {
    for (const std::string& line : json_lines(decisions)) lines.push_back(line);
  };
  record(h.submit_all(0, {TaskBuilder("a-running", "team-a").gpus(1), TaskBuilder("b-running", "team-b").gpus(1),
                          TaskBuilder("a-borrowing", "team-a").gpus(1)}));
  std::vector<gov::Task> step;
  for (int i = 0; i < queued; ++i)
    step.push_back(TaskBuilder("a" + std::to_string(i), "team-a").gpus(1).memory_mib(i + 1));
  step.push_back(TaskBuilder("b1-too-big", "team-b").gpus(3));
  step.push_back(TaskBuilder("b2-too-big", "team-b").gpus(3));
  step.push_back(TaskBuilder("b3-reclaims", "team-b").gpus(1));
  const uint64_t before = h.engine->nomination_work();
  record(h.submit_all(kSecond, step));
  REQUIRE(h.engine->self_check_failures().empty());
  return {lines, h.engine->nomination_work() - before};
}

}  // namespace

TEST_CASE("the quiet-cycle skip walks no queue past the first cycle that changes something", "[perf][engine]") {
  // After the first cycle parks both heads (a0, b1-too-big), the cycles ahead stop at the second
  // position, where b3-reclaims would reclaim. The queues are walked together, position by
  // position, so team-a's long queue is not nominated past that position before the reclaim,
  // which changes every nomination in the type: each of team-a's shapes is then nominated once.
  // Walked one queue after the other, team-a's queue was nominated twice. The decisions are those
  // of a self-check run.
  constexpr int kQueued = 60;
  const auto [checked, checked_work] = long_queue_beside_short(true, kQueued);
  const auto [fast, fast_work] = long_queue_beside_short(false, kQueued);
  CHECK(checked == fast);
  INFO("nominations computed in the step: " << fast_work << " (self-check: " << checked_work << ")");
  // team-a's shapes once each, and a few more: team-b's heads, the preempted task, team-a's heads
  // before the reclaim. Walked one queue after the other: 126.
  CHECK(fast_work <= static_cast<uint64_t>(kQueued + 12));
}

}  // namespace gov::engine::test
