// The parse tree -> AST conversion (Builder): the PEGTL parse tree never leaves gov::grammar.
#include "grammar/builder.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "grammar/parse.hpp"

namespace gov::grammar {
namespace {

class Builder {
 public:
  explicit Builder(ParseContext& ctx) : ctx_(ctx) {}

  ast::File file(const Node& root) {
    ast::File out;
    out.source = ctx_.source;
    for (const auto& child : root.children) {
      if (child->is_type<r::comment>()) {
        out.comments.push_back({span(*child)});
        continue;
      }
      collect_comments(*child, out.comments);
      if (auto d = declaration(*child)) out.declarations.push_back(std::move(*d));
    }
    std::sort(out.comments.begin(), out.comments.end(),
              [](const ast::Comment& a, const ast::Comment& b) { return a.span.begin < b.span.begin; });
    return out;
  }

 private:
  Span span(const Node& n) const {
    return {static_cast<uint32_t>(n.begin().byte), static_cast<uint32_t>(n.end().byte)};
  }
  ast::Name name(const Node& n) const {
    if (n.string_view().size() > kMaxNameBytes) {
      Diagnostic d = make_diagnostic(Code::too_long, at(span(n)),
                                     fmt::format("name of {} bytes; gov reads names of at most {} bytes",
                                                 n.string_view().size(), kMaxNameBytes),
                                     "too long");
      d.help = "names are identifiers, not text; put long text in a string";
      ctx_.diagnostics.report(std::move(d));
    }
    return {std::string(n.string_view()), span(n)};
  }

  /// Children that are not comments.
  static std::vector<const Node*> parts(const Node& n) {
    std::vector<const Node*> out;
    for (const auto& c : n.children) {
      if (!c->is_type<r::comment>()) out.push_back(c.get());
    }
    return out;
  }

  void collect_comments(const Node& n, std::vector<ast::Comment>& out) const {
    for (const auto& c : n.children) {
      if (c->is_type<r::comment>()) {
        out.push_back({span(*c)});
      } else {
        collect_comments(*c, out);
      }
    }
  }

  void report(Diagnostic d) { ctx_.diagnostics.report(std::move(d)); }
  Location at(Span s) const { return {ctx_.source, s}; }

  std::optional<ast::Declaration> declaration(const Node& n) {
    operators_ = 0;
    operators_reported_ = false;
    if (n.is_type<r::import_decl>()) return ast::Import{string(*parts(n)[0]), span(n)};
    if (n.is_type<r::catalog_decl>()) {
      auto p = parts(n);
      ast::Catalog c{name(*p[0]), std::nullopt, {}, span(n)};
      size_t first = 1;
      if (p.size() > 1 && p[1]->is_type<r::base_catalog>()) c.base = name(*p[first++]);
      for (size_t i = first; i < p.size(); ++i) {
        auto q = parts(*p[i]);
        c.instances.push_back({name(*q[0]), properties(q, 1), span(*p[i])});
      }
      return c;
    }
    if (n.is_type<r::cluster_decl>()) {
      auto p = parts(n);
      return ast::Cluster{name(*p[0]), properties(p, 1), span(n)};
    }
    if (n.is_type<r::policy_decl>()) {
      ast::Policy policy{{}, span(n)};
      for (const Node* item : parts(n)) {
        if (item->is_type<r::priority_decl>()) {
          auto q = parts(*item);
          policy.items.emplace_back(ast::PriorityClass{name(*q[0]), number(*q[1]), span(*item)});
        } else {
          policy.items.emplace_back(property(*item));
        }
      }
      return policy;
    }
    if (n.is_type<r::team_decl>()) {
      auto p = parts(n);
      ast::Team team{name(*p[0]), {}, span(n)};
      for (size_t i = 1; i < p.size(); ++i) {
        if (p[i]->is_type<r::quota_decl>()) {
          auto q = parts(*p[i]);
          team.items.emplace_back(ast::Quota{name(*q[0]), properties(q, 1), span(*p[i])});
        } else {
          team.items.emplace_back(property(*p[i]));
        }
      }
      return team;
    }
    if (n.is_type<r::cohort_decl>()) {
      auto p = parts(n);
      ast::Cohort cohort{name(*p[0]), {}, span(n)};
      for (size_t i = 1; i < p.size(); ++i) {
        if (p[i]->is_type<r::quota_decl>()) {
          auto q = parts(*p[i]);
          cohort.items.emplace_back(ast::Quota{name(*q[0]), properties(q, 1), span(*p[i])});
        } else {
          cohort.items.emplace_back(property(*p[i]));
        }
      }
      return cohort;
    }
    if (n.is_type<r::rule_decl>()) {
      auto p = parts(n);  // decl_name, condition, deny_action|warn_action
      ast::Rule rule;
      rule.name = name(*p[0]);
      rule.span = span(n);
      rule.when = expr(*parts(*p[1])[0]);
      rule.action = p[2]->is_type<r::deny_action>() ? ast::RuleAction::deny : ast::RuleAction::warn;
      rule.action_span = span(*p[2]);
      rule.message = string(*parts(*p[2])[0]);
      return rule;
    }
    if (n.is_type<r::test_decl>()) {
      auto p = parts(n);
      ast::Test test{string(*p[0]), {}, span(n)};
      for (size_t i = 1; i < p.size(); ++i) test.steps.push_back(step(*p[i]));
      return test;
    }
    return std::nullopt;
  }

