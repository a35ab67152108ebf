// `gov eval --task job.yaml --state workloads.yaml` (issue 18): `kubectl get workloads -A -o yaml`
// as the cluster state. Admitted Workloads hold quota, pending ones queue from their creation,
// finished, evicted and inactive ones are skipped with a note.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/kube/workload.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const std::string kWalkthrough = "policies/examples/cli-walkthrough-g5-12xlarge.gov";
const std::string kFixtures = "tests/fixtures/kubernetes/";

/// The line of `out` that holds `needle` ("" when none).
std::string line_with(const std::string& out, const std::string& needle) {
  const size_t at = out.find(needle);
  if (at == std::string::npos) return "";
  const size_t start = out.rfind('\n', at) == std::string::npos ? 0 : out.rfind('\n', at) + 1;
  return out.substr(start, out.find('\n', at) - start);
}

/// A Workload of team-a with `status` (YAML lines at its indentation, may be empty).
std::string workload(const std::string& name, const std::string& created, const std::string& status,
                     const std::string& pod_sets = "") {
  return R"(  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: Workload
    metadata: {name: )" + name + R"(, namespace: hyperpod-ns-team-a, creationTimestamp: ")" + created + R"("}
    spec:
      queueName: hyperpod-ns-team-a-localqueue
      priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: training-priority}
      priority: 70
      podSets:
        - {name: main, count: 1, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}}}
)" + pod_sets + status;
}

std::string list(const std::string& items) { return "apiVersion: v1\nkind: List\nitems:\n" + items; }

/// The `status` of a Workload of team-a admitted on ml.g5.12xlarge at 10:00:10.
const std::string kAdmitted = R"(    status:
      admission:
        clusterQueue: q
        podSetAssignments: [{name: main, count: 1, flavors: {nvidia.com/gpu: ml.g5.12xlarge}}]
      conditions:
        - {type: QuotaReserved, status: "True", reason: QuotaReserved, lastTransitionTime: "2026-11-20T10:00:10Z"}
)";

}  // namespace

TEST_CASE("gov eval of the walkthrough's job 2 against the cluster's Workloads gives its pending reason",
          "[k8s][kube][state]") {
  const gov::test::CommandResult r =
      run_gov("eval " + kWalkthrough + " --task " + kFixtures + "job-b1.yaml --state " + kFixtures + "walkthrough-state.yaml");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // As in the walkthrough (gov simulate of its test block): b1 waits for the preemption of team-a's
  // job, which borrows b1's instance, and is then admitted.
  const std::string message =
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor ml.g5.12xlarge, 36 more needed, "
      "insufficient unused quota for memory in flavor ml.g5.12xlarge, 108Gi more needed, insufficient unused quota for "
      "nvidia.com/gpu in flavor ml.g5.12xlarge, 4 more needed. Pending the preemption of 1 workload(s)";
  CHECK(line_with(r.out, R"("outcome":"pending")") ==
        R"({"at":1,"task":"b1","outcome":"pending","team":"team-b","reason":"waiting-for-preemption","victims":["job-a1-3f2c1"],"message":")" +
            message + "\"}");
  // The walkthrough replayed (its jobs as Kubernetes objects) says the same of b1 at its step 2.
  const gov::test::CommandResult replay = run_gov("simulate " + kWalkthrough + " --workloads " + kFixtures + "walkthrough");
  CHECK(line_with(replay.out, R"({"at":300,"task":"b1","outcome":"pending")") ==
        R"({"at":300,"task":"b1","outcome":"pending","team":"team-b","reason":"waiting-for-preemption","victims":["a1"],"message":")" +
            message + "\"}");
  CHECK(line_with(r.out, R"("outcome":"admitted")").find(R"("task":"b1")") != std::string::npos);
  // gov's explanation follows, with the preemption candidate.
  CHECK(r.out.find("task b1 of team team-b: admitted") != std::string::npos);
  // The finished v1beta2 Workload is skipped, with a note.
  CHECK(r.err.find("note: tests/fixtures/kubernetes/walkthrough-state.yaml:72:5: Workload `job-warmup-77ab0` is finished "
                   "(Succeeded): skipped, it holds no quota and does not queue") != std::string::npos);

  // The same state as gov's JSON gives the same answer byte for byte.
  gov::test::TempDir dir("state-json");
  const std::string json = dir.write("state.json", R"({"at": 1, "admitted": [{"task": {"id": "job-a1-3f2c1", "team": "team-a",
    "priority": "training", "instance_type": "ml.g5.12xlarge", "pods": 2, "per_pod": {"gpus": 4, "vcpus": 44, "memory_gib": 164}},
    "submitted_at": 0, "admitted_at": 1, "flavor": "ml.g5.12xlarge"}]})");
  const gov::test::CommandResult same = run_gov("eval " + kWalkthrough + " --task " + kFixtures + "job-b1.yaml --state " + json);
  CHECK(same.out == r.out);
}

