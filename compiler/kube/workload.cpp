// Kubernetes objects as workloads. What each kind contributes is Kueue's own reading of it (its
// job integrations' PodSets()); requests follow Kubernetes' effective-request rule.
#include "compiler/kube/workload.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "compiler/diagnostics/diagnostic.hpp"
#include "compiler/kube/quantity.hpp"
#include "compiler/model/hyperpod_names.hpp"
#include "compiler/model/quantities.hpp"
#include "compiler/support/json_writer.hpp"

namespace gov::kube {

std::string Workload::describe() const { return fmt::format("{} `{}`", kind, name); }

namespace {

/// A read error: thrown inside this file only, caught by read_workload.
struct Failure {
  support::Error error;
};

/// The object being read and the path to a field, for messages:
/// "line 12, column 9: PyTorchJob `train`: `spec.pytorchReplicaSpecs.Worker.replicas`: ...".
struct Reader {
  std::string object;
  /// The object names a class by label (or is a Workload): pod templates' priorityClassName is moot.
  bool priority_labelled = false;
  [[noreturn]] void fail(const Node& at, std::string_view path, std::string_view why) const {
    throw Failure{error_at(at, fmt::format("{}: `{}`: {}", object, path, why))};
  }

  const Node& need(const Node& map, std::string_view key, const std::string& path, Node::Kind kind) const {
    const Node* value = map.find(key);
    if (!value || value->is_null()) fail(map, path, "missing");
    if (value->kind != kind) fail(*value, path, fmt::format("expected {}, found {}", expected(kind), kind_name(*value)));
    return *value;
  }

  /// An optional field; absent and `null` are the same, as in Kubernetes.
  const Node* optional(const Node& map, std::string_view key, const std::string& path, Node::Kind kind) const {
    const Node* value = map.find(key);
    if (!value || value->is_null()) return nullptr;
    if (value->kind != kind) fail(*value, path, fmt::format("expected {}, found {}", expected(kind), kind_name(*value)));
    return value;
  }

  int64_t integer(const Node& value, const std::string& path, int64_t low, int64_t high) const {
    int64_t n = 0;
    bool ok = value.is_scalar() && !value.quoted && !value.text.empty() && value.text.size() <= 12;
    for (char c : ok ? value.text : std::string()) {
      if (c < '0' || c > '9') ok = false;
      n = n * 10 + (c - '0');
    }
    if (!ok || n < low || n > high) fail(value, path, fmt::format("`{}` is not a whole number in {}..{}", value.text, low, high));
    return n;
  }

