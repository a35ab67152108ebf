// Quota arithmetic of a flat cohort (docs/kueue-reference.md §2), limits, exceeds-max vs waiting,
// idle-resource sharing and quantity printing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "runtime/engine/messages.hpp"
#include "runtime/engine/quota_state.hpp"
#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {

TEST_CASE("flat cohort arithmetic: the worked example of docs/kueue-reference.md §2", "[engine]") {
  // A N=8,B=4; B N=8,L=2; C N=4; usage (10, 3, 0).
  const ir::Module m = gpu_module({{"a", 8, 4}, {"b", 8, ir::kUnlimited, 2}, {"c", 4}});
  QuotaState quota(m);
  quota.add(0, 0, gpus(10));
  quota.add(1, 0, gpus(3));
  const auto gpu = ir::Resource::gpu;
  CHECK(quota.cohort_quota(0, gpu) == 14);     // pool = 8 + 2 + 4
  CHECK(quota.cohort_usage(0, gpu) == 10);     // poolUsed = 10 + max(0, 3 − 6) + 0
  CHECK(quota.available(0, 0, gpu) == 2);      // 0 + min(4, 8 − 10 + 4)
  CHECK(quota.max_capacity(0, 0, gpu) == 12);  // min(0 + 14, 8 + 4)
  CHECK(quota.available(1, 0, gpu) == 7);      // 3 + min(4, ∞)
  CHECK(quota.available(2, 0, gpu) == 4);      // 0 + 4
  CHECK(quota.max_capacity(1, 0, gpu) == 20);  // 6 + 14
  CHECK(quota.borrowing(0, 0, gpu));
  CHECK_FALSE(quota.borrowing(1, 0, gpu));
  quota.subtract(0, 0, gpus(10));
  CHECK(quota.cohort_usage(0, gpu) == 0);
  CHECK(quota.available(0, 0, gpu) == 12);  // min(14, 8 + 4)
}

TEST_CASE("a team can use the whole cohort without limits, nominal + borrowing limit with one",
          "[engine]") {
  Harness h(gpu_module({{"a", 2}, {"b", 2, 1}, {"c", 4}}));
  auto all = h.submit(0, TaskBuilder("a1", "a").gpus(8));
  CHECK(all[0].outcome == Outcome::admitted);
  CHECK(all[0].borrowed == ResourceAmounts{{ir::Resource::gpu, 6}});
  h.cancel(1, "a1");
  auto limited = h.submit(2, TaskBuilder("b1", "b").gpus(4));
  CHECK(limited[0].reason == PendingReason::exceeds_max_quota);
  CHECK(limited[0].maximum == ResourceAmounts{{ir::Resource::gpu, 3}});
  CHECK(h.submit(3, TaskBuilder("b2", "b").gpus(3))[0].outcome == Outcome::admitted);
}

TEST_CASE(
    "lending limits cap what the cohort may use of a team's quota, dont-lend keeps it private",
    "[engine]") {
  SECTION("lending limit") {
    Harness h(gpu_module({{"a", 2}, {"b", 4, ir::kUnlimited, 1}}));
    // a can use its 2 and the 1 that b lends: maximum 3.
    auto d = h.submit(0, TaskBuilder("a1", "a").gpus(4));
    CHECK(d[0].reason == PendingReason::exceeds_max_quota);
    CHECK(d[0].maximum == ResourceAmounts{{ir::Resource::gpu, 3}});
    CHECK(h.submit(1, TaskBuilder("a2", "a").gpus(3))[0].outcome == Outcome::admitted);
    // b still has its private 3 and uses them without preempting anyone.
    auto b = h.submit(2, TaskBuilder("b1", "b").gpus(3));
    CHECK(b[0].outcome == Outcome::admitted);
  }
  SECTION("dont-lend") {
    ir::Module m = gpu_module({{"a", 2}, {"b", 4}});
    m.teams[1].sharing = ir::Sharing::dont_lend;
    Harness h(std::move(m));
    auto d = h.submit(0, TaskBuilder("a1", "a").gpus(3));
    CHECK(d[0].reason == PendingReason::exceeds_max_quota);
    CHECK(d[0].maximum == ResourceAmounts{{ir::Resource::gpu, 2}});
    // A dont-lend team may still borrow what others lend.
    auto b = h.submit(1, TaskBuilder("b1", "b").gpus(6));
    CHECK(b[0].outcome == Outcome::admitted);
    CHECK(b[0].borrowed == ResourceAmounts{{ir::Resource::gpu, 2}});
  }
}

