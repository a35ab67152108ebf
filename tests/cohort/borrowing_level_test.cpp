// The borrowing level in a tree of cohorts (QuotaState::borrowing_level, Kueue HEAD's
// FindHeightOfLowestSubtreeThatFits with getNodeHeight): hand-computed heights in Kueue's
// "reclaim in complex hierarchy" tree, and a one-level tree against the flat cohort's 0/1 flag.
// The decisions it changes are the corpus's (tests/corpus/cohort-tree-borrowing-level-*.gov).
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "runtime/engine/quota_state.hpp"
#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

struct Node {
  std::string name;
  int32_t parent = -1;
  ir::Amount own = 0;  // the cohort's own GPUs
};

/// `module` with the cohorts `nodes` (no limits) and team t in cohort `team_cohorts[t]`.
ir::Module with_cohorts(ir::Module module, const std::vector<Node>& nodes, const std::vector<int32_t>& team_cohorts) {
  for (const Node& n : nodes) {
    ir::CohortNode node;
    node.name = n.name;
    node.parent = n.parent;
    ir::FlavorQuota quota;
    quota.flavor = 0;
    quota.nominal = gpus(n.own);
    quota.borrowing_limit = ir::unlimited_columns();
    quota.lending_limit = ir::unlimited_columns();
    node.quotas.push_back(quota);
    module.cohorts.push_back(node);
  }
  for (size_t t = 0; t < team_cohorts.size(); ++t) module.teams[t].cohort = team_cohorts[t];
  return module;
}

}  // namespace

TEST_CASE("borrowing level: the height of the lowest subtree that fits in a deep tree", "[hiercases]") {
  // r(0) → c11(4), c12(4); c11 → c21(4), c22(4), c23(4); c21 → c31(4), c32(4); teams (all 0):
  // q1 in c12, q2 in c23, q3 in c22, q4 in c32, q5 in c31, q6 in the empty-handed c40 under r.
  // Heights: c31 = c32 = c22 = c23 = c12 = 1, c21 = 2, c11 = 3, r = 4.
  const ir::Module module = with_cohorts(gpu_module({{"q1", 0}, {"q2", 0}, {"q3", 0}, {"q4", 0}, {"q5", 0}, {"q6", 2}}),
                                         {{"r", -1, 0},
                                          {"c11", 0, 4},
                                          {"c12", 0, 4},
                                          {"c21", 1, 4},
                                          {"c22", 1, 4},
                                          {"c23", 1, 4},
                                          {"c31", 3, 4},
                                          {"c32", 3, 4},
                                          {"c40", 0, 0}},
                                         {2, 5, 4, 7, 6, 8});
  QuotaState quota(module);
  REQUIRE(quota.tree());
  const auto gpu = ir::Resource::gpu;
  const uint32_t q5 = 4;
  CHECK(quota.borrowing_level(q5, 0, gpu, 0) == 0);
  CHECK(quota.borrowing_level(q5, 0, gpu, 4) == 1);    // c31's own 4
  CHECK(quota.borrowing_level(q5, 0, gpu, 5) == 2);    // c21's subtree: 12
  CHECK(quota.borrowing_level(q5, 0, gpu, 13) == 3);   // c11's subtree: 24
  CHECK(quota.borrowing_level(q5, 0, gpu, 25) == 4);   // r's subtree: 28 + q6's 2
  CHECK(quota.borrowing_level(q5, 0, gpu, 31) == 4);   // fits nowhere: the root's height
  // Usage below moves the level up: q4 takes c32's 4 and 4 more of c21's, c21 has 4 left.
  quota.add(3, 0, gpus(8));
  CHECK(quota.borrowing_level(q5, 0, gpu, 4) == 1);
  CHECK(quota.borrowing_level(q5, 0, gpu, 5) == 3);
  // A team within its nominal never borrows; past it, the level counts from its own cohort.
  const uint32_t q6 = 5;
  CHECK(quota.borrowing_level(q6, 0, gpu, 2) == 0);
  CHECK(quota.borrowing_level(q6, 0, gpu, 3) == 4);  // c40 holds nothing of its own: r
  quota.subtract(3, 0, gpus(8));
  CHECK(quota.borrowing_level(q5, 0, gpu, 5) == 2);
}

TEST_CASE("borrowing level: a one-level tree and the flat cohort give the same 0 or 1", "[hiercases]") {
  const ir::Module flat_module = gpu_module({{"a", 8, 4}, {"b", 8, ir::kUnlimited, 2}, {"c", 4}});
  const ir::Module tree_module = with_cohorts(flat_module, {{"root", -1, 0}}, {0, 0, 0});
  QuotaState flat(flat_module);
  QuotaState tree(tree_module);
  REQUIRE(tree.tree());
  std::mt19937 random(2026);
  std::vector<ir::Amount> held(3, 0);
  const auto gpu = ir::Resource::gpu;
  for (int step = 0; step < 300; ++step) {
    const auto team = static_cast<uint32_t>(random() % 3);
    const ir::Amount n = static_cast<ir::Amount>(random() % 4) + 1;
    if (random() % 2 == 0 || held[team] < n) {
      flat.add(team, 0, gpus(n));
      tree.add(team, 0, gpus(n));
      held[team] += n;
    } else {
      flat.subtract(team, 0, gpus(n));
      tree.subtract(team, 0, gpus(n));
      held[team] -= n;
    }
    for (uint32_t t = 0; t < 3; ++t) {
      for (ir::Amount extra = 0; extra <= 12; ++extra) {
        const uint8_t level = flat.borrowing_level(t, 0, gpu, extra);
        CHECK(level == (flat.borrowing_with(t, 0, gpu, extra) ? 1 : 0));
        CHECK(tree.borrowing_level(t, 0, gpu, extra) == level);
      }
    }
  }
}

}  // namespace gov::engine::test
