#include "compiler/ir/decisions.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "compiler/support/assert.hpp"
#include "compiler/ir/evaluator.hpp"

namespace gov::ir {

// ------------------------------------------------------------------ quota constants

Amount gpus_cut_into_partitions(const Module& module, const Resources& amounts) {
  Amount slices = 0;
  for (size_t k = 0; k < module.partitions.size(); ++k) {
    const std::optional<model::ProfileSize> size = model::parse_mig_profile(module.partitions[k]);
    if (!size) continue;  // the checker admits no other profile
    slices = checked_add(slices, checked_mul(amounts[index(partition_column(k))], size->slices));
  }
  return model::gpus_holding_slices(slices);
}

DeclaredQuotas declared_quotas(const Module& module) {
  DeclaredQuotas table;
  table.team_count = module.teams.size();
  table.flavor_count = module.flavors.size();
  table.cohort_quota.resize(table.flavor_count);
  table.cohort_own.resize(table.flavor_count);
  std::vector<Resources> reserved(table.flavor_count);
  for (const Team& team : module.teams) {
    table.team_first.push_back(static_cast<uint32_t>(table.cells.size()));
    for (const FlavorQuota& quota : team.quotas) {
      GOV_ASSERT(quota.flavor < table.flavor_count, "flavor index out of range");
      QuotaCell& cell = table.cells.emplace_back();
      table.flavors.push_back(quota.flavor);
      cell.present = true;
      cell.nominal = quota.nominal;
      cell.borrowing_limit = quota.borrowing_limit;
      for (size_t i = 0; i < module.column_count(); ++i) {
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
  table.team_first.push_back(static_cast<uint32_t>(table.cells.size()));
  if (module.settings.idle_resource_sharing) {
    for (size_t f = 0; f < table.flavor_count; ++f) {
      const Flavor& flavor = module.flavors[f];
      // Partition columns have no capacity of their own (per_instance 0): MIG partitions exist
      // where quotas give them, not in idle capacity. The GPUs they are cut from are reserved
      // with them: a GPU that holds any partition is no whole GPU (docs/semantics-decisions.md,
      // "GPU partitions (MIG)").
      Resources held = reserved[f];
      const size_t gpu = index(Resource::gpu);
      held[gpu] = checked_add(held[gpu], gpus_cut_into_partitions(module, reserved[f]));
      for (size_t i = 0; i < module.column_count(); ++i) {
        const Amount capacity = checked_mul(flavor.capacity, flavor.per_instance[i]);
        table.cohort_own[f][i] = std::max<Amount>(0, checked_sub(capacity, held[i]));
        table.cohort_quota[f][i] = checked_add(table.cohort_quota[f][i], table.cohort_own[f][i]);
      }
    }
  }
  // The cohort's quota written explicitly: the same place in the formulas as idle capacity.
  for (const CohortQuota& own : module.cohort_quotas) {
    GOV_ASSERT(own.flavor < table.flavor_count, "flavor index out of range");
    for (size_t i = 0; i < module.column_count(); ++i) {
      table.cohort_own[own.flavor][i] = checked_add(table.cohort_own[own.flavor][i], own.nominal[i]);
      table.cohort_quota[own.flavor][i] = checked_add(table.cohort_quota[own.flavor][i], own.nominal[i]);
    }
  }
  return table;
}

QuotaTable quota_table(const Module& module) {
  DeclaredQuotas declared = declared_quotas(module);
  QuotaTable table;
  table.team_count = declared.team_count;
  table.flavor_count = declared.flavor_count;
  table.slots.assign(table.team_count * table.flavor_count, 0);
  table.cells.reserve(declared.cells.size() + 1);
  table.cells.emplace_back();  // slot 0: absent
  table.cells.insert(table.cells.end(), declared.cells.begin(), declared.cells.end());
  for (size_t t = 0; t < table.team_count; ++t) {
    for (uint32_t k = declared.team_first[t]; k < declared.team_first[t + 1]; ++k)
      table.slots[t * table.flavor_count + declared.flavors[k]] = k + 1;
  }
  table.cohort_quota = std::move(declared.cohort_quota);
  table.cohort_own = std::move(declared.cohort_own);
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

int64_t whole_seconds(int64_t millis) {
  // A floor division with no overflow at either end (the fuzzers give INT64_MIN).
  return millis / 1000 - (millis % 1000 < 0 ? 1 : 0);
}

// §5.1: LowerOrNewerEqualPriority compares queue-order timestamps (submission times here) as
// Kueue's creationTimestamps, which the API server keeps to the second: two tasks submitted in
// one second are equally new (a Kueue auditor's finding: gov compared milliseconds).
bool policy_allows(PreemptionPolicy policy, const PreemptionPair& pair) {
  switch (policy) {
    case PreemptionPolicy::never:
      return false;
    case PreemptionPolicy::lower_priority:
      return pair.candidate_priority < pair.preemptor_priority;
    case PreemptionPolicy::lower_or_newer_equal_priority:
      return pair.candidate_priority < pair.preemptor_priority ||
             (pair.candidate_priority == pair.preemptor_priority &&
              whole_seconds(pair.preemptor_submitted) < whole_seconds(pair.candidate_submitted));
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

FigureSlots figure_slots(const Module& module) {
  std::array<bool, kTeamStatCount * kResourceCount> team{};
  std::array<bool, kClusterStatCount * kResourceCount> cluster{};
  for (const Rule& rule : module.rules) {
    for (const Instr& in : rule.code) {
      const auto slot = static_cast<size_t>(in.imm);
      if (in.op == Op::team_stat && slot < team.size()) team[slot] = true;
      if (in.op == Op::cluster_stat && slot < cluster.size()) cluster[slot] = true;
    }
  }
  FigureSlots slots;
  for (uint8_t i = 0; i < team.size(); ++i) {
    if (team[i]) slots.team.push_back(i);
  }
  for (uint8_t i = 0; i < cluster.size(); ++i) {
    if (cluster[i]) slots.cluster.push_back(i);
  }
  return slots;
}

namespace {

/// a + b for the non-negative figures: saturates at the maximum, so that the order of the
/// instance types does not matter.
Amount add_figure(Amount a, Amount b) {
  Amount sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<Amount>::max() : sum;
}

Amount team_figure(uint8_t slot, const QuotaTable& table, const UsageView& view, uint32_t team,
                   uint32_t flavor) {
  const auto stat = static_cast<TeamStat>(slot / kResourceCount);
  const size_t r = slot % kResourceCount;
  const QuotaCell& cell = table.cell(team, flavor);
  const Amount used = view.usage[table.slot(team, flavor) * kColumnCount + r];
  switch (stat) {
    case TeamStat::nominal:
      return cell.nominal[r];
    case TeamStat::used:
      return used;
    case TeamStat::borrowed:
      return std::max<Amount>(0, checked_sub(used, cell.nominal[r]));
    case TeamStat::borrowing_limit:
      return cell.borrowing_limit[r];
    case TeamStat::available:
      return cell.present ? available(cell, table.cohort_quota[flavor], static_cast<Resource>(r),
                                      used, view.cohort_usage[flavor * kColumnCount + r])
                          : 0;
  }
  return 0;
}

Amount cluster_figure(uint8_t slot, const Module& module, const UsageView& view, uint32_t flavor) {
  const auto stat = static_cast<ClusterStat>(slot / kResourceCount);
  const size_t r = slot % kResourceCount;
  const Flavor& f = module.flavors[flavor];
  const Amount capacity = checked_mul(f.capacity, f.per_instance[r]);
  const Amount used = view.flavor_usage[flavor * kColumnCount + r];
  switch (stat) {
    case ClusterStat::capacity:
      return capacity;
    case ClusterStat::used:
      return used;
    case ClusterStat::available:
      return std::max<Amount>(0, checked_sub(capacity, used));
  }
  return 0;
}

}  // namespace

void fill_figures(const Module& module, const QuotaTable& table, const UsageView& usage,
                  uint32_t team, int32_t requested_flavor, const FigureSlots& slots,
                  RuleInput& input) {
  for (uint8_t slot : slots.team) input.team[slot] = 0;
  for (uint8_t slot : slots.cluster) input.cluster[slot] = 0;
  const auto add_flavor = [&](uint32_t flavor) {
    for (uint8_t slot : slots.team)
      input.team[slot] = add_figure(input.team[slot], team_figure(slot, table, usage, team, flavor));
    for (uint8_t slot : slots.cluster)
      input.cluster[slot] = add_figure(input.cluster[slot], cluster_figure(slot, module, usage, flavor));
  };
  if (requested_flavor >= 0) {
    add_flavor(static_cast<uint32_t>(requested_flavor));
    return;
  }
  for (const FlavorQuota& held : module.teams[team].quotas) add_flavor(held.flavor);
}

static_assert(static_cast<size_t>(TaskField::gpus) + index(Resource::efa) ==
                  static_cast<size_t>(TaskField::efa),
              "a task's request is its fields gpus..efa, in resource order");

bool decide_input_in_range(const Module& module, const DecideInput& input) {
  const int64_t team = input.task[static_cast<size_t>(TaskField::team)];
  const int64_t flavor = input.task[static_cast<size_t>(TaskField::flavor)];
  return team >= 0 && static_cast<uint64_t>(team) < module.teams.size() && flavor >= -1 &&
         flavor < static_cast<int64_t>(module.flavors.size());
}

DecideResult conclude(const Module& module, const QuotaTable& table, const DecideInput& input,
                      std::span<const uint8_t> verdicts) {
  DecideResult result;
  for (size_t i = 0; i < module.rules.size(); ++i) {
    if (!verdicts[i]) continue;
    if (module.rules[i].action == RuleAction::deny && result.deny_rule < 0) {
      result.deny_rule = static_cast<int32_t>(i);
    } else {
      ++result.warnings;
    }
  }
  return conclude_fit(module, table, input, result);
}

DecideResult conclude_fit(const Module& module, const QuotaTable& table, const DecideInput& input,
                          DecideResult result) {
  if (result.deny_rule >= 0) return result;  // a rejected task is not fitted
  const auto team = static_cast<uint32_t>(input.task[static_cast<size_t>(TaskField::team)]);
  const int64_t requested = input.task[static_cast<size_t>(TaskField::flavor)];
  if (!module.teams[team].active) return result;
  const Team& team_def = module.teams[team];
  const Amount* request = input.task + static_cast<size_t>(TaskField::gpus);
  int32_t borrowing_fit = -1;  // the first fit that borrows, when the team tries on for one that does not
  for (const FlavorQuota& quota : team_def.quotas) {
    if (requested >= 0 && quota.flavor != static_cast<uint64_t>(requested)) continue;
    const FitInput fit_input{team, quota.flavor, request,
                             input.usage.usage + table.slot(team, quota.flavor) * kColumnCount,
                             input.usage.cohort_usage + quota.flavor * kColumnCount};
    const FitResult answer = fit(table, fit_input);
    if (!answer.fits_all()) continue;
    if (answer.borrows == 0 || team_def.when_can_borrow == WhenCanBorrow::borrow) {
      result.flavor = static_cast<int32_t>(quota.flavor);
      result.borrows = answer.borrows != 0 ? 1 : 0;
      return result;
    }
    if (borrowing_fit < 0) borrowing_fit = static_cast<int32_t>(quota.flavor);
  }
  // No fit without borrowing: a borrowing fit beats any preemption, unless the team prefers
  // preemption over borrowing (then the cycle's preemption search decides: no answer here).
  if (borrowing_fit >= 0 && team_def.flavor_preference == FlavorPreference::borrowing_over_preemption) {
    result.flavor = borrowing_fit;
    result.borrows = 1;
  }
  return result;
}

int32_t priority(const Module& module, int32_t class_index) {
  if (class_index < 0 || static_cast<size_t>(class_index) >= module.classes.size()) class_index = -1;
  return module.priority_of(class_index);
}

}  // namespace gov::ir
