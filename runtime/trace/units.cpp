// Exact decimal formatting: integer arithmetic only, so what is printed reads back exactly.
#include "runtime/trace/units.hpp"

#include "compiler/diagnostics/assert.hpp"

namespace gov::trace {

int64_t base_units_per_file_unit(ir::Resource resource) {
  switch (resource) {
    case ir::Resource::gpu:
      return 1;
    case ir::Resource::neuron:
      return 1;
    case ir::Resource::vcpu:
      return 1000;
    case ir::Resource::memory:
      return 1024;
    case ir::Resource::efa:
      return 1;
  }
  return 1;
}

std::string format_exact_decimal(int64_t value, int64_t divisor) {
  GOV_ASSERT(divisor > 0 && divisor <= 1'000'000'000'000'000'000, "divisor out of range");
  // The magnitude as unsigned, so that INT64_MIN has one too.
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  auto d = static_cast<uint64_t>(divisor);
  std::string out = value < 0 ? "-" : "";
  out += std::to_string(magnitude / d);
  uint64_t rest = magnitude % d;
  if (rest == 0) return out;
  out += '.';
  // Long division; it ends because 10^k is a multiple of divisor for some k ≤ 63.
  for (int digits = 0; rest != 0 && digits < 64; ++digits) {
    rest *= 10;
    out += static_cast<char>('0' + rest / d);
    rest %= d;
  }
  GOV_ASSERT(rest == 0, "divisor must be made of the primes 2 and 5");
  return out;
}

std::string format_seconds(engine::Time millis) {
  return format_exact_decimal(millis, kMillisPerSecond);
}

std::string format_amount(ir::Resource resource, ir::Amount amount) {
  return format_exact_decimal(amount, base_units_per_file_unit(resource));
}

}  // namespace gov::trace
