// Canonical source text of literals and expressions, shared by the formatter, the AST
// printer and diagnostics (so a number or condition is always shown the same way).
#pragma once

#include <string>

#include "compiler/ast/ast.hpp"

namespace gov::ast {

/// `128 GiB`, `50%`, `0.5`, `500m`, `10000`.
std::string number_text(const Number& number);
/// The quoted string with escapes and `{expr}` interpolations: `"at most {task.gpus}"`.
std::string string_text(const StringLit& string);
/// `text` as a quoted string literal with escapes.
std::string quoted_text(std::string_view text);
/// The expression with the fewest parentheses that keep its meaning.
std::string expr_text(const Expr& expr);
/// `and`, `==`, `not in`, ...
std::string_view binary_op_text(BinaryOp op);
/// A value as source: numbers, strings, names, `[a, b]`, `{ k: v }`, `{ k = v }` (one line).
std::string value_text(const Value& value);

}  // namespace gov::ast
