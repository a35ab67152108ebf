// `gov export hyperpod`: a checked policy as SageMaker's task-governance API input: one
// create-cluster-scheduler-config document, one create-compute-quota document per team, and a
// script that runs them in order (`aws sagemaker … --cli-input-json file://…`).
#include "compiler/bridge/hyperpod_export.hpp"

#include <fmt/format.h>

#include "compiler/model/partitions.hpp"
#include "compiler/model/quantities.hpp"
#include "compiler/support/json_writer.hpp"

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
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty() || out.front() == '-') out = "gov" + out;
  return out.substr(0, 63);
}

void scheduler_config(JsonWriter& out, const check::Policy& policy, const ExportOptions& options) {
  const check::Settings settings = policy.settings.value_or(check::Settings{});
  out.begin_object();
  if (!options.cluster_arn.empty()) out.field("ClusterArn", options.cluster_arn);
  out.field("Name", scheduler_config_name(policy));
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
  out.end_object();
}

/// `partition` is the quota's one GPU partition and its count, when it has one (HyperPod's entry
/// holds one `AcceleratorPartition`; more is reported by hyperpod_not_expressible).
void resource_config(JsonWriter& out, const check::Quota& quota, const model::Resources& amounts,
                     const std::array<bool, model::kResourceCount>& given, bool count,
                     const check::PartitionQuota* partition = nullptr, int64_t partition_count = 0) {
  out.begin_object();
  out.field("InstanceType", quota.type_name);
  if (count && quota.instances) out.field("Count", *quota.instances);
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

void compute_quota(JsonWriter& out, const check::Team& team, const ExportOptions& options) {
  out.begin_object();
  if (!options.cluster_arn.empty()) out.field("ClusterArn", options.cluster_arn);
  out.field("Name", compute_quota_name(team.name));
  out.field("Description", fmt::format("team {} of a gov policy (gov export hyperpod)", team.name));
  out.key("ComputeQuotaConfig");
  out.begin_object();
  out.key("ComputeQuotaResources");
  out.begin_array();
  for (const check::Quota& quota : team.quotas) {
    const check::PartitionQuota* partition = first_partition(quota);
    resource_config(out, quota, quota.nominal, quota.given, /*count=*/true, partition, partition ? partition->nominal : 0);
  }
  out.end_array();
  out.key("ResourceSharingConfig");
  out.begin_object();
  out.field("Strategy", strategy(team.sharing));
  if (team.sharing == model::Sharing::lend_and_borrow) {
    out.field("BorrowLimit", int64_t{team.borrow_limit_percent});
    bool any_absolute = false;
    const auto absolute_partition = [](const check::Quota& quota) {
      const check::PartitionQuota* p = first_partition(quota);
      return p && p->absolute_borrow_limit ? p : nullptr;
    };
    for (const check::Quota& quota : team.quotas) {
      for (bool absolute : quota.absolute_borrow_limit) any_absolute = any_absolute || absolute;
      any_absolute = any_absolute || absolute_partition(quota);
    }
    if (any_absolute) {
      out.key("AbsoluteBorrowLimits");
      out.begin_array();
      for (const check::Quota& quota : team.quotas) {
        bool any = false;
        for (bool absolute : quota.absolute_borrow_limit) any = any || absolute;
        const check::PartitionQuota* partition = absolute_partition(quota);
        if (any || partition) {
          resource_config(out, quota, quota.borrowing_limit, quota.absolute_borrow_limit, /*count=*/false, partition,
                          partition ? partition->borrowing_limit : 0);
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
  out.field("FairShareWeight", int64_t{team.fair_share_weight});
  out.end_object();
  out.field("ActivationState", team.active ? "Enabled" : "Disabled");
  out.end_object();
}

std::string script(const check::Policy& policy, const ExportOptions& options) {
  std::string out =
      "#!/bin/sh\n"
      "# Creates the cluster policy, then one compute quota per team, on a SageMaker HyperPod cluster\n"
      "# (gov export hyperpod). Needs the AWS CLI with credentials for the cluster's account.\n"
      "set -eu\n"
      "dir=$(dirname \"$0\")\n";
  std::string arn;
  if (options.cluster_arn.empty()) {
    out += ": \"${CLUSTER_ARN:?set CLUSTER_ARN to the cluster's ARN, or export with --cluster-arn}\"\n";
    arn = " --cluster-arn \"$CLUSTER_ARN\"";
  }
  out += fmt::format("aws sagemaker create-cluster-scheduler-config{} --cli-input-json \"file://$dir/{}\"\n", arn,
                     kSchedulerConfigFile);
  for (const check::Team& team : policy.teams) {
    out += fmt::format("aws sagemaker create-compute-quota{} --cli-input-json \"file://$dir/{}\"\n", arn,
                       compute_quota_file(team.name));
  }
  return out;
}

}  // namespace

std::string scheduler_config_name(const check::Policy& policy) {
  return entity_name(policy.cluster ? policy.cluster->name : "gov");
}

std::string compute_quota_name(std::string_view team) { return entity_name(team); }

std::string compute_quota_file(std::string_view team) { return fmt::format("compute-quota-{}.json", team); }

std::vector<ExportedFile> export_hyperpod(const check::Policy& policy, const ExportOptions& options) {
  std::vector<ExportedFile> files;
  JsonWriter config(/*indented=*/true);
  scheduler_config(config, policy, options);
  files.push_back({std::string(kSchedulerConfigFile), config.finish()});
  for (const check::Team& team : policy.teams) {
    JsonWriter quota(/*indented=*/true);
    compute_quota(quota, team, options);
    files.push_back({compute_quota_file(team.name), quota.finish()});
  }
  files.push_back({std::string(kScriptFile), script(policy, options)});
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
  if (settings.fair_share_strategies_at) {
    out.push_back({"`fair-share-preemption`: HyperPod fixes Kueue's fair-sharing strategies", *settings.fair_share_strategies_at});
  }
  for (const check::Team& team : policy.teams) {
    const auto control = [&](bool differs, std::string what, const std::optional<Location>& at) {
      if (differs) out.push_back({fmt::format("team `{}`: {}", team.name, what), at.value_or(team.where)});
    };
    control(team.preempt_team_tasks == model::WithinTeam::lower_or_newer_equal_priority,
            "`preempt-team-tasks = lower-or-newer-equal-priority`: PreemptTeamTasks is Never or LowerPriority",
            std::nullopt);
    control(team.reclaim_within_cohort != model::ReclaimWithinCohort::any,
            "`reclaim-within-cohort`: HyperPod always reclaims from any borrower", team.reclaim_within_cohort_at);
    control(team.borrow_within_cohort != model::BorrowWithinCohort::lower_priority && team.borrow_within_cohort_at &&
                team.reclaim_within_cohort == model::ReclaimWithinCohort::any,
            "`borrow-within-cohort`: HyperPod always preempts lower-priority borrowers while borrowing",
            team.borrow_within_cohort_at);
    control(team.borrow_priority_threshold >= 0, "`max-priority-threshold`: HyperPod has no threshold",
            team.borrow_priority_threshold_at);
    control(team.queueing != model::Queueing::best_effort_fifo, "`queueing = strict-fifo`: HyperPod queues best-effort FIFO",
            std::nullopt);
    control(team.when_can_borrow != model::WhenCanBorrow::try_next_flavor ||
                team.when_can_preempt != model::WhenCanPreempt::try_next_flavor ||
                team.flavor_preference != model::FlavorPreference::borrowing_over_preemption,
            "flavor fungibility (`when-can-borrow`, `when-can-preempt`, `flavor-preference`): HyperPod fixes them",
            team.fungibility_at);
    for (const check::Quota& quota : team.quotas) {
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
      if (quota.given[model::index(model::Resource::efa)] ||
          (quota.absolute_borrow_limit[model::index(model::Resource::efa)])) {
        out.push_back({fmt::format("team `{}`: the EFA amount of `{}`: HyperPod's quotas have no EFA member", team.name,
                                   quota.type_name),
                       quota.where});
      }
    }
  }
  return out;
}

}  // namespace gov::bridge
