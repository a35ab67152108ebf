// Preemption (docs/kueue-reference.md §5 classical, §6.3 fair sharing): candidates, their order,
// the minimal set with fill-back, reclaim rules, S2-a / S2-b, all or nothing, knobs beyond
// HyperPod.
#include <algorithm>
#include <catch2/catch.hpp>

#include "runtime/engine/preemption.hpp"
#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

std::vector<std::string> victims_of(const std::vector<Decision>& decisions,
                                    const std::string& preemptor) {
  for (const Decision& d : decisions) {
    if (d.task == preemptor && d.reason == PendingReason::waiting_for_preemption) return d.victims;
  }
  return {};
}

}  // namespace

TEST_CASE("victims: lower priority first, then the most recently admitted", "[engine]") {
  Harness h(gpu_module({{"a", 4, 0}}));
  h.submit(1, TaskBuilder("old-low", "a").gpus(1).priority("low"));
  h.submit(2, TaskBuilder("new-low", "a").gpus(1).priority("low"));
  h.submit(3, TaskBuilder("mid", "a").gpus(1).priority("mid"));
  h.submit(4, TaskBuilder("newest-mid", "a").gpus(1).priority("mid"));
  SECTION("one needed") {
    auto d = h.submit(5, TaskBuilder("p", "a").gpus(1).priority("high"));
    CHECK(victims_of(d, "p") == std::vector<std::string>{"new-low"});
    CHECK(last_for(d, "p")->outcome == Outcome::admitted);
  }
  SECTION("three needed") {
    auto d = h.submit(5, TaskBuilder("p", "a").gpus(3).priority("high"));
    CHECK(victims_of(d, "p") == std::vector<std::string>{"new-low", "old-low", "newest-mid"});
  }
}

TEST_CASE("minimal set: fill-back gives back victims the task fits without", "[engine]") {
  Harness h(gpu_module({{"a", 4, 0}}));
  h.submit(1, TaskBuilder("big", "a").gpus(3).priority("mid"));
  h.submit(2, TaskBuilder("small", "a").gpus(1).priority("low"));
  // Candidates in order: small (lower priority), then big. Removing small frees 1, not enough;
  // removing big too frees 4; fill-back then gives small back: 3 are enough.
  auto d = h.submit(3, TaskBuilder("p", "a").gpus(3).priority("high"));
  CHECK(victims_of(d, "p") == std::vector<std::string>{"big"});
  CHECK(state_of(*h.engine, "small") == TaskState::admitted);
}

TEST_CASE("reclaim takes only from teams over their nominal quota", "[engine]") {
  Harness h(gpu_module({{"a", 2}, {"b", 2}, {"c", 2}}));
  // a borrows 1 with high-priority tasks; b sits at its nominal with a newer, low-priority task
  // that would come first in candidate order if b could be reclaimed from.
  h.submit_all(0, {TaskBuilder("a1", "a").gpus(1).priority("high"),
                   TaskBuilder("a2", "a").gpus(1).priority("high"),
                   TaskBuilder("a3", "a").gpus(1).priority("high")});
  h.submit(1, TaskBuilder("b1", "b").gpus(2).priority("low"));
  h.submit(1, TaskBuilder("c0", "c").gpus(1).priority("high"));  // the last free GPU
  auto d = h.submit(2, TaskBuilder("c1", "c").gpus(1).priority("mid"));
  CHECK(victims_of(d, "c1") == std::vector<std::string>{"a1"});  // same admission time: id order
  CHECK(last_for(d, "c1")->outcome == Outcome::admitted);
  CHECK(state_of(*h.engine, "b1") == TaskState::admitted);
}