  ast::Step step(const Node& n) {
    ast::Step s;
    s.span = span(n);
    auto p = parts(n);
    if (n.is_type<r::at_step>()) {
      s.kind = ast::Step::Kind::at;
      s.time = number(*p[0]);
      return s;
    }
    if (n.is_type<r::expect_step>() && p[0]->is_type<r::eventually>()) {
      s.eventually = true;
      p.erase(p.begin());
    }
    s.task = name(*p[0]);
    if (n.is_type<r::submit_step>()) {
      s.kind = ast::Step::Kind::submit;
      s.properties = properties(p, 1);
    } else if (n.is_type<r::finish_step>()) {
      s.kind = ast::Step::Kind::finish;
    } else if (n.is_type<r::cancel_step>()) {
      s.kind = ast::Step::Kind::cancel;
    } else {
      s.kind = ast::Step::Kind::expect;
      s.outcome = name(*p[1]);
      for (size_t i = 2; i < p.size(); ++i) s.clauses.push_back(clause(*p[i]));
    }
    return s;
  }

  ast::ExpectClause clause(const Node& n) {
    using K = ast::ExpectClause::Kind;
    ast::ExpectClause c;
    c.span = span(n);
    auto p = parts(n);
    if (n.is_type<r::word_clause>()) {
      c.kind = K::word;
      c.name = name(n);
    } else if (n.is_type<r::on_clause>()) {
      c.kind = K::on;
      c.name = name(*p[0]);
    } else if (n.is_type<r::by_clause>()) {
      c.kind = K::by;
      c.name = name(*p[0]);
    } else if (n.is_type<r::warned_clause>()) {
      c.kind = K::warned_by;
      c.name = name(*p[0]);
    } else if (n.is_type<r::message_clause>()) {
      c.kind = K::message;
      c.message = string(*p[0]);
    } else {
      c.kind = n.is_type<r::borrowing_clause>() ? K::borrowing : K::short_of;
      c.resources = properties(p, 0);
    }
    return c;
  }

  std::vector<ast::Property> properties(const std::vector<const Node*>& nodes, size_t from) {
    std::vector<ast::Property> out;
    for (size_t i = from; i < nodes.size(); ++i) out.push_back(property(*nodes[i]));
    return out;
  }

  ast::Property property(const Node& n) {
    auto p = parts(n);
    return {name(*p[0]), std::make_unique<ast::Value>(value(*p[1])), span(n)};
  }

  ast::Value value(const Node& n) {
    if (n.is_type<r::list_item>()) return value(*parts(n)[0]);
    ast::Value v;
    v.span = span(n);
    if (n.is_type<r::number>()) {
      v.kind = ast::Value::Kind::number;
      v.number = number(n);
    } else if (n.is_type<r::string_literal>()) {
      v.kind = ast::Value::Kind::string;
      v.string = string(n);
    } else if (n.is_type<r::boolean>()) {
      v.kind = ast::Value::Kind::boolean;
      v.boolean = n.string_view() == "true";
    } else if (n.is_type<r::name>()) {
      v.kind = ast::Value::Kind::name;
      v.name = name(n);
    } else if (n.is_type<r::list_value>()) {
      v.kind = ast::Value::Kind::list;
      for (const Node* item : parts(n)) v.list.push_back(value(*item));
    } else if (n.is_type<r::block_value>()) {
      v.kind = ast::Value::Kind::block;
      v.block = properties(parts(n), 0);
    } else {
      v.kind = ast::Value::Kind::map;
      for (const Node* entry : parts(n)) {
        auto q = parts(*entry);
        ast::MapEntry e;
        e.span = span(*entry);
        if (q[0]->is_type<r::string_literal>()) {
          e.key_is_string = true;
          e.key = {string(*q[0]).plain(), span(*q[0])};
        } else {
          e.key = name(*q[0]);  // a map_name
        }
        e.value = std::make_unique<ast::Value>(value(*q[1]));
        v.map.push_back(std::move(e));
      }
    }
    return v;
  }

