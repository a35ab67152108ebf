// Kubernetes objects as workloads (issue 18, point 2): the fixture manifests read as Kueue reads
// them (pod sets, counts, effective requests, instance types, queue and class labels), and bad
// objects as one clear error each.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/kube/workload.hpp"
#include "tests/support/test_support.hpp"

using gov::kube::Workload;

namespace {

/// The walkthrough's teams, with HyperPod's queue names only.
const gov::kube::QueueNaming kTeams{{"team-a", "team-b"}, {}, {}};

Workload fixture(const std::string& name) {
  const auto read = gov::kube::read_workloads(gov::test::read_text(gov::test::repo_path("tests/fixtures/kubernetes/" + name)));
  INFO((read ? std::string() : read.error().message));
  REQUIRE(read);
  REQUIRE(read.value().size() == 1);
  return read.value().front();
}

/// The error of reading `yaml` as workloads ("(read)" when it reads).
std::string error_of(const std::string& yaml) {
  const auto read = gov::kube::read_workloads(yaml);
  return read ? std::string("(read)") : read.error().message;
}

constexpr int64_t kGiB = 1024;  // MiB

const char* const kJobHead = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/queue-name: hyperpod-ns-team-a-localqueue}
spec:
  template:
    spec:
)";

}  // namespace

