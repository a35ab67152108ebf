// The checker: GPU partitions (MIG profiles) in catalogs and quotas (docs/semantics-decisions.md,
// "GPU partitions (MIG)").
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "compiler/check/checker.hpp"
#include "compiler/check/quantities.hpp"
#include "compiler/check/quotas.hpp"
#include "compiler/model/arithmetic.hpp"
#include "compiler/model/partitions.hpp"

namespace gov::check {
namespace {

std::vector<std::string> profile_names(const InstanceType& type) {
  std::vector<std::string> out;
  for (const MigProfile& p : type.mig_profiles) out.push_back(p.name);
  return out;
}

/// `a`, `b`, `c`: names in backticks.
std::string quoted(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) out.push_back(fmt::format("`{}`", n));
  return fmt::format("{}", fmt::join(out, ", "));
}

/// The profile of `type` with as many compute slices as `wanted` and the nearest memory, or
/// nullptr (also when `wanted` is not a profile name).
const MigProfile* same_size_profile(const InstanceType& type, std::string_view wanted) {
  const std::optional<model::ProfileSize> size = model::parse_mig_profile(wanted);
  if (!size) return nullptr;
  const MigProfile* best = nullptr;
  int64_t best_distance = 0;
  for (const MigProfile& p : type.mig_profiles) {
    if (p.slices != size->slices) continue;
    const int64_t distance = std::llabs(model::parse_mig_profile(p.name)->memory_gb - size->memory_gb);
    if (!best || distance < best_distance) {
      best = &p;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

void Checker::mig_profiles(const Assignment& a, InstanceType& t) {
  for (const ast::MapEntry& entry : a.value().map) {
    const std::optional<model::ProfileSize> size = model::parse_mig_profile(entry.key.text);
    if (!size) {
      Diagnostic& d = report(Code::invalid_mig_profile, a.at(entry.key.span),
                             fmt::format("`{}` is not a MIG profile name", entry.key.text), "not `mig-<slices>g.<memory>gb`");
      d.help = "a profile is named by its compute slices (1 to 7) and memory, such as `mig-1g.10gb` or `mig-3g.40gb`";
      continue;
    }
    const std::optional<int64_t> per_gpu = count_in_range(
        *entry.value, a.source, fmt::format("the count of `{}` per GPU", entry.key.text), 1, model::kSlicesPerGpu);
    if (!per_gpu || t.mig_profile(entry.key.text)) continue;  // duplicates: reported by the schema check
    t.mig_profiles.push_back({entry.key.text, size->slices, *per_gpu});
  }
}

void Checker::mig_profiles_need_gpus(const ast::Instance& instance, SourceId source, const InstanceType& t) {
  const ast::Property* profiles = find_property(instance.properties, "mig-profiles");
  if (!profiles || t.per_instance[model::index(model::Resource::gpu)] > 0) return;
  Diagnostic& d = report(Code::invalid_mig_profile, {source, profiles->key.span},
                         fmt::format("instance type `{}` has MIG profiles but no GPUs", t.name), "no `gpus` to partition");
  d.help = "MIG partitions NVIDIA GPUs: give `gpus = N`, or remove `mig-profiles`";
}

bool Checker::quota_partitions(const QuotaDraft& draft, const InstanceType& type, SourceId source, const Team& team,
                               Quota& out) {
  bool ok = true;
  for (const ast::MapEntry& entry : draft.partitions->value->map) {
    const std::string& name = entry.key.text;
    const MigProfile* profile = type.mig_profile(name);
    if (!profile) {
      ok = false;
      if (type.mig_profiles.empty()) {
        Diagnostic& d = report(Code::unsupported_partition, {source, entry.key.span},
                               fmt::format("`{}` has no MIG profiles, so it has no `{}` partitions", type.name, name),
                               "no MIG on this type");
        d.help = "partitions need an instance type whose GPUs support MIG (the catalog lists its `mig-profiles`), such "
                 "as `ml.p4d.24xlarge` or `ml.p5.48xlarge`";
        d.notes.push_back({type.where, fmt::format("`{}` is defined here", type.name)});
        continue;
      }
      Diagnostic& d = report(Code::unsupported_partition, {source, entry.key.span},
                             fmt::format("`{}` does not support the MIG profile `{}`", type.name, name),
                             "not a profile of this type's GPUs");
      const std::vector<std::string> names = profile_names(type);
      if (const MigProfile* same = same_size_profile(type, name)) {
        d.help = fmt::format("did you mean `{}`? (the {}-slice profile of {}); `{}` supports {}", same->name, same->slices,
                             type.accelerator.empty() ? std::string("its GPUs") : fmt::format("`{}`", type.accelerator),
                             type.name, quoted(names));
      } else {
        d.help = did_you_mean(name, names).value_or(fmt::format("`{}` supports {}", type.name, quoted(names)));
      }
      d.notes.push_back({type.where, fmt::format("`{}` is defined here", type.name)});
      continue;
    }
    const std::optional<int64_t> count =
        count_in_range(*entry.value, source, fmt::format("the count of `{}`", name), 0, kMaxAmount);
    if (!count) {
      ok = false;
      continue;
    }
    if (out.partition(name)) continue;  // duplicates: reported by the schema check
    PartitionQuota p;
    p.profile = name;
    p.slices = profile->slices;
    p.nominal = *count;
    p.where = {source, entry.span};
    out.partitions.push_back(std::move(p));
  }
  if (!ok) return false;
  return partition_limits(draft, type, source, team, out) && partitions_fit_cluster(draft, type, source, out);
}

bool Checker::partition_limits(const QuotaDraft& draft, const InstanceType& type, SourceId source, const Team& team,
                               Quota& out) {
  const model::Amount gpus = type.per_instance[model::index(model::Resource::gpu)];
  // `instances = N` in a limit is N instances' worth of each profile.
  const auto instances_worth = [&](int64_t instances, const PartitionQuota& p) {
    return model::checked_mul(model::checked_mul(instances, gpus), type.mig_profile(p.profile)->per_gpu);
  };
  std::map<std::string, int64_t> absolute;
  bool ok = !draft.borrow_partitions || limit_partitions(*draft.borrow_partitions, "borrow-limit", type, source, out, absolute);
  for (PartitionQuota& p : out.partitions) {
    p.lending_limit = team.sharing == model::Sharing::dont_lend ? 0 : model::kUnlimited;
    p.borrow_limit_given = out.borrow_limit_unlimited || draft.borrow_instances || absolute.count(p.profile) > 0;
    if (team.sharing == model::Sharing::lend) {
      p.borrowing_limit = 0;
      continue;
    }
    p.borrowing_limit =
        team.borrow_limit_unlimited ? model::kUnlimited : model::mul_div_floor(p.nominal, team.borrow_limit_percent, 100);
    if (out.borrow_limit_unlimited) {
      p.borrowing_limit = model::kUnlimited;
      p.absolute_borrow_limit = true;
    } else if (auto it = absolute.find(p.profile); it != absolute.end()) {
      p.borrowing_limit = it->second;
      p.absolute_borrow_limit = true;
    } else if (draft.borrow_instances) {
      p.borrowing_limit = instances_worth(*draft.borrow_instances, p);
      p.absolute_borrow_limit = true;
    }
  }
  const ast::Property* lending = draft.lending;
  if (!lending || team.sharing == model::Sharing::dont_lend || lending->value->kind != ast::Value::Kind::block) return ok;
  // Read without the setters: Checker::lending_limit assigns the block (and reports its amounts).
  LendingDraft limits;
  limits.partitions = find_property(lending->value->block, "partitions");
  limits.instances_at = find_property(lending->value->block, "instances");
  if (limits.instances_at && limits.instances_at->value->kind == ast::Value::Kind::number) {
    const std::optional<int64_t> n = whole_number(limits.instances_at->value->number);
    if (n && *n >= 0 && *n <= kMaxAmount) limits.instances = n;
  }
  std::map<std::string, int64_t> lent;
  if (limits.partitions && !limit_partitions(*limits.partitions, "lending-limit", type, source, out, lent)) return false;
  bool lending_ok = true;
  for (PartitionQuota& p : out.partitions) {
    std::optional<int64_t> limit;
    const ast::Property* at = limits.instances_at;
    if (limits.instances) limit = instances_worth(*limits.instances, p);
    if (auto it = lent.find(p.profile); it != lent.end()) {
      limit = it->second;
      at = limits.partitions;
    }
    if (!limit) continue;
    if (*limit > p.nominal) {
      // One error per written limit: `instances` stands for every profile.
      if (at == limits.instances_at && !lending_ok) continue;
      lending_ok = false;
      Diagnostic& d = report(Code::lending_limit_above_nominal, {source, at->span},
                             fmt::format("the lending limit of `{}` partitions is {}, above the quota's nominal {} of `{}`",
                                         p.profile, *limit, p.nominal, type.name),
                             "more than the team holds");
      d.help = "a team can lend at most its own quota: lower the lending limit or raise the quota";
      continue;
    }
    p.lending_limit = *limit;
    p.lending_limit_given = true;
  }
  return ok && lending_ok;
}

bool Checker::limit_partitions(const ast::Property& p, std::string_view limit, const InstanceType& type, SourceId source,
                               const Quota& out, std::map<std::string, int64_t>& counts) {
  if (p.value->kind != ast::Value::Kind::map) return false;  // the schema reported it
  bool ok = true;
  for (const ast::MapEntry& entry : p.value->map) {
    if (!out.partition(entry.key.text)) {
      ok = false;
      Diagnostic& d = report(Code::unsupported_partition, {source, entry.key.span},
                             fmt::format("`{}` names `{}` partitions, which the quota for `{}` does not give", limit,
                                         entry.key.text, type.name),
                             "not in the quota's `partitions`");
      d.help = fmt::format("add `{}` to the quota's `partitions` (`{}: 0` for partitions the team only borrows)",
                           entry.key.text, entry.key.text);
      continue;
    }
    const std::optional<int64_t> count = count_in_range(
        *entry.value, source, fmt::format("the {} of `{}`", limit, entry.key.text), 0, kMaxAmount);
    if (!count) {
      ok = false;
      continue;
    }
    counts.emplace(entry.key.text, *count);
  }
  return ok;
}

bool Checker::partitions_fit_cluster(const QuotaDraft& draft, const InstanceType& type, SourceId source, const Quota& out) {
  const int64_t instances = policy_.capacity_of(out.type);
  if (instances <= 0) return true;  // W0102 (lint) says the cluster has none
  const model::Amount gpus_per_instance = type.per_instance[model::index(model::Resource::gpu)];
  const int64_t gpus = model::checked_mul(instances, gpus_per_instance);
  const auto instance_words = [&] {
    return fmt::format("{} × `{}`, {} GPUs", instances, type.name, gpus);
  };
  bool ok = true;
  for (const PartitionQuota& p : out.partitions) {
    const int64_t per_gpu = type.mig_profile(p.profile)->per_gpu;
    const int64_t most = model::checked_mul(gpus, per_gpu);
    if (p.nominal <= most) continue;
    ok = false;
    Diagnostic& d = report(Code::partitions_exceed_gpus, p.where,
                           fmt::format("{} `{}` partitions do not fit on the cluster's GPUs of `{}`: at most {}", p.nominal,
                                       p.profile, type.name, most),
                           "more than the GPUs hold");
    d.help = fmt::format("the cluster has {} and one GPU holds {} `{}`; lower the count or add capacity",
                         instance_words(), per_gpu, p.profile);
  }
  if (!ok) return false;
  // Compute slices: the partitions and whole GPUs of this quota against seven per GPU.
  const model::Amount whole = out.nominal[model::index(model::Resource::gpu)];
  int64_t slices = model::checked_mul(whole, model::kSlicesPerGpu);
  for (const PartitionQuota& p : out.partitions) slices = model::checked_add(slices, model::checked_mul(p.nominal, p.slices));
  const int64_t available = model::checked_mul(gpus, model::kSlicesPerGpu);
  if (slices <= available) return true;
  Diagnostic& d = report(Code::partitions_exceed_gpus, {source, draft.partitions->key.span},
                         fmt::format("the quota for `{}` takes {} compute slices{}; the cluster's GPUs of that type have {}",
                                     type.name, slices, whole > 0 ? fmt::format(" ({} whole GPUs and partitions)", whole) : "",
                                     available),
                         "more than the GPUs hold");
  d.help = fmt::format("the cluster has {}, 7 slices each; a `mig-<n>g` partition takes n slices and a whole GPU 7",
                       instance_words());
  return false;
}

void Checker::check_partition_profiles() {
  const std::vector<std::string> profiles = policy_.partition_profiles();
  if (profiles.size() <= model::kPartitionColumns) return;
  // Where the first profile beyond the limit is given.
  const std::string& extra = profiles[model::kPartitionColumns];
  for (const Team& team : policy_.teams) {
    for (const Quota& quota : team.quotas) {
      const PartitionQuota* p = quota.partition(extra);
      if (!p) continue;
      Diagnostic& d = report(Code::too_many_partition_profiles, p->where,
                             fmt::format("the policy's quotas use {} distinct MIG profiles; gov allows at most {}",
                                         profiles.size(), model::kPartitionColumns),
                             fmt::format("profile number {}", model::kPartitionColumns + 1));
      d.help = fmt::format("the engine keeps one column per profile (docs/limits.md); the profiles in use are {}",
                           quoted(profiles));
      return;
    }
  }
}

}  // namespace gov::check
