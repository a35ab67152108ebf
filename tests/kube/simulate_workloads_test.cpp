// `gov simulate POLICY --workloads DIR|FILE...` (issue 18): Kubernetes objects as the submits of a
// replay, each at its creationTimestamp, with the `gov/duration` annotation as its duration.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const std::string kWalkthrough = "policies/examples/cli-walkthrough-g5-12xlarge.gov";
const std::string kJobs = "tests/fixtures/kubernetes/walkthrough";

/// The walkthrough's test block as a trace: a1 at 0, b1 at 300 (running 900 s), b2 at 600.
const std::string kTrace = R"({"events": [
  {"at": 0, "submit": {"id": "a1", "team": "team-a", "priority": "training", "instance_type": "ml.g5.12xlarge",
    "pods": 2, "per_pod": {"gpus": 4, "vcpus": 44, "memory_gib": 164}}},
  {"at": 300, "submit": {"id": "b1", "team": "team-b", "priority": "training", "instance_type": "ml.g5.12xlarge",
    "pods": 1, "per_pod": {"gpus": 4, "vcpus": 44, "memory_gib": 164}, "duration": 900}},
  {"at": 600, "submit": {"id": "b2", "team": "team-b", "priority": "experimentation", "instance_type": "ml.g5.12xlarge",
    "pods": 2, "per_pod": {"gpus": 4, "vcpus": 44, "memory_gib": 164}}}]})";

}  // namespace

TEST_CASE("gov simulate replays a directory of Kubernetes jobs as the equivalent trace", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads");
  const gov::test::CommandResult trace = run_gov("simulate " + kWalkthrough + " --trace " + dir.write("t.json", kTrace));
  REQUIRE(trace.exit_code == 0);
  const gov::test::CommandResult jobs = run_gov("simulate " + kWalkthrough + " --workloads " + kJobs);
  INFO(jobs.err);
  REQUIRE(jobs.exit_code == 0);
  CHECK(jobs.out == trace.out);
  // The walkthrough's steps: b1 reclaims from a1 at 300, b2 preempts b1 at 600.
  CHECK(jobs.out.find(R"({"at":300,"task":"a1","outcome":"preempted","team":"team-a","by":"b1","kind":"reclaim")") !=
        std::string::npos);
  CHECK(jobs.out.find(R"({"at":600,"task":"b1","outcome":"preempted","team":"team-b","by":"b2","kind":"in-team")") !=
        std::string::npos);
  // Files in any order, given one by one (repeated --workloads, or after the policy), and text.
  const gov::test::CommandResult files = run_gov("simulate " + kWalkthrough + " " + kJobs + "/b2.yaml --workloads " + kJobs +
                                                 "/b1.yaml --workloads " + kJobs + "/a1.yaml");
  CHECK(files.out == trace.out);
  const gov::test::CommandResult text = run_gov("simulate " + kWalkthrough + " --workloads " + kJobs + " --format text");
  CHECK(text.out == run_gov("simulate " + kWalkthrough + " --trace " + dir.write("t2.json", kTrace) + " --format text").out);
}