TEST_CASE("reclaim takes back lent quota from equal-priority borrowers (reclaimWithinCohort any)",
          "[engine]") {
  for (bool fair : {false, true}) {
    ir::Module m = workshop_module();
    m.settings.fair_sharing = fair;
    Harness h(std::move(m));
    h.submit(0, TaskBuilder("a1", "team-a").gpus(3).priority("training"));
    auto d = h.submit(1, TaskBuilder("b1", "team-b").gpus(2).priority("training"));
    INFO("fair sharing " << fair);
    CHECK(victims_of(d, "b1") == std::vector<std::string>{"a1"});
    CHECK(std::any_of(d.begin(), d.end(), [](const Decision& x) {
      return x.outcome == Outcome::preempted && x.kind == PreemptionKind::reclaim;
    }));
  }
}

TEST_CASE("fair sharing: an in-team preemption may end up borrowing (second HyperPod walkthrough)",
          "[engine]") {
  // 2 × ml.g5.12xlarge (4 GPUs each); team-a and team-b 1 instance each, borrow limit 100 %,
  // weight 0, fair sharing on.
  ir::Module m;
  m.strings = {""};
  m.flavors.push_back(make_flavor("ml.g5.12xlarge", amounts(4, 0, 48000, 196608, 1), 2));
  for (const char* name : {"team-a", "team-b"}) {
    const ir::Resources nominal = instances(m.flavors[0], 1);
    ir::Team team = make_team(name, {make_quota(0, nominal, nominal)});
    team.fair_share_weight_micros = 0;
    m.teams.push_back(team);
  }
  m.classes = {{"experimentation", 80}, {"training", 70}};
  m.settings.fair_sharing = true;
  Harness h(std::move(m));

  auto a = h.submit(0, TaskBuilder("a1", "team-a").instances(2).priority("training"));
  CHECK(a[0].outcome == Outcome::admitted);  // borrows 1 instance
  auto b = h.submit(1, TaskBuilder("b1", "team-b").instances(1).priority("training"));
  CHECK(victims_of(b, "b1") == std::vector<std::string>{"a1"});  // same priority: reclaim
  CHECK(last_for(b, "b1")->outcome == Outcome::admitted);
  auto b2 = h.submit(2, TaskBuilder("b2", "team-b").instances(2).priority("experimentation"));
  CHECK(victims_of(b2, "b2") == std::vector<std::string>{"b1"});
  const Decision* admitted = last_for(b2, "b2");
  REQUIRE(admitted != nullptr);
  CHECK(admitted->outcome == Outcome::admitted);
  CHECK(admitted->borrowed == ResourceAmounts{{ir::Resource::gpu, 4},
                                              {ir::Resource::vcpu, 48000},
                                              {ir::Resource::memory, 196608}});
  // team-a's task cannot take it back: both weight-0 borrowers, and a1 would not be below b's
  // share.
  CHECK(state_of(*h.engine, "a1") == TaskState::pending);
  CHECK(h.advance(10).empty());
}

TEST_CASE("fair sharing S2-a: preempt while the preemptor's share stays at or below the target's",
          "[engine]") {
  // a borrows 4 (share 500) in 1-GPU tasks; b at its nominal asks for 2 more (share 250).
  Harness h(gpu_module({{"a", 2}, {"b", 2}, {"c", 4}}, /*fair_sharing=*/true));
  for (int i = 0; i < 6; ++i)
    h.submit(i, TaskBuilder("a" + std::to_string(i), "a").gpus(1).priority("high"));
  h.submit(10, TaskBuilder("b0", "b").gpus(2).priority("high"));
  auto d = h.submit(11, TaskBuilder("b1", "b").gpus(2).priority("high"));
  CHECK(victims_of(d, "b1") == std::vector<std::string>{"a5", "a4"});
  for (const Decision& x : d) {
    if (x.outcome == Outcome::preempted) {
      CHECK(x.kind == PreemptionKind::fair_sharing);
      CHECK(x.message ==
            "Preempted to accommodate a workload (UID: b1) due to Fair Sharing within the cohort");
    }
  }
  CHECK(last_for(d, "b1")->outcome == Outcome::admitted);
}

