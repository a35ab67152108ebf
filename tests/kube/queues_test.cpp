// A team's `queues` (issue 18): LocalQueues named otherwise than HyperPod's map to the team that
// declares them; an unknown queue is an error naming it and the known ones.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/kube/workload.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const gov::kube::QueueNaming kNaming{
    {"research", "serving"}, {{"ml-research", "research"}, {"ml-batch", "research"}}, {}};

std::string error_of(std::string_view queue, const gov::kube::QueueNaming& naming = kNaming) {
  const auto team = gov::kube::team_of_queue(queue, naming);
  return team ? "(team " + team.value() + ")" : team.error().message;
}

const gov::kube::QueueNaming kByNamespace{
    {"research", "serving"}, {{"ml-research", "research"}}, {{"research-ns", "research"}, {"serving-ns", "serving"}}};

const std::string kPolicy = R"(import "aws-ml"

cluster c {
  catalog  = aws-ml
  capacity = { ml.g5.12xlarge: 2 }
}

policy {
  priority training = 70
}

team research {
  quota ml.g5.12xlarge { instances = 1 }
  queues = ["ml-research", "ml-batch"]
}

team serving {
  quota ml.g5.12xlarge { instances = 1 }
  namespaces = ["serving-ns"]
}
)";

std::string job(const std::string& queue, const std::string& namespace_name = "") {
  return R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
)" + (namespace_name.empty() ? "" : "  namespace: " + namespace_name + "\n") +
         R"(  labels: {kueue.x-k8s.io/queue-name: )" + queue + R"(}
spec:
  template:
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]
)";
}

}  // namespace

TEST_CASE("kube maps a queue to the team that declares it", "[k8s][kube][queues]") {
  CHECK(error_of("ml-research") == "(team research)");
  CHECK(error_of("ml-batch") == "(team research)");
  CHECK(error_of("hyperpod-ns-serving-localqueue") == "(team serving)");
  CHECK(error_of("serving") == "(team serving)");  // plain naming: the team's own name
  CHECK(error_of("ml-reserch") ==
        "queue `ml-reserch` maps to no team of the policy; did you mean `ml-research`? (HyperPod's names, the teams' "
        "`queues`, and the teams' own names)");
  CHECK(error_of("hyperpod-ns-team-z-localqueue") ==
        "queue `hyperpod-ns-team-z-localqueue` is HyperPod's queue of team `team-z`, which the policy does not have; the "
        "teams are `research`, `serving`");
  CHECK(error_of("hyperpod-ns-serv1ng-localqueue") ==
        "queue `hyperpod-ns-serv1ng-localqueue` is HyperPod's queue of team `serv1ng`, which the policy does not have; did "
        "you mean `serving`?");
  CHECK(error_of("ml-nothing-alike-at-all") ==
        "queue `ml-nothing-alike-at-all` maps to no team of the policy; the known queues are "
        "`hyperpod-ns-research-localqueue`, `hyperpod-ns-serving-localqueue`, `ml-research`, `ml-batch`, `research`, "
        "`serving` (HyperPod's names, the teams' `queues`, and the teams' own names)");
  CHECK(error_of("default", {{"research"}, {}, {}}) ==
        "queue `default` maps to no team of the policy; the known queues are `hyperpod-ns-research-localqueue`, "
        "`research` (a team's `queues = [...]` maps queues named otherwise)");
  CHECK(error_of("default", {}) == "queue `default` maps to no team: the policy has no teams");
}

TEST_CASE("gov eval reads a job's team from the policy's queues", "[k8s][kube][queues]") {
  gov::test::TempDir dir("queues-eval");
  const std::string policy = dir.write("p.gov", kPolicy);
  const std::string json = dir.write("j.json", R"({"id": "j", "team": "research", "pods": 1,
    "per_pod": {"gpus": 2}})");
  const gov::test::CommandResult by_json = run_gov("eval " + policy + " --task " + json);
  const gov::test::CommandResult by_queue = run_gov("eval " + policy + " --task " + dir.write("j.yaml", job("ml-batch")));
  INFO(by_queue.err);
  REQUIRE(by_queue.exit_code == 0);
  CHECK(by_queue.out == by_json.out);
  CHECK(by_queue.out.find(R"("team":"research")") != std::string::npos);
  // An unknown queue: the label value, the known queues and a did-you-mean.
  const gov::test::CommandResult typo = run_gov("eval " + policy + " --task " + dir.write("typo.yaml", job("ml-bach")));
  CHECK(typo.exit_code == 1);
  CHECK(typo.out.empty());
  CHECK(typo.err.find("typo.yaml:1:1: Job `j`: queue `ml-bach` maps to no team of the policy, and the object has no "
                      "namespace; did you mean `ml-batch`?") !=
        std::string::npos);
}

