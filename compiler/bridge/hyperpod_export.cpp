// `gov export hyperpod`: a checked policy as SageMaker's task-governance API input: one
// create-cluster-scheduler-config document, one create-compute-quota document per team, and a
// script that runs them in order (`aws sagemaker … --cli-input-json file://…`).
#include "compiler/bridge/hyperpod_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "compiler/check/surface.hpp"
#include "compiler/model/partitions.hpp"
#include "compiler/model/quantities.hpp"
#include "compiler/support/assert.hpp"
#include "compiler/support/json_writer.hpp"
#include "runtime/trace/json.hpp"

namespace gov::bridge {

namespace {

/// An amount in the API's unit (devices, vCPUs, GiB) as a JSON number, exact.
void amount(JsonWriter& out, std::string_view key, model::Resource resource, model::Amount value) {
  out.key(key);
  out.decimal(model::format_amount(resource, value, model::decimal_notation()));
}

/// The API's member for a resource amount of a quota; nullptr for EFA, which it has no member for.
const char* member_of(model::Resource resource) {
  switch (resource) {
    case model::Resource::gpu:
    case model::Resource::neuron: return "Accelerators";
    case model::Resource::vcpu: return "VCpu";
    case model::Resource::memory: return "MemoryInGiB";
    case model::Resource::efa: return nullptr;
  }
  return nullptr;
}

/// `ml-cluster` for an EntityName (letters, digits and hyphens, at most 63).
std::string entity_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += word ? c : '-';
  }
  if (out.empty() || out.front() == '-') out = "gov" + out;
  out.resize(std::min<size_t>(out.size(), 63));
  // Cut first, then trimmed: the API's pattern ends in a letter or digit, and a cut may end in `-`.
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

/// The ClusterArn member: the given ARN (none without one: the script passes `--cluster-arn`), or
/// in a CloudFormation template a reference to the template's parameter.
void cluster_arn(JsonWriter& out, const ExportOptions& options) {
  if (options.format == HyperpodFormat::cloudformation) {
    out.key("ClusterArn");
    out.begin_object();
    out.field("Ref", kArnParameter);
    out.end_object();
    return;
  }
  if (!options.cluster_arn.empty()) out.field("ClusterArn", options.cluster_arn);
}

/// The members a create and an update of the cluster policy share (Description, SchedulerConfig).
void scheduler_config_members(JsonWriter& out, const check::Policy& policy) {
  const check::Settings settings = policy.settings.value_or(check::Settings{});
  out.field("Description", "cluster policy of a gov policy (gov export hyperpod)");
  out.key("SchedulerConfig");
  out.begin_object();
  out.key("PriorityClasses");
  out.begin_array();
  // First come, first served has no classes: every task has priority 0.
  if (settings.prioritization == check::Prioritization::task_ranking) {
    for (const check::PriorityClass& priority : policy.classes) {
      out.begin_object();
      out.field("Name", priority.name);
      out.field("Weight", int64_t{priority.weight});
      out.end_object();
    }
  }
  out.end_array();
  out.field("FairShare", settings.idle_compute == check::IdleCompute::fair_share ? "Enabled" : "Disabled");
  out.field("IdleResourceSharing", settings.idle_resource_sharing ? "Enabled" : "Disabled");
  out.end_object();
}

void scheduler_config(JsonWriter& out, const check::Policy& policy, const ExportOptions& options) {
  out.begin_object();
  cluster_arn(out, options);
  out.field("Name", scheduler_config_name(policy));
  scheduler_config_members(out, policy);
  out.end_object();
}

/// One ComputeQuotaResourceConfig: the instance type, `count` instances (when given), the
/// `given` resources of `amounts` that the API has a member for, and `partition`, the quota's one
/// GPU partition with its count, when it has one (HyperPod's entry holds one
/// `AcceleratorPartition`; more is reported by hyperpod_not_expressible).
void resource_config(JsonWriter& out, const check::Quota& quota, const model::Resources& amounts,
                     const std::array<bool, model::kResourceCount>& given, std::optional<int64_t> count,
                     const check::PartitionQuota* partition = nullptr, int64_t partition_count = 0) {
  out.begin_object();
  out.field("InstanceType", quota.type_name);
  if (count) out.field("Count", *count);
  for (model::Resource resource : model::kAllResources) {
    const size_t r = model::index(resource);
    const char* member = member_of(resource);
    if (!given[r] || !member) continue;
    amount(out, member, resource, amounts[r]);
  }
  if (partition) {
    out.key("AcceleratorPartition");
    out.begin_object();
    out.field("Type", partition->profile);
    out.field("Count", partition_count);
    out.end_object();
  }
  out.end_object();
}

/// Whether the quota's written EFA amount (its nominal, or with `borrow_limit` its absolute borrow
/// limit) is the one gov, as HyperPod, derives when it is left out: from the other amounts for the
/// nominal (docs/semantics.md §2), the team's percentage of that for the borrow limit.
bool efa_as_hyperpod_derives(const check::Policy& policy, const check::Team& team, const check::Quota& quota,
                             bool borrow_limit) {
  if (quota.type >= policy.types().size()) return false;
  const check::InstanceType& type = policy.types()[quota.type];
  const size_t efa = model::index(model::Resource::efa);
  check::GivenAmounts given{};
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (quota.given[r] && r != efa) given[r] = quota.nominal[r];
  }
  const model::Resources nominal = check::resolve_quota_nominal(type, quota.instances, given, quota.partitions);
  if (!borrow_limit) return nominal[efa] == quota.nominal[efa];
  if (team.borrow_limit_unlimited) return false;
  const model::Resources derived =
      check::resolve_borrowing_limit(quota.nominal, team.borrow_limit_percent, check::GivenAmounts{}, team.sharing);
  return derived[efa] == quota.borrowing_limit[efa];
}