TEST_CASE(
    "fair sharing S2-b: when S2-a fails, one victim per team whose share is above the preemptor's",
    "[engine]") {
  // a borrows 3 (375) with a 2-GPU and a 3-GPU task; b asks for 2 beyond its nominal (250).
  // S2-a: without the 3-GPU task a's share is 0, without the 2-GPU one 125, both below 250.
  // S2-b: 250 < 375, so a's first candidate (the more recent 3-GPU task) goes.
  Harness h(gpu_module({{"a", 2}, {"b", 2}, {"c", 4}}, /*fair_sharing=*/true));
  h.submit(0, TaskBuilder("a-two", "a").gpus(2).priority("high"));
  h.submit(1, TaskBuilder("a-three", "a").gpus(3).priority("high"));
  h.submit(2, TaskBuilder("b0", "b").gpus(2).priority("high"));
  auto d = h.submit(3, TaskBuilder("b1", "b").gpus(2).priority("high"));
  CHECK(victims_of(d, "b1") == std::vector<std::string>{"a-three"});
  CHECK(last_for(d, "b1")->outcome == Outcome::admitted);
}

TEST_CASE("fair sharing is all or nothing", "[engine]") {
  // a borrows 4 (500) in 1-GPU tasks; b asks for 3 beyond nominal (375). S2-a lets one task go
  // (a drops to 375), then no other; S2-b needs 375 < 375. Not enough: nothing is preempted.
  Harness h(gpu_module({{"a", 2}, {"b", 2}, {"c", 4}}, /*fair_sharing=*/true));
  for (int i = 0; i < 6; ++i)
    h.submit(i, TaskBuilder("a" + std::to_string(i), "a").gpus(1).priority("high"));
  h.submit(10, TaskBuilder("b0", "b").gpus(2).priority("high"));
  auto d = h.submit(11, TaskBuilder("b1", "b").gpus(3).priority("high"));
  CHECK(ids_with(d, Outcome::preempted).empty());
  CHECK(last_for(d, "b1")->reason == PendingReason::waiting_for_quota);
  CHECK(state_of(*h.engine, "a5") == TaskState::admitted);
}

TEST_CASE("fair sharing: within-nominal reclaim needs no share test", "[engine]") {
  // b is under its nominal even with the request: it reclaims from a however the shares compare.
  Harness h(gpu_module(
      {{"a", 2, ir::kUnlimited, ir::kUnlimited, 0}, {"b", 4, ir::kUnlimited, ir::kUnlimited, 1}},
      /*fair_sharing=*/true));
  for (int i = 0; i < 6; ++i)
    h.submit(i, TaskBuilder("a" + std::to_string(i), "a").gpus(1).priority("high"));
  auto d = h.submit(10, TaskBuilder("b1", "b").gpus(3));
  CHECK(victims_of(d, "b1") == std::vector<std::string>{"a5", "a4", "a3"});
  CHECK(std::all_of(d.begin(), d.end(), [](const Decision& x) {
    return x.outcome != Outcome::preempted || x.kind == PreemptionKind::reclaim;
  }));
}

TEST_CASE("no ping-pong: a task is preempted at most once per event time", "[engine]") {
  // Two weight-0 teams over nominal in turn: whatever the order, every instant settles.
  Harness h(gpu_module({{"a", 2, ir::kUnlimited, ir::kUnlimited, 0},
                        {"b", 2, ir::kUnlimited, ir::kUnlimited, 0}},
                       /*fair_sharing=*/true),
            EngineOptions{MessageDialect::head, /*self_check=*/true});
  h.submit_all(0, {TaskBuilder("a1", "a").gpus(3), TaskBuilder("b1", "b").gpus(3),
                   TaskBuilder("a2", "a").gpus(1), TaskBuilder("b2", "b").gpus(1)});
  h.submit_all(1, {TaskBuilder("a3", "a").gpus(2).priority("high"),
                   TaskBuilder("b3", "b").gpus(2).priority("high")});
  CHECK(h.engine->self_check_failures().empty());
}

