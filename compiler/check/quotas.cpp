#include "compiler/check/quotas.hpp"

#include <algorithm>

#include "compiler/check/quantities.hpp"
#include "compiler/model/arithmetic.hpp"
#include "compiler/model/partitions.hpp"

namespace gov::check {

model::Resources resolve_nominal(const InstanceType& type, std::optional<int64_t> instances, const GivenAmounts& given) {
  model::Resources nominal{};
  if (instances) {
    for (size_t r = 0; r < model::kResourceCount; ++r) nominal[r] = *instances * type.per_instance[r];
  } else {
    // The largest ratio given / per-instance among the given resources, as a fraction.
    model::Amount ratio_num = 0, ratio_den = 1;
    for (size_t r = 0; r < model::kResourceCount; ++r) {
      if (!given[r] || type.per_instance[r] <= 0) continue;
      if (static_cast<Int128>(*given[r]) * ratio_den > static_cast<Int128>(ratio_num) * type.per_instance[r]) {
        ratio_num = *given[r];
        ratio_den = type.per_instance[r];
      }
    }
    for (model::Resource r : {model::Resource::vcpu, model::Resource::memory, model::Resource::efa}) {
      nominal[model::index(r)] = mul_div_floor(type.per_instance[model::index(r)], ratio_num, ratio_den);
    }
  }
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (given[r]) nominal[r] = *given[r];
  }
  return nominal;
}

model::Resources resolve_partition_nominal(const InstanceType& type, const GivenAmounts& given,
                                           int64_t partition_slices) {
  const model::Amount gpus = type.per_instance[model::index(model::Resource::gpu)];
  model::Resources nominal{};
  if (gpus <= 0) return nominal;  // the checker allows partitions on GPU types only
  // The accelerator share as a fraction, then the largest given ratio of vCPU and memory.
  const model::Amount given_gpus = given[model::index(model::Resource::gpu)].value_or(0);
  model::Amount ratio_num = model::checked_add(model::checked_mul(given_gpus, model::kSlicesPerGpu), partition_slices);
  model::Amount ratio_den = model::checked_mul(gpus, model::kSlicesPerGpu);
  for (model::Resource r : {model::Resource::vcpu, model::Resource::memory}) {
    const size_t i = model::index(r);
    if (!given[i] || type.per_instance[i] <= 0) continue;
    if (static_cast<Int128>(*given[i]) * ratio_den > static_cast<Int128>(ratio_num) * type.per_instance[i]) {
      ratio_num = *given[i];
      ratio_den = type.per_instance[i];
    }
  }
  // Whole vCPUs, whole GiB, whole interfaces: the CLI's integers.
  const auto share = [&](model::Resource r, model::Amount unit) {
    const model::Amount exact = mul_div_floor(type.per_instance[model::index(r)], ratio_num, ratio_den);
    return exact / unit * unit;
  };
  nominal[model::index(model::Resource::vcpu)] = share(model::Resource::vcpu, model::kMillicoresPerVcpu);
  nominal[model::index(model::Resource::memory)] = share(model::Resource::memory, model::kMebibytesPerGibibyte);
  nominal[model::index(model::Resource::efa)] = share(model::Resource::efa, 1);
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (given[r]) nominal[r] = *given[r];
  }
  return nominal;
}

model::Resources resolve_quota_nominal(const InstanceType& type, std::optional<int64_t> instances, const GivenAmounts& given,
                                       const std::vector<PartitionQuota>& partitions) {
  if (partitions.empty()) return resolve_nominal(type, instances, given);
  int64_t slices = 0;
  for (const PartitionQuota& p : partitions) slices = model::checked_add(slices, model::checked_mul(p.nominal, p.slices));
  return resolve_partition_nominal(type, given, slices);
}

model::Resources resolve_borrowing_limit(const model::Resources& nominal, std::optional<int32_t> percent,
                                         const GivenAmounts& absolute, model::Sharing sharing) {
  model::Resources limit{};
  if (sharing == model::Sharing::lend) return limit;
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (absolute[r]) limit[r] = *absolute[r];
    else limit[r] = percent ? mul_div_floor(nominal[r], *percent, 100) : model::kUnlimited;
  }
  return limit;
}

model::Resources resolve_lending_limit(model::Sharing sharing) {
  if (sharing == model::Sharing::dont_lend) return model::Resources{};
  return {model::kUnlimited, model::kUnlimited, model::kUnlimited, model::kUnlimited, model::kUnlimited};
}

model::Resources resolve_lending_limit(const InstanceType& type, std::optional<int64_t> instances,
                                    const GivenAmounts& given) {
  model::Resources limit = resolve_lending_limit(model::Sharing::lend_and_borrow);
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (instances) limit[r] = *instances * type.per_instance[r];
    if (given[r]) limit[r] = *given[r];
  }
  return limit;
}