/// The team's weight as HyperPod's FairShareWeight (a whole number 0–100): the weight, or under
/// --allow-lossy the nearest whole number within the range.
int64_t hyperpod_weight_of(const check::Team& team) {
  const int64_t micros = team.fair_share_weight_micros;
  const int64_t nearest = (micros + model::kWeightScale / 2) / model::kWeightScale;
  return std::clamp<int64_t>(nearest, 0, 100);
}

/// HyperPod's API takes the instance type (its ClusterInstanceType enum; `hyperpod = false` in the
/// catalog marks the types outside it). The others are E0401, and dropped under --allow-lossy.
bool accepted(const check::Policy& policy, const check::Quota& quota) {
  const std::vector<check::InstanceType>& types = policy.types();
  return quota.type >= types.size() || types[quota.type].hyperpod;
}

/// A dont-lend team may still borrow (docs/semantics.md), so its limits are written like a
/// lend-and-borrow team's; a lend team never borrows, and its limits are written only when the
/// policy states them (they have no effect, W0104, but the import gives them back).
bool writes_borrow_limits(const check::Team& team) {
  if (team.sharing != model::Sharing::lend) return true;
  if (team.borrow_limit_given) return true;
  for (const check::Quota& quota : team.quotas) {
    for (bool absolute : quota.absolute_borrow_limit) {
      if (absolute) return true;
    }
  }
  return false;
}

const check::PartitionQuota* first_partition(const check::Quota& quota) {
  return quota.partitions.empty() ? nullptr : &quota.partitions.front();
}

std::string_view strategy(model::Sharing sharing) {
  switch (sharing) {
    case model::Sharing::lend_and_borrow: return "LendAndBorrow";
    case model::Sharing::lend: return "Lend";
    case model::Sharing::dont_lend: return "DontLend";
  }
  return "LendAndBorrow";
}

