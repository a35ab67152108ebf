// Checked arithmetic shared by the checker's constant folding and every back end, so that they
// agree on every input.
#pragma once

#include <cstdint>

namespace gov::model {

/// Wide intermediate for exact products (GCC/Clang extension; `__extension__` keeps -Wpedantic quiet).
__extension__ using Int128 = __int128;

/// Results saturate at the int64 bounds and division by zero gives 0.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_sub(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);
int64_t checked_div(int64_t a, int64_t b);
int64_t checked_neg(int64_t a);

/// floor(a * b / c) without overflow for non-negative operands (c > 0).
int64_t mul_div_floor(int64_t a, int64_t b, int64_t c);

}  // namespace gov::model
