// `gov import kueue` (issue 17, point 4, Kueue half): Kueue's objects as a formatted policy that
// checks; round trips through `gov export kueue` (both API versions) with `gov diff` reporting
// nothing; HyperPod's own ClusterQueue (seed 004) read without gov's annotations; bad input is one
// error naming the file, line, object and field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

/// A ClusterQueue of team `a` on ml.g5.8xlarge with `resource` replacing its gpu entry.
/// The resources `entries` (the first flavor's) name, in order: a flavor lists its group's
/// coveredResources, in their order, or the API server refuses the ClusterQueue.
std::string covered_by(const std::string& entries) {
  std::string covered;
  const size_t end = std::min(entries.find("\n    - name:"), entries.size());
  for (size_t at = entries.find("{name: "); at < end; at = entries.find("{name: ", at)) {
    at += 7;
    covered += (covered.empty() ? "" : ", ") + entries.substr(at, entries.find(',', at) - at);
  }
  return covered;
}

/// A ClusterQueue of one resource group, one flavor (ml.g5.8xlarge) listing `entries`, or more.
std::string queue(const std::string& entries = "{name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2}",
                  const std::string& extra_spec = "") {
  return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: hyperpod-ns-a-clusterqueue}\nspec:\n"
         "  cohortName: shared-pool\n" + extra_spec + "  resourceGroups:\n  - coveredResources: [" + covered_by(entries) +
         "]\n    flavors:\n    - name: ml.g5.8xlarge\n      resources:\n      - " + entries + "\n";
}

}  // namespace

TEST_CASE("gov import kueue of gov export kueue gives the policy back", "[kube][import]") {
  // Every example Kueue can express (rules.gov has admission rules), and every Kueue control.
  const std::vector<std::string> policies = {
      "policies/examples/fine-grained.gov", "policies/examples/workshop-g5.gov", "policies/examples/workshop-kr-g5-8xlarge.gov",
      "policies/examples/workshop-kr-g5-12xlarge.gov", "policies/examples/cli-walkthrough-g5-12xlarge.gov",
      "tests/bridge/policies/controls.gov", "tests/bridge/policies/onlygputeam.gov",
      // GPU partitions: `nvidia.com/mig-<profile>` resources read back into `partitions`.
      "tests/bridge/policies/partitions.gov",
      // `borrow-limit = unlimited`, the team's and a quota's: borrowingLimit left out; and a
      // single resource's (`borrow-limit = { vcpus = unlimited }`).
      "tests/corpus/borrow-unlimited.gov", "tests/corpus/borrow-unlimited-per-resource.gov",
      // Decimal fair-share weights: `weight: 1.5`.
      "tests/corpus/fair-share-decimal-weights.gov",
      // The cohort's own quota: the Cohort's resourceGroups.
      "tests/corpus/cohort-quota.gov",
      // Resource groups: several resourceGroups read back as `resource-groups`.
      "tests/corpus/resource-groups.gov", "tests/bridge/policies/resource-groups.gov"};
  for (const std::string& policy : policies) {
    for (const std::string api : {"v1beta2", "v1beta1"}) {
      for (const std::string naming : {"hyperpod", "plain"}) {
        INFO(policy << " --api " << api << " --naming " << naming);
        gov::test::TempDir dir("import-kueue-round-trip");
        dir.copy_catalog();
        const gov::test::CommandResult exported = run_gov("export kueue " + policy + " --api " + api + " --naming " + naming);
        REQUIRE(exported.exit_code == 0);
        dir.write("kueue.yaml", exported.out);
        const gov::test::CommandResult imported = run_gov("import kueue " + (dir / "kueue.yaml"));
        INFO(imported.err);
        REQUIRE(imported.exit_code == 0);
        dir.write("imported.gov", imported.out);
        CHECK(run_gov("fmt --check " + (dir / "imported.gov")).exit_code == 0);
        const gov::test::CommandResult diff = run_gov("diff --files " + policy + " " + (dir / "imported.gov"));
        INFO(diff.out);
        CHECK(diff.exit_code == 0);
        CHECK(diff.out.find("no changes between") == 0);
        // A hostile-input helper's finding (session 40): the import wrote settings Kueue ignores
        // there (borrowWithinCohort under fair sharing, fungibility with one instance type, fair
        // sharing's weights and strategies under fcfs), which gov lint then called no-effect.
        const gov::test::CommandResult lint = run_gov("lint " + (dir / "imported.gov"));
        INFO(lint.out << lint.err);
        CHECK((lint.out + lint.err).find("no effect") == std::string::npos);
      }
    }
  }
}

