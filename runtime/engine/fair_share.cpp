#include "runtime/engine/fair_share.hpp"

#include <algorithm>
#include <limits>

namespace gov::engine {

double Drs::weighted() const {
  if (zero_weight_borrows()) return std::numeric_limits<double>::infinity();
  if (unweighted == 0) return 0;
  return unweighted / weight;
}

// borrowed[r] = Σ over the team's flavors of max(0, U + extra − nominal); lendable[r] = the
// cohort's quota of r over all flavors; ratio = borrowed × 1000 / lendable where lendable > 0
// (docs/kueue-reference.md §6.1; floating point exactly as Kueue HEAD computes it).
Drs dominant_resource_share(const QuotaState& quota, uint32_t team, int64_t weight_micros, uint32_t flavor,
                            const Resources* extra) {
  Drs drs;
  drs.weight = model::weight_value(weight_micros);
  drs.zero_weight = weight_micros == 0;
  for (ir::Resource r : quota.charged()) {
    Amount borrowed = 0;
    for (uint32_t f : quota.quota_flavors(team)) {
      const Amount added = (extra != nullptr && f == flavor) ? (*extra)[ir::index(r)] : 0;
      borrowed += std::max<Amount>(0, quota.usage(team, f, r) + added - quota.nominal(team, f, r));
    }
    if (borrowed == 0) continue;
    drs.borrowing = true;
    const Amount lendable = quota.lendable_total(r);
    if (lendable <= 0) continue;
    drs.unweighted = std::max(
        drs.unweighted, static_cast<double>(borrowed) * 1000.0 / static_cast<double>(lendable));
  }
  return drs;
}

int compare_drs(const Drs& a, const Drs& b) {
  const auto three_way = [](double x, double y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.zero_weight_borrows() && b.zero_weight_borrows())
    return three_way(a.unweighted, b.unweighted);
  if (a.zero_weight_borrows()) return 1;
  if (b.zero_weight_borrows()) return -1;
  return three_way(a.weighted(), b.weighted());
}

}  // namespace gov::engine
