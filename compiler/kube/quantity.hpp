// Kubernetes resource quantities (`500m`, `1Gi`, `1G`, `1e3`, `0.5`), read exactly and converted
// to gov's base units without rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/model/resources.hpp"

namespace gov::kube {

/// A quantity's exact value: (negative ? -1 : 1) × digits × 10^exp10 × 2^exp2. Kubernetes'
/// serialization format (k8s.io/apimachinery resource.Quantity): a signed decimal number
/// (`1`, `1.5`, `.5`, `5.`) and one suffix: binary `Ki Mi Gi Ti Pi Ei`, decimal
/// `n u m "" k M G T P E`, or an exponent `e3` / `E-3`.
struct Quantity {
  bool negative = false;
  __extension__ unsigned __int128 digits = 0;  // the significant digits, trailing zeros of a fraction dropped
  int exp10 = 0;
  int exp2 = 0;
};

/// The quantity `text`, or nullopt when it is not one (whitespace, two suffixes, `1.1.1`,
/// `1i`, more than 38 significant digits, an exponent beyond ±1000).
std::optional<Quantity> parse_quantity(std::string_view text);

/// What a quantity is in one base unit.
enum class Conversion : unsigned char { ok, not_whole, negative, overflow };
struct Converted {
  Conversion status = Conversion::ok;
  int64_t value = 0;
};

/// `quantity` in `resource`'s base unit (model::Amount): whole devices for gpu, neuron and efa,
/// millicores for cpu, MiB for memory (bytes / 2^20). Exact: `1.5Gi` is 1536 MiB, `500m` 500
/// millicores; `1.5` GPUs or `1Ki` of memory are not_whole; values above int64 overflow.
Converted to_base_units(const Quantity& quantity, model::Resource resource);

/// `quantity` × 10^exp10 × 2^exp2 as an exact integer (the general form of to_base_units).
Converted scaled(const Quantity& quantity, int exp10, int exp2);

/// Why a conversion failed, for messages: "is not a whole number of MiB", ...
std::string conversion_problem(Conversion status, model::Resource resource);

}  // namespace gov::kube