TEST_CASE("gov import kueue infers sharing and borrow limits without gov's annotations", "[kube][import]") {
  // A cluster HyperPod set up has no LocalQueue annotations: the team's sharing and percentage
  // come from the resolved limits, and give every example back.
  for (const std::string policy : {"policies/examples/fine-grained.gov", "policies/examples/workshop-g5.gov",
                                   "policies/examples/cli-walkthrough-g5-12xlarge.gov", "tests/bridge/policies/controls.gov"}) {
    INFO(policy);
    gov::test::TempDir dir("import-kueue-infer");
    dir.copy_catalog();
    const gov::test::CommandResult exported = run_gov("export kueue " + policy);
    REQUIRE(exported.exit_code == 0);
    std::string yaml;
    size_t stripped = 0;
    for (size_t at = 0; at < exported.out.size();) {
      const size_t end = std::min(exported.out.find('\n', at), exported.out.size());
      const std::string line = exported.out.substr(at, end - at);
      if (line.find("gov/sharing:") != std::string::npos || line.find("gov/borrow-limit:") != std::string::npos) {
        ++stripped;
      } else if (line != "  annotations:" || exported.out.compare(end + 1, 21, "    gov/borrow-limit:") != 0) {
        yaml += line + "\n";
      }
      at = end + 1;
    }
    CHECK(stripped > 0);
    dir.write("kueue.yaml", yaml);
    const gov::test::CommandResult imported = run_gov("import kueue " + (dir / "kueue.yaml"));
    INFO(imported.err);
    REQUIRE(imported.exit_code == 0);
    dir.write("imported.gov", imported.out);
    const gov::test::CommandResult diff = run_gov("diff --files " + policy + " " + (dir / "imported.gov"));
    INFO(diff.out);
    CHECK(diff.out.find("no changes between") == 0);
  }
}

