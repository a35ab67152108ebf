// The admission cycle (docs/kueue-reference.md §3, §7, docs/semantics.md §3): heads, cycle order,
// queueing, fair-share order, fcfs settings, inactive teams, flavor order, invalid tasks.
#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {

TEST_CASE("classical order: non-borrowing heads before borrowing ones, whatever their priority",
          "[engine]") {
  Harness h(gpu_module({{"a", 1}, {"b", 2}, {"c", 1}}));
  // (Tasks already running are `high` throughout these tests, so in-team preemption stays out.)
  h.submit_all(0,
               {TaskBuilder("a0", "a").gpus(1).priority("high"), TaskBuilder("c0", "c").gpus(1)});
  // 2 GPUs free: a's high-priority head would borrow 1, b's low-priority head takes its own 2.
  auto d = h.submit_all(1, {TaskBuilder("a1", "a").gpus(1).priority("high"),
                            TaskBuilder("b1", "b").gpus(2).priority("low")});
  CHECK(ids_with(d, Outcome::admitted) == std::vector<std::string>{"b1"});
  CHECK(std::any_of(d.begin(), d.end(), [](const Decision& x) {
    return x.task == "a1" &&
           x.message == "Workload no longer fits after processing another workload";
  }));
}

TEST_CASE("classical order among borrowing heads: higher priority, then earlier submission",
          "[engine]") {
  const auto setup = [](Harness& h) {
    h.submit_all(0,
                 {TaskBuilder("a0", "a").gpus(1).priority("high"),
                  TaskBuilder("b0", "b").gpus(1).priority("high"), TaskBuilder("c0", "c").gpus(2)});
  };
  SECTION("priority") {
    Harness h(gpu_module({{"a", 1}, {"b", 1}, {"c", 2}}));
    setup(h);
    h.submit(1, TaskBuilder("a1", "a").gpus(1).priority("low"));   // parked: nothing free
    h.submit(2, TaskBuilder("b1", "b").gpus(1).priority("high"));  // parked
    auto d = h.finish(3, "c0");  // frees 2; both parked heads come back at once and both fit
    CHECK(ids_with(d, Outcome::admitted) == std::vector<std::string>{"b1", "a1"});
  }
  SECTION("priority decides when only one fits") {
    Harness h(gpu_module({{"a", 1}, {"b", 1}, {"c", 2}}));
    setup(h);
    h.submit(1, TaskBuilder("a1", "a").gpus(2).priority("low"));
    h.submit(2, TaskBuilder("b1", "b").gpus(2).priority("high"));
    auto d = h.finish(3, "c0");
    CHECK(ids_with(d, Outcome::admitted) == std::vector<std::string>{"b1"});
  }
  SECTION("earlier submission when priorities tie") {
    Harness h(gpu_module({{"a", 1}, {"b", 1}, {"c", 2}}));
    setup(h);
    h.submit(1, TaskBuilder("b1", "b").gpus(2));
    h.submit(2, TaskBuilder("a1", "a").gpus(2));
    auto d = h.finish(3, "c0");
    CHECK(ids_with(d, Outcome::admitted) == std::vector<std::string>{"b1"});
  }
}

TEST_CASE("one head per team per cycle", "[engine]") {
  Harness h(gpu_module({{"a", 4}, {"b", 4}}));
  auto d = h.submit_all(0, {TaskBuilder("a1", "a").gpus(1), TaskBuilder("a2", "a").gpus(1),
                            TaskBuilder("b1", "b").gpus(1)});
  // Cycle 1 takes a1 and b1; a2 waits for the next cycle.
  CHECK(ids_with(d, Outcome::admitted) == std::vector<std::string>{"a1", "b1", "a2"});
}

TEST_CASE("within a team: higher priority first, then earlier submission, then id", "[engine]") {
  Harness h(gpu_module({{"a", 1}}));
  h.submit(0, TaskBuilder("blocker", "a").gpus(1).priority("high"));
  h.submit_all(1, {TaskBuilder("t-low", "a").gpus(1).priority("low"),
                   TaskBuilder("t-b", "a").gpus(1), TaskBuilder("t-a", "a").gpus(1)});
  h.submit(2, TaskBuilder("t-high", "a").gpus(1).priority("high"));
  std::vector<std::string> order;
  Time at = 3;
  for (const char* id : {"blocker", "t-high", "t-low", "t-a"}) {
    for (const std::string& admitted : ids_with(h.finish(at++, id), Outcome::admitted))
      order.push_back(admitted);
  }
  CHECK(order == std::vector<std::string>{"t-high", "t-low", "t-a", "t-b"});
}

