// gov::model's amount formatter against the formatters it replaced (issue 16 point 2): the old
// texts are kept here as oracles, so any change of an output is a failing test.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/model/arithmetic.hpp"
#include "compiler/model/quantities.hpp"

namespace {

using gov::model::Amount;
using gov::model::AmountFormat;
using gov::model::format_amount;
using gov::model::Resource;

// The interpreter's value_text for millicores and MiB (rule messages in decision streams).
std::string old_rule_value(Resource r, Amount value) {
  if (r == Resource::vcpu) return value % 1000 == 0 ? fmt::format("{}", value / 1000) : fmt::format("{}m", value);
  if (value != 0 && value % (1024 * 1024) == 0) return fmt::format("{} TiB", value / (1024 * 1024));  // 0: `0 GiB`
  if (value % 1024 == 0) return fmt::format("{} GiB", value / 1024);
  return fmt::format("{} MiB", value);
}

// The engine's quantity_text (Kueue's reason strings in decision streams).
std::string old_kubernetes(Resource r, Amount amount) {
  auto decimal = [](Amount whole) {
    static constexpr std::array<const char*, 7> kSuffixes = {"", "k", "M", "G", "T", "P", "E"};
    if (whole == 0) return std::string("0");
    size_t e = 0;
    while (whole % 1000 == 0 && e + 1 < kSuffixes.size()) whole /= 1000, ++e;
    return fmt::format("{}{}", whole, kSuffixes[e]);
  };
  auto binary = [](Amount m) {
    static constexpr std::array<const char*, 5> kSuffixes = {"Mi", "Gi", "Ti", "Pi", "Ei"};
    if (m == 0) return std::string("0");
    size_t e = 0;
    while (m % 1024 == 0 && e + 1 < kSuffixes.size()) m /= 1024, ++e;
    return fmt::format("{}{}", m, kSuffixes[e]);
  };
  if (r == Resource::vcpu) return amount % 1000 != 0 ? fmt::format("{}m", amount) : decimal(amount / 1000);
  if (r == Resource::memory) return binary(amount);
  return decimal(amount);
}

// `gov eval`'s and the checker's display_amount (no TiB).
std::string old_language_gib(Resource r, Amount a) {
  if (r == Resource::vcpu) return a % 1000 == 0 ? fmt::format("{}", a / 1000) : fmt::format("{}m", a);
  if (r == Resource::memory) return a % 1024 == 0 ? fmt::format("{} GiB", a / 1024) : fmt::format("{} MiB", a);
  return fmt::format("{}", a);
}

// `gov inspect`'s exact_decimal (non-negative amounts).
std::string old_inspect(Resource r, Amount value) {
  const Amount per = r == Resource::vcpu ? 1000 : r == Resource::memory ? 1024 : 1;
  const Amount whole = value / per;
  Amount rest = value % per;
  if (rest == 0) return fmt::format("{}", whole);
  std::string digits;
  while (rest != 0 && digits.size() < 12) {
    rest *= 10;
    digits += static_cast<char>('0' + rest / per);
    rest %= per;
  }
  return fmt::format("{}.{}", whole, digits);
}

// `gov diff`'s amount_text: a double with three decimals.
std::string old_diff(Resource r, Amount a) {
  const double v = r == Resource::vcpu ? static_cast<double>(a) / 1000.0
                   : r == Resource::memory ? static_cast<double>(a) / 1024.0 : static_cast<double>(a);
  std::string text = fmt::format("{:.3f}", v);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + (r == Resource::memory ? " GiB" : "");
}

std::vector<Amount> samples() {
  std::vector<Amount> out;
  for (Amount a = -3000; a <= 3000; ++a) out.push_back(a);
  for (Amount base : {Amount{1024} * 1024, Amount{1000} * 1000, Amount{1} << 40, Amount{1000000000000}}) {
    for (Amount d = -2; d <= 2; ++d) out.push_back(base + d), out.push_back(base * 3 + d * 512);
  }
  out.push_back(std::numeric_limits<Amount>::max());
  out.push_back(std::numeric_limits<Amount>::min());
  return out;
}

}  // namespace

