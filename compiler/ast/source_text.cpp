#include "compiler/ast/source_text.hpp"

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"

namespace gov::ast {
namespace {

std::string_view unit_suffix(Unit unit) {
  switch (unit) {
    case Unit::none: return "";
    case Unit::percent: return "%";
    case Unit::mib: return " MiB";
    case Unit::gib: return " GiB";
    case Unit::tib: return " TiB";
    case Unit::milli: return "m";
    case Unit::invalid: return " ?";
  }
  return "";
}

// Binding strength; higher binds tighter.
int precedence(const Expr& e) {
  if (e.kind == Expr::Kind::binary) {
    switch (e.binary_op) {
      case BinaryOp::logical_or: return 1;
      case BinaryOp::logical_and: return 2;
      case BinaryOp::eq: case BinaryOp::ne: case BinaryOp::lt: case BinaryOp::le:
      case BinaryOp::gt: case BinaryOp::ge: case BinaryOp::in: case BinaryOp::not_in: return 4;
      case BinaryOp::add: case BinaryOp::sub: return 5;
      case BinaryOp::mul: case BinaryOp::div: return 6;
    }
  }
  if (e.kind == Expr::Kind::unary) return e.unary_op == UnaryOp::logical_not ? 3 : 7;
  return 9;
}

std::string wrapped(const Expr& e, int minimum) {
  std::string text = expr_text(e);
  return precedence(e) < minimum ? "(" + text + ")" : text;
}

}  // namespace

std::string number_text(const Number& number) {
  const int64_t whole = number.micros / 1000000;
  int64_t fraction = number.micros % 1000000;
  std::string text = fmt::format("{}", whole);
  if (fraction < 0) fraction = -fraction;
  if (fraction != 0) {
    std::string digits = fmt::format("{:06}", fraction);
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    if (number.micros < 0 && whole == 0) text = "-0";
    text += "." + digits;
  }
  return text + std::string(unit_suffix(number.unit));
}

namespace {

// Writes string text back as source. Bidi controls and invisible characters, which the
// parser refuses raw (E0007) and which a reader could not see, become `\u{...}` escapes,
// so formatted text parses back to the same string.
void append_escaped(std::string& out, std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const CodePoint cp = decode_code_point(text, i);
    switch (cp.value) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '{': out += "\\{"; break;
      case '}': out += "\\}"; break;
      default:
        if (cp.valid && cp.value >= 0x80 && is_unsafe_for_terminal(cp.value)) {
          out += fmt::format("\\u{{{:x}}}", cp.value);
        } else {
          out += text.substr(i, cp.length);
        }
    }
    i += cp.length;
  }
}

}  // namespace

std::string string_text(const StringLit& string) {
  std::string out = "\"";
  for (const StringPart& part : string.parts) {
    if (part.expr) {
      out += "{" + expr_text(*part.expr) + "}";
    } else {
      append_escaped(out, part.text);
    }
  }
  return out + "\"";
}

std::string quoted_text(std::string_view text) {
  std::string out = "\"";
  append_escaped(out, text);
  return out + "\"";
}

std::string_view binary_op_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::logical_or: return "or";
    case BinaryOp::logical_and: return "and";
    case BinaryOp::eq: return "==";
    case BinaryOp::ne: return "!=";
    case BinaryOp::lt: return "<";
    case BinaryOp::le: return "<=";
    case BinaryOp::gt: return ">";
    case BinaryOp::ge: return ">=";
    case BinaryOp::in: return "in";
    case BinaryOp::not_in: return "not in";
    case BinaryOp::add: return "+";
    case BinaryOp::sub: return "-";
    case BinaryOp::mul: return "*";
    case BinaryOp::div: return "/";
  }
  return "?";
}

std::string expr_text(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::number: return number_text(e.number);
    case Expr::Kind::string: return string_text(e.string);
    case Expr::Kind::boolean: return e.boolean ? "true" : "false";
    case Expr::Kind::name: return e.name.text;
    case Expr::Kind::list: {
      std::vector<std::string> items;
      for (const ExprPtr& item : e.operands) items.push_back(expr_text(*item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case Expr::Kind::unary:
      // `not (a in b)` keeps its parentheses: `not a in b` is correct but reads ambiguously.
      if (e.unary_op == UnaryOp::logical_not) return "not " + wrapped(*e.operands[0], 5);
      {
        // `-(-x)` keeps its parentheses: `--x` parses the same but reads as a decrement.
        const std::string operand = wrapped(*e.operands[0], 7);
        return operand.starts_with('-') ? "-(" + operand + ")" : "-" + operand;
      }
    case Expr::Kind::index:
      return wrapped(*e.operands[0], 8) + "[" + expr_text(*e.operands[1]) + "]";
    case Expr::Kind::binary: {
      const int p = precedence(e);
      // Comparisons are non-associative: both sides must bind tighter. Other operators
      // are left-associative: the right side must bind tighter.
      const bool comparison = p == 4;
      const std::string left = wrapped(*e.operands[0], comparison ? p + 1 : p);
      const std::string right = wrapped(*e.operands[1], p + 1);
      return fmt::format("{} {} {}", left, binary_op_text(e.binary_op), right);
    }
  }
  return "?";
}

std::string value_text(const Value& value) {
  switch (value.kind) {
    case Value::Kind::number: return number_text(value.number);
    case Value::Kind::string: return string_text(value.string);
    case Value::Kind::boolean: return value.boolean ? "true" : "false";
    case Value::Kind::name: return value.name.text;
    case Value::Kind::list: {
      std::vector<std::string> items;
      for (const Value& item : value.list) items.push_back(value_text(item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case Value::Kind::map: {
      if (value.map.empty()) return "{}";
      std::vector<std::string> items;
      for (const MapEntry& entry : value.map) {
        std::string key = entry.key_is_string ? quoted_text(entry.key.text) : entry.key.text;
        items.push_back(fmt::format("{}: {}", key, value_text(*entry.value)));
      }
      return fmt::format("{{ {} }}", fmt::join(items, ", "));
    }
    case Value::Kind::block: {
      if (value.block.empty()) return "{}";
      std::vector<std::string> items;
      for (const Property& p : value.block) items.push_back(fmt::format("{} = {}", p.key.text, value_text(*p.value)));
      return fmt::format("{{ {} }}", fmt::join(items, ", "));
    }
  }
  return "?";
}

bool StringLit::has_interpolation() const {
  for (const StringPart& part : parts) {
    if (part.expr) return true;
  }
  return false;
}

std::string StringLit::plain() const {
  std::string out;
  for (const StringPart& part : parts) {
    if (!part.expr) out += part.text;
  }
  return out;
}

Span span_of(const Declaration& declaration) {
  return std::visit([](const auto& d) { return d.span; }, declaration);
}

}  // namespace gov::ast