/// The members a create and an update of a team's compute quota share (Description,
/// ComputeQuotaConfig, ComputeQuotaTarget, ActivationState).
void compute_quota_members(JsonWriter& out, const check::Policy& policy, const check::Team& team) {
  out.field("Description", fmt::format("team {} of a gov policy (gov export hyperpod)", team.name));
  out.key("ComputeQuotaConfig");
  out.begin_object();
  out.key("ComputeQuotaResources");
  out.begin_array();
  for (const check::Quota& quota : team.quotas) {
    if (!accepted(policy, quota)) continue;
    const check::PartitionQuota* partition = first_partition(quota);
    resource_config(out, quota, quota.nominal, quota.given, quota.instances, partition, partition ? partition->nominal : 0);
  }
  out.end_array();
  out.key("ResourceSharingConfig");
  out.begin_object();
  out.field("Strategy", strategy(team.sharing));
  if (writes_borrow_limits(team)) {
    // `borrow-limit = unlimited` has no HyperPod form (E0401); under --allow-lossy it is the API
    // model's largest percentage, and a quota's `borrow-limit = unlimited` is left out.
    out.field("BorrowLimit", team.borrow_limit_unlimited ? kMaxApiBorrowLimit : int64_t{team.borrow_limit_percent});
    bool any_absolute = false;
    const auto absolute_partition = [](const check::Quota& quota) {
      const check::PartitionQuota* p = first_partition(quota);
      return p && p->absolute_borrow_limit && !quota.borrow_limit_unlimited ? p : nullptr;
    };
    // A resource's `unlimited` has no member (E0401): under --allow-lossy it is left out.
    const auto limited = [](const check::Quota& quota) {
      std::array<bool, model::kResourceCount> mask{};
      for (size_t r = 0; r < model::kResourceCount; ++r) {
        mask[r] = quota.absolute_borrow_limit[r] && quota.borrowing_limit[r] != model::kUnlimited;
      }
      return mask;
    };
    for (const check::Quota& quota : team.quotas) {
      if (quota.borrow_limit_unlimited) continue;
      for (bool absolute : limited(quota)) any_absolute = any_absolute || (absolute && accepted(policy, quota));
      any_absolute = any_absolute || (absolute_partition(quota) && accepted(policy, quota));
    }
    if (any_absolute) {
      out.key("AbsoluteBorrowLimits");
      out.begin_array();
      for (const check::Quota& quota : team.quotas) {
        bool any = false;
        for (bool absolute : limited(quota)) any = any || (absolute && !quota.borrow_limit_unlimited);
        // As written: `instances = N` is the entry's Count, amounts its members.
        const check::PartitionQuota* partition = absolute_partition(quota);
        if ((any || partition) && accepted(policy, quota)) {
          std::array<bool, model::kResourceCount> written = limited(quota);
          for (size_t r = 0; r < model::kResourceCount; ++r) written[r] = written[r] && quota.borrow_limit_given[r];
          resource_config(out, quota, quota.borrowing_limit, written, quota.borrow_limit_instances,
                          partition, partition ? partition->borrowing_limit : 0);
        }
      }
      out.end_array();
    }
  }
  out.end_object();
  out.field("PreemptTeamTasks", team.preempt_team_tasks == model::WithinTeam::never ? "Never" : "LowerPriority");
  out.end_object();
  out.key("ComputeQuotaTarget");
  out.begin_object();
  out.field("TeamName", team.name);
  // A weight HyperPod cannot take is E0401; --allow-lossy writes the nearest it can.
  out.field("FairShareWeight", hyperpod_weight_of(team));
  out.end_object();
  out.field("ActivationState", team.active ? "Enabled" : "Disabled");
}

void compute_quota(JsonWriter& out, const check::Policy& policy, const check::Team& team, const ExportOptions& options) {
  out.begin_object();
  cluster_arn(out, options);
  out.field("Name", compute_quota_name(team.name));
  compute_quota_members(out, policy, team);
  out.end_object();
}