TEST_CASE(
    "classical: a team that cannot always reclaim reserves what it could get for the rest of the "
    "cycle",
    "[engine]") {
  // b (reclaim lower-priority) needs 2 of its nominal back but a's borrower has the same
  // priority: no targets, so b holds the 1 free GPU for the rest of the cycle and c's head, which
  // would have fitted at nomination, no longer fits.
  ir::Module m = gpu_module({{"a", 1}, {"b", 2}, {"c", 1}});
  m.teams[1].reclaim_within_cohort = ir::ReclaimWithinCohort::lower_priority;
  Harness h(std::move(m));
  h.submit(0, TaskBuilder("a1", "a").gpus(3).priority("high"));
  auto d = h.submit_all(
      1, {TaskBuilder("b1", "b").gpus(2).priority("high"), TaskBuilder("c1", "c").gpus(1)});
  CHECK(ids_with(d, Outcome::preempted).empty());
  CHECK(std::any_of(d.begin(), d.end(), [](const Decision& x) {
    return x.task == "c1" &&
           x.message == "Workload no longer fits after processing another workload";
  }));
}

TEST_CASE("within-team lower-or-newer-equal priority preempts newer tasks of equal priority",
          "[engine]") {
  // Times in milliseconds, a second apart: Kueue compares creation times in whole seconds.
  const auto run = [](ir::WithinTeam policy) {
    ir::Module m = gpu_module({{"a", 2, 0}});
    m.teams[0].within_team = policy;
    Harness h(std::move(m));
    h.submit(0, TaskBuilder("x", "a").gpus(1).priority("high"));
    h.submit(1000, TaskBuilder("old", "a").gpus(2).priority("mid"));  // parked: x is not lower
    h.submit(2000, TaskBuilder("new", "a").gpus(1).priority("mid"));  // fits meanwhile
    return victims_of(h.finish(3000, "x"), "old");
  };
  CHECK(run(ir::WithinTeam::lower_or_newer_equal_priority) == std::vector<std::string>{"new"});
  CHECK(run(ir::WithinTeam::lower_priority).empty());
  CHECK(run(ir::WithinTeam::never).empty());
}

TEST_CASE("within-team lower-or-newer-equal priority reads each equal-priority candidate's submission",
          "[engine]") {
  // Candidate order puts the most recently admitted first: `old` (submitted before `p`, so not
  // a candidate) comes before `new` (submitted after `p`) at the same priority. The search must
  // ask about `new` itself, not reuse the answer for `old` (CandidateCursor asks once per
  // priority only under policies that compare priorities alone).
  ir::Module m = gpu_module({{"a", 4, 0}});
  m.teams[0].within_team = ir::WithinTeam::lower_or_newer_equal_priority;
  Harness h(std::move(m));
  h.submit(0, TaskBuilder("big", "a").gpus(3).priority("high"));
  h.submit(0, TaskBuilder("x", "a").gpus(1).priority("high"));
  h.submit(1000, TaskBuilder("old", "a").gpus(2).priority("mid"));
  h.submit(2000, TaskBuilder("p", "a").gpus(2).priority("mid"));
  h.submit(3000, TaskBuilder("new", "a").gpus(1).priority("mid"));
  h.finish(4000, "x");  // `new` fits in the GPU x frees; `old` and `p` do not
  REQUIRE(state_of(*h.engine, "new") == TaskState::admitted);
  auto d = h.finish(5000, "big");  // `old` is admitted, then `p` needs one GPU more: `new`'s
  CHECK(state_of(*h.engine, "old") == TaskState::admitted);
  CHECK(victims_of(d, "p") == std::vector<std::string>{"new"});
}