  ast::Number number(const Node& n) {
    ast::Number out;
    out.span = span(n);
    std::string_view literal = n.string_view();
    std::string_view unit_text;
    for (const Node* c : parts(n)) {
      if (c->is_type<r::number_literal>()) literal = c->string_view();
      if (c->is_type<r::unit>()) unit_text = c->string_view();
    }
    std::string digits;
    for (char c : literal) {
      if (c != '_') digits += c;
    }
    const size_t dot = digits.find('.');
    const std::string whole = digits.substr(0, dot);
    std::string fraction = dot == std::string::npos ? "" : digits.substr(dot + 1);
    out.has_decimals = dot != std::string::npos;
    constexpr int64_t kMaxWhole = 9'000'000'000'000;  // keeps micros within int64
    const std::string trimmed = whole.substr(std::min(whole.find_first_not_of('0'), whole.size()));
    if (trimmed.size() > 13 || (!trimmed.empty() && std::stoll(trimmed) > kMaxWhole)) {
      Diagnostic d = make_diagnostic(Code::invalid_number, at(out.span), "number too large", "too large");
      d.help = "numbers in gov are at most 9,000,000,000,000";
      report(std::move(d));
      // Reported once: the value is unusable, as with an unknown unit, so the checker says
      // nothing more about it (a number 0 without its unit drew "takes a size, found 0").
      out.unit = ast::Unit::invalid;
      return out;
    }
    if (fraction.size() > 6) {
      report(make_diagnostic(Code::invalid_number, at(out.span), "a number has at most 6 decimals",
                             "too many decimals"));
      fraction.resize(6);
    }
    fraction.resize(6, '0');
    out.micros = (trimmed.empty() ? 0 : std::stoll(trimmed)) * 1'000'000 + std::stoll(fraction);
    out.unit = unit(unit_text, out.span);
    return out;
  }

  /// Words people write after a count (`8 GPUs`, `4 instances`), lower-cased.
  static bool is_count_word(std::string_view lower) {
    static constexpr std::string_view kWords[] = {"gpu",   "gpus",  "instance", "instances", "node",   "nodes",
                                                  "vcpu",  "vcpus", "cpu",      "cpus",      "core",   "cores",
                                                  "device", "devices", "neuron", "neurons",  "efa",    "x"};
    return std::find(std::begin(kWords), std::end(kWords), lower) != std::end(kWords);
  }

  /// The number of a `NUMBER UNIT` token spanning `number_span` whose unit text is `unit`.
  std::string_view number_text_before(Span number_span, std::string_view unit) const {
    std::string_view whole = ctx_.file.text().substr(number_span.begin, number_span.end - number_span.begin);
    whole.remove_suffix(std::min(whole.size(), unit.size()));
    while (!whole.empty() && (whole.back() == ' ' || whole.back() == '\t')) whole.remove_suffix(1);
    return whole;
  }

  ast::Unit unit(std::string_view text, Span number_span) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    if (text.empty()) return ast::Unit::none;
    if (text == "%") return ast::Unit::percent;
    if (text == "MiB") return ast::Unit::mib;
    if (text == "GiB") return ast::Unit::gib;
    if (text == "TiB") return ast::Unit::tib;
    if (text == "m") return ast::Unit::milli;
    std::string lower;
    for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const Span unit_span{number_span.end - static_cast<uint32_t>(text.size()), number_span.end};
    Diagnostic d = make_diagnostic(Code::unknown_unit, at(unit_span), fmt::format("unknown unit `{}`", text),
                                   "not a unit gov knows");
    if (lower == "gb" || lower == "g" || lower == "gi" || lower == "gib") {
      d.help = "did you mean `GiB`? gov uses binary units (1 GiB = 1024 MiB)";
    } else if (lower == "m") {
      d.help = "write millicores without a space: `500m`";
    } else if (text == "mi") {
      // Kubernetes' `Mi`, or millicores mistyped (`vcpus = 500mi`): the unit alone cannot say
      // which, and a quick fix to the wrong one would be another error.
      d.help = "memory is written in `MiB` (gov uses binary units), millicores with `m` (`500m`)";
    } else if (lower == "mb" || lower == "mi" || lower == "mib") {
      d.help = "did you mean `MiB`? gov uses binary units";
    } else if (lower == "tb" || lower == "t" || lower == "ti" || lower == "tib") {
      d.help = "did you mean `TiB`? gov uses binary units (1 TiB = 1024 GiB)";
    } else if (is_count_word(lower)) {
      // `gpus = 8 GPUs`, `capacity = { T: 4 instances }`: the key already says what is counted.
      d.help = fmt::format("a count is a plain number: write `{}` without `{}`",
                           std::string_view(number_text_before(number_span, text)), text);
    } else {
      d.help = "units are `MiB`, `GiB`, `TiB` for memory, `m` for millicores and `%` for percentages";
    }
    report(std::move(d));
    return ast::Unit::invalid;
  }

