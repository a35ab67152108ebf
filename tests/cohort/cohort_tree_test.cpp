// Issue 20's trees of cohorts: the quota formulas up the tree (QuotaState against hand-computed
// Kueue numbers, and a one-level tree against the flat cohort's formulas), and the tree through
// the `gov` command (inspect, diff, export and import). The decisions are the corpus's
// (tests/corpus/cohort-tree*.gov, kueue-hierarchical-*.gov).
#include <catch2/catch.hpp>

#include <random>
#include <tuple>
#include <string>

#include "runtime/engine/quota_state.hpp"
#include "tests/engine/engine_test_support.hpp"
#include "tests/check/json_reader.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace gov::engine::test {
namespace {

/// `module` with cohorts `nodes` (name, parent, own GPUs, borrowing limit, lending limit) and each
/// team in the cohort `team_cohorts` gives.
ir::Module with_tree(ir::Module module, const std::vector<std::tuple<std::string, int32_t, ir::Amount, ir::Amount, ir::Amount>>& nodes,
                     const std::vector<int32_t>& team_cohorts) {
  for (const auto& [name, parent, own, borrowing, lending] : nodes) {
    ir::CohortNode node;
    node.name = name;
    node.parent = parent;
    ir::FlavorQuota quota;
    quota.flavor = 0;
    quota.nominal = gpus(own);
    quota.borrowing_limit = ir::unlimited_columns();
    quota.borrowing_limit[ir::index(ir::Resource::gpu)] = borrowing;
    quota.lending_limit[ir::index(ir::Resource::gpu)] = lending;
    node.quotas.push_back(quota);
    module.cohorts.push_back(node);
  }
  for (size_t t = 0; t < team_cohorts.size(); ++t) module.teams[t].cohort = team_cohorts[t];
  return module;
}

}  // namespace

TEST_CASE("a one-level tree has the flat cohort's formulas", "[hier]") {
  // The worked example of docs/kueue-reference.md §2 (A N=8,B=4; B N=8,L=2; C N=4), flat and as
  // one root holding all three teams, through the same random usage changes.
  const ir::Module flat_module = gpu_module({{"a", 8, 4}, {"b", 8, ir::kUnlimited, 2}, {"c", 4}});
  const ir::Module tree_module = with_tree(flat_module, {{"root", -1, 0, ir::kUnlimited, ir::kUnlimited}}, {0, 0, 0});
  QuotaState flat(flat_module);
  QuotaState tree(tree_module);
  REQUIRE(tree.tree());
  REQUIRE_FALSE(flat.tree());
  std::mt19937 random(20);
  std::vector<ir::Amount> held(3, 0);
  const auto gpu = ir::Resource::gpu;
  for (int step = 0; step < 500; ++step) {
    const auto team = static_cast<uint32_t>(random() % 3);
    const ir::Amount n = static_cast<ir::Amount>(random() % 5) + 1;
    if (random() % 2 == 0 || held[team] < n) {
      flat.add(team, 0, gpus(n));
      tree.add(team, 0, gpus(n));
      held[team] += n;
    } else {
      flat.subtract(team, 0, gpus(n));
      tree.subtract(team, 0, gpus(n));
      held[team] -= n;
    }
    CHECK(tree.cohort_usage(0, gpu) == flat.cohort_usage(0, gpu));
    for (uint32_t t = 0; t < 3; ++t) {
      CHECK(tree.available(t, 0, gpu) == flat.available(t, 0, gpu));
      CHECK(tree.max_capacity(t, 0, gpu) == flat.max_capacity(t, 0, gpu));
    }
  }
  CHECK(tree.cohort_quota(0, gpu) == flat.cohort_quota(0, gpu));
}

