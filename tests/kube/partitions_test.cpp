// Kubernetes objects' GPU partitions (issue 19's tasks, issue 18's objects): a container's
// `nvidia.com/mig-<profile>` request or limit is a count of partitions of that profile, under the
// same effective-request rule as every resource (init containers, sidecars, overhead), and the
// object decides exactly as the equivalent JSON task.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/kube/workload.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const std::string kPolicy = "policies/examples/mig-partitions.gov";

std::string eval(const std::string& task) {
  const gov::test::CommandResult r = run_gov("eval " + kPolicy + " --task " + task);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("gov eval of a Job asking for MIG partitions decides exactly as the JSON task", "[kube][mig]") {
  gov::test::TempDir dir("eval-kube-mig");
  // Per pod: the init container's 2 partitions outweigh the main container's 1 (Kubernetes'
  // effective request is the larger), 2 vCPUs and 8 GiB; 2 pods.
  const std::string json = dir.write("nb1.json", R"({"id": "nb1", "team": "research", "priority": "notebook",
    "instance_type": "ml.p4d.24xlarge", "pods": 2, "per_pod": {"vcpus": 2, "memory_gib": 8, "partitions": {"mig-1g.5gb": 2}}})");
  const std::string yaml = gov::test::repo_path("tests/fixtures/kubernetes/mig-notebook.yaml");
  const std::string out = eval(yaml);
  CHECK(out == eval(json));
  CHECK(out.find("\"outcome\":\"admitted\"") != std::string::npos);
  CHECK(out.find("\"mig-1g.5gb\":4") != std::string::npos);  // usage: 2 pods × 2
}

TEST_CASE("a MIG partition request that is not a whole number is an error naming the field", "[kube][mig]") {
  gov::test::TempDir dir("kube-mig-bad");
  const std::string yaml = dir.write("bad.yaml", R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  labels:
    kueue.x-k8s.io/queue-name: hyperpod-ns-research-localqueue
spec:
  containers:
    - name: c
      resources:
        limits:
          nvidia.com/mig-1g.5gb: 500m
)");
  const gov::test::CommandResult r = run_gov("eval " + kPolicy + " --task " + yaml);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("nvidia.com/mig-1g.5gb") != std::string::npos);
  CHECK(r.err.find("500m") != std::string::npos);
}
