// `gov export hyperpod` beyond the create documents (issues 17 and 19): HyperPod's limits at export
// (E0401 for instance types outside the API, W0401 for borrow limits outside the documented range),
// the CloudFormation template, update documents against `--current` describe outputs, and round
// trips of generated policies through `gov import hyperpod`.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/bridge/export_output.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

/// The file NAME of an export printed on standard output.
std::string file(const std::string& out, const std::string& name) { return gov::test::exported_file(out, name); }

/// A policy importing the shipped catalog, with `teams` after a cluster of g5 and inf2 instances.
std::string policy_with(const std::string& teams) {
  return R"(import "../../policies/catalog/aws-ml.gov"
cluster c {
  catalog  = aws-ml
  capacity = { ml.g5.12xlarge: 4, ml.inf2.24xlarge: 2 }
}
policy {
  idle-compute = fair-share
  priority high = 90
  priority low  = 10
}
)" + teams;
}

}  // namespace

TEST_CASE("gov export hyperpod refuses an instance type the API does not accept", "[hyperpod][export]") {
  gov::test::TempDir dir("hyperpod-inf2");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/inf2.gov", policy_with(R"(team a {
  quota ml.g5.12xlarge   { gpus = 4 }
  quota ml.inf2.24xlarge { instances = 1, borrow-limit = { neuron = 6 } }
}
)"));
  // The checker accepts it and `gov lint` warns: the type is fine for Kueue.
  CHECK(run_gov("check " + path).exit_code == 0);
  CHECK(run_gov("lint " + path).err.find("warning[W0111]") != std::string::npos);
  const gov::test::CommandResult r = run_gov("export hyperpod " + path);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error[E0401]: cannot export team `a`: the quota for `ml.inf2.24xlarge`: HyperPod's API does not accept "
                   "the instance type") != std::string::npos);
  // The Kueue export has a flavor for it.
  CHECK(run_gov("export kueue " + path).exit_code == 0);
  // --allow-lossy drops the quota entry and its absolute borrow limit, and keeps the rest.
  const gov::test::CommandResult lossy = run_gov("export hyperpod " + path + " --allow-lossy");
  INFO(lossy.err);
  REQUIRE(lossy.exit_code == 0);
  CHECK(lossy.err.find("warning[E0401]") != std::string::npos);
  const std::string quota = file(lossy.out, "compute-quota-a.json");
  CHECK(quota.find("ml.g5.12xlarge") != std::string::npos);
  CHECK(quota.find("inf2") == std::string::npos);
  CHECK(quota.find("AbsoluteBorrowLimits") == std::string::npos);
  CHECK(file(lossy.out, "apply.sh").find("#   team `a`: the quota for `ml.inf2.24xlarge`") != std::string::npos);
}

