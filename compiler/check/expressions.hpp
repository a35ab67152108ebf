// Type checking of rule conditions and message interpolations (docs/language.md,
// "Expressions"): names resolved by the type the other operand expects.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/support/name_index.hpp"
#include "compiler/check/policy.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::check {

/// The names a condition may use.
struct ExprScope {
  const std::vector<PriorityClass>* classes = nullptr;
  std::vector<std::string> teams;
  std::vector<std::string> instance_types;
  /// Indexes of `teams` and `instance_types` for lookups in constant time; a list without its
  /// index (sizes differ) is searched linearly.
  NameIndex team_index;
  NameIndex type_index;
};

/// Types one expression tree. Reports each problem once and returns nullopt for a tree
/// that has an error (callers do not report cascades).
std::optional<TypedExpr> type_expression(const ast::Expr& expr, const ExprScope& scope, SourceId source,
                                         Diagnostics& diagnostics);

/// The value of an expression that does not depend on the task or the cluster's state,
/// or nullopt (used to find rules that always or never match).
std::optional<int64_t> constant_value(const TypedExpr& expr);

/// "a count", "a size", ...: how a type is named in messages.
std::string_view type_description(model::ValueType type);

/// Every path a condition may read (`task.gpus`, `team.used.memory`, ...), for help text.
const std::vector<std::string>& known_paths();

}  // namespace gov::check
