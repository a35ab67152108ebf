// Kubernetes objects of several pod sets decided by the engine's pod sets (issue 18): each pod set
// on an instance type of its own, all or nothing, Kueue's messages naming the pod set.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const std::string kFixtures = "tests/fixtures/kubernetes/";

/// The first line of `out` ("" when empty).
std::string first_line(const std::string& out) { return out.substr(0, out.find('\n')); }

}  // namespace

TEST_CASE("gov eval of the workshop's job 2 while job 3 holds team-b's quota gives the walkthrough's message",
          "[k8s][kube][podsets]") {
  // Seed 001 (kubectl describe workload pytorchjob-hyperpod-cli-mnist-team-b-2c720), in the
  // Kueue v0.9 texts the workshop's cluster printed.
  const gov::test::CommandResult r =
      run_gov("eval policies/examples/workshop-g5.gov --task " + kFixtures + "walkthrough-job2.yaml --state " + kFixtures +
              "walkthrough-job3-state.yaml --dialect kueue-v0.9");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(first_line(r.out) ==
        R"j({"at":985,"task":"hyperpod-cli-mnist-team-b","outcome":"pending","team":"team-b","reason":"waiting-for-quota","short":{"gpu":1},)j"
        R"j("message":"couldn't assign flavors to pod set worker: borrowing limit for nvidia.com/gpu in flavor ml.g5.8xlarge exceeded"})j");
  // The explanation names the pod set's attempt.
  CHECK(r.out.find("ml.g5.8xlarge: pod set `worker`: needs preemption, but no task may be preempted for it") !=
        std::string::npos);
}

TEST_CASE("a PyTorchJob's master and workers are assigned one after the other and admitted together",
          "[k8s][kube][podsets]") {
  // fine-grained.gov's onlygputeam may hold 3 GPUs of ml.g6.12xlarge: the master takes 1, so the
  // 3 workers exceed what is left of the maximum (Kueue's "previously considered podsets").
  const gov::test::CommandResult r = run_gov("eval policies/examples/fine-grained.gov --task " + kFixtures + "pytorchjob.yaml");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(first_line(r.out) ==
        R"j({"at":0,"task":"resnet-ddp","outcome":"pending","team":"onlygputeam","reason":"exceeds-max-quota","max":{"gpu":3},)j"
        R"j("message":"couldn't assign flavors to pod set worker: insufficient quota for nvidia.com/gpu in flavor ml.g6.12xlarge, )j"
        R"j(previously considered podsets requests (1) + current podset request (3) > maximum capacity (3)"})j");

  // With two workers it fits, borrowing one GPU: one admission, both pod sets on ml.g6.12xlarge.
  gov::test::TempDir dir("podsets");
  std::string yaml = gov::test::read_text(kFixtures + "pytorchjob.yaml");
  const size_t at = yaml.find("replicas: 3");
  REQUIRE(at != std::string::npos);
  yaml.replace(at, 11, "replicas: 2");
  const std::string job = dir.write("two-workers.yaml", yaml);
  const gov::test::CommandResult two = run_gov("eval policies/examples/fine-grained.gov --task " + job);
  INFO(two.err);
  REQUIRE(two.exit_code == 0);
  CHECK(first_line(two.out) ==
        R"j({"at":0,"task":"resnet-ddp","outcome":"admitted","team":"onlygputeam","flavor":"ml.g6.12xlarge",)j"
        R"j("usage":{"gpu":3,"vcpu":23,"memory_gib":92},"borrowed":{"gpu":1},"pod_sets":[)j"
        R"j({"name":"master","flavor":"ml.g6.12xlarge","pods":1,"usage":{"gpu":1,"vcpu":8,"memory_gib":32}},)j"
        R"j({"name":"worker","flavor":"ml.g6.12xlarge","pods":2,"usage":{"gpu":2,"vcpu":15,"memory_gib":60}}],)j"
        R"j("message":"Quota reserved in ClusterQueue onlygputeam"})j");

  // The same task as a trace's JSON, with `pod_sets`, decides byte for byte the same.
  const std::string json = dir.write("two-workers.json", R"j({"id": "resnet-ddp", "team": "onlygputeam", "priority": "high-priority",
    "pod_sets": [
      {"name": "master", "instance_type": "ml.g6.12xlarge", "pods": 1, "per_pod": {"gpus": 1, "vcpus": 8, "memory_gib": 32}},
      {"name": "worker", "instance_type": "ml.g6.12xlarge", "pods": 2, "per_pod": {"gpus": 1, "vcpus": 7.5, "memory_gib": 30}}]})j");
  const gov::test::CommandResult same = run_gov("eval policies/examples/fine-grained.gov --task " + json);
  CHECK(same.out == two.out);
}

