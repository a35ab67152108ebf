// Issue 20's parts outside the flavor assigner, through the `gov` command: `borrow-limit =
// unlimited` and decimal fair-share weights in inspect, diff and the Kueue export and import (the
// decisions are the corpus's, tests/corpus/borrow-unlimited.gov, fair-share-decimal-weights.gov).
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

/// A two-team policy on ml.g5.8xlarge whose team `a` has the given borrow-limit line.
std::string policy_with(const std::string& borrow_limit, const std::string& quota_extra = "") {
  return "import \"aws-ml\"\n\ncluster c {\n  catalog  = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n\npolicy {\n"
         "  idle-compute = fair-share\n}\n\nteam a {\n  quota ml.g5.8xlarge { instances = 2" + quota_extra + " }\n\n  " +
         borrow_limit + "\n}\n\nteam b {\n  quota ml.g5.8xlarge { instances = 2 }\n}\n";
}

}  // namespace

TEST_CASE("borrow-limit unlimited resolves to no borrowing limit in inspect", "[cohort]") {
  gov::test::TempDir dir("unlimited-inspect");
  dir.write("p.gov", policy_with("borrow-limit = unlimited"));
  const gov::test::CommandResult text = run_gov("inspect " + (dir / "p.gov"));
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("team a: lend-and-borrow, borrow limit unlimited,") != std::string::npos);
  const gov::test::CommandResult json = run_gov("inspect --format json " + (dir / "p.gov"));
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("\"borrow_limit_percent\":null") != std::string::npos);
  CHECK(json.out.find("\"borrowing_limit\":null") != std::string::npos);
}

TEST_CASE("gov diff reports a borrow limit becoming unlimited", "[cohort]") {
  gov::test::TempDir dir("unlimited-diff");
  dir.write("old.gov", policy_with("borrow-limit = 50%"));
  dir.write("new.gov", policy_with("borrow-limit = unlimited"));
  const gov::test::CommandResult r = run_gov("diff --files " + (dir / "old.gov") + " " + (dir / "new.gov"));
  INFO(r.out << r.err);
  CHECK(r.out.find("team `a`: borrow limit 50% → unlimited") != std::string::npos);
}

TEST_CASE("gov export kueue leaves borrowingLimit out where borrowing is unlimited", "[cohort]") {
  gov::test::TempDir dir("unlimited-export");
  dir.write("p.gov", policy_with("borrow-limit = 50%", ", borrow-limit = unlimited"));
  const gov::test::CommandResult r = run_gov("export kueue " + (dir / "p.gov"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const size_t a = r.out.find("name: hyperpod-ns-a-clusterqueue");
  const size_t b = r.out.find("name: hyperpod-ns-b-clusterqueue");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  // The ClusterQueues come in team order; a's resource list has no borrowingLimit, b's has them.
  const std::string queue_a = r.out.substr(a, b - a);
  CHECK(queue_a.find("borrowingLimit") == std::string::npos);
  CHECK(r.out.find("borrowingLimit: 1", b) != std::string::npos);
}

TEST_CASE("decimal fair-share weights in inspect diff and the Kueue export and import", "[cohort]") {
  gov::test::TempDir dir("decimal-weights");
  dir.copy_catalog();
  dir.write("old.gov", policy_with("fair-share-weight = 1"));
  dir.write("new.gov", policy_with("fair-share-weight = 0.25"));
  const gov::test::CommandResult text = run_gov("inspect " + (dir / "new.gov"));
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("fair-share weight 0.25") != std::string::npos);
  CHECK(run_gov("inspect --format json " + (dir / "new.gov")).out.find("\"fair_share_weight\":0.25") != std::string::npos);
  const gov::test::CommandResult diff = run_gov("diff --files " + (dir / "old.gov") + " " + (dir / "new.gov"));
  CHECK(diff.out.find("team `a`: fair-share weight 1 → 0.25") != std::string::npos);
  const gov::test::CommandResult exported = run_gov("export kueue " + (dir / "new.gov"));
  REQUIRE(exported.exit_code == 0);
  // Quoted: the CRD types a Quantity int-or-string, and a plain 0.25 is a YAML float.
  CHECK(exported.out.find("weight: \"0.25\"\n") != std::string::npos);
  {
    dir.write("exported.yaml", exported.out);
    const gov::test::CommandResult back = run_gov("import kueue " + (dir / "exported.yaml"));
    INFO(back.err);
    REQUIRE(back.exit_code == 0);
    CHECK(back.out.find("= 0.25\n") != std::string::npos);
  }
  // Kueue's quantity forms of a weight read exactly; a seventh decimal has no gov form.
  std::string yaml = exported.out;
  yaml.replace(yaml.find("weight: \"0.25\""), std::string("weight: \"0.25\"").size(), "weight: 250m");
  dir.write("milli.yaml", yaml);
  const gov::test::CommandResult imported = run_gov("import kueue " + (dir / "milli.yaml"));
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("= 0.25\n") != std::string::npos);
  yaml.replace(yaml.find("weight: 250m"), std::string("weight: 250m").size(), "weight: 100n");
  dir.write("nano.yaml", yaml);
  const gov::test::CommandResult nano = run_gov("import kueue " + (dir / "nano.yaml"));
  CHECK(nano.exit_code == 1);
  CHECK(nano.err.find("`spec.fairSharing.weight`: `100n` has more than 6 decimals") != std::string::npos);
}