TEST_CASE("gov import kueue reads HyperPod's own ClusterQueue of seed 004", "[kube][import]") {
  // The ClusterQueue HyperPod writes (no gov annotations, no flavors): the team's sharing and
  // borrow limit come from the limits themselves.
  gov::test::TempDir dir("import-kueue-seed");
  dir.copy_catalog();
  const gov::test::CommandResult r =
      run_gov("import kueue tests/bridge/golden/hyperpod-ns-onlygputeam-clusterqueue.v1beta1.yaml --capacity ml.g6.12xlarge=2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("team onlygputeam {\n  quota ml.g6.12xlarge { gpus = 2, vcpus = 48, memory = 192 GiB, efa = 1 }\n\n"
                   "  sharing               = lend-and-borrow\n  borrow-limit          = 50%\n"
                   "  preempt-team-tasks    = lower-priority\n") != std::string::npos);
  dir.write("imported.gov", r.out);
  const gov::test::CommandResult inspect = run_gov("inspect " + (dir / "imported.gov"));
  REQUIRE(inspect.exit_code == 0);
  CHECK(inspect.out.find("    gpu                             2                1      unlimited\n"
                         "    vcpu                           48               24      unlimited\n"
                         "    memory                    192 GiB           96 GiB      unlimited\n"
                         "    efa                             1                0      unlimited\n") != std::string::npos);
  // Without --capacity the cluster asks for it in a comment, and the policy still checks.
  const gov::test::CommandResult bare = run_gov("import kueue tests/bridge/golden/hyperpod-ns-onlygputeam-clusterqueue.v1beta2.yaml");
  REQUIRE(bare.exit_code == 0);
  CHECK(bare.out.find("  # capacity: Kueue's objects do not say; give it") != std::string::npos);
  // HyperPod's LocalQueue beside it, with the `Stop Policy: None` seed 004 shows: the default, read
  // past (it was refused as a field gov cannot represent). A held LocalQueue is still refused.
  const std::string local_queue = "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: "
                                  "hyperpod-ns-onlygputeam-localqueue\n  namespace: hyperpod-ns-onlygputeam\nspec:\n  "
                                  "clusterQueue: hyperpod-ns-onlygputeam-clusterqueue\n  stopPolicy: None\n";
  const std::string queue_text = gov::test::read_text("tests/bridge/golden/hyperpod-ns-onlygputeam-clusterqueue.v1beta1.yaml");
  dir.write("with-local.yaml", queue_text + local_queue);
  const gov::test::CommandResult with_local = run_gov("import kueue " + (dir / "with-local.yaml"));
  INFO(with_local.err);
  CHECK(with_local.exit_code == 0);
  CHECK(with_local.out.find("team onlygputeam {") != std::string::npos);
  std::string held = queue_text + local_queue;
  held.replace(held.rfind("stopPolicy: None"), 16, "stopPolicy: Hold");
  dir.write("held.yaml", held);
  const gov::test::CommandResult held_result = run_gov("import kueue " + (dir / "held.yaml"));
  CHECK(held_result.exit_code == 1);
  CHECK(held_result.err.find("`spec.stopPolicy`: `Hold` holds this LocalQueue alone") != std::string::npos);
  // HyperPod's LocalQueue of one team pointing at another team's ClusterQueue: gov maps the name
  // to its own team, so the import was charged to the wrong team (a hostile-input finding).
  std::string crossed = queue_text + local_queue;
  crossed.replace(crossed.find("name: hyperpod-ns-onlygputeam-localqueue"), 40, "name: hyperpod-ns-other-localqueue");
  dir.write("crossed.yaml", crossed);
  const gov::test::CommandResult crossed_result = run_gov("import kueue " + (dir / "crossed.yaml"));
  CHECK(crossed_result.exit_code == 1);
  // The path as given, clickable (a hostile-input finding: the directory was dropped, the name quoted).
  CHECK(crossed_result.err.rfind("error: " + (dir / "crossed.yaml") + ":", 0) == 0);
  CHECK(crossed_result.err.find("LocalQueue `hyperpod-ns-other-localqueue`: `spec.clusterQueue`: "
                                "`hyperpod-ns-onlygputeam-clusterqueue`: HyperPod's LocalQueue of team `other` points at "
                                "team `onlygputeam`'s ClusterQueue") != std::string::npos);
}

// A Kueue auditor's finding (session 41): HoldAndDrain came back as Hold without a word. Kueue also
// evicts the admitted workloads under it, which gov's `active = false` does not.
TEST_CASE("gov import kueue holds a HoldAndDrain ClusterQueue and says it does not drain it", "[kube][import]") {
  gov::test::TempDir dir("import-kueue-drain");
  dir.copy_catalog();
  for (const std::string policy : {"Hold", "HoldAndDrain"}) {
    INFO(policy);
    dir.write("q.yaml", queue("{name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2}", "  stopPolicy: " + policy + "\n"));
    const gov::test::CommandResult imported = run_gov("import kueue " + (dir / "q.yaml"));
    INFO(imported.err);
    REQUIRE(imported.exit_code == 0);
    CHECK(imported.out.find("  active                = false\n") != std::string::npos);
    CHECK((imported.out.find("# stopPolicy: HoldAndDrain; gov holds the queue as Hold does, and does not evict its "
                             "admitted workloads") != std::string::npos) == (policy == "HoldAndDrain"));
  }
}

