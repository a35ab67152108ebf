// The public HyperPod walkthrough: the docs/interfaces.md decision stream line for line, and the
// four steps of docs/semantics.md §4, in both message dialects.
#include <catch2/catch.hpp>

#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

using Lines = std::vector<std::string>;

Lines run(Harness& h, Time at, std::vector<Event> events) {
  return json_lines(h.engine->step(at, events));
}

}  // namespace

TEST_CASE("walkthrough reproduces the docs/interfaces.md decision stream line for line", "[engine]") {
  Harness h(workshop_module());
  Lines lines;
  const auto append = [&lines](const Lines& more) {
    lines.insert(lines.end(), more.begin(), more.end());
  };
  append(
      run(h, 0,
          {Event::submit(
              TaskBuilder("a1", "team-a").type("ml.g5.8xlarge").gpus(3).duration(600 * kSecond))}));
  append(run(h, 5 * kSecond,
             {Event::submit(TaskBuilder("b1", "team-b")
                                .type("ml.g5.8xlarge")
                                .priority("experimentation")
                                .instances(2)
                                .label("project", "llm"))}));
  append(run(h, 90 * kSecond, {Event::finish("b1")}));
  append(run(h, 95 * kSecond, {Event::cancel("a1")}));

  const Lines expected = {
      R"j({"at":0,"task":"a1","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":3},"borrowed":{"gpu":1},"message":"Quota reserved in ClusterQueue team-a"})j",
      R"j({"at":5,"task":"b1","outcome":"pending","team":"team-b","reason":"waiting-for-preemption","victims":["a1"],"message":"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor ml.g5.8xlarge, 1 more needed. Pending the preemption of 1 workload(s)"})j",
      R"j({"at":5,"task":"a1","outcome":"preempted","team":"team-a","by":"b1","kind":"reclaim","message":"Preempted to accommodate a workload (UID: b1) due to reclamation within the cohort"})j",
      R"j({"at":5,"task":"b1","outcome":"admitted","team":"team-b","flavor":"ml.g5.8xlarge","usage":{"gpu":2,"vcpu":64,"memory_gib":256},"borrowed":{},"message":"Quota reserved in ClusterQueue team-b"})j",
      R"j({"at":5,"task":"a1","outcome":"pending","team":"team-a","reason":"waiting-for-quota","message":"Workload no longer fits after processing another workload"})j",
      R"j({"at":5,"task":"a1","outcome":"pending","team":"team-a","reason":"waiting-for-quota","short":{"gpu":1},"message":"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor ml.g5.8xlarge, 1 more needed"})j",
      R"j({"at":90,"task":"b1","outcome":"finished","team":"team-b"})j",
      R"j({"at":90,"task":"a1","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":3},"borrowed":{"gpu":1},"message":"Quota reserved in ClusterQueue team-a"})j",
      R"j({"at":95,"task":"a1","outcome":"cancelled","team":"team-a"})j",
  };
  CHECK(lines == expected);
}