TEST_CASE("model: the language notation writes rule values as the interpreter did", "[model]") {
  for (Resource r : {Resource::vcpu, Resource::memory}) {
    for (Amount a : samples()) REQUIRE(format_amount(r, a, gov::model::language_notation()) == old_rule_value(r, a));
  }
  CHECK(format_amount(Resource::memory, 1024 * 1024) == "1 TiB");
  CHECK(format_amount(Resource::memory, 0) == "0 GiB");  // not `0 TiB`, which read oddly beside `128 GiB`
  CHECK(format_amount(Resource::gpu, 8) == "8");
}

TEST_CASE("model: the language notation up to GiB writes what gov eval and the checker wrote", "[model]") {
  for (Resource r : gov::model::kAllResources) {
    for (Amount a : samples()) {
      REQUIRE(format_amount(r, a, gov::model::language_notation(gov::model::kMebibytesPerGibibyte)) ==
              old_language_gib(r, a));
    }
  }
  AmountFormat with_word = gov::model::language_notation(gov::model::kMebibytesPerGibibyte);
  with_word.unlimited_word = true;
  CHECK(format_amount(Resource::gpu, gov::model::kUnlimited, with_word) == "unlimited");
}

TEST_CASE("model: the kubernetes notation writes reason strings as the engine did", "[model]") {
  for (Resource r : gov::model::kAllResources) {
    for (Amount a : samples()) REQUIRE(format_amount(r, a, gov::model::kubernetes_notation()) == old_kubernetes(r, a));
  }
  CHECK(format_amount(Resource::memory, 128 * 1024, gov::model::kubernetes_notation()) == "128Gi");
  CHECK(format_amount(Resource::vcpu, 500, gov::model::kubernetes_notation()) == "500m");
}

TEST_CASE("model: the decimal notation writes what gov inspect wrote", "[model]") {
  for (Resource r : gov::model::kAllResources) {
    for (Amount a : samples()) {
      if (a < 0) continue;  // inspect wrote negative fractions as garbage (`0.-5`); none occur
      REQUIRE(format_amount(r, a, gov::model::decimal_notation()) == old_inspect(r, a));
    }
  }
  CHECK(format_amount(Resource::vcpu, -500, gov::model::decimal_notation()) == "-0.5");
  CHECK(format_amount(Resource::memory, std::numeric_limits<Amount>::min(), gov::model::decimal_notation()) ==
        "-9007199254740992");
}

TEST_CASE("model: the decimal notation with three digits writes what gov diff wrote", "[model]") {
  AmountFormat diff = gov::model::decimal_notation(3);
  diff.memory_unit = true;
  for (Resource r : gov::model::kAllResources) {
    for (Amount a : samples()) {
      // diff went through a double: exact only up to 2^53, and `-0` for small negatives
      if (a > (Amount{1} << 53) || a < 0) continue;
      REQUIRE(format_amount(r, a, diff) == old_diff(r, a));
    }
  }
  // rounding half to even at the last digit, as the double formatting did: 0.0625 GiB = 64 MiB,
  // 0.0009765625 GiB = 1 MiB
  CHECK(format_amount(Resource::memory, 64, diff) == "0.062 GiB");
  CHECK(format_amount(Resource::memory, 1, diff) == "0.001 GiB");
  CHECK(format_amount(Resource::gpu, std::numeric_limits<Amount>::max() - 1, diff) == "9223372036854775806");
}

TEST_CASE("model: checked arithmetic saturates and divides by zero as 0", "[model]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK(gov::model::checked_add(kMax, 1) == kMax);
  CHECK(gov::model::checked_sub(kMin, 1) == kMin);
  CHECK(gov::model::checked_mul(kMin, -1) == kMax);
  CHECK(gov::model::checked_div(7, 0) == 0);
  CHECK(gov::model::checked_div(kMin, -1) == kMax);
  CHECK(gov::model::checked_neg(kMin) == kMax);
  CHECK(gov::model::mul_div_floor(kMax, 100, 100) == kMax);
}

TEST_CASE("model: instance counts print with at most the asked decimals, trailing zeros dropped", "[model]") {
  CHECK(gov::model::format_instances(2.0, 2) == "2");
  CHECK(gov::model::format_instances(2.5, 3) == "2.5");
  CHECK(gov::model::format_instances(1.0 / 3.0, 3) == "0.333");
  CHECK(gov::model::format_instances(2.999, 2) == "3");
  CHECK(gov::model::format_instances(100.0, 0) == "100");  // no point: no zero is dropped
}