TEST_CASE("gov import kueue reads a missing borrowingLimit as borrow-limit = unlimited", "[kube][import]") {
  gov::test::TempDir dir("import-kueue-unlimited");
  dir.copy_catalog();
  // Every listed resource without a limit: the team's; a resource the flavor does not list
  // cannot be borrowed in Kueue, so it keeps an absolute limit of 0.
  dir.write("team.yaml", queue("{name: nvidia.com/gpu, nominalQuota: 4}"));
  const gov::test::CommandResult team = run_gov("import kueue " + (dir / "team.yaml"));
  INFO(team.err);
  REQUIRE(team.exit_code == 0);
  CHECK(team.out.find("  borrow-limit          = unlimited\n") != std::string::npos);
  CHECK(team.out.find("borrow-limit = { neuron = 0, vcpus = 0, memory = 0 GiB, efa = 0 }") != std::string::npos);
  // One quota without limits beside a limited one: the quota's.
  dir.write("quota.yaml",
            queue("{name: nvidia.com/gpu, nominalQuota: 4}\n      - {name: cpu, nominalQuota: 8}\n      - {name: memory, "
                  "nominalQuota: 64Gi}\n      - {name: vpc.amazonaws.com/efa, nominalQuota: 0}\n      - {name: "
                  "aws.amazon.com/neurondevice, nominalQuota: 0}\n    - name: ml.g5.12xlarge\n      resources:\n      - {name: "
                  "nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2}\n      - {name: cpu, nominalQuota: 0, borrowingLimit: 0}\n"
                  "      - {name: memory, nominalQuota: 0, borrowingLimit: 0}\n      - {name: vpc.amazonaws.com/efa, "
                  "nominalQuota: 0, borrowingLimit: 0}\n      - {name: aws.amazon.com/neurondevice, nominalQuota: 0, "
                  "borrowingLimit: 0}"));
  const gov::test::CommandResult quota = run_gov("import kueue " + (dir / "quota.yaml"));
  INFO(quota.err);
  REQUIRE(quota.exit_code == 0);
  INFO(quota.out);
  CHECK(quota.out.find("quota ml.g5.8xlarge  { gpus = 4, vcpus = 8, memory = 64 GiB, efa = 0, borrow-limit = unlimited }") !=
        std::string::npos);
  CHECK(quota.out.find("  borrow-limit          = 50%\n") != std::string::npos);
  // A migration helper's finding: one resource without a limit beside limited ones of the same
  // flavor ("cap only the GPUs") was refused. It is that resource's `unlimited`; the others keep
  // the team's percentage (here 25 %: a borrowingLimit of 2 on a nominal 8).
  dir.write("resource.yaml",
            queue("{name: cpu, nominalQuota: 8}\n      - {name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 1}"));
  const gov::test::CommandResult resource = run_gov("import kueue " + (dir / "resource.yaml"));
  INFO(resource.err);
  REQUIRE(resource.exit_code == 0);
  INFO(resource.out);
  CHECK(resource.out.find("quota ml.g5.8xlarge { gpus = 4, vcpus = 8, memory = 0 GiB, efa = 0, borrow-limit = { vcpus = "
                          "unlimited } }") != std::string::npos);
  CHECK(resource.out.find("  borrow-limit          = 25%\n") != std::string::npos);
  // Read back through gov export kueue: the same ClusterQueue limits.
  dir.write("resource.gov", resource.out);
  const gov::test::CommandResult exported = run_gov("export kueue --naming plain " + (dir / "resource.gov"));
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("            - name: cpu\n              nominalQuota: 8\n") != std::string::npos);
  CHECK(exported.out.find("            - borrowingLimit: 1\n              name: nvidia.com/gpu\n              nominalQuota: 4\n") !=
        std::string::npos);
}