TEST_CASE("gov export hyperpod warns of a borrow limit outside the documented range", "[hyperpod][export]") {
  gov::test::TempDir dir("hyperpod-borrow-limit");
  dir.copy_catalog();
  const auto run = [&](const std::string& teams) {
    return run_gov("export hyperpod " + dir.write("tests/bridge/limit.gov", policy_with(teams)));
  };
  // 1 and 500 are inside; 0 and 501 are outside, exported as written with a warning.
  for (const char* inside : {"1%", "500%"}) {
    const gov::test::CommandResult r = run(std::string("team a {\n  quota ml.g5.12xlarge { gpus = 4 }\n  borrow-limit = ") + inside + "\n}\n");
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
  const gov::test::CommandResult above = run("team a {\n  quota ml.g5.12xlarge { gpus = 4 }\n  borrow-limit = 501%\n}\n");
  CHECK(above.exit_code == 0);
  CHECK(above.err.find("limit.gov:13:3: warning[W0401]: the borrow limit of team `a` is 501%; HyperPod's documentation "
                       "gives 1% to 500%") != std::string::npos);
  CHECK(file(above.out, "compute-quota-a.json").find("\"BorrowLimit\": 501") != std::string::npos);
  const gov::test::CommandResult zero = run("team a {\n  quota ml.g5.12xlarge { gpus = 4 }\n  borrow-limit = 0%\n}\n");
  CHECK(zero.exit_code == 0);
  CHECK(zero.err.find("warning[W0401]") != std::string::npos);
  CHECK(zero.err.find("`sharing = lend`") != std::string::npos);
  // A lend team's written limit is exported too (the import gives it back), with the warning.
  const gov::test::CommandResult lend =
      run("team a {\n  quota ml.g5.12xlarge { gpus = 4 }\n  sharing = lend\n  borrow-limit = 0%\n}\n");
  CHECK(lend.exit_code == 0);
  CHECK(lend.err.find("a `lend` team never borrows: remove `borrow-limit`") != std::string::npos);
  CHECK(file(lend.out, "compute-quota-a.json").find("\"BorrowLimit\": 0") != std::string::npos);
  // The Kueue export has no such range.
  CHECK(run_gov("export kueue " + (dir / "tests/bridge/limit.gov")).err.find("W0401") == std::string::npos);
}

TEST_CASE("gov export hyperpod keeps the borrow limits of a dont-lend team", "[hyperpod][export]") {
  // A dont-lend team lends nothing but may borrow up to its limit (docs/semantics.md): its
  // BorrowLimit and AbsoluteBorrowLimits must reach HyperPod, and come back through the import.
  gov::test::TempDir dir("hyperpod-dont-lend");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/dont-lend.gov", policy_with(R"(team a {
  quota ml.g5.12xlarge { gpus = 4, borrow-limit = { gpus = 2 } }
  sharing      = dont-lend
  borrow-limit = 20%
}
team b {
  quota ml.g5.12xlarge { gpus = 8 }
  sharing = lend
}
)"));
  const gov::test::CommandResult r = run_gov("export hyperpod " + path + " --out " + (dir / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string quota = gov::test::read_text(dir / "out/compute-quota-a.json");
  CHECK(quota.find("\"Strategy\": \"DontLend\",\n      \"BorrowLimit\": 20,\n      \"AbsoluteBorrowLimits\": [") != std::string::npos);
  // b states no limit and never borrows: none written.
  CHECK(gov::test::read_text(dir / "out/compute-quota-b.json").find("BorrowLimit") == std::string::npos);
  const gov::test::CommandResult imported =
      run_gov("import hyperpod " + (dir / "out/cluster-scheduler-config.json") + " " + (dir / "out/compute-quota-a.json") + " " +
              (dir / "out/compute-quota-b.json") + " --capacity ml.g5.12xlarge=4,ml.inf2.24xlarge=2");
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  dir.write("imported.gov", imported.out);
  const gov::test::CommandResult diff = run_gov("diff --files " + path + " " + (dir / "imported.gov"));
  INFO(diff.out);
  CHECK(diff.out.find("no changes between") == 0);
}

TEST_CASE("gov export hyperpod --format cloudformation writes one template", "[hyperpod][export]") {
  // Printed as it is without --out (for a redirection); the properties are the create documents'
  // members (tests/bridge/validate_hyperpod.py checks them against the service model).
  const gov::test::CommandResult r = run_gov("export hyperpod policies/examples/fine-grained.gov --format cloudformation");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("{\n  \"AWSTemplateFormatVersion\": \"2010-09-09\",\n") == 0);
  CHECK(r.out.find("==>") == std::string::npos);
  CHECK(r.out.find("\"ComputeQuotaOnlygputeam\": {\n      \"Type\": \"AWS::SageMaker::ComputeQuota\",\n"
                   "      \"DependsOn\": \"ClusterSchedulerConfig\",\n      \"Properties\": {\n        \"ClusterArn\": {\n"
                   "          \"Ref\": \"ClusterArn\"\n        },\n        \"Name\": \"onlygputeam\",\n") != std::string::npos);
  CHECK(r.out.find("\"Type\": \"AWS::SageMaker::ClusterSchedulerConfig\"") != std::string::npos);
  CHECK(r.out.find("\"Default\"") == std::string::npos);  // no ARN given: the stack's parameter

  gov::test::TempDir dir("hyperpod-cfn");
  dir.copy_catalog();
  // Teams whose logical ids would collide (`a-1` and `a1` are both `A1`), an ARN, a lossy construct.
  const std::string path = dir.write("tests/bridge/cfn.gov", policy_with(R"(team a-1 {
  quota ml.g5.12xlarge { gpus = 2 }
  queueing = strict-fifo
}
team a1 {
  quota ml.g5.12xlarge { gpus = 2 }
}
)"));
  const std::string arn = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456";
  const gov::test::CommandResult cfn =
      run_gov("export hyperpod " + path + " --format cloudformation --allow-lossy --cluster-arn " + arn + " --out " + (dir / "out"));
  INFO(cfn.err);
  REQUIRE(cfn.exit_code == 0);
  CHECK(cfn.out.find("deploy it with `aws cloudformation deploy --template-file") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out/apply.sh"));
  const std::string text = gov::test::read_text(dir / "out/cloudformation.json");
  CHECK(text.find("\"Default\": \"" + arn + "\"") != std::string::npos);
  CHECK(text.find("\"ComputeQuotaA1\": {") != std::string::npos);
  CHECK(text.find("\"ComputeQuotaA12\": {") != std::string::npos);
  CHECK(text.find("\"Metadata\": {\n    \"gov\": {\n      \"DroppedByAllowLossy\": [\n        \"team `a-1`: `queueing = "
                  "strict-fifo`") != std::string::npos);
  // The format is HyperPod's: a usage error for Kueue, and an unknown format is one too.
  CHECK(run_gov("export kueue " + path + " --format cloudformation").exit_code == 2);
  const gov::test::CommandResult bad = run_gov("export hyperpod " + path + " --format yaml");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("unknown value `yaml` for `--format` (expected cli-json or cloudformation)") != std::string::npos);
}

namespace {

// A policy of two teams and the describe outputs of a cluster that holds it, written as the
// service prints them: amounts as floats, defaults left out, members in another order.
const char* const kTwoTeams = R"(team a {
  quota ml.g5.12xlarge { gpus = 2, vcpus = 24 }
  borrow-limit      = 100%
  fair-share-weight = 10
}
team b {
  quota ml.g5.12xlarge { instances = 1 }
}
)";

const char* const kConfigDescribe = R"({"ClusterSchedulerConfigArn": "arn:aws:sagemaker:us-west-2:123456789012:cluster-scheduler-config/abcdefabcdef",
  "ClusterSchedulerConfigId": "abcdefabcdef", "Name": "c", "ClusterSchedulerConfigVersion": 4, "Status": "Created",
  "SchedulerConfig": {"PriorityClasses": [{"Name": "low", "Weight": 10}, {"Name": "high", "Weight": 90.0}]},
  "CreationTime": "2026-07-24T11:12:12.021000-07:00"})";