  ast::StringLit string(const Node& n) {
    ast::StringLit out;
    out.span = span(n);
    for (const Node* c : parts(n)) {
      if (c->is_type<r::string_chars>()) {
        append_text(out, std::string(c->string_view()), span(*c));
      } else if (c->is_type<r::escape>()) {
        const char e = c->string_view()[1];
        if (e == 'u') {
          append_text(out, unicode_escape(c->string_view(), span(*c)), span(*c));
          continue;
        }
        append_text(out, std::string(1, e == 'n' ? '\n' : e == 't' ? '\t' : e), span(*c));
      } else if (c->is_type<r::interpolation>()) {
        out.parts.push_back({{}, expr(*parts(*c)[0]), span(*c)});
      }
    }
    // Interpolations count by their source (`{task.gpus}`): a message of a million `{1}` pieces
    // was under the bound and took gigabytes to check.
    size_t bytes = 0;
    for (const ast::StringPart& part : out.parts) bytes += part.expr ? part.span.end - part.span.begin : part.text.size();
    if (bytes > kMaxStringBytes) {
      Diagnostic d = make_diagnostic(Code::too_long, at(out.span),
                                     fmt::format("string of {} bytes; gov reads strings of at most {} bytes", bytes,
                                                 kMaxStringBytes),
                                     "too long");
      d.help = "shorten the text; messages and names are meant to be read in one line";
      report(std::move(d));
    }
    return out;
  }

