#include "compiler/ast/printer.hpp"

#include <fmt/format.h>

#include "compiler/ast/source_text.hpp"

namespace gov::ast {
namespace {

class Printer {
 public:
  explicit Printer(PrintOptions options) : options_(options) {}

  std::string take() { return std::move(out_); }

  void line(int depth, std::string_view text, Span span) {
    out_ += std::string(2 * depth, ' ');
    out_ += text;
    if (options_.spans) out_ += fmt::format(" @{}..{}", span.begin, span.end);
    out_ += '\n';
  }

  void expr(int depth, const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::number: line(depth, "(number " + number_text(e.number) + ")", e.span); return;
      case Expr::Kind::string: line(depth, "(string " + string_text(e.string) + ")", e.span); return;
      case Expr::Kind::boolean: line(depth, e.boolean ? "(bool true)" : "(bool false)", e.span); return;
      case Expr::Kind::name: line(depth, "(name " + e.name.text + ")", e.span); return;
      case Expr::Kind::list: line(depth, "(list", e.span); break;
      case Expr::Kind::unary:
        line(depth, e.unary_op == UnaryOp::logical_not ? "(not" : "(negate", e.span);
        break;
      case Expr::Kind::binary: line(depth, fmt::format("(binary {}", binary_op_text(e.binary_op)), e.span); break;
      case Expr::Kind::index: line(depth, "(index", e.span); break;
    }
    for (const ExprPtr& operand : e.operands) expr(depth + 1, *operand);
    close();
  }

  void properties(int depth, const std::vector<Property>& items) {
    for (const Property& p : items) property(depth, p);
  }

  void property(int depth, const Property& p) {
    line(depth, "(property " + p.key.text, p.span);
    value(depth + 1, *p.value);
    close();
  }

  void value(int depth, const Value& v) {
    switch (v.kind) {
      case Value::Kind::map:
        line(depth, "(map", v.span);
        for (const MapEntry& entry : v.map) {
          line(depth + 1, std::string(entry.key_is_string ? "(entry \"" : "(entry ") + entry.key.text +
                              (entry.key_is_string ? "\"" : ""),
               entry.span);
          value(depth + 2, *entry.value);
          close();
        }
        close();
        return;
      case Value::Kind::block:
        line(depth, "(block", v.span);
        properties(depth + 1, v.block);
        close();
        return;
      case Value::Kind::list:
        line(depth, "(list", v.span);
        for (const Value& item : v.list) value(depth + 1, item);
        close();
        return;
      default: line(depth, "(value " + value_text(v) + ")", v.span); return;
    }
  }

  void declaration(const Declaration& declaration) {
    std::visit([&](const auto& d) { this->decl(d); }, declaration);
  }

  void decl(const Import& d) { line(1, "(import " + string_text(d.path) + ")", d.span); }

  void decl(const Catalog& d) {
    line(1, "(catalog " + d.name.text + (d.base ? " (extends " + d.base->text + ")" : ""), d.span);
    for (const Instance& instance : d.instances) {
      line(2, "(instance " + instance.type.text, instance.span);
      properties(3, instance.properties);
      close();
    }
    close();
  }

  void decl(const Cluster& d) {
    line(1, "(cluster " + d.name.text, d.span);
    properties(2, d.properties);
    close();
  }

  void decl(const Policy& d) {
    line(1, "(policy", d.span);
    for (const auto& item : d.items) {
      if (const auto* p = std::get_if<Property>(&item)) {
        property(2, *p);
      } else {
        const auto& c = std::get<PriorityClass>(item);
        line(2, fmt::format("(priority {} {})", c.name.text, number_text(c.weight)), c.span);
      }
    }
    close();
  }

  void decl(const Team& d) { quota_block("team", d); }
  void decl(const Cohort& d) { quota_block("cohort", d); }

  template <typename Declaration>
  void quota_block(std::string_view keyword, const Declaration& d) {
    line(1, fmt::format("({} {}", keyword, d.name.text), d.span);
    for (const auto& item : d.items) {
      if (const auto* p = std::get_if<Property>(&item)) {
        property(2, *p);
      } else {
        const auto& q = std::get<Quota>(item);
        line(2, "(quota " + q.instance_type.text, q.span);
        properties(3, q.properties);
        close();
      }
    }
    close();
  }


  void decl(const Rule& d) {
    line(1, "(rule " + d.name.text, d.span);
    line(2, "(when", d.when ? d.when->span : d.span);
    if (d.when) expr(3, *d.when);
    close();
    line(2, std::string(d.action == RuleAction::deny ? "(deny " : "(warn ") + string_text(d.message) + ")",
         d.action_span);
    close();
  }

  void decl(const Test& d) {
    line(1, "(test " + string_text(d.name), d.span);
    for (const Step& step : d.steps) this->step(step);
    close();
  }

  void step(const Step& s) {
    switch (s.kind) {
      case Step::Kind::submit:
        line(2, "(submit " + s.task.text, s.span);
        properties(3, s.properties);
        close();
        return;
      case Step::Kind::finish: line(2, "(finish " + s.task.text + ")", s.span); return;
      case Step::Kind::cancel: line(2, "(cancel " + s.task.text + ")", s.span); return;
      case Step::Kind::at: line(2, "(at " + number_text(s.time) + ")", s.span); return;
      case Step::Kind::expect: break;
    }
    line(2, fmt::format("(expect {}{} {}", s.eventually ? "eventually " : "", s.task.text, s.outcome.text), s.span);
    for (const ExpectClause& c : s.clauses) {
      switch (c.kind) {
        case ExpectClause::Kind::on: line(3, "(on " + c.name.text + ")", c.span); break;
        case ExpectClause::Kind::by: line(3, "(by " + c.name.text + ")", c.span); break;
        case ExpectClause::Kind::warned_by: line(3, "(warned-by " + c.name.text + ")", c.span); break;
        case ExpectClause::Kind::word: line(3, "(word " + c.name.text + ")", c.span); break;
        case ExpectClause::Kind::message: line(3, "(message " + string_text(c.message) + ")", c.span); break;
        case ExpectClause::Kind::borrowing:
        case ExpectClause::Kind::short_of:
          line(3, c.kind == ExpectClause::Kind::borrowing ? "(borrowing" : "(short", c.span);
          properties(4, c.resources);
          close();
          break;
      }
    }
    close();
  }

 private:
  // Closing parentheses go at the end of the last line, Lisp style.
  void close() { out_.insert(out_.size() - 1, ")"); }

  PrintOptions options_;
  std::string out_;
};

}  // namespace

std::string print(const File& file, PrintOptions options) {
  Printer printer(options);
  printer.line(0, "(file", Span{0, 0});
  for (const Declaration& d : file.declarations) printer.declaration(d);
  std::string out = printer.take();
  out.insert(out.size() - 1, ")");
  return out;
}

}  // namespace gov::ast
