// GPU partitions (MIG profiles) in the catalog and in quotas (issue 19; docs/language.md "GPU
// partitions (MIG)", docs/semantics-decisions.md): what the checker resolves and what gov
// inspect shows. The errors' texts are golden diagnostics 166–172.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/check/check.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/model/partitions.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::check::PartitionQuota;
using gov::check::Quota;
namespace model = gov::model;

constexpr model::Amount GiB = 1024;   // MiB
constexpr model::Amount vCPU = 1000;  // millicores

struct Checked {
  gov::check::Program program;
  gov::check::CheckResult result;

  std::string rendered() const {
    gov::Diagnostics all = program.diagnostics;
    all.append(result.diagnostics);
    return gov::render_all(all, program.sources);
  }
  const Quota& quota(const std::string& type) const {
    for (const Quota& q : result.policy.teams.at(0).quotas) {
      if (q.type_name == type) return q;
    }
    FAIL("no quota for " << type << "\n" << rendered());
    throw std::logic_error("unreachable");
  }
  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const gov::Diagnostic& d : result.diagnostics.items()) out.emplace_back(gov::code_info(d.code).id);
    return out;
  }
};

/// The shipped catalog, a cluster with 2 × ml.p4d.24xlarge and 1 × ml.p5.48xlarge, and `teams`.
std::unique_ptr<Checked> check_text(const std::string& teams) {
  static const std::string catalog = gov::test::read_text(gov::test::repo_path("policies/catalog/aws-ml.gov"));
  auto checked = std::make_unique<Checked>();
  checked->program = gov::test::program_from_text(
      "test.gov", catalog + "\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.p4d.24xlarge: 2, ml.p5.48xlarge: 1 }\n}\n" +
                      teams);
  checked->result = gov::check::check(checked->program);
  return checked;
}

std::unique_ptr<Checked> check_clean(const std::string& teams) {
  auto checked = check_text(teams);
  INFO(checked->rendered());
  REQUIRE(checked->result.ok());
  return checked;
}

model::Amount at(const model::Resources& r, model::Resource which) { return r[model::index(which)]; }

}  // namespace

TEST_CASE("mig profile names give their compute slices and memory", "[mig]") {
  REQUIRE(model::parse_mig_profile("mig-3g.40gb"));
  CHECK(model::parse_mig_profile("mig-3g.40gb")->slices == 3);
  CHECK(model::parse_mig_profile("mig-3g.40gb")->memory_gb == 40);
  CHECK(model::parse_mig_profile("mig-7g.269gb")->slices == 7);
  for (const char* bad : {"mig-8g.90gb", "mig-0g.5gb", "mig-1g.gb", "mig-1g.05gb", "mig-1g.5GB", "mig-1g5gb", "1g.5gb",
                          "mig-12g.5gb", "mig-1g.5gbx", ""}) {
    INFO(bad);
    CHECK_FALSE(model::parse_mig_profile(bad));
  }
  CHECK(model::in_hyperpod_partition_enum("mig-1g.10gb"));
  CHECK_FALSE(model::in_hyperpod_partition_enum("mig-1g.34gb"));  // B300
  CHECK_FALSE(model::in_hyperpod_partition_enum("mig-2g.48gb"));  // RTX PRO 6000
  CHECK(model::partition_resource_name("mig-1g.10gb") == "nvidia.com/mig-1g.10gb");
}

TEST_CASE("the shipped catalog lists each MIG type's profiles with their count per GPU", "[mig]") {
  auto checked = check_clean("");
  const auto& types = checked->result.policy.types();
  const auto p4d = std::find_if(types.begin(), types.end(), [](const auto& t) { return t.name == "ml.p4d.24xlarge"; });
  REQUIRE(p4d != types.end());
  REQUIRE(p4d->mig_profiles.size() == 6);
  CHECK(p4d->mig_profiles[0].name == "mig-1g.5gb");
  CHECK(p4d->mig_profiles[0].per_gpu == 7);
  CHECK(p4d->mig_profile("mig-1g.10gb")->per_gpu == 4);
  CHECK(p4d->mig_profile("mig-3g.20gb")->slices == 3);
  const auto g5 = std::find_if(types.begin(), types.end(), [](const auto& t) { return t.name == "ml.g5.8xlarge"; });
  REQUIRE(g5 != types.end());
  CHECK(g5->mig_profiles.empty());
}