TEST_CASE("kube reads a Job with an init container by the effective-request rule", "[kube]") {
  const Workload job = fixture("job.yaml");
  CHECK(job.describe() == "Job `a1`");
  CHECK(job.namespace_name == "hyperpod-ns-team-a");
  CHECK(gov::kube::team_of_queue(job.queue_name, kTeams).value() == "team-a");
  CHECK(job.priority_class == "training-priority");
  REQUIRE(job.pod_sets.size() == 1);
  const gov::kube::PodSet& main = job.pod_sets[0];
  CHECK(main.name == "main");
  CHECK(main.count == 2);
  CHECK(main.instance_type == "ml.g5.12xlarge");
  CHECK(main.per_pod == gov::model::Resources{4, 0, 44'000, 164 * kGiB, 0});
}

TEST_CASE("kube reads a PyTorchJob as master and worker pod sets", "[kube]") {
  const Workload job = fixture("pytorchjob.yaml");
  REQUIRE(job.pod_sets.size() == 2);
  CHECK(job.pod_sets[0].name == "master");
  CHECK(job.pod_sets[0].count == 1);
  CHECK(job.pod_sets[0].instance_type == "ml.g6.12xlarge");  // from required node affinity
  CHECK(job.pod_sets[0].per_pod == gov::model::Resources{1, 0, 8'000, 32 * kGiB, 0});  // limits, no requests
  CHECK(job.pod_sets[1].name == "worker");
  CHECK(job.pod_sets[1].count == 3);
  CHECK(job.pod_sets[1].per_pod == gov::model::Resources{1, 0, 7'500, 30 * kGiB, 0});  // requests over limits
  CHECK(gov::kube::class_of_label(*job.priority_class, {"high-priority"}) == "high-priority");
}

TEST_CASE("kube reads a HyperPodPyTorchJob as the HyperPod CLI writes it", "[kube]") {
  const Workload job = fixture("hyperpod-pytorch-job.yaml");
  REQUIRE(job.pod_sets.size() == 1);
  CHECK(job.pod_sets[0].name == "pod");
  CHECK(job.pod_sets[0].count == 1);
  CHECK(job.pod_sets[0].instance_type == "ml.g6.12xlarge");
  CHECK(job.pod_sets[0].per_pod == gov::model::Resources{2, 0, 24'000, 96 * kGiB, 0});
  CHECK(gov::kube::team_of_queue(job.queue_name, {{"onlygputeam"}, {}, {}}).value() == "onlygputeam");
}

TEST_CASE("kube reads a RayJob as head and worker group pod sets", "[kube]") {
  const Workload job = fixture("rayjob.yaml");
  REQUIRE(job.pod_sets.size() == 2);
  CHECK(job.pod_sets[0].name == "head");
  CHECK(job.pod_sets[0].per_pod == gov::model::Resources{0, 0, 2'000, 8 * kGiB, 0});
  CHECK(job.pod_sets[1].name == "gpu-workers");
  CHECK(job.pod_sets[1].count == 2);
  CHECK(job.pod_sets[1].per_pod == gov::model::Resources{2, 0, 20'000, 80 * kGiB, 0});
  CHECK_FALSE(job.priority_class.has_value());
}

TEST_CASE("kube reads a list of Kueue Workloads", "[kube]") {
  const auto read = gov::kube::read_workloads(gov::test::read_text(gov::test::repo_path("tests/fixtures/kubernetes/workloads.yaml")));
  REQUIRE(read);
  REQUIRE(read.value().size() == 2);
  CHECK(read.value()[0].pod_sets.size() == 1);
  CHECK(read.value()[0].pod_sets[0].per_pod == gov::model::Resources{4, 0, 44'000, 164 * kGiB, 0});
  CHECK(read.value()[0].priority_class == "training-priority");
  REQUIRE(read.value()[1].pod_sets.size() == 2);
  CHECK(read.value()[1].pod_sets[1].name == "worker");
  CHECK(read.value()[1].pod_sets[1].count == 3);
  CHECK(gov::kube::team_of_queue(read.value()[1].queue_name, kTeams).value() == "team-b");
}

TEST_CASE("kube applies Kubernetes' rule for sidecars and overhead", "[kube]") {
  // Sidecars (restartPolicy Always) run beside the containers; an init container runs after the
  // sidecars before it. cpu: max(1 + 0.5 + 0.25, 0.5 + 3) = 3.5; plus 0.1 overhead.
  const std::string yaml = std::string(kJobHead) + R"(      overhead: {cpu: 100m}
      initContainers:
        - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: 500m}}}
        - {name: setup, resources: {requests: {cpu: "3"}}}
        - {name: logs, restartPolicy: Always, resources: {requests: {cpu: 250m}}}
      containers:
        - {name: main, resources: {requests: {cpu: "1"}}}
)";
  const auto read = gov::kube::read_workloads(yaml);
  REQUIRE(read);
  CHECK(read.value()[0].pod_sets[0].per_pod[gov::model::index(gov::Resource::vcpu)] == 3'600);
}

TEST_CASE("kube maps queues to teams and labels to classes", "[kube]") {
  CHECK(gov::kube::team_of_queue("hyperpod-ns-team-a-localqueue", kTeams).value() == "team-a");
  CHECK(gov::kube::team_of_queue("research", {{"research"}, {}, {}}).value() == "research");
  CHECK(gov::kube::class_of_label("training-priority", {"training"}) == "training");
  CHECK(gov::kube::class_of_label("training", {"training"}) == "training");
  CHECK(gov::kube::class_of_label("high-priority", {"high-priority"}) == "high-priority");
  CHECK_FALSE(gov::kube::class_of_label("urgent", {"training"}).has_value());
}

TEST_CASE("kube reports bad objects with the object and the field", "[kube]") {
  const std::string container = "      containers:\n        - name: c\n          resources: {requests: {";
  CHECK(error_of("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n") ==
        "line 2, column 7: Deployment `d`: `kind`: `Deployment` (`apps/v1`) is not a workload gov reads; it reads `batch/v1` "
        "Job, `kubeflow.org/v1` PyTorchJob, `sagemaker.amazonaws.com/v1` HyperPodPyTorchJob, `ray.io/v1` RayJob and "
        "RayCluster, `kueue.x-k8s.io` Workload, `v1` Pod; for another kind Kueue manages, give the Workload Kueue made "
        "for it (`kubectl get workloads -n NAMESPACE -o yaml`)");
  CHECK(error_of("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: []\n") ==
        "line 3, column 11: Job `j`: `metadata.labels`: no `kueue.x-k8s.io/queue-name` label: Kueue does not manage the "
        "object, and gov cannot tell its team");
  CHECK(error_of(std::string(kJobHead) + container + "memory: 1.5Ki}}\n") ==
        "line 11, column 42: Job `j`: `spec.template.spec.containers[0].resources.requests.memory`: `1.5Ki` is not a whole "
        "number of MiB (gov counts memory in MiB)");
  CHECK(error_of(std::string(kJobHead) + container + "nvidia.com/gpu: 1.5}}\n") ==
        "line 11, column 50: Job `j`: `spec.template.spec.containers[0].resources.requests.nvidia.com/gpu`: `1.5` is not a "
        "whole number of devices");
  CHECK(error_of(std::string(kJobHead) + container + "cpu: 10E}}\n").find("`10E` is too large") != std::string::npos);
  CHECK(error_of(std::string(kJobHead) + container + "cpu: 2 cores}}\n").find("`2 cores` is not a Kubernetes quantity") !=
        std::string::npos);
  // MIG partitions are read (tests/kube/partitions_test.cpp); a resource no ClusterQueue of gov's covers is not.
  CHECK(error_of(std::string(kJobHead) + container + "example.com/fpga: 1}}\n").find(
            "`spec.template.spec.containers[0].resources.requests.example.com/fpga`: a resource gov does not know") !=
        std::string::npos);
  // A zero request of an unknown resource affects nothing.
  CHECK(error_of(std::string(kJobHead) + container + "ephemeral-storage: 0}}\n") == "(read)");
  CHECK(error_of("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  labels: {kueue.x-k8s.io/queue-name: q}\n"
                 "spec:\n  parallelism: 0\n  template: {spec: {containers: []}}\n")
            .find("every pod set has zero pods: the workload runs nothing") != std::string::npos);
  // A pod set of zero pods beside others is read past (Kueue's count may be 0: a Ray worker
  // group of 0 replicas); it was refused as "Kueue admits no empty pod set".
  const auto ray = gov::kube::read_workloads(
      "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: r\n  labels: {kueue.x-k8s.io/queue-name: q}\n"
      "spec:\n  headGroupSpec: {template: {spec: {containers: [{name: h, resources: {requests: {cpu: 1}}}]}}}\n"
      "  workerGroupSpecs:\n  - {groupName: g, replicas: 0, minReplicas: 0, template: {spec: {containers: []}}}\n");
  INFO((ray ? std::string() : ray.error().message));
  REQUIRE(ray);
  REQUIRE(ray.value().front().pod_sets.size() == 1);
  CHECK(ray.value().front().pod_sets.front().name == "head");
  // 10,000 pod sets: Kueue allows 8.
  std::string many = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w}\nspec:\n  queueName: q\n  podSets:\n";
  for (int i = 0; i < 10000; ++i) many += "  - {name: s" + std::to_string(i) + ", count: 1, template: {spec: {containers: []}}}\n";
  CHECK(error_of(many) == "line 7, column 3: Workload `w`: `spec.podSets`: 10000 pod sets; Kueue allows at most 8");
  CHECK(error_of(std::string(kJobHead) + "      resources: {requests: {cpu: 1}}\n      containers: []\n") ==
        "line 9, column 18: Job `j`: `spec.template.spec.resources`: pod-level resources are not read yet; give the requests "
        "per container");
  CHECK(error_of(std::string(kJobHead) + "      priorityClassName: system-critical\n      containers: []\n")
            .find("`spec.template.spec.priorityClassName`: Kueue takes this Kubernetes PriorityClass as the priority") !=
        std::string::npos);
  CHECK(error_of(std::string(kJobHead) + container + "cpu: 1}}\n      resources: {requests: {cpu: 1}}\n").find("pod-level") !=
        std::string::npos);
  // With the class label, the template's PriorityClass does not matter to Kueue.
  std::string labelled = std::string(kJobHead) + "      priorityClassName: system-critical\n      containers: []\n";
  labelled.replace(labelled.find("queue-name: hyperpod-ns-team-a-localqueue"), 41,
                   "queue-name: hyperpod-ns-team-a-localqueue, kueue.x-k8s.io/priority-class: training");
  CHECK(error_of(labelled) == "(read)");
  CHECK(error_of(std::string(kJobHead) + "      nodeSelector: {node.kubernetes.io/instance-type: a}\n"
                 "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                 "[{matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [b, c]}]}]}}}\n"
                 "      containers: []\n")
            .find("allows 2 instance types (b, c); a gov task has one instance type or none") != std::string::npos);
  // Node selector terms are ORed: one that does not name the instance type lets the pod run on
  // any type, so the other term's type is no pin (it was read as one).
  const auto read = gov::kube::read_workloads(
      std::string(kJobHead) +
      "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
      "[{matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [ml.p4d.24xlarge]}]}, "
      "{matchExpressions: [{key: foo, operator: Exists}]}]}}}\n      containers: []\n");
  REQUIRE(read);
  CHECK_FALSE(read.value().front().pod_sets.front().instance_type.has_value());
}

// A Kubernetes engineer's finding: `minCount` and `kueue.x-k8s.io/job-min-parallelism` (Kueue's
// partial admission) were read past without a word; gov admits the whole count or nothing, and
// the commands now say so (read here, noted by eval and simulate).
TEST_CASE("kube marks workloads that allow partial admission", "[kube]") {
  const std::string job = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/queue-name: hyperpod-ns-team-a-localqueue}
  annotations: {kueue.x-k8s.io/job-min-parallelism: "MIN"}
spec:
  parallelism: 4
  template:
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
  const auto read_with = [&](const std::string& min) {
    std::string text = job;
    text.replace(text.find("MIN"), 3, min);
    return gov::kube::read_workloads(text);
  };
  CHECK(read_with("2").value().front().partial_admission);
  CHECK_FALSE(read_with("4").value().front().partial_admission);  // all four: nothing partial
  CHECK(read_with("two").error().message.find("`two` is not a whole number of pods") != std::string::npos);
  const auto workload = gov::kube::read_workloads(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w}
spec:
  queueName: q
  podSets:
  - {name: main, count: 4, minCount: 2, template: {spec: {containers: [{name: c}]}}}
)");
  REQUIRE(workload);
  CHECK(workload.value().front().partial_admission);
  CHECK_FALSE(fixture("job.yaml").partial_admission);
}
