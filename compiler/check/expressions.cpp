#include "compiler/check/expressions.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/ast/source_text.hpp"
#include "compiler/check/quantities.hpp"
#include "compiler/check/surface.hpp"
#include "compiler/model/arithmetic.hpp"

namespace gov::check {
namespace {

using model::ValueType;
using Kind = TypedExpr::Kind;

struct PathInfo {
  TypedExpr::Kind kind;
  int64_t value;
  ValueType type;
};

ValueType resource_type(model::Resource r) {
  if (r == model::Resource::vcpu) return ValueType::millicores;
  if (r == model::Resource::memory) return ValueType::mebibytes;
  return ValueType::integer;
}

/// `task.gpus`, `team.used.memory`: a resource is named in expressions as in properties.
const std::vector<std::pair<std::string, model::Resource>>& resource_words() {
  static const std::vector<std::pair<std::string, model::Resource>> words = [] {
    std::vector<std::pair<std::string, model::Resource>> out;
    for (model::Resource r : model::kAllResources) out.emplace_back(resource_word(r), r);
    return out;
  }();
  return words;
}

const std::vector<std::pair<std::string, PathInfo>>& path_table() {
  static const std::vector<std::pair<std::string, PathInfo>> table = [] {
    using F = model::TaskField;
    auto field = [](F f, ValueType t) { return PathInfo{Kind::task_field, static_cast<int64_t>(f), t}; };
    std::vector<std::pair<std::string, PathInfo>> t = {
        {"task.team", field(F::team, ValueType::team)},
        {"task.priority", field(F::priority, ValueType::priority)},
        {"task.instance-type", field(F::flavor, ValueType::flavor)},
        {"task.gpus", field(F::gpus, ValueType::integer)},
        {"task.neuron", field(F::neuron, ValueType::integer)},
        {"task.vcpus", field(F::vcpus, ValueType::millicores)},
        {"task.memory", field(F::memory, ValueType::mebibytes)},
        {"task.efa", field(F::efa, ValueType::integer)},
        {"task.instances", field(F::instances, ValueType::integer)},
        {"task.pods", field(F::pods, ValueType::integer)},
        {"task.id", field(F::id, ValueType::string)},
    };
    const std::vector<std::string> team_stats = {"nominal", "used", "borrowed", "borrowing-limit", "available"};
    const std::vector<std::string> cluster_stats = {"capacity", "used", "available"};
    for (size_t s = 0; s < team_stats.size(); ++s) {
      for (const auto& [word, r] : resource_words()) {
        t.push_back({"team." + team_stats[s] + "." + word,
                     {Kind::team_stat, static_cast<int64_t>(s * model::kResourceCount + model::index(r)), resource_type(r)}});
      }
    }
    for (size_t s = 0; s < cluster_stats.size(); ++s) {
      for (const auto& [word, r] : resource_words()) {
        t.push_back({"cluster." + cluster_stats[s] + "." + word,
                     {Kind::cluster_stat, static_cast<int64_t>(s * model::kResourceCount + model::index(r)), resource_type(r)}});
      }
    }
    return t;
  }();
  return table;
}

bool is_comparison(ast::BinaryOp op) {
  using O = ast::BinaryOp;
  return op == O::eq || op == O::ne || op == O::lt || op == O::le || op == O::gt || op == O::ge;
}

bool is_numeric(ValueType t) {
  return t == ValueType::integer || t == ValueType::millicores || t == ValueType::mebibytes;
}

class Typer {
 public:
  Typer(const ExprScope& scope, SourceId source, Diagnostics& diagnostics)
      : scope_(scope), source_(source), diagnostics_(diagnostics) {}

  /// Types `e`; `expected` resolves bare names (a class, a team or an instance type).
  std::optional<TypedExpr> type(const ast::Expr& e, std::optional<ValueType> expected = std::nullopt) {
    switch (e.kind) {
      case ast::Expr::Kind::number: return number(e);
      case ast::Expr::Kind::string: return string(e);
      case ast::Expr::Kind::boolean: return constant(e.span, ValueType::boolean, e.boolean);
      case ast::Expr::Kind::name: return name(e, expected);
      case ast::Expr::Kind::list:
        error(Code::type_mismatch, e.span, "a list can only stand on the right of `in`", "list here");
        return std::nullopt;
      case ast::Expr::Kind::index: return index(e);
      case ast::Expr::Kind::unary: return unary(e);
      case ast::Expr::Kind::binary: return binary(e);
    }
    return std::nullopt;
  }