TEST_CASE("classical borrowWithinCohort lets a borrowing task reclaim lower-priority borrowers",
          "[engine]") {
  ir::Module m = gpu_module({{"a", 1}, {"b", 1}, {"c", 2}});
  m.teams[1].borrow_within_cohort = ir::BorrowWithinCohort::lower_priority;
  Harness h(std::move(m));
  h.submit(0, TaskBuilder("a1", "a").gpus(3).priority("low"));  // borrows 2
  h.submit(0, TaskBuilder("c1", "c").gpus(1).priority("high"));
  // b asks for 2: 1 beyond its nominal; only a lower-priority borrower may go.
  auto d = h.submit(1, TaskBuilder("b1", "b").gpus(2).priority("mid"));
  CHECK(victims_of(d, "b1") == std::vector<std::string>{"a1"});
  const auto preempted = std::find_if(
      d.begin(), d.end(), [](const Decision& x) { return x.outcome == Outcome::preempted; });
  REQUIRE(preempted != d.end());
  CHECK(preempted->message ==
        "Preempted to accommodate a workload (UID: b1) due to reclamation within the cohort while "
        "borrowing");
}

}  // namespace gov::engine::test

namespace gov::engine::test {

// OwnHeldMemo: what the own team's candidates hold is remembered per team, priority and state;
// an admission at the same instant changes the state (the team's version), so a later search
// of the same priority sees the new candidate. Checked against a self-check run, which keeps no
// memo.
TEST_CASE("a search at the same instant sees the own team's candidates admitted since the last one", "[engine]") {
  const auto run = [](bool self_check) {
    EngineOptions options;
    options.self_check = self_check;
    Harness h(gpu_module({{"a", 4, 0}}), options);
    std::vector<Decision> all;
    const auto keep = [&all](const std::vector<Decision>& d) { all.insert(all.end(), d.begin(), d.end()); };
    keep(h.submit(0, TaskBuilder("b", "a").gpus(3).priority("high")));
    // `h` (3 + 2 > 4 with no lower-priority task admitted) is searched in vain and parked; `l`
    // is admitted after it, in the same instant.
    keep(h.submit_all(kSecond, {TaskBuilder("h", "a").gpus(2).priority("high"),
                                TaskBuilder("l", "a").gpus(1).priority("low")}));
    // Still the same instant: `c` fits once `l` is preempted (4 - 1 + 1 <= 4).
    keep(h.submit(kSecond, TaskBuilder("c", "a").gpus(1).priority("high")));
    REQUIRE(h.engine->self_check_failures().empty());
    return all;
  };
  const std::vector<Decision> fast = run(false);
  CHECK(victims_of(fast, "c") == std::vector<std::string>{"l"});
  CHECK(json_lines(fast) == json_lines(run(true)));
}

}  // namespace gov::engine::test

namespace gov::engine::test {

// FlavorAssigner::simulate_contested: a flavor's mode is the least preferred of its contested
// resources', so a resource the own team's limits settle with no candidates (memory here) makes
// the flavor "no candidates" whatever the other resource's search would find (GPUs: a borrows 4
// in 1-GPU tasks, which the S2-a test above preempts). Shortcut runs skip that search; self-check
// runs make it, and both give the same decisions.
TEST_CASE("fair sharing: a resource with no candidates parks the task however many another has",
          "[engine]") {
  const auto run = [](ir::Amount memory, bool self_check) {
    ir::Module m;
    m.strings = {""};
    m.flavors.push_back(make_flavor("ml.x", amounts(1, 0, 0, 10), 8));  // 8 GPUs, 80 MiB
    ir::Resources memory_capped = unlimited();
    memory_capped[ir::index(ir::Resource::memory)] = 0;  // b may not borrow memory
    m.teams.push_back(make_team("a", {make_quota(0, amounts(2, 0, 0, 20), unlimited())}));
    m.teams.push_back(make_team("b", {make_quota(0, amounts(2, 0, 0, 20), memory_capped)}));
    m.teams.push_back(make_team("c", {make_quota(0, amounts(4, 0, 0, 40), unlimited())}));
    for (ir::Team& team : m.teams) team.fair_share_weight_micros = model::kWeightScale;
    m.classes = {{"low", 10}, {"mid", 50}, {"high", 90}};
    m.settings.fair_sharing = true;
    EngineOptions options;
    options.self_check = self_check;
    Harness h(std::move(m), options);
    std::vector<Decision> all;
    const auto keep = [&all](const std::vector<Decision>& d) { all.insert(all.end(), d.begin(), d.end()); };
    for (int i = 0; i < 6; ++i)
      keep(h.submit(i, TaskBuilder("a" + std::to_string(i), "a").gpus(1).memory_mib(1).priority("high")));
    keep(h.submit(10, TaskBuilder("b0", "b").gpus(2).memory_mib(20).priority("high")));
    keep(h.submit(11, TaskBuilder("b1", "b").gpus(2).memory_mib(memory).priority("high")));
    REQUIRE(h.engine->self_check_failures().empty());
    return all;
  };
  // Without memory, b1 takes two of a's GPUs (the GPU search finds targets).
  const std::vector<Decision> gpus_only = run(0, false);
  CHECK(victims_of(gpus_only, "b1") == std::vector<std::string>{"a5", "a4"});
  CHECK(json_lines(gpus_only) == json_lines(run(0, true)));
  // With memory b cannot get (at its nominal, no borrowing, no own candidate): nothing is
  // preempted, and b1 waits for quota.
  const std::vector<Decision> with_memory = run(5, false);
  CHECK(ids_with(with_memory, Outcome::preempted).empty());
  const Decision* last = last_for(with_memory, "b1");
  REQUIRE(last != nullptr);
  CHECK(last->reason == PendingReason::waiting_for_quota);
  CHECK(json_lines(with_memory) == json_lines(run(5, true)));
}

}  // namespace gov::engine::test