TEST_CASE("gov import kueue names the file object and field of bad input", "[kube][import]") {
  gov::test::TempDir dir("import-kueue-bad");
  std::string bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    const std::string previous(1, static_cast<char>(level - 1));
    bomb += std::string(1, level) + ": &" + std::string(1, level) + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", *" : "*") + previous;
    bomb += "]\n";
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
       "bad.yaml:2:7: Deployment `d`: `kind`: `Deployment` is not a Kueue object gov imports"},
      {"apiVersion: kueue.x-k8s.io/v1alpha1\nkind: ClusterQueue\nmetadata: {name: q}\n",
       "bad.yaml:1:13: ClusterQueue `q`: `apiVersion`: `kueue.x-k8s.io/v1alpha1` is not"},
      {"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {}\n", "bad.yaml:3:11: object: `metadata.name`: missing"},
      // Unlimited borrowing of one partition beside a limited one of the same quota has no gov form
      // (resources have: `borrow-limit = { gpus = unlimited }`).
      {"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  cohortName: shared-pool\n"
       "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu, nvidia.com/mig-1g.5gb]\n    flavors:\n    - name: "
       "ml.p4d.24xlarge\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 1, borrowingLimit: 1}\n      - "
       "{name: nvidia.com/mig-1g.5gb, nominalQuota: 7}\n",
       "`spec.resourceGroups`: `nvidia.com/mig-1g.5gb` of `ml.p4d.24xlarge` has no borrowingLimit beside resources that "
       "have one"},
      {queue("{name: nvidia.com/gpu, nominalQuota: 1.5, borrowingLimit: 0}"),
       "`spec.resourceGroups[0].flavors[0].resources[0].nominalQuota`: `1.5` is not a whole number of devices"},
      {queue("{name: memory, nominalQuota: 1.5Ki, borrowingLimit: 0}"),
       "`spec.resourceGroups[0].flavors[0].resources[0].nominalQuota`: `1.5Ki` is not a whole number of MiB"},
      {queue("{name: nvidia.com/gpu, nominalQuota: 99999E, borrowingLimit: 0}"), "`99999E` is too large"},
      // Refused at the field, not as E0309 about a generated policy the user never saw.
      {queue("{name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2, lendingLimit: 8}"),
       "`spec.resourceGroups[0].flavors[0].resources[0].lendingLimit`: `8` is more than the nominal quota `4`"},
      {queue("{name: example.com/fpga, nominalQuota: 1, borrowingLimit: 0}"),
       "bad.yaml:7:24: ClusterQueue `hyperpod-ns-a-clusterqueue`: `spec.resourceGroups[0].coveredResources`: "
       "`example.com/fpga` is not a resource gov knows"},
      // What the API server refuses in a resource group (hostile input, session 40 #7): read, a
      // resource named twice had its last quota win, and one left out was imported as 0.
      {queue("{name: nvidia.com/gpu, nominalQuota: 4}\n      - {name: nvidia.com/gpu, nominalQuota: 8}"),
       "bad.yaml:7:40: ClusterQueue `hyperpod-ns-a-clusterqueue`: `spec.resourceGroups[0].coveredResources[1]`: "
       "`nvidia.com/gpu` is covered twice: a resource belongs to one resource group, once"},
      {queue("{name: nvidia.com/gpu, nominalQuota: 4}\n      - {name: cpu, nominalQuota: 8}\n    - name: ml.g5.12xlarge\n"
             "      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 4}"),
       "bad.yaml:15:7: ClusterQueue `hyperpod-ns-a-clusterqueue`: `spec.resourceGroups[0].flavors[1].resources`: 1 "
       "resource where coveredResources lists 2: a flavor lists every covered resource, once"},
      {queue("{name: nvidia.com/gpu, nominalQuota: 4}\n      - {name: cpu, nominalQuota: 8}\n    - name: ml.g5.12xlarge\n"
             "      resources:\n      - {name: cpu, nominalQuota: 8}\n      - {name: nvidia.com/gpu, nominalQuota: 4}"),
       "bad.yaml:15:16: ClusterQueue `hyperpod-ns-a-clusterqueue`: `spec.resourceGroups[0].flavors[1].resources[0].name`: "
       "`cpu` where coveredResources[0] is `nvidia.com/gpu`: a flavor lists the covered resources, in their order"},
      {queue("{name: nvidia.com/gpu, nominalQuota: 4}\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
             "    - name: ml.g5.12xlarge\n      resources:\n      - {name: cpu, nominalQuota: 8}\n"
             "      - {name: nvidia.com/gpu, nominalQuota: 4}"),
       "`spec.resourceGroups[1].coveredResources[1]`: `nvidia.com/gpu` is covered twice"},
      {"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: org}\nspec:\n  resourceGroups:\n"
       "  - coveredResources: [nvidia.com/gpu, cpu]\n    flavors:\n    - name: ml.g5.8xlarge\n      resources:\n"
       "      - {name: nvidia.com/gpu, nominalQuota: 4}\n",
       "bad.yaml:10:7: Cohort `org`: `spec.resourceGroups[0].flavors[0].resources`: 1 resource where coveredResources "
       "lists 2"},
      // A partition is read, and the checker refuses a profile the instance type does not have.
      {queue("{name: nvidia.com/mig-1g.5gb, nominalQuota: 1, borrowingLimit: 0}"),
       "error[E0330]: `ml.g5.8xlarge` has no MIG profiles, so it has no `mig-1g.5gb` partitions"},
      {queue(), "`spec.cohortName`"},  // replaced below: a queue without a cohort
      {queue("{name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2}", "  admissionChecks: [prov]\n"),
       "bad.yaml:6:3: ClusterQueue `hyperpod-ns-a-clusterqueue`: `spec.admissionChecks`: gov cannot represent it"},
      {queue("{name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2}", "  queueingStrategy: Random\n"),
       "`spec.queueingStrategy`: `Random` is not one of `BestEffortFIFO`, `StrictFIFO`"},
      {"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec:\n  nodeLabels: "
       "{node.kubernetes.io/instance-type: ml.z9.huge}\n",
       "ResourceFlavor `f`: `spec.nodeLabels.node.kubernetes.io/instance-type`: `ml.z9.huge` is not in the catalog"},
      {"apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: p}\nvalue: 1000\n",
       "WorkloadPriorityClass `p`: `value`: `1000` is not a whole number in 0..100"},
      {bomb, "bad.yaml: line 6, column 4: more than 1000000 YAML nodes"},  // the alias bomb stops at the node budget
      {std::string(size_t{10} << 20, '['), "bad.yaml: line 1, column 1052673: the YAML parser read more than 1048576 bytes past the last node"},
      {std::string(100, '['), "nesting deeper than 64 levels of maps and lists"},
      {"a: [1\n", "bad.yaml: line 2, column 1: "},
      {"apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: policy}\nvalue: 10\n",
       "WorkloadPriorityClass `policy`: `metadata.name`: `policy` is a reserved word of gov's language"},
      // An empty file (a failed export's output) or only skipped objects: nothing to import.
      {"", "the input holds no Kueue object (ClusterQueue, Cohort, ResourceFlavor, LocalQueue or WorkloadPriorityClass)"},
      {"apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n", "the input holds no Kueue object"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string text = cases[i].first;
    std::string expected = cases[i].second;
    if (cases[i].second == "`spec.cohortName`") {  // the queue without a cohort
      text.replace(text.find("  cohortName: shared-pool\n"), std::string("  cohortName: shared-pool\n").size(), "");
      expected = "`spec.cohort`: missing: gov puts every team in one cohort";
    }
    INFO(text.substr(0, 300));
    dir.write("bad.yaml", text);
    const gov::test::CommandResult r = run_gov("import kueue " + (dir / "bad.yaml"));
    INFO(r.err.substr(0, 500));
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find(expected) != std::string::npos);
  }
  // Larger than gov reads (100 MB), and unreadable: usage errors (exit 2).
  dir.write("big.yaml", std::string(size_t{100} << 20, '#'));
  const gov::test::CommandResult big = run_gov("import kueue " + (dir / "big.yaml"));
  CHECK(big.exit_code == 2);
  CHECK(big.err.find("cannot read") != std::string::npos);
  CHECK(run_gov("import kueue " + (dir / "missing.yaml")).exit_code == 2);
  CHECK(run_gov("import kubernetes x.yaml").exit_code == 2);
}