 private:
  Diagnostic& error(Code code, Span span, std::string message, std::string label = {}) {
    return diagnostics_.report(make_diagnostic(code, {source_, span}, std::move(message), std::move(label)));
  }

  static TypedExpr constant(Span span, ValueType type, int64_t value, bool literal_count = false) {
    TypedExpr t;
    t.kind = Kind::constant;
    t.type = type;
    t.span = span;
    t.value = value;
    t.text = literal_count ? "literal" : "";
    return t;
  }

  static bool is_count_literal(const TypedExpr& t) { return t.kind == Kind::constant && t.text == "literal"; }

  std::optional<TypedExpr> number(const ast::Expr& e) {
    const ast::Number& n = e.number;
    if (n.unit == ast::Unit::percent) {
      Diagnostic& d = error(Code::type_mismatch, e.span, "percentages cannot be used in conditions", "percentage");
      d.help = "compare amounts instead: `team.borrowed.gpus * 2 > team.nominal.gpus`";
      return std::nullopt;
    }
    if (n.unit == ast::Unit::mib || n.unit == ast::Unit::gib || n.unit == ast::Unit::tib) {
      if (auto mib = mebibytes(n)) return constant(e.span, ValueType::mebibytes, *mib);
      error(Code::out_of_range, e.span, fmt::format("`{}` is not a whole number of MiB", ast::number_text(n)));
      return std::nullopt;
    }
    if (n.unit == ast::Unit::milli || n.has_decimals) {
      if (auto m = millicores(n)) return constant(e.span, ValueType::millicores, *m);
      error(Code::out_of_range, e.span, fmt::format("`{}` is not a whole number of millicores", ast::number_text(n)));
      return std::nullopt;
    }
    if (n.unit == ast::Unit::invalid) return std::nullopt;
    return constant(e.span, ValueType::integer, n.micros / 1'000'000, /*literal_count=*/true);
  }

  std::optional<TypedExpr> string(const ast::Expr& e) {
    if (e.string.has_interpolation()) {
      error(Code::interpolation_not_allowed, e.span, "`{...}` is only allowed in a rule's message", "interpolation");
      return std::nullopt;
    }
    TypedExpr t;
    t.kind = Kind::string_constant;
    t.type = ValueType::string;
    t.span = e.span;
    t.text = e.string.plain();
    return t;
  }

  std::optional<TypedExpr> name(const ast::Expr& e, std::optional<ValueType> expected) {
    const std::string& text = e.name.text;
    for (const auto& [path, info] : path_table()) {
      if (path != text) continue;
      TypedExpr t;
      t.kind = info.kind;
      t.type = info.type;
      t.span = e.span;
      t.value = info.value;
      return t;
    }
    const std::string root = text.substr(0, text.find('.'));
    if (text == "task.labels") {
      Diagnostic& d = error(Code::type_mismatch, e.span, "`task.labels` is a map", "map");
      d.help = "read one label with `task.labels[\"key\"]`, or test for it with `\"key\" in task.labels`";
      return std::nullopt;
    }
    if (text.starts_with("task.labels.")) {  // a label read as a field: `task.labels.team`
      const std::string key = text.substr(std::string_view("task.labels.").size());
      Diagnostic& d = error(Code::unknown_field, e.span, fmt::format("unknown field `{}`", text), "unknown field");
      d.help = fmt::format("a label is read by its key: `task.labels[\"{}\"]`", key);
      return std::nullopt;
    }
    if ((root == "task" || root == "team" || root == "cluster") && text.find('.') != std::string::npos) {
      Diagnostic& d = error(Code::unknown_field, e.span, fmt::format("unknown field `{}`", text), "unknown field");
      std::vector<std::string> paths = known_paths();
      // A name may hold hyphens, so a minus without spaces joins two operands into one unknown
      // name: `team.borrowed.gpus-task.gpus`. "Did you mean `team.borrowed.gpus`" would drop
      // the second operand (and an editor's quick fix with it).
      for (size_t dash = text.find('-'); dash != std::string::npos; dash = text.find('-', dash + 1)) {
        const std::string left = text.substr(0, dash), right = text.substr(dash + 1);
        if (right.empty() || std::find(paths.begin(), paths.end(), left) == paths.end()) continue;
        d.help = fmt::format("a name may hold hyphens, so this reads as one name; a minus needs spaces around it: "
                             "`{} - {}`",
                             left, right);
        return std::nullopt;
      }
      d.help = did_you_mean(text, paths).value_or(
          root == "task" ? "task fields are team, priority, instance-type, gpus, neuron, vcpus, memory, efa, "
                           "instances, pods, id and labels"
                         : fmt::format("{} fields are {}", root,
                                       root == "team" ? "nominal, used, borrowed, borrowing-limit and available, "
                                                        "each with .gpus, .neuron, .vcpus, .memory or .efa"
                                                      : "capacity, used and available, each with .gpus, .neuron, "
                                                        ".vcpus, .memory or .efa"));
      return std::nullopt;
    }
    return resolve_bare_name(e, expected);
  }