TEST_CASE("gov eval reads pending Workloads in creation order and skips evicted and inactive ones", "[k8s][kube][state]") {
  gov::test::TempDir dir("state-pending");
  // Evicted and not requeued yet (a PodsReady timeout's backoff): outside the queue.
  const std::string evicted = R"(    status:
      conditions:
        - {type: QuotaReserved, status: "False", reason: Pending, lastTransitionTime: "2026-11-20T10:00:20Z"}
        - {type: Evicted, status: "True", reason: PodsReadyTimeout, lastTransitionTime: "2026-11-20T10:00:20Z"}
        - {type: Requeued, status: "False", reason: PodsReadyTimeout, lastTransitionTime: "2026-11-20T10:00:20Z"}
)";
  // Two pending Workloads of team-a: `late` is listed first but created after `early`.
  const std::string state = dir.write(
      "state.yaml", list(workload("holder", "2026-11-20T10:00:00Z", kAdmitted) + workload("late", "2026-11-20T10:00:30Z", "") +
                         workload("early", "2026-11-20T10:00:15Z", "") + workload("gone", "2026-11-20T10:00:05Z", evicted) +
                         workload("off", "2026-11-20T10:00:06Z", "") ));
  // `off` is deactivated: spec.active false.
  std::string text = gov::test::read_text(state);
  const size_t off = text.find("name: off");
  text.insert(text.find("priority: 70", off) + 12, "\n      active: false");
  gov::test::write_text(state, text);
  const std::string task = dir.write("t.json", R"({"id": "t", "team": "team-b", "gpus": 4, "instance_type": "ml.g5.12xlarge"})");
  const gov::test::CommandResult r = run_gov("eval " + kWalkthrough + " --task " + task + " --state " + state);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("Workload `gone` is evicted (PodsReadyTimeout): skipped") != std::string::npos);
  CHECK(r.err.find("Workload `off` is inactive (Deactivated): skipped") != std::string::npos);
  // The state's time is its latest (10:00:30, 30 s after the earliest); t is admitted into
  // team-b's idle instance, and the pending ones are still there, in creation order.
  CHECK(r.out.find(R"({"at":30,"task":"t","outcome":"admitted")") != std::string::npos);
  const gov::test::CommandResult same =
      run_gov("eval " + kWalkthrough + " --task " + task + " --state " +
              dir.write("state.json", R"({"at": 30, "admitted": [{"task": {"id": "holder", "team": "team-a", "priority": "training",
    "gpus": 4}, "submitted_at": 0, "admitted_at": 10, "flavor": "ml.g5.12xlarge"}], "pending": [
    {"task": {"id": "early", "team": "team-a", "priority": "training", "gpus": 4}, "submitted_at": 15},
    {"task": {"id": "late", "team": "team-a", "priority": "training", "gpus": 4}, "submitted_at": 30}]})"));
  CHECK(same.out == r.out);
}

/// Team research (8 GPUs, borrowing up to 4 more, queue `ml-research`) beside team prod.
const char* const kResearchPolicy = R"(import "aws-ml"
cluster c {
  catalog  = aws-ml
  capacity = { ml.g5.12xlarge: 4 }
}
policy {
  priority inference = 90
  priority batch     = 20
}
team research {
  quota ml.g5.12xlarge { instances = 2 }
  queues = ["ml-research"]
  borrow-limit = 50%
}
team prod {
  quota ml.g5.12xlarge { instances = 2 }
}
)";