TEST_CASE("4 mig-1g.5gb of ml.p4d.24xlarge derive 6 vCPU and 82 GiB as the HyperPod CLI does", "[mig]") {
  auto checked = check_clean("team a {\n  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 4 } }\n}\n");
  const Quota& q = checked->quota("ml.p4d.24xlarge");
  CHECK(at(q.nominal, model::Resource::gpu) == 0);
  CHECK(at(q.nominal, model::Resource::vcpu) == 6 * vCPU);     // 96 × 4/56 = 6.86, whole vCPUs
  CHECK(at(q.nominal, model::Resource::memory) == 82 * GiB);   // 1152 × 4/56 = 82.3, whole GiB
  REQUIRE(q.partitions.size() == 1);
  const PartitionQuota& p = q.partitions[0];
  CHECK(p.profile == "mig-1g.5gb");
  CHECK(p.slices == 1);
  CHECK(p.nominal == 4);
  CHECK(p.borrowing_limit == 2);  // the team's 50 %
  CHECK(p.lending_limit == model::kUnlimited);
}

TEST_CASE("partitions beside whole GPUs add their share of the instance", "[mig]") {
  // 4 of 8 GPUs (28 slices) + 14 × 1 + 2 × 3 slices = 48 of 56 slices.
  auto checked = check_clean(
      "team a {\n  quota ml.p5.48xlarge { gpus = 4, partitions = { mig-1g.10gb: 14, mig-3g.40gb: 2 } }\n}\n");
  const Quota& q = checked->quota("ml.p5.48xlarge");
  CHECK(at(q.nominal, model::Resource::gpu) == 4);
  CHECK(at(q.nominal, model::Resource::vcpu) == 164 * vCPU);      // 192 × 48/56 = 164.6
  CHECK(at(q.nominal, model::Resource::memory) == 1755 * GiB);    // 2048 × 48/56 = 1755.4
  CHECK(at(q.nominal, model::Resource::efa) == 27);               // 32 × 48/56 = 27.4
  REQUIRE(q.partitions.size() == 2);
  CHECK(q.partition("mig-3g.40gb")->nominal == 2);
}

TEST_CASE("given vCPU and memory beside partitions are kept", "[mig]") {
  auto checked =
      check_clean("team a {\n  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 4 }, vcpus = 10, memory = 100 GiB }\n}\n");
  const Quota& q = checked->quota("ml.p4d.24xlarge");
  CHECK(at(q.nominal, model::Resource::vcpu) == 10 * vCPU);
  CHECK(at(q.nominal, model::Resource::memory) == 100 * GiB);
}

TEST_CASE("partition borrowing and lending limits are per profile", "[mig]") {
  auto checked = check_clean(
      "team a {\n  borrow-limit = 100%\n"
      "  quota ml.p5.48xlarge {\n    partitions = { mig-1g.10gb: 14, mig-3g.40gb: 2, mig-7g.80gb: 0 }\n"
      "    borrow-limit = { partitions = { mig-1g.10gb: 3 } }\n"
      "    lending-limit = { partitions = { mig-3g.40gb: 1 } }\n  }\n"
      "  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 7 }, borrow-limit = { instances = 1 }, lending-limit = { instances = 0 } }\n"
      "}\n");
  const Quota& p5 = checked->quota("ml.p5.48xlarge");
  CHECK(p5.partition("mig-1g.10gb")->borrowing_limit == 3);
  CHECK(p5.partition("mig-1g.10gb")->absolute_borrow_limit);
  CHECK(p5.partition("mig-3g.40gb")->borrowing_limit == 2);  // 100 % of 2
  CHECK(p5.partition("mig-3g.40gb")->lending_limit == 1);
  CHECK(p5.partition("mig-3g.40gb")->lending_limit_given);
  CHECK(p5.partition("mig-1g.10gb")->lending_limit == model::kUnlimited);
  CHECK(p5.partition("mig-7g.80gb")->nominal == 0);
  const Quota& p4d = checked->quota("ml.p4d.24xlarge");
  CHECK(p4d.partition("mig-1g.5gb")->borrowing_limit == 8 * 7);  // one instance: 8 GPUs × 7 per GPU
  CHECK(p4d.partition("mig-1g.5gb")->lending_limit == 0);
}