TEST_CASE("three levels: subtree quotas, usage up the tree, available within every ancestor's limit", "[hier]") {
  // org (own 2) → eng (own 0, borrowing limit 1) → web (N=1), ml (N=1); org → sales (lending
  // limit 3) → crm (N=4).
  const ir::Module module = with_tree(gpu_module({{"web", 1}, {"ml", 1}, {"crm", 4}}),
                                      {{"org", -1, 2, ir::kUnlimited, ir::kUnlimited},
                                       {"eng", 0, 0, 1, ir::kUnlimited},
                                       {"sales", 0, 0, ir::kUnlimited, 3}},
                                      {1, 1, 2});
  QuotaState quota(module);
  const auto gpu = ir::Resource::gpu;
  // SQ(eng) = 1 + 1; SQ(sales) = 4, local 1, lends 3; SQ(org) = 2 + 2 + 3.
  CHECK(quota.cohort_subtree_quota(1, 0, gpu) == 2);
  CHECK(quota.cohort_subtree_quota(2, 0, gpu) == 4);
  CHECK(quota.cohort_subtree_quota(0, 0, gpu) == 7);
  // web: potential = min(0 + min(0 + 7, 2 + 1), 1 + ∞) = 3: eng's limit, not the org's 7.
  CHECK(quota.max_capacity(0, 0, gpu) == 3);
  CHECK(quota.available(0, 0, gpu) == 3);
  // crm: its cohort keeps 1 of its 4 (lending limit 3): 1 + the org's 7.
  CHECK(quota.max_capacity(2, 0, gpu) == 8);
  quota.add(0, 0, gpus(3));  // web takes all it can: eng uses 3, of which 1 past its subtree
  CHECK(quota.cohort_node_usage(1, 0, gpu) == 3);
  CHECK(quota.cohort_node_usage(0, 0, gpu) == 3);
  CHECK(quota.available(0, 0, gpu) == 0);
  CHECK(quota.available(1, 0, gpu) == 0);      // ml shares eng's limit
  CHECK(quota.available(2, 0, gpu) == 5);      // crm: sales' local 1 + the org's 7 − 3
  CHECK(quota.may_reclaim_in_hierarchy(1, 0, gpu, 1));        // within ml's nominal
  CHECK_FALSE(quota.may_reclaim_in_hierarchy(0, 0, gpu, 1));  // eng and the org are both full past it
  quota.add(2, 0, gpus(5));  // crm: 1 local in sales, 4 in the org
  CHECK(quota.cohort_node_usage(2, 0, gpu) == 5);
  CHECK(quota.cohort_node_usage(0, 0, gpu) == 7);
  CHECK(quota.cohort_usage(0, gpu) == 7);  // the roots' usage
  CHECK(quota.available(2, 0, gpu) == 0);
  quota.subtract(0, 0, gpus(3));
  quota.subtract(2, 0, gpus(5));
  for (uint32_t c = 0; c < 3; ++c) CHECK(quota.cohort_node_usage(c, 0, gpu) == 0);
  CHECK(quota.available(0, 0, gpu) == 3);
}

}  // namespace gov::engine::test

TEST_CASE("gov inspect prints the tree of cohorts with subtree quotas", "[hier]") {
  const gov::test::CommandResult text = run_gov("inspect tests/corpus/cohort-tree.gov");
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("  cohort org: a root, fair-share weight 1, teams none\n") != std::string::npos);
  CHECK(text.out.find("    cohort eng: parent org, fair-share weight 1, teams web, ml\n") != std::string::npos);
  // org: own 2 + eng's 2 + sales' 2.
  CHECK(text.out.find("      gpu                             2             none           none          6\n") !=
        std::string::npos);
  const gov::test::CommandResult json = run_gov("inspect --format json tests/corpus/cohort-tree.gov");
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("\"eng\":{\"parent\":\"org\",\"fair_share_weight\":1,\"teams\":[\"web\",\"ml\"]") != std::string::npos);
  // The whole document parses: a cohort's own quota once wrote its type's key twice
  // (`"own":"ml.g5.8xlarge":{...}`).
  const gov::test::Json inspected = gov::test::JsonReader(json.out).document();
  const gov::test::Json& org = inspected["cohorts"]["org"]["quotas"]["ml.g5.8xlarge"];
  CHECK(org["own"]["gpu"]["nominal"].literal() == "2");
  CHECK(org["subtree"]["gpu"].literal() == "6");
  CHECK(inspected["cohorts"]["eng"]["quotas"]["ml.g5.8xlarge"]["own"]["gpu"]["borrowing_limit"].literal() == "1");
}