// The replay starts at the earliest creationTimestamp; the usage report's days are still the
// workloads' own dates, split at UTC midnight (they once came out as 1970-01-01).
TEST_CASE("gov simulate --workloads --usage-report dates usage by the workloads' days", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-usage");
  const auto job = [](const std::string& name, const std::string& created, const std::string& duration) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n  namespace: hyperpod-ns-team-a\n"
           "  creationTimestamp: \"" + created + "\"\n  labels:\n    kueue.x-k8s.io/queue-name: hyperpod-ns-team-a-localqueue\n"
           "  annotations:\n    gov/duration: \"" + duration + "\"\nspec:\n  template:\n    spec:\n      containers:\n"
           "        - name: c\n          resources:\n            limits: {nvidia.com/gpu: 1}\n";
  };
  const std::string jobs = dir.write("jobs.yaml", job("late", "2026-03-10T23:30:00Z", "3600") + "---\n" +
                                                      job("later", "2026-03-11T01:00:00Z", "60"));
  const std::string usage = dir / "usage.csv";
  const gov::test::CommandResult run = run_gov("simulate policies/examples/workshop-g5.gov --workloads " + jobs +
                                               " --usage-report " + usage);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string csv = gov::test::read_text(usage);
  CHECK(csv.find("\n2026-03-10,team-a,ml.g5.8xlarge,0.5,0.5,0,") != std::string::npos);
  CHECK(csv.find("\n2026-03-11,team-a,ml.g5.8xlarge,0.516667,0.516667,0,") != std::string::npos);
  CHECK(csv.find("1970-01-01") == std::string::npos);
  // A second policy after the first reads as a comparison, which takes a trace.
  const gov::test::CommandResult what_if =
      run_gov("simulate policies/examples/workshop-g5.gov policies/examples/rules.gov --workloads " + jobs);
  CHECK(what_if.exit_code == 2);
  CHECK(what_if.err.find("is a policy file, but with --workloads the paths after the policy are Kubernetes objects") !=
        std::string::npos);
}

TEST_CASE("gov simulate refuses workloads it cannot replay", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-bad");
  // Objects of several pod sets replay as tasks of pod sets.
  const gov::test::CommandResult fixtures =
      run_gov("simulate policies/examples/fine-grained.gov --workloads " + dir.write("p.yaml", gov::test::read_text(
          gov::test::repo_path("tests/fixtures/kubernetes/pytorchjob.yaml"))));
  INFO(fixtures.err);
  CHECK(fixtures.exit_code == 0);
  CHECK(fixtures.out.find("couldn't assign flavors to pod set worker: ") != std::string::npos);
  const gov::test::CommandResult whole = run_gov("simulate " + kWalkthrough + " --workloads tests/fixtures/kubernetes");
  CHECK(whole.exit_code == 1);
  CHECK(whole.out.empty());
  CHECK(whole.err.find("error: tests/fixtures/kubernetes/") == 0);
  // One id twice.
  const gov::test::CommandResult twice =
      run_gov("simulate " + kWalkthrough + " --workloads " + kJobs + "/a1.yaml --workloads " + kJobs + "/a1.yaml");
  INFO(twice.err);
  CHECK(twice.exit_code == 1);
  CHECK(twice.err.find("a1.yaml:3:1: Job `a1`: given twice, also as tests/fixtures/kubernetes/walkthrough/a1.yaml:3:1: "
                       "Job `a1` (Kubernetes names an object by namespace and name)") != std::string::npos);
  // A duration that is not seconds.
  std::string job = gov::test::read_text(gov::test::repo_path(kJobs + "/b1.yaml"));
  job.replace(job.find("\"900\""), 5, "15m");
  const gov::test::CommandResult duration = run_gov("simulate " + kWalkthrough + " --workloads " + dir.write("d.yaml", job));
  CHECK(duration.exit_code == 1);
  CHECK(duration.err.find("`metadata.annotations.gov/duration`: `15m` is not a number of seconds") != std::string::npos);
  // Both inputs, or an empty directory.
  CHECK(run_gov("simulate " + kWalkthrough + " --workloads " + kJobs + " --trace x.json").exit_code == 2);
  std::filesystem::create_directories(dir.path() / "empty");
  const gov::test::CommandResult empty = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / "empty"));
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("holds no .yaml, .yml or .json file") != std::string::npos);
}