namespace {

const Quota* quota_of(const std::vector<Quota>& quotas, size_t type) {
  for (const Quota& q : quotas) {
    if (q.type == type) return &q;
  }
  return nullptr;
}

}  // namespace

bool group_covers(const Team& team, const Quota& quota, model::Resource r) {
  if (team.groups.empty()) return true;
  for (const ResourceGroup& group : team.groups) {
    for (const auto& [name, at] : group.flavors) {
      if (name == quota.type_name) return std::find(group.covers.begin(), group.covers.end(), r) != group.covers.end();
    }
  }
  return false;
}

model::Resources subtree_quota(const Policy& policy, size_t cohort, size_t type) {
  model::Resources sum{};
  const Cohort& node = policy.cohort_tree[cohort];
  if (const Quota* own = quota_of(node.quotas, type)) sum = own->nominal;
  for (const Team& team : policy.teams) {
    if (team.cohort_index != static_cast<int32_t>(cohort)) continue;
    const Quota* q = quota_of(team.quotas, type);
    if (!q) continue;
    for (size_t r = 0; r < model::kResourceCount; ++r) {
      if (!group_covers(team, *q, static_cast<model::Resource>(r))) continue;
      const model::Amount lendable = team.sharing == model::Sharing::dont_lend ? 0 : std::min(q->nominal[r], q->lending_limit[r]);
      sum[r] = model::checked_add(sum[r], std::max<model::Amount>(0, lendable));
    }
  }
  for (size_t c = 0; c < policy.cohort_tree.size(); ++c) {
    if (policy.cohort_tree[c].parent != static_cast<int32_t>(cohort) || c == cohort) continue;
    const model::Resources child = subtree_quota(policy, c, type);
    const Quota* limits = quota_of(policy.cohort_tree[c].quotas, type);
    for (size_t r = 0; r < model::kResourceCount; ++r) {
      const model::Amount lending = limits ? limits->lending_limit[r] : model::kUnlimited;
      const model::Amount local = lending == model::kUnlimited ? 0 : std::max<model::Amount>(0, model::checked_sub(child[r], lending));
      sum[r] = model::checked_add(sum[r], model::checked_sub(child[r], local));
    }
  }
  return sum;
}

bool subtree_has_type(const Policy& policy, size_t cohort, size_t type) {
  if (quota_of(policy.cohort_tree[cohort].quotas, type)) return true;
  for (const Team& team : policy.teams) {
    if (team.cohort_index == static_cast<int32_t>(cohort) && quota_of(team.quotas, type)) return true;
  }
  for (size_t c = 0; c < policy.cohort_tree.size(); ++c) {
    if (c != cohort && policy.cohort_tree[c].parent == static_cast<int32_t>(cohort) && subtree_has_type(policy, c, type))
      return true;
  }
  return false;
}

std::vector<Quota> idle_capacity_quotas(const Policy& policy) {
  std::vector<Quota> out;
  if (!policy.cluster) return out;
  for (const Capacity& capacity : policy.cluster->capacity) {
    const InstanceType& type = policy.types()[capacity.type];
    model::Resources reserved{};
    model::Amount slices = 0;  // of the partitions the quotas give
    bool quota_here = false;
    for (const Team& team : policy.teams) {
      for (const Quota& quota : team.quotas) {
        if (quota.type != capacity.type) continue;
        quota_here = true;
        for (size_t i = 0; i < reserved.size(); ++i) reserved[i] = model::checked_add(reserved[i], quota.nominal[i]);
        for (const PartitionQuota& p : quota.partitions)
          slices = model::checked_add(slices, model::checked_mul(p.nominal, p.slices));
      }
    }
    if (!quota_here) continue;
    // The GPUs partitions are cut from are no whole GPUs to lend (ir::gpus_cut_into_partitions,
    // which the engine's idle capacity uses).
    const size_t gpu = model::index(model::Resource::gpu);
    reserved[gpu] = model::checked_add(reserved[gpu], model::gpus_holding_slices(slices));
    Quota idle;
    idle.type = capacity.type;
    idle.type_name = type.name;
    bool any = false;
    for (size_t i = 0; i < idle.nominal.size(); ++i) {
      const model::Amount total = model::checked_mul(capacity.instances, type.per_instance[i]);
      idle.nominal[i] = std::max<model::Amount>(0, model::checked_sub(total, reserved[i]));
      any = any || idle.nominal[i] > 0;
    }
    if (any) out.push_back(std::move(idle));
  }
  return out;
}


}  // namespace gov::check