TEST_CASE("gov export kueue writes the tree and gov import kueue reads it back", "[hier]") {
  gov::test::TempDir dir("cohort-tree-export");
  dir.copy_catalog();
  const gov::test::CommandResult exported = run_gov("export kueue tests/corpus/cohort-tree-quota.gov --naming plain");
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("  name: research\nspec:\n  parentName: org\n") != std::string::npos);
  CHECK(exported.out.find("  cohortName: research\n") != std::string::npos);
  CHECK(exported.out.find("lendingLimit: 1\n") != std::string::npos);
  dir.write("kueue.yaml", exported.out);
  const gov::test::CommandResult imported = run_gov("import kueue " + (dir / "kueue.yaml"));
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("cohort research {\n  parent = org\n  quota ml.g5.8xlarge { gpus = 2, vcpus = 64, memory = 256 GiB, "
                          "efa = 2, lending-limit = { gpus = 1, neuron = 0, vcpus = 32, memory = 128 GiB, efa = 1 } }\n}\n") !=
        std::string::npos);
  CHECK(imported.out.find("team lab {\n  cohort = research\n") != std::string::npos);
  // The import is the same policy: no difference in cluster terms.
  dir.write("imported.gov", imported.out);
  const gov::test::CommandResult diff =
      run_gov("diff --files tests/corpus/cohort-tree-quota.gov " + (dir / "imported.gov"));
  INFO(diff.out);
  CHECK(diff.out.find("no changes between") != std::string::npos);
}

TEST_CASE("gov diff reports a team moving cohorts and a parent change", "[hier]") {
  gov::test::TempDir dir("cohort-tree-diff");
  dir.copy_catalog();
  const std::string text = gov::test::read_text(gov::test::repo_path("tests/corpus/cohort-tree.gov"));
  dir.write("tests/corpus/old.gov", text);
  std::string changed = text;
  changed.replace(changed.find("team ml {\n  cohort = eng"), std::string("team ml {\n  cohort = eng").size(),
                  "team ml {\n  cohort = sales");
  changed.replace(changed.find("cohort sales {\n  parent = org"), std::string("cohort sales {\n  parent = org").size(),
                  "cohort sales {\n  parent = eng");
  dir.write("tests/corpus/new.gov", changed);
  const gov::test::CommandResult r =
      run_gov("diff --files " + (dir / "tests/corpus/old.gov") + " " + (dir / "tests/corpus/new.gov"));
  INFO(r.out << r.err);
  CHECK(r.out.find("team `ml`: cohort eng → sales") != std::string::npos);
  CHECK(r.out.find("cohort `sales`: parent org → eng") != std::string::npos);
}

TEST_CASE("more than 1000 cohorts are refused and a long chain of parents is checked at once", "[hier]") {
  gov::test::TempDir dir("cohort-tree-limits");
  dir.copy_catalog();
  const std::string head = "import \"aws-ml\"\n\ncluster c {\n  catalog  = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n\n"
                           "policy {\n  idle-compute = fair-share\n}\n\nteam a {\n  cohort = c0\n  quota ml.g5.8xlarge { instances = 1 }\n}\n";
  std::string many = head;
  for (int i = 0; i <= 1000; ++i) many += "\ncohort c" + std::to_string(i) + " {}\n";
  dir.write("many.gov", many);
  const gov::test::CommandResult refused = run_gov("check " + (dir / "many.gov"));
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("error[E0006]: more than 1000 cohorts in one policy") != std::string::npos);
  // c0 → c1 → ... → c999 → c0: one cycle of 1,000, named from c0.
  std::string chain = head;
  for (int i = 0; i < 1000; ++i) chain += "\ncohort c" + std::to_string(i) + " {\n  parent = c" + std::to_string((i + 1) % 1000) + "\n}\n";
  dir.write("chain.gov", chain);
  const gov::test::CommandResult cycle = run_gov("check " + (dir / "chain.gov"));
  CHECK(cycle.exit_code == 1);
  CHECK(cycle.err.find("error[E0343]: the parents of cohort `c0` form a cycle: `c0` → `c1` → `c2`") != std::string::npos);
  CHECK(cycle.err.find("`c999` → `c0`\n") != std::string::npos);
}

