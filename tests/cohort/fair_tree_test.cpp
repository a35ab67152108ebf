// Fair-sharing preemption in a tree of cohorts (issue 20): the shares of teams and cohorts as
// Kueue HEAD computes them (DominantResourceShare at each level), and the engine's self-check of
// the victims such a search takes. The decisions are the corpus's (tests/corpus/kueue-fair-tree-*.gov,
// cohort-tree-fair-preemption.gov) and the random trees of tests/engine/property_test.cpp.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/preemption.hpp"
#include "runtime/engine/task_store.hpp"
#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

/// A cohort of one flavor: its name, parent and own GPUs, no limits, weight in millionths.
struct GpuCohort {
  std::string name;
  int32_t parent = -1;
  ir::Amount own = 0;
  int64_t weight_micros = model::kWeightScale;
};

ir::Module tree_module(const std::vector<GpuTeam>& teams, const std::vector<GpuCohort>& cohorts,
                       const std::vector<int32_t>& team_cohorts) {
  ir::Module module = gpu_module(teams, /*fair_sharing=*/true);
  for (const GpuCohort& c : cohorts) {
    ir::CohortNode node;
    node.name = c.name;
    node.parent = c.parent;
    node.fair_share_weight_micros = c.weight_micros;
    node.quotas.push_back(make_quota(0, gpus(c.own), unlimited()));
    module.cohorts.push_back(node);
  }
  for (size_t t = 0; t < team_cohorts.size(); ++t) module.teams[t].cohort = team_cohorts[t];
  return module;
}

// Kueue's "hierarchical preemption" tree (TestFairPreemptions): each cohort has 5 GPUs of its
// own, each team 1; a and left weigh 2, e 0.99.
ir::Module hierarchical_case() {
  const int64_t w = model::kWeightScale;
  std::vector<GpuTeam> teams = {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}};
  ir::Module module = tree_module(teams, {{"root", -1, 5}, {"left", 0, 5, 2 * w}, {"right", 0, 5}}, {1, 1, 0, 2, 2});
  const int64_t weights[] = {2 * w, w, w, w, 99 * w / 100};
  for (size_t t = 0; t < module.teams.size(); ++t) module.teams[t].fair_share_weight_micros = weights[t];
  return module;
}

}  // namespace

TEST_CASE("shares in a tree are Kueue's dominant resource shares of teams and cohorts", "[fairtree]") {
  const ir::Module module = hierarchical_case();
  QuotaState quota(module);
  REQUIRE(quota.tree());
  // Kueue's state, with the incoming task of a (5 GPUs) added: a 5, b 5, c 5, d 5, e 5.
  for (uint32_t t = 0; t < 5; ++t) quota.add(t, 0, gpus(5));
  // The root could hold 20: every share is × 1000 / 20.
  // a: 4 past its 1, weight 2 (in left, whose potential is the root's 20): 4 × 50 / 2 = 100.
  CHECK(team_share_in_tree(quota, module, 0).weighted() == Approx(100));
  CHECK(team_share_in_tree(quota, module, 1).weighted() == Approx(200));  // b: 4 past 1
  CHECK(team_share_in_tree(quota, module, 2).weighted() == Approx(200));  // c, at the root
  CHECK(team_share_in_tree(quota, module, 4).weighted() == Approx(200 / 0.99));
  // left: 10 used against a subtree quota of 7, weight 2; right: 10 against 7, weight 1.
  CHECK(cohort_share(quota, module, 1).weighted() == Approx(75));
  CHECK(cohort_share(quota, module, 2).weighted() == Approx(150));
  CHECK(cohort_share(quota, module, 2).borrowing);
  // A root borrows from nobody.
  CHECK_FALSE(cohort_share(quota, module, 0).borrowing);
  CHECK(cohort_share(quota, module, 0).weighted() == 0);
  // Without b's and the incoming task's usage beyond the quotas left uses no more than it has.
  quota.subtract(0, 0, gpus(4));
  quota.subtract(1, 0, gpus(1));
  CHECK_FALSE(cohort_share(quota, module, 1).borrowing);
  CHECK(cohort_share(quota, module, 1).weighted() == 0);
}