  static std::string_view expected(Node::Kind kind) {
    switch (kind) {
      case Node::Kind::null: return "null";
      case Node::Kind::scalar: return "a scalar";
      case Node::Kind::sequence: return "a list";
      case Node::Kind::map: return "a map";
    }
    return "a node";
  }
};

constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
constexpr int64_t kMaxCount = 1'000'000;  // pods in one pod set

std::optional<model::Resource> resource_named(std::string_view name) {
  for (model::Resource r : model::kAllResources) {
    if (model::kubernetes_name(r) == name) return r;
  }
  return std::nullopt;
}

/// A resource list (`requests`, `limits`, `overhead`): amounts in base units, and which were given.
struct ResourceList {
  model::Resources amounts{};
  std::array<bool, model::kResourceCount> given{};
};

ResourceList resource_list(const Reader& in, const Node* list, const std::string& path) {
  ResourceList out;
  if (!list) return out;
  for (size_t i = 0; i < list->keys.size(); ++i) {
    const std::string field = path + "." + list->keys[i].text;
    const Node& value = list->values[i];
    if (!value.is_scalar()) in.fail(value, field, fmt::format("expected a quantity, found {}", kind_name(value)));
    const std::optional<Quantity> quantity = parse_quantity(value.text);
    if (!quantity) in.fail(value, field, fmt::format("`{}` is not a Kubernetes quantity", value.text));
    const std::optional<model::Resource> resource = resource_named(list->keys[i].text);
    if (!resource) {
      if (quantity->digits == 0) continue;  // a zero request of anything affects no admission
      in.fail(list->keys[i], field,
              "a resource gov does not know; Kueue admits only resources its ClusterQueues cover (gov reads "
              "`nvidia.com/gpu`, `aws.amazon.com/neurondevice`, `cpu`, `memory`, `vpc.amazonaws.com/efa`)");
    }
    const Converted amount = to_base_units(*quantity, *resource);
    if (amount.status != Conversion::ok) {
      in.fail(value, field, fmt::format("`{}` {}", value.text, conversion_problem(amount.status, *resource)));
    }
    out.amounts[model::index(*resource)] = amount.value;
    out.given[model::index(*resource)] = true;
  }
  return out;
}

/// A container's requests: `requests`, else `limits` where no request is given (Kubernetes
/// defaults a missing request to the limit).
model::Resources container_requests(const Reader& in, const Node& container, const std::string& path) {
  const Node* resources = in.optional(container, "resources", path + ".resources", Node::Kind::map);
  if (!resources) return {};
  const ResourceList requests = resource_list(
      in, in.optional(*resources, "requests", path + ".resources.requests", Node::Kind::map), path + ".resources.requests");
  const ResourceList limits = resource_list(
      in, in.optional(*resources, "limits", path + ".resources.limits", Node::Kind::map), path + ".resources.limits");
  model::Resources out = requests.amounts;
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (!requests.given[r] && limits.given[r]) out[r] = limits.amounts[r];
  }
  return out;
}

int64_t saturating_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/// Kubernetes' effective request of a pod (KEP 753): max(sum of containers + sum of sidecars,
/// each init container + the sidecars started before it, each sidecar's start), plus overhead.
model::Resources pod_requests(const Reader& in, const Node& spec, const std::string& path) {
  // Pod-level resources (Kubernetes 1.32+) replace the containers' sum in the pod's requests.
  if (const Node* resources = spec.find("resources"); resources && !resources->is_null()) {
    in.fail(*resources, path + ".resources", "pod-level resources are not read yet; give the requests per container");
  }
  model::Resources containers{}, sidecars{}, init_peak{};
  const Node& list = in.need(spec, "containers", path + ".containers", Node::Kind::sequence);
  for (size_t i = 0; i < list.items.size(); ++i) {
    const std::string item = fmt::format("{}.containers[{}]", path, i);
    if (!list.items[i].is_map()) in.fail(list.items[i], item, "expected a map");
    const model::Resources c = container_requests(in, list.items[i], item);
    for (size_t r = 0; r < model::kResourceCount; ++r) containers[r] = saturating_add(containers[r], c[r]);
  }
  if (const Node* inits = in.optional(spec, "initContainers", path + ".initContainers", Node::Kind::sequence)) {
    for (size_t i = 0; i < inits->items.size(); ++i) {
      const std::string item = fmt::format("{}.initContainers[{}]", path, i);
      const Node& init = inits->items[i];
      if (!init.is_map()) in.fail(init, item, "expected a map");
      const model::Resources c = container_requests(in, init, item);
      const Node* restart = in.optional(init, "restartPolicy", item + ".restartPolicy", Node::Kind::scalar);
      const bool sidecar = restart && restart->text == "Always";
      for (size_t r = 0; r < model::kResourceCount; ++r) {
        if (sidecar) sidecars[r] = saturating_add(sidecars[r], c[r]);
        init_peak[r] = std::max(init_peak[r], sidecar ? sidecars[r] : saturating_add(sidecars[r], c[r]));
      }
    }
  }
  model::Resources out{};
  for (size_t r = 0; r < model::kResourceCount; ++r) out[r] = std::max(saturating_add(containers[r], sidecars[r]), init_peak[r]);
  if (const Node* overhead = in.optional(spec, "overhead", path + ".overhead", Node::Kind::map)) {
    const model::Resources o = resource_list(in, overhead, path + ".overhead").amounts;
    for (size_t r = 0; r < model::kResourceCount; ++r) out[r] = saturating_add(out[r], o[r]);
  }
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (out[r] == INT64_MAX) in.fail(spec, path, "the pod's requests add up to more than gov counts");
  }
  return out;
}

