#include "runtime/engine/quota_state.hpp"

#include <algorithm>
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

/// For each key below `keys`, the values below `values` for which `has(key, value)`.
template <typename Has>
IndexLists index_lists(size_t keys, size_t values, Has has) {
  IndexLists lists;
  lists.first.reserve(keys + 1);
  for (uint32_t key = 0; key < keys; ++key) {
    lists.first.push_back(static_cast<uint32_t>(lists.items.size()));
    for (uint32_t value = 0; value < values; ++value) {
      if (has(key, value)) lists.items.push_back(value);
    }
  }
  lists.first.push_back(static_cast<uint32_t>(lists.items.size()));
  return lists;
}

}  // namespace

QuotaState::QuotaState(const ir::Module& module)
    : table_(ir::quota_table(module)),
      // At least one row each, so that usage_view() needs no emptiness test (the hot path).
      usage_(std::max<size_t>(1, table_.team_count * table_.flavor_count)),
      pool_used_(std::max<size_t>(1, table_.flavor_count)),
      flavor_usage_(std::max<size_t>(1, table_.flavor_count)) {
  for (ir::Resource r : module.charged_columns()) charged_[charged_count_++] = r;
  for (size_t f = 0; f < table_.flavor_count; ++f) {
    for (size_t i = 0; i < module.column_count(); ++i) lendable_total_[i] += table_.cohort_quota[f][i];
  }
  flavors_of_team_ = index_lists(table_.team_count, table_.flavor_count,
                                 [this](uint32_t t, uint32_t f) { return has_quota(t, f); });
  teams_of_flavor_ = index_lists(table_.flavor_count, table_.team_count,
                                 [this](uint32_t f, uint32_t t) { return has_quota(t, f); });
}

// The cohort's usage counts only what spills over a team's private (local) quota.
void QuotaState::add(uint32_t team, uint32_t flavor, const Resources& amounts) {
  const ir::QuotaCell& c = cell(team, flavor);
  Resources& usage = usage_[team * table_.flavor_count + flavor];
  for (ir::Resource r : charged()) {
    const size_t i = ir::index(r);
    if (amounts[i] == 0) continue;
    const Amount spill_before = std::max<Amount>(0, usage[i] - c.local[i]);
    usage[i] += amounts[i];
    flavor_usage_[flavor][i] += amounts[i];
    const Amount spill_after = std::max<Amount>(0, usage[i] - c.local[i]);
    pool_used_[flavor][i] += spill_after - spill_before;
  }
}

void QuotaState::subtract(uint32_t team, uint32_t flavor, const Resources& amounts) {
  const ir::QuotaCell& c = cell(team, flavor);
  Resources& usage = usage_[team * table_.flavor_count + flavor];
  for (ir::Resource r : charged()) {
    const size_t i = ir::index(r);
    if (amounts[i] == 0) continue;
    const Amount spill_before = std::max<Amount>(0, usage[i] - c.local[i]);
    usage[i] -= amounts[i];
    flavor_usage_[flavor][i] -= amounts[i];
    const Amount spill_after = std::max<Amount>(0, usage[i] - c.local[i]);
    pool_used_[flavor][i] += spill_after - spill_before;
  }
}

Amount QuotaState::available(uint32_t team, uint32_t flavor, ir::Resource r) const {
  return ir::available(cell(team, flavor), table_.cohort_quota[flavor], r, usage(team, flavor, r),
                       cohort_usage(flavor, r));
}

Amount QuotaState::max_capacity(uint32_t team, uint32_t flavor, ir::Resource r) const {
  return ir::max_capacity(cell(team, flavor), table_.cohort_quota[flavor], r);
}

bool QuotaState::borrowing_in(uint32_t team, uint32_t flavor, ResourceMask mask) const {
  for (ir::Resource r : charged()) {
    if (contains(mask, r) && borrowing(team, flavor, r)) return true;
  }
  return false;
}

bool QuotaState::fits_in_nominal(uint32_t team, uint32_t flavor, const Resources& amounts) const {
  for (ir::Resource r : charged()) {
    const Amount amount = amounts[ir::index(r)];
    if (amount > 0 && usage(team, flavor, r) + amount > nominal(team, flavor, r)) return false;
  }
  return true;
}

bool QuotaState::partitions_fit(uint32_t team, uint32_t flavor, const Resources& request,
                                bool allow_borrowing) const {
  for (ir::Resource r : charged().subspan(kChargedResources.size())) {
    const Amount amount = request[ir::index(r)];
    if (amount == 0) continue;
    if (amount > available(team, flavor, r)) return false;
    if (!allow_borrowing && borrowing_with(team, flavor, r, amount)) return false;
  }
  return true;
}

Amount QuotaState::cohort_idle(uint32_t flavor, ir::Resource r) const {
  return std::max<Amount>(0, cohort_quota(flavor, r) - cohort_usage(flavor, r));
}

}  // namespace gov::engine