TEST_CASE("lend and dont-lend teams keep partitions to themselves as they keep resources", "[mig]") {
  auto lend = check_clean("team a {\n  sharing = lend\n  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 4 } }\n}\n");
  CHECK(lend->quota("ml.p4d.24xlarge").partitions[0].borrowing_limit == 0);
  auto dont = check_clean("team a {\n  sharing = dont-lend\n  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 4 } }\n}\n");
  CHECK(dont->quota("ml.p4d.24xlarge").partitions[0].lending_limit == 0);
}

TEST_CASE("partition quotas that the cluster's GPUs hold exactly are accepted", "[mig]") {
  // 1 × ml.p5.48xlarge: 8 GPUs, 56 slices; 8 × mig-7g.80gb is all of them.
  check_clean("team a {\n  quota ml.p5.48xlarge { partitions = { mig-7g.80gb: 8 } }\n}\n");
  auto over = check_text("team a {\n  quota ml.p5.48xlarge { partitions = { mig-7g.80gb: 8, mig-1g.10gb: 1 } }\n}\n");
  CHECK(over->codes() == std::vector<std::string>{"E0331"});
}

TEST_CASE("a policy's distinct partition profiles are numbered in order of first use", "[mig]") {
  auto checked = check_clean(
      "team a {\n  quota ml.p5.48xlarge { partitions = { mig-3g.40gb: 1, mig-1g.10gb: 2 } }\n}\n"
      "team b {\n  quota ml.p5.48xlarge { partitions = { mig-1g.10gb: 2, mig-7g.80gb: 1 } }\n}\n");
  CHECK(checked->result.policy.partition_profiles() ==
        std::vector<std::string>{"mig-3g.40gb", "mig-1g.10gb", "mig-7g.80gb"});
}

TEST_CASE("gov inspect shows partitions and their derived vCPU and memory", "[mig]") {
  gov::test::TempDir dir("mig-inspect");
  dir.copy_catalog();
  const std::string path = dir.write(
      "tests/mig/p.gov",
      "import \"../../policies/catalog/aws-ml.gov\"\n"
      "cluster c { catalog = aws-ml, capacity = { ml.p4d.24xlarge: 1 } }\npolicy {}\n"
      "team a {\n  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 4 } }\n}\n");
  const auto text = gov::test::run_gov("inspect " + path);
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("    vcpu                            6                3      unlimited\n") != std::string::npos);
  CHECK(text.out.find("    memory                     82 GiB           41 GiB      unlimited\n") != std::string::npos);
  CHECK(text.out.find("    mig-1g.5gb                      4                2      unlimited\n") != std::string::npos);
  const auto json = gov::test::run_gov("inspect --format json " + path);
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("\"vcpu\":{\"nominal\":6,\"borrowing_limit\":3}") != std::string::npos);
  CHECK(json.out.find("\"memory_gib\":{\"nominal\":82,\"borrowing_limit\":41}") != std::string::npos);
  CHECK(json.out.find("\"partitions\":{\"mig-1g.5gb\":{\"nominal\":4,\"borrowing_limit\":2}}") != std::string::npos);
}

TEST_CASE("gov test runs a policy with partitions and charges them per profile", "[mig]") {
  // Before the engine had partition columns, every command that runs a policy refused it; now
  // a task asking for more partitions than its team may hold waits, whatever its GPUs.
  gov::test::TempDir dir("mig-run");
  dir.copy_catalog();
  const std::string path = dir.write(
      "tests/mig/p.gov",
      "import \"../../policies/catalog/aws-ml.gov\"\n"
      "cluster c { catalog = aws-ml, capacity = { ml.p4d.24xlarge: 1 } }\npolicy {}\n"
      "team a {\n  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 4 } }\n}\n"
      "test \"t\" {\n  submit j { team = a, partitions = { mig-1g.5gb: 4 } }\n  expect j admitted\n"
      "  submit k { team = a, partitions = { mig-1g.5gb: 1 } }\n  expect k pending waiting-for-quota short { partitions = { mig-1g.5gb: 1 } }\n}\n");
  const auto result = gov::test::run_gov("test " + path);
  INFO(result.out + result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("1 passed") != std::string::npos);
}