/// The instance type a pod spec asks for: `nodeSelector`, or a required node affinity term
/// `node.kubernetes.io/instance-type In [one type]`.
std::optional<std::string> instance_type(const Reader& in, const Node& spec, const std::string& path) {
  std::optional<std::string> type;
  if (const Node* selector = in.optional(spec, "nodeSelector", path + ".nodeSelector", Node::Kind::map)) {
    if (const Node* value = selector->find(kInstanceTypeLabel); value && value->is_scalar()) type = value->text;
  }
  const Node* affinity = in.optional(spec, "affinity", path + ".affinity", Node::Kind::map);
  const Node* node_affinity = affinity ? in.optional(*affinity, "nodeAffinity", path + ".affinity.nodeAffinity", Node::Kind::map) : nullptr;
  const std::string required_path = path + ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  const Node* required = node_affinity ? in.optional(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", required_path, Node::Kind::map)
                                       : nullptr;
  if (!required) return type;
  const Node& terms = in.need(*required, "nodeSelectorTerms", required_path + ".nodeSelectorTerms", Node::Kind::sequence);
  std::vector<std::string> types;  // the types any term allows (terms are ORed)
  for (size_t t = 0; t < terms.items.size(); ++t) {
    const std::string term_path = fmt::format("{}.nodeSelectorTerms[{}]", required_path, t);
    if (!terms.items[t].is_map()) in.fail(terms.items[t], term_path, "expected a map");
    const Node* expressions = in.optional(terms.items[t], "matchExpressions", term_path + ".matchExpressions", Node::Kind::sequence);
    if (!expressions) continue;
    for (size_t e = 0; e < expressions->items.size(); ++e) {
      const std::string expression_path = fmt::format("{}.matchExpressions[{}]", term_path, e);
      const Node& expression = expressions->items[e];
      if (!expression.is_map()) in.fail(expression, expression_path, "expected a map");
      const Node& key = in.need(expression, "key", expression_path + ".key", Node::Kind::scalar);
      if (key.text != kInstanceTypeLabel) continue;
      const Node& op = in.need(expression, "operator", expression_path + ".operator", Node::Kind::scalar);
      if (op.text != "In") {
        in.fail(op, expression_path + ".operator",
                fmt::format("`{}` on `{}`: gov reads only `In` with one instance type", op.text, kInstanceTypeLabel));
      }
      const Node& values = in.need(expression, "values", expression_path + ".values", Node::Kind::sequence);
      for (const Node& value : values.items) {
        if (!value.is_scalar()) in.fail(value, expression_path + ".values", "expected a list of strings");
        if (std::find(types.begin(), types.end(), value.text) == types.end()) types.push_back(value.text);
      }
    }
  }
  if (types.empty()) return type;
  if (types.size() > 1) {
    in.fail(*required, required_path,
            fmt::format("allows {} instance types ({}); a gov task has one instance type or none", types.size(),
                        fmt::join(types, ", ")));
  }
  if (type && *type != types[0]) {
    in.fail(*required, required_path, fmt::format("asks for `{}`, the node selector for `{}`: no node has both", types[0], *type));
  }
  return types[0];
}

/// A pod template's `priorityClassName` (a Kubernetes PriorityClass), which Kueue takes as the
/// workload's priority when no `kueue.x-k8s.io/priority-class` label names one; gov reads only the
/// label, so such a template is an error rather than a silently different priority.
void no_pod_priority(const Reader& in, const Node& spec, const std::string& path, bool labelled) {
  const Node* priority = spec.find("priorityClassName");
  if (labelled || !priority || priority->is_null()) return;
  in.fail(*priority, path + ".priorityClassName",
          "Kueue takes this Kubernetes PriorityClass as the priority when no `kueue.x-k8s.io/priority-class` label names a "
          "class; gov reads only the label: add it");
}

PodSet pod_set(const Reader& in, std::string name, int64_t count, const Node& holder, const std::string& path) {
  if (count == 0) in.fail(holder, path, fmt::format("pod set `{}` has zero pods; Kueue admits no empty pod set", name));
  const Node& template_node = in.need(holder, "template", path + ".template", Node::Kind::map);
  const Node& spec = in.need(template_node, "spec", path + ".template.spec", Node::Kind::map);
  no_pod_priority(in, spec, path + ".template.spec", in.priority_labelled);
  PodSet out;
  out.name = std::move(name);
  out.count = count;
  out.per_pod = pod_requests(in, spec, path + ".template.spec");
  out.instance_type = instance_type(in, spec, path + ".template.spec");
  out.at = template_node.at;
  return out;
}

int64_t replicas(const Reader& in, const Node& holder, const std::string& path, std::string_view key = "replicas") {
  const Node* value = in.optional(holder, key, path + "." + std::string(key), Node::Kind::scalar);
  return value ? in.integer(*value, path + "." + std::string(key), 0, kMaxCount) : 1;
}

/// Ray's head group and worker groups (RayCluster's spec, RayJob's spec.rayClusterSpec).
void ray_pod_sets(const Reader& in, const Node& cluster, const std::string& path, std::vector<PodSet>& out) {
  const Node& head = in.need(cluster, "headGroupSpec", path + ".headGroupSpec", Node::Kind::map);
  out.push_back(pod_set(in, "head", 1, head, path + ".headGroupSpec"));
  const Node* workers = in.optional(cluster, "workerGroupSpecs", path + ".workerGroupSpecs", Node::Kind::sequence);
  if (!workers) return;
  for (size_t i = 0; i < workers->items.size(); ++i) {
    const std::string item = fmt::format("{}.workerGroupSpecs[{}]", path, i);
    const Node& group = workers->items[i];
    if (!group.is_map()) in.fail(group, item, "expected a map");
    const Node& name = in.need(group, "groupName", item + ".groupName", Node::Kind::scalar);
    // Kueue: replicas (default 1) × numOfHosts (multi-host groups, default 1).
    const int64_t count = replicas(in, group, item) * replicas(in, group, item, "numOfHosts");
    out.push_back(pod_set(in, name.text, count, group, item));
  }
}

std::optional<std::string> label(const Node& object, std::string_view key) {
  const Node* metadata = object.find("metadata");
  const Node* labels = metadata ? metadata->find("labels") : nullptr;
  const Node* value = labels ? labels->find(key) : nullptr;
  if (!value || !value->is_scalar()) return std::nullopt;
  return value->text;
}

bool group_is(std::string_view api_version, std::string_view group) {
  return api_version.size() > group.size() && api_version.substr(0, group.size()) == group && api_version[group.size()] == '/';
}

constexpr std::string_view kKinds =
    "`batch/v1` Job, `kubeflow.org/v1` PyTorchJob, `sagemaker.amazonaws.com/v1` HyperPodPyTorchJob, `ray.io/v1` RayJob "
    "and RayCluster, `kueue.x-k8s.io` Workload, `v1` Pod";

}  // namespace