// A Kubernetes engineer's finding: `kubectl get workloads -A` lists finished Workloads until their
// job is deleted, and deactivated ones; replayed, they held their quota for the whole run. They
// are skipped with a note, as `--state` skips them.
TEST_CASE("gov simulate --workloads skips finished and deactivated Workloads", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-finished");
  const auto workload = [](const std::string& name, const std::string& extra_spec, const std::string& status) {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: " + name +
           "\n  namespace: hyperpod-ns-team-a\n  creationTimestamp: \"2026-11-20T10:00:00Z\"\n  labels: "
           "{kueue.x-k8s.io/priority-class: training-priority}\nspec:\n  queueName: hyperpod-ns-team-a-localqueue\n" +
           extra_spec +
           "  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n        - name: c\n"
           "          resources: {limits: {nvidia.com/gpu: 4}}\n" +
           status;
  };
  dir.write("done.yaml", workload("done", "", "status:\n  conditions:\n  - {type: Finished, status: \"True\", reason: "
                                              "Succeeded, lastTransitionTime: \"2026-11-20T11:00:00Z\"}\n"));
  dir.write("off.yaml", workload("off", "  active: false\n", ""));
  dir.write("live.yaml", workload("live", "", ""));
  const gov::test::CommandResult r = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("Workload `done` is finished (Succeeded): skipped, it holds no quota and does not queue") !=
        std::string::npos);
  CHECK(r.err.find("Workload `off` is inactive (Deactivated): skipped") != std::string::npos);
  CHECK(r.out.find(R"("task":"live","outcome":"admitted")") != std::string::npos);
  CHECK(r.out.find(R"("task":"done")") == std::string::npos);
  CHECK(r.out.find(R"("task":"off")") == std::string::npos);
}

// A Kubernetes engineer's finding: `kubectl get workloads,jobs -A` gives a Job and the Workload
// Kueue made for it, and both were submitted: every job counted twice. The Workload's owner
// reference names the Job's uid; the job is replayed once, as its Workload.
TEST_CASE("gov simulate --workloads replays a Job given with its own Workload once", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-owner");
  std::string job = gov::test::read_text(gov::test::repo_path(kJobs + "/a1.yaml"));
  job.replace(job.find("  name: a1\n"), std::string("  name: a1\n").size(), "  name: a1\n  uid: 1111-aaaa\n");
  dir.write("job.yaml", job);
  dir.write("workload.yaml", R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: job-a1-12345
  namespace: hyperpod-ns-team-a
  creationTimestamp: "2026-11-20T10:00:01Z"
  labels: {kueue.x-k8s.io/priority-class: training-priority}
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: a1, uid: 1111-aaaa, controller: true}]
spec:
  queueName: hyperpod-ns-team-a-localqueue
  podSets:
  - name: main
    count: 2
    template:
      spec:
        nodeSelector: {node.kubernetes.io/instance-type: ml.g5.12xlarge}
        containers:
        - name: train
          resources: {requests: {cpu: "44", memory: 164Gi}, limits: {nvidia.com/gpu: 4}}
)");
  const gov::test::CommandResult r = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("Job `a1` is replayed as its Workload `job-a1-12345`, given too") != std::string::npos);
  CHECK(r.out.find(R"("task":"job-a1-12345","outcome":"admitted")") != std::string::npos);
  CHECK(r.out.find(R"("task":"a1")") == std::string::npos);

  // An owner reference across namespaces holds nothing (a hostile-input finding: the Job was
  // dropped and its demand charged to the Workload's team): both are replayed.
  std::string workload = gov::test::read_text(dir / "workload.yaml");
  workload.replace(workload.find("namespace: hyperpod-ns-team-a"), 29, "namespace: hyperpod-ns-team-b");
  workload.replace(workload.find("hyperpod-ns-team-a-localqueue"), 29, "hyperpod-ns-team-b-localqueue");
  dir.write("workload.yaml", workload);
  const gov::test::CommandResult apart = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  INFO(apart.err);
  REQUIRE(apart.exit_code == 0);
  CHECK(apart.err.find("is replayed as its Workload") == std::string::npos);
  CHECK(apart.out.find(R"("task":"a1","outcome":"admitted")") != std::string::npos);
  CHECK(apart.out.find(R"("task":"job-a1-12345")") != std::string::npos);

  // A hostile-input trial's findings: a second Workload owned by the same Job was replayed too
  // (the job counted twice), and a second Job sharing the first's uid was folded into its
  // Workload (its demand gone). Both are refused, naming the two objects.
  workload.replace(workload.find("namespace: hyperpod-ns-team-b"), 29, "namespace: hyperpod-ns-team-a");
  workload.replace(workload.find("hyperpod-ns-team-b-localqueue"), 29, "hyperpod-ns-team-a-localqueue");
  dir.write("workload.yaml", workload);
  std::string second = workload;
  second.replace(second.find("name: job-a1-12345"), 18, "name: job-a1-67890");
  dir.write("workload-2.yaml", second);
  const gov::test::CommandResult twice = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  INFO(twice.err);
  CHECK(twice.exit_code == 1);
  CHECK(twice.err.find(": owned by uid `1111-aaaa`, as is ") != std::string::npos);
  CHECK(twice.err.find("Workload `job-a1-67890`") != std::string::npos);
  CHECK(twice.err.find("Workload `job-a1-12345`") != std::string::npos);
  CHECK(twice.err.find("(Kueue makes one Workload per job: give one of them)") != std::string::npos);
  std::filesystem::remove(dir / "workload-2.yaml");
  std::string b1 = gov::test::read_text(gov::test::repo_path(kJobs + "/b1.yaml"));
  b1.replace(b1.find("  name: b1\n"), std::string("  name: b1\n").size(), "  name: b1\n  uid: 1111-aaaa\n");
  dir.write("b1.yaml", b1);
  const gov::test::CommandResult shared = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  CHECK(shared.exit_code == 1);
  CHECK(shared.err.find("uid `1111-aaaa` is also the uid of ") != std::string::npos);
  CHECK(shared.err.find("(a cluster gives every object a uid of its own)") != std::string::npos);
}

