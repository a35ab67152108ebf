// `gov export kueue`: a checked policy as the Kueue objects `kubectl apply -f` takes, written with
// yaml-cpp: Namespaces, ResourceFlavors, the Cohort, ClusterQueues, LocalQueues and
// WorkloadPriorityClasses, in that order (a LocalQueue's namespace exists before it).
#include "compiler/bridge/kueue_export.hpp"

#include <algorithm>
#include <span>

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "compiler/bridge/bridge.hpp"
#include "compiler/check/quotas.hpp"
#include "compiler/check/surface.hpp"
#include "compiler/model/arithmetic.hpp"
#include "compiler/model/partitions.hpp"
#include "compiler/model/quantities.hpp"

namespace gov::bridge {

namespace {

/// A scalar that YAML would read as something other than a string (`true`, `10`, `null`, ``)
/// is quoted, so that a label or annotation value stays a string.
bool needs_quotes(std::string_view text) {
  if (text.empty()) return true;
  static constexpr std::string_view kWords[] = {"true", "false", "yes", "no", "on", "off", "null", "~",
                                                "True", "False", "Yes", "No", "On", "Off", "Null", "TRUE",
                                                "FALSE", "YES", "NO", "ON", "OFF", "NULL", "y", "n", "Y", "N"};
  for (std::string_view word : kWords) {
    if (text == word) return true;
  }
  bool numeric = true;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) numeric = false;
  }
  return numeric;
}

void string_value(YAML::Emitter& out, std::string_view text) {
  if (needs_quotes(text)) out << YAML::DoubleQuoted;
  out << std::string(text);
}

void field(YAML::Emitter& out, std::string_view key, std::string_view text) {
  out << YAML::Key << std::string(key) << YAML::Value;
  string_value(out, text);
}

void field(YAML::Emitter& out, std::string_view key, int64_t value) {
  out << YAML::Key << std::string(key) << YAML::Value << value;
}

/// A Kubernetes quantity: an integer when it is one (`2`, `48`), else its canonical text
/// (`192Gi`, `500m`, `9830Mi`).
void quantity(YAML::Emitter& out, std::string_view key, model::Resource resource, model::Amount amount) {
  const std::string text = model::format_amount(resource, amount, model::kubernetes_notation());
  out << YAML::Key << std::string(key) << YAML::Value << text;  // plain: `2` reads as an integer, `192Gi` as a string
}

std::string_view api_version(KueueApi api) { return api == KueueApi::v1beta2 ? "kueue.x-k8s.io/v1beta2" : "kueue.x-k8s.io/v1beta1"; }

void begin_object(YAML::Emitter& out, std::string_view api, std::string_view kind) {
  out << YAML::BeginDoc << YAML::BeginMap;
  field(out, "apiVersion", api);
  field(out, "kind", kind);
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
}

/// HyperPod's labels on a team's queues.
void queue_labels(YAML::Emitter& out, const ExportOptions& options, std::string_view team) {
  if (options.naming != Naming::hyperpod) return;
  out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  field(out, "sagemaker.amazonaws.com/quota-allocation-id", team);
  field(out, "sagemaker.amazonaws.com/sagemaker-managed-queue", "true");
  out << YAML::EndMap;
}

std::string_view within_cluster_queue(model::WithinTeam value) {
  switch (value) {
    case model::WithinTeam::never: return "Never";
    case model::WithinTeam::lower_priority: return "LowerPriority";
    case model::WithinTeam::lower_or_newer_equal_priority: return "LowerOrNewerEqualPriority";
  }
  return "Never";
}

std::string_view reclaim_within_cohort(model::ReclaimWithinCohort value) {
  switch (value) {
    case model::ReclaimWithinCohort::never: return "Never";
    case model::ReclaimWithinCohort::lower_priority: return "LowerPriority";
    case model::ReclaimWithinCohort::any: return "Any";
  }
  return "Never";
}