  std::optional<TypedExpr> resolve_bare_name(const ast::Expr& e, std::optional<ValueType> expected) {
    const std::string& text = e.name.text;
    std::vector<std::string> class_names;
    for (const PriorityClass& c : *scope_.classes) class_names.push_back(c.name);
    auto find = [&](const std::vector<std::string>& names) {
      return static_cast<int64_t>(std::find(names.begin(), names.end(), text) - names.begin());
    };
    // Teams and instance types through their index (a policy may name them a million times).
    auto find_indexed = [&](const std::vector<std::string>& names, const NameIndex& index) {
      if (index.size() != names.size()) return find(names);
      const std::optional<size_t> i = index.find(text);
      return static_cast<int64_t>(i ? *i : names.size());
    };
    auto make = [&](ValueType type, int64_t value) {
      TypedExpr t = constant(e.span, type, value);
      t.text = text;  // the name, for messages and lowering of flavors/teams by name
      return t;
    };
    auto unknown = [&](Code code, std::string_view what, const std::vector<std::string>& names) {
      Diagnostic& d = error(code, e.span, fmt::format("unknown {} `{}`", what, text), "not defined");
      const std::string plural = what == "priority class" ? "priority classes" : std::string(what) + "s";
      if (auto guess = did_you_mean(text, names)) {
        d.help = *guess;
      } else if (!names.empty()) {
        d.help = names_help(plural, names);
      }
      return std::nullopt;
    };
    if (expected == ValueType::priority) {
      const int64_t i = find(class_names);
      if (i < static_cast<int64_t>(class_names.size())) return make(ValueType::priority, (*scope_.classes)[i].weight);
      return unknown(Code::unknown_priority_class, "priority class", class_names);
    }
    if (expected == ValueType::team) {
      const int64_t i = find_indexed(scope_.teams, scope_.team_index);
      if (i < static_cast<int64_t>(scope_.teams.size())) return make(ValueType::team, i);
      return unknown(Code::unknown_team, "team", scope_.teams);
    }
    if (expected == ValueType::flavor) {
      const int64_t i = find_indexed(scope_.instance_types, scope_.type_index);
      if (i < static_cast<int64_t>(scope_.instance_types.size())) return make(ValueType::flavor, i);
      return unknown(Code::unknown_instance_type, "instance type", scope_.instance_types);
    }
    // No expectation: the first kind of name that has it.
    if (const int64_t i = find(class_names); i < static_cast<int64_t>(class_names.size())) {
      return make(ValueType::priority, (*scope_.classes)[i].weight);
    }
    if (const int64_t i = find_indexed(scope_.teams, scope_.team_index); i < static_cast<int64_t>(scope_.teams.size())) return make(ValueType::team, i);
    if (const int64_t i = find_indexed(scope_.instance_types, scope_.type_index); i < static_cast<int64_t>(scope_.instance_types.size())) {
      return make(ValueType::flavor, i);
    }
    Diagnostic& d = error(Code::unknown_name, e.span, fmt::format("unknown name `{}`", text), "not defined");
    std::vector<std::string> all = class_names;
    all.insert(all.end(), scope_.teams.begin(), scope_.teams.end());
    all.insert(all.end(), known_paths().begin(), known_paths().end());
    d.help = did_you_mean(text, all).value_or(
        "a name in a condition is a priority class, a team, an instance type, or a path such as `task.gpus`");
    return std::nullopt;
  }

  static bool is_labels(const ast::Expr& e) { return e.kind == ast::Expr::Kind::name && e.name.text == "task.labels"; }

