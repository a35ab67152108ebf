// Kubernetes quantities: parsed by the grammar of k8s.io/apimachinery's resource.Quantity and
// converted with integer arithmetic only (128-bit digits, powers of 2 and 5 applied exactly).
#include "compiler/kube/quantity.hpp"

#include <fmt/format.h>

namespace gov::kube {

namespace {

__extension__ using u128 = unsigned __int128;
constexpr u128 kMaxDigits = (~u128{0}) / 10 - 10;  // room for one more digit

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<Quantity> parse_quantity(std::string_view text) {
  Quantity q;
  size_t at = 0;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) q.negative = text[at++] == '-';
  // The number: digits, an optional point and more digits; at least one digit in all.
  bool any_digit = false, point = false, overflow = false;
  int fraction_digits = 0;
  int pending_zeros = 0;  // zeros of the fraction not yet multiplied in: trailing ones never are
  const auto push = [&](unsigned digit) {
    if (q.digits > kMaxDigits) {
      overflow = true;
      return;
    }
    q.digits = q.digits * 10 + digit;
  };
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '.') {
      if (point) return std::nullopt;
      point = true;
      continue;
    }
    if (!is_digit(c)) break;
    any_digit = true;
    if (point) ++fraction_digits;
    if (point && c == '0') {
      ++pending_zeros;
      continue;
    }
    for (; pending_zeros > 0; --pending_zeros) push(0);
    push(static_cast<unsigned>(c - '0'));
  }
  if (!any_digit || overflow) return std::nullopt;
  fraction_digits -= pending_zeros;
  q.exp10 = -fraction_digits;
  // The suffix.
  const std::string_view suffix = text.substr(at);
  // `Ei` is exa-binary, not an exponent: the binary suffixes are tried first.
  if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    const size_t power = kBinary.find(suffix[0]);
    if (power == std::string_view::npos) return std::nullopt;
    q.exp2 = 10 * static_cast<int>(power + 1);
  } else if (!suffix.empty() && (suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
    size_t i = 1;
    bool minus = false;
    if (suffix[i] == '+' || suffix[i] == '-') minus = suffix[i++] == '-';
    if (i == suffix.size()) return std::nullopt;
    int exponent = 0;
    for (; i < suffix.size(); ++i) {
      if (!is_digit(suffix[i]) || exponent > 1000) return std::nullopt;
      exponent = exponent * 10 + (suffix[i] - '0');
    }
    if (exponent > 1000) return std::nullopt;
    q.exp10 += minus ? -exponent : exponent;
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n': q.exp10 -= 9; break;
      case 'u': q.exp10 -= 6; break;
      case 'm': q.exp10 -= 3; break;
      case 'k': q.exp10 += 3; break;
      case 'M': q.exp10 += 6; break;
      case 'G': q.exp10 += 9; break;
      case 'T': q.exp10 += 12; break;
      case 'P': q.exp10 += 15; break;
      case 'E': q.exp10 += 18; break;
      default: return std::nullopt;
    }
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  // Canonical: no trailing zeros in the digits (1.50 is 15 × 10^-1).
  while (q.digits != 0 && q.digits % 10 == 0) {
    q.digits /= 10;
    ++q.exp10;
  }
  if (q.digits == 0) q = Quantity{};
  return q;
}

Converted scaled(const Quantity& quantity, int exp10, int exp2) {
  if (quantity.digits == 0) return {};
  // value = digits × 2^p2 × 5^p5
  long p5 = static_cast<long>(quantity.exp10) + exp10;
  long p2 = p5 + quantity.exp2 + exp2;
  u128 value = quantity.digits;
  for (; p5 < 0; ++p5) {
    if (value % 5 != 0) return {Conversion::not_whole, 0};
    value /= 5;
  }
  for (; p2 < 0; ++p2) {
    if (value % 2 != 0) return {Conversion::not_whole, 0};
    value /= 2;
  }
  constexpr u128 kMax = static_cast<u128>(INT64_MAX);
  if (value > kMax) return {quantity.negative ? Conversion::negative : Conversion::overflow, 0};
  for (; p5 > 0; --p5) {
    value *= 5;
    if (value > kMax) return {quantity.negative ? Conversion::negative : Conversion::overflow, 0};
  }
  for (; p2 > 0; --p2) {
    value *= 2;
    if (value > kMax) return {quantity.negative ? Conversion::negative : Conversion::overflow, 0};
  }
  if (quantity.negative) return {Conversion::negative, 0};
  return {Conversion::ok, static_cast<int64_t>(value)};
}

Converted to_base_units(const Quantity& quantity, model::Resource resource) {
  switch (resource) {
    case model::Resource::gpu:
    case model::Resource::neuron:
    case model::Resource::efa: return scaled(quantity, 0, 0);
    case model::Resource::vcpu: return scaled(quantity, 3, 0);
    case model::Resource::memory: return scaled(quantity, 0, -20);
  }
  return {Conversion::not_whole, 0};
}

std::string conversion_problem(Conversion status, model::Resource resource) {
  switch (status) {
    case Conversion::ok: return "";
    case Conversion::negative: return "is negative";
    case Conversion::overflow: return "is too large (above 2^63 base units)";
    case Conversion::not_whole:
      switch (resource) {
        case model::Resource::gpu:
        case model::Resource::neuron:
        case model::Resource::efa: return "is not a whole number of devices";
        case model::Resource::vcpu: return "is not a whole number of millicores (0.001 CPU)";
        case model::Resource::memory: return "is not a whole number of MiB (gov counts memory in MiB)";
      }
  }
  return "cannot be converted";
}

}  // namespace gov::kube