// A Kubernetes engineer's finding: every team names its job `train`, and two Jobs of one name in
// two namespaces were refused as one task id given twice. A Kubernetes object is named by its
// namespace and name: such jobs are replayed as `namespace/name`, with one note; a name used in
// one namespace only keeps its short id.
TEST_CASE("gov simulate --workloads replays jobs of one name in two namespaces", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-names");
  std::string b1 = gov::test::read_text(gov::test::repo_path(kJobs + "/b1.yaml"));
  b1.replace(b1.find("  name: b1\n"), std::string("  name: b1\n").size(), "  name: a1\n");
  dir.write("a1.yaml", gov::test::read_text(gov::test::repo_path(kJobs + "/a1.yaml")));
  dir.write("b1.yaml", b1);
  dir.write("b2.yaml", gov::test::read_text(gov::test::repo_path(kJobs + "/b2.yaml")));
  const gov::test::CommandResult r = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("note: the name `a1` is used in several namespaces: its tasks are named `namespace/name`") !=
        std::string::npos);
  CHECK(r.out.find(R"("task":"hyperpod-ns-team-a/a1","outcome":"admitted")") != std::string::npos);
  CHECK(r.out.find(R"("task":"hyperpod-ns-team-b/a1")") != std::string::npos);
  CHECK(r.out.find(R"("task":"b2")") != std::string::npos);
}

TEST_CASE("gov simulate --workloads notes the workloads that allow partial admission", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-partial");
  std::string a1 = gov::test::read_text(gov::test::repo_path(kJobs + "/a1.yaml"));
  a1.replace(a1.find("  labels:\n"), std::string("  labels:\n").size(),
             "  annotations: {kueue.x-k8s.io/job-min-parallelism: \"1\"}\n  labels:\n");
  dir.write("a1.yaml", a1);
  dir.write("b1.yaml", gov::test::read_text(gov::test::repo_path(kJobs + "/b1.yaml")));
  const gov::test::CommandResult r = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("a1.yaml:3:1: Job `a1` lets Kueue admit fewer pods than it asks for (`minCount`, "
                   "`kueue.x-k8s.io/job-min-parallelism`): gov does not model partial admission") != std::string::npos);
  // Without the annotation, nothing is said.
  dir.write("a1.yaml", gov::test::read_text(gov::test::repo_path(kJobs + "/a1.yaml")));
  CHECK(run_gov("simulate " + kWalkthrough + " --workloads " + (dir / "")).err.find("partial admission") == std::string::npos);
}