// Metrics label a ClusterQueue with its own cohort, as the exported ClusterQueue's cohortName
// says (Kueue's dashboards group by it), not with the cluster's name.
TEST_CASE("gov simulate --metrics labels each team with its cohort of the tree", "[hier]") {
  gov::test::TempDir dir("cohort-tree-metrics");
  const std::string trace = dir.write("t.json", R"({"events": [
    {"at": 0, "submit": {"id": "w1", "team": "web", "gpus": 1}},
    {"at": 0, "submit": {"id": "s1", "team": "crm", "gpus": 1}}]})");
  const gov::test::CommandResult r = run_gov("simulate tests/corpus/cohort-tree.gov --trace " + trace + " --metrics");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(R"(kueue_cluster_queue_resource_usage{cohort="eng",cluster_queue="web",)") != std::string::npos);
  CHECK(r.out.find(R"(kueue_cluster_queue_resource_usage{cohort="sales",cluster_queue="crm",)") != std::string::npos);
}

namespace gov::engine::test {

// Kueue auditor's finding (session 41, #5a): a request over the most a team could ever hold named
// the team's quota and borrow limit even where a cohort's borrowing limit, or all the tree holds,
// was the bound, which the team's own limits cannot lift.
TEST_CASE("explain names the limit that bounds what a team could ever hold in a tree", "[hier]") {
  // org (own 4) → eng (own 0, borrowing limit 1) → web (N=1); org → crm (N=1), solo (N=1, no
  // borrowing). web could hold at most 2 (eng's subtree 1 plus its limit 1), crm all of org's 7.
  const ir::Module module = with_tree(gpu_module({{"web", 1}, {"crm", 1}, {"solo", 1, 0}}),
                                      {{"org", -1, 4, ir::kUnlimited, ir::kUnlimited}, {"eng", 0, 0, 1, ir::kUnlimited}},
                                      {1, 0, 0});
  Harness h(module);
  h.submit(0, TaskBuilder("w", "web").gpus(3));
  h.submit(0, TaskBuilder("c", "crm").gpus(8));
  h.submit(0, TaskBuilder("s", "solo").gpus(2));
  const auto note = [&](const std::string& id) {
    const std::optional<Explanation> e = h.engine->explain(id);
    REQUIRE(e.has_value());
    REQUIRE(e->state == TaskState::pending);
    for (const std::string& n : e->notes) {
      if (n.find("could never hold more than") != std::string::npos) return n;
    }
    FAIL("no note on the maximum for " << id);
    return std::string();
  };
  CHECK(note("w") ==
        "it asks for 3 nvidia.com/gpu but team `web` could never hold more than 2: cohort `eng`'s borrow limit "
        "binds; ask for less, or raise that limit or the quotas below it");
  CHECK(note("c") ==
        "it asks for 8 nvidia.com/gpu but team `crm` could never hold more than 7: that is all cohort `org` holds; "
        "ask for less, or raise the quotas in it");
  CHECK(note("s") ==
        "it asks for 2 nvidia.com/gpu but team `solo` could never hold more than 1: ask for less, or raise the "
        "team's quota or borrow limit");
}

}  // namespace gov::engine::test