/// A CloudFormation logical id for a team's quota: `ComputeQuota` and the team's name in
/// UpperCamelCase (letters and digits only), numbered when two teams would share one.
std::string logical_id(std::string_view team, std::set<std::string>& taken) {
  std::string id = "ComputeQuota";
  bool upper = true;
  for (char c : team) {
    if (c == '-' || c == '.') {
      upper = true;
      continue;
    }
    id += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  std::string unique = id;
  for (int n = 2; !taken.insert(unique).second; ++n) unique = fmt::format("{}{}", id, n);
  return unique;
}

/// One CloudFormation template: the cluster's ARN as a parameter, the cluster policy and one
/// compute quota per team (each after the cluster policy, as the script runs them). The resources'
/// properties are the create requests' members (CloudFormation mirrors the API).
std::string cloudformation(const check::Policy& policy, const ExportOptions& options, const std::vector<Dropped>& dropped) {
  JsonWriter out(/*indented=*/true);
  out.begin_object();
  out.field("AWSTemplateFormatVersion", "2010-09-09");
  out.field("Description", "SageMaker HyperPod task governance of a gov policy (gov export hyperpod --format cloudformation)");
  if (!dropped.empty()) {
    // JSON has no comments: what --allow-lossy dropped is the template's metadata.
    out.key("Metadata");
    out.begin_object();
    out.key("gov");
    out.begin_object();
    out.key("DroppedByAllowLossy");
    out.begin_array();
    for (const Dropped& construct : dropped) out.string(construct.what);
    out.end_array();
    out.end_object();
    out.end_object();
  }
  out.key("Parameters");
  out.begin_object();
  out.key(kArnParameter);
  out.begin_object();
  out.field("Type", "String");
  out.field("Description", "the ARN of the SageMaker HyperPod cluster the policy governs");
  out.field("AllowedPattern", kClusterArnPattern);
  if (!options.cluster_arn.empty()) out.field("Default", options.cluster_arn);
  out.end_object();
  out.end_object();
  out.key("Resources");
  out.begin_object();
  out.key(kSchedulerConfigResource);
  out.begin_object();
  out.field("Type", "AWS::SageMaker::ClusterSchedulerConfig");
  out.key("Properties");
  scheduler_config(out, policy, options);
  out.end_object();
  std::set<std::string> taken = {std::string(kSchedulerConfigResource)};
  for (const check::Team& team : policy.teams) {
    out.key(logical_id(team.name, taken));
    out.begin_object();
    out.field("Type", "AWS::SageMaker::ComputeQuota");
    out.field("DependsOn", kSchedulerConfigResource);
    out.key("Properties");
    compute_quota(out, policy, team, options);
    out.end_object();
  }
  out.end_object();
  out.end_object();
  return out.finish();
}

/// One command of the script: an `aws sagemaker` operation with its input document (a file of
/// the export) or, for a delete, the id it takes.
struct Step {
  std::string operation;  // "create-compute-quota"
  std::string file;       // the --cli-input-json document; empty for a delete
  std::string id;         // delete: the --compute-quota-id
  std::string comment;    // delete: which team it was
};

std::string script(const ExportOptions& options, const std::vector<Dropped>& dropped, const std::vector<Step>& steps) {
  std::string out = "#!/bin/sh\n" + dropped_comment(dropped);
  out += options.current
             ? "# Brings a SageMaker HyperPod cluster's task governance to the policy (gov export hyperpod --current):\n"
               "# the cluster policy, then deletes, updates and creates of compute quotas, only what changed.\n"
             : "# Creates the cluster policy, then one compute quota per team, on a SageMaker HyperPod cluster\n"
               "# (gov export hyperpod).\n";
  out += "# Needs the AWS CLI with credentials for the cluster's account.\nset -eu\ndir=$(dirname \"$0\")\n";
  // Only a create names the cluster; updates and deletes name the object.
  const bool creates = std::any_of(steps.begin(), steps.end(), [](const Step& s) { return s.operation.starts_with("create-"); });
  std::string arn;
  if (options.cluster_arn.empty() && creates) {
    out += ": \"${CLUSTER_ARN:?set CLUSTER_ARN to the ARN of the cluster, or export with --cluster-arn}\"\n";
    arn = " --cluster-arn \"$CLUSTER_ARN\"";
  }
  for (const Step& step : steps) {
    if (step.file.empty()) {
      out += fmt::format("aws sagemaker {} --compute-quota-id {}  # {}\n", step.operation, step.id, step.comment);
      continue;
    }
    out += fmt::format("aws sagemaker {}{} --cli-input-json \"file://$dir/{}\"\n", step.operation,
                       step.operation.starts_with("create-") ? arn : "", step.file);
  }
  return out;
}

/// A document gov wrote, in the canonical form the cluster's current objects are compared in.
std::string canonical_text(const std::string& document, bool quota) {
  const support::Expected<trace::JsonValue> parsed = trace::parse_json(document);
  GOV_ASSERT(static_cast<bool>(parsed), "gov's own JSON parses");
  return quota ? canonical_compute_quota(parsed.value()) : canonical_scheduler_config(parsed.value());
}

/// The documents and steps of an export against the cluster's current objects (`--current`):
/// the cluster policy created or updated when it differs; compute quotas deleted (teams the policy
/// no longer has), updated (teams whose quota differs) and created (new teams), in that order so
/// that quota freed by a delete or a smaller update is there for what follows. Updates carry the
/// described version as TargetVersion.
void against_current(const check::Policy& policy, const ExportOptions& options, const HyperpodState& current,
                     std::vector<ExportedFile>& files, std::vector<Step>& steps) {
  JsonWriter config(/*indented=*/true);
  scheduler_config(config, policy, options);
  std::string config_text = config.finish();
  if (!current.scheduler_config) {
    files.push_back({std::string(kSchedulerConfigFile), std::move(config_text)});
    steps.push_back({"create-cluster-scheduler-config", std::string(kSchedulerConfigFile), {}, {}});
  } else if (canonical_text(config_text, /*quota=*/false) != current.scheduler_config->canonical) {
    JsonWriter update(/*indented=*/true);
    update.begin_object();
    update.field("ClusterSchedulerConfigId", current.scheduler_config->id);
    update.field("TargetVersion", current.scheduler_config->version);
    scheduler_config_members(update, policy);
    update.end_object();
    const std::string name = "update-" + std::string(kSchedulerConfigFile);
    files.push_back({name, update.finish()});
    steps.push_back({"update-cluster-scheduler-config", name, {}, {}});
  }
  std::set<std::string_view> teams;
  for (const check::Team& team : policy.teams) teams.insert(team.name);
  for (const auto& [team, quota] : current.quotas) {
    if (!teams.count(team)) steps.push_back({"delete-compute-quota", {}, quota.id, fmt::format("team {}", team)});
  }
  std::vector<Step> creates;
  for (const check::Team& team : policy.teams) {
    JsonWriter create(/*indented=*/true);
    compute_quota(create, policy, team, options);
    std::string create_text = create.finish();
    const auto found = current.quotas.find(team.name);
    if (found == current.quotas.end()) {
      files.push_back({compute_quota_file(team.name), std::move(create_text)});
      creates.push_back({"create-compute-quota", compute_quota_file(team.name), {}, {}});
      continue;
    }
    if (canonical_text(create_text, /*quota=*/true) == found->second.canonical) continue;
    JsonWriter update(/*indented=*/true);
    update.begin_object();
    update.field("ComputeQuotaId", found->second.id);
    update.field("TargetVersion", found->second.version);
    compute_quota_members(update, policy, team);
    update.end_object();
    const std::string name = "update-" + compute_quota_file(team.name);
    files.push_back({name, update.finish()});
    steps.push_back({"update-compute-quota", name, {}, {}});
  }
  for (Step& step : creates) steps.push_back(std::move(step));
}

}  // namespace