// A migration helper's finding: a plain Kueue (fair sharing never enabled) was imported with only a
// comment about idle-compute, so the policy meant gov's default, fair-share, and the exports asked
// to switch it on. The choice is now a line a review sees, or the operator's --idle-compute.
TEST_CASE("gov import kueue writes idle-compute out, as --idle-compute says or assumed", "[kube][import]") {
  const gov::test::TempDir dir("import-idle-compute");
  const std::string yaml = dir.write("team.yaml", queue());
  const gov::test::CommandResult assumed = gov::test::run_gov("import kueue '" + yaml + "'");
  INFO(assumed.err);
  REQUIRE(assumed.exit_code == 0);
  CHECK(assumed.out.find("  # Assumed: Kueue keeps fair sharing in its manager configuration") != std::string::npos);
  // gov fmt's layout aligns the `=` of the block.
  const auto line_of = [](const std::string& text, const std::string& key) {
    const size_t at = text.find("\n  " + key + " ");
    return at == std::string::npos ? std::string() : text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  };
  CHECK(line_of(assumed.out, "idle-compute").ends_with("= fair-share"));
  const gov::test::CommandResult chosen = gov::test::run_gov("import kueue '" + yaml + "' --idle-compute fcfs");
  REQUIRE(chosen.exit_code == 0);
  CHECK(line_of(chosen.out, "idle-compute").ends_with("= fcfs  # --idle-compute: Kueue's fairSharing.enable"));
  CHECK(chosen.out.find("Assumed") == std::string::npos);
  CHECK(gov::test::run_gov("import kueue '" + yaml + "' --idle-compute sometimes").exit_code == 2);
  CHECK(gov::test::run_gov("import hyperpod '" + yaml + "' --idle-compute fcfs").exit_code == 2);
}