  std::optional<TypedExpr> index(const ast::Expr& e) {
    const ast::Expr& base = *e.operands[0];
    const ast::Expr& key = *e.operands[1];
    if (!is_labels(base)) {
      error(Code::type_mismatch, base.span, "only `task.labels` can be indexed", "not a map");
      return std::nullopt;
    }
    if (key.kind != ast::Expr::Kind::string || key.string.has_interpolation()) {
      Diagnostic& d = error(Code::type_mismatch, key.span, "a label key must be a string constant", "not a string");
      d.help = "write the key in quotes: `task.labels[\"project\"]`";
      return std::nullopt;
    }
    TypedExpr t;
    t.kind = Kind::label_value;
    t.type = ValueType::string;
    t.span = e.span;
    t.text = key.string.plain();
    return t;
  }

  std::optional<TypedExpr> unary(const ast::Expr& e) {
    auto operand = type(*e.operands[0]);
    if (!operand) return std::nullopt;
    const bool negate = e.unary_op == ast::UnaryOp::negate;
    const ValueType want = negate ? operand->type : ValueType::boolean;
    if (negate ? !is_numeric(operand->type) : operand->type != ValueType::boolean) {
      Diagnostic& d = error(Code::type_mismatch, e.operands[0]->span,
                            fmt::format("`{}` needs {}, found {}", negate ? "-" : "not",
                                        negate ? "a number" : "a condition", type_description(operand->type)),
                            "wrong type");
      (void)d;
      return std::nullopt;
    }
    TypedExpr t;
    t.kind = Kind::unary;
    t.type = want;
    t.span = e.span;
    t.unary_op = e.unary_op;
    t.operands.push_back(std::move(*operand));
    return t;
  }

  /// Bare names are resolved with the other side's type: type the side that is not a bare
  /// name first.
  static bool is_bare_name(const ast::Expr& e) {
    return e.kind == ast::Expr::Kind::name && e.name.text.rfind("task.", 0) != 0 &&
           e.name.text.rfind("team.", 0) != 0 && e.name.text.rfind("cluster.", 0) != 0;
  }

  std::optional<TypedExpr> binary(const ast::Expr& e) {
    using O = ast::BinaryOp;
    const ast::Expr& left_ast = *e.operands[0];
    const ast::Expr& right_ast = *e.operands[1];
    if (e.binary_op == O::in || e.binary_op == O::not_in) return membership(e);

    std::optional<TypedExpr> left, right;
    if (e.binary_op == O::logical_and || e.binary_op == O::logical_or) {
      // Independent conditions: report the errors of both sides.
      left = type(left_ast);
      right = type(right_ast);
    } else if (is_bare_name(left_ast) && !is_bare_name(right_ast)) {
      right = type(right_ast);
      if (!right) return std::nullopt;
      left = type(left_ast, right->type);
    } else {
      left = type(left_ast);
      if (!left) return std::nullopt;
      right = type(right_ast, left->type);
    }
    if (!left || !right) return std::nullopt;

    if (e.binary_op == O::logical_and || e.binary_op == O::logical_or) {
      for (const TypedExpr* side : {&*left, &*right}) {
        if (side->type != ValueType::boolean) {
          error(Code::type_mismatch, side->span,
                fmt::format("`{}` joins conditions, found {}", ast::binary_op_text(e.binary_op),
                            type_description(side->type)),
                "not a condition");
          return std::nullopt;
        }
      }
      return make_binary(e, std::move(*left), std::move(*right), ValueType::boolean);
    }
    unify_literals(*left, *right);
    if (is_comparison(e.binary_op)) return comparison(e, std::move(*left), std::move(*right));
    return arithmetic(e, std::move(*left), std::move(*right));
  }

  /// A count literal next to a vCPU amount is a number of vCPUs: `task.vcpus > 4`.
  static void unify_literals(TypedExpr& a, TypedExpr& b) {
    if (is_count_literal(a) && b.type == ValueType::millicores) {
      a.type = ValueType::millicores;
      a.value = model::checked_mul(a.value, 1000);
      a.text.clear();
    }
    if (is_count_literal(b) && a.type == ValueType::millicores) {
      b.type = ValueType::millicores;
      b.value = model::checked_mul(b.value, 1000);
      b.text.clear();
    }
  }