namespace gov::engine::test {

// The other half of simulate_contested's rule: a search is skipped only when it cannot raise the
// flavor's borrowing level, which orders a classical cycle's heads (non-borrowing first). b1's
// memory is within b's nominal (level 0) but c borrows it, and b may not reclaim: no candidates.
// Its GPU would borrow (b holds 3 of its 2); preempting b's own low-priority task leaves it
// borrowing. So b1 parks at level 1, and e1, parked at level 0 in the same cycle, comes first,
// although b1 has the higher priority. Skipping the GPU search would have put b1 first.
TEST_CASE("a search that may raise the borrowing level is made", "[engine]") {
  const auto run = [](bool self_check) {
    ir::Module m;
    m.strings = {""};
    m.flavors.push_back(make_flavor("ml.x", amounts(1, 0, 0, 10), 8));  // 8 GPUs, 80 MiB
    m.teams.push_back(make_team("b", {make_quota(0, amounts(2, 0, 0, 20), unlimited())}));
    m.teams.push_back(make_team("c", {make_quota(0, amounts(4, 0, 0, 40), unlimited())}));
    m.teams.push_back(make_team("e", {make_quota(0, amounts(2, 0, 0, 20), unlimited())}));
    for (ir::Team& team : m.teams) team.reclaim_within_cohort = ir::ReclaimWithinCohort::never;
    m.classes = {{"low", 10}, {"mid", 50}, {"high", 90}};
    m.settings.fair_sharing = false;  // the classical order
    EngineOptions options;
    options.self_check = self_check;
    Harness h(std::move(m), options);
    std::vector<Decision> all;
    const auto keep = [&all](const std::vector<Decision>& d) { all.insert(all.end(), d.begin(), d.end()); };
    keep(h.submit(0, TaskBuilder("e0", "e").memory_mib(20).priority("high")));
    keep(h.submit_all(1, {TaskBuilder("b-low", "b").gpus(1).priority("low"),
                          TaskBuilder("b-high-1", "b").gpus(1).priority("high"),
                          TaskBuilder("b-high-2", "b").gpus(1).priority("high")}));
    keep(h.submit(2, TaskBuilder("c0", "c").gpus(5).memory_mib(60).priority("high")));
    keep(h.submit_all(3, {TaskBuilder("b1", "b").gpus(1).memory_mib(5).priority("high"),
                          TaskBuilder("e1", "e").gpus(1).priority("low")}));
    REQUIRE(h.engine->self_check_failures().empty());
    return all;
  };
  const std::vector<Decision> fast = run(false);
  for (const char* id : {"e0", "b-low", "b-high-1", "b-high-2", "c0"})
    CHECK(last_for(fast, id)->outcome == Outcome::admitted);
  CHECK(ids_with(fast, Outcome::preempted).empty());
  std::vector<std::string> parked;
  for (const Decision& d : fast) {
    if (d.at == 3 && d.outcome == Outcome::pending) parked.push_back(d.task);
  }
  CHECK(parked == std::vector<std::string>{"e1", "b1"});
  CHECK(json_lines(fast) == json_lines(run(true)));
}

}  // namespace gov::engine::test

