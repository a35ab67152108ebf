// Saturating integer arithmetic.
#include "compiler/model/arithmetic.hpp"

#include <limits>

namespace gov::model {
namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}  // namespace

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? kMin : kMax;
  return r;
}

int64_t checked_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (a == kMin && b == -1) return kMax;
  return a / b;
}

int64_t checked_neg(int64_t a) { return a == kMin ? kMax : -a; }

int64_t mul_div_floor(int64_t a, int64_t b, int64_t c) {
  return static_cast<int64_t>(static_cast<Int128>(a) * b / c);
}

}  // namespace gov::model