TEST_CASE("best-effort FIFO parks a head that cannot be admitted, strict FIFO blocks behind it",
          "[engine]") {
  SECTION("best effort") {
    Harness h(gpu_module({{"a", 2, 0}}));
    h.submit(0, TaskBuilder("a0", "a").gpus(1).priority("high"));
    auto d = h.submit_all(1, {TaskBuilder("big", "a").gpus(2).priority("high"),
                              TaskBuilder("small", "a").gpus(1).priority("high")});
    CHECK(ids_with(d, Outcome::admitted) == std::vector<std::string>{"small"});
    CHECK(last_for(d, "big")->reason == PendingReason::waiting_for_quota);
    // A finish brings the parked head back at once.
    auto later = h.finish(2, "a0");
    CHECK(ids_with(later, Outcome::admitted).empty());  // still 1 short: small holds 1
    CHECK(ids_with(h.finish(3, "small"), Outcome::admitted) == std::vector<std::string>{"big"});
  }
  SECTION("strict") {
    ir::Module m = gpu_module({{"a", 2, 0}});
    m.teams[0].queueing = ir::Queueing::strict_fifo;
    Harness h(std::move(m));
    h.submit(0, TaskBuilder("a0", "a").gpus(1).priority("high"));
    auto d = h.submit_all(
        1, {TaskBuilder("big", "a").gpus(2).priority("high"), TaskBuilder("small", "a").gpus(1)});
    CHECK(ids_with(d, Outcome::admitted).empty());
    // Every submitted task gets a decision at its submission time, even behind a blocked head.
    const Decision* small = last_for(d, "small");
    REQUIRE(small != nullptr);
    CHECK(small->outcome == Outcome::pending);
    CHECK(ids_with(h.finish(2, "a0"), Outcome::admitted) == std::vector<std::string>{"big"});
  }
}

TEST_CASE("fair-share order: lowest share after admission first, weights divide shares",
          "[engine]") {
  const auto run = [](int32_t weight_a, int32_t weight_b, ir::Amount ask_a, ir::Amount ask_b) {
    Harness h(gpu_module({{"a", 2, ir::kUnlimited, ir::kUnlimited, weight_a},
                          {"b", 2, ir::kUnlimited, ir::kUnlimited, weight_b},
                          {"c", 4}},
                         /*fair_sharing=*/true));
    h.submit_all(0, {TaskBuilder("a0", "a").gpus(2).priority("high"),
                     TaskBuilder("b0", "b").gpus(2).priority("high")});
    // 4 free; both heads borrow and cannot both be admitted. a's head has the higher priority.
    auto d = h.submit_all(1, {TaskBuilder("a1", "a").gpus(ask_a).priority("high"),
                              TaskBuilder("b1", "b").gpus(ask_b)});
    return ids_with(d, Outcome::admitted);
  };
  // Equal weights: equal shares (375 each), so priority decides.
  CHECK(run(1, 1, 3, 3) == std::vector<std::string>{"a1"});
  // b's weight 3 makes its share 125 < a's 375.
  CHECK(run(1, 3, 3, 3) == std::vector<std::string>{"b1"});
  // Weight 0 while borrowing is an infinite share: b goes first even asking for more.
  CHECK(run(0, 1, 3, 4) == std::vector<std::string>{"b1"});
  // Two weight-0 borrowers compare unweighted shares: b's 2 (250) before a's 3 (375).
  CHECK(run(0, 0, 3, 2) == std::vector<std::string>{"b1"});
}

TEST_CASE("fair-share order puts non-borrowing heads first", "[engine]") {
  Harness h(gpu_module({{"a", 1, ir::kUnlimited, ir::kUnlimited, 100},
                        {"b", 2, ir::kUnlimited, ir::kUnlimited, 1},
                        {"c", 1}},
                       /*fair_sharing=*/true));
  h.submit_all(0,
               {TaskBuilder("a0", "a").gpus(1).priority("high"), TaskBuilder("c0", "c").gpus(1)});
  auto d = h.submit_all(
      1, {TaskBuilder("a1", "a").gpus(1).priority("high"), TaskBuilder("b1", "b").gpus(2)});
  CHECK(ids_with(d, Outcome::admitted) == std::vector<std::string>{"b1"});
}

TEST_CASE("fcfs prioritization: every task has priority 0, so no in-team preemption", "[engine]") {
  ir::Module m = gpu_module({{"a", 1, 0}});
  m.settings.rank_by_priority = false;
  Harness h(std::move(m));
  h.submit(0, TaskBuilder("low", "a").gpus(1).priority("low"));
  auto d = h.submit(1, TaskBuilder("high", "a").gpus(1).priority("high"));
  CHECK(ids_with(d, Outcome::preempted).empty());
  CHECK(last_for(d, "high")->reason == PendingReason::waiting_for_quota);
  // And the queue is first come, first served.
  h.submit(2, TaskBuilder("later-high", "a").gpus(1).priority("high"));
  CHECK(ids_with(h.finish(3, "low"), Outcome::admitted) == std::vector<std::string>{"high"});
}