TEST_CASE("kube maps a queue by its namespace when the queue says nothing", "[k8s][kube][queues]") {
  const auto team = [](std::string_view queue, std::string_view ns) {
    const auto t = gov::kube::team_of_queue(queue, kByNamespace, ns);
    return t ? "(team " + t.value() + ")" : t.error().message;
  };
  CHECK(team("default", "research-ns") == "(team research)");
  CHECK(team("default", "serving-ns") == "(team serving)");
  // A declared queue, and HyperPod's names, come first; a declared namespace before a team's name.
  CHECK(team("ml-research", "research-ns") == "(team research)");
  CHECK(team("hyperpod-ns-serving-localqueue", "hyperpod-ns-serving") == "(team serving)");
  CHECK(team("hyperpod-ns-serving-localqueue", "") == "(team serving)");  // no namespace: not checked
  // A LocalQueue is namespaced: a queue of a team named from another team's namespace does not
  // exist there, and Kueue never admits the object (a Kubernetes engineer's finding).
  CHECK(team("ml-research", "serving-ns") ==
        "queue `ml-research` is team `research`'s, whose LocalQueues are in namespace `research-ns`, and this object "
        "is in `serving-ns`: Kueue looks the queue up in the object's own namespace, finds none, and never admits it");
  CHECK(team("hyperpod-ns-serving-localqueue", "research-ns") ==
        "queue `hyperpod-ns-serving-localqueue` is team `serving`'s, whose LocalQueues are in namespaces `serving-ns`, "
        "`hyperpod-ns-serving`, and this object is in `research-ns`: Kueue looks the queue up in the object's own "
        "namespace, finds none, and never admits it");
  CHECK(team("serving", "research-ns") == "(team research)");
  CHECK(team("default", "other") ==
        "queue `default` maps to no team of the policy, nor does its namespace `other`; the known queues are "
        "`hyperpod-ns-research-localqueue`, `hyperpod-ns-serving-localqueue`, `ml-research`, `research`, `serving` "
        "(HyperPod's names, the teams' `queues`, and the teams' own names)");
  CHECK(team("default", "") ==
        "queue `default` maps to no team of the policy, and the object has no namespace; the known queues are "
        "`hyperpod-ns-research-localqueue`, `hyperpod-ns-serving-localqueue`, `ml-research`, `research`, `serving` "
        "(HyperPod's names, the teams' `queues`, and the teams' own names)");
}

TEST_CASE("gov eval reads a job's team from the policy's namespaces", "[k8s][kube][queues]") {
  gov::test::TempDir dir("namespaces-eval");
  const std::string policy = dir.write("p.gov", kPolicy);
  const std::string json = dir.write("j.json", R"({"id": "j", "team": "serving", "pods": 1,
    "per_pod": {"gpus": 2}})");
  const gov::test::CommandResult by_namespace =
      run_gov("eval " + policy + " --task " + dir.write("j.yaml", job("default", "serving-ns")));
  INFO(by_namespace.err);
  REQUIRE(by_namespace.exit_code == 0);
  CHECK(by_namespace.out == run_gov("eval " + policy + " --task " + json).out);
  const gov::test::CommandResult other = run_gov("eval " + policy + " --task " + dir.write("o.yaml", job("default", "batch")));
  CHECK(other.exit_code == 1);
  CHECK(other.err.find("o.yaml:1:1: Job `j`: queue `default` maps to no team of the policy, nor does its namespace `batch`") !=
        std::string::npos);
}
