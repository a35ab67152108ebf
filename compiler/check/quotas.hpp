// Quota resolution (docs/semantics.md §2): from what a team wrote to nominal, borrowing and
// lending limits per resource, exactly as HyperPod's ClusterQueues show them.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "compiler/check/policy.hpp"

namespace gov::check {

using GivenAmounts = std::array<std::optional<model::Amount>, model::kResourceCount>;

/// Nominal quota per resource. Whole instances give n × each resource; fine-grained
/// amounts keep what is given and fill unspecified vCPU, memory and EFA with the largest
/// ratio among the given resources (rounded down to the base unit); unspecified
/// accelerators are 0. Given amounts also override the instance-derived ones.
model::Resources resolve_nominal(const InstanceType& type, std::optional<int64_t> instances, const GivenAmounts& given);

/// A quota's nominal amounts: resolve_nominal, or with GPU partitions resolve_partition_nominal of
/// their slices (the checker's, and what the HyperPod export compares a written EFA amount with).
model::Resources resolve_quota_nominal(const InstanceType& type, std::optional<int64_t> instances, const GivenAmounts& given,
                                       const std::vector<PartitionQuota>& partitions);

/// Nominal quota per resource of a quota with GPU partitions (HyperPod CLI's rule,
/// docs/semantics-decisions.md "GPU partitions (MIG)"): the accelerator share is `gpus / G +
/// Σ count × slices / (G × 7)` for G GPUs per instance; unspecified vCPU, memory and EFA are the
/// largest of that share and the ratios of the given vCPU and memory, rounded down to whole
/// vCPUs, GiB and interfaces. `partition_slices` is Σ count × slices. Given amounts are kept.
model::Resources resolve_partition_nominal(const InstanceType& type, const GivenAmounts& given,
                                           int64_t partition_slices);

/// Borrowing limit per resource: floor(nominal × percent / 100), or model::kUnlimited when
/// `percent` is nullopt (`borrow-limit = unlimited`), replaced by absolute limits where given
/// (which may be kUnlimited); 0 for a `lend` team.
model::Resources resolve_borrowing_limit(const model::Resources& nominal, std::optional<int32_t> percent,
                                         const GivenAmounts& absolute, model::Sharing sharing);

/// Lending limit per resource: 0 for `dont-lend` (nothing is visible to others), else
/// unlimited.
model::Resources resolve_lending_limit(model::Sharing sharing);

/// An explicit `lending-limit = { ... }` (Kueue's lendingLimit, absolute): `instances` lends
/// that many instances' worth of every resource, given amounts set (or override) single
/// resources, and resources given neither way stay unlimited (the team lends all of them).
model::Resources resolve_lending_limit(const InstanceType& type, std::optional<int64_t> instances,
                                    const GivenAmounts& given);

/// Whether `team` takes resource `r` from `quota`'s instance type: always without resource
/// groups; with them, only when the group that lists the type covers `r` (the quota's other
/// resolved amounts, derived from the instance's shape, are not quota: the engine, the exports,
/// inspect and the editor leave them out).
bool group_covers(const Team& team, const Quota& quota, model::Resource r);

/// The subtree quota of cohort `cohort` (an index into Policy::cohort_tree) in instance type
/// `type`, per resource: its own nominal quota plus what its teams (min(nominal, lending limit))
/// and its child cohorts (their subtree quota less what their lending limit keeps) lend it; Kueue's
/// SubtreeQuota (docs/semantics.md §2, "Cohort trees"); a team's resources its groups do not cover
/// count nothing (group_covers). Saturating; partitions are not included.
model::Resources subtree_quota(const Policy& policy, size_t cohort, size_t type);

/// Whether cohort `cohort`'s subtree (itself, its teams, its descendants and theirs) has a quota for
/// instance type `type`.
bool subtree_has_type(const Policy& policy, size_t cohort, size_t type);

/// The capacity no team is guaranteed, which `idle-resource-sharing = true` lends as the flat
/// cohort's own quota (docs/language.md; ir::quota_table's cohort_own; what `gov export kueue`
/// writes into the Cohort): per instance type the cluster has and a team has a quota in (a
/// ClusterQueue uses a flavor only through its own quota), capacity × per-instance resources − the
/// teams' nominal quotas, never negative. Partitions have no capacity of their own, so none. Types
/// where nothing is left are left out. Whatever the setting: callers look at it.
std::vector<Quota> idle_capacity_quotas(const Policy& policy);

}  // namespace gov::check