support::Expected<Workload> read_workload(const Node& object) {
  try {
    Reader in{"object"};
    if (!object.is_map()) in.fail(object, "", fmt::format("expected a Kubernetes object (a map), found {}", kind_name(object)));
    const Node& kind = in.need(object, "kind", "kind", Node::Kind::scalar);
    const Node& api = in.need(object, "apiVersion", "apiVersion", Node::Kind::scalar);
    const Node& metadata = in.need(object, "metadata", "metadata", Node::Kind::map);
    const Node& name = in.need(metadata, "name", "metadata.name", Node::Kind::scalar);
    Workload out;
    out.kind = kind.text;
    out.name = name.text;
    out.at = object.at;
    in.object = out.describe();
    if (const Node* ns = in.optional(metadata, "namespace", "metadata.namespace", Node::Kind::scalar)) out.namespace_name = ns->text;

    const std::string& k = kind.text;
    const std::string& v = api.text;
    const bool workload = k == "Workload" && (v == "kueue.x-k8s.io/v1beta1" || v == "kueue.x-k8s.io/v1beta2");
    if (workload) {
      in.priority_labelled = true;  // the Workload's own priority fields decide
      const Node& spec = in.need(object, "spec", "spec", Node::Kind::map);
      if (const Node* queue = in.optional(spec, "queueName", "spec.queueName", Node::Kind::scalar)) out.queue_name = queue->text;
      if (const Node* priority = in.optional(spec, "priorityClassName", "spec.priorityClassName", Node::Kind::scalar)) {
        out.priority_class = priority->text;
      }
      const Node& sets = in.need(spec, "podSets", "spec.podSets", Node::Kind::sequence);
      if (sets.items.size() > kMaxPodSets) {
        in.fail(sets, "spec.podSets", fmt::format("{} pod sets; Kueue allows at most {}", sets.items.size(), kMaxPodSets));
      }
      for (size_t i = 0; i < sets.items.size(); ++i) {
        const std::string item = fmt::format("spec.podSets[{}]", i);
        const Node& set = sets.items[i];
        if (!set.is_map()) in.fail(set, item, "expected a map");
        const Node& set_name = in.need(set, "name", item + ".name", Node::Kind::scalar);
        const Node& count = in.need(set, "count", item + ".count", Node::Kind::scalar);
        out.pod_sets.push_back(pod_set(in, set_name.text, in.integer(count, item + ".count", 0, kMaxCount), set, item));
      }
    } else {
      if (const std::optional<std::string> queue = label(object, "kueue.x-k8s.io/queue-name")) out.queue_name = *queue;
      out.priority_class = label(object, "kueue.x-k8s.io/priority-class");
      in.priority_labelled = out.priority_class.has_value();
      if (k == "Pod" && v == "v1") {
        const Node& spec = in.need(object, "spec", "spec", Node::Kind::map);
        no_pod_priority(in, spec, "spec", in.priority_labelled);
        PodSet set;
        set.name = "main";
        set.per_pod = pod_requests(in, spec, "spec");
        set.instance_type = instance_type(in, spec, "spec");
        set.at = spec.at;
        out.pod_sets.push_back(std::move(set));
      } else if (k == "Job" && v == "batch/v1") {
        const Node& spec = in.need(object, "spec", "spec", Node::Kind::map);
        // Kueue's Job: parallelism (default 1), or completions when fewer.
        int64_t count = replicas(in, spec, "spec", "parallelism");
        if (spec.find("completions") && !spec.find("completions")->is_null()) {
          count = std::min(count, replicas(in, spec, "spec", "completions"));
        }
        out.pod_sets.push_back(pod_set(in, "main", count, spec, "spec"));
      } else if (k == "PyTorchJob" && group_is(v, "kubeflow.org")) {
        const Node& spec = in.need(object, "spec", "spec", Node::Kind::map);
        const Node& specs = in.need(spec, "pytorchReplicaSpecs", "spec.pytorchReplicaSpecs", Node::Kind::map);
        for (size_t i = 0; i < specs.keys.size(); ++i) {
          const std::string& type = specs.keys[i].text;
          if (type != "Master" && type != "Worker") {
            in.fail(specs.keys[i], "spec.pytorchReplicaSpecs." + type, "a replica type PyTorchJob does not have (`Master`, `Worker`)");
          }
        }
        // Kueue's order: Master, then Worker; pod sets are named in lower case.
        for (std::string_view type : {"Master", "Worker"}) {
          const std::string path = "spec.pytorchReplicaSpecs." + std::string(type);
          const Node* replica = in.optional(specs, type, path, Node::Kind::map);
          if (!replica) continue;
          std::string set_name(type);
          set_name[0] = static_cast<char>(set_name[0] - 'A' + 'a');
          out.pod_sets.push_back(pod_set(in, set_name, replicas(in, *replica, path), *replica, path));
        }
      } else if (k == "HyperPodPyTorchJob" && group_is(v, "sagemaker.amazonaws.com")) {
        const Node& spec = in.need(object, "spec", "spec", Node::Kind::map);
        const Node& specs = in.need(spec, "replicaSpecs", "spec.replicaSpecs", Node::Kind::sequence);
        for (size_t i = 0; i < specs.items.size() && i <= kMaxPodSets; ++i) {
          const std::string item = fmt::format("spec.replicaSpecs[{}]", i);
          const Node& replica = specs.items[i];
          if (!replica.is_map()) in.fail(replica, item, "expected a map");
          const Node& set_name = in.need(replica, "name", item + ".name", Node::Kind::scalar);
          out.pod_sets.push_back(pod_set(in, set_name.text, replicas(in, replica, item), replica, item));
        }
      } else if (k == "RayCluster" && group_is(v, "ray.io")) {
        ray_pod_sets(in, in.need(object, "spec", "spec", Node::Kind::map), "spec", out.pod_sets);
      } else if (k == "RayJob" && group_is(v, "ray.io")) {
        const Node& spec = in.need(object, "spec", "spec", Node::Kind::map);
        ray_pod_sets(in, in.need(spec, "rayClusterSpec", "spec.rayClusterSpec", Node::Kind::map), "spec.rayClusterSpec",
                     out.pod_sets);
      } else {
        in.fail(kind, "kind", fmt::format("`{}` (`{}`) is not a workload gov reads; it reads {}", k, v, kKinds));
      }
    }
    if (out.queue_name.empty()) {
      in.fail(metadata, workload ? "spec.queueName" : "metadata.labels",
              workload ? "missing: the Workload names no LocalQueue"
                       : "no `kueue.x-k8s.io/queue-name` label: Kueue does not manage the object, and gov cannot tell its team");
    }
    if (out.pod_sets.empty()) in.fail(object, "spec", "no pod sets");
    if (out.pod_sets.size() > kMaxPodSets) {
      in.fail(object, "spec", fmt::format("more than {} pod sets; Kueue allows at most {}", kMaxPodSets, kMaxPodSets));
    }
    for (size_t i = 0; i < out.pod_sets.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (out.pod_sets[i].name == out.pod_sets[j].name) in.fail(object, "spec", fmt::format("two pod sets named `{}`", out.pod_sets[i].name));
      }
    }
    return out;
  } catch (const Failure& failure) {
    return failure.error;
  }
}