std::string scheduler_config_name(const check::Policy& policy) {
  return entity_name(policy.cluster ? policy.cluster->name : "gov");
}

std::string compute_quota_name(std::string_view team) { return entity_name(team); }

std::string compute_quota_file(std::string_view team) { return fmt::format("compute-quota-{}.json", team); }

std::vector<ExportedFile> export_hyperpod(const check::Policy& policy, const ExportOptions& options,
                                          const std::vector<Dropped>& dropped) {
  std::vector<ExportedFile> files;
  if (options.format == HyperpodFormat::cloudformation) {
    files.push_back({std::string(kCloudFormationFile), cloudformation(policy, options, dropped)});
    return files;
  }
  std::vector<Step> steps;
  if (options.current) {
    against_current(policy, options, *options.current, files, steps);
    if (steps.empty()) return files;  // the cluster has the policy already: nothing to run
  } else {
    JsonWriter config(/*indented=*/true);
    scheduler_config(config, policy, options);
    files.push_back({std::string(kSchedulerConfigFile), config.finish()});
    steps.push_back({"create-cluster-scheduler-config", std::string(kSchedulerConfigFile), {}, {}});
    for (const check::Team& team : policy.teams) {
      JsonWriter quota(/*indented=*/true);
      compute_quota(quota, policy, team, options);
      files.push_back({compute_quota_file(team.name), quota.finish()});
      steps.push_back({"create-compute-quota", compute_quota_file(team.name), {}, {}});
    }
  }
  files.push_back({std::string(kScriptFile), script(options, dropped, steps)});
  return files;
}

