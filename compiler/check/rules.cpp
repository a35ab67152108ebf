// The checker: rules (typed conditions and messages).
#include "compiler/check/checker.hpp"

#include <map>

#include <fmt/format.h>

#include "compiler/ast/source_text.hpp"

namespace gov::check {

ExprScope Checker::scope() const {
  ExprScope s;
  s.classes = &policy_.classes;
  for (const Team& t : policy_.teams) s.teams.push_back(t.name);
  s.instance_types = type_names();
  s.team_index = NameIndex(s.teams);
  s.type_index = NameIndex(s.instance_types);
  return s;
}

void Checker::check_rules() {
  const ExprScope names = scope();
  std::map<std::string, Location> seen;
  for (const auto& [rule, source] : rules_) {
    if (duplicate(seen, rule->name.text, {source, rule->name.span}, "rule")) continue;
    Rule out;
    out.name = rule->name.text;
    out.action = rule->action;
    out.where = {source, rule->name.span};
    out.condition_text = ast::expr_text(*rule->when);
    out.message_text = ast::string_text(rule->message);
    std::optional<TypedExpr> when = type_expression(*rule->when, names, source, diagnostics_);
    bool ok = when.has_value();
    if (when && when->type != model::ValueType::boolean) {
      Diagnostic& d = report(Code::condition_not_boolean, {source, when->span},
                             fmt::format("a rule's condition must be true or false, found {}", type_description(when->type)),
                             "not a condition");
      d.help = "compare it with something: `task.gpus > 4`";
      ok = false;
    }
    for (const ast::StringPart& part : rule->message.parts) {
      if (!part.expr) {
        out.message.push_back({part.text, std::nullopt});
        continue;
      }
      std::optional<TypedExpr> value = type_expression(*part.expr, names, source, diagnostics_);
      if (!value) {
        ok = false;
        continue;
      }
      out.message.push_back({"", std::move(value)});
    }
    if (!ok) continue;
    out.when = std::move(*when);
    if (auto constant = constant_value(out.when)) out.constant = *constant != 0;
    policy_.rules.push_back(std::move(out));
  }
}

}  // namespace gov::check
