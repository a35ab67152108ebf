// `gov import kueue`: Kueue's objects (ClusterQueues, Cohorts, ResourceFlavors, LocalQueues,
// WorkloadPriorityClasses; v1beta1 or v1beta2; `kubectl get -o yaml` Lists) as a `.gov` policy.
// Read through gov::kube's YAML loader; every field gov reads is checked; what gov cannot
// represent is an error naming the file, the line, the object and the field, never dropped.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "compiler/bridge/bridge.hpp"
#include "compiler/model/hyperpod_names.hpp"
#include "compiler/check/surface.hpp"
#include "compiler/kube/quantity.hpp"
#include "compiler/kube/yaml.hpp"
#include "compiler/model/arithmetic.hpp"
#include "compiler/model/partitions.hpp"
#include "compiler/model/quantities.hpp"

namespace gov::bridge {

namespace {

using kube::Node;

/// An import error: thrown inside this file only, caught by import_kueue.
struct Failure {
  std::string message;
};

/// The object being read, for messages: "`queues.yaml`:12:7: ClusterQueue `a`: `spec.cohort`: why".
struct At {
  std::string file;
  std::string object;
  [[noreturn]] void fail(const Node& node, std::string_view field, std::string_view why) const {
    throw Failure{fmt::format("{}:{}:{}: {}: `{}`: {}", file, node.at.line, node.at.column, object, field, why)};
  }
  const Node& need(const Node& map, std::string_view key, const std::string& field, Node::Kind kind) const {
    const Node* value = map.find(key);
    if (!value || value->is_null()) fail(map, field, "missing");
    check_kind(*value, field, kind);
    return *value;
  }
  const Node* optional(const Node& map, std::string_view key, const std::string& field, Node::Kind kind) const {
    const Node* value = map.find(key);
    if (!value || value->is_null()) return nullptr;
    check_kind(*value, field, kind);
    return value;
  }
  void check_kind(const Node& value, const std::string& field, Node::Kind kind) const {
    if (value.kind == kind) return;
    const std::string_view expected = kind == Node::Kind::map ? "a map" : kind == Node::Kind::sequence ? "a list" : "a scalar";
    fail(value, field, fmt::format("expected {}, found {}", expected, kube::kind_name(value)));
  }
  /// Members of `map` other than `known` are an error: gov would otherwise drop them.
  void only(const Node& map, const std::string& path, std::initializer_list<std::string_view> known) const {
    for (const Node& key : map.keys) {
      if (std::find(known.begin(), known.end(), key.text) == known.end()) {
        fail(key, path.empty() ? key.text : path + "." + key.text, "gov cannot represent it");
      }
    }
  }
  template <typename Enum>
  Enum choice(const Node& value, const std::string& field, std::initializer_list<std::pair<std::string_view, Enum>> words) const {
    for (const auto& [word, e] : words) {
      if (value.text == word) return e;
    }
    std::vector<std::string> expected;
    for (const auto& [word, e] : words) expected.push_back(fmt::format("`{}`", word));
    fail(value, field, fmt::format("`{}` is not one of {}", value.text, fmt::join(expected, ", ")));
  }
  int64_t integer(const Node& value, const std::string& field, int64_t low, int64_t high) const {
    const std::optional<kube::Quantity> q = value.is_scalar() ? kube::parse_quantity(value.text) : std::nullopt;
    const kube::Converted n = q ? kube::scaled(*q, 0, 0) : kube::Converted{kube::Conversion::not_whole, 0};
    if (n.status != kube::Conversion::ok || n.value < low || n.value > high) {
      fail(value, field, fmt::format("`{}` is not a whole number in {}..{}", value.text, low, high));
    }
    return n.value;
  }
  /// A gov name (`team-a`; bridge::name_problem).
  std::string name(const Node& value, std::string_view text, const std::string& field) const {
    if (const std::optional<std::string> problem = name_problem(text)) fail(value, field, fmt::format("`{}` {}", text, *problem));
    return std::string(text);
  }
};

constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";

bool has_prefix(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool has_suffix(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// `text` without HyperPod's `prefix` and `suffix` when it has both, else nullopt.
std::optional<std::string> strip(std::string_view text, std::string_view prefix, std::string_view suffix) {
  if (text.size() <= prefix.size() + suffix.size() || !has_prefix(text, prefix) || !has_suffix(text, suffix)) return std::nullopt;
  return std::string(text.substr(prefix.size(), text.size() - prefix.size() - suffix.size()));
}

const Node* annotation(const Node& object, std::string_view key) {
  const Node* metadata = object.find("metadata");
  const Node* annotations = metadata ? metadata->find("annotations") : nullptr;
  const Node* value = annotations ? annotations->find(key) : nullptr;
  return value && value->is_scalar() ? value : nullptr;
}

/// What the API server refuses in a resource group (Kueue's webhook, validateResourceGroups and
/// validateFlavorQuotas, and the CRD's rule "flavors must have the same number of resources as the
/// coveredResources"): a resource covered twice, in one group or in two (`seen` holds those of the
/// groups before), and a flavor whose resources are not the covered ones in their order. Read
/// otherwise, a resource named twice in a flavor would have its last quota win, and one left out
/// would be imported as a quota of 0.
void check_covered(const At& at, const Node& covered, const std::string& path, std::set<std::string>& seen) {
  for (size_t i = 0; i < covered.items.size(); ++i) {
    const Node& r = covered.items[i];
    if (r.is_scalar() && !seen.insert(r.text).second) {
      at.fail(r, fmt::format("{}.coveredResources[{}]", path, i),
              fmt::format("`{}` is covered twice: a resource belongs to one resource group, once", r.text));
    }
  }
}
void check_flavor_resources(const At& at, const Node& covered, const Node& resources, const std::string& fpath) {
  for (size_t i = 0; i < resources.items.size() && i < covered.items.size(); ++i) {
    const Node* name = resources.items[i].find("name");
    if (name == nullptr || !name->is_scalar() || name->text == covered.items[i].text) continue;
    at.fail(*name, fmt::format("{}.resources[{}].name", fpath, i),
            fmt::format("`{}` where coveredResources[{}] is `{}`: a flavor lists the covered resources, in their order",
                        name->text, i, covered.items[i].text));
  }
  if (resources.items.size() != covered.items.size()) {
    at.fail(resources, fpath + ".resources",
            fmt::format("{} resource{} where coveredResources lists {}: a flavor lists every covered resource, once",
                        resources.items.size(), resources.items.size() == 1 ? "" : "s", covered.items.size()));
  }
}

/// One object of the input, with the file it came from.
struct Object {
  const Node* node = nullptr;
  At at;
  std::string name;  // metadata.name
};

struct Cell {
  model::Amount nominal = 0;
  model::Amount borrowing = 0;  // model::kUnlimited: borrowingLimit left out
  bool present = false;          // the flavor lists the resource
  std::optional<model::Amount> lending;
};

struct QuotaIn {
  const check::InstanceType* type = nullptr;
  std::array<Cell, model::kResourceCount> cells{};
  std::vector<std::pair<std::string, Cell>> partitions;  // `nvidia.com/mig-<profile>`, in input order
  /// With several resource groups: the resources its group covers (only they are written).
  std::optional<std::array<bool, model::kResourceCount>> covered;
};

/// The MIG profile a resource name stands for (`nvidia.com/mig-1g.10gb` → `mig-1g.10gb`).
std::optional<std::string> partition_named(std::string_view name) {
  constexpr std::string_view kPrefix = "nvidia.com/";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const std::string profile(name.substr(kPrefix.size()));
  if (!model::parse_mig_profile(profile)) return std::nullopt;
  return profile;
}

std::optional<model::Resource> resource_named(std::string_view name) {
  for (model::Resource r : model::kAllResources) {
    if (model::kubernetes_name(r) == name) return r;
  }
  return std::nullopt;
}

std::string_view amount_word(model::Resource r) {
  switch (r) {
    case model::Resource::gpu: return "gpus";
    case model::Resource::neuron: return "neuron";
    case model::Resource::vcpu: return "vcpus";
    case model::Resource::memory: return "memory";
    case model::Resource::efa: return "efa";
  }
  return "gpus";
}

std::string amount_text(model::Resource r, model::Amount a) { return fmt::format("{} = {}", amount_word(r), model::format_amount(r, a)); }

model::Amount quantity(const At& at, const Node& value, const std::string& field, model::Resource r) {
  if (!value.is_scalar()) at.fail(value, field, fmt::format("expected a quantity, found {}", kube::kind_name(value)));
  const std::optional<kube::Quantity> q = kube::parse_quantity(value.text);
  if (!q) at.fail(value, field, fmt::format("`{}` is not a Kubernetes quantity", value.text));
  const kube::Converted c = kube::to_base_units(*q, r);
  if (c.status != kube::Conversion::ok) at.fail(value, field, fmt::format("`{}` {}", value.text, kube::conversion_problem(c.status, r)));
  return c.value;
}

/// Kueue's fairSharing.weight (a Quantity: `1`, `0.5`, `500m`) in millionths, exactly: a weight
/// below a millionth's precision, negative or above the language's bound has no gov form.
int64_t fair_share_weight(const At& at, const Node& value) {
  const std::string field = "spec.fairSharing.weight";
  const std::optional<kube::Quantity> q = kube::parse_quantity(value.text);
  if (!q) at.fail(value, field, fmt::format("`{}` is not a Kubernetes quantity", value.text));
  const kube::Converted c = kube::scaled(*q, 6, 0);
  if (c.status == kube::Conversion::not_whole) {
    at.fail(value, field, fmt::format("`{}` has more than 6 decimals, which gov's weights do not keep", value.text));
  }
  if (c.status != kube::Conversion::ok || c.value < 0 || c.value > model::kMaxFairShareWeight * model::kWeightScale) {
    at.fail(value, field, fmt::format("`{}` is not a weight from 0 to {}", value.text, model::kMaxFairShareWeight));
  }
  return c.value;
}

/// The borrow-limit percentage that reproduces the most borrowing limits (floor(nominal × p /
/// 100), as the checker resolves them), 50 (the default) among equals, else the smallest. Each
/// cell allows an interval of percentages; a sweep over their ends finds the best in
/// O(cells log cells), whatever the input.
int32_t infer_percent(const std::vector<QuotaIn>& quotas) {
  constexpr int64_t kMax = 10000;
  std::vector<std::pair<int64_t, int>> ends;  // (percentage, +1 opens an interval, -1 closes one after it)
  size_t at_default = 0;
  for (const QuotaIn& q : quotas) {
    for (const Cell& c : q.cells) {
      if (c.nominal <= 0 || c.borrowing < 0) continue;
      // floor(n p / 100) == b  ⇔  100 b ≤ n p < 100 (b + 1)  ⇔  ceil(100 b / n) ≤ p ≤ ceil(100 (b + 1) / n) − 1
      const model::Int128 n = c.nominal, b = c.borrowing;
      const model::Int128 low = (100 * b + n - 1) / n;
      const model::Int128 high = (100 * (b + 1) + n - 1) / n - 1;
      if (low > kMax || high < low) continue;
      ends.emplace_back(static_cast<int64_t>(low), +1);
      ends.emplace_back(static_cast<int64_t>(std::min<model::Int128>(high, kMax)) + 1, -1);
      at_default += low <= 50 && 50 <= high;
    }
  }
  std::sort(ends.begin(), ends.end());
  int32_t best = 50;
  int64_t best_count = static_cast<int64_t>(at_default), open = 0;
  for (size_t i = 0; i < ends.size();) {
    const int64_t p = ends[i].first;
    for (; i < ends.size() && ends[i].first == p; ++i) open += ends[i].second;  // every change at p first
    if (p <= kMax && open > best_count) {
      best = static_cast<int32_t>(p);
      best_count = open;
    }
  }
  return best;
}

class Importer {
 public:
  Importer(const check::Catalog& catalog, const ImportOptions& options) : catalog_(catalog), options_(options) {}

  void add(const ImportInput& input) {
    support::Expected<std::vector<Node>> loaded = kube::load_yaml(input.text, options_.yaml);
    if (!loaded) throw Failure{fmt::format("{}: {}", input.name, loaded.error().message)};
    support::Expected<std::vector<Node>> objects = kube::kubernetes_objects(std::move(loaded).value());
    if (!objects) throw Failure{fmt::format("{}: {}", input.name, objects.error().message)};
    documents_.push_back(std::move(objects).value());
    for (const Node& node : documents_.back()) classify(input.name, node);
  }

  std::string policy() {
    // Nothing to import is a mistake (an empty file, a failed export's output), not an empty
    // policy that then checks.
    if (flavors_.empty() && cohorts_.empty() && queues_.empty() && locals_.empty() && classes_.empty()) {
      throw Failure{"the input holds no Kueue object (ClusterQueue, Cohort, ResourceFlavor, LocalQueue or "
                    "WorkloadPriorityClass): nothing to import"};
    }
    for (const Object& o : flavors_) read_flavor(o);
    hyperpod_naming_ = std::any_of(queues_.begin(), queues_.end(),
                                   [](const Object& q) { return strip(q.name, "hyperpod-ns-", "-clusterqueue").has_value(); });
    for (const Object& o : classes_) read_class(o);
    for (const Object& o : locals_) read_local_queue(o);
    // A tree of cohorts: a Cohort with a parent, several Cohorts, or ClusterQueues in different
    // cohorts (docs/language.md); otherwise the one flat cohort.
    std::set<std::string> queue_cohorts;
    for (const Object& q : queues_) {
      if (const Node* spec = q.node->find("spec"); spec && spec->kind == Node::Kind::map) {
        const Node* c = spec->find("cohortName");
        if (!c) c = spec->find("cohort");
        if (c && c->is_scalar()) queue_cohorts.insert(c->text);
      }
    }
    tree_ = cohorts_.size() > 1 || queue_cohorts.size() > 1 || std::any_of(cohorts_.begin(), cohorts_.end(), [](const Object& c) {
              const Node* spec = c.node->find("spec");
              return spec && spec->kind == Node::Kind::map && spec->find("parentName") != nullptr;
            });
    fair_share_ = idle_compute_is_fair_share();
    std::string out = header() + settings();
    if (tree_) {
      tree_blocks(out);
    } else if (!cohorts_.empty()) {
      append(out, cohort_block(), cohorts_.front());
    }
    for (const Object& o : queues_) append(out, "\n" + read_cluster_queue(o), o);
    return out;
  }

  /// ImportOrigins of the text policy() returned.
  std::vector<ImportOrigin> origins() const { return origins_; }

 private:
  void classify(const std::string& file, const Node& node) {
    At at{file, "object"};
    const Node& kind = at.need(node, "kind", "kind", Node::Kind::scalar);
    const Node& api = at.need(node, "apiVersion", "apiVersion", Node::Kind::scalar);
    const Node& metadata = at.need(node, "metadata", "metadata", Node::Kind::map);
    const Node& name = at.need(metadata, "name", "metadata.name", Node::Kind::scalar);
    at.object = fmt::format("{} `{}`", kind.text, name.text);
    at.only(node, "", {"apiVersion", "kind", "metadata", "spec", "status", "value", "description"});
    Object object{&node, at, name.text};
    if (kind.text == "Namespace" && api.text == "v1") return;  // HyperPod's namespaces follow from the teams
    std::vector<Object>* into = nullptr;
    if (kind.text == "ResourceFlavor") into = &flavors_;
    if (kind.text == "Cohort") into = &cohorts_;
    if (kind.text == "ClusterQueue") into = &queues_;
    if (kind.text == "LocalQueue") into = &locals_;
    if (kind.text == "WorkloadPriorityClass") into = &classes_;
    if (!into) {
      at.fail(kind, "kind", fmt::format("`{}` is not a Kueue object gov imports (ClusterQueue, Cohort, ResourceFlavor, "
                                        "LocalQueue, WorkloadPriorityClass, and Namespaces, which are skipped)",
                                        kind.text));
    }
    if (api.text != "kueue.x-k8s.io/v1beta1" && api.text != "kueue.x-k8s.io/v1beta2") {
      at.fail(api, "apiVersion", fmt::format("`{}` is not `kueue.x-k8s.io/v1beta1` or `kueue.x-k8s.io/v1beta2`", api.text));
    }
    if (kind.text != "WorkloadPriorityClass") at.only(node, "", {"apiVersion", "kind", "metadata", "spec", "status"});
    into->push_back(std::move(object));
  }

  const check::InstanceType* type_named(std::string_view name) const {
    for (const check::InstanceType& t : catalog_.types) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  void read_flavor(const Object& o) {
    const Node& node = *o.node;
    const Node& spec = o.at.need(node, "spec", "spec", Node::Kind::map);
    o.at.only(spec, "spec", {"nodeLabels"});
    const Node& labels = o.at.need(spec, "nodeLabels", "spec.nodeLabels", Node::Kind::map);
    o.at.only(labels, "spec.nodeLabels", {kInstanceTypeLabel});
    const Node& type_node = o.at.need(labels, kInstanceTypeLabel, fmt::format("spec.nodeLabels.{}", kInstanceTypeLabel), Node::Kind::scalar);
    const check::InstanceType* type = type_named(type_node.text);
    if (!type) o.at.fail(type_node, fmt::format("spec.nodeLabels.{}", kInstanceTypeLabel), fmt::format("`{}` is not in the catalog", type_node.text));
    flavor_types_[o.name] = type;
    if (const Node* capacity = annotation(node, "gov/capacity")) {
      capacity_[type->name] = o.at.integer(*capacity, "metadata.annotations.gov/capacity", 0, 10'000'000);
    }
  }

  void read_class(const Object& o) {
    const int64_t value = o.at.integer(o.at.need(*o.node, "value", "value", Node::Kind::scalar), "value", 0, 100);
    std::string name = o.name;
    if (hyperpod_naming_) {
      if (std::optional<std::string> stem = strip(name, "", "-priority")) name = *stem;
    }
    const Node& name_node = *o.node->find("metadata")->find("name");
    classes_out_.emplace_back(o.at.name(name_node, name, "metadata.name"), value);
  }

  struct TeamHints {
    std::optional<model::Sharing> sharing;
    std::optional<int32_t> borrow_limit;
    bool borrow_limit_unlimited = false;  // `gov/borrow-limit: unlimited`
    std::vector<std::pair<std::string, std::string>> local_queues;  // (namespace, name) naming the queue
  };

  void read_local_queue(const Object& o) {
    const Node& spec = o.at.need(*o.node, "spec", "spec", Node::Kind::map);
    o.at.only(spec, "spec", {"clusterQueue", "stopPolicy"});
    // `None` is the default, and HyperPod writes it (seed 004); a held LocalQueue stops one
    // namespace's queue, which gov's teams cannot say (a held ClusterQueue is `active = false`).
    if (const Node* stop = o.at.optional(spec, "stopPolicy", "spec.stopPolicy", Node::Kind::scalar)) {
      if (!o.at.choice<bool>(*stop, "spec.stopPolicy", {{"None", true}, {"Hold", false}, {"HoldAndDrain", false}})) {
        o.at.fail(*stop, "spec.stopPolicy",
                  fmt::format("`{}` holds this LocalQueue alone, which gov cannot represent (hold the ClusterQueue: a "
                              "team's `active = false`)",
                              stop->text));
      }
    }
    const Node& queue = o.at.need(spec, "clusterQueue", "spec.clusterQueue", Node::Kind::scalar);
    // HyperPod's queue names map to their team in gov (E0231), so one that points at another
    // team's ClusterQueue cannot be said; read as it was, jobs in that queue were charged to the
    // wrong team (a hostile-input trial's finding).
    const std::optional<std::string> named_team = model::hyperpod_queue_team(o.name);
    const std::string queue_team = strip(queue.text, "hyperpod-ns-", "-clusterqueue").value_or(queue.text);
    if (named_team && *named_team != queue_team) {
      o.at.fail(queue, "spec.clusterQueue",
                fmt::format("`{}`: HyperPod's LocalQueue of team `{}` points at team `{}`'s ClusterQueue; gov maps HyperPod's "
                            "queue names to their own team and cannot represent it (point it at `hyperpod-ns-{}-clusterqueue`, "
                            "or give the LocalQueue another name)",
                            queue.text, *named_team, queue_team, *named_team));
    }
    TeamHints& hints = hints_[queue.text];
    const Node* space = o.node->find("metadata")->find("namespace");
    hints.local_queues.emplace_back(space && space->kind == Node::Kind::scalar ? space->text : std::string("default"), o.name);
    if (const Node* sharing = annotation(*o.node, "gov/sharing")) {
      hints.sharing = o.at.choice<model::Sharing>(*sharing, "metadata.annotations.gov/sharing",
                                                  {{"lend-and-borrow", model::Sharing::lend_and_borrow},
                                                   {"lend", model::Sharing::lend},
                                                   {"dont-lend", model::Sharing::dont_lend}});
    }
    if (const Node* limit = annotation(*o.node, "gov/borrow-limit")) {
      Node number = *limit;
      if (number.text == "unlimited") {
        hints.borrow_limit_unlimited = true;
        return;
      }
      if (has_suffix(number.text, "%")) number.text.pop_back();
      hints.borrow_limit = static_cast<int32_t>(o.at.integer(number, "metadata.annotations.gov/borrow-limit", 0, 10000));
    }
  }

  const check::InstanceType* flavor_type(const At& at, const Node& name, const std::string& field) const {
    if (auto it = flavor_types_.find(name.text); it != flavor_types_.end()) return it->second;
    if (const check::InstanceType* type = type_named(name.text)) return type;  // a flavor named after its type
    at.fail(name, field, fmt::format("no ResourceFlavor `{}` in the input, and it is not an instance type of the catalog", name.text));
  }

  std::string read_cluster_queue(const Object& o) {
    const At& at = o.at;
    const Node& node = *o.node;
    const Node& name_node = *node.find("metadata")->find("name");
    std::optional<std::string> stem = strip(o.name, "hyperpod-ns-", "-clusterqueue");
    const std::string team = at.name(name_node, stem ? *stem : o.name, "metadata.name");
    const Node& spec = at.need(node, "spec", "spec", Node::Kind::map);
    at.only(spec, "spec", {"cohort", "cohortName", "fairSharing", "flavorFungibility", "namespaceSelector", "preemption",
                           "queueingStrategy", "resourceGroups", "stopPolicy"});
    // Every team is in the one cohort.
    const Node* cohort = at.optional(spec, "cohortName", "spec.cohortName", Node::Kind::scalar);
    if (!cohort) cohort = at.optional(spec, "cohort", "spec.cohort", Node::Kind::scalar);
    if (!cohort) at.fail(spec, "spec.cohort", "missing: gov puts every team in one cohort");
    std::string cohort_line;
    if (tree_) {
      cohort_line = fmt::format("  cohort = {}\n", at.name(*cohort, cohort->text, "spec.cohort"));
      referenced_.push_back(cohort->text);
    } else if (cohort_.empty()) {
      cohort_ = cohort->text;
    }
    if (!tree_ && cohort->text != cohort_) {
      at.fail(*cohort, "spec.cohort", fmt::format("`{}`, where another ClusterQueue is in `{}`: gov has one cohort", cohort->text, cohort_));
    }

    std::string out;
    // The quotas: one resource group covering gov's resources.
    std::vector<QuotaIn> quotas;
    // Several resource groups become `resource-groups` (docs/language.md "Resource groups"): each
    // group's charged resources and flavors, named after its resources.
    struct GroupIn {
      std::vector<model::Resource> covers;
      std::vector<std::string> flavors;
    };
    std::vector<GroupIn> groups_in;
    if (const Node* groups = at.optional(spec, "resourceGroups", "spec.resourceGroups", Node::Kind::sequence)) {
      const bool several = groups->items.size() > 1;
      std::set<std::string> covered_before;
      for (size_t g = 0; g < groups->items.size(); ++g) {
        const Node& group = groups->items[g];
        const std::string path = fmt::format("spec.resourceGroups[{}]", g);
        at.check_kind(group, path, Node::Kind::map);
        at.only(group, path, {"coveredResources", "flavors"});
        const Node& covered = at.need(group, "coveredResources", path + ".coveredResources", Node::Kind::sequence);
        check_covered(at, covered, path, covered_before);
        GroupIn& group_in = groups_in.emplace_back();
        std::array<bool, model::kResourceCount> covered_cells{};
        for (const Node& r : covered.items) {
          if (!r.is_scalar() || (!resource_named(r.text) && !partition_named(r.text))) {
            at.fail(r, path + ".coveredResources", fmt::format("`{}` is not a resource gov knows", r.text));
          }
          const std::optional<model::Resource> resource = resource_named(r.text);
          if (!resource) continue;  // a partition: it goes with gpus
          covered_cells[model::index(*resource)] = true;
          if (*resource == model::Resource::efa) {
            if (several) at.fail(r, path + ".coveredResources", "`vpc.amazonaws.com/efa` in one of several resource groups: gov never charges EFA");
            continue;
          }
          group_in.covers.push_back(*resource);
        }
        if (several && group_in.covers.empty()) {
          at.fail(covered, path + ".coveredResources", "a resource group of partitions alone: gov's partitions go with `nvidia.com/gpu`");
        }
        const Node& flavors = at.need(group, "flavors", path + ".flavors", Node::Kind::sequence);
        for (size_t f = 0; f < flavors.items.size(); ++f) {
          const std::string fpath = fmt::format("{}.flavors[{}]", path, f);
          const Node& flavor = flavors.items[f];
          at.check_kind(flavor, fpath, Node::Kind::map);
          at.only(flavor, fpath, {"name", "resources"});
          QuotaIn quota;
          quota.type = flavor_type(at, at.need(flavor, "name", fpath + ".name", Node::Kind::scalar), fpath + ".name");
          if (several) quota.covered = covered_cells;
          group_in.flavors.push_back(quota.type->name);
          for (const QuotaIn& earlier : quotas) {
            if (earlier.type == quota.type) at.fail(flavor, fpath + ".name", fmt::format("a second quota for `{}`", quota.type->name));
          }
          const Node& resources = at.need(flavor, "resources", fpath + ".resources", Node::Kind::sequence);
          check_flavor_resources(at, covered, resources, fpath);
          for (size_t i = 0; i < resources.items.size(); ++i) {
            const std::string rpath = fmt::format("{}.resources[{}]", fpath, i);
            const Node& entry = resources.items[i];
            at.check_kind(entry, rpath, Node::Kind::map);
            at.only(entry, rpath, {"name", "nominalQuota", "borrowingLimit", "lendingLimit"});
            const Node& rname = at.need(entry, "name", rpath + ".name", Node::Kind::scalar);
            const std::optional<std::string> profile = partition_named(rname.text);
            std::optional<model::Resource> r = resource_named(rname.text);
            if (!r && !profile) at.fail(rname, rpath + ".name", fmt::format("`{}` is not a resource gov knows", rname.text));
            // A partition is counted in whole partitions, as devices are.
            if (profile) r = model::Resource::gpu;
            Cell& cell = profile ? quota.partitions.emplace_back(*profile, Cell{}).second : quota.cells[model::index(*r)];
            cell.present = true;
            cell.nominal = quantity(at, at.need(entry, "nominalQuota", rpath + ".nominalQuota", Node::Kind::scalar), rpath + ".nominalQuota", *r);
            // No borrowingLimit is Kueue's unlimited borrowing (`borrow-limit = unlimited`).
            const Node* borrowing = entry.find("borrowingLimit");
            cell.borrowing = !borrowing || borrowing->is_null() ? model::kUnlimited
                                                                 : quantity(at, *borrowing, rpath + ".borrowingLimit", *r);
            if (const Node* lending = entry.find("lendingLimit"); lending && !lending->is_null()) {
              cell.lending = quantity(at, *lending, rpath + ".lendingLimit", *r);
              // Kueue's webhook refuses it too; said here, at the field, rather than by the
              // checker about a policy the user never saw (E0309 in `<imported>`).
              if (cell.lending > cell.nominal) {
                at.fail(*lending, rpath + ".lendingLimit",
                        fmt::format("`{}` is more than the nominal quota `{}`: a ClusterQueue lends at most its nominal "
                                    "quota",
                                    lending->text, entry.find("nominalQuota")->text));
              }
            }
          }
          quotas.push_back(quota);
        }
      }
    }

    // sharing and borrow-limit: the LocalQueue's annotations (gov export writes them), else what
    // the limits show.
    const TeamHints hints = hints_.count(o.name) ? hints_.at(o.name) : TeamHints{};
    bool all_lending_zero = !quotas.empty(), all_borrowing_zero = !quotas.empty(), any_lending = false;
    // Partitions count as the five resources do: a team that borrows only MIG slices borrows (a
    // migration helper's notebook pool was read as one that only lends, and refused).
    const auto infer_from = [&](const Cell& c) {
      all_lending_zero = all_lending_zero && c.lending && *c.lending == 0;
      all_borrowing_zero = all_borrowing_zero && c.borrowing == 0;
      any_lending = any_lending || c.lending;
    };
    for (const QuotaIn& q : quotas) {
      for (const Cell& c : q.cells) infer_from(c);
      for (const auto& [profile, c] : q.partitions) infer_from(c);
    }
    model::Sharing sharing = hints.sharing ? *hints.sharing
                             : all_lending_zero ? model::Sharing::dont_lend
                             : all_borrowing_zero && !any_lending ? model::Sharing::lend
                                                                  : model::Sharing::lend_and_borrow;
    // Unlimited borrowing: the whole team's when every cell has no limit (or the annotation says
    // so), else a quota's when all of its cells have none, else a resource's
    // (`borrow-limit = { vcpus = unlimited }`).
    // A resource the flavor does not list cannot be borrowed in Kueue: under a team's
    // `unlimited` it gets an absolute limit of 0, and a quota's `unlimited` needs every resource.
    const auto all_unlimited = [](const QuotaIn& q, bool listed_only) {
      bool all = true;
      for (const Cell& c : q.cells) all = all && ((listed_only && !c.present) || c.borrowing == model::kUnlimited);
      for (const auto& [profile, c] : q.partitions) all = all && (c.nominal == 0 || c.borrowing == model::kUnlimited);
      return all;
    };
    const bool team_unlimited =
        sharing != model::Sharing::lend &&
        (hints.borrow_limit_unlimited ||
         (!hints.borrow_limit && !quotas.empty() &&
          std::all_of(quotas.begin(), quotas.end(), [&](const QuotaIn& q) { return all_unlimited(q, true); })));
    const int32_t percent = hints.borrow_limit ? *hints.borrow_limit : infer_percent(quotas);
    // Whether a cell's borrowing limit needs an absolute limit under the team's borrow limit. A
    // resource without a borrowingLimit beside limited ones is `borrow-limit = { gpus = unlimited }`
    // (the common "cap only the GPUs"); a partition has no such form.
    const auto needs_absolute = [&](const Cell& c, const std::string& what, bool partition) {
      if (team_unlimited) return c.borrowing != model::kUnlimited;
      if (c.borrowing == model::kUnlimited && partition) {
        at.fail(node, "spec.resourceGroups",
                fmt::format("{} has no borrowingLimit beside resources that have one: gov writes unlimited borrowing of "
                            "GPU partitions for a whole team or a whole quota (`borrow-limit = unlimited`)",
                            what));
      }
      return c.borrowing == model::kUnlimited || static_cast<model::Int128>(c.nominal) * percent / 100 != c.borrowing;
    };
    for (const QuotaIn& q : quotas) {
      std::vector<std::string> amounts, absolute, lending;
      const bool quota_unlimited = !team_unlimited && sharing != model::Sharing::lend && all_unlimited(q, false);
      for (model::Resource r : model::kAllResources) {
        const Cell& c = q.cells[model::index(r)];
        if (q.covered && !(*q.covered)[model::index(r)]) continue;  // not its group's
        // Written when not zero, and always for resources the type has, so nothing is derived.
        if (c.nominal != 0 || q.type->per_instance[model::index(r)] > 0) amounts.push_back(amount_text(r, c.nominal));
        if (sharing == model::Sharing::lend) {
          if (c.borrowing != 0) {
            at.fail(node, "spec.resourceGroups", fmt::format("`{}` borrows {} of `{}`, but the team only lends", q.type->name,
                                                             model::format_amount(r, c.borrowing), model::kubernetes_name(r)));
          }
        } else if (!team_unlimited && c.borrowing == model::kUnlimited && c.nominal == 0 &&
                   q.type->per_instance[model::index(r)] == 0) {
          // No limit on a resource the type does not have (neurons of a GPU instance): no team has
          // it to lend, so `neuron = unlimited` would say nothing.
        } else if (!quota_unlimited &&
                   needs_absolute(c, fmt::format("`{}` of `{}`", model::kubernetes_name(r), q.type->name), false)) {
          absolute.push_back(c.borrowing == model::kUnlimited ? fmt::format("{} = unlimited", amount_word(r))
                                                               : amount_text(r, c.borrowing));
        }
        if (sharing == model::Sharing::dont_lend) {
          if (!c.lending || *c.lending != 0) {
            at.fail(node, "spec.resourceGroups", fmt::format("`{}` lends `{}` while the team lends nothing", q.type->name, model::kubernetes_name(r)));
          }
        } else if (c.lending) {
          lending.push_back(amount_text(r, *c.lending));
        }
      }
      // Partitions: the profiles the quota gives (Kueue lists every profile of the team, 0 where
      // this instance type has none), their limits where the percentage does not give them.
      std::vector<std::string> given, absolute_partitions, lent_partitions;
      for (const auto& [profile, c] : q.partitions) {
        if (c.nominal == 0) {
          if (c.borrowing != 0 || (c.lending && *c.lending != 0)) {
            at.fail(node, "spec.resourceGroups", fmt::format("`{}` gives no `nvidia.com/{}` but lets the team borrow or lend it",
                                                             q.type->name, profile));
          }
          continue;
        }
        given.push_back(fmt::format("{}: {}", profile, c.nominal));
        if (sharing == model::Sharing::lend) {
          if (c.borrowing != 0) {
            at.fail(node, "spec.resourceGroups", fmt::format("`{}` borrows `nvidia.com/{}`, but the team only lends", q.type->name, profile));
          }
        } else if (!quota_unlimited && needs_absolute(c, fmt::format("`nvidia.com/{}` of `{}`", profile, q.type->name), true)) {
          absolute_partitions.push_back(fmt::format("{}: {}", profile, c.borrowing));
        }
        if (sharing == model::Sharing::dont_lend) {
          if (!c.lending || *c.lending != 0) {
            at.fail(node, "spec.resourceGroups", fmt::format("`{}` lends `nvidia.com/{}` while the team lends nothing", q.type->name, profile));
          }
        } else if (c.lending) {
          lent_partitions.push_back(fmt::format("{}: {}", profile, *c.lending));
        }
      }
      if (!given.empty()) amounts.push_back(fmt::format("partitions = {{ {} }}", fmt::join(given, ", ")));
      if (!absolute_partitions.empty()) absolute.push_back(fmt::format("partitions = {{ {} }}", fmt::join(absolute_partitions, ", ")));
      if (!lent_partitions.empty()) lending.push_back(fmt::format("partitions = {{ {} }}", fmt::join(lent_partitions, ", ")));
      std::string body = fmt::format("{}", fmt::join(amounts, ", "));
      if (quota_unlimited) body += ", borrow-limit = unlimited";
      if (!absolute.empty()) body += fmt::format(", borrow-limit = {{ {} }}", fmt::join(absolute, ", "));
      if (!lending.empty()) body += fmt::format(", lending-limit = {{ {} }}", fmt::join(lending, ", "));
      out += fmt::format("  quota {} {{ {} }}\n", q.type->name, body);
    }
    if (groups_in.size() > 1) {
      out += "  resource-groups = {\n";
      for (const GroupIn& group : groups_in) {
        std::vector<std::string_view> words;
        for (model::Resource r : group.covers) words.push_back(check::resource_word(r));
        out += fmt::format("    {}: {{ covers = [{}], flavors = [{}] }}\n", fmt::join(words, "-"), fmt::join(words, ", "),
                           fmt::join(group.flavors, ", "));
      }
      out += "  }\n";
    }
    out += "\n";
    out += fmt::format("  sharing = {}\n", check::word_of(sharing));
    if (team_unlimited) out += "  borrow-limit = unlimited\n";
    else if (sharing != model::Sharing::lend) out += fmt::format("  borrow-limit = {}%\n", percent);

    // Preemption and the rest, written out: Kueue's API defaults differ from gov's (HyperPod's).
    auto within = model::WithinTeam::never;
    auto reclaim = model::ReclaimWithinCohort::never;
    auto borrow = model::BorrowWithinCohort::never;
    std::string threshold;
    if (const Node* preemption = at.optional(spec, "preemption", "spec.preemption", Node::Kind::map)) {
      at.only(*preemption, "spec.preemption", {"withinClusterQueue", "reclaimWithinCohort", "borrowWithinCohort"});
      if (const Node* w = at.optional(*preemption, "withinClusterQueue", "spec.preemption.withinClusterQueue", Node::Kind::scalar)) {
        within = at.choice<model::WithinTeam>(*w, "spec.preemption.withinClusterQueue",
                                              {{"Never", model::WithinTeam::never},
                                               {"LowerPriority", model::WithinTeam::lower_priority},
                                               {"LowerOrNewerEqualPriority", model::WithinTeam::lower_or_newer_equal_priority}});
      }
      if (const Node* r = at.optional(*preemption, "reclaimWithinCohort", "spec.preemption.reclaimWithinCohort", Node::Kind::scalar)) {
        reclaim = at.choice<model::ReclaimWithinCohort>(*r, "spec.preemption.reclaimWithinCohort",
                                                        {{"Never", model::ReclaimWithinCohort::never},
                                                         {"LowerPriority", model::ReclaimWithinCohort::lower_priority},
                                                         {"Any", model::ReclaimWithinCohort::any}});
      }
      if (const Node* b = at.optional(*preemption, "borrowWithinCohort", "spec.preemption.borrowWithinCohort", Node::Kind::map)) {
        const std::string path = "spec.preemption.borrowWithinCohort";
        at.only(*b, path, {"policy", "maxPriorityThreshold"});
        if (const Node* policy = at.optional(*b, "policy", path + ".policy", Node::Kind::scalar)) {
          borrow = at.choice<model::BorrowWithinCohort>(*policy, path + ".policy",
                                                        {{"Never", model::BorrowWithinCohort::never},
                                                         {"LowerPriority", model::BorrowWithinCohort::lower_priority}});
        }
        if (const Node* t = at.optional(*b, "maxPriorityThreshold", path + ".maxPriorityThreshold", Node::Kind::scalar)) {
          const int64_t value = at.integer(*t, path + ".maxPriorityThreshold", INT32_MIN, INT32_MAX);
          const auto it = std::find_if(classes_out_.begin(), classes_out_.end(), [&](const auto& c) { return c.second == value; });
          if (it == classes_out_.end()) {
            at.fail(*t, path + ".maxPriorityThreshold", fmt::format("no WorkloadPriorityClass in the input has the value {}; gov names the class", value));
          }
          threshold = it->first;
        }
      }
    }
    // Settings Kueue ignores here are written as the ClusterQueue says them (gov diff of a round
    // trip finds nothing), with the lint warnings that would call them no-effect allowed, and why.
    std::vector<std::string_view> ignored;
    if (fair_share_ && borrow != model::BorrowWithinCohort::never) ignored.push_back("borrow-within-cohort-with-fair-share");
    out += fmt::format("  preempt-team-tasks = {}\n", check::word_of(within));
    out += fmt::format("  reclaim-within-cohort = {}\n", check::word_of(reclaim));
    if (threshold.empty()) {
      out += fmt::format("  borrow-within-cohort = {}\n", check::word_of(borrow));
    } else {
      out += fmt::format("  borrow-within-cohort = {{ policy = {}, max-priority-threshold = {} }}\n", check::word_of(borrow), threshold);
    }
    auto queueing = model::Queueing::best_effort_fifo;
    if (const Node* q = at.optional(spec, "queueingStrategy", "spec.queueingStrategy", Node::Kind::scalar)) {
      queueing = at.choice<model::Queueing>(*q, "spec.queueingStrategy",
                                            {{"BestEffortFIFO", model::Queueing::best_effort_fifo}, {"StrictFIFO", model::Queueing::strict_fifo}});
    }
    out += fmt::format("  queueing = {}\n", check::word_of(queueing));
    auto when_borrow = model::WhenCanBorrow::borrow;  // Kueue's defaults
    auto when_preempt = model::WhenCanPreempt::try_next_flavor;
    std::optional<model::FlavorPreference> preference;
    if (const Node* f = at.optional(spec, "flavorFungibility", "spec.flavorFungibility", Node::Kind::map)) {
      const std::string path = "spec.flavorFungibility";
      at.only(*f, path, {"whenCanBorrow", "whenCanPreempt", "preference"});
      if (const Node* b = at.optional(*f, "whenCanBorrow", path + ".whenCanBorrow", Node::Kind::scalar)) {
        when_borrow = at.choice<model::WhenCanBorrow>(*b, path + ".whenCanBorrow",
                                                      {{"Borrow", model::WhenCanBorrow::borrow},
                                                       {"MayStopSearch", model::WhenCanBorrow::borrow},
                                                       {"TryNextFlavor", model::WhenCanBorrow::try_next_flavor}});
      }
      if (const Node* p = at.optional(*f, "whenCanPreempt", path + ".whenCanPreempt", Node::Kind::scalar)) {
        when_preempt = at.choice<model::WhenCanPreempt>(*p, path + ".whenCanPreempt",
                                                        {{"Preempt", model::WhenCanPreempt::preempt},
                                                         {"MayStopSearch", model::WhenCanPreempt::preempt},
                                                         {"TryNextFlavor", model::WhenCanPreempt::try_next_flavor}});
      }
      if (const Node* p = at.optional(*f, "preference", path + ".preference", Node::Kind::scalar)) {
        preference = at.choice<model::FlavorPreference>(*p, path + ".preference",
                                                        {{"BorrowingOverPreemption", model::FlavorPreference::borrowing_over_preemption},
                                                         {"PreemptionOverBorrowing", model::FlavorPreference::preemption_over_borrowing}});
      }
    }
    out += fmt::format("  when-can-borrow = {}\n", check::word_of(when_borrow));
    out += fmt::format("  when-can-preempt = {}\n", check::word_of(when_preempt));
    if (preference) out += fmt::format("  flavor-preference = {}\n", check::word_of(*preference));
    int64_t weight = model::kWeightScale;  // Kueue's default fair-sharing weight, 1
    if (const Node* fair = at.optional(spec, "fairSharing", "spec.fairSharing", Node::Kind::map)) {
      at.only(*fair, "spec.fairSharing", {"weight"});
      if (const Node* w = at.optional(*fair, "weight", "spec.fairSharing.weight", Node::Kind::scalar)) {
        weight = fair_share_weight(at, *w);
      }
    }
    out += fmt::format("  fair-share-weight = {}\n", model::weight_text(weight));
    if (quotas.size() == 1) ignored.push_back("fungibility-with-one-instance-type");
    if (!fair_share_) ignored.push_back("weight-without-fair-share");
    if (const Node* stop = at.optional(spec, "stopPolicy", "spec.stopPolicy", Node::Kind::scalar)) {
      const bool active = at.choice<bool>(*stop, "spec.stopPolicy", {{"None", true}, {"Hold", false}, {"HoldAndDrain", false}});
      // gov's `active = false` is Hold: admitted tasks keep running. HoldAndDrain also evicts them,
      // which a policy cannot say (a state given to gov eval or simulate should leave them out).
      if (stop->text == "HoldAndDrain") {
        out += "  # stopPolicy: HoldAndDrain; gov holds the queue as Hold does, and does not evict its admitted workloads\n";
      }
      if (!active) out += "  active = false\n";
    }
    out += local_queue_lines(team, hints, spec);
    const std::string allow =
        ignored.empty() ? std::string()
                        : fmt::format("# Kueue ignores some of these settings here; they are kept as the ClusterQueue says them.\n"
                                      "# gov:allow({})\n",
                                      fmt::join(ignored, ", "));
    return fmt::format("{}team {} {{\n{}{}}}\n", allow, team, cohort_line, out);
  }

  /// The team's `queues` and `namespaces`: the LocalQueues naming its ClusterQueue under names or
  /// in namespaces gov's export would not give them (a migration helper's `nlp-ns/nlp-queue`), so
  /// that their workloads stay the team's and the export's namespaceSelector still admits them.
  /// The namespaces a `kubernetes.io/metadata.name In [...]` namespaceSelector lists (what gov
  /// export writes for `namespaces`) are read back too; any other selector is read past.
  std::string local_queue_lines(const std::string& team, const TeamHints& hints, const Node& spec) const {
    const Naming naming = hyperpod_naming_ ? Naming::hyperpod : Naming::plain;
    std::vector<std::string> names, spaces;
    const auto add = [](std::vector<std::string>& list, const std::string& item) {
      if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
    };
    const Node* selector = spec.find("namespaceSelector");
    const Node* expressions = selector && selector->kind == Node::Kind::map ? selector->find("matchExpressions") : nullptr;
    if (expressions && expressions->kind == Node::Kind::sequence) {
      for (const Node& e : expressions->items) {
        const Node* key = e.kind == Node::Kind::map ? e.find("key") : nullptr;
        const Node* op = e.kind == Node::Kind::map ? e.find("operator") : nullptr;
        const Node* values = e.kind == Node::Kind::map ? e.find("values") : nullptr;
        if (!key || !op || !values || key->text != "kubernetes.io/metadata.name" || op->text != "In" ||
            values->kind != Node::Kind::sequence) {
          continue;
        }
        for (const Node& v : values->items) {
          if (v.kind == Node::Kind::scalar && v.text != namespace_name(naming, team)) add(spaces, v.text);
        }
      }
    }
    for (const auto& [space, name] : hints.local_queues) {
      if (name != local_queue_name(naming, team) && !model::hyperpod_queue_team(name)) add(names, name);
      if (space != namespace_name(naming, team)) add(spaces, space);
    }
    const auto list = [](const std::vector<std::string>& items) {
      std::vector<std::string> quoted;
      for (const std::string& item : items) quoted.push_back(fmt::format("\"{}\"", item));
      return fmt::format("[{}]", fmt::join(quoted, ", "));
    };
    std::string out;
    if (!names.empty()) out += fmt::format("  queues = {}\n", list(names));
    if (!spaces.empty()) out += fmt::format("  namespaces = {}\n", list(spaces));
    return out;
  }

  /// Every Cohort of a tree as a `cohort` block (its parent, weight and quotas with their limits),
  /// then an empty block for each cohort a ClusterQueue or a parent names without an object
  /// (Kueue's implicit cohorts, which gov declares).
  void tree_blocks(std::string& out) {
    std::set<std::string> declared;
    for (const Object& o : cohorts_) declared.insert(o.name);
    for (const Object& o : cohorts_) append(out, tree_cohort(o), o);
    for (const std::string& name : referenced_) {  // names checked where they were read
      if (declared.insert(name).second) out += fmt::format("\ncohort {} {{}}\n", name);
    }
  }

  /// Appends `text`, written from `from`, to `out`, and remembers where it came from.
  void append(std::string& out, const std::string& text, const Object& from) {
    const Node& name = *from.node->find("metadata")->find("name");
    origins_.push_back({static_cast<uint32_t>(out.size()), static_cast<uint32_t>(out.size() + text.size()),
                        fmt::format("{}:{}:{}: {}", from.at.file, name.at.line, name.at.column, from.at.object)});
    out += text;
  }

  std::string tree_cohort(const Object& o) {
    const At& at = o.at;
    const std::string name = at.name(*o.node->find("metadata")->find("name"), o.name, "metadata.name");
    std::string body;
    const Node* spec = at.optional(*o.node, "spec", "spec", Node::Kind::map);
    bool has_parent = false;
    if (spec) {
      at.only(*spec, "spec", {"parentName", "fairSharing", "resourceGroups"});
      if (const Node* parent = at.optional(*spec, "parentName", "spec.parentName", Node::Kind::scalar)) {
        body += fmt::format("  parent = {}\n", at.name(*parent, parent->text, "spec.parentName"));
        referenced_.push_back(parent->text);
        has_parent = true;
      }
      if (const Node* fair = at.optional(*spec, "fairSharing", "spec.fairSharing", Node::Kind::map)) {
        at.only(*fair, "spec.fairSharing", {"weight"});
        if (const Node* w = at.optional(*fair, "weight", "spec.fairSharing.weight", Node::Kind::scalar)) {
          body += fmt::format("  fair-share-weight = {}\n", model::weight_text(fair_share_weight(at, *w)));
        }
      }
    }
    body += cohort_quotas(at, spec, has_parent);
    return body.empty() ? fmt::format("\ncohort {} {{}}\n", name) : fmt::format("\ncohort {} {{\n{}}}\n", name, body);
  }

  /// A Cohort's `spec.resourceGroups` as `cohort NAME { quota T { ... } }` (its own quota), or
  /// nothing. A root cohort's limits have no gov form (nor meaning: it borrows from no one).
  std::string cohort_block() {
    if (cohorts_.empty()) return "";
    const Object& o = cohorts_.front();
    const At& at = o.at;
    // gov export writes the idle capacity of `idle-resource-sharing = true` as the cohort's own
    // quota; the setting (read back from the annotation) derives it again, and a cohort block
    // beside it would be E0340.
    if (const Node* idle = annotation(*o.node, "gov/idle-resource-sharing"); idle && idle->text == "true") return "";
    const Node* spec = at.optional(*o.node, "spec", "spec", Node::Kind::map);
    const std::string quotas = cohort_quotas(at, spec, /*has_parent=*/false);
    if (quotas.empty()) return "";
    return fmt::format("\ncohort {} {{\n{}}}\n", at.name(*o.node->find("metadata")->find("name"), o.name, "metadata.name"),
                       quotas);
  }

  /// A Cohort's `spec.resourceGroups` as `  quota T { ... }` lines, one per flavor, with the
  /// limits of a cohort that has a parent (a root's limits are an error: it borrows from no one).
  std::string cohort_quotas(const At& at, const Node* spec, bool has_parent) {
    const Node* groups = spec ? at.optional(*spec, "resourceGroups", "spec.resourceGroups", Node::Kind::sequence) : nullptr;
    std::string quotas;
    std::set<const check::InstanceType*> seen;
    std::set<std::string> covered_before;
    for (size_t g = 0; groups && g < groups->items.size(); ++g) {
      const std::string path = fmt::format("spec.resourceGroups[{}]", g);
      const Node& group = groups->items[g];
      at.check_kind(group, path, Node::Kind::map);
      at.only(group, path, {"coveredResources", "flavors"});
      const Node& covered = at.need(group, "coveredResources", path + ".coveredResources", Node::Kind::sequence);
      check_covered(at, covered, path, covered_before);
      const Node& flavors = at.need(group, "flavors", path + ".flavors", Node::Kind::sequence);
      for (size_t f = 0; f < flavors.items.size(); ++f) {
        const std::string fpath = fmt::format("{}.flavors[{}]", path, f);
        const Node& flavor = flavors.items[f];
        at.check_kind(flavor, fpath, Node::Kind::map);
        at.only(flavor, fpath, {"name", "resources"});
        const check::InstanceType* type =
            flavor_type(at, at.need(flavor, "name", fpath + ".name", Node::Kind::scalar), fpath + ".name");
        if (!seen.insert(type).second) at.fail(flavor, fpath + ".name", fmt::format("a second quota for `{}`", type->name));
        std::array<model::Amount, model::kResourceCount> nominal{};
        std::vector<std::string> partitions, borrowing, lending;
        const Node& resources = at.need(flavor, "resources", fpath + ".resources", Node::Kind::sequence);
        check_flavor_resources(at, covered, resources, fpath);
        for (size_t i = 0; i < resources.items.size(); ++i) {
          const std::string rpath = fmt::format("{}.resources[{}]", fpath, i);
          const Node& entry = resources.items[i];
          at.check_kind(entry, rpath, Node::Kind::map);
          at.only(entry, rpath, {"name", "nominalQuota", "borrowingLimit", "lendingLimit"});
          for (const char* limit : {"borrowingLimit", "lendingLimit"}) {
            const Node* l = entry.find(limit);
            if (!has_parent && l && !l->is_null()) {
              at.fail(*l, rpath + "." + limit, "a cohort without a parent borrows from and lends to no one: gov has no limit for it");
            }
          }
          const Node& rname = at.need(entry, "name", rpath + ".name", Node::Kind::scalar);
          const std::optional<std::string> profile = partition_named(rname.text);
          const std::optional<model::Resource> r = profile ? model::Resource::gpu : resource_named(rname.text);
          if (!r) at.fail(rname, rpath + ".name", fmt::format("`{}` is not a resource gov knows", rname.text));
          const model::Amount amount =
              quantity(at, at.need(entry, "nominalQuota", rpath + ".nominalQuota", Node::Kind::scalar), rpath + ".nominalQuota", *r);
          if (profile) {
            if (amount != 0) partitions.push_back(fmt::format("{}: {}", *profile, amount));
          } else {
            nominal[model::index(*r)] = amount;
          }
          for (const char* limit : {"borrowingLimit", "lendingLimit"}) {
            const Node* l = entry.find(limit);
            if (!l || l->is_null()) continue;
            if (profile) at.fail(*l, rpath + "." + limit, "gov writes no limit for a cohort's partitions");
            const model::Amount value = quantity(at, *l, rpath + "." + limit, *r);
            (std::string_view(limit) == "borrowingLimit" ? borrowing : lending).push_back(amount_text(*r, value));
          }
        }
        std::vector<std::string> amounts;
        for (model::Resource r : model::kAllResources) {
          const model::Amount a = nominal[model::index(r)];
          if (a != 0 || type->per_instance[model::index(r)] > 0) amounts.push_back(amount_text(r, a));
        }
        if (!partitions.empty()) amounts.push_back(fmt::format("partitions = {{ {} }}", fmt::join(partitions, ", ")));
        if (!borrowing.empty()) amounts.push_back(fmt::format("borrow-limit = {{ {} }}", fmt::join(borrowing, ", ")));
        if (!lending.empty()) amounts.push_back(fmt::format("lending-limit = {{ {} }}", fmt::join(lending, ", ")));
        quotas += fmt::format("  quota {} {{ {} }}\n", type->name, fmt::join(amounts, ", "));
      }
    }
    return quotas;
  }

  std::string header() {
    // The cluster: its name from the cohort (gov export writes `gov/cluster`; plain naming names
    // the cohort after the cluster), its capacity from --capacity or the flavors' annotations.
    std::string cluster = "imported";
    for (const Object& o : cohorts_) {
      const Node& spec_holder = *o.node;
      if (const Node* spec = o.at.optional(spec_holder, "spec", "spec", Node::Kind::map); spec && !tree_) {
        o.at.only(*spec, "spec", {"resourceGroups"});
      }
      if (!tree_ && !cohort_.empty() && o.name != cohort_) {
        o.at.fail(*o.node, "metadata.name", fmt::format("a second cohort; the ClusterQueues are in `{}` and gov has one cohort", cohort_));
      }
      if (const Node* name = annotation(*o.node, "gov/cluster")) {
        cluster = o.at.name(*name, name->text, "metadata.annotations.gov/cluster");
      } else if (!tree_ && o.name != "shared-pool") {
        cluster = o.at.name(*o.node->find("metadata")->find("name"), o.name, "metadata.name");
      }
    }
    if (cohorts_.empty() && !cohort_.empty() && cohort_ != "shared-pool") {
      bool ok = cohort_[0] >= 'a' && cohort_[0] <= 'z';
      for (char c : cohort_) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
      if (ok && cohort_.size() <= 63) cluster = cohort_;
    }
    std::string out = fmt::format("# Imported by `gov import kueue`.\nimport \"{}\"\n\ncluster {} {{\n  catalog = {}\n",
                                  options_.catalog_import, cluster, catalog_.name);
    std::vector<std::string> entries;
    if (!options_.capacity.empty()) {
      for (const auto& [type, count] : options_.capacity) entries.push_back(fmt::format("{}: {}", type, count));
    } else {
      for (const check::InstanceType& type : catalog_.types) {
        if (auto it = capacity_.find(type.name); it != capacity_.end()) entries.push_back(fmt::format("{}: {}", type.name, it->second));
      }
    }
    if (entries.empty()) {
      out += "  # capacity: Kueue's objects do not say; give it (gov import kueue --capacity TYPE=N,...)\n";
    } else {
      out += fmt::format("  capacity = {{ {} }}\n", fmt::join(entries, ", "));
    }
    return out + "}\n\n";
  }

  /// Whether the policy settings() writes has `idle-compute = fair-share`.
  bool idle_compute_is_fair_share() const {
    if (!options_.idle_compute.empty()) return options_.idle_compute == "fair-share";
    const Node* written = cohorts_.empty() ? nullptr : annotation(*cohorts_.front().node, "gov/idle-compute");
    return written == nullptr || written->text == "fair-share";  // an unknown word fails in settings()
  }

  std::string settings() {
    // What Kueue keeps in its manager configuration: gov export writes it as the cohort's
    // annotations; without them, HyperPod's defaults.
    const Object* cohort = cohorts_.empty() ? nullptr : &cohorts_.front();
    auto read = [&](std::string_view key) { return cohort ? annotation(*cohort->node, key) : nullptr; };
    std::string out = "policy {\n";
    if (const Node* p = read("gov/task-prioritization")) {
      out += fmt::format("  task-prioritization = {}\n",
                         check::word_of(cohort->at.choice<check::Prioritization>(
                             *p, "metadata.annotations.gov/task-prioritization",
                             {{"fcfs", check::Prioritization::fcfs}, {"task-ranking", check::Prioritization::task_ranking}})));
    } else {
      out += fmt::format("  task-prioritization = {}\n", classes_out_.empty() ? "fcfs" : "task-ranking");
    }
    if (!options_.idle_compute.empty()) {
      out += fmt::format("  idle-compute = {}  # --idle-compute: Kueue's fairSharing.enable\n", options_.idle_compute);
    } else if (const Node* i = read("gov/idle-compute")) {
      out += fmt::format("  idle-compute = {}\n",
                         check::word_of(cohort->at.choice<check::IdleCompute>(
                             *i, "metadata.annotations.gov/idle-compute",
                             {{"fcfs", check::IdleCompute::fcfs}, {"fair-share", check::IdleCompute::fair_share}})));
    } else {
      // Written out, so that a review sees the choice: a plain Kueue runs without fair sharing
      // unless its manager configuration enables it, which no object shows.
      out += "  # Assumed: Kueue keeps fair sharing in its manager configuration (fairSharing.enable), not in\n"
             "  # objects. fair-share is HyperPod's; write fcfs (or import with --idle-compute fcfs) for a\n"
             "  # Kueue without fairSharing.\n"
             "  idle-compute = fair-share\n";
    }
    if (const Node* s = read("gov/idle-resource-sharing")) {
      out += fmt::format("  idle-resource-sharing = {}\n",
                         cohort->at.choice<bool>(*s, "metadata.annotations.gov/idle-resource-sharing", {{"true", true}, {"false", false}})
                             ? "true"
                             : "false");
    }
    if (const Node* f = read("gov/fair-share-preemption")) {
      std::vector<std::string> words;
      std::string_view rest = f->text;
      while (!rest.empty()) {
        const size_t comma = std::min(rest.find(','), rest.size());
        Node word = *f;
        word.text = std::string(rest.substr(0, comma));
        words.emplace_back(check::word_of(cohort->at.choice<model::FairShareStrategy>(
            word, "metadata.annotations.gov/fair-share-preemption",
            {{"less-than-or-equal-to-final-share", model::FairShareStrategy::less_than_or_equal_to_final_share},
             {"less-than-initial-share", model::FairShareStrategy::less_than_initial_share}})));
        rest = comma < rest.size() ? rest.substr(comma + 1) : std::string_view();
      }
      if (!fair_share_) {
        out += "  # Kueue ignores it without fair sharing; kept as its configuration says it.\n"
               "  # gov:allow(fair-share-preemption-without-fair-share)\n";
      }
      out += fmt::format("  fair-share-preemption = [{}]\n", fmt::join(words, ", "));
    }
    if (const Node* d = read("gov/default-priority")) {
      out += fmt::format("  default-priority = {}\n", cohort->at.name(*d, d->text, "metadata.annotations.gov/default-priority"));
    }
    if (!classes_out_.empty()) out += "\n";
    for (const auto& [name, weight] : classes_out_) out += fmt::format("  priority {} = {}\n", name, weight);
    return out + "}\n";
  }

  const check::Catalog& catalog_;
  const ImportOptions& options_;
  std::vector<std::vector<Node>> documents_;  // owns the nodes the objects point to
  std::vector<Object> flavors_, cohorts_, queues_, locals_, classes_;
  std::map<std::string, const check::InstanceType*> flavor_types_;
  std::map<std::string, int64_t> capacity_;
  std::map<std::string, TeamHints> hints_;  // by ClusterQueue name
  std::vector<std::pair<std::string, int64_t>> classes_out_;
  std::string cohort_;
  bool tree_ = false;  // the input has a tree of cohorts
  bool fair_share_ = true;  // idle_compute_is_fair_share()
  std::vector<std::string> referenced_;  // cohorts named by ClusterQueues and parents, in reading order
  std::vector<ImportOrigin> origins_;
  bool hyperpod_naming_ = false;
};

}  // namespace

support::Expected<std::string> import_kueue(const std::vector<ImportInput>& inputs, const check::Catalog& catalog,
                                            const ImportOptions& options, std::vector<ImportOrigin>* origins) {
  try {
    Importer importer(catalog, options);
    for (const ImportInput& input : inputs) importer.add(input);
    std::string policy = importer.policy();
    if (origins != nullptr) *origins = importer.origins();
    return policy;
  } catch (const Failure& failure) {
    return support::Error{support::ErrorKind::invalid, failure.message};
  }
}

}  // namespace gov::bridge