// The task is a Kubernetes object too: it queues by its own creationTimestamp. At the state's
// time it tied with the newest pending Workload and went first by its name, taking the quota the
// older Workload of its queue and class was waiting for.
TEST_CASE("gov eval queues a Kubernetes task by its creationTimestamp among the state's Workloads", "[k8s][kube][state]") {
  gov::test::TempDir dir("state-task-created");
  const std::string policy = dir.write("p.gov", kResearchPolicy);
  const std::string state = dir.write("st.yaml", R"(apiVersion: v1
kind: List
items:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: Workload
  metadata: {name: adm, namespace: research, creationTimestamp: "2026-03-01T10:00:00Z"}
  spec:
    queueName: ml-research
    priorityClassName: inference
    podSets: [{name: main, count: 2, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "4"}}}]}}}]
  status:
    admission: {clusterQueue: research, podSetAssignments: [{name: main, count: 2, flavors: {nvidia.com/gpu: ml.g5.12xlarge}}]}
    conditions: [{type: QuotaReserved, status: "True", reason: x, message: x, lastTransitionTime: "2026-03-01T10:00:01Z"}]
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: Workload
  metadata: {name: pend, namespace: research, creationTimestamp: "2026-03-01T10:05:00Z"}
  spec:
    queueName: ml-research
    priorityClassName: batch
    podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "4"}}}]}}}]
)");
  const std::string task = dir.write("p1.yaml", R"(apiVersion: v1
kind: Pod
metadata:
  name: p1
  namespace: research
  creationTimestamp: "2026-03-01T10:30:00Z"
  labels: {kueue.x-k8s.io/queue-name: ml-research, kueue.x-k8s.io/priority-class: batch}
spec:
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: 4}}
)");
  const gov::test::CommandResult r = run_gov("eval " + policy + " --task " + task + " --state " + state);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // Evaluated when it is created (10:30, 1,800 s after the state's earliest time), behind `pend`,
  // which takes the last 4 GPUs research may hold.
  CHECK(r.out.find(R"({"at":1800,"task":"p1","outcome":"pending")") != std::string::npos);
}

// An admitted Workload holds what Kueue charges: a partial admission's count of pods, less the
// pods given back in status.reclaimablePods. Both were read as the pod set's full count, so the
// team looked fuller than it was (16 GPUs where it held 8).
TEST_CASE("gov eval charges a Workload's admitted pods, less its reclaimable ones", "[k8s][kube][state]") {
  gov::test::TempDir dir("state-partial");
  const std::string policy = dir.write("p.gov", kResearchPolicy);
  const auto state = [&](const std::string& name, const std::string& status_extra, const std::string& assigned_count) {
    return dir.write(name, R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: research, creationTimestamp: "2026-03-01T10:00:00Z"}
spec:
  queueName: ml-research
  priorityClassName: batch
  podSets: [{name: main, count: 4, minCount: 2, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "4"}}}]}}}]
status:
  admission: {clusterQueue: research, podSetAssignments: [{name: main, count: )" + assigned_count +
                                 R"(, flavors: {nvidia.com/gpu: ml.g5.12xlarge}}]}
  conditions: [{type: QuotaReserved, status: "True", reason: x, message: x, lastTransitionTime: "2026-03-01T10:00:05Z"}]
)" + status_extra);
  };
  const std::string task = dir.write("t.json", R"({"id": "t", "team": "research", "gpus": 4, "priority": "batch"})");
  // Two of four pods admitted: 8 GPUs held, so 4 more fit within research's 12.
  const auto partial = run_gov("eval " + policy + " --task " + task + " --state " + state("partial.yaml", "", "2"));
  INFO(partial.out << partial.err);
  CHECK(partial.out.find(R"("task":"t","outcome":"admitted")") != std::string::npos);
  // All four admitted, three given back: 4 GPUs held.
  const auto reclaimed = run_gov("eval " + policy + " --task " + task + " --state " +
                                 state("reclaimed.yaml", "  reclaimablePods: [{name: main, count: 3}]\n", "4"));
  INFO(reclaimed.out << reclaimed.err);
  CHECK(reclaimed.out.find(R"("task":"t","outcome":"admitted")") != std::string::npos);
  CHECK(reclaimed.out.find(R"("borrowed":{})") != std::string::npos);
  // Without either, 16 GPUs: more than research may hold, and t waits.
  const auto full = run_gov("eval " + policy + " --task " + task + " --state " + state("full.yaml", "", "4"));
  CHECK(full.out.find(R"("task":"t","outcome":"pending")") != std::string::npos);
}

