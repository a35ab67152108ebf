#include "compiler/check/quotas.hpp"

#include "compiler/check/quantities.hpp"

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

model::Resources resolve_borrowing_limit(const model::Resources& nominal, int32_t percent, const GivenAmounts& absolute,
                                      model::Sharing sharing) {
  model::Resources limit{};
  if (sharing == model::Sharing::lend) return limit;
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    limit[r] = absolute[r] ? *absolute[r] : mul_div_floor(nominal[r], percent, 100);
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

}  // namespace gov::check
