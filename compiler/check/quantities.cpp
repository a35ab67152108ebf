#include "compiler/check/quantities.hpp"

namespace gov::check {
namespace {

constexpr int64_t kMicro = 1'000'000;

std::optional<int64_t> exact(Int128 micros_times, int64_t divisor) {
  if (micros_times % divisor != 0) return std::nullopt;
  return static_cast<int64_t>(micros_times / divisor);
}

}  // namespace

std::optional<int64_t> whole_number(const ast::Number& number) {
  if (number.unit != ast::Unit::none || number.micros % kMicro != 0) return std::nullopt;
  return number.micros / kMicro;
}

std::optional<model::Amount> millicores(const ast::Number& number) {
  if (number.unit == ast::Unit::none) return exact(number.micros, 1000);
  if (number.unit == ast::Unit::milli) return exact(number.micros, kMicro);
  return std::nullopt;
}

std::optional<model::Amount> mebibytes(const ast::Number& number) {
  switch (number.unit) {
    case ast::Unit::mib: return exact(number.micros, kMicro);
    case ast::Unit::gib: return exact(static_cast<Int128>(number.micros) * 1024, kMicro);
    case ast::Unit::tib: return exact(static_cast<Int128>(number.micros) * 1024 * 1024, kMicro);
    default: return std::nullopt;
  }
}

std::optional<int64_t> percentage(const ast::Number& number) {
  if (number.unit != ast::Unit::percent || number.micros % kMicro != 0) return std::nullopt;
  return number.micros / kMicro;
}

}  // namespace gov::check