std::string_view borrow_within_cohort(model::BorrowWithinCohort value) {
  switch (value) {
    case model::BorrowWithinCohort::never: return "Never";
    case model::BorrowWithinCohort::lower_priority: return "LowerPriority";
  }
  return "Never";
}

// v1beta2 renamed `Borrow` and `Preempt` to `MayStopSearch` (v1beta1 accepts both spellings in
// Kueue v0.20; v0.19.2, which HyperPod runs, knows only the old ones).
std::string_view when_can_borrow(model::WhenCanBorrow value, KueueApi api) {
  switch (value) {
    case model::WhenCanBorrow::borrow: return api == KueueApi::v1beta2 ? "MayStopSearch" : "Borrow";
    case model::WhenCanBorrow::try_next_flavor: return "TryNextFlavor";
  }
  return "TryNextFlavor";
}

std::string_view when_can_preempt(model::WhenCanPreempt value, KueueApi api) {
  switch (value) {
    case model::WhenCanPreempt::preempt: return api == KueueApi::v1beta2 ? "MayStopSearch" : "Preempt";
    case model::WhenCanPreempt::try_next_flavor: return "TryNextFlavor";
  }
  return "TryNextFlavor";
}

std::string_view strategy_name(model::FairShareStrategy strategy) {
  switch (strategy) {
    case model::FairShareStrategy::less_than_or_equal_to_final_share: return "LessThanOrEqualToFinalShare";
    case model::FairShareStrategy::less_than_initial_share: return "LessThanInitialShare";
  }
  return "LessThanOrEqualToFinalShare";
}

/// The instance types that get a ResourceFlavor: those in the cluster's capacity or in a
/// quota, in catalog order.
std::vector<size_t> flavor_types(const check::Policy& policy) {
  std::vector<bool> used(policy.types().size(), false);
  if (policy.cluster) {
    for (const check::Capacity& capacity : policy.cluster->capacity) used[capacity.type] = true;
  }
  for (const check::Team& team : policy.teams) {
    for (const check::Quota& quota : team.quotas) used[quota.type] = true;
  }
  std::vector<size_t> out;
  for (size_t type = 0; type < used.size(); ++type) {
    if (used[type]) out.push_back(type);
  }
  return out;
}

void write_namespace(YAML::Emitter& out, const ExportOptions& options, const check::Team& team) {
  begin_object(out, "v1", "Namespace");
  field(out, "name", namespace_name(options.naming, team.name));
  out << YAML::EndMap << YAML::EndMap;
}