TEST_CASE("a cohort of weight 0 that borrows has an infinite share, one that does not a share of 0", "[fairtree]") {
  // root ── a-cohort (1 of its own, weight 0) ── a (0); b (0) at the root.
  const ir::Module module = tree_module({{"a", 0}, {"b", 0}}, {{"root", -1, 0}, {"a-cohort", 0, 1, 0}}, {1, 0});
  QuotaState quota(module);
  quota.add(0, 0, gpus(1));
  CHECK_FALSE(cohort_share(quota, module, 1).zero_weight_borrows());
  CHECK(cohort_share(quota, module, 1).weighted() == 0);
  quota.add(0, 0, gpus(1));
  CHECK(cohort_share(quota, module, 1).zero_weight_borrows());
  CHECK(compare_drs(cohort_share(quota, module, 1), team_share_in_tree(quota, module, 1)) > 0);
}

TEST_CASE("the self-check reports a fair-sharing victim taken through a cohort that did not borrow or from another tree",
          "[fairtree]") {
  // root ── left (2) ── p (0); root ── right (1) ── b (0); other ── z (0).
  const ir::Module module = tree_module({{"p", 0}, {"b", 0}, {"z", 0}},
                                        {{"root", -1, 0}, {"left", 0, 2}, {"right", 0, 1}, {"other", -1, 1}}, {1, 2, 3});
  QuotaState quota(module);
  TaskStore tasks(module.teams.size(), module.flavors.size(), std::vector<bool>(module.teams.size(), false));
  const auto admitted = [&](std::string id, int32_t team, ir::Amount n) {
    Task task;
    task.id = std::move(id);
    task.team = team;
    task.request = gpus(n);
    task.state = TaskState::admitted;
    task.flavor = 0;
    quota.add(static_cast<uint32_t>(team), 0, task.request);
    return tasks.add(std::move(task), /*claim_id=*/true);
  };
  const uint32_t b1 = admitted("b1", 1, 1);
  const uint32_t z1 = admitted("z1", 2, 1);
  std::vector<std::string> failures;
  const std::vector<Target> victims = {{b1, PreemptionKind::fair_sharing, false}};
  // b1 uses right's own quota: right does not borrow, Kueue's walk prunes it.
  self_check_fair_tree_victims(module, quota, {}, tasks, /*preemptor_team=*/0, victims, 7, failures);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0] ==
        "`b1` preempted by fair sharing through cohort `right`, which used no more than its subtree quota, at time 7");
  // With b borrowing 1 more past right's quota the same victim is right.
  failures.clear();
  const uint32_t b2 = admitted("b2", 1, 1);
  self_check_fair_tree_victims(module, quota, {}, tasks, 0, victims, 7, failures);
  CHECK(failures.empty());
  // ... but not against the usage the search saw when it was only b1's.
  std::vector<Resources> start;
  for (uint32_t t = 0; t < quota.team_count(); ++t) start.push_back(quota.usage(t, 0));
  start[1] = gpus(1);
  self_check_fair_tree_victims(module, quota, start, tasks, 0, victims, 7, failures);
  CHECK(failures.size() == 1);
  // z is in another tree.
  failures.clear();
  const std::vector<Target> outside = {{z1, PreemptionKind::fair_sharing, false}};
  self_check_fair_tree_victims(module, quota, {}, tasks, 0, outside, 7, failures);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0] == "`z1` preempted by fair sharing from team `z` outside the tree of team `p` at time 7");
  // The preemptor's own team is never checked.
  failures.clear();
  const std::vector<Target> own = {{b2, PreemptionKind::in_team, false}};
  self_check_fair_tree_victims(module, quota, {}, tasks, /*preemptor_team=*/1, own, 7, failures);
  CHECK(failures.empty());
}

}  // namespace gov::engine::test