std::string quota_describe(const std::string& id, const std::string& team, const std::string& config, const std::string& weight) {
  return R"({"ComputeQuotaArn": "arn:aws:sagemaker:us-west-2:123456789012:compute-quota/)" + id + R"(", "ComputeQuotaId": ")" + id +
         R"(", "Name": "quota-)" + team + R"(", "ComputeQuotaVersion": 2, "Status": "Created", "ComputeQuotaConfig": )" + config +
         R"(, "ComputeQuotaTarget": {"TeamName": ")" + team + R"(")" + weight + R"(}, "CreationTime": "2026-07-24T11:12:12Z"})";
}

const char* const kQuotaA = R"({"ResourceSharingConfig": {"BorrowLimit": 100, "Strategy": "LendAndBorrow"}, "ComputeQuotaResources": [{"VCpu": 24.0, "InstanceType": "ml.g5.12xlarge", "Accelerators": 2}]})";
const char* const kQuotaB = R"({"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 1}], "PreemptTeamTasks": "LowerPriority"})";

}  // namespace

// An unchanged policy has nothing to apply. An --out directory that holds an earlier plan (a CI
// workspace, a second run) kept its apply.sh, which replayed a stale delete, update and create:
// the plan written now does nothing, and the earlier plan's documents are removed.
TEST_CASE("gov export hyperpod --current of an unchanged policy writes a plan that does nothing", "[hyperpod][export]") {
  gov::test::TempDir dir("hyperpod-current-same");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/two.gov", policy_with(kTwoTeams));
  dir.write("current/config.json", kConfigDescribe);
  dir.write("current/a.json", quota_describe("aaaaaaaaaaaa", "a", kQuotaA, R"(, "FairShareWeight": 10)"));
  dir.write("current/b.json", quota_describe("bbbbbbbbbbbb", "b", kQuotaB, ""));
  dir.write("current/notes.txt", "not JSON: not read");
  const gov::test::CommandResult bare = run_gov("export hyperpod " + path + " --current " + (dir / "current"));
  CHECK(bare.out == "no changes: the cluster's current objects already hold the policy\n");
  dir.write("out/apply.sh", "aws sagemaker delete-compute-quota --compute-quota-id 000000000old\n");
  dir.write("out/update-compute-quota-a.json", "{}");
  dir.write("out/README", "kept");
  const gov::test::CommandResult r = run_gov("export hyperpod " + path + " --current " + (dir / "current") + " --out " + (dir / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.starts_with("no changes: the cluster's current objects already hold the policy\n"));
  const std::string script = gov::test::read_text(dir / "out/apply.sh");
  CHECK(script.find("aws ") == std::string::npos);
  CHECK(script.find("nothing to apply") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out/update-compute-quota-a.json"));
  CHECK(std::filesystem::exists(dir / "out/README"));
}

TEST_CASE("gov export hyperpod --current of one changed team writes one update", "[hyperpod][export]") {
  gov::test::TempDir dir("hyperpod-current-changed");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/two.gov", policy_with(kTwoTeams));
  dir.write("current/config.json", kConfigDescribe);
  // Team a borrows 50% on the cluster; the policy says 100%.
  dir.write("current/a.json", quota_describe("aaaaaaaaaaaa", "a",
                                             R"({"ResourceSharingConfig": {"BorrowLimit": 50}, "ComputeQuotaResources": [{"VCpu": 24.0, "InstanceType": "ml.g5.12xlarge", "Accelerators": 2}]})",
                                             R"(, "FairShareWeight": 10)"));
  dir.write("current/b.json", quota_describe("bbbbbbbbbbbb", "b", kQuotaB, ""));
  const gov::test::CommandResult r = run_gov("export hyperpod " + path + " --current " + (dir / "current"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("==> update-compute-quota-a.json <==\n{\n  \"ComputeQuotaId\": \"aaaaaaaaaaaa\",\n  \"TargetVersion\": 2,\n"
                   "  \"Description\": \"team a of a gov policy (gov export hyperpod)\",\n  \"ComputeQuotaConfig\": {\n") == 0);
  CHECK(file(r.out, "update-compute-quota-a.json").find("\"BorrowLimit\": 100") != std::string::npos);
  const std::string script = file(r.out, "apply.sh");
  // One command, an update: no ARN needed.
  CHECK(script.find("\naws sagemaker update-compute-quota --cli-input-json \"file://$dir/update-compute-quota-a.json\"\n") !=
        std::string::npos);
  CHECK(script.find("CLUSTER_ARN") == std::string::npos);
  size_t commands = 0;
  for (size_t at = script.find("\naws "); at != std::string::npos; at = script.find("\naws ", at + 1)) ++commands;
  CHECK(commands == 1);
  CHECK(r.out.find("==> ", 1) == r.out.find("==> apply.sh <=="));  // two files: the update and the script
}

TEST_CASE("gov export hyperpod --current creates new teams and deletes removed ones in order", "[hyperpod][export]") {
  gov::test::TempDir dir("hyperpod-current-teams");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/two.gov", policy_with(kTwoTeams));
  // No cluster policy yet; team b missing; team old no longer in the policy (a list-compute-quotas output).
  dir.write("current/list.json", R"({"ComputeQuotaSummaries": [)" +
                                     quota_describe("aaaaaaaaaaaa", "a", kQuotaA, R"(, "FairShareWeight": 10)") + ", " +
                                     quota_describe("000000000old", "old", kQuotaB, "") + "]}");
  const gov::test::CommandResult r = run_gov("export hyperpod " + path + " --current " + (dir / "current"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string script = file(r.out, "apply.sh");
  CHECK(script.find("aws sagemaker create-cluster-scheduler-config --cluster-arn \"$CLUSTER_ARN\" --cli-input-json \"file://$dir/"
                    "cluster-scheduler-config.json\"\n"
                    "aws sagemaker delete-compute-quota --compute-quota-id 000000000old  # team old\n"
                    "aws sagemaker create-compute-quota --cluster-arn \"$CLUSTER_ARN\" --cli-input-json \"file://$dir/"
                    "compute-quota-b.json\"\n") != std::string::npos);
  CHECK(file(r.out, "compute-quota-a.json").empty());
}

TEST_CASE("gov export hyperpod --current names the file of bad input", "[hyperpod][export]") {
  gov::test::TempDir dir("hyperpod-current-bad");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/two.gov", policy_with(kTwoTeams));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"Name": "x"})", "x.json: not a describe-cluster-scheduler-config, describe-compute-quota or list-compute-quotas output"},
      {"[1]", "x.json: expected a JSON object"},
      {R"({"ComputeQuotaId": "SHORT", "ComputeQuotaVersion": 1, "ComputeQuotaTarget": {"TeamName": "a"}})",
       "x.json: compute quota: `ComputeQuotaId`: \"SHORT\" is not an id of 12 lower-case letters and digits"},
      {R"({"ComputeQuotaId": "aaaaaaaaaaaa", "ComputeQuotaTarget": {"TeamName": "a"}})", "x.json: compute quota: `ComputeQuotaVersion`: missing"},
      {R"({"ComputeQuotaSummaries": [)" + quota_describe("aaaaaaaaaaaa", "a", kQuotaA, "") + ", " +
           quota_describe("cccccccccccc", "a", kQuotaA, "") + "]}",
       "x.json: `ComputeQuotaSummaries[1]`: a second compute quota for team \"a\" (`aaaaaaaaaaaa` is the first)"},
      // The team's name goes into apply.sh: a line break in it would be a command.
      {R"({"ComputeQuotaId": "aaaaaaaaaaaa", "ComputeQuotaVersion": 1, "ComputeQuotaTarget": {"TeamName": "x\nrm -rf ~"}})",
       "x.json: compute quota: `ComputeQuotaTarget.TeamName`: \"x\\nrm -rf ~\" is not a team name HyperPod accepts"},
      {R"({"ClusterSchedulerConfigId": "abcdefabcdef", "ClusterSchedulerConfigVersion": 1, "SchedulerConfig": []})",
       "x.json: cluster scheduler config: `SchedulerConfig`: expected an object, found an array"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    dir.write("current/x.json", text);
    const gov::test::CommandResult r = run_gov("export hyperpod " + path + " --current " + (dir / "current"));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    INFO(r.err);
    CHECK(r.err.find(expected) != std::string::npos);
  }
  CHECK(run_gov("export hyperpod " + path + " --current " + (dir / "missing")).err.find("not a directory") != std::string::npos);
  CHECK(run_gov("export hyperpod " + path + " --current " + (dir / "current") + " --format cloudformation").exit_code == 2);
  CHECK(run_gov("export kueue " + path + " --current " + (dir / "current")).exit_code == 2);
}

TEST_CASE("gov import hyperpod reads list-compute-quotas outputs and directories", "[hyperpod][import]") {
  gov::test::TempDir dir("hyperpod-import-list");
  dir.copy_catalog();
  dir.write("tests/bridge/two.gov", policy_with(kTwoTeams));
  // A directory: the cluster policy's describe, and a list of both quotas beside a describe of one
  // of them (read once); other files are not read.
  dir.write("state/config.json", kConfigDescribe);
  dir.write("state/list.json", R"({"ComputeQuotaSummaries": [)" +
                                   quota_describe("aaaaaaaaaaaa", "a", kQuotaA, R"(, "FairShareWeight": 10)") + ", " +
                                   quota_describe("bbbbbbbbbbbb", "b", kQuotaB, "") + R"(], "NextToken": ""})");
  dir.write("state/quota-b.json", quota_describe("bbbbbbbbbbbb", "b", kQuotaB, ""));
  dir.write("state/README", "not read");
  const gov::test::CommandResult r =
      run_gov("import hyperpod " + (dir / "state") + " --capacity ml.g5.12xlarge=4,ml.inf2.24xlarge=2 --catalog " +
              (dir / "policies/catalog/aws-ml.gov"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("team a {") != std::string::npos);
  CHECK(r.out.find("team b {") == r.out.rfind("team b {"));
  // The import names the catalog as given (here an absolute path): relative to the file instead.
  std::string back = r.out;
  const std::string given = "import \"" + (dir / "policies/catalog/aws-ml.gov") + "\"";
  REQUIRE(back.find(given) != std::string::npos);
  back.replace(back.find(given), given.size(), "import \"../../policies/catalog/aws-ml.gov\"");
  dir.write("tests/bridge/back.gov", back);
  const gov::test::CommandResult diff = run_gov("diff --files " + (dir / "tests/bridge/two.gov") + " " + (dir / "tests/bridge/back.gov"));
  INFO(diff.out + diff.err);
  CHECK(diff.out.find("no changes between") == 0);
  // A listed cluster policy needs its describe: the list has no SchedulerConfig.
  dir.write("list-only/configs.json",
            R"({"ClusterSchedulerConfigSummaries": [{"ClusterSchedulerConfigId": "abcdefabcdef", "Name": "c", "Status": "Created"}]})");
  const gov::test::CommandResult listed = run_gov("import hyperpod " + (dir / "list-only") + " --catalog " +
                                                  (dir / "policies/catalog/aws-ml.gov"));
  CHECK(listed.exit_code == 1);
  CHECK(listed.err.find("error: cluster scheduler config \"c\" is listed but not described") != std::string::npos);
  dir.write("list-bad/quotas.json", R"({"ComputeQuotaSummaries": [1]})");
  const gov::test::CommandResult bad = run_gov("import hyperpod " + (dir / "list-bad") + " --catalog " +
                                               (dir / "policies/catalog/aws-ml.gov"));
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("quotas.json: list-compute-quotas output: `ComputeQuotaSummaries[0]`: expected an object") != std::string::npos);
}

namespace {
/// A describe output of quota `id` for `team` with its `Status` set to `status`.
std::string quota_with_status(const std::string& id, const std::string& team, const std::string& status) {
  std::string text = quota_describe(id, team, kQuotaB, "");
  text.replace(text.find("\"Created\""), 9, "\"" + status + "\"");
  return text;
}
}  // namespace

// A list keeps deleted quotas, and a quota whose creation failed exists only as a record: neither
// governs the cluster. Importing them granted quota that does not exist, and `--current` planned
// a delete of a deleted quota first (which, refused, stopped apply.sh before its creates).
TEST_CASE("gov import and export --current read past deleted and failed quotas", "[hyperpod][import]") {
  gov::test::TempDir dir("hyperpod-retired");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/two.gov", policy_with(kTwoTeams));
  dir.write("state/config.json", kConfigDescribe);
  // team a recreated after a delete; team old deleted; team z never created.
  dir.write("state/list.json", R"({"ComputeQuotaSummaries": [)" + quota_with_status("aaaaaaaaaaa0", "a", "Deleted") + ", " +
                                   quota_describe("aaaaaaaaaaaa", "a", kQuotaA, R"(, "FairShareWeight": 10)") + ", " +
                                   quota_describe("bbbbbbbbbbbb", "b", kQuotaB, "") + ", " +
                                   quota_with_status("000000000old", "old", "Deleting") + ", " +
                                   quota_with_status("zzzzzzzzzzzz", "z", "CreateFailed") + "]}");
  const std::string catalog = " --catalog " + (dir / "policies/catalog/aws-ml.gov");
  const gov::test::CommandResult imported = run_gov("import hyperpod " + (dir / "state") + catalog);
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("team a {") == imported.out.rfind("team a {"));
  CHECK(imported.out.find("team old") == std::string::npos);
  CHECK(imported.out.find("team z") == std::string::npos);
  CHECK(imported.out.find("# Not imported: compute quota \"quota-old\" in \"list.json\" (status \"Deleting\"): it does "
                          "not govern the cluster.\n") != std::string::npos);
  CHECK(imported.out.find("\"quota-z\" in \"list.json\" (status \"CreateFailed\")") != std::string::npos);

  const gov::test::CommandResult plan = run_gov("export hyperpod " + path + " --current " + (dir / "state"));
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  const std::string script = file(plan.out, "apply.sh");
  CHECK(script.find("delete-compute-quota") == std::string::npos);
  CHECK(script.find("create-compute-quota") == std::string::npos);
}

// A list printed with --max-items or --no-paginate is one page: read as the whole list, the other
// pages' quotas were missing from the import and created again by `--current`'s plan.
TEST_CASE("gov import and export --current refuse one page of a paginated list", "[hyperpod][import]") {
  gov::test::TempDir dir("hyperpod-page");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/two.gov", policy_with(kTwoTeams));
  dir.write("state/config.json", kConfigDescribe);
  dir.write("state/list.json", R"({"ComputeQuotaSummaries": [)" + quota_describe("aaaaaaaaaaaa", "a", kQuotaA, "") +
                                   R"(], "NextToken": "eyJuZXh0IjoyfQ=="})");
  const gov::test::CommandResult imported =
      run_gov("import hyperpod " + (dir / "state") + " --catalog " + (dir / "policies/catalog/aws-ml.gov"));
  CHECK(imported.exit_code == 1);
  CHECK(imported.out.empty());
  CHECK(imported.err.find("list.json: list-compute-quotas output: `NextToken`: this is one page of several") != std::string::npos);
  const gov::test::CommandResult plan = run_gov("export hyperpod " + path + " --current " + (dir / "state"));
  CHECK(plan.exit_code == 2);
  CHECK(plan.out.empty());
  CHECK(plan.err.find("list.json: the list-compute-quotas output is one page of several") != std::string::npos);
}

// The rename cut a 64-character name to 63 after trimming, so a `-` could end it, which the API's
// Name pattern refuses.
TEST_CASE("gov export hyperpod's cluster policy name never ends in a hyphen", "[hyperpod][export]") {
  gov::test::TempDir dir("hyperpod-name-cut");
  dir.copy_catalog();
  const std::string name = std::string(62, 'a') + ".b";
  std::string text = policy_with(kTwoTeams);
  text.replace(text.find("cluster c {"), 11, "cluster " + name + " {");
  const std::string path = dir.write("tests/bridge/long.gov", text);
  const gov::test::CommandResult r = run_gov("export hyperpod " + path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(file(r.out, "cluster-scheduler-config.json").find("\"Name\": \"" + std::string(62, 'a') + "\"") != std::string::npos);
  CHECK(r.err.find("W0402") != std::string::npos);
}

TEST_CASE("gov export hyperpod writes a borrow limit in instances as the entry's Count", "[hyperpod][export]") {
  // `borrow-limit = { instances = N }` is HyperPod's AbsoluteBorrowLimits entry with Count N (its
  // EFA share is no EFA amount); amounts beside it are the entry's members. Both come back.
  gov::test::TempDir dir("hyperpod-borrow-count");
  dir.copy_catalog();
  const std::string path = dir.write("tests/bridge/count.gov", policy_with(R"(team a {
  quota ml.g5.12xlarge { instances = 2, borrow-limit = { instances = 1 } }
}
team b {
  quota ml.g5.12xlarge { gpus = 4, borrow-limit = { instances = 1, gpus = 2 } }
}
)"));
  const gov::test::CommandResult r = run_gov("export hyperpod " + path + " --out " + (dir / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(gov::test::read_text(dir / "out/compute-quota-a.json")
            .find("\"AbsoluteBorrowLimits\": [\n        {\n          \"InstanceType\": \"ml.g5.12xlarge\",\n          \"Count\": 1\n"
                  "        }\n      ]") != std::string::npos);
  CHECK(gov::test::read_text(dir / "out/compute-quota-b.json")
            .find("\"InstanceType\": \"ml.g5.12xlarge\",\n          \"Count\": 1,\n          \"Accelerators\": 2\n") != std::string::npos);
  const gov::test::CommandResult imported =
      run_gov("import hyperpod " + (dir / "out") + " --capacity ml.g5.12xlarge=4,ml.inf2.24xlarge=2");
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("borrow-limit = { instances = 1, gpus = 2 }") != std::string::npos);
  dir.write("imported.gov", imported.out);
  const gov::test::CommandResult diff = run_gov("diff --files " + path + " " + (dir / "imported.gov"));
  INFO(diff.out + diff.err);
  CHECK(diff.out.find("no changes between") == 0);
}
