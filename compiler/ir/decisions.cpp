#include "compiler/ir/decisions.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

#include "compiler/ir/evaluator.hpp"

namespace gov::ir {

// ------------------------------------------------------------------ quota constants

QuotaTable quota_table(const Module& module) {
  QuotaTable table;
  table.team_count = module.teams.size();
  table.flavor_count = module.flavors.size();
  table.cells.resize(table.team_count * table.flavor_count);
  table.cohort_quota.resize(table.flavor_count);
  table.cohort_own.resize(table.flavor_count);
  std::vector<Resources> reserved(table.flavor_count);
  for (size_t t = 0; t < table.team_count; ++t) {
    const Team& team = module.teams[t];
    for (const FlavorQuota& quota : team.quotas) {
      assert(quota.flavor < table.flavor_count && "flavor index out of range");
      QuotaCell& cell = table.cells[t * table.flavor_count + quota.flavor];
      cell.present = true;
      cell.nominal = quota.nominal;
      cell.borrowing_limit = quota.borrowing_limit;
      for (Resource r : kAllResources) {
        const size_t i = index(r);
        Amount lending_limit = quota.lending_limit[i];
        if (team.sharing == Sharing::lend) cell.borrowing_limit[i] = 0;
        if (team.sharing == Sharing::dont_lend) lending_limit = 0;
        cell.lendable[i] = std::clamp<Amount>(lending_limit, 0, std::max<Amount>(0, cell.nominal[i]));
        cell.local[i] = checked_sub(cell.nominal[i], cell.lendable[i]);
        table.cohort_quota[quota.flavor][i] =
            checked_add(table.cohort_quota[quota.flavor][i], cell.lendable[i]);
        reserved[quota.flavor][i] = checked_add(reserved[quota.flavor][i], cell.nominal[i]);
      }
    }
  }
  if (module.settings.idle_resource_sharing) {
    for (size_t f = 0; f < table.flavor_count; ++f) {
      const Flavor& flavor = module.flavors[f];
      for (Resource r : kAllResources) {
        const size_t i = index(r);
        const Amount capacity = checked_mul(flavor.capacity, flavor.per_instance[i]);
        table.cohort_own[f][i] = std::max<Amount>(0, checked_sub(capacity, reserved[f][i]));
        table.cohort_quota[f][i] = checked_add(table.cohort_quota[f][i], table.cohort_own[f][i]);
      }
    }
  }
  return table;
}

Amount limit_add(Amount a, Amount b) {
  if (a == kUnlimited || b == kUnlimited) return kUnlimited;
  return checked_add(a, b);
}

// available = max(0, max(0, local − U) + min(quota − cohortU, L − max(0, U − local) + B)).
Amount available(const QuotaCell& cell, const Resources& cohort_quota, Resource r, Amount usage,
                 Amount cohort_usage) {
  const size_t i = index(r);
  const Amount private_left = std::max<Amount>(0, checked_sub(cell.local[i], usage));
  const Amount spill = std::max<Amount>(0, checked_sub(usage, cell.local[i]));
  const Amount cohort_left = checked_sub(cohort_quota[i], cohort_usage);
  const Amount limit_left = limit_add(checked_sub(cell.lendable[i], spill), cell.borrowing_limit[i]);
  return std::max<Amount>(0, checked_add(private_left, std::min(cohort_left, limit_left)));
}

Amount max_capacity(const QuotaCell& cell, const Resources& cohort_quota, Resource r) {
  const size_t i = index(r);
  return std::min(checked_add(cell.local[i], cohort_quota[i]),
                  limit_add(cell.nominal[i], cell.borrowing_limit[i]));
}

// ------------------------------------------------------------------ quota fit

FitResult fit(const QuotaTable& table, const FitInput& input) {
  if (input.team >= table.team_count || input.flavor >= table.flavor_count) return {};
  const QuotaCell& cell = table.cell(input.team, input.flavor);
  if (!cell.present) return {};
  const Resources& cohort_quota = table.cohort_quota[input.flavor];
  FitResult result;
  result.has_quota = 1;
  for (Resource r : kAllResources) {
    if (!is_charged(r)) continue;
    const size_t i = index(r);
    const auto bit = static_cast<uint8_t>(1u << i);
    const Amount amount = input.request[i];
    if (amount == 0) {
      result.fits |= bit;
      continue;
    }
    const Amount usage = input.usage[i];
    if (amount <= available(cell, cohort_quota, r, usage, input.cohort_usage[i])) result.fits |= bit;
    if (checked_add(usage, amount) > cell.nominal[i]) result.borrows |= bit;
    if (amount > max_capacity(cell, cohort_quota, r)) result.exceeds |= bit;
  }
  return result;
}

// ------------------------------------------------------------------ preemption policy

PreemptionPolicy within_team_policy(const Team& team) {
  switch (team.within_team) {
    case WithinTeam::never:
      return PreemptionPolicy::never;
    case WithinTeam::lower_priority:
      return PreemptionPolicy::lower_priority;
    case WithinTeam::lower_or_newer_equal_priority:
      return PreemptionPolicy::lower_or_newer_equal_priority;
  }
  return PreemptionPolicy::never;
}

PreemptionPolicy reclaim_policy(const Team& team) {
  switch (team.reclaim_within_cohort) {
    case ReclaimWithinCohort::never:
      return PreemptionPolicy::never;
    case ReclaimWithinCohort::lower_priority:
      return PreemptionPolicy::lower_priority;
    case ReclaimWithinCohort::any:
      return PreemptionPolicy::any;
  }
  return PreemptionPolicy::never;
}

// §5.1: LowerOrNewerEqualPriority compares queue-order timestamps (submission times here).
bool policy_allows(PreemptionPolicy policy, const PreemptionPair& pair) {
  switch (policy) {
    case PreemptionPolicy::never:
      return false;
    case PreemptionPolicy::lower_priority:
      return pair.candidate_priority < pair.preemptor_priority;
    case PreemptionPolicy::lower_or_newer_equal_priority:
      return pair.candidate_priority < pair.preemptor_priority ||
             (pair.candidate_priority == pair.preemptor_priority &&
              pair.preemptor_submitted < pair.candidate_submitted);
    case PreemptionPolicy::any:
      return true;
  }
  return false;
}

bool may_preempt(const Module& module, const PreemptionPair& pair) {
  if (pair.preemptor_team >= module.teams.size() || pair.candidate_team >= module.teams.size())
    return false;
  const Team& team = module.teams[pair.preemptor_team];
  const PreemptionPolicy policy = pair.candidate_team == pair.preemptor_team
                                      ? within_team_policy(team)
                                      : reclaim_policy(team);
  return policy_allows(policy, pair);
}

int32_t priority(const Module& module, int32_t class_index) {
  if (class_index < 0 || static_cast<size_t>(class_index) >= module.classes.size()) class_index = -1;
  return module.priority_of(class_index);
}

}  // namespace gov::ir