TEST_CASE("a cohort's own quota in inspect, fmt and the Kueue export and import", "[cohort]") {
  gov::test::TempDir dir("cohort-quota");
  dir.copy_catalog();
  const std::string policy = "tests/corpus/cohort-quota.gov";
  const gov::test::CommandResult inspect = run_gov("inspect " + policy);
  INFO(inspect.err);
  REQUIRE(inspect.exit_code == 0);
  CHECK(inspect.out.find("cohort shared: its own quota, which every team may borrow and none reclaims\n"
                         "  ml.g5.8xlarge               nominal\n    gpu                             2\n") != std::string::npos);
  const gov::test::CommandResult json = run_gov("inspect --format json " + policy);
  CHECK(json.out.find("\"cohort\":{\"name\":\"shared\",\"quotas\":{\"ml.g5.8xlarge\":{\"gpu\":2,") != std::string::npos);
  CHECK(run_gov("fmt --check " + policy).exit_code == 0);
  // Kueue's Cohort holds the quota as a resource group with nominal quotas only.
  const gov::test::CommandResult exported = run_gov("export kueue " + policy + " --naming plain");
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  const size_t cohort = exported.out.find("kind: Cohort");
  REQUIRE(cohort != std::string::npos);
  const std::string cohort_doc = exported.out.substr(cohort, exported.out.find("---", cohort) - cohort);
  CHECK(cohort_doc.find("resourceGroups:") != std::string::npos);
  CHECK(cohort_doc.find("- name: nvidia.com/gpu\n              nominalQuota: 2\n") != std::string::npos);
  CHECK(cohort_doc.find("borrowingLimit") == std::string::npos);
  dir.write("kueue.yaml", exported.out);
  const gov::test::CommandResult imported = run_gov("import kueue " + (dir / "kueue.yaml"));
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("cohort own-quota {\n  quota ml.g5.8xlarge { gpus = 2, vcpus = 64, memory = 256 GiB, efa = 2 }\n}\n") !=
        std::string::npos);
}

TEST_CASE("gov diff reports a change of the cohort's own quota", "[cohort]") {
  gov::test::TempDir dir("cohort-diff");
  dir.copy_catalog();
  const std::string text = gov::test::read_text(gov::test::repo_path("tests/corpus/cohort-quota.gov"));
  dir.write("tests/corpus/old.gov", text);
  std::string changed = text;
  changed.replace(changed.find("{ instances = 2 }"), std::string("{ instances = 2 }").size(), "{ instances = 3 }");
  dir.write("tests/corpus/new.gov", changed);
  const gov::test::CommandResult r = run_gov("diff --files " + (dir / "tests/corpus/old.gov") + " " + (dir / "tests/corpus/new.gov"));
  INFO(r.out << r.err);
  CHECK(r.out.find("cohort quota of `ml.g5.8xlarge`: gpu 2 → 3") != std::string::npos);
}

// A cohort of a tree with limits: its rows leave out what the instance type does not have (no
// Neuron devices on a p5) and name resources in words, in one summary line per type, as a team's.
TEST_CASE("gov diff of a tree cohort's limits has no rows for absent resources", "[cohort]") {
  gov::test::TempDir dir("cohort-tree-diff");
  const std::string head = R"(import "aws-ml"
cluster c {
  catalog  = aws-ml
  capacity = { ml.p5.48xlarge: 2 }
}
policy {
  priority training = 50
}
cohort org {}
cohort eng {
  parent = org
  quota ml.p5.48xlarge { instances = 1, borrow-limit = LIMIT }
}
team a {
  cohort = eng
  quota ml.p5.48xlarge { instances = 1 }
}
)";
  std::string before = head, after = head;
  before.replace(before.find("LIMIT"), 5, "{ instances = 1 }");
  after.replace(after.find("LIMIT"), 5, "unlimited");
  const gov::test::CommandResult r =
      run_gov("diff --files " + dir.write("before.gov", before) + " " + dir.write("after.gov", after));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  cohort `eng`: quota on ml.p5.48xlarge: gpu borrowing limit 8 → unlimited, vcpu borrowing limit 192 → "
                   "unlimited, memory borrowing limit 2048 GiB → unlimited, efa borrowing limit 32 → unlimited\n") !=
        std::string::npos);
  CHECK(r.out.find("neuron") == std::string::npos);
  CHECK(r.out.find("memory_gib") == std::string::npos);
}
