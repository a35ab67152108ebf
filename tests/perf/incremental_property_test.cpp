// Issue 21: the incremental engine (nomination cache, teams with work, bulk parking of like
// heads, stamps kept in step) and the full re-nomination (a self-check run: every head nominated
// afresh in every cycle, every cycle taken) side by side on random traces whose queues grow to
// thousands of tasks, compared after every event: the same decisions and the same state.
// GOV_PROPERTY_LONG=1 runs more and longer traces (minutes); the default run stays short.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {

namespace {

using Rng = std::mt19937_64;

int64_t uniform(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool chance(Rng& rng, int percent) {
  return uniform(rng, 0, 99) < percent;
}

bool long_mode() {
  const char* env = std::getenv("GOV_PROPERTY_LONG");
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}

/// Two instance types, 3–8 teams with small quotas on one or both (so queues build up), random
/// borrowing, lending, queueing, preemption and fair-sharing settings.
ir::Module busy_module(Rng& rng) {
  ir::Module m;
  m.cluster = "busy";
  m.strings = {""};
  m.flavors.push_back(make_flavor("ml.a", amounts(4, 0, 48000, 196608), 8));
  m.flavors.push_back(make_flavor("ml.b", amounts(8, 0, 96000, 786432), 4));
  const int teams = static_cast<int>(uniform(rng, 3, 8));
  for (int t = 0; t < teams; ++t) {
    std::vector<ir::FlavorQuota> quotas;
    const int64_t which = uniform(rng, 0, 2);  // a, b or both (in a random order)
    std::vector<uint32_t> flavors;
    if (which != 1) flavors.push_back(0);
    if (which != 0) flavors.push_back(1);
    if (flavors.size() == 2 && chance(rng, 50)) std::swap(flavors[0], flavors[1]);
    for (uint32_t f : flavors) {
      const ir::Resources nominal = instances(m.flavors[f], uniform(rng, 0, 2));
      ir::Resources limit = unlimited();
      if (chance(rng, 60)) {
        for (size_t i = 0; i < ir::kResourceCount; ++i) limit[i] = nominal[i] * uniform(rng, 0, 2);
      }
      ir::Resources lending = unlimited();
      if (chance(rng, 20)) {
        for (size_t i = 0; i < ir::kResourceCount; ++i) lending[i] = nominal[i] / 2;
      }
      quotas.push_back(make_quota(f, nominal, limit, lending));
    }
    ir::Team team = make_team(fmt::format("team-{}", t), quotas);
    team.within_team = static_cast<ir::WithinTeam>(uniform(rng, 0, 2));
    team.reclaim_within_cohort = chance(rng, 80) ? ir::ReclaimWithinCohort::any
                                                 : static_cast<ir::ReclaimWithinCohort>(uniform(rng, 0, 1));
    team.queueing = chance(rng, 10) ? ir::Queueing::strict_fifo : ir::Queueing::best_effort_fifo;
    if (chance(rng, 25)) team.when_can_borrow = ir::WhenCanBorrow::try_next_flavor;
    if (chance(rng, 25)) team.when_can_preempt = ir::WhenCanPreempt::preempt;
    team.fair_share_weight_micros = uniform(rng, 1, 3) * model::kWeightScale;
    m.teams.push_back(team);
  }
  m.classes = {{"low", 10}, {"mid", 50}, {"high", 90}};
  m.settings.fair_sharing = chance(rng, 60);
  m.settings.idle_resource_sharing = chance(rng, 30);
  return m;
}

struct Step {
  Time at = 0;
  std::vector<Event> events;
};

/// `event_count` events; most are submissions of a few shapes (so heads of one class queue up),
/// often in sweeps of one team, with durations long enough that the queues reach thousands.
std::vector<Step> busy_steps(Rng& rng, const ir::Module& m, int event_count) {
  std::vector<Step> steps;
  std::vector<std::string> ids;
  Time at = 0;
  int serial = 0;
  while (serial < event_count) {
    at += chance(rng, 20) ? 0 : uniform(rng, 1, 10) * kSecond;
    steps.push_back({at, {}});
    std::vector<Event>& events = steps.back().events;
    const int64_t roll = uniform(rng, 0, 99);
    if (ids.empty() || roll < 80) {
      const auto& team = m.teams[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.teams.size()) - 1))];
      const int64_t sweep = chance(rng, 5) ? uniform(rng, 20, 120) : 1;
      const int64_t gpus = std::int64_t{1} << uniform(rng, 0, 3);
      // Some shapes ask memory out of step with their GPUs, so that a team can borrow memory
      // without borrowing GPUs (and its share move in one resource only).
      const int64_t memory_mib = chance(rng, 30) ? uniform(rng, 1, 24) * 16 * 1024 : 0;
      const char* priority = chance(rng, 70) ? "low" : chance(rng, 60) ? "mid" : "high";
      const bool named = chance(rng, 30);
      const std::string type = m.flavors[static_cast<size_t>(uniform(rng, 0, 1))].name;
      for (int64_t k = 0; k < sweep && serial < event_count; ++k, ++serial) {
        TaskBuilder task(fmt::format("t{}", serial), team.name);
        task.gpus(gpus).priority(priority);
        if (memory_mib > 0) task.memory_mib(memory_mib);
        if (named) task.type(type);
        if (chance(rng, 85)) task.duration(uniform(rng, 10, 600) * kSecond);
        events.push_back(Event::submit(task));
        ids.push_back(events.back().task.id);
      }
      continue;
    }
    const std::string& id = ids[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(ids.size()) - 1))];
    events.push_back(roll < 90 ? Event::finish(id) : Event::cancel(id));
    ++serial;
  }
  return steps;
}