namespace gov::engine::test {

namespace {

/// GPUs and memory (MiB), the rest zero.
Resources request_of(Amount gpus, Amount memory = 0) {
  return amounts(gpus, 0, 0, memory);
}

}  // namespace

// TeamsGoneMemo::HopelessAnswers: the fair-sharing share bound is monotone in the request under
// one key, so a request at least as large as a hopeless one is hopeless and one at most as large
// as a hopeful one is not; anything else is asked again. (The engine-level check is the
// long-queue property test, which compares with a run that keeps no memo.)
TEST_CASE("the share bound's answers decide only the requests they bound", "[engine]") {
  TeamsGoneMemo::HopelessAnswers answers;
  CHECK_FALSE(answers.find(request_of(1)).has_value());
  answers.add(request_of(4, 100), /*hopeless=*/true);
  CHECK(answers.find(request_of(4, 100)) == std::optional<bool>(true));
  CHECK(answers.find(request_of(8, 200)) == std::optional<bool>(true));
  CHECK_FALSE(answers.find(request_of(8, 50)).has_value());  // less memory: not bounded
  CHECK_FALSE(answers.find(request_of(2, 100)).has_value());
  answers.add(request_of(2, 80), /*hopeless=*/false);
  CHECK(answers.find(request_of(2, 80)) == std::optional<bool>(false));
  CHECK(answers.find(request_of(1, 0)) == std::optional<bool>(false));
  CHECK_FALSE(answers.find(request_of(3, 80)).has_value());
}

TEST_CASE("the share bound's answers keep the latest few and forget all on clear", "[engine]") {
  TeamsGoneMemo::HopelessAnswers answers;
  // Five hopeless answers, each smaller than the one before: the first is replaced.
  for (Amount gpus = 9; gpus >= 5; --gpus) answers.add(request_of(gpus), /*hopeless=*/true);
  CHECK(answers.find(request_of(5)) == std::optional<bool>(true));
  // Cleared after two adds (the ring's next slot is then not its first), then one answer: only
  // it counts, neither of the two before.
  TeamsGoneMemo::HopelessAnswers reused;
  for (Amount gpus = 1; gpus <= 2; ++gpus) reused.add(request_of(gpus), /*hopeless=*/true);
  reused.clear();
  CHECK_FALSE(reused.find(request_of(3)).has_value());
  reused.add(request_of(100), /*hopeless=*/true);
  CHECK_FALSE(reused.find(request_of(3)).has_value());
  CHECK(reused.find(request_of(100)) == std::optional<bool>(true));
}

TEST_CASE("a stored TeamsGoneMemo entry starts without answers", "[engine]") {
  TeamsGoneMemo memo;
  TeamsGoneMemo::Entry entry;
  entry.key.serial = 7;
  entry.teams = {1, 2};
  TeamsGoneMemo::Entry& stored = memo.store(entry);
  stored.hopeless.add(request_of(1), /*hopeless=*/true);
  REQUIRE(memo.find(entry.key) != nullptr);
  CHECK(memo.find(entry.key)->hopeless.find(request_of(2)) == std::optional<bool>(true));
  // The same slot filled again (the state moved on and came back to this key): no answers.
  memo.store(entry);
  CHECK_FALSE(memo.find(entry.key)->hopeless.find(request_of(2)).has_value());
  CHECK(memo.find(entry.key)->teams == std::vector<uint32_t>{1, 2});
}

}  // namespace gov::engine::test