// Migration helper findings, with their inputs (tests/kube/import/):
// - a notebook pool that borrows only MIG slices was read as a team that only lends, and refused;
// - a LocalQueue `nlp-ns/nlp-queue` naming ClusterQueue `nlp` was dropped, and the export's
//   namespaceSelector (the team's namespace alone) then locked it out of its ClusterQueue.
TEST_CASE("gov import kueue counts MIG slices when it infers sharing", "[kube][import]") {
  const gov::test::CommandResult r =
      gov::test::run_gov("import kueue tests/kube/import/mig-borrows-slices.yaml --capacity ml.p5.48xlarge=2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const size_t team = r.out.find("team notebooks {");
  REQUIRE(team != std::string::npos);
  const std::string block = r.out.substr(team, r.out.find("\n}\n", team) - team);
  CHECK(block.find("borrow-limit = { partitions = { mig-1g.10gb: 7 } }") != std::string::npos);
  CHECK(block.find("sharing               = lend-and-borrow\n") != std::string::npos);
  CHECK(block.find("borrow-limit          = 0%\n") != std::string::npos);  // nothing else borrows
}

TEST_CASE("gov import kueue keeps LocalQueues named elsewhere, and the export admits their namespaces",
          "[kube][import]") {
  const gov::test::TempDir dir("import-local-queues");
  const gov::test::CommandResult imported =
      gov::test::run_gov("import kueue tests/kube/import/localqueue-elsewhere.yaml --capacity ml.g5.12xlarge=1");
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("queues") != std::string::npos);
  CHECK(imported.out.find("= [\"nlp-queue\"]\n") != std::string::npos);
  CHECK(imported.out.find("= [\"nlp-ns\"]\n") != std::string::npos);
  const std::string policy = dir.write("nlp.gov", imported.out);
  const gov::test::CommandResult exported = gov::test::run_gov("export kueue '" + policy + "' --naming plain");
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("  namespaceSelector:\n    matchExpressions:\n      - key: kubernetes.io/metadata.name\n"
                          "        operator: In\n        values:\n          - nlp\n          - nlp-ns\n") != std::string::npos);
  // And back: the selector's namespaces and the policy's are the same, so gov diff sees no change.
  const std::string again = dir.write("again.yaml", exported.out);
  const gov::test::CommandResult reimported = gov::test::run_gov("import kueue '" + again + "'");
  REQUIRE(reimported.exit_code == 0);
  CHECK(reimported.out.find("= [\"nlp-ns\"]\n") != std::string::npos);
}

TEST_CASE("gov import kueue names the object a policy that does not check was written from", "[kube][import]") {
  // The checker's messages are about the generated policy (`<imported>`), which the user never
  // saw; each names the object its block was written from (hostile input, session 40 #8).
  gov::test::TempDir dir("import-kueue-origin");
  const std::string path = dir.write(
      "objects.yaml",
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: shared-pool\nspec:\n  resourceGroups:\n"
      "  - coveredResources: [nvidia.com/gpu, nvidia.com/mig-1g.5gb]\n    flavors:\n    - name: ml.g5.8xlarge\n"
      "      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 1}\n      - {name: nvidia.com/mig-1g.5gb, "
      "nominalQuota: 2}\n---\n" +
          queue("{name: nvidia.com/mig-1g.5gb, nominalQuota: 1, borrowingLimit: 0}"));
  const gov::test::CommandResult r = gov::test::run_gov("import kueue '" + path + "'");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  // Two E0330s, one in the cohort's block and one in the team's, each with its object.
  const size_t cohort = r.err.find("= note: written from " + path + ":4:9: Cohort `shared-pool`\n");
  const size_t team = r.err.find("= note: written from " + path + ":16:18: ClusterQueue `hyperpod-ns-a-clusterqueue`\n");
  CHECK(cohort != std::string::npos);
  CHECK(team != std::string::npos);
  CHECK(cohort < team);
  CHECK(r.err.find("2 errors") != std::string::npos);
}