support::Expected<std::vector<Workload>> read_workloads(std::string_view text, const YamlLimits& limits) {
  support::Expected<std::vector<Node>> documents = load_yaml(text, limits);
  if (!documents) return documents.error();
  support::Expected<std::vector<Node>> objects = kubernetes_objects(std::move(documents).value());
  if (!objects) return objects.error();
  std::vector<Workload> out;
  for (const Node& object : objects.value()) {
    support::Expected<Workload> workload = read_workload(object);
    if (!workload) return workload.error();
    out.push_back(std::move(workload).value());
  }
  return out;
}

support::Expected<std::string> team_of_queue(std::string_view queue_name, const QueueNaming& naming) {
  const auto is_team = [&](std::string_view team) {
    return std::find(naming.teams.begin(), naming.teams.end(), team) != naming.teams.end();
  };
  std::optional<std::string> team = model::hyperpod_queue_team(queue_name);
  if (!team) {
    for (const auto& [queue, owner] : naming.queues) {
      if (queue == queue_name) team = owner;
    }
  }
  if (!team && is_team(queue_name)) team = std::string(queue_name);
  if (team && is_team(*team)) return *team;
  if (naming.teams.empty()) {
    return support::Error{support::ErrorKind::invalid,
                          fmt::format("queue `{}` maps to no team: the policy has no teams", queue_name)};
  }
  if (team) {  // HyperPod's naming, of a team the policy does not have
    return support::Error{support::ErrorKind::invalid,
                          fmt::format("queue `{}` is HyperPod's queue of team `{}`, which the policy does not have; {}",
                                      queue_name, *team,
                                      did_you_mean(*team, naming.teams).value_or(names_help("teams", naming.teams)))};
  }
  // Every name that maps to a team: HyperPod's, the declared ones, the teams' own.
  std::vector<std::string> known;
  for (const std::string& t : naming.teams) known.push_back(fmt::format("hyperpod-ns-{}-localqueue", t));
  for (const auto& [queue, owner] : naming.queues) known.push_back(queue);
  for (const std::string& t : naming.teams) known.push_back(t);
  std::string message = fmt::format("queue `{}` maps to no team of the policy", queue_name);
  message += fmt::format("; {}", did_you_mean(queue_name, known).value_or(names_help("known queues", known)));
  message += naming.queues.empty() ? " (a team's `queues = [...]` maps queues named otherwise)"
                                   : " (HyperPod's names, the teams' `queues`, and the teams' own names)";
  return support::Error{support::ErrorKind::invalid, std::move(message)};
}