TEST_CASE("fcfs idle compute: classical preemption never preempts to borrow", "[engine]") {
  // The second HyperPod walkthrough, with idle compute fcfs: b's 2-instance experimentation task
  // would have to borrow, which classical preemption does not allow.
  ir::Module m;
  m.strings = {""};
  m.flavors.push_back(make_flavor("ml.g5.12xlarge", amounts(4, 0, 48000, 196608, 1), 2));
  for (const char* name : {"team-a", "team-b"}) {
    const ir::Resources nominal = instances(m.flavors[0], 1);
    m.teams.push_back(make_team(name, {make_quota(0, nominal, nominal)}));
  }
  m.classes = {{"experimentation", 80}, {"training", 70}};
  m.settings.fair_sharing = false;
  Harness h(std::move(m));
  h.submit(0, TaskBuilder("b1", "team-b").instances(1).priority("training"));
  auto d = h.submit(1, TaskBuilder("b2", "team-b").instances(2).priority("experimentation"));
  CHECK(ids_with(d, Outcome::preempted).empty());
  CHECK(last_for(d, "b2")->reason == PendingReason::waiting_for_quota);
}

TEST_CASE("an inactive team admits nothing, and its quota still lends", "[engine]") {
  ir::Module m = gpu_module({{"a", 2}, {"b", 2}});
  m.teams[1].active = false;
  Harness h(std::move(m));
  auto b = h.submit(0, TaskBuilder("b1", "b").gpus(1));
  REQUIRE(b.size() == 1);
  CHECK(b[0].reason == PendingReason::team_inactive);
  CHECK(b[0].message == "ClusterQueue b is inactive");
  auto a = h.submit(1, TaskBuilder("a1", "a").gpus(4));
  CHECK(a[0].outcome == Outcome::admitted);
  CHECK(h.advance(100).empty());
}

// A Kueue auditor's finding (session 41): gov reclaimed an inactive team's borrowed quota. Kueue
// leaves a stopped ClusterQueue out of its scheduling snapshot, so its workloads are never
// preemption candidates, while its usage still counts in the cohort.
TEST_CASE("an inactive team's admitted tasks keep running and are never preempted", "[engine]") {
  for (const bool fair_sharing : {false, true}) {
    INFO("fair sharing " << fair_sharing);
    ir::Module m = gpu_module({{"a", 4}, {"b", 4}}, fair_sharing);
    m.teams[1].active = false;  // b was stopped after b1 was admitted, borrowing a's 4 GPUs
    Harness h(std::move(m));
    ClusterState state;
    state.at = 10 * kSecond;
    state.admitted.push_back({TaskBuilder("b1", "b").gpus(8), 0, 0, std::nullopt});
    REQUIRE(h.engine->load_state(state).empty());
    auto d = h.submit(10 * kSecond, TaskBuilder("x", "a").gpus(2));
    CHECK(ids_with(d, Outcome::preempted).empty());
    REQUIRE(last_for(d, "x") != nullptr);
    CHECK(last_for(d, "x")->outcome == Outcome::pending);
    CHECK(last_for(d, "x")->reason == PendingReason::waiting_for_quota);
    // The explanation says why b1 was not taken.
    const std::optional<Explanation> why = h.engine->explain("x");
    REQUIRE(why.has_value());
    REQUIRE(why->candidates.size() == 1);
    CHECK_FALSE(why->candidates[0].chosen);
    CHECK(why->candidates[0].why.rfind("team `b` is inactive: its tasks keep running and are never preempted", 0) == 0);
    // It runs once b1 finishes: the inactive team's usage counted in the cohort until then.
    auto after = h.finish(20 * kSecond, "b1");
    CHECK(last_for(after, "x")->outcome == Outcome::admitted);
  }
}

