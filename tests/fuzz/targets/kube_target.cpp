// Fuzz target `kube`: gov::kube on arbitrary bytes — the YAML loader (with small limits, so that
// depth and the alias budget are reached), Kubernetes objects as workloads, quantities — and
// `gov import kueue`'s reader (bridge::import_kueue) on the same bytes.
// Properties: no crash, hang or exhausted memory; every error has a message and, when it names a
// line, a position; every workload has between 1 and kMaxPodSets pod sets of at least one pod; an
// import either fails with a message or gives policy text that imports the catalog.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/bridge/bridge.hpp"
#include "compiler/kube/quantity.hpp"
#include "compiler/kube/workload.hpp"
#include "compiler/kube/yaml.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

void check_error(const gov::support::Error& error) {
  gov::fuzz::require(!error.message.empty(), "an error without a message");
  if (error.message.rfind("line ", 0) == 0) gov::fuzz::require(error.position.has_value(), "a line without a position", error.message);
}

/// Two instance types, as the shipped catalog describes them (only names and amounts are read).
const gov::check::Catalog& catalog() {
  static const gov::check::Catalog c = [] {
    gov::check::Catalog out;
    out.name = "fuzz";
    gov::check::InstanceType g5;
    g5.name = "ml.g5.8xlarge";
    g5.accelerator = "nvidia-a10g";
    g5.per_instance = {1, 0, 32'000, 128 * 1024, 1};
    gov::check::InstanceType c5;
    c5.name = "ml.c5.2xlarge";
    c5.per_instance = {0, 0, 8'000, 16 * 1024, 0};
    out.types = {g5, c5};
    return out;
  }();
  return c;
}

void check_import(const std::string& text, const gov::kube::YamlLimits& limits) {
  gov::bridge::ImportOptions options;
  options.catalog_import = "catalog.gov";
  options.yaml = limits;
  const auto imported = gov::bridge::import_kueue({{"fuzz.yaml", text}}, catalog(), options);
  if (!imported) {
    gov::fuzz::require(!imported.error().message.empty(), "an import error without a message");
    return;
  }
  gov::fuzz::require(imported.value().find("import \"catalog.gov\"") != std::string::npos, "an import without the catalog",
                     imported.value());
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
  check_import(text, limits);
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
      const gov::kube::QueueNaming naming{{"team-a", "research"}, {{"ml-research", "research"}}, {{"research-ns", "research"}}};
      const auto team = gov::kube::team_of_queue(workload.value().queue_name, naming, workload.value().namespace_name);
      if (!team) check_error(team.error());
      (void)gov::kube::task_json(workload.value(), set, team ? team.value() : "team-a", std::nullopt);
    }
  }
  return 0;
}