std::optional<std::string> class_of_label(std::string_view value, const std::vector<std::string>& classes) {
  if (std::find(classes.begin(), classes.end(), value) != classes.end()) return std::string(value);
  constexpr std::string_view kSuffix = "-priority";
  if (value.size() > kSuffix.size() && value.substr(value.size() - kSuffix.size()) == kSuffix) {
    const std::string_view stem = value.substr(0, value.size() - kSuffix.size());
    if (std::find(classes.begin(), classes.end(), stem) != classes.end()) return std::string(stem);
  }
  return std::nullopt;
}

std::string task_json(const Workload& workload, const PodSet& pod_set, std::string_view team,
                      const std::optional<std::string>& priority) {
  JsonWriter out(/*indented=*/false);
  out.begin_object();
  out.field("id", workload.name);
  out.field("team", team);
  if (priority) out.field("priority", *priority);
  if (pod_set.instance_type) out.field("instance_type", *pod_set.instance_type);
  out.field("pods", pod_set.count);
  out.key("per_pod");
  out.begin_object();
  for (model::Resource r : model::kAllResources) {
    const int64_t amount = pod_set.per_pod[model::index(r)];
    if (amount == 0) continue;
    switch (r) {
      case model::Resource::gpu: out.field("gpus", amount); break;
      case model::Resource::neuron: out.field("neuron", amount); break;
      case model::Resource::efa: out.field("efa", amount); break;
      case model::Resource::vcpu:
        out.key("vcpus");
        out.decimal(model::format_decimal(amount, model::kMillicoresPerVcpu));
        break;
      case model::Resource::memory:
        out.key("memory_gib");
        out.decimal(model::format_decimal(amount, model::kMebibytesPerGibibyte));
        break;
    }
  }
  out.end_object();
  out.end_object();
  return out.finish();
}

}  // namespace gov::kube
