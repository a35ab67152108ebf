// Explanations, snapshots and starting from a loaded cluster state (`gov eval`).
#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {

TEST_CASE(
    "explain: a task waiting for quota, with its team's figures and the candidates considered",
    "[engine]") {
  Harness h(workshop_module());
  h.submit(0, TaskBuilder("a1", "team-a").gpus(3).priority("training"));
  h.submit(1, TaskBuilder("b1", "team-b").gpus(2).priority("training"));
  const std::optional<Explanation> e = h.engine->explain("a1");
  REQUIRE(e.has_value());
  CHECK(e->state == TaskState::pending);
  CHECK(e->priority == 70);
  CHECK(e->priority_class == "training");
  CHECK(e->requested == ResourceAmounts{{ir::Resource::gpu, 3}});
  CHECK(e->preempted_by == "b1");
  CHECK(e->preempted_kind == PreemptionKind::reclaim);
  CHECK(e->reason == PendingReason::waiting_for_quota);
  REQUIRE(e->flavors.size() == 1);
  CHECK(e->flavors[0].flavor == "ml.g5.8xlarge");
  CHECK(e->flavors[0].verdict == "needs preemption, but no task may be preempted for it");
  REQUIRE(e->flavors[0].resources.size() == 1);
  const ResourceFigures& gpu = e->flavors[0].resources[0];
  CHECK(gpu.requested == 3);
  CHECK(gpu.guaranteed == 2);
  CHECK(gpu.borrowing_limit == 1);
  CHECK(gpu.in_use == 0);
  CHECK(gpu.available == 2);
  CHECK(gpu.borrowable == 0);
  CHECK(gpu.maximum == 3);
  CHECK(gpu.cohort_idle == 2);
  REQUIRE(e->candidates.size() == 1);
  CHECK(e->candidates[0].task == "b1");
  CHECK_FALSE(e->candidates[0].chosen);
  CHECK(e->candidates[0].why ==
        "team `team-b` is within its nominal quota: it is never reclaimed from");
  CHECK(std::any_of(e->notes.begin(), e->notes.end(),
                    [](const std::string& n) { return n.find("1 more") == 0; }));
}

TEST_CASE("explain: the victims a pending preemptor would choose, and why others are spared",
          "[engine]") {
  Harness h(gpu_module({{"a", 3, 0}}));
  h.submit(0, TaskBuilder("low", "a").gpus(1).priority("low"));
  h.submit(1, TaskBuilder("mid", "a").gpus(1).priority("mid"));
  h.submit(2, TaskBuilder("top", "a").gpus(1).priority("high"));
  h.submit(3, TaskBuilder("peer", "a").gpus(1).priority("high"));
  const std::optional<Explanation> peer = h.engine->explain("peer");
  REQUIRE(peer.has_value());
  CHECK(peer->state == TaskState::admitted);  // it preempted `low`
  const std::optional<Explanation> low = h.engine->explain("low");
  REQUIRE(low.has_value());
  CHECK(low->preempted_by == "peer");
  CHECK(low->preempted_kind == PreemptionKind::in_team);
  REQUIRE(low->flavors.size() == 1);
  CHECK(low->flavors[0].verdict == "needs preemption, but no task may be preempted for it");
  std::vector<std::string> why;
  for (const CandidateExplanation& c : low->candidates) why.push_back(c.task + ": " + c.why);
  // Candidate order: lower priority first, then the most recently admitted.
  CHECK(why == std::vector<std::string>{"mid: priority 50 is not lower than the task's 10",
                                        "peer: priority 90 is not lower than the task's 10",
                                        "top: priority 90 is not lower than the task's 10"});
}

TEST_CASE("explain: an admitted task shows the flavor it holds, unknown ids give nothing",
          "[engine]") {
  Harness h(workshop_module());
  h.submit(0, TaskBuilder("a1", "team-a").gpus(3));
  const std::optional<Explanation> e = h.engine->explain("a1");
  REQUIRE(e.has_value());
  CHECK(e->state == TaskState::admitted);
  CHECK(e->flavor == "ml.g5.8xlarge");
  REQUIRE(e->flavors.size() == 1);
  CHECK(e->flavors[0].verdict == "admitted");
  CHECK(e->flavors[0].resources[0].in_use == 3);
  CHECK_FALSE(h.engine->explain("nope").has_value());
  // Explaining changes nothing.
  CHECK(h.advance(1).empty());
}