TEST_CASE("a `lend` team never borrows", "[engine]") {
  ir::Module m = gpu_module({{"a", 2}, {"b", 2}});
  m.teams[0].sharing = ir::Sharing::lend;
  Harness h(std::move(m));
  auto d = h.submit(0, TaskBuilder("a1", "a").gpus(3));
  CHECK(d[0].reason == PendingReason::exceeds_max_quota);
  CHECK(d[0].maximum == ResourceAmounts{{ir::Resource::gpu, 2}});
  // ... but it lends: b borrows a's idle quota.
  CHECK(h.submit(1, TaskBuilder("b1", "b").gpus(4))[0].outcome == Outcome::admitted);
}

TEST_CASE("borrow limits are per resource", "[engine]") {
  // gpu may be borrowed (limit 1), vcpu not at all (limit 0).
  ir::Module m;
  m.strings = {""};
  m.flavors.push_back(make_flavor("node", amounts(1, 0, 4000), 4));
  for (const char* name : {"a", "b"}) {
    m.teams.push_back(make_team(name, {make_quota(0, amounts(2, 0, 8000), amounts(1, 0, 0))}));
  }
  Harness h(std::move(m));
  auto gpu_borrow = h.submit(0, TaskBuilder("a1", "a").gpus(3).vcpu_millis(8000));
  CHECK(gpu_borrow[0].outcome == Outcome::admitted);
  CHECK(gpu_borrow[0].borrowed == ResourceAmounts{{ir::Resource::gpu, 1}});
  h.cancel(1, "a1");
  auto cpu_borrow = h.submit(2, TaskBuilder("a2", "a").gpus(1).vcpu_millis(8500));
  CHECK(cpu_borrow[0].reason == PendingReason::exceeds_max_quota);
  CHECK(cpu_borrow[0].maximum == ResourceAmounts{{ir::Resource::vcpu, 8000}});
  CHECK(cpu_borrow[0].message ==
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor node, "
        "previously considered "
        "podsets requests (0) + current podset request (8500m) > maximum capacity (8)");
}

TEST_CASE(
    "exceeds-max-quota when the request is above the maximum, waiting-for-quota when above what is "
    "free",
    "[engine]") {
  Harness h(gpu_module({{"a", 2, 1}, {"b", 2, 0}}));
  h.submit(0, TaskBuilder("b1", "b").gpus(2));
  h.submit(0, TaskBuilder("a1", "a").gpus(1));
  // a has 1 of its own left and 0 to borrow: 2 more are short, but 3 is within its maximum.
  auto waiting = h.submit(1, TaskBuilder("a2", "a").gpus(3));
  REQUIRE(waiting.size() == 1);
  CHECK(waiting[0].reason == PendingReason::waiting_for_quota);
  CHECK(waiting[0].short_of == ResourceAmounts{{ir::Resource::gpu, 2}});
  CHECK(waiting[0].message ==
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
        "flavor gpu, 2 more "
        "needed");
  auto never = h.submit(2, TaskBuilder("a3", "a").gpus(4));
  CHECK(never[0].reason == PendingReason::exceeds_max_quota);
  CHECK(never[0].maximum == ResourceAmounts{{ir::Resource::gpu, 3}});
}