// A Kubernetes engineer's finding: no real object has `gov/duration`, so an admitted job never
// finished and the replay did not say so. It says so now, and --default-duration gives the
// objects without the annotation a run time (those with one keep theirs).
TEST_CASE("gov simulate --workloads --default-duration times the objects without a duration", "[k8s][kube][simulate]") {
  const gov::test::CommandResult r =
      run_gov("simulate " + kWalkthrough + " --workloads " + kJobs + " --default-duration 100");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(R"({"at":100,"task":"a1","outcome":"finished")") != std::string::npos);
  CHECK(r.out.find(R"({"at":700,"task":"b2","outcome":"finished")") != std::string::npos);  // admitted at 600
  CHECK(r.out.find(R"({"at":1600,"task":"b1","outcome":"finished")") != std::string::npos);  // its own 900 s
  CHECK(r.err.find("no workload has") == std::string::npos);

  const gov::test::CommandResult untimed = run_gov("simulate " + kWalkthrough + " --workloads " + kJobs + "/a1.yaml");
  CHECK(untimed.exit_code == 0);
  CHECK(untimed.err.find("note: no workload has a `gov/duration` annotation: the admitted ones run to the end of the "
                         "replay (--default-duration SECONDS gives them one)") != std::string::npos);
  CHECK(untimed.out.find("finished") == std::string::npos);

  const gov::test::CommandResult bad = run_gov("simulate " + kWalkthrough + " --workloads " + kJobs + " --default-duration 10m");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--default-duration takes seconds") != std::string::npos);
  CHECK(run_gov("simulate " + kWalkthrough + " --trace t.json --default-duration 5").err.find(
            "--default-duration applies to --workloads") != std::string::npos);
}

// A hostile-input trial's finding: a directory's `A1.YAML` was skipped without a word (the job
// vanished from the replay), and `--task J.YAML` was read as JSON. Extensions match in any case.
TEST_CASE("gov simulate --workloads and gov eval read .YAML files", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-case");
  dir.write("A1.YAML", gov::test::read_text(gov::test::repo_path(kJobs + "/a1.yaml")));
  dir.write("b1.Yml", gov::test::read_text(gov::test::repo_path(kJobs + "/b1.yaml")));
  const gov::test::CommandResult r = run_gov("simulate " + kWalkthrough + " --workloads " + (dir / ""));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(R"("task":"a1","outcome":"admitted")") != std::string::npos);
  CHECK(r.out.find(R"("task":"b1")") != std::string::npos);
  const gov::test::CommandResult eval = run_gov("eval " + kWalkthrough + " --task " + (dir / "A1.YAML"));
  CHECK(eval.exit_code == 0);
  CHECK(eval.out.find(R"("task":"a1","outcome":"admitted")") != std::string::npos);
}

// A hostile-input trial's finding: a file of no object replayed nothing without a word.
TEST_CASE("gov simulate --workloads notes a file that holds no object", "[k8s][kube][simulate]") {
  gov::test::TempDir dir("simulate-workloads-empty");
  const std::string empty = dir.write("empty.yaml", "apiVersion: v1\nkind: List\nitems: []\n");
  const gov::test::CommandResult r =
      run_gov("simulate " + kWalkthrough + " --workloads " + empty + " --workloads " + kJobs + "/a1.yaml");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("empty.yaml holds no Kubernetes object") != std::string::npos);
  CHECK(r.out.find(R"("task":"a1","outcome":"admitted")") != std::string::npos);
}
