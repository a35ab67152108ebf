// Conversions from written numbers (exact micro-units with a unit) to base units.
#pragma once

#include <optional>

#include "compiler/ast/ast.hpp"
#include "compiler/ir/module.hpp"

namespace gov::check {

/// Wide intermediate for exact products (GCC/Clang extension; `__extension__` keeps -Wpedantic quiet).
__extension__ using Int128 = __int128;

/// A whole number without unit (`4`), or nullopt.
std::optional<int64_t> whole_number(const ast::Number& number);
/// vCPU as millicores: `4` -> 4000, `0.5` -> 500, `500m` -> 500; nullopt when not a
/// whole number of millicores or not a vCPU quantity.
std::optional<ir::Amount> millicores(const ast::Number& number);
/// A size in MiB: `128 GiB` -> 131072; nullopt when not a size or not a whole MiB.
std::optional<ir::Amount> mebibytes(const ast::Number& number);
/// A percentage as a whole number: `50%` -> 50.
std::optional<int64_t> percentage(const ast::Number& number);

/// floor(a * b / c) without overflow for non-negative operands (c > 0).
ir::Amount mul_div_floor(ir::Amount a, ir::Amount b, ir::Amount c);

}  // namespace gov::check