std::vector<Dropped> hyperpod_not_expressible(const check::Policy& policy) {
  std::vector<Dropped> out;
  const check::Settings settings = policy.settings.value_or(check::Settings{});
  if (settings.prioritization == check::Prioritization::fcfs && !policy.classes.empty()) {
    out.push_back({"priority classes under `task-prioritization = fcfs`: HyperPod's first-come-first-served "
                   "policy has no classes",
                   policy.classes.front().where});
  }
  // Written out as HyperPod fixes them (Kueue's default, which `gov import kueue` writes for a
  // Cohort gov exported) is no loss: only another list is (a migration helper's round trip).
  if (settings.fair_share_strategies_at && settings.fair_share_strategies != check::Settings{}.fair_share_strategies) {
    out.push_back({"`fair-share-preemption`: HyperPod fixes Kueue's fair-sharing strategies to "
                   "[less-than-or-equal-to-final-share, less-than-initial-share]",
                   *settings.fair_share_strategies_at});
  }
  if (policy.cohort && !policy.cohort->quotas.empty()) {
    out.push_back({fmt::format("the quota of cohort `{}`: HyperPod has no cohort quota (its `IdleResourceSharing` lends the "
                               "capacity no team is guaranteed)",
                               policy.cohort->name),
                   policy.cohort->where});
  }
  if (!policy.cohort_tree.empty()) {
    out.push_back({fmt::format("the tree of cohorts (cohort `{}` and {} more): HyperPod has one flat cohort",
                               policy.cohort_tree.front().name, policy.cohort_tree.size() - 1),
                   policy.cohort_tree.front().where});
  }
  for (const check::Team& team : policy.teams) {
    const auto control = [&](bool differs, std::string what, const std::optional<Location>& at) {
      if (differs) out.push_back({fmt::format("team `{}`: {}", team.name, what), at.value_or(team.where)});
    };
    control(team.preempt_team_tasks == model::WithinTeam::lower_or_newer_equal_priority,
            "`preempt-team-tasks = lower-or-newer-equal-priority`: PreemptTeamTasks is Never or LowerPriority",
            team.preempt_team_tasks_at);
    control(team.reclaim_within_cohort != model::ReclaimWithinCohort::any,
            "`reclaim-within-cohort`: HyperPod always reclaims from any borrower", team.reclaim_within_cohort_at);
    control(team.borrow_within_cohort != model::BorrowWithinCohort::lower_priority && team.borrow_within_cohort_at &&
                team.reclaim_within_cohort == model::ReclaimWithinCohort::any,
            "`borrow-within-cohort`: HyperPod always preempts lower-priority borrowers while borrowing",
            team.borrow_within_cohort_at);
    control(team.borrow_priority_threshold >= 0, "`max-priority-threshold`: HyperPod has no threshold",
            team.borrow_priority_threshold_at);
    control(team.queueing != model::Queueing::best_effort_fifo, "`queueing = strict-fifo`: HyperPod queues best-effort FIFO",
            team.queueing_at);
    // HyperPod writes one resource group per instance type, covering all its resources
    // (docs/semantics-decisions.md "Resource groups"): `--allow-lossy` exports each quota as its own.
    control(!team.groups.empty(),
            "`resource-groups`: HyperPod gives each instance type's resources together (one resource group per instance type)",
            team.groups.empty() ? std::nullopt : std::optional<Location>(team.groups.front().where));
    control(team.when_can_borrow != model::WhenCanBorrow::try_next_flavor ||
                team.when_can_preempt != model::WhenCanPreempt::try_next_flavor ||
                team.flavor_preference != model::FlavorPreference::borrowing_over_preemption,
            "flavor fungibility (`when-can-borrow`, `when-can-preempt`, `flavor-preference`): HyperPod fixes them",
            team.fungibility_at);
    control(!model::hyperpod_weight(team.fair_share_weight_micros),
            fmt::format("`fair-share-weight = {}`: HyperPod's FairShareWeight is a whole number from 0 to 100 "
                        "(`--allow-lossy` writes {})",
                        model::weight_text(team.fair_share_weight_micros), hyperpod_weight_of(team)),
            team.fair_share_weight_at);
    control(team.borrow_limit_unlimited,
            fmt::format("`borrow-limit = unlimited`: HyperPod's BorrowLimit is a percentage (`--allow-lossy` writes {}%)",
                        kMaxApiBorrowLimit),
            team.borrow_limit_at);
    for (const check::Quota& quota : team.quotas) {
      if (quota.borrow_limit_unlimited && accepted(policy, quota)) {
        out.push_back({fmt::format("team `{}`: `borrow-limit = unlimited` of `{}`: HyperPod's AbsoluteBorrowLimits take "
                                   "amounts (`--allow-lossy` leaves it out, and the team's borrow limit applies)",
                                   team.name, quota.type_name),
                       quota.where});
      }
      if (!quota.borrow_limit_unlimited && accepted(policy, quota)) {
        for (model::Resource r : model::kAllResources) {
          if (!quota.absolute_borrow_limit[model::index(r)] || quota.borrowing_limit[model::index(r)] != model::kUnlimited) continue;
          out.push_back({fmt::format("team `{}`: `borrow-limit = {{ {} = unlimited }}` of `{}`: HyperPod's "
                                     "AbsoluteBorrowLimits take amounts (`--allow-lossy` leaves `{}` out, and {} applies "
                                     "to it)",
                                     team.name, check::resource_word(r), quota.type_name, check::resource_word(r),
                                     quota.borrow_limit_instances ? "the entry's Count" : "the team's borrow limit"),
                         quota.borrow_limit_at[model::index(r)].value_or(quota.where)});
        }
      }
      if (!accepted(policy, quota)) {
        out.push_back({fmt::format("team `{}`: the quota for `{}`: HyperPod's API does not accept the instance type "
                                   "(`hyperpod = false` in the catalog)",
                                   team.name, quota.type_name),
                       quota.where});
        continue;
      }
      bool lends_less = false;
      for (bool given : quota.lending_limit_given) lends_less = lends_less || given;
      if (lends_less && team.sharing != model::Sharing::dont_lend) {
        out.push_back({fmt::format("team `{}`: the lending limit of `{}`: HyperPod lends all of a quota or none of it "
                                   "(`sharing`)",
                                   team.name, quota.type_name),
                       quota.where});
      }
      if (quota.partitions.size() > 1) {
        out.push_back({fmt::format("team `{}`: the partitions of `{}`: HyperPod's quota entry takes one "
                                   "`AcceleratorPartition`, and this quota gives {} profiles",
                                   team.name, quota.type_name, quota.partitions.size()),
                       quota.partitions[1].where});
      }
      for (const check::PartitionQuota& p : quota.partitions) {
        if (!model::in_hyperpod_partition_enum(p.profile)) {
          out.push_back({fmt::format("team `{}`: `{}` partitions of `{}`: HyperPod's `AcceleratorPartition` type does "
                                     "not accept the profile",
                                     team.name, p.profile, quota.type_name),
                         p.where});
        }
        if (p.lending_limit_given && team.sharing != model::Sharing::dont_lend) {
          out.push_back({fmt::format("team `{}`: the lending limit of `{}` partitions of `{}`: HyperPod lends all of a "
                                     "quota or none of it (`sharing`)",
                                     team.name, p.profile, quota.type_name),
                         p.where});
        }
      }
      // An instance count (the quota's or its borrow limit's) covers EFA as HyperPod does; a written
      // EFA amount has no member, unless it is the one HyperPod derives (a policy imported from
      // HyperPod's own ClusterQueue writes it: a migration helper's finding).
      if ((quota.given[model::index(model::Resource::efa)] && !efa_as_hyperpod_derives(policy, team, quota, false)) ||
          (quota.borrow_limit_given[model::index(model::Resource::efa)] && !efa_as_hyperpod_derives(policy, team, quota, true))) {
        out.push_back({fmt::format("team `{}`: the EFA amount of `{}`: HyperPod's quotas have no EFA member", team.name,
                                   quota.type_name),
                       quota.where});
      }
    }
  }
  return out;
}

