// Amounts as text.
#include "compiler/model/quantities.hpp"

#include <array>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "compiler/support/assert.hpp"

namespace gov::model {
namespace {

// Kubernetes canonical quantities: the largest power of `base` (1000 for DecimalSI, 1024 for
// BinarySI) that divides the amount, as a suffix.
std::string canonical_quantity(Amount amount, Amount base, std::span<const std::string_view> suffixes) {
  if (amount == 0) return "0";
  size_t exponent = 0;
  while (amount % base == 0 && exponent + 1 < suffixes.size()) {
    amount /= base;
    ++exponent;
  }
  return fmt::format("{}{}", amount, suffixes[exponent]);
}

constexpr std::array<std::string_view, 7> kDecimalSuffixes = {"", "k", "M", "G", "T", "P", "E"};
constexpr std::array<std::string_view, 5> kBinarySuffixes = {"Mi", "Gi", "Ti", "Pi", "Ei"};  // of MiB

std::string language_text(Resource resource, Amount amount, Amount largest_memory_unit) {
  if (resource == Resource::vcpu) {
    if (amount % kMillicoresPerVcpu == 0) return fmt::format("{}", amount / kMillicoresPerVcpu);
    return fmt::format("{}m", amount);
  }
  if (resource != Resource::memory) return fmt::format("{}", amount);
  // Zero divides by every unit; GiB is the one sizes are usually written in (`0 TiB` read oddly).
  if (largest_memory_unit >= kMebibytesPerTebibyte && amount != 0 && amount % kMebibytesPerTebibyte == 0)
    return fmt::format("{} TiB", amount / kMebibytesPerTebibyte);
  if (amount % kMebibytesPerGibibyte == 0) return fmt::format("{} GiB", amount / kMebibytesPerGibibyte);
  return fmt::format("{} MiB", amount);
}

Amount display_unit(Resource resource) {
  if (resource == Resource::vcpu) return kMillicoresPerVcpu;
  if (resource == Resource::memory) return kMebibytesPerGibibyte;
  return 1;
}

}  // namespace

std::string format_decimal(int64_t value, int64_t divisor, int fraction_digits) {
  GOV_ASSERT(divisor > 0 && divisor <= 1'000'000'000'000'000'000, "divisor out of range");
  // The magnitude as unsigned, so that INT64_MIN has one too; every product below stays under
  // 2^64 because rest < divisor <= 10^18.
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const auto d = static_cast<uint64_t>(divisor);
  uint64_t whole = magnitude / d;
  uint64_t rest = magnitude % d;
  std::string fraction;
  while (rest != 0 && static_cast<int>(fraction.size()) < fraction_digits) {
    rest *= 10;
    fraction += static_cast<char>('0' + rest / d);
    rest %= d;
  }
  // What is left rounds the last digit: above half up, exactly half to even.
  bool round_up = rest * 2 > d;
  if (rest * 2 == d) round_up = (fraction.empty() ? whole % 10 : static_cast<uint64_t>(fraction.back() - '0')) % 2 == 1;
  if (round_up) {
    size_t i = fraction.size();
    while (i > 0 && fraction[i - 1] == '9') fraction[--i] = '0';
    if (i == 0) {
      ++whole;  // at most 2^63 / 1 + 1: fits
    } else {
      ++fraction[i - 1];
    }
  }
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  std::string out = value < 0 && (whole != 0 || !fraction.empty()) ? "-" : "";
  out += std::to_string(whole);
  if (!fraction.empty()) out += "." + fraction;
  return out;
}

std::string format_amount(Resource resource, Amount amount, const AmountFormat& format) {
  switch (format.notation) {
    case AmountFormat::Notation::kubernetes:
      if (resource == Resource::memory) return canonical_quantity(amount, 1024, kBinarySuffixes);
      if (resource != Resource::vcpu) return canonical_quantity(amount, 1000, kDecimalSuffixes);
      if (amount % kMillicoresPerVcpu != 0) return fmt::format("{}m", amount);
      return canonical_quantity(amount / kMillicoresPerVcpu, 1000, kDecimalSuffixes);
    case AmountFormat::Notation::language:
      if (format.unlimited_word && amount == kUnlimited) return "unlimited";
      return language_text(resource, amount, format.largest_memory_unit);
    case AmountFormat::Notation::decimal: {
      if (format.unlimited_word && amount == kUnlimited) return "unlimited";
      std::string text = format_decimal(amount, display_unit(resource), format.fraction_digits);
      if (format.memory_unit && resource == Resource::memory) text += " GiB";
      return text;
    }
  }
  return {};
}

std::string format_instances(double instances, int fraction_digits) {
  std::string text = fmt::format("{:.{}f}", instances, fraction_digits);
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace gov::model