void write_flavor(YAML::Emitter& out, const check::Policy& policy, const ExportOptions& options, size_t type) {
  const check::InstanceType& instance = policy.types()[type];
  begin_object(out, api_version(options.api), "ResourceFlavor");
  // The cluster's instances of the type, for `gov import kueue` (Kueue has no notion of capacity).
  if (policy.capacity_of(type) > 0) {
    out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
    field(out, "gov/capacity", std::to_string(policy.capacity_of(type)));
    out << YAML::EndMap;
  }
  field(out, "name", instance.name);
  out << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nodeLabels" << YAML::Value << YAML::BeginMap;
  field(out, "node.kubernetes.io/instance-type", instance.name);
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

/// The cluster policy's settings Kueue keeps outside its objects (the manager's configuration)
/// or does not have, as annotations of the cohort, so that `gov import kueue` reads them back.
void write_settings(YAML::Emitter& out, const check::Policy& policy) {
  const check::Settings settings = policy.settings.value_or(check::Settings{});
  out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
  if (policy.cluster) field(out, "gov/cluster", policy.cluster->name);
  if (settings.default_class >= 0) {
    field(out, "gov/default-priority", policy.classes[static_cast<size_t>(settings.default_class)].name);
  }
  std::vector<std::string> strategies;
  for (model::FairShareStrategy strategy : settings.fair_share_strategies) {
    strategies.emplace_back(check::word_of(strategy));
  }
  field(out, "gov/fair-share-preemption", fmt::format("{}", fmt::join(strategies, ",")));
  field(out, "gov/idle-compute", check::word_of(settings.idle_compute));
  field(out, "gov/idle-resource-sharing", settings.idle_resource_sharing ? "true" : "false");
  field(out, "gov/task-prioritization", check::word_of(settings.prioritization));
  out << YAML::EndMap;
}

/// The GPU partitions some quotas give, in order of first use: resources of their resource group
/// after the five base ones (Kueue wants every flavor to list every covered resource, so a flavor
/// without a profile lists it with 0).
std::vector<std::string> quota_profiles(const std::vector<check::Quota>& quotas) {
  std::vector<std::string> out;
  for (const check::Quota& quota : quotas) {
    for (const check::PartitionQuota& p : quota.partitions) {
      if (std::find(out.begin(), out.end(), p.profile) == out.end()) out.push_back(p.profile);
    }
  }
  return out;
}

void write_cohort(YAML::Emitter& out, const check::Policy& policy, const ExportOptions& options) {
  begin_object(out, api_version(options.api), "Cohort");
  write_settings(out, policy);
  field(out, "name", cohort_name(options.naming, policy));
  out << YAML::EndMap;
  // The cohort's own quota: written (`cohort NAME { quota ... }`), or the idle capacity (the two
  // exclude each other: E0340).
  const bool idle_sharing = policy.settings && policy.settings->idle_resource_sharing;
  const std::vector<check::Quota> own =
      idle_sharing ? check::idle_capacity_quotas(policy) : policy.cohort ? policy.cohort->quotas : std::vector<check::Quota>{};
  if (own.empty()) {
    out << YAML::Key << "spec" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::EndMap;
    out << YAML::EndMap;
    return;
  }
  // One resource group like a team's, with nominal quotas only (a cohort without a parent has no
  // borrowing or lending limit).
  const std::vector<std::string> profiles = quota_profiles(own);
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "resourceGroups" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "coveredResources" << YAML::Value << YAML::BeginSeq;
  for (model::Resource resource : model::kAllResources) out << std::string(model::kubernetes_name(resource));
  for (const std::string& profile : profiles) out << model::partition_resource_name(profile);
  out << YAML::EndSeq;
  out << YAML::Key << "flavors" << YAML::Value << YAML::BeginSeq;
  for (const check::Quota& quota : own) {
    out << YAML::BeginMap;
    field(out, "name", quota.type_name);
    out << YAML::Key << "resources" << YAML::Value << YAML::BeginSeq;
    for (model::Resource resource : model::kAllResources) {
      out << YAML::BeginMap;
      field(out, "name", model::kubernetes_name(resource));
      quantity(out, "nominalQuota", resource, quota.nominal[model::index(resource)]);
      out << YAML::EndMap;
    }
    for (const std::string& profile : profiles) {
      const check::PartitionQuota* p = quota.partition(profile);
      out << YAML::BeginMap;
      field(out, "name", model::partition_resource_name(profile));
      quantity(out, "nominalQuota", model::Resource::gpu, p ? p->nominal : 0);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap;
}

void write_resources(YAML::Emitter& out, const check::Quota& quota, const std::vector<std::string>& profiles,
                     std::span<const model::Resource> covered) {
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginSeq;
  for (model::Resource resource : covered) {
    const size_t r = model::index(resource);
    out << YAML::BeginMap;
    // No borrowingLimit is Kueue's unlimited borrowing (`borrow-limit = unlimited`).
    if (quota.borrowing_limit[r] != model::kUnlimited) quantity(out, "borrowingLimit", resource, quota.borrowing_limit[r]);
    if (quota.lending_limit[r] != model::kUnlimited) quantity(out, "lendingLimit", resource, quota.lending_limit[r]);
    field(out, "name", model::kubernetes_name(resource));
    quantity(out, "nominalQuota", resource, quota.nominal[r]);
    out << YAML::EndMap;
  }
  // Partitions are counts, like GPUs (`nvidia.com/mig-1g.10gb: 14`).
  for (const std::string& profile : profiles) {
    const check::PartitionQuota* p = quota.partition(profile);
    out << YAML::BeginMap;
    if (!p || p->borrowing_limit != model::kUnlimited) {
      quantity(out, "borrowingLimit", model::Resource::gpu, p ? p->borrowing_limit : 0);
    }
    if (p && p->lending_limit != model::kUnlimited) quantity(out, "lendingLimit", model::Resource::gpu, p->lending_limit);
    field(out, "name", model::partition_resource_name(profile));
    quantity(out, "nominalQuota", model::Resource::gpu, p ? p->nominal : 0);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

/// `resourceGroups` of one group covering every resource and the quotas' partitions, the quotas
/// its flavors in order, with their limits: a team without groups, or a cohort of a tree.
void write_one_resource_group(YAML::Emitter& out, const std::vector<check::Quota>& quotas) {
  const std::vector<std::string> profiles = quota_profiles(quotas);
  out << YAML::Key << "resourceGroups" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "coveredResources" << YAML::Value << YAML::BeginSeq;
  for (model::Resource resource : model::kAllResources) out << std::string(model::kubernetes_name(resource));
  for (const std::string& profile : profiles) out << model::partition_resource_name(profile);
  out << YAML::EndSeq;
  out << YAML::Key << "flavors" << YAML::Value << YAML::BeginSeq;
  for (const check::Quota& quota : quotas) {
    out << YAML::BeginMap;
    field(out, "name", quota.type_name);
    write_resources(out, quota, profiles, model::kAllResources);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq;
}

/// `weight: N` of a `fairSharing`: a Quantity, which the CRD types int-or-string. A whole weight is
/// an integer scalar; a decimal one is quoted (`"0.5"`), since a plain `0.5` is a YAML float and
/// the API server rejects it.
void write_weight(YAML::Emitter& out, int64_t micros) {
  out << YAML::Key << "weight" << YAML::Value;
  if (micros % model::kWeightScale == 0) {
    out << model::weight_text(micros);
  } else {
    out << YAML::DoubleQuoted << model::weight_text(micros);
  }
}

/// One cohort of a tree: a Cohort with its parent (`spec.parentName`), its fair-sharing weight and
/// its quotas with their limits, as a team's resource group. The first cohort carries the cluster
/// policy's settings as annotations (write_settings), for `gov import kueue`.
void write_tree_cohort(YAML::Emitter& out, const check::Policy& policy, const ExportOptions& options,
                       const check::Cohort& cohort) {
  begin_object(out, api_version(options.api), "Cohort");
  if (&cohort == &policy.cohort_tree.front()) write_settings(out, policy);
  field(out, "name", cohort.name);
  out << YAML::EndMap;
  if (cohort.parent_name.empty() && !cohort.fair_share_weight_given && cohort.quotas.empty()) {
    out << YAML::Key << "spec" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::EndMap;
    out << YAML::EndMap;
    return;
  }
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  if (cohort.fair_share_weight_given) {
    out << YAML::Key << "fairSharing" << YAML::Value << YAML::BeginMap;
    write_weight(out, cohort.fair_share_weight_micros);
    out << YAML::EndMap;
  }
  if (!cohort.parent_name.empty()) field(out, "parentName", cohort.parent_name);
  if (!cohort.quotas.empty()) write_one_resource_group(out, cohort.quotas);
  out << YAML::EndMap << YAML::EndMap;
}

void write_cluster_queue(YAML::Emitter& out, const check::Policy& policy, const ExportOptions& options,
                         const check::Team& team) {
  begin_object(out, api_version(options.api), "ClusterQueue");
  queue_labels(out, options, team.name);
  field(out, "name", cluster_queue_name(options.naming, team.name));
  out << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  // In a tree, the team's own cohort (Policy::cohort_tree), else the one flat cohort.
  const std::string cohort = team.cohort_index >= 0 ? policy.cohort_tree[static_cast<size_t>(team.cohort_index)].name
                                                    : cohort_name(options.naming, policy);
  field(out, options.api == KueueApi::v1beta2 ? "cohortName" : "cohort", cohort);
  out << YAML::Key << "fairSharing" << YAML::Value << YAML::BeginMap;
  write_weight(out, team.fair_share_weight_micros);
  out << YAML::EndMap;
  out << YAML::Key << "flavorFungibility" << YAML::Value << YAML::BeginMap;
  // Kueue's default preference is borrowing over preemption; it may be written only when both
  // searches try the next flavor (a CEL rule of the CRD; the checker's E0313).
  if (team.flavor_preference == model::FlavorPreference::preemption_over_borrowing) {
    field(out, "preference", "PreemptionOverBorrowing");
  }
  field(out, "whenCanBorrow", when_can_borrow(team.when_can_borrow, options.api));
  field(out, "whenCanPreempt", when_can_preempt(team.when_can_preempt, options.api));
  out << YAML::EndMap;
  out << YAML::Key << "namespaceSelector" << YAML::Value << YAML::BeginMap;
  if (team.namespaces.empty()) {
    out << YAML::Key << "matchLabels" << YAML::Value << YAML::BeginMap;
    field(out, "kubernetes.io/metadata.name", namespace_name(options.naming, team.name));
    out << YAML::EndMap;
  } else {
    // The team's own namespace and its `namespaces`, whose LocalQueues (an imported cluster's)
    // name this ClusterQueue: a selector of the first alone locked them out.
    out << YAML::Key << "matchExpressions" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    field(out, "key", "kubernetes.io/metadata.name");
    field(out, "operator", "In");
    out << YAML::Key << "values" << YAML::Value << YAML::BeginSeq << namespace_name(options.naming, team.name);
    for (const check::Team::ClaimedName& space : team.namespaces) out << space.name;
    out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq;
  }
  out << YAML::EndMap;
  out << YAML::Key << "preemption" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "borrowWithinCohort" << YAML::Value << YAML::BeginMap;
  if (team.borrow_priority_threshold >= 0) {
    field(out, "maxPriorityThreshold", policy.classes[static_cast<size_t>(team.borrow_priority_threshold)].weight);
  }
  field(out, "policy", borrow_within_cohort(team.borrow_within_cohort));
  out << YAML::EndMap;
  field(out, "reclaimWithinCohort", reclaim_within_cohort(team.reclaim_within_cohort));
  field(out, "withinClusterQueue", within_cluster_queue(team.preempt_team_tasks));
  out << YAML::EndMap;
  field(out, "queueingStrategy", team.queueing == model::Queueing::strict_fifo ? "StrictFIFO" : "BestEffortFIFO");
  if (!team.groups.empty()) {
    // Kueue's resourceGroups as written (docs/language.md "Resource groups"); partitions go with gpus.
    const std::vector<std::string> profiles = quota_profiles(team.quotas);
    out << YAML::Key << "resourceGroups" << YAML::Value << YAML::BeginSeq;
    for (const check::ResourceGroup& group : team.groups) {
      const bool gpus = std::find(group.covers.begin(), group.covers.end(), model::Resource::gpu) != group.covers.end();
      const std::vector<std::string> group_profiles = gpus ? profiles : std::vector<std::string>{};
      out << YAML::BeginMap << YAML::Key << "coveredResources" << YAML::Value << YAML::BeginSeq;
      for (model::Resource resource : group.covers) out << std::string(model::kubernetes_name(resource));
      for (const std::string& profile : group_profiles) out << model::partition_resource_name(profile);
      out << YAML::EndSeq;
      out << YAML::Key << "flavors" << YAML::Value << YAML::BeginSeq;
      for (const auto& [name, at] : group.flavors) {
        const auto quota = std::find_if(team.quotas.begin(), team.quotas.end(),
                                        [&name](const check::Quota& q) { return q.type_name == name; });
        if (quota == team.quotas.end()) continue;  // unresolved: the checker reported it
        out << YAML::BeginMap;
        field(out, "name", quota->type_name);
        write_resources(out, *quota, group_profiles, group.covers);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq << YAML::EndMap;
    }
    out << YAML::EndSeq;
  } else if (!team.quotas.empty()) {
    write_one_resource_group(out, team.quotas);
  }
  // An inactive team (HyperPod's ActivationState Disabled) admits nothing new; what waits, waits.
  if (!team.active) field(out, "stopPolicy", "Hold");
  out << YAML::EndMap << YAML::EndMap;
}

void write_local_queue(YAML::Emitter& out, const ExportOptions& options, const check::Team& team) {
  begin_object(out, api_version(options.api), "LocalQueue");
  // The team's sharing and percentage borrow limit, which the ClusterQueue holds only resolved,
  // for `gov import kueue`.
  out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
  field(out, "gov/borrow-limit", team.borrow_limit_text());
  field(out, "gov/sharing", check::word_of(team.sharing));
  out << YAML::EndMap;
  queue_labels(out, options, team.name);
  field(out, "name", local_queue_name(options.naming, team.name));
  field(out, "namespace", namespace_name(options.naming, team.name));
  out << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  field(out, "clusterQueue", cluster_queue_name(options.naming, team.name));
  out << YAML::EndMap << YAML::EndMap;
}

void write_priority_class(YAML::Emitter& out, const ExportOptions& options, const check::PriorityClass& priority) {
  begin_object(out, api_version(options.api), "WorkloadPriorityClass");
  field(out, "name", priority_class_name(options.naming, priority.name));
  out << YAML::EndMap;
  field(out, "value", priority.weight);
  out << YAML::EndMap;
}

/// The header: what the file is and the part of the policy that lives in Kueue's manager
/// configuration rather than in objects.
std::string header(const check::Policy& policy, const ExportOptions& options) {
  const check::Settings settings = policy.settings.value_or(check::Settings{});
  std::string out = fmt::format("# Kueue objects of a gov policy (gov export kueue --api {} --naming {}).\n",
                                options.api == KueueApi::v1beta2 ? "v1beta2" : "v1beta1",
                                options.naming == Naming::hyperpod ? "hyperpod" : "plain");
  out += "# Apply with `kubectl apply -f FILE`. Kueue's manager configuration (kueue-manager-config) must say:\n";
  if (settings.idle_compute == check::IdleCompute::fair_share) {
    std::vector<std::string> strategies;
    for (model::FairShareStrategy strategy : settings.fair_share_strategies) {
      strategies.emplace_back(strategy_name(strategy));
    }
    out += fmt::format("#   fairSharing: {{enable: true, preemptionStrategies: [{}]}}\n", fmt::join(strategies, ", "));
  } else {
    out += "#   fairSharing: {enable: false}\n";
  }
  // gov never charges EFA (docs/semantics.md §2: HyperPod's configuration excludes it), while the
  // ClusterQueues cover it as HyperPod's do: a Kueue that does not exclude it would hold a job
  // asking for more EFA than a quota lists (a Kueue auditor's finding, session 41).
  out += "#   resources: {excludeResourcePrefixes: [vpc.amazonaws.com/efa]}\n";
  return out;
}

}  // namespace

std::string export_kueue(const check::Policy& policy, const ExportOptions& options) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetMapFormat(YAML::Block);
  out.SetSeqFormat(YAML::Block);
  for (const check::Team& team : policy.teams) write_namespace(out, options, team);
  for (size_t type : flavor_types(policy)) write_flavor(out, policy, options, type);
  if (policy.cohort_tree.empty()) write_cohort(out, policy, options);
  for (const check::Cohort& cohort : policy.cohort_tree) write_tree_cohort(out, policy, options, cohort);
  for (const check::Team& team : policy.teams) write_cluster_queue(out, policy, options, team);
  for (const check::Team& team : policy.teams) write_local_queue(out, options, team);
  for (const check::PriorityClass& priority : policy.classes) write_priority_class(out, options, priority);
  return header(policy, options) + out.c_str() + "\n";
}

}  // namespace gov::bridge
