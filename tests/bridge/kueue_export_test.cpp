// `gov export kueue` (issue 17, point 1): the ClusterQueue HyperPod writes for seed 004's team,
// byte for byte; golden files of whole exports; every control in its field; lossy constructs.
// The CRD schemas validate the documents in tests/bridge/validate_kueue.py (CTest).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

using gov::test::read_text;
using gov::test::repo_path;
using gov::test::run_gov;

namespace {

bool updating() { return std::getenv("GOV_UPDATE_GOLDEN") != nullptr; }

/// The YAML documents of an export (the text between `---` lines), comments before the first
/// one dropped.
std::vector<std::string> documents(const std::string& yaml) {
  std::vector<std::string> out;
  size_t at = yaml.find("---\n");
  while (at != std::string::npos) {
    const size_t begin = at + 4;
    const size_t next = yaml.find("\n---\n", begin);
    out.push_back(yaml.substr(begin, next == std::string::npos ? std::string::npos : next + 1 - begin));
    at = next == std::string::npos ? next : next + 1;
  }
  return out;
}

/// The document whose `metadata.name` is `name` and whose kind is `kind`.
std::string document(const std::string& yaml, const std::string& kind, const std::string& name) {
  for (const std::string& doc : documents(yaml)) {
    if (doc.find("kind: " + kind + "\n") != std::string::npos && doc.find("  name: " + name + "\n") != std::string::npos) {
      return doc;
    }
  }
  return {};
}

/// Compares `actual` with the golden file `tests/bridge/golden/NAME` (rewritten under
/// GOV_UPDATE_GOLDEN).
void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = repo_path("tests/bridge/golden/" + name);
  if (updating()) gov::test::write_text(path, actual);
  INFO("golden file " << path << " (GOV_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(actual == read_text(path));
}

}  // namespace

TEST_CASE("gov export kueue writes the ClusterQueue HyperPod writes for seed 004", "[bridge][export]") {
  // Written by hand from the seed's `kubectl describe`: never rewritten from gov's output.
  for (const std::string api : {"v1beta1", "v1beta2"}) {
    const gov::test::CommandResult r = run_gov("export kueue tests/bridge/policies/onlygputeam.gov --api " + api);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string queue = document(r.out, "ClusterQueue", "hyperpod-ns-onlygputeam-clusterqueue");
    CHECK(queue == read_text(repo_path("tests/bridge/golden/hyperpod-ns-onlygputeam-clusterqueue." + api + ".yaml")));
  }
}

TEST_CASE("gov export kueue of the fine-grained example writes seed 004's ClusterQueue", "[bridge][export]") {
  // policies/examples/fine-grained.gov sets none of Kueue's controls: HyperPod's ClusterQueue
  // settings are the language's defaults (borrowWithinCohort LowerPriority, whenCanBorrow
  // TryNextFlavor), so the example's queue is the seed's as it stands.
  for (const std::string api : {"v1beta1", "v1beta2"}) {
    const gov::test::CommandResult r = run_gov("export kueue policies/examples/fine-grained.gov --api " + api);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(document(r.out, "ClusterQueue", "hyperpod-ns-onlygputeam-clusterqueue") ==
          read_text(repo_path("tests/bridge/golden/hyperpod-ns-onlygputeam-clusterqueue." + api + ".yaml")));
    check_golden("fine-grained." + api + ".yaml", r.out);
  }
}

TEST_CASE("gov export kueue golden files of every control and naming", "[bridge][export]") {
  for (const std::string api : {"v1beta2", "v1beta1"}) {
    for (const std::string naming : {"hyperpod", "plain"}) {
      const gov::test::CommandResult r =
          run_gov("export kueue tests/bridge/policies/controls.gov --api " + api + " --naming " + naming);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      check_golden("controls." + api + "." + naming + ".yaml", r.out);
    }
  }
}

