// Conversions from written numbers (exact micro-units with a unit) to base units.
#pragma once

#include <optional>

#include "compiler/ast/ast.hpp"
#include "compiler/model/arithmetic.hpp"
#include "compiler/model/resources.hpp"

namespace gov::check {

using model::Int128;
using model::mul_div_floor;

/// A whole number without unit (`4`), or nullopt.
std::optional<int64_t> whole_number(const ast::Number& number);
/// vCPU as millicores: `4` -> 4000, `0.5` -> 500, `500m` -> 500; nullopt when not a
/// whole number of millicores or not a vCPU quantity.
std::optional<model::Amount> millicores(const ast::Number& number);
/// A size in MiB: `128 GiB` -> 131072; nullopt when not a size or not a whole MiB.
std::optional<model::Amount> mebibytes(const ast::Number& number);
/// A percentage as a whole number: `50%` -> 50.
std::optional<int64_t> percentage(const ast::Number& number);

}  // namespace gov::check