TEST_CASE("a trace's pod sets: malformed ones are one clear error each", "[k8s][trace][podsets]") {
  gov::test::TempDir dir("podsets-bad");
  const auto eval = [&](const std::string& name, const std::string& task) {
    return run_gov("eval policies/examples/fine-grained.gov --task " + dir.write(name, task));
  };
  const std::string head = R"j({"id": "j", "team": "onlygputeam", )j";
  const std::string one = R"j({"name": "w", "gpus": 1})j";
  std::string nine = "[";
  for (int i = 0; i < 9; ++i) nine += std::string(i ? "," : "") + R"j({"name": "p)j" + std::to_string(i) + R"j(", "gpus": 1})j";
  nine += "]";
  const struct {
    std::string task;
    std::string error;
  } cases[] = {
      {head + R"j("pod_sets": )j" + nine + "}", "9 pod sets; a task has at most 8 (Kueue's limit)"},
      {head + R"j("pod_sets": [)j" + one + "," + one + "]}", "pod set \"w\" is given twice"},
      {head + R"j("gpus": 1, "pod_sets": [)j" + one + "]}", "a task with \"pod_sets\" requests per pod set; move \"gpus\" into its pod sets"},
      {head + R"j("pod_sets": []})j", "expected a non-empty array of pod sets, found an array"},
      {head + R"j("pod_sets": [{"gpus": 1}]})j", "a pod set needs a \"name\""},
      {head + R"j("pod_sets": [{"name": "w"}]})j", "the task requests nothing"},
      {head + R"j("pod_sets": [{"name": "w", "gpus": 1, "color": "red"}]})j", "color"},
      {head + R"j("pod_sets": [{"name": "w", "gpus": 1, "instance_type": "ml.nope"}]})j", "unknown instance type \"ml.nope\""},
  };
  int n = 0;
  for (const auto& c : cases) {
    const gov::test::CommandResult r = eval("bad" + std::to_string(n++) + ".json", c.task);
    INFO(c.task);
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(c.error) != std::string::npos);
  }
}

TEST_CASE("the Kubernetes fixtures decide as their expected streams say", "[k8s][kube][podsets]") {
  // tests/fixtures/kubernetes/expected/MANIFEST.POLICY.jsonl: `gov simulate policies/examples/POLICY.gov
  // --workloads tests/fixtures/kubernetes/MANIFEST.yaml`, reviewed decision by decision when written
  // (docs/kubernetes.md, "Fixtures"). A Job, a PyTorchJob of a master and 3 workers, a
  // HyperPodPyTorchJob as the HyperPod CLI writes it, a RayJob, a Workload list.
  const std::vector<std::string> files = gov::test::files_under(kFixtures + "expected", ".jsonl");
  REQUIRE(files.size() >= 6);
  for (const std::string& file : files) {
    const std::string name = file.substr(file.rfind('/') + 1);
    const std::string manifest = name.substr(0, name.find('.'));
    const std::string policy = name.substr(manifest.size() + 1, name.size() - manifest.size() - 1 - 6);
    INFO(name);
    const gov::test::CommandResult r =
        run_gov("simulate policies/examples/" + policy + ".gov --workloads " + kFixtures + manifest + ".yaml");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == gov::test::read_text(file));
  }
}

TEST_CASE("the text format names where each pod set runs", "[k8s][kube][podsets]") {
  const gov::test::CommandResult r = run_gov("simulate policies/examples/cli-walkthrough-g5-12xlarge.gov --workloads " +
                                             kFixtures + "rayjob.yaml --format text");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("ray-tune  team-b  admitted: head on ml.g5.12xlarge (1 pod), gpu-workers on ml.g5.12xlarge (2 pods)  ") !=
        std::string::npos);
}