TEST_CASE(
    "flavors are tried in the team's declared order, the first that fits wins, even by borrowing",
    "[engine]") {
  ir::Module m;
  m.strings = {""};
  m.flavors.push_back(make_flavor("first", gpus(1), 4));
  m.flavors.push_back(make_flavor("second", gpus(1), 4));
  // a declares `second` before `first`.
  m.teams.push_back(
      make_team("a", {make_quota(1, gpus(1), unlimited()), make_quota(0, gpus(2), unlimited())}));
  m.teams.push_back(
      make_team("b", {make_quota(0, gpus(2), unlimited()), make_quota(1, gpus(3), unlimited())}));
  Harness h(std::move(m));
  auto borrow = h.submit(0, TaskBuilder("a1", "a").gpus(2));
  CHECK(borrow[0].flavor == "second");  // fits by borrowing in the first flavor tried
  CHECK(borrow[0].borrowed == ResourceAmounts{{ir::Resource::gpu, 1}});
  auto next = h.submit(1, TaskBuilder("a2", "a").gpus(3));
  CHECK(next[0].flavor == "first");  // `second` has only 2 left
  auto named = h.submit(2, TaskBuilder("b1", "b").gpus(1).type("second"));
  CHECK(named[0].flavor == "second");
  auto none = h.submit(3, TaskBuilder("b2", "b").gpus(8));
  REQUIRE(none.size() == 1);
  CHECK(none[0].reason == PendingReason::exceeds_max_quota);
  CHECK(none[0].message ==
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor "
        "first, previously "
        "considered podsets requests (0) + current podset request (8) > maximum capacity (4), "
        "insufficient quota for "
        "nvidia.com/gpu in flavor second, previously considered podsets requests (0) + current "
        "podset request (8) > "
        "maximum capacity (4)");
}

TEST_CASE("a task naming an instance type its team has no quota for waits with no-matching-flavor",
          "[engine]") {
  ir::Module m = workshop_module();
  m.flavors.push_back(make_flavor("ml.p5.48xlarge", amounts(8, 0, 192000, 2097152, 32), 1));
  Harness h(std::move(m));
  auto d = h.submit(0, TaskBuilder("a1", "team-a").gpus(1).type("ml.p5.48xlarge"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].reason == PendingReason::no_matching_flavor);
  CHECK(
      d[0].message ==
      "couldn't assign flavors to pod set main: flavor ml.g5.8xlarge doesn't match node affinity");
}

TEST_CASE("invalid tasks get one clear line and are never queued", "[engine]") {
  ir::Module m = workshop_module();
  m.flavors.push_back(make_flavor("ml.p5.48xlarge", amounts(8, 0, 192000, 2097152, 32), 1));
  m.teams[0].quotas.push_back(make_quota(1, gpus(8), gpus(0)));
  Harness h(std::move(m));
  const auto message = [&h](gov::Task spec) {
    auto d = h.submit(0, std::move(spec));
    REQUIRE(d.size() == 1);
    CHECK(d[0].outcome == Outcome::invalid);
    return d[0].message;
  };
  CHECK(message(TaskBuilder("x1", "team-z").gpus(1)) == "unknown team `team-z`");
  CHECK(message(TaskBuilder("x2", "team-a").gpus(1).priority("urgent")) ==
        "unknown priority class `urgent`");
  CHECK(message(TaskBuilder("x3", "team-a").gpus(1).type("ml.nope")) ==
        "unknown instance type `ml.nope`");
  CHECK(message(TaskBuilder("x4", "team-a").instances(1)) ==
        "task requests whole instances but team `team-a` has 2 instance types; name one with "
        "`instance_type`");
  CHECK(message(TaskBuilder("x5", "team-a").gpus(-1)) == "negative amount for `gpu`");
  h.submit(0, TaskBuilder("dup", "team-b").gpus(1));
  CHECK(message(TaskBuilder("dup", "team-b").gpus(1)) ==
        "task id `dup` is already used by a task that has not ended");
  CHECK(h.engine->explain("dup")->state ==
        TaskState::admitted);  // the id still names the first task
}

TEST_CASE("duration-based finishes happen in time order, each instant settling on its own",
          "[engine]") {
  Harness h(gpu_module({{"a", 1, 0}}));
  h.submit(0, TaskBuilder("t1", "a").gpus(1).duration(10 * kSecond));
  h.submit(1, TaskBuilder("t2", "a").gpus(1).duration(10 * kSecond));
  auto d = h.advance(30 * kSecond);
  REQUIRE(d.size() == 3);
  CHECK(json_line(d[0]) == R"({"at":10,"task":"t1","outcome":"finished","team":"a"})");
  CHECK(d[1].task == "t2");
  CHECK(d[1].outcome == Outcome::admitted);
  CHECK(d[1].at == 10 * kSecond);
  CHECK(json_line(d[2]) == R"({"at":20,"task":"t2","outcome":"finished","team":"a"})");
  // Duration 0 finishes in the same instant it is admitted.
  auto zero = h.submit(40 * kSecond, TaskBuilder("t3", "a").gpus(1).duration(0));
  CHECK(ids_with(zero, Outcome::finished) == std::vector<std::string>{"t3"});
  CHECK(state_of(*h.engine, "t3") == TaskState::finished);
}

}  // namespace gov::engine::test