TEST_CASE("gov diff reports partition changes per profile and lost guaranteed partitions", "[mig]") {
  gov::test::TempDir dir("mig-diff");
  dir.copy_catalog();
  const std::string head =
      "import \"../../policies/catalog/aws-ml.gov\"\n"
      "cluster c { catalog = aws-ml, capacity = { ml.p5.48xlarge: 1 } }\npolicy {}\n";
  const std::string before = dir.write(
      "tests/mig/before.gov",
      head + "team a {\n  quota ml.p5.48xlarge { partitions = { mig-1g.10gb: 14, mig-3g.40gb: 2 } }\n}\n");
  const std::string after = dir.write(
      "tests/mig/after.gov",
      head + "team a {\n  quota ml.p5.48xlarge { partitions = { mig-1g.10gb: 10, mig-7g.80gb: 1 }, "
             "lending-limit = { partitions = { mig-1g.10gb: 4 } } }\n}\n");
  const auto result = gov::test::run_gov("diff --files " + before + " " + after);
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("ml.p5.48xlarge mig-1g.10gb nominal: 14 → 10 (-4)") != std::string::npos);
  CHECK(result.out.find("ml.p5.48xlarge mig-1g.10gb borrowing limit: 7 → 5 (-2)") != std::string::npos);
  CHECK(result.out.find("ml.p5.48xlarge mig-1g.10gb lending limit: unlimited → 4") != std::string::npos);
  CHECK(result.out.find("ml.p5.48xlarge mig-7g.80gb nominal: (none) → 1") != std::string::npos);
  CHECK(result.out.find("ml.p5.48xlarge mig-3g.40gb nominal: 2 → (removed)") != std::string::npos);
  CHECK(result.out.find("team `a` loses 4 guaranteed `mig-1g.10gb` GPU partitions on ml.p5.48xlarge") !=
        std::string::npos);
  CHECK(result.out.find("team `a` loses 2 guaranteed `mig-3g.40gb` GPU partitions on ml.p5.48xlarge") !=
        std::string::npos);
}

TEST_CASE("gov eval explains and gov simulate --metrics reports partitions per profile", "[mig]") {
  gov::test::TempDir dir("mig-explain");
  const std::string policy = gov::test::repo_path("policies/examples/mig-partitions.gov");
  const std::string task = dir.write("x.json", R"({"id": "x", "team": "research", "partitions": {"mig-1g.5gb": 2}})");
  const auto eval = gov::test::run_gov("eval " + policy + " --task " + task);
  INFO(eval.err);
  REQUIRE(eval.exit_code == 0);
  CHECK(eval.out.find("\"usage\":{\"mig-1g.5gb\":2}") != std::string::npos);
  CHECK(eval.out.find("  needs: mig-1g.5gb 2\n") != std::string::npos);
  // research: 21 guaranteed, borrow limit 25 % (5), 2 in use after x, cohort 21 + 14 lent.
  CHECK(eval.out.find("    mig-1g.5gb            2          21          5          2") != std::string::npos);
  const std::string trace = dir.write("t.json", R"({"events": [
    {"at": 0, "submit": {"id": "nb1", "team": "research", "priority": "notebook", "partitions": {"mig-1g.5gb": 21}}}]})");
  const auto simulated = gov::test::run_gov("simulate " + policy + " --trace " + trace + " --metrics");
  REQUIRE(simulated.exit_code == 0);
  CHECK(simulated.out.find("kueue_cluster_queue_resource_usage{cohort=\"mig-cluster\",cluster_queue=\"research\","
                           "flavor=\"ml.p4d.24xlarge\",resource=\"nvidia.com/mig-1g.5gb\"} 21") != std::string::npos);
  CHECK(simulated.out.find("kueue_cluster_queue_borrowing_limit{cohort=\"mig-cluster\",cluster_queue=\"inference\","
                           "flavor=\"ml.p4d.24xlarge\",resource=\"nvidia.com/mig-1g.5gb\"} 7") != std::string::npos);
  // Partition rows only where a quota gives the profile: training has none.
  CHECK(simulated.out.find("cluster_queue=\"training\",flavor=\"ml.p4d.24xlarge\",resource=\"nvidia.com/mig") ==
        std::string::npos);
}