TEST_CASE("walkthrough: the four steps of docs/semantics.md §4", "[engine]") {
  Harness h(workshop_module());

  // 1. team-a submits 3 GPUs, no class: admitted, borrowing 1 GPU from team-b.
  auto step1 = h.submit(0, TaskBuilder("a1", "team-a").gpus(3));
  REQUIRE(step1.size() == 1);
  CHECK(step1[0].outcome == Outcome::admitted);
  CHECK(step1[0].borrowed == ResourceAmounts{{ir::Resource::gpu, 1}});

  // 2. team-b submits 2 GPUs, no class: a1 is reclaimed, b1 admitted in the next cycle, a1 waits
  // for 1 GPU.
  auto step2 = h.submit(10 * kSecond, TaskBuilder("b1", "team-b").gpus(2));
  REQUIRE(step2.size() == 5);
  CHECK(step2[0].reason == PendingReason::waiting_for_preemption);
  CHECK(step2[1].outcome == Outcome::preempted);
  CHECK(step2[1].kind == PreemptionKind::reclaim);
  CHECK(step2[2].outcome == Outcome::admitted);
  CHECK(step2[2].task == "b1");
  CHECK(step2[3].message == "Workload no longer fits after processing another workload");
  CHECK(step2[4].short_of == ResourceAmounts{{ir::Resource::gpu, 1}});

  // 3. team-b submits 2 GPUs as experimentation: b1 is preempted in-team, b2 admitted, b1 waits.
  auto step3 =
      h.submit(20 * kSecond, TaskBuilder("b2", "team-b").gpus(2).priority("experimentation"));
  REQUIRE(step3.size() >= 3);
  CHECK(step3[0].task == "b2");
  CHECK(step3[0].reason == PendingReason::waiting_for_preemption);
  CHECK(step3[0].victims == std::vector<std::string>{"b1"});
  CHECK(step3[1].task == "b1");
  CHECK(step3[1].kind == PreemptionKind::in_team);
  CHECK(step3[1].message ==
        "Preempted to accommodate a workload (UID: b2) due to prioritization in the ClusterQueue");
  CHECK(step3[2].task == "b2");
  CHECK(step3[2].outcome == Outcome::admitted);
  const Decision* b1 = last_for(step3, "b1");
  REQUIRE(b1 != nullptr);
  CHECK(b1->outcome == Outcome::pending);
  CHECK(b1->reason == PendingReason::waiting_for_quota);
  CHECK(b1->message ==
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
        "flavor ml.g5.8xlarge, "
        "1 more needed");
  CHECK(last_for(step3, "a1") == nullptr);  // a1's pending message did not change

  // 4. a 4-GPU team-a task never fits: 2 nominal + 1 borrowable.
  auto step4 = h.submit(30 * kSecond, TaskBuilder("a2", "team-a").gpus(4));
  REQUIRE(step4.size() == 1);
  CHECK(step4[0].reason == PendingReason::exceeds_max_quota);
  CHECK(step4[0].maximum == ResourceAmounts{{ir::Resource::gpu, 3}});
  CHECK(step4[0].message ==
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor "
        "ml.g5.8xlarge, "
        "previously considered podsets requests (0) + current podset request (4) > maximum "
        "capacity (3)");
}

TEST_CASE("walkthrough in the Kueue v0.9 dialect prints the HyperPod-era texts", "[engine]") {
  EngineOptions options;
  options.dialect = MessageDialect::kueue_v0_9;
  Harness h(workshop_module(), options);
  h.submit(0, TaskBuilder("a1", "team-a").gpus(3));
  h.submit(10 * kSecond, TaskBuilder("b1", "team-b").gpus(2));
  auto step3 =
      h.submit(20 * kSecond, TaskBuilder("b2", "team-b").gpus(2).priority("experimentation"));
  const Decision* b1 = last_for(step3, "b1");
  REQUIRE(b1 != nullptr);
  // Kueue v0.9.0 checked the borrowing limit first: 2 used + 2 > 2 nominal + 1.
  CHECK(b1->message ==
        "couldn't assign flavors to pod set main: borrowing limit for nvidia.com/gpu in flavor "
        "ml.g5.8xlarge exceeded");
  CHECK(step3[0].message ==
        "couldn't assign flavors to pod set main: borrowing limit for nvidia.com/gpu in flavor "
        "ml.g5.8xlarge exceeded. "
        "Pending the preemption of 1 workload(s)");
  auto step4 = h.submit(30 * kSecond, TaskBuilder("a2", "team-a").gpus(4));
  REQUIRE(step4.size() == 1);
  CHECK(step4[0].reason ==
        PendingReason::exceeds_max_quota);  // decisions do not change with the dialect
  CHECK(step4[0].message ==
        "couldn't assign flavors to pod set main: borrowing limit for nvidia.com/gpu in flavor "
        "ml.g5.8xlarge exceeded");
}

}  // namespace gov::engine::test
