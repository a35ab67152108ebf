// Exact decimal formatting: integer arithmetic only, so what is printed reads back exactly.
#include "runtime/trace/units.hpp"

#include <fmt/format.h>

#include <cstring>

#include "compiler/model/quantities.hpp"

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

namespace {

/// The decimal digits of `value`, appended (fmt::format_int writes them into a buffer of its
/// own: no allocation).
void append_digits(std::string& out, uint64_t value) {
  const fmt::format_int digits(value);
  out.append(digits.data(), digits.size());
}

}  // namespace

char* write_seconds(char* out, gov::Time millis) {
  // model::format_decimal(millis, kMillisPerSecond), written out: a count of milliseconds has
  // at most three decimals, which format_decimal keeps exactly (it rounds past 64 digits only),
  // and a stream writes one per decision.
  static_assert(kMillisPerSecond == 1000);
  const uint64_t magnitude = millis < 0 ? 0 - static_cast<uint64_t>(millis) : static_cast<uint64_t>(millis);
  if (millis < 0) *out++ = '-';
  const fmt::format_int digits(magnitude / 1000);
  std::memcpy(out, digits.data(), digits.size());
  out += digits.size();
  const auto rest = static_cast<unsigned>(magnitude % 1000);
  if (rest == 0) return out;
  const char fraction[4] = {'.', static_cast<char>('0' + rest / 100), static_cast<char>('0' + rest / 10 % 10),
                            static_cast<char>('0' + rest % 10)};
  size_t length = 4;
  while (fraction[length - 1] == '0') --length;
  std::memcpy(out, fraction, length);
  return out + length;
}

void append_seconds(std::string& out, gov::Time millis) {
  char text[kMaxSecondsText];
  out.append(text, static_cast<size_t>(write_seconds(text, millis) - text));
}

std::string format_seconds(gov::Time millis) {
  std::string out;
  append_seconds(out, millis);
  return out;
}

std::string format_amount(ir::Resource resource, ir::Amount amount) {
  return model::format_amount(resource, amount, model::decimal_notation());
}

std::optional<uint64_t> whole_file_units(ir::Resource resource, ir::Amount amount) {
  const int64_t unit = base_units_per_file_unit(resource);
  if (amount >= 0 && amount % unit == 0) return static_cast<uint64_t>(amount / unit);
  return std::nullopt;
}

void append_amount(std::string& out, ir::Resource resource, ir::Amount amount) {
  if (const std::optional<uint64_t> whole = whole_file_units(resource, amount)) {
    append_digits(out, *whole);
    return;
  }
  out += format_amount(resource, amount);
}

std::string_view trace_key(ir::Resource resource) {
  switch (resource) {
    case ir::Resource::gpu:
      return "gpus";
    case ir::Resource::neuron:
      return "neuron";
    case ir::Resource::vcpu:
      return "vcpus";
    case ir::Resource::memory:
      return "memory_gib";
    case ir::Resource::efa:
      return "efa";
  }
  return "?";
}

}  // namespace gov::trace