  TypedExpr make_binary(const ast::Expr& e, TypedExpr left, TypedExpr right, ValueType type) {
    TypedExpr t;
    t.kind = Kind::binary;
    t.type = type;
    t.span = e.span;
    t.binary_op = e.binary_op;
    t.operands.push_back(std::move(left));
    t.operands.push_back(std::move(right));
    return t;
  }

  std::optional<TypedExpr> mismatch(const ast::Expr& e, const TypedExpr& left, const TypedExpr& right) {
    Diagnostic& d = error(Code::type_mismatch, e.span,
                          fmt::format("`{}` cannot combine {} and {}", ast::binary_op_text(e.binary_op),
                                      type_description(left.type), type_description(right.type)),
                          "mismatched types");
    if (left.type == ValueType::mebibytes && is_count_literal(right)) {
      d.help = fmt::format("give the size a unit: `{} GiB`", right.value);
    } else if (right.type == ValueType::mebibytes && is_count_literal(left)) {
      d.help = fmt::format("give the size a unit: `{} GiB`", left.value);
    } else if ((left.type == ValueType::integer && right.type == ValueType::millicores && right.kind == Kind::constant) ||
               (right.type == ValueType::integer && left.type == ValueType::millicores && left.kind == Kind::constant)) {
      // `task.gpus > 2.5`: a number with a fraction reads as vCPUs, the only fractional amount.
      d.help = "a number with a fraction (or `m`) is a vCPU amount; counts such as GPUs, pods and instances are "
               "compared with whole numbers";
    }
    return std::nullopt;
  }

  std::optional<TypedExpr> comparison(const ast::Expr& e, TypedExpr left, TypedExpr right) {
    using O = ast::BinaryOp;
    if (left.type != right.type) return mismatch(e, left, right);
    const bool ordering = e.binary_op != O::eq && e.binary_op != O::ne;
    const ValueType t = left.type;
    if (ordering && !(is_numeric(t) || t == ValueType::priority)) {
      error(Code::type_mismatch, e.span,
            fmt::format("{} cannot be ordered with `{}`", type_description(t), ast::binary_op_text(e.binary_op)),
            "no order");
      return std::nullopt;
    }
    if (t == ValueType::string && left.kind != Kind::string_constant && right.kind != Kind::string_constant) {
      Diagnostic& d = error(Code::type_mismatch, e.span, "a string can only be compared with a string constant",
                            "two variable strings");
      d.help = "compare each label with the value you expect: `task.labels[\"a\"] == \"x\"`";
      return std::nullopt;
    }
    return make_binary(e, std::move(left), std::move(right), ValueType::boolean);
  }

  std::optional<TypedExpr> arithmetic(const ast::Expr& e, TypedExpr left, TypedExpr right) {
    using O = ast::BinaryOp;
    const ValueType a = left.type, b = right.type;
    std::optional<ValueType> result;
    switch (e.binary_op) {
      case O::add:
      case O::sub:
        if (a == b && is_numeric(a)) result = a;
        break;
      case O::mul:
        if (a == ValueType::integer && is_numeric(b)) result = b;
        else if (b == ValueType::integer && is_numeric(a)) result = a;
        break;
      case O::div:
        if (is_numeric(a) && b == ValueType::integer) result = a;
        else if (is_numeric(a) && a == b) result = ValueType::integer;
        break;
      default: break;
    }
    if (!result) return mismatch(e, left, right);
    return make_binary(e, std::move(left), std::move(right), *result);
  }

  std::optional<TypedExpr> membership(const ast::Expr& e) {
    const ast::Expr& left_ast = *e.operands[0];
    const ast::Expr& right_ast = *e.operands[1];
    if (is_labels(right_ast)) {
      if (left_ast.kind != ast::Expr::Kind::string || left_ast.string.has_interpolation()) {
        Diagnostic& d = error(Code::type_mismatch, left_ast.span, "a label key must be a string constant", "not a string");
        d.help = "write `\"project\" in task.labels`";
        return std::nullopt;
      }
      TypedExpr present;
      present.kind = Kind::label_present;
      present.type = ValueType::boolean;
      present.span = e.span;
      present.text = left_ast.string.plain();
      return negate_if(e.binary_op == ast::BinaryOp::not_in, std::move(present), e.span);
    }
    if (right_ast.kind != ast::Expr::Kind::list) {
      Diagnostic& d = error(Code::type_mismatch, right_ast.span, "`in` needs a list `[a, b]` or `task.labels` on its right",
                            "not a list");
      (void)d;
      return std::nullopt;
    }
    auto left = type(left_ast);
    if (!left) return std::nullopt;
    TypedExpr set;
    set.kind = Kind::in_set;
    set.type = ValueType::boolean;
    set.span = e.span;
    for (const ast::ExprPtr& item : right_ast.operands) {
      auto value = type(*item, left->type);
      if (!value) return std::nullopt;
      unify_literals(*left, *value);
      unify_literals(*value, *left);
      if (value->type != left->type || (value->kind != Kind::constant && value->kind != Kind::string_constant)) {
        error(Code::type_mismatch, item->span,
              fmt::format("list items must be constants of the left side's type ({})", type_description(left->type)),
              "wrong item");
        return std::nullopt;
      }
      if (value->kind == Kind::string_constant) {
        set.string_set.push_back(value->text);
      } else {
        set.set.push_back(value->value);
      }
    }
    set.operands.push_back(std::move(*left));
    return negate_if(e.binary_op == ast::BinaryOp::not_in, std::move(set), e.span);
  }

