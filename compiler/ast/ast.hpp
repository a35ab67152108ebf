// The syntax tree of a `.gov` file. Every node carries the byte span it was parsed from.
// Built by gov::grammar (the PEGTL parse tree never leaves grammar/); read by the
// formatter and the checker. Plain data: no behaviour beyond small helpers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/diagnostics/source_file.hpp"

namespace gov::ast {

/// A name as written: `team-a`, `ml.g5.8xlarge`, `task.gpus` (dots kept in `text`).
struct Name {
  std::string text;
  Span span;
};

/// `invalid` marks a unit the parser already reported (E0020), so later checks stay quiet.
enum class Unit { none, percent, mib, gib, tib, milli, invalid };

/// A number literal. The value is exact: `micros` is the written value × 1,000,000
/// (at most six decimals), so `0.5` is 500000 and `128 GiB` is 128000000 with Unit::gib.
struct Number {
  int64_t micros = 0;
  Unit unit = Unit::none;
  bool has_decimals = false;  // written with a decimal point
  Span span;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// A string literal: literal text pieces (escapes resolved) and `{expr}` interpolations.
struct StringPart {
  std::string text;  // used when expr is null
  ExprPtr expr;
  Span span;
};
struct StringLit {
  std::vector<StringPart> parts;
  Span span;
  bool has_interpolation() const;
  /// The literal text when there is no interpolation.
  std::string plain() const;
};

enum class UnaryOp { logical_not, negate };
enum class BinaryOp { logical_or, logical_and, eq, ne, lt, le, gt, ge, in, not_in, add, sub, mul, div };

/// A rule expression.
struct Expr {
  enum class Kind { number, string, boolean, name, list, unary, binary, index };
  Kind kind;
  Span span;
  Number number;                  // number
  StringLit string;               // string
  bool boolean = false;           // boolean
  Name name;                      // name (a path like `task.gpus` or a plain name)
  UnaryOp unary_op{};             // unary: operands[0]
  BinaryOp binary_op{};           // binary: operands[0] op operands[1]; index: operands[0][operands[1]]
  std::vector<ExprPtr> operands;  // list items, or the operands above
};

struct Value;

/// `key = value` in a block.
struct Property {
  Name key;
  std::unique_ptr<Value> value;
  Span span;
};

/// `key: value` in a map (keys are names or strings).
struct MapEntry {
  Name key;
  bool key_is_string = false;
  std::unique_ptr<Value> value;
  Span span;
};

/// The right-hand side of a property.
struct Value {
  enum class Kind { number, string, boolean, name, list, map, block };
  Kind kind;
  Span span;
  Number number;
  StringLit string;
  bool boolean = false;
  Name name;
  std::vector<Value> list;
  std::vector<MapEntry> map;
  std::vector<Property> block;
};

struct Import {
  StringLit path;
  Span span;
};

struct Instance {
  Name type;
  std::vector<Property> properties;
  Span span;
};

struct Catalog {
  Name name;
  std::optional<Name> base;  // `catalog NAME extends BASE { ... }`
  std::vector<Instance> instances;
  Span span;
};

struct Cluster {
  Name name;
  std::vector<Property> properties;
  Span span;
};

/// `priority NAME = WEIGHT` in the cluster policy.
struct PriorityClass {
  Name name;
  Number weight;
  Span span;
};

struct Policy {
  std::vector<std::variant<Property, PriorityClass>> items;  // in source order
  Span span;
};

/// `quota INSTANCE-TYPE { ... }` in a team.
struct Quota {
  Name instance_type;
  std::vector<Property> properties;
  Span span;
};

struct Team {
  Name name;
  std::vector<std::variant<Property, Quota>> items;  // in source order
  Span span;
};

/// `cohort NAME { quota T { ... } }`: the one cohort every team is in, with its own quota (Kueue's
/// Cohort `spec.resourceGroups`).
struct Cohort {
  Name name;
  std::vector<std::variant<Property, Quota>> items;  // in source order
  Span span;
};

enum class RuleAction { deny, warn };

struct Rule {
  Name name;
  ExprPtr when;
  RuleAction action = RuleAction::deny;
  StringLit message;
  Span action_span;  // the `deny`/`warn` keyword
  Span span;
};

/// One clause of an `expect` step.
struct ExpectClause {
  enum class Kind { on, by, warned_by, borrowing, short_of, message, word };
  Kind kind;
  Name name;                       // on, by, warned_by, word
  std::vector<Property> resources;  // borrowing, short_of
  StringLit message;               // message
  Span span;
};

struct Step {
  enum class Kind { submit, finish, cancel, at, expect };
  Kind kind;
  Name task;                         // submit, finish, cancel, expect
  std::vector<Property> properties;  // submit
  Number time;                       // at
  Name outcome;                      // expect
  bool eventually = false;           // expect eventually: the task's latest decision so far
  std::vector<ExpectClause> clauses;  // expect
  Span span;
};

struct Test {
  StringLit name;
  std::vector<Step> steps;
  Span span;
};

using Declaration = std::variant<Import, Catalog, Cluster, Policy, Team, Rule, Test, Cohort>;

struct Comment {
  Span span;  // from `#` or `//` to the end of the line, excluding the line break
};

/// One parsed file.
struct File {
  SourceId source = 0;
  std::vector<Declaration> declarations;
  std::vector<Comment> comments;  // in source order
};

/// The span of any declaration.
Span span_of(const Declaration& declaration);

}  // namespace gov::ast
