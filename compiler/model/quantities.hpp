// The one formatter of amounts: every text that shows an amount of a resource (rule messages,
// Kueue's reason strings, diagnostics, `gov inspect`, `gov diff`, `gov eval`, `gov test`) writes it
// with format_amount, in one of three notations.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/model/resources.hpp"

namespace gov::model {

/// Enough fraction digits for value / divisor to be exact whenever divisor's only prime factors
/// are 2 and 5 (10^63 is a multiple of every such divisor up to 10^18).
inline constexpr int kExactDigits = 64;

/// `value / divisor` as a decimal with at most `fraction_digits` digits after the point, no
/// trailing zeros, rounded half to even beyond: "5", "0.5", "-2.25", "0.0009765625". Exact
/// (what is printed reads back) when divisor has no prime factors but 2 and 5 (1000, 1024) and
/// fraction_digits is kExactDigits. `divisor` must be in 1..10^18; integer arithmetic only, and
/// defined for every int64 value.
std::string format_decimal(int64_t value, int64_t divisor, int fraction_digits = kExactDigits);

/// How format_amount writes an amount.
struct AmountFormat {
  enum class Notation : uint8_t {
    /// The policy language's own spelling: devices `2`; vCPUs `4`, or `500m` when not whole;
    /// memory in the largest of TiB, GiB and MiB (up to `largest_memory_unit`) that divides it
    /// exactly (`128 GiB`, `1 TiB`, `512 MiB`; 0 is `0 TiB`, as the largest unit divides it).
    language,
    /// Kubernetes canonical quantities, as Kueue's messages print them: DecimalSI for devices
    /// and vCPUs (`2`, `500m`, `4k`), BinarySI for memory (`512Mi`, `128Gi`).
    kubernetes,
    /// A decimal number in the unit people and files read: devices, vCPUs, GiB (`0.5`, `1.25`,
    /// `0.0009765625`): format_decimal with `fraction_digits`. Traces and decision streams
    /// write amounts so (exact); `gov diff` rounds to 3 digits.
    decimal,
  };
  Notation notation = Notation::language;
  /// language: the largest memory unit, kMebibytesPerTebibyte or kMebibytesPerGibibyte (the
  /// test steps `gov eval` and `gov test` write stop at GiB).
  Amount largest_memory_unit = kMebibytesPerTebibyte;
  /// decimal: the most digits after the point (a GiB amount has at most 10, a vCPU amount 3, so
  /// the default is exact).
  int fraction_digits = kExactDigits;
  /// decimal: memory is followed by ` GiB`.
  bool memory_unit = false;
  /// language and decimal: kUnlimited is written `unlimited`.
  bool unlimited_word = false;
};

/// `amount` (base units of `resource`) as text. Defined for every int64 value; pure.
std::string format_amount(Resource resource, Amount amount, const AmountFormat& format = {});

/// Shorthands for the notations.
inline AmountFormat language_notation(Amount largest_memory_unit = kMebibytesPerTebibyte) {
  return {AmountFormat::Notation::language, largest_memory_unit, kExactDigits, false, false};
}
inline AmountFormat kubernetes_notation() { return {AmountFormat::Notation::kubernetes, kMebibytesPerTebibyte, kExactDigits, false, false}; }
inline AmountFormat decimal_notation(int fraction_digits = kExactDigits) {
  return {AmountFormat::Notation::decimal, kMebibytesPerTebibyte, fraction_digits, false, false};
}

/// A count of instances that may be fractional (`2`, `2.5`, `0.333`), rounded to at most
/// `fraction_digits` decimals, trailing zeros dropped.
std::string format_instances(double instances, int fraction_digits);

}  // namespace gov::model
