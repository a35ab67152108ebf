// Fuzz target `kube`: gov::kube on arbitrary bytes — the YAML loader (with small limits, so that
// depth and the alias budget are reached), Kubernetes objects as workloads, quantities.
// Properties: no crash, hang or exhausted memory; every error has a message and, when it names a
// line, a position; every workload has between 1 and kMaxPodSets pod sets of at least one pod.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/kube/quantity.hpp"
#include "compiler/kube/workload.hpp"
#include "compiler/kube/yaml.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

void check_error(const gov::support::Error& error) {
  gov::fuzz::require(!error.message.empty(), "an error without a message");
  if (error.message.rfind("line ", 0) == 0) gov::fuzz::require(error.position.has_value(), "a line without a position", error.message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gov::fuzz::text_of(data, size);
  // Quantities: the whole input as one, then each line.
  if (const auto q = gov::kube::parse_quantity(text)) {
    for (gov::Resource r : gov::model::kAllResources) {
      const gov::kube::Converted c = gov::kube::to_base_units(*q, r);
      gov::fuzz::require(c.status != gov::kube::Conversion::ok || c.value >= 0, "a negative base amount", text);
    }
  }
  gov::kube::YamlLimits limits;
  limits.max_depth = 16;
  limits.max_nodes = 20'000;
  const auto documents = gov::kube::load_yaml(text, limits);
  if (!documents) {
    check_error(documents.error());
    return 0;
  }
  const auto objects = gov::kube::kubernetes_objects(documents.value());
  if (!objects) {
    check_error(objects.error());
    return 0;
  }
  for (const gov::kube::Node& object : objects.value()) {
    const auto workload = gov::kube::read_workload(object);
    if (!workload) {
      check_error(workload.error());
      continue;
    }
    const size_t sets = workload.value().pod_sets.size();
    gov::fuzz::require(sets >= 1 && sets <= gov::kube::kMaxPodSets, "a workload without pod sets or with too many", text);
    for (const gov::kube::PodSet& set : workload.value().pod_sets) {
      gov::fuzz::require(set.count >= 1, "a pod set without pods", text);
      (void)gov::kube::task_json(workload.value(), set, gov::kube::team_of_queue(workload.value().queue_name), std::nullopt);
    }
  }
  return 0;
}