  /// The UTF-8 text of `\u{...}` (the grammar checked its shape), or "" after reporting a
  /// value that is not a character a string may hold: surrogates, values past U+10FFFF and
  /// control characters (they would end C strings, lines and terminal sequences).
  std::string unicode_escape(std::string_view escape, Span where) {
    const std::string_view digits = escape.substr(3, escape.size() - 4);
    uint32_t c = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), c, 16);  // at most 6 digits: no overflow
    const bool control = c < 0x20 || (c >= 0x7F && c <= 0x9F);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) || control) {
      Diagnostic d = make_diagnostic(
          Code::invalid_escape, at(where),
          fmt::format("`{}` is {}", escape, control ? fmt::format("the control character {}", describe_code_point(c))
                                                    : std::string("not a Unicode character")),
          "not allowed in a string");
      d.help = control ? "strings hold `\\n` and `\\t` but no other control character"
                       : "a code point is at most 10ffff and not a surrogate (d800 to dfff)";
      report(std::move(d));
      return "";
    }
    std::string out;
    append_utf8(out, c);
    return out;
  }

  static void append_text(ast::StringLit& s, std::string text, Span where) {
    if (!s.parts.empty() && !s.parts.back().expr) {
      s.parts.back().text += text;
      s.parts.back().span.end = where.end;
      return;
    }
    s.parts.push_back({std::move(text), nullptr, where});
  }

  ast::ExprPtr make(ast::Expr::Kind kind, Span s) {
    using K = ast::Expr::Kind;
    if (kind == K::binary || kind == K::unary || kind == K::index) ++operators_;
    auto e = std::make_unique<ast::Expr>();
    e->kind = kind;
    e->span = s;
    return e;
  }

  ast::ExprPtr expr(const Node& n) {
    using K = ast::Expr::Kind;
    if (n.is_type<r::or_expr>() || n.is_type<r::and_expr>() || n.is_type<r::cmp_expr>() ||
        n.is_type<r::add_expr>() || n.is_type<r::mul_expr>()) {
      return operator_chain(n);
    }
    if (n.is_type<r::condition>() || n.is_type<r::list_element>()) return expr(*parts(n)[0]);
    if (n.is_type<r::number>()) {
      auto e = make(K::number, span(n));
      e->number = number(n);
      return e;
    }
    if (n.is_type<r::string_literal>()) {
      auto e = make(K::string, span(n));
      e->string = string(n);
      return e;
    }
    if (n.is_type<r::boolean>()) {
      auto e = make(K::boolean, span(n));
      e->boolean = n.string_view() == "true";
      return e;
    }
    if (n.is_type<r::name>()) {
      auto e = make(K::name, span(n));
      e->name = name(n);
      return e;
    }
    if (n.is_type<r::list_expr>()) {
      auto e = make(K::list, span(n));
      for (const Node* item : parts(n)) e->operands.push_back(expr(*item));
      return e;
    }
    if (n.is_type<r::negate>() || n.is_type<r::not_prefix>()) {
      auto e = make(K::unary, span(n));
      e->unary_op = n.is_type<r::negate>() ? ast::UnaryOp::negate : ast::UnaryOp::logical_not;
      size_t i = 0;
      e->operands.push_back(operand(parts(n), i));
      return e;
    }
    // A primary followed by index suffixes arrives as siblings; see operator_chain.
    return make(K::boolean, span(n));
  }

  /// Folds `a op b op c` (children: operand, operator, operand, ...) to the left; also
  /// attaches index suffixes `x[k]` that follow a primary.
  ast::ExprPtr operator_chain(const Node& n) {
    auto p = parts(n);
    if (p.size() > 2 * kMaxOperatorChain) {
      Diagnostic d = make_diagnostic(Code::nesting_too_deep, at(span(n)),
                                     fmt::format("more than {} operands joined by one operator", kMaxOperatorChain),
                                     "expression too long");
      d.help = "split the condition into several rules";
      report(std::move(d));
      return make(ast::Expr::Kind::boolean, span(n));
    }
    size_t i = 0;
    ast::ExprPtr left = operand(p, i);
    while (i < p.size()) {
      if (over_operator_budget(n)) return make(ast::Expr::Kind::boolean, span(n));
      const Node& op = *p[i++];
      ast::ExprPtr right = operand(p, i);
      auto e = make(ast::Expr::Kind::binary, {left->span.begin, right->span.end});
      e->binary_op = binary_op(op);
      e->operands.push_back(std::move(left));
      e->operands.push_back(std::move(right));
      left = std::move(e);
    }
    return left;
  }

  /// Whether this declaration's expressions have more operators than kMaxDeclarationOperators
  /// (reported once). Past the budget the builder stops growing trees: their depth stays bounded.
  bool over_operator_budget(const Node& n) {
    if (operators_ <= kMaxDeclarationOperators) return false;
    if (!operators_reported_) {
      operators_reported_ = true;
      Diagnostic d = make_diagnostic(Code::nesting_too_deep, at(span(n)),
                                     fmt::format("more than {} operators in one declaration", kMaxDeclarationOperators),
                                     "expression too long");
      d.help = "split the condition into several rules";
      report(std::move(d));
    }
    return true;
  }

  /// One operand at p[i] plus any index suffixes after it; advances i.
  ast::ExprPtr operand(const std::vector<const Node*>& p, size_t& i) {
    ast::ExprPtr e = expr(*p[i++]);
    while (i < p.size() && p[i]->is_type<r::index_suffix>()) {
      if (over_operator_budget(*p[i])) return make(ast::Expr::Kind::boolean, e->span);
      auto index = make(ast::Expr::Kind::index, {e->span.begin, static_cast<uint32_t>(p[i]->end().byte)});
      index->operands.push_back(std::move(e));
      index->operands.push_back(expr(*parts(*p[i])[0]));
      e = std::move(index);
      ++i;
    }
    return e;
  }

  static ast::BinaryOp binary_op(const Node& op) {
    std::string_view t = op.string_view();
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
    if (op.is_type<r::kw_or>()) return ast::BinaryOp::logical_or;
    if (op.is_type<r::kw_and>()) return ast::BinaryOp::logical_and;
    if (t == "+") return ast::BinaryOp::add;
    if (t == "-") return ast::BinaryOp::sub;
    if (t == "*") return ast::BinaryOp::mul;
    if (t == "/") return ast::BinaryOp::div;
    if (t == "==") return ast::BinaryOp::eq;
    if (t == "!=") return ast::BinaryOp::ne;
    if (t == "<=") return ast::BinaryOp::le;
    if (t == ">=") return ast::BinaryOp::ge;
    if (t == "<") return ast::BinaryOp::lt;
    if (t == ">") return ast::BinaryOp::gt;
    if (t == "in") return ast::BinaryOp::in;
    return ast::BinaryOp::not_in;
  }

  ParseContext& ctx_;
  size_t operators_ = 0;  // in the current declaration
  bool operators_reported_ = false;
};

}  // namespace

ast::File build_file(const Node& root, ParseContext& ctx) {
  Builder builder(ctx);
  return builder.file(root);
}

}  // namespace gov::grammar
