// Checked arithmetic shared by the checker's constant folding and every back end, so that they
// agree on every input.
#pragma once

#include <cstdint>

namespace gov::model {

/// Wide intermediate for exact products (GCC/Clang extension; `__extension__` keeps -Wpedantic quiet).
__extension__ using Int128 = __int128;

/// Results saturate at the int64 bounds and division by zero gives 0. Addition and subtraction
/// are inline: the engine's quota arithmetic calls them millions of times per replay.
inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
inline int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}
int64_t checked_mul(int64_t a, int64_t b);
int64_t checked_div(int64_t a, int64_t b);
int64_t checked_neg(int64_t a);

/// floor(a * b / c) without overflow for non-negative operands (c > 0).
int64_t mul_div_floor(int64_t a, int64_t b, int64_t c);

}  // namespace gov::model