  static TypedExpr negate_if(bool negate, TypedExpr t, Span span) {
    if (!negate) return t;
    TypedExpr n;
    n.kind = Kind::unary;
    n.type = ValueType::boolean;
    n.span = span;
    n.unary_op = ast::UnaryOp::logical_not;
    n.operands.push_back(std::move(t));
    return n;
  }

  const ExprScope& scope_;
  SourceId source_;
  Diagnostics& diagnostics_;
};

}  // namespace

std::optional<TypedExpr> type_expression(const ast::Expr& expr, const ExprScope& scope, SourceId source,
                                         Diagnostics& diagnostics) {
  return Typer(scope, source, diagnostics).type(expr);
}

std::optional<int64_t> constant_value(const TypedExpr& e) {
  using O = ast::BinaryOp;
  switch (e.kind) {
    case Kind::constant: return e.value;
    case Kind::string_constant:
    case Kind::task_field:
    case Kind::team_stat:
    case Kind::cluster_stat:
    case Kind::label_value:
    case Kind::label_present: return std::nullopt;
    case Kind::unary: {
      auto v = constant_value(e.operands[0]);
      if (!v) return std::nullopt;
      return e.unary_op == ast::UnaryOp::logical_not ? int64_t{*v == 0} : model::checked_neg(*v);
    }
    case Kind::in_set: {
      auto v = constant_value(e.operands[0]);
      if (!v || !e.string_set.empty()) return std::nullopt;
      return int64_t{std::find(e.set.begin(), e.set.end(), *v) != e.set.end()};
    }
    case Kind::binary: {
      auto a = constant_value(e.operands[0]);
      auto b = constant_value(e.operands[1]);
      // `false and x` and `true or x` are constant whatever x is.
      if (e.binary_op == O::logical_and && ((a && *a == 0) || (b && *b == 0))) return 0;
      if (e.binary_op == O::logical_or && ((a && *a != 0) || (b && *b != 0))) return 1;
      if (!a || !b) return std::nullopt;
      switch (e.binary_op) {
        case O::logical_and: return int64_t{*a && *b};
        case O::logical_or: return int64_t{*a || *b};
        case O::eq: return int64_t{*a == *b};
        case O::ne: return int64_t{*a != *b};
        case O::lt: return int64_t{*a < *b};
        case O::le: return int64_t{*a <= *b};
        case O::gt: return int64_t{*a > *b};
        case O::ge: return int64_t{*a >= *b};
        case O::add: return model::checked_add(*a, *b);
        case O::sub: return model::checked_sub(*a, *b);
        case O::mul: return model::checked_mul(*a, *b);
        case O::div: return model::checked_div(*a, *b);
        case O::in:
        case O::not_in: return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

std::string_view type_description(model::ValueType type) {
  switch (type) {
    case ValueType::boolean: return "a condition";
    case ValueType::integer: return "a count";
    case ValueType::millicores: return "a vCPU amount";
    case ValueType::mebibytes: return "a size";
    case ValueType::string: return "a string";
    case ValueType::priority: return "a priority class";
    case ValueType::team: return "a team";
    case ValueType::flavor: return "an instance type";
  }
  return "a value";
}

const std::vector<std::string>& known_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    for (const auto& [path, info] : path_table()) out.push_back(path);
    out.push_back("task.labels");
    return out;
  }();
  return paths;
}

}  // namespace gov::check
