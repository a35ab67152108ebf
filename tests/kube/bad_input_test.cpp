// Issue 18's bad input through the commands that read Kubernetes objects: `gov eval --task`,
// `gov eval --state` and `gov simulate --workloads` each give one clear error (exit 1, or 2 for a
// file gov does not read), print no decision, and never crash.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const std::string kWalkthrough = "policies/examples/cli-walkthrough-g5-12xlarge.gov";

/// A Job of team-b with `gpus` per pod, `pods` pods and `extra` lines under its container's requests.
std::string job(const std::string& name, const std::string& pods = "1", const std::string& gpus = "1",
                const std::string& extra = "", bool labelled = true) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n" +
         (labelled ? "  labels: {kueue.x-k8s.io/queue-name: hyperpod-ns-team-b-localqueue}\n" : "") +
         "spec:\n  parallelism: " + pods +
         "\n  template:\n    spec:\n      containers:\n        - name: c\n          resources:\n            requests:\n"
         "              nvidia.com/gpu: \"" + gpus + "\"\n" + extra;
}

/// The same object as a Workload (what a state holds).
std::string workload(const std::string& name, const std::string& sets) {
  return "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: " + name +
         "}\nspec:\n  queueName: hyperpod-ns-team-b-localqueue\n  podSets:\n" + sets;
}

struct Case {
  std::string name;
  std::string yaml;
  std::string error;  // in the one error line
  int exit_code = 1;
};

std::string bomb() {
  std::string yaml = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: bomb}\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) yaml += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
    yaml += "]\n";
  }
  return yaml;
}

std::vector<Case> cases() {
  std::string sets;
  for (int i = 0; i < 10000; ++i) sets += "  - {name: s" + std::to_string(i) + ", count: 1, template: {spec: {containers: []}}}\n";
  return {
      {"no-queue", job("j", "1", "1", "", false), "no `kueue.x-k8s.io/queue-name` label: Kueue does not manage the object"},
      // With a queue label (without one, a replay skips it: Kueue does not manage it).
      {"unknown-kind",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels: {kueue.x-k8s.io/queue-name: "
       "hyperpod-ns-team-b-localqueue}\nspec: {}\n",
       "`Deployment` (`apps/v1`) is not a workload gov reads"},
      {"overflow", job("j", "1", "10E"), "`10E` is too large (above 2^63 base units)"},
      {"zero-pods", job("j", "0"), "every pod set has zero pods: the workload runs nothing"},
      {"pod-sets", workload("w", sets), "10000 pod sets; Kueue allows at most 8"},
      // Kueue admits a pod group as one Workload, all or nothing; read pod by pod it was admitted
      // in part.
      {"pod-group",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: grp-0\n  labels: {kueue.x-k8s.io/queue-name: "
       "hyperpod-ns-team-b-localqueue, kueue.x-k8s.io/pod-group-name: grp}\nspec:\n  containers:\n  - name: c\n"
       "    resources: {limits: {nvidia.com/gpu: 1}}\n",
       "the Pod is one of pod group `grp`, which Kueue admits all or nothing as one Workload"},
      {"bomb", bomb(), "more than 1000000 YAML nodes (counting the copies aliases make)"},
      {"unknown-resource", job("j", "1", "1", "              ephemeral-storage: 10Gi\n"), "a resource gov does not know"},
      {"huge", std::string(100u << 20, '#'), "file is 104857600 bytes; gov reads at most 16777216 bytes", 2},
      // A NUL was read as an escape ("unknown escape character: \n" at the next line), another C0
      // control was taken into the scalar (a hostile-input helper's finding).
      {"nul", std::string("apiVersion: batch/v1\nkind: Job\0\n", 33), "2:10: control character U+0000 in the YAML"},
      {"control", "apiVersion: batch/v1\x01\nkind: Job\n", "1:21: control character U+0001 in the YAML"},
      // Bad bytes became U+FFFD, and two names differing in them one task id (a hostile-input
      // trial's finding). Columns count code points (`é` is one).
      // Kubernetes refuses an extended resource whose request and limit differ; it was decided on
      // the request (a hostile-input trial's finding).
      {"gpu-limit", job("j", "1", "1", "            limits: {nvidia.com/gpu: 4}\n"),
       "`nvidia.com/gpu` is requested 1 and limited 4: Kubernetes requires an extended resource's request and limit to be equal"},
      {"mig-limit", job("j", "1", "0", "              nvidia.com/mig-1g.10gb: 1\n            limits: {nvidia.com/mig-1g.10gb: 2}\n"),
       "`nvidia.com/mig-1g.10gb` is requested 1 and limited 2"},
      {"cpu-limit", job("j", "1", "1", "              cpu: 4\n            limits: {cpu: 2}\n"),
       "`cpu`'s request is above its limit, which Kubernetes refuses"},
      {"utf8", job("\xc3\xa9j\xff\xfe" "1"), "4:11: invalid UTF-8 byte 0xFF: Kubernetes YAML is UTF-8"},
      // The API server refuses such names, so the file did not come from a cluster (a hostile-input
      // trial's finding, session 40 #10).
      {"bad-name", job("Train_Job!"), "4:9: Job `Train_Job!`: `metadata.name`: `Train_Job!` is not a Kubernetes object name"},
      {"dotted-name", job("a..b"), "`a..b` is not a Kubernetes object name"},
      {"bad-namespace", job("j\n  namespace: Team-B"), "`Team-B` is not a Kubernetes namespace"},
  };
}

/// One error line, no output, the expected exit code.
void check_one_error(const gov::test::CommandResult& r, const Case& c) {
  INFO(c.name << ": " << r.err);
  CHECK(r.exit_code == c.exit_code);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
  CHECK(r.err.find(c.error) != std::string::npos);
}

}  // namespace

TEST_CASE("bad Kubernetes input gives one clear error in every command that reads it", "[k8s][kube][bad-input]") {
  gov::test::TempDir dir("kube-bad-input");
  const std::string task = dir.write("t.json", R"({"id": "t", "team": "team-b", "gpus": 1})");
  for (const Case& c : cases()) {
    const std::string path = dir.write(c.name + ".yaml", c.yaml);
    check_one_error(run_gov("eval " + kWalkthrough + " --task " + path), c);
    if (c.name == "no-queue") {
      // A replay of a cluster's objects skips what Kueue does not manage, with one note (an `-A`
      // export holds kube-system Jobs and Jobs' own Pods: a Kubernetes engineer's finding).
      const gov::test::CommandResult replay = run_gov("simulate " + kWalkthrough + " --workloads " + path);
      CHECK(replay.exit_code == 0);
      CHECK(replay.err == "note: 1 object has no `kueue.x-k8s.io/queue-name` label: Kueue does not manage it, so it is "
                          "not replayed\n");
    } else {
      check_one_error(run_gov("simulate " + kWalkthrough + " --workloads " + path), c);
    }
    check_one_error(run_gov("eval " + kWalkthrough + " --task " + task + " --state " + path), c);
  }
}

TEST_CASE("pods times a per-pod request beyond what gov counts is an invalid task, not a crash", "[k8s][kube][bad-input]") {
  gov::test::TempDir dir("kube-bad-product");
  // 1,000,000 pods × 10^13 GPUs: each fits, the product does not.
  const std::string path = dir.write("big.yaml", job("big", "1000000", "10000000000000"));
  const gov::test::CommandResult r = run_gov("simulate " + kWalkthrough + " --workloads " + path);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(R"("task":"big","outcome":"invalid","team":"team-b","message":"requested amount of `gpu` is too large")") !=
        std::string::npos);
}
