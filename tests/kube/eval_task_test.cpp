// `gov eval POLICY --task job.yaml` (issue 18, point 2, for one pod set): a Kubernetes object is
// decided exactly as the equivalent JSON task is, byte for byte; objects of several pod sets are
// an error until the engine has pod sets.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const std::string kWalkthrough = "policies/examples/cli-walkthrough-g5-12xlarge.gov";
const std::string kFineGrained = "policies/examples/fine-grained.gov";

/// `gov eval POLICY --task TASK [--state STATE]` must succeed; returns its output.
std::string eval(const std::string& policy, const std::string& task, const std::string& state = "") {
  const gov::test::CommandResult r = run_gov("eval " + policy + " --task " + task + (state.empty() ? "" : " --state " + state));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("gov eval of a Job decides exactly as the JSON task", "[kube][eval]") {
  gov::test::TempDir dir("eval-kube");
  // tests/fixtures/kubernetes/job.yaml is the walkthrough's task a1: 2 pods × (4 GPUs, 44 vCPUs,
  // 164 GiB), class training (label `training-priority`), team-a (its HyperPod local queue).
  const std::string json = dir.write("a1.json", R"({"id": "a1", "team": "team-a", "priority": "training", "instance_type": "ml.g5.12xlarge",
    "pods": 2, "per_pod": {"gpus": 4, "vcpus": 44, "memory_gib": 164}})");
  const std::string yaml = gov::test::repo_path("tests/fixtures/kubernetes/job.yaml");
  const std::string alone = eval(kWalkthrough, yaml);
  CHECK(alone == eval(kWalkthrough, json));
  CHECK(alone.find("\"outcome\":\"admitted\"") != std::string::npos);
  // With team-b holding its instance, a1 cannot borrow it: pending, with the same explanation.
  const std::string state = dir.write("state.json", R"({"at": 100, "admitted": [{"task": {"id": "b1", "team": "team-b",
    "priority": "training", "instance_type": "ml.g5.12xlarge", "pods": 1, "per_pod": {"gpus": 4, "vcpus": 44, "memory_gib": 164}},
    "submitted_at": 0, "admitted_at": 0, "flavor": "ml.g5.12xlarge"}]})");
  const std::string held = eval(kWalkthrough, yaml, state);
  CHECK(held == eval(kWalkthrough, json, state));
  CHECK(held.find("\"outcome\":\"pending\"") != std::string::npos);
}

TEST_CASE("gov eval of a HyperPodPyTorchJob decides exactly as the JSON task", "[kube][eval]") {
  gov::test::TempDir dir("eval-kube-hyperpod");
  // Its one pod set is Kueue's `pod` (not `main`): a task of that pod set, named so in messages.
  const std::string json = dir.write("t.json", R"({"id": "fine-tune-llama", "team": "onlygputeam", "priority": "high-priority",
    "pod_sets": [{"name": "pod", "instance_type": "ml.g6.12xlarge", "pods": 1, "per_pod": {"gpus": 2, "vcpus": 24, "memory_gib": 96}}]})");
  const std::string yaml = gov::test::repo_path("tests/fixtures/kubernetes/hyperpod-pytorch-job.yaml");
  const std::string out = eval(kFineGrained, yaml);
  CHECK(out == eval(kFineGrained, json));
  CHECK(out.find("\"outcome\":\"admitted\"") != std::string::npos);
}

// Without a class label an object has no class, as a trace task without one: priority 0 (or the
// policy's default-priority). It once took the lowest class, so one job decided two ways.
TEST_CASE("gov eval of an object without a class gives it no class, as a trace task", "[kube][eval]") {
  gov::test::TempDir dir("eval-kube-class");
  const std::string yaml = dir.write("job.yaml", R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/queue-name: hyperpod-ns-team-b-localqueue}
spec:
  template:
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  const std::string json = dir.write("j.json", R"({"id": "j", "team": "team-b", "pods": 1, "per_pod": {"gpus": 1}})");
  CHECK(eval(kWalkthrough, yaml) == eval(kWalkthrough, json));
  CHECK(eval(kWalkthrough, yaml).find("priority 0") != std::string::npos);
  // A class label that names no class of the policy, with or without `-priority`.
  const std::string urgent = dir.write("urgent.yaml", R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/queue-name: hyperpod-ns-team-b-localqueue, kueue.x-k8s.io/priority-class: urgent-priority}
spec:
  template: {spec: {containers: [{name: c}]}}
)");
  const gov::test::CommandResult r = run_gov("eval " + kWalkthrough + " --task " + urgent);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(":1:1: Job `j`: priority class `urgent-priority` is not a class of the policy") != std::string::npos);
}

TEST_CASE("gov eval of an object of several pod sets decides its pod sets together", "[kube][eval]") {
  const gov::test::CommandResult r = run_gov("eval " + kFineGrained + " --task tests/fixtures/kubernetes/pytorchjob.yaml");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("couldn't assign flavors to pod set worker: ") != std::string::npos);
  // The RayJob's head needs CPUs, its workers GPUs: both fit team-b's instance type, together.
  const gov::test::CommandResult ray = run_gov("eval " + kWalkthrough + " --task tests/fixtures/kubernetes/rayjob.yaml");
  INFO(ray.err);
  CHECK(ray.exit_code == 0);
  CHECK(ray.out.find(R"("pod_sets":[{"name":"head",)") != std::string::npos);
  CHECK(ray.out.find(R"({"name":"gpu-workers",)") != std::string::npos);
  const gov::test::CommandResult list = run_gov("eval " + kWalkthrough + " --task tests/fixtures/kubernetes/workloads.yaml");
  CHECK(list.exit_code == 1);
  CHECK(list.err.find("holds 2 workloads; `--task` takes one") != std::string::npos);
  // A team the policy does not have: the JSON task reader's own message.
  const gov::test::CommandResult team = run_gov("eval " + kWalkthrough + " --task tests/fixtures/kubernetes/hyperpod-pytorch-job.yaml");
  CHECK(team.exit_code == 1);
  CHECK(team.err.find("HyperPodPyTorchJob `fine-tune-llama`") != std::string::npos);
}
