#include "runtime/engine/quota_state.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

namespace gov::engine {

Amount saturating_add(Amount a, Amount b) {
  if (a == ir::kUnlimited || b == ir::kUnlimited) return ir::kUnlimited;
  Amount sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    return b > 0 ? ir::kUnlimited : std::numeric_limits<Amount>::min();
  return sum;
}

namespace {

// HyperPod's sharing strategies as Kueue limits (SEMANTICS §2): `lend` never borrows,
// `dont-lend` lends nothing. The lowering may already have applied them; doing it again is
// harmless.
void apply_sharing(ir::Sharing sharing, Resources& borrowing_limit, Resources& lending_limit) {
  for (ir::Resource r : ir::kAllResources) {
    if (sharing == ir::Sharing::lend) borrowing_limit[ir::index(r)] = 0;
    if (sharing == ir::Sharing::dont_lend) lending_limit[ir::index(r)] = 0;
  }
}

}  // namespace

QuotaState::QuotaState(const ir::Module& module)
    : team_count_(module.teams.size()),
      flavor_count_(module.flavors.size()),
      cells_(team_count_ * flavor_count_),
      pool_(flavor_count_),
      pool_used_(flavor_count_),
      cohort_own_(flavor_count_),
      flavor_usage_(flavor_count_) {
  std::vector<Resources> reserved(flavor_count_);
  for (size_t t = 0; t < team_count_; ++t) {
    const ir::Team& team = module.teams[t];
    for (const ir::FlavorQuota& quota : team.quotas) {
      assert(quota.flavor < flavor_count_ && "flavor index out of range");
      Cell& c = cell(static_cast<uint32_t>(t), quota.flavor);
      c.present = true;
      c.nominal = quota.nominal;
      c.borrowing_limit = quota.borrowing_limit;
      Resources lending_limit = quota.lending_limit;
      apply_sharing(team.sharing, c.borrowing_limit, lending_limit);
      for (ir::Resource r : ir::kAllResources) {
        const size_t i = ir::index(r);
        c.lendable[i] = std::clamp<Amount>(lending_limit[i], 0, c.nominal[i]);
        c.local[i] = c.nominal[i] - c.lendable[i];
        pool_[quota.flavor][i] += c.lendable[i];
        reserved[quota.flavor][i] += c.nominal[i];
      }
    }
  }
  if (module.settings.idle_resource_sharing) {
    for (size_t f = 0; f < flavor_count_; ++f) {
      const ir::Flavor& flavor = module.flavors[f];
      for (ir::Resource r : ir::kAllResources) {
        const size_t i = ir::index(r);
        const Amount capacity = flavor.capacity * flavor.per_instance[i];
        cohort_own_[f][i] = std::max<Amount>(0, capacity - reserved[f][i]);
        pool_[f][i] += cohort_own_[f][i];
      }
    }
  }
  for (size_t f = 0; f < flavor_count_; ++f) {
    for (ir::Resource r : ir::kAllResources)
      lendable_total_[ir::index(r)] += pool_[f][ir::index(r)];
  }
}

void QuotaState::add(uint32_t team, uint32_t flavor, const Resources& amounts) {
  Cell& c = cell(team, flavor);
  for (ir::Resource r : kChargedResources) {
    const size_t i = ir::index(r);
    if (amounts[i] == 0) continue;
    const Amount spill_before = std::max<Amount>(0, c.usage[i] - c.local[i]);
    c.usage[i] += amounts[i];
    flavor_usage_[flavor][i] += amounts[i];
    const Amount spill_after = std::max<Amount>(0, c.usage[i] - c.local[i]);
    pool_used_[flavor][i] += spill_after - spill_before;
  }
}

void QuotaState::subtract(uint32_t team, uint32_t flavor, const Resources& amounts) {
  Cell& c = cell(team, flavor);
  for (ir::Resource r : kChargedResources) {
    const size_t i = ir::index(r);
    if (amounts[i] == 0) continue;
    const Amount spill_before = std::max<Amount>(0, c.usage[i] - c.local[i]);
    c.usage[i] -= amounts[i];
    flavor_usage_[flavor][i] -= amounts[i];
    const Amount spill_after = std::max<Amount>(0, c.usage[i] - c.local[i]);
    pool_used_[flavor][i] += spill_after - spill_before;
  }
}

// available_i = max(0, local_i − U_i) + min(pool − poolUsed, L_i − max(0, U_i − local_i) + B_i),
// clipped at 0 (kueue-reference §2, flat cohort).
Amount QuotaState::available(uint32_t team, uint32_t flavor, ir::Resource r) const {
  const Cell& c = cell(team, flavor);
  const size_t i = ir::index(r);
  const Amount private_left = std::max<Amount>(0, c.local[i] - c.usage[i]);
  const Amount spill = std::max<Amount>(0, c.usage[i] - c.local[i]);
  const Amount cohort_left = pool_[flavor][i] - pool_used_[flavor][i];
  const Amount limit_left = saturating_add(c.lendable[i] - spill, c.borrowing_limit[i]);
  return std::max<Amount>(0, private_left + std::min(cohort_left, limit_left));
}

// maxCap_i = min(local_i + pool, N_i + B_i) (kueue-reference §2).
Amount QuotaState::max_capacity(uint32_t team, uint32_t flavor, ir::Resource r) const {
  const Cell& c = cell(team, flavor);
  const size_t i = ir::index(r);
  return std::min(c.local[i] + pool_[flavor][i],
                  saturating_add(c.nominal[i], c.borrowing_limit[i]));
}

bool QuotaState::borrowing_in(uint32_t team, uint32_t flavor, uint8_t mask) const {
  for (ir::Resource r : kChargedResources) {
    if (contains(mask, r) && borrowing(team, flavor, r)) return true;
  }
  return false;
}

bool QuotaState::fits_in_nominal(uint32_t team, uint32_t flavor, const Resources& amounts) const {
  for (ir::Resource r : kChargedResources) {
    const Amount amount = amounts[ir::index(r)];
    if (amount > 0 && usage(team, flavor, r) + amount > nominal(team, flavor, r)) return false;
  }
  return true;
}

Amount QuotaState::cohort_idle(uint32_t flavor, ir::Resource r) const {
  return std::max<Amount>(0, cohort_quota(flavor, r) - cohort_usage(flavor, r));
}

}  // namespace gov::engine