TEST_CASE("gov export kueue maps each control to its field", "[bridge][export]") {
  const gov::test::CommandResult r = run_gov("export kueue tests/bridge/policies/controls.gov --naming plain");
  REQUIRE(r.exit_code == 0);
  const std::string research = document(r.out, "ClusterQueue", "research");
  CHECK(research.find("    withinClusterQueue: LowerOrNewerEqualPriority\n") != std::string::npos);
  CHECK(research.find("    reclaimWithinCohort: LowerPriority\n") != std::string::npos);
  CHECK(research.find("      maxPriorityThreshold: 70\n      policy: LowerPriority\n") != std::string::npos);
  CHECK(research.find("  queueingStrategy: StrictFIFO\n") != std::string::npos);
  CHECK(research.find("    preference: PreemptionOverBorrowing\n    whenCanBorrow: TryNextFlavor\n    whenCanPreempt: TryNextFlavor\n") !=
        std::string::npos);
  // lending-limit = { gpus = 1 } on 4 × ml.g5.8xlarge; { instances = 1, gpus = 2 } on ml.g5.12xlarge.
  CHECK(research.find("            - borrowingLimit: 2\n              lendingLimit: 1\n              name: nvidia.com/gpu\n              nominalQuota: 4\n") !=
        std::string::npos);
  CHECK(research.find("              lendingLimit: 48\n              name: cpu\n") != std::string::npos);
  const std::string platform = document(r.out, "ClusterQueue", "platform");
  CHECK(platform.find("    whenCanBorrow: MayStopSearch\n    whenCanPreempt: MayStopSearch\n") != std::string::npos);
  CHECK(platform.find("    withinClusterQueue: Never\n") != std::string::npos);
  CHECK(platform.find("    reclaimWithinCohort: Never\n") != std::string::npos);
  CHECK(platform.find("              lendingLimit: 0\n") != std::string::npos);  // dont-lend
  const std::string ops = document(r.out, "ClusterQueue", "ops");
  CHECK(ops.find("  stopPolicy: Hold\n") != std::string::npos);  // active = false
  CHECK(ops.find("              name: cpu\n              nominalQuota: 2500m\n") != std::string::npos);
  // v1beta1 spells the stopping searches as v0.19.2 reads them.
  const gov::test::CommandResult old = run_gov("export kueue tests/bridge/policies/controls.gov --naming plain --api v1beta1");
  REQUIRE(old.exit_code == 0);
  CHECK(document(old.out, "ClusterQueue", "platform").find("    whenCanBorrow: Borrow\n    whenCanPreempt: Preempt\n") !=
        std::string::npos);
  CHECK(document(old.out, "ClusterQueue", "platform").find("  cohort: controls\n") != std::string::npos);
  // The cluster policy's settings outside Kueue's objects: a comment and the Cohort's annotations.
  CHECK(r.out.find("#   fairSharing: {enable: false}\n") != std::string::npos);
  CHECK(document(r.out, "Cohort", "controls").find("    gov/idle-compute: fcfs\n") != std::string::npos);
  CHECK(document(r.out, "ResourceFlavor", "ml.trn1.32xlarge").find("    gov/capacity: \"1\"\n") != std::string::npos);
  CHECK(document(r.out, "WorkloadPriorityClass", "training").find("value: 70\n") != std::string::npos);
}

// Under idle-resource sharing the Cohort's quota is the capacity no team reserves; the GPUs
// that partition quotas are cut from are reserved too (a migration helper's finding: a p4d cut
// into 56 MIG slices still lent its 8 whole GPUs). 16 GPUs - 4 whole - ceil(20 slices / 7) = 9.
TEST_CASE("gov export kueue's idle pool leaves out the GPUs partitions are cut from", "[bridge][export]") {
  const gov::test::CommandResult r = run_gov("export kueue tests/corpus/idle-sharing-partitions.gov --naming plain");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::string cohort;
  for (const std::string& doc : documents(r.out))
    if (doc.find("kind: Cohort\n") != std::string::npos) cohort = doc;
  CHECK(cohort.find("            - name: nvidia.com/gpu\n              nominalQuota: 9\n") != std::string::npos);
}

TEST_CASE("gov export kueue refuses rules and default-priority unless lossy is allowed", "[bridge][export]") {
  const gov::test::CommandResult r = run_gov("export kueue policies/examples/rules.gov");
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("error[E0401]: cannot export rule `") != std::string::npos);
  CHECK(r.err.find("= help: remove it, or pass `--allow-lossy`") != std::string::npos);
  const gov::test::CommandResult lossy = run_gov("export kueue policies/examples/rules.gov --allow-lossy");
  CHECK(lossy.exit_code == 0);
  CHECK(lossy.err.find("warning[E0401]: cannot export rule `") != std::string::npos);
  CHECK(lossy.out.rfind("# Dropped (--allow-lossy): the policy says more than the target can express.\n#   rule `", 0) == 0);
}

TEST_CASE("gov export rejects bad usage", "[bridge][export]") {
  CHECK(run_gov("export kueue").exit_code == 2);
  CHECK(run_gov("export openshift policies/examples/fine-grained.gov").exit_code == 2);
  const gov::test::CommandResult api = run_gov("export kueue policies/examples/fine-grained.gov --api v1");
  CHECK(api.exit_code == 2);
  CHECK(api.err == "error: unknown value `v1` for `--api` (expected v1beta2 or v1beta1)\n");
  CHECK(run_gov("export kueue no-such-file.gov").exit_code == 2);
  CHECK(run_gov("help export").out.find("gov export kueue POLICY") != std::string::npos);
}