/// The state two engines must agree on: every task's state and instance type, and the usage.
/// (Which pending tasks are parked may differ: the incremental engine parks like heads at once.)
struct State {
  std::vector<std::string> tasks;
  std::vector<UsageRow> usage;
  bool operator==(const State&) const = default;
};
State state_of(const Engine& engine) {
  const Snapshot snapshot = engine.snapshot(/*with_ended_tasks=*/false);
  State state;
  for (const TaskRow& row : snapshot.tasks)
    state.tasks.push_back(fmt::format("{} {} {}", row.id, static_cast<int>(row.state), row.flavor));
  state.usage = snapshot.usage;
  return state;
}

struct Totals {
  size_t events = 0;
  size_t decisions = 0;
  size_t most_pending = 0;
  size_t admitted = 0;
  size_t preempted = 0;
};

/// Runs both engines over the steps, comparing after every step; returns what was covered.
void compare_side_by_side(const ir::Module& m, const std::vector<Step>& steps, Totals& totals) {
  EngineOptions full_options;
  full_options.self_check = true;
  Harness full(m, full_options);
  Harness incremental(m);
  for (const Step& step : steps) {
    const std::vector<Decision> expected = full.engine->step(step.at, step.events);
    const std::vector<Decision> got = incremental.engine->step(step.at, step.events);
    INFO(fmt::format("at {} ms, after {} events", step.at, totals.events));
    REQUIRE(full.engine->self_check_failures().empty());
    REQUIRE(json_lines(expected) == json_lines(got));
    totals.events += step.events.size();
    totals.decisions += got.size();
    for (const Decision& d : got) {
      totals.admitted += d.outcome == Outcome::admitted;
      totals.preempted += d.outcome == Outcome::preempted;
    }
    const size_t live = incremental.engine->live_tasks();
    if (live > totals.most_pending) totals.most_pending = live;
    if (step.events.size() > 1 || totals.events % 64 == 0) REQUIRE(state_of(*full.engine) == state_of(*incremental.engine));
  }
  REQUIRE(state_of(*full.engine) == state_of(*incremental.engine));
}

}  // namespace

TEST_CASE("the incremental engine decides as the full re-nomination with queues of thousands",
          "[perf][engine][property]") {
  Rng rng(20261126);
  const int rounds = long_mode() ? 60 : 8;
  const int events = long_mode() ? 12'000 : 3'000;
  Totals totals;
  for (int round = 0; round < rounds; ++round) {
    const ir::Module m = busy_module(rng);
    const std::vector<Step> steps = busy_steps(rng, m, events);
    INFO("round " << round);
    compare_side_by_side(m, steps, totals);
  }
  WARN(fmt::format("{} events, {} decisions ({} admissions, {} preemptions), at most {} live tasks",
                   totals.events, totals.decisions, totals.admitted, totals.preempted, totals.most_pending));
  CHECK(totals.most_pending >= 1'000);  // the queues are what this test is for
  CHECK(totals.admitted > 1'000);
  CHECK(totals.preempted > 10);
}

TEST_CASE("a round of the long mode whose searches turn on another type's borrowing decides alike",
          "[perf][engine][property]") {
  // Round 8 of GOV_PROPERTY_LONG=1, the default run's blind spot (session 20): about 2,500 events
  // in, a parked head's fair-sharing search turns on the share of a team whose borrowing moved in
  // the other instance type. The quiet-cycle skip's verdict on the head's class must follow that
  // type's stamps, not only the head's own type's admitted tasks and usage; keyed on those alone
  // (session 19's dropped idea applied to every verdict), this round fails, while the eight short
  // rounds above and the 85% trace's first 400,000 lines of decisions do not notice.
  Rng rng(20261126);
  for (int round = 0; round < 8; ++round) {
    const ir::Module skipped = busy_module(rng);
    busy_steps(rng, skipped, 12'000);
  }
  const ir::Module m = busy_module(rng);
  const std::vector<Step> steps = busy_steps(rng, m, 12'000);
  Totals totals;
  compare_side_by_side(m, steps, totals);
  CHECK(totals.preempted > 0);
}

}  // namespace gov::engine::test