void hyperpod_warnings(const check::Policy& policy, Diagnostics& out) {
  // The cluster policy's Name is an EntityName: another name would be refused, so it is rewritten,
  // and said (a round trip through gov import then names the cluster differently).
  if (policy.cluster && scheduler_config_name(policy) != policy.cluster->name) {
    Diagnostic& d = out.report(make_diagnostic(
        Code::cluster_name_rewritten, policy.cluster->name_at,
        fmt::format("HyperPod's cluster policy cannot be named `{}`; it is exported as `{}`", policy.cluster->name,
                    scheduler_config_name(policy)),
        "not a HyperPod name"));
    d.help = "HyperPod names take letters, digits and hyphens, at most 63 of them: name the cluster `" +
             scheduler_config_name(policy) + "` to export it as it is written";
  }
  for (const check::Team& team : policy.teams) {
    // The default (50) is inside the range; only a written limit can be outside it.
    if (!team.borrow_limit_at || team.borrow_limit_unlimited) continue;  // unlimited is E0401
    if (team.borrow_limit_percent >= kDocumentedBorrowLimit.first && team.borrow_limit_percent <= kDocumentedBorrowLimit.second) {
      continue;
    }
    Diagnostic& d = out.report(make_diagnostic(
        Code::borrow_limit_outside_documented_range, *team.borrow_limit_at,
        fmt::format("the borrow limit of team `{}` is {}%; HyperPod's documentation gives {}% to {}%", team.name,
                    team.borrow_limit_percent, kDocumentedBorrowLimit.first, kDocumentedBorrowLimit.second),
        "outside the documented range"));
    if (team.borrow_limit_percent > kDocumentedBorrowLimit.second) {
      d.help = "the API model accepts 0 to 10000, so it is exported as written, but the service may refuse it: use at "
               "most 500%, or absolute limits in the quotas (`borrow-limit = { gpus = 8 }`)";
    } else if (team.sharing == model::Sharing::lend) {
      d.help = "the API model accepts 0 to 10000, so it is exported as written; a `lend` team never borrows: remove "
               "`borrow-limit`";
    } else if (team.sharing == model::Sharing::lend_and_borrow) {
      d.help = "the API model accepts 0 to 10000, so it is exported as written; a team that lends and never borrows "
               "is `sharing = lend`, which HyperPod documents";
    } else {
      d.help = "the API model accepts 0 to 10000, so it is exported as written; HyperPod has no other way to say "
               "that a `dont-lend` team never borrows";
    }
  }
}

}  // namespace gov::bridge