TEST_CASE("idle-resource sharing makes unreserved capacity borrowable", "[engine]") {
  ir::Module m = gpu_module({{"a", 1}, {"b", 1}});
  m.flavors[0].capacity = 4;  // 2 instances reserved by no team
  SECTION("off: only the teams' quota") {
    Harness h(m);
    CHECK(h.submit(0, TaskBuilder("a1", "a").gpus(3))[0].reason ==
          PendingReason::exceeds_max_quota);
  }
  SECTION("on: the cohort's own quota too") {
    m.settings.idle_resource_sharing = true;
    Harness h(m);
    auto d = h.submit(0, TaskBuilder("a1", "a").gpus(4));
    CHECK(d[0].outcome == Outcome::admitted);
    CHECK(d[0].borrowed == ResourceAmounts{{ir::Resource::gpu, 3}});
    // b reclaims its own nominal; nothing is left of the cohort's quota.
    auto b = h.submit(1, TaskBuilder("b1", "b").gpus(1));
    CHECK(b[0].reason == PendingReason::waiting_for_preemption);
  }
}

TEST_CASE("quantities print as Kubernetes prints them", "[engine]") {
  using ir::Resource;
  CHECK(quantity_text(Resource::gpu, 0) == "0");
  CHECK(quantity_text(Resource::gpu, 1) == "1");
  CHECK(quantity_text(Resource::gpu, 1000) == "1k");
  CHECK(quantity_text(Resource::gpu, 1500) == "1500");
  CHECK(quantity_text(Resource::vcpu, 500) == "500m");
  CHECK(quantity_text(Resource::vcpu, 1500) == "1500m");
  CHECK(quantity_text(Resource::vcpu, 64000) == "64");
  CHECK(quantity_text(Resource::vcpu, 1000000) == "1k");
  CHECK(quantity_text(Resource::memory, 2048) == "2Gi");
  CHECK(quantity_text(Resource::memory, 1536) == "1536Mi");
  CHECK(quantity_text(Resource::memory, 262144) == "256Gi");
  CHECK(quantity_text(Resource::memory, 1048576) == "1Ti");
}

TEST_CASE("remembered reason texts are those rendered anew whatever shares their slot", "[engine]") {
  const ir::Module m = workshop_module();
  ReasonTexts texts(m, MessageDialect::head);
  // More reasons than slots, each field varied, each asked for twice (the second time mostly
  // from its slot, or after another reason took it): every text is reason_text's.
  std::vector<FlavorReason> reasons;
  for (Amount lack = 1; lack <= 600; ++lack) {
    for (FlavorReason::Kind kind : {FlavorReason::Kind::insufficient_unused, FlavorReason::Kind::exceeds_max_capacity}) {
      FlavorReason reason;
      reason.kind = kind;
      reason.resource = lack % 3 == 0 ? ir::Resource::memory : ir::Resource::gpu;
      reason.lack = lack;
      reason.request = lack + lack % 7;
      reason.assumed = lack % 5;
      reason.max_capacity = lack % 11;
      reason.pod_set = static_cast<uint32_t>(lack % 2);
      reasons.push_back(reason);
    }
  }
  for (int round = 0; round < 2; ++round) {
    for (const FlavorReason& reason : reasons) {
      INFO("lack " << reason.lack << ", request " << reason.request);
      CHECK(texts.text(reason) == reason_text(m, MessageDialect::head, reason));
    }
  }
  std::string message;
  render_assignment_message(texts, std::span<const FlavorReason>(reasons.data(), 2), message);
  CHECK(message ==
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor ml.g5.8xlarge, "
        "previously considered podsets requests (1) + current podset request (2) > maximum capacity (1), "
        "insufficient unused quota for nvidia.com/gpu in flavor ml.g5.8xlarge, 1 more needed");
}

TEST_CASE("EFA is never charged: it neither appears in usage nor makes a task wait", "[engine]") {
  Harness h(workshop_module());
  auto d = h.submit(0, TaskBuilder("a1", "team-a").gpus(1).efa(32));
  REQUIRE(d.size() == 1);
  CHECK(d[0].outcome == Outcome::admitted);
  CHECK(d[0].usage == ResourceAmounts{{ir::Resource::gpu, 1}});
  auto whole = h.submit(1, TaskBuilder("a2", "team-a").instances(1));
  CHECK(whole[0].usage == ResourceAmounts{{ir::Resource::gpu, 1},
                                          {ir::Resource::vcpu, 32000},
                                          {ir::Resource::memory, 131072}});
}

}  // namespace gov::engine::test
