#include "compiler/check/quotas.hpp"

#include "compiler/check/quantities.hpp"

namespace gov::check {

ir::Resources resolve_nominal(const InstanceType& type, std::optional<int64_t> instances, const GivenAmounts& given) {
  ir::Resources nominal{};
  if (instances) {
    for (size_t r = 0; r < ir::kResourceCount; ++r) nominal[r] = *instances * type.per_instance[r];
  } else {
    // The largest ratio given / per-instance among the given resources, as a fraction.
    ir::Amount ratio_num = 0, ratio_den = 1;
    for (size_t r = 0; r < ir::kResourceCount; ++r) {
      if (!given[r] || type.per_instance[r] <= 0) continue;
      if (static_cast<Int128>(*given[r]) * ratio_den > static_cast<Int128>(ratio_num) * type.per_instance[r]) {
        ratio_num = *given[r];
        ratio_den = type.per_instance[r];
      }
    }
    for (ir::Resource r : {ir::Resource::vcpu, ir::Resource::memory, ir::Resource::efa}) {
      nominal[ir::index(r)] = mul_div_floor(type.per_instance[ir::index(r)], ratio_num, ratio_den);
    }
  }
  for (size_t r = 0; r < ir::kResourceCount; ++r) {
    if (given[r]) nominal[r] = *given[r];
  }
  return nominal;
}

ir::Resources resolve_borrowing_limit(const ir::Resources& nominal, int32_t percent, const GivenAmounts& absolute,
                                      ir::Sharing sharing) {
  ir::Resources limit{};
  if (sharing == ir::Sharing::lend) return limit;
  for (size_t r = 0; r < ir::kResourceCount; ++r) {
    limit[r] = absolute[r] ? *absolute[r] : mul_div_floor(nominal[r], percent, 100);
  }
  return limit;
}

ir::Resources resolve_lending_limit(ir::Sharing sharing) {
  if (sharing == ir::Sharing::dont_lend) return ir::Resources{};
  return {ir::kUnlimited, ir::kUnlimited, ir::kUnlimited, ir::kUnlimited, ir::kUnlimited};
}

ir::Resources resolve_lending_limit(const InstanceType& type, std::optional<int64_t> instances,
                                    const GivenAmounts& given) {
  ir::Resources limit = resolve_lending_limit(ir::Sharing::lend_and_borrow);
  for (size_t r = 0; r < ir::kResourceCount; ++r) {
    if (instances) limit[r] = *instances * type.per_instance[r];
    if (given[r]) limit[r] = *given[r];
  }
  return limit;
}

}  // namespace gov::check