TEST_CASE("snapshot: usage per team, flavor and resource, tasks by state", "[engine]") {
  Harness h(workshop_module());
  h.submit(0, TaskBuilder("a1", "team-a").gpus(3));
  h.submit(1, TaskBuilder("a2", "team-a").gpus(4));
  h.submit(2, TaskBuilder("x", "nobody").gpus(1));
  const Snapshot s = h.engine->snapshot();
  CHECK(s.at == 2);
  CHECK(s.usage.size() == 8);  // 2 teams × 1 flavor × 4 charged resources
  CHECK(used(*h.engine, "team-a", "ml.g5.8xlarge", ir::Resource::gpu) == 3);
  const auto row = std::find_if(s.usage.begin(), s.usage.end(), [](const UsageRow& r) {
    return r.team == "team-a" && r.resource == ir::Resource::gpu;
  });
  REQUIRE(row != s.usage.end());
  CHECK(row->borrowed == 1);
  CHECK(row->borrowing_limit == 1);
  CHECK(s.cohort[0].quota == 4);
  CHECK(s.cohort[0].used == 3);
  CHECK(s.count(TaskState::admitted) == 1);
  CHECK(s.count(TaskState::pending) == 1);
  CHECK(s.count(TaskState::invalid) == 1);
  REQUIRE(s.tasks.size() == 3);
  CHECK(s.tasks[1].parked);
  CHECK(s.tasks[0].admitted_at == Time{0});
}

TEST_CASE("load_state: start from admitted and pending tasks, then decide one more", "[engine]") {
  Harness h(workshop_module());
  ClusterState state;
  state.at = 100 * kSecond;
  state.admitted.push_back(
      {TaskBuilder("a1", "team-a").gpus(3), 10 * kSecond, 20 * kSecond, std::nullopt});
  state.admitted.push_back({TaskBuilder("bad", "team-q").gpus(1), 0, 0, std::nullopt});
  state.pending.push_back({TaskBuilder("a2", "team-a").gpus(1), 30 * kSecond});
  const std::vector<LoadFailure> errors = h.engine->load_state(state);
  CHECK(errors == std::vector<LoadFailure>{{LoadFailure::List::admitted, 1, "unknown team `team-q`"}});
  CHECK(h.engine->now() == 100 * kSecond);
  CHECK(used(*h.engine, "team-a", "ml.g5.8xlarge", ir::Resource::gpu) == 3);

  auto d = h.submit(100 * kSecond, TaskBuilder("b1", "team-b").gpus(2));
  CHECK(ids_with(d, Outcome::preempted) == std::vector<std::string>{"a1"});
  CHECK(last_for(d, "b1")->outcome == Outcome::admitted);
  // The loaded pending task competed too: once a1 is back in the queue and parked, a2 fits.
  CHECK(last_for(d, "a2")->outcome == Outcome::admitted);
  // Into an engine that has tasks, every entry fails and nothing changes.
  const std::vector<LoadFailure> again = h.engine->load_state(state);
  REQUIRE(again.size() == 3);
  CHECK(again[2] == LoadFailure{LoadFailure::List::pending, 0, "a state can only be loaded into a fresh engine"});
}

TEST_CASE("export_state: a fresh engine loaded with it holds the same tasks and usage", "[engine]") {
  Harness h(workshop_module());
  h.submit(0, TaskBuilder("a1", "team-a").gpus(2).priority("training"));
  h.submit(5, TaskBuilder("b1", "team-b").gpus(2).priority("inference").label("project", "llm"));
  h.submit(6, TaskBuilder("a2", "team-a").gpus(2).duration(50));
  h.submit(7, TaskBuilder("bad", "team-q").gpus(1));  // invalid: never exported
  const ClusterState state = h.engine->export_state();
  CHECK(state.at == 7);
  std::vector<std::string> admitted, pending;
  for (const AdmittedTask& t : state.admitted) admitted.push_back(t.task.id);
  for (const PendingTask& t : state.pending) pending.push_back(t.task.id);
  CHECK(admitted == std::vector<std::string>{"a1", "b1"});
  CHECK(pending == std::vector<std::string>{"a2"});
  // Each task as it was submitted: its labels and duration, not the engine's resolved form.
  CHECK(state.admitted[1].task.labels == std::vector<std::pair<std::string, std::string>>{{"project", "llm"}});
  CHECK(state.admitted[1].task.priority == "inference");
  CHECK(state.pending[0].task.duration == Time{50});

  Harness next(workshop_module());
  CHECK(next.engine->load_state(state).empty());
  const Snapshot before = h.engine->snapshot(/*with_ended_tasks=*/false);
  // Parked heads load parked (issue 25: a restarted engine goes on exactly as this one).
  const Snapshot after = next.engine->snapshot();
  CHECK(after.usage == before.usage);
  CHECK(after.cohort == before.cohort);
  CHECK(after.tasks == before.tasks);
}

}  // namespace gov::engine::test