TEST_CASE("gov eval refuses a state it cannot read as the cluster", "[k8s][kube][state]") {
  gov::test::TempDir dir("state-bad");
  const std::string task = dir.write("t.json", R"({"id": "t", "team": "team-b", "gpus": 1})");
  const auto eval = [&](const std::string& name, const std::string& yaml) {
    return run_gov("eval " + kWalkthrough + " --task " + task + " --state " + dir.write(name, yaml));
  };
  // A job is not a Workload.
  const gov::test::CommandResult job = eval("job.yaml", gov::test::read_text(gov::test::repo_path(kFixtures + "job.yaml")));
  CHECK(job.exit_code == 1);
  CHECK(job.err.find("job.yaml:3:1: Job `a1`: a state holds Kueue Workloads (`kubectl get workloads -A -o yaml`), and this "
                     "is not one") != std::string::npos);
  // Two pod sets, admitted: each holds quota on its flavor (the state's tasks: the pending task
  // t of team-b then still fits).
  const gov::test::CommandResult sets = eval(
      "sets.yaml", list(workload("two", "2026-11-20T10:00:00Z", R"(    status:
      admission:
        clusterQueue: q
        podSetAssignments:
          - {name: main, flavors: {nvidia.com/gpu: ml.g5.12xlarge}}
          - {name: worker, flavors: {nvidia.com/gpu: ml.g5.12xlarge}}
      conditions: [{type: QuotaReserved, status: "True", lastTransitionTime: "2026-11-20T10:00:00Z"}]
)", "        - {name: worker, count: 1, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"2\"}}}]}}}\n")));
  INFO(sets.err);
  CHECK(sets.exit_code == 0);
  CHECK(sets.out.find(R"("task":"t","outcome":"admitted")") != std::string::npos);
  // A pod set whose resources are assigned two flavors.
  const gov::test::CommandResult flavors = eval(
      "flavors.yaml", list(workload("mixed", "2026-11-20T10:00:00Z", R"(    status:
      admission:
        clusterQueue: q
        podSetAssignments: [{name: main, flavors: {cpu: cpu-nodes, nvidia.com/gpu: ml.g5.12xlarge}}]
      conditions: [{type: QuotaReserved, status: "True", lastTransitionTime: "2026-11-20T10:00:00Z"}]
)")));
  INFO(flavors.err);
  CHECK(flavors.exit_code == 1);
  CHECK(flavors.err.find("flavors.yaml:16:84: Workload `mixed`: `cpu` has flavor `cpu-nodes` and `nvidia.com/gpu` has "
                         "`ml.g5.12xlarge`; team `team-a` has no resource groups, so a task of it holds one instance type "
                         "per pod set") != std::string::npos);
  // A time that is not RFC 3339.
  const gov::test::CommandResult time = eval("time.yaml", list(workload("w", "yesterday", "")));
  CHECK(time.exit_code == 1);
  CHECK(time.err.find("`metadata.creationTimestamp`: `yesterday` is not an RFC 3339 time such as `2026-11-20T10:00:00Z`") !=
        std::string::npos);
  // A flavor the policy does not know: a warning naming the Workload, which is left out.
  const gov::test::CommandResult unknown = eval(
      "unknown.yaml", list(workload("elsewhere", "2026-11-20T10:00:00Z", R"(    status:
      admission:
        clusterQueue: q
        podSetAssignments: [{name: main, flavors: {nvidia.com/gpu: on-prem-a100}}]
      conditions: [{type: QuotaReserved, status: "True", lastTransitionTime: "2026-11-20T10:00:00Z"}]
)")));
  CHECK(unknown.exit_code == 0);
  CHECK(unknown.err.find("unknown.yaml: admitted Workload `elsewhere`: unknown instance type `on-prem-a100`") != std::string::npos);
}

TEST_CASE("kube reads RFC 3339 times exactly", "[k8s][kube][state]") {
  using gov::kube::parse_timestamp;
  CHECK(parse_timestamp("1970-01-01T00:00:00Z") == 0);
  CHECK(parse_timestamp("2026-11-20T10:00:00Z") == 1'795'168'800'000);
  CHECK(parse_timestamp("2026-11-20t10:00:00z") == 1'795'168'800'000);
  CHECK(parse_timestamp("2026-11-20T11:30:00+01:30") == 1'795'168'800'000);
  CHECK(parse_timestamp("2000-03-01T00:00:00-05:00") == 951'886'800'000);
  CHECK(parse_timestamp("2024-02-29T23:59:59.123Z") == 1'709'251'199'123);
  CHECK(parse_timestamp("2024-02-29T23:59:59.123456789Z") == 1'709'251'199'123);  // MicroTime and finer
  CHECK(parse_timestamp("9999-12-31T23:59:59Z") == 253'402'300'799'000);
  for (const char* bad : {"", "2026-11-20", "2026-11-20T10:00:00", "2026-11-20 10:00:00Z", "2023-02-29T00:00:00Z",
                          "2026-13-01T00:00:00Z", "2026-11-20T24:00:00Z", "2026-11-20T10:00:00.Z",
                          "2026-11-20T10:00:00.1234567890Z", "2026-11-20T10:00:00+1:00", "1969-12-31T23:59:59Z",
                          "2026-11-20T10:00:00Zjunk", "+2026-11-20T10:00:00Z"}) {
    INFO(bad);
    CHECK_FALSE(parse_timestamp(bad));
  }
}

TEST_CASE("gov eval reads a grouped team's Workload with cpu from one flavor and memory from another",
          "[k8s][kube][state][groups]") {
  gov::test::TempDir dir("state-groups");
  dir.write("policies/catalog/aws-ml.gov", gov::test::read_text(gov::test::repo_path("policies/catalog/aws-ml.gov")));
  // Kueue's `standalone` ClusterQueue (tests/corpus/resource-groups.gov): cpu from ml.c5.2xlarge
  // (6), memory from ml.c5.xlarge or ml.m5.xlarge (3 GiB each).
  const std::string policy = dir.write("groups.gov", R"(import "policies/catalog/aws-ml.gov"
cluster kueue {
  catalog  = aws-ml
  capacity = { ml.c5.2xlarge: 1, ml.c5.xlarge: 1, ml.m5.xlarge: 1 }
}
policy { idle-compute = fcfs }
team team-a {
  quota ml.c5.2xlarge { vcpus = 6 }
  quota ml.c5.xlarge  { memory = 3 GiB }
  quota ml.m5.xlarge  { memory = 3 GiB }
  borrow-limit    = 0%
  resource-groups = {
    cpu:    { covers = [vcpus], flavors = [ml.c5.2xlarge] }
    memory: { covers = [memory], flavors = [ml.c5.xlarge, ml.m5.xlarge] }
  }
}
)");
  const std::string task = dir.write("t.json", R"({"id": "t", "team": "team-a", "vcpus": 1, "memory_gib": 2})");
  const auto state = [&](const std::string& memory_flavor, const std::string& cpu_flavor) {
    return R"(apiVersion: v1
kind: List
items:
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: Workload
    metadata: {name: holder, namespace: hyperpod-ns-team-a, creationTimestamp: "2026-11-20T10:00:00Z"}
    spec:
      queueName: hyperpod-ns-team-a-localqueue
      podSets:
        - {name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1", memory: 2Gi}}}]}}}
    status:
      admission:
        clusterQueue: team-a
        podSetAssignments: [{name: main, flavors: {cpu: )" + cpu_flavor + ", memory: " + memory_flavor + R"(}}]
      conditions: [{type: QuotaReserved, status: "True", lastTransitionTime: "2026-11-20T10:00:00Z"}]
)";
  };
  // The holder's memory is on ml.c5.xlarge: 1 GiB is left there, so t's 2 GiB go to ml.m5.xlarge.
  const gov::test::CommandResult first =
      run_gov("eval " + policy + " --task " + task + " --state " + dir.write("first.yaml", state("ml.c5.xlarge", "ml.c5.2xlarge")));
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out.find(R"("outcome":"admitted")") != std::string::npos);
  CHECK(first.out.find(R"({"name":"main","flavor":"ml.m5.xlarge","pods":1,"usage":{"memory_gib":2}})") != std::string::npos);
  // The explanation names resources as people write them, with their units.
  CHECK(first.out.find("needs: vcpu 1, memory 2 GiB") != std::string::npos);
  // The holder's memory on ml.m5.xlarge instead: t's goes to the first flavor, ml.c5.xlarge.
  const gov::test::CommandResult second =
      run_gov("eval " + policy + " --task " + task + " --state " + dir.write("second.yaml", state("ml.m5.xlarge", "ml.c5.2xlarge")));
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(second.out.find(R"({"name":"main","flavor":"ml.c5.xlarge","pods":1,"usage":{"memory_gib":2}})") != std::string::npos);
  // A flavor outside the resource's group: the Workload is left out with a warning naming it, as
  // a Workload on an unknown flavor is.
  const gov::test::CommandResult wrong =
      run_gov("eval " + policy + " --task " + task + " --state " + dir.write("wrong.yaml", state("ml.m5.xlarge", "ml.c5.xlarge")));
  INFO(wrong.out);
  INFO(wrong.err);
  CHECK(wrong.exit_code == 0);
  CHECK(wrong.err.find("wrong.yaml: admitted Workload `holder`: `ml.c5.xlarge` is not in the resource group of team `team-a` it is given for") != std::string::npos);
}

// A Kubernetes engineer's finding: Workloads are named by namespace and name, and two of one name
// in two namespaces were one task id given twice. They are `namespace/name` now, with one note.
TEST_CASE("gov eval reads Workloads of one name in two namespaces", "[k8s][kube][state]") {
  gov::test::TempDir dir("state-names");
  std::string team_b = workload("train", "2026-11-20T10:00:05Z", "");  // team-b's namespace and queue
  for (size_t at = team_b.find("team-a"); at != std::string::npos; at = team_b.find("team-a", at)) team_b[at + 5] = 'b';
  const std::string state =
      dir.write("state.yaml", list(workload("train", "2026-11-20T10:00:00Z", kAdmitted) + team_b));
  const std::string task = dir.write("t.json", R"({"id": "t", "team": "team-b", "gpus": 4, "instance_type": "ml.g5.12xlarge"})");
  const gov::test::CommandResult r = run_gov("eval " + kWalkthrough + " --task " + task + " --state " + state);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("note: the name `train` is used in several namespaces: its tasks are named `namespace/name`") !=
        std::string::npos);
  // Both were read: team-a's holds an instance, team-b's (pending in the state) takes the other,
  // and both are the candidates t's explanation lists.
  CHECK(r.out.find("- hyperpod-ns-team-a/train (team team-a, priority 70)") != std::string::npos);
  CHECK(r.out.find("- hyperpod-ns-team-b/train (team team-b, priority 70)") != std::string::npos);
}

// A Kueue auditor's finding: a Workload being evicted (`Evicted` True) still holds its quota until
// its pods stop, and Kueue takes it first as a target, evicting nothing else. Read as admitted, gov
// evicted another victim (`a2`). It is read as released now, with a note.
TEST_CASE("gov eval reads a Workload being evicted as having released its quota", "[k8s][kube][state]") {
  const std::string dir = kFixtures + "evicting/";
  const gov::test::CommandResult r =
      run_gov("eval " + dir + "policy.gov --task " + dir + "job-b1.yaml --state " + dir + "workloads.yaml");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("workloads.yaml:4:5: Workload `a1` is being evicted (Preempted): it holds its quota until its pods "
                   "stop, and is read as having released it") != std::string::npos);
  CHECK(r.out.find(R"({"at":301,"task":"b1","outcome":"admitted")") != std::string::npos);
  CHECK(r.out.find("preempted") == std::string::npos);
}

// A Kueue auditor's finding: a preempted Workload that Kueue has requeued (`Evicted` and `Requeued`
// True, no quota) is back in its queue at its creation time; gov skipped every evicted Workload, so
// under StrictFIFO `a2` was admitted past it. It queues now, as the same Workload plainly pending.
TEST_CASE("gov eval queues a preempted Workload that Kueue requeued", "[k8s][kube][state]") {
  const std::string dir = kFixtures + "requeued/";
  const gov::test::CommandResult r =
      run_gov("eval " + dir + "policy.gov --task " + dir + "a2.json --state " + dir + "workloads.yaml");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(R"("task":"a2","outcome":"pending")") != std::string::npos);
  CHECK(r.err.find("skipped") == std::string::npos);
  const gov::test::CommandResult plain =
      run_gov("eval " + dir + "policy.gov --task " + dir + "a2.json --state " + dir + "workloads-pending.yaml");
  CHECK(plain.out == r.out);
}
