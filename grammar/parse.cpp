#include "grammar/parse.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "compiler/support/terminal_text.hpp"
#include "grammar/errors.hpp"
#include "grammar/rules.hpp"
#include "grammar/schema.hpp"

namespace gov::grammar {
namespace {

namespace pegtl = tao::pegtl;
namespace r = rules;
using Node = pegtl::parse_tree::node;

// ------------------------------------------------------------------ syntax errors

/// Shared by the PEGTL control (error recovery) and the tree conversion.
struct ParseContext {
  const SourceFile& file;
  SourceId source;
  Diagnostics& diagnostics;
};

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

/// The span of the token at `offset`: a word, or one UTF-8 character.
Span token_at(std::string_view text, uint32_t offset) {
  if (offset >= text.size()) return {offset, offset};
  uint32_t end = offset;
  if (is_word_char(text[offset])) {
    while (end < text.size() && is_word_char(text[end]) && end - offset < 64) ++end;
  } else {
    end = offset + std::max(1, utf8_sequence_length(static_cast<unsigned char>(text[offset])));
    end = std::min<uint32_t>(end, static_cast<uint32_t>(text.size()));
  }
  return {offset, end};
}

/// The combining diacritical marks and variation selectors: drawn on the character before.
bool is_combining_mark(uint32_t c) {
  return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF) ||
         (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xFE20 && c <= 0xFE2F);
}

/// What the parser found at `token`, for "expected X, found Y". Blank, control and invisible
/// characters are named, never printed as they are ("found ``" helps nobody).
std::string describe_token(std::string_view text, Span token) {
  if (token.begin >= text.size()) return "the end of the file";
  if (text[token.begin] == '\n' || text[token.begin] == '\r') return "the end of the line";
  if (text[token.begin] == ' ') return "a space";
  if (text[token.begin] == '\t') return "a tab";
  const CodePoint cp = decode_code_point(text, token.begin);
  if (cp.valid && is_unsafe_for_terminal(cp.value)) {
    return fmt::format("`{}` ({})", escape_code_point(cp.value), describe_code_point(cp.value));
  }
  // A combining mark on its own would draw over the quote before it.
  if (cp.valid && is_combining_mark(cp.value)) {
    return fmt::format("`{}` ({}, a combining mark)", escape_code_point(cp.value), describe_code_point(cp.value));
  }
  return fmt::format("`{}`", escape_for_terminal(text.substr(token.begin, token.end - token.begin)));
}

/// Offset of the first character at or after `offset` that is not white space or a comment.
uint32_t skip_blank(std::string_view text, uint32_t offset) {
  while (offset < text.size()) {
    const char c = text[offset];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++offset;
    } else if (c == '#' || (c == '/' && offset + 1 < text.size() && text[offset + 1] == '/')) {
      while (offset < text.size() && text[offset] != '\n') ++offset;
    } else {
      break;
    }
  }
  return offset;
}

/// The innermost `{` left open at the end of the text, skipping strings and comments.
std::optional<uint32_t> unclosed_brace(std::string_view text) {
  std::vector<uint32_t> open;
  for (uint32_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#' || (c == '/' && i + 1 < text.size() && text[i + 1] == '/')) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '{') {
      open.push_back(i);
    } else if (c == '}' && !open.empty()) {
      open.pop_back();
    }
  }
  if (open.empty()) return std::nullopt;
  return open.back();
}

/// The offset just after the last token before `offset` (skipping white space; comments
/// count as tokens, which is where a reader's eye is anyway).
uint32_t end_of_previous_token(std::string_view text, uint32_t offset) {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  while (offset > 0 && (text[offset - 1] == ' ' || text[offset - 1] == '\t' || text[offset - 1] == '\n' ||
                        text[offset - 1] == '\r')) {
    --offset;
  }
  return offset;
}

/// The opening quote of the unterminated string that the error at `offset` is in.
uint32_t string_start(std::string_view text, uint32_t line_begin, uint32_t offset) {
  uint32_t start = offset;
  bool inside = false;
  for (uint32_t i = line_begin; i < offset && i < text.size(); ++i) {
    if (text[i] == '\\' && inside) {
      ++i;
    } else if (text[i] == '"') {
      inside = !inside;
      if (inside) start = i;
    }
  }
  return start;
}

const std::vector<std::string>& declaration_keywords() {
  static const std::vector<std::string> words = {"import", "catalog", "cluster", "policy", "team", "rule", "test"};
  return words;
}

bool is_reserved(std::string_view word) {
  static const std::vector<std::string_view> words = {
      "import", "catalog", "instance", "cluster", "policy", "team", "quota", "rule", "test", "priority", "when",
      "deny", "warn", "submit", "finish", "cancel", "expect", "at", "and", "or", "not", "in", "true", "false"};
  return std::find(words.begin(), words.end(), word) != words.end();
}

/// `Team_A` -> `team-a`: the nearest valid name, for help text.
std::string suggest_name(std::string_view word) {
  std::string out;
  for (char c : word) {
    if (c == '_') c = '-';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Diagnostic syntax_diagnostic(const ParseContext& ctx, std::string_view kind, std::string_view text,
                             uint32_t offset) {
  const std::string_view source = ctx.file.text();
  const Span token = token_at(source, offset);
  const std::string found = describe_token(source, token);
  auto at = [&](Span span) { return Location{ctx.source, span}; };

  if (kind == "nest") {
    Diagnostic d = make_diagnostic(Code::nesting_too_deep, at(token),
                                   fmt::format("nesting deeper than {} levels", r::kMaxNesting), "too deep");
    d.help = fmt::format("gov allows at most {} levels of parentheses, lists, braces and prefix operators", r::kMaxNesting);
    return d;
  }
  if (kind == "string") {
    const LineColumn lc = ctx.file.line_column(offset);
    const uint32_t start = string_start(source, ctx.file.line_start(lc.line), offset);
    Diagnostic d = make_diagnostic(Code::unterminated_string, at({start, offset}), "unterminated string",
                                   "this string is never closed");
    d.help = "strings end with `\"` on the line they start";
    return d;
  }
  if (kind == "escape") {
    Diagnostic d = make_diagnostic(Code::invalid_escape, at({offset > 0 ? offset - 1 : offset, token.end}),
                                   fmt::format("unknown escape `\\{}`", source.substr(token.begin, token.end - token.begin)),
                                   "not an escape");
    d.help = "the escapes are \\\" \\\\ \\n \\t \\{ \\} and \\u{...} (a code point in hexadecimal, as in \\u{e9})";
    return d;
  }
  if (kind == "uescape") {
    // The error is inside `\u{...}`: underline from the backslash to the offending character.
    const size_t backslash = source.rfind("\\u", offset);
    const uint32_t begin = backslash == std::string_view::npos ? offset : static_cast<uint32_t>(backslash);
    Diagnostic d = make_diagnostic(Code::invalid_escape, at({begin, std::max(token.end, offset + 1)}),
                                   fmt::format("invalid unicode escape: expected {}, found {}", text, found),
                                   "not a unicode escape");
    d.help = "write a code point as 1 to 6 hexadecimal digits in braces, as in `\\u{202e}`";
    return d;
  }
  if (kind == "interp") {
    Diagnostic d = make_diagnostic(Code::unterminated_interpolation, at(token),
                                   fmt::format("expected `}}` to close the interpolation, found {}", found),
                                   "expected `}`");
    d.help = "write `\\{` for a literal brace";
    return d;
  }
  if (kind == "chain") {
    Diagnostic d = make_diagnostic(Code::chained_comparison, at(token), "comparisons cannot be chained",
                                   "second comparison");
    d.help = "compare twice and join with `and`: `a < b and b < c`";
    return d;
  }
  if (kind == "equals") {
    const uint32_t eq = skip_blank(source, offset);
    Diagnostic d = make_diagnostic(Code::expected_token, at({eq, eq + 1}), "expected `==` to compare, found `=`",
                                   "assignment is not a comparison");
    d.help = "write `==`";
    return d;
  }
  if (kind == "expr") {
    Diagnostic d = make_diagnostic(Code::expected_expression, at(token), fmt::format("{}, found {}", text, found),
                                   "expected an expression");
    return d;
  }
  if (kind == "decl") {
    const std::string word(source.substr(token.begin, token.end - token.begin));
    Diagnostic d = make_diagnostic(Code::expected_declaration, at(token),
                                   fmt::format("expected a declaration, found {}", found), "not a declaration");
    if (auto guess = did_you_mean(word, declaration_keywords())) {
      d.help = *guess;
    } else {
      d.help = "declarations start with `import`, `catalog`, `cluster`, `policy`, `team`, `rule` or `test`";
    }
    return d;
  }
  if (kind == "close" && skip_blank(source, offset) >= source.size()) {
    const uint32_t end = end_of_previous_token(source, static_cast<uint32_t>(source.size()));
    Diagnostic d = make_diagnostic(Code::unclosed_block, at({end, end}), "missing `}` at the end of the file",
                                   "expected `}` after this");
    if (auto open = unclosed_brace(source)) {
      d.notes.push_back({Location{ctx.source, {*open, *open + 1}}, "the block opened here is never closed"});
    }
    return d;
  }
  const std::string word(source.substr(token.begin, token.end - token.begin));
  const bool bad_word = !word.empty() && is_word_char(word[0]) && suggest_name(word) != word;
  if (kind == "close" && bad_word) {
    Diagnostic d = make_diagnostic(Code::invalid_name, at(token), fmt::format("invalid name `{}`", word),
                                   "not a valid property name");
    d.help = fmt::format("names use lower-case letters, digits and hyphens: `{}`", suggest_name(word));
    return d;
  }
  if (kind == "name") {
    if (is_reserved(word)) {
      Diagnostic d = make_diagnostic(Code::reserved_word, at(token),
                                     fmt::format("`{}` is a reserved word and cannot be used as a name", word),
                                     "reserved word");
      d.help = fmt::format("choose another name, such as `{}-1`", word);
      return d;
    }
    if (!word.empty() && is_word_char(word[0])) {
      Diagnostic d = make_diagnostic(Code::invalid_name, at(token), fmt::format("invalid name `{}`", word),
                                     "not a valid name");
      d.help = fmt::format("names use lower-case letters, digits and hyphens and start with a letter, like `{}`",
                           suggest_name(word));
      return d;
    }
  }
  // When the expected token is missing at the end of a line, point there, not at the
  // next line's first token.
  const uint32_t previous_end = end_of_previous_token(source, offset);
  const bool line_break_before = source.substr(previous_end, offset - previous_end).find('\n') != std::string_view::npos;
  const Span primary = kind == "token" && line_break_before ? Span{previous_end, previous_end} : token;
  std::string label(text);
  if (kind == "close") label = "unexpected " + (found.front() == '`' ? std::string("token") : found);
  return make_diagnostic(Code::expected_token, at(primary), fmt::format("{}, found {}", text, found), label);
}

/// Where parsing resumes after an error in a declaration that started at `start`: the
/// next line that begins (in column 1) with a declaration keyword, or the end of input.
std::size_t resume_offset(std::string_view text, std::size_t start, std::size_t error_offset) {
  // Start at the beginning of the error's line: the error may sit just after a keyword
  // that begins the next declaration (`team` read as a property key, say).
  std::size_t from = error_offset;
  while (from > 0 && text[from - 1] != '\n') --from;
  from = std::max(start + 1, from);
  for (std::size_t i = from; i < text.size(); ++i) {
    if (i != 0 && text[i - 1] != '\n') continue;
    std::size_t word_start = i;
    while (word_start < text.size() && (text[word_start] == ' ' || text[word_start] == '\t')) ++word_start;
    for (const std::string& word : declaration_keywords()) {
      const std::size_t after = word_start + word.size();
      if (text.compare(word_start, word.size(), word) != 0) continue;
      if (after < text.size() && is_word_char(text[after])) continue;
      // `catalog = aws-ml` inside a cluster is a property, not a declaration.
      std::size_t next = after;
      while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
      if (next < text.size() && (text[next] == '=' || text[next] == ':')) continue;
      return std::max(word_start, start + 1);
    }
  }
  return text.size();
}

template <typename... States>
ParseContext& find_context(States&... states) {
  ParseContext* found = nullptr;
  auto pick = [&](auto& state) {
    if constexpr (std::is_same_v<std::decay_t<decltype(state)>, ParseContext>) found = &state;
  };
  (pick(states), ...);
  return *found;
}

template <typename Rule>
struct control : pegtl::must_if<errors>::control<Rule> {
  /// Called by rules::recover: reports the error and returns the offset to resume at.
  template <typename ParseInput, typename... States>
  static std::size_t recover(const ParseInput& in, const pegtl::parse_error& error, std::size_t start,
                             States&... states) {
    ParseContext& ctx = find_context(states...);
    const std::string_view message = error.message();
    const std::size_t bar = message.find('|');
    const std::string_view kind = bar == std::string_view::npos ? "token" : message.substr(0, bar);
    const std::string_view text = bar == std::string_view::npos ? message : message.substr(bar + 1);
    const std::size_t offset = error.positions().empty() ? start : error.positions().front().byte;
    ctx.diagnostics.report(syntax_diagnostic(ctx, kind, text, static_cast<uint32_t>(offset)));
    (void)in;
    return resume_offset(ctx.file.text(), start, offset);
  }
};

// ------------------------------------------------------------------ parse tree selection

template <typename Rule>
using selector = pegtl::parse_tree::selector<
    Rule,
    pegtl::parse_tree::store_content::on<
        r::comment, r::name, r::key, r::decl_name, r::outcome, r::word_clause, r::number, r::number_literal, r::unit,
        r::boolean, r::string_literal, r::map_name, r::list_element, r::list_item, r::string_chars, r::escape, r::interpolation, r::import_path, r::message_string,
        r::test_name, r::priority_weight, r::at_time, r::list_expr, r::index_suffix, r::negate, r::not_prefix,
        r::mul_expr, r::add_expr, r::cmp_expr, r::and_expr, r::or_expr, r::mul_op, r::add_op, r::cmp_op, r::kw_and,
        r::kw_or, r::condition, r::property, r::map_entry, r::block_value, r::map_value, r::list_value,
        r::import_decl, r::catalog_decl, r::instance_decl, r::cluster_decl, r::policy_decl, r::priority_decl,
        r::team_decl, r::quota_decl, r::rule_decl, r::deny_action, r::warn_action, r::test_decl, r::submit_step,
        r::finish_step, r::cancel_step, r::at_step, r::expect_step, r::on_clause, r::by_clause, r::warned_clause,
        r::borrowing_clause, r::short_clause, r::message_clause>>;

// ------------------------------------------------------------------ parse tree -> AST

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
      ast::Catalog c{name(*p[0]), {}, span(n)};
      for (size_t i = 1; i < p.size(); ++i) {
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

  ast::Unit unit(std::string_view text, Span number_span) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    if (text.empty()) return ast::Unit::none;
    if (text == "%") return ast::Unit::percent;
    if (text == "MiB") return ast::Unit::mib;
    if (text == "GiB") return ast::Unit::gib;
    if (text == "TiB") return ast::Unit::tib;
    if (text == "m") return ast::Unit::milli;
    if (text == "%") return ast::Unit::percent;
    std::string lower;
    for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const Span unit_span{number_span.end - static_cast<uint32_t>(text.size()), number_span.end};
    Diagnostic d = make_diagnostic(Code::unknown_unit, at(unit_span), fmt::format("unknown unit `{}`", text),
                                   "not a unit gov knows");
    if (lower == "gb" || lower == "g" || lower == "gi" || lower == "gib") {
      d.help = "did you mean `GiB`? gov uses binary units (1 GiB = 1024 MiB)";
    } else if (lower == "m") {
      d.help = "write millicores without a space: `500m`";
    } else if (lower == "mb" || lower == "mi" || lower == "mib") {
      d.help = "did you mean `MiB`? gov uses binary units";
    } else if (lower == "tb" || lower == "t" || lower == "ti" || lower == "tib") {
      d.help = "did you mean `TiB`? gov uses binary units (1 TiB = 1024 GiB)";
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
    size_t bytes = 0;
    for (const ast::StringPart& part : out.parts) bytes += part.text.size();
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

/// Checks that the text can be parsed at all: size, UTF-8, control characters.
bool check_encoding(const ParseContext& ctx) {
  const std::string& text = ctx.file.text();
  if (text.size() > kMaxFileBytes) {
    Diagnostic d = make_diagnostic(Code::file_too_large, {ctx.source, {0, 0}},
                                   fmt::format("file is {} bytes; gov reads policy files of at most {} bytes",
                                               text.size(), kMaxFileBytes));
    d.help = "split the policy into several files joined with `import`";
    ctx.diagnostics.report(std::move(d));
    return false;
  }
  if (const size_t bad = find_invalid_utf8(text); bad != std::string::npos) {
    Diagnostic d = make_diagnostic(Code::invalid_utf8, {ctx.source, {uint32_t(bad), uint32_t(bad + 1)}},
                                   "the file is not valid UTF-8", "this byte is not UTF-8");
    d.help = "save the file as UTF-8";
    ctx.diagnostics.report(std::move(d));
    return false;
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // C1 controls (U+0080-U+009F, UTF-8 C2 80 to C2 9F) act on terminals as C0 ones do.
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F || c1) {
      const uint32_t value = c1 ? static_cast<unsigned char>(text[i + 1]) : c;
      Diagnostic d = make_diagnostic(Code::control_character, {ctx.source, {uint32_t(i), uint32_t(i + (c1 ? 2 : 1))}},
                                     fmt::format("control character U+{:04X} in the file", value), "here");
      d.help = "policy files are text; remove the character";
      ctx.diagnostics.report(std::move(d));
      return false;
    }
  }
  return true;
}

// ------------------------------------------------------------------ hidden characters

/// Most diagnostics the hidden-character scan reports per file, and most carets per
/// diagnostic: a file made of nothing but bidi controls stays cheap to report and to read.
constexpr size_t kMaxHiddenReports = 50;
constexpr size_t kMaxHiddenMarks = 16;

enum class Region { code, string, comment };

/// Hidden characters of one kind in one comment, one string, or one line of code.
struct HiddenGroup {
  Code code;
  Region region;
  uint32_t line_begin;
  std::vector<std::pair<Span, uint32_t>> found;  // the first kMaxHiddenMarks: span and code point
  size_t count = 0;                              // all of them
};

bool is_blank_like(uint32_t c) {
  return c == 0x00A0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F || c == 0x3000;
}

/// "U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT ISOLATE": the distinct characters in
/// order of appearance, at most four, then how many more.
std::string distinct_characters(const HiddenGroup& group, std::vector<uint32_t>& distinct) {
  for (const auto& [where, c] : group.found) {
    if (std::find(distinct.begin(), distinct.end(), c) == distinct.end()) distinct.push_back(c);
  }
  std::vector<std::string> names;
  for (size_t k = 0; k < distinct.size() && k < 4; ++k) names.push_back(describe_code_point(distinct[k]));
  std::string text = fmt::format("{}", fmt::join(names, ", "));
  if (distinct.size() > 4) text += fmt::format(" and {} more", distinct.size() - 4);
  return text;
}

/// The word (a name or keyword) that ends at `end`, or "".
std::string_view word_before(std::string_view text, uint32_t end) {
  uint32_t begin = end;
  while (begin > 0 && end - begin < 64 && is_word_char(text[begin - 1])) --begin;
  return text.substr(begin, end - begin);
}

std::string_view word_after(std::string_view text, uint32_t begin) {
  uint32_t end = begin;
  while (end < text.size() && end - begin < 64 && is_word_char(text[end])) ++end;
  return text.substr(begin, end - begin);
}

Diagnostic bidi_diagnostic(const ParseContext& ctx, const HiddenGroup& group) {
  const std::string_view text = ctx.file.text();
  const Span first = group.found.front().first;
  std::string_view where = "in a comment";
  if (group.region == Region::string) where = "in a string";
  if (group.region == Region::code) {
    const bool in_name = (first.begin > 0 && is_word_char(text[first.begin - 1])) ||
                         (first.end < text.size() && is_word_char(text[first.end]));
    where = in_name ? "in a name" : "between tokens";
  }
  std::vector<uint32_t> distinct;
  const std::string names = distinct_characters(group, distinct);
  Diagnostic d = make_diagnostic(
      Code::text_direction_control, {ctx.source, first},
      fmt::format("text direction control character{} {}: {}", distinct.size() == 1 && group.count == 1 ? "" : "s",
                  where, names),
      group.count == 1 ? "changes the order in which the text is shown" : "change the order in which the text is shown");
  for (size_t k = 1; k < group.found.size() && k < kMaxHiddenMarks; ++k) d.marks.push_back(group.found[k].first);
  d.notes.push_back({std::nullopt,
                     "these characters make text display in another order than gov reads it, so a policy can "
                     "mean something other than what it shows (Trojan Source, CVE-2021-42574)"});
  if (group.region == Region::string) {
    std::vector<std::string> escapes;
    for (const uint32_t c : distinct) escapes.push_back(fmt::format("`{}`", escape_code_point(c)));
    d.help = fmt::format("if the string should hold {}, write {}: {}", distinct.size() == 1 ? "it" : "them",
                         distinct.size() == 1 ? "it as an escape" : "them as escapes", fmt::join(escapes, ", "));
  } else if (group.region == Region::comment) {
    const std::string_view them = group.count == 1 ? "it" : "them";
    d.help = fmt::format("remove {}; right-to-left text in a comment displays correctly without {}", them, them);
  } else {
    const std::string_view them = group.count == 1 ? "it" : "them";
    d.help = fmt::format("remove {}; names are plain ASCII and cannot hold {}", them, them);
  }
  return d;
}

Diagnostic invisible_diagnostic(const ParseContext& ctx, const HiddenGroup& group) {
  const std::string_view text = ctx.file.text();
  const auto [first, c] = group.found.front();
  const std::string more =
      group.count > 1 ? fmt::format(" (and {} more on this line)", group.count - 1) : "";
  Diagnostic d = make_diagnostic(Code::invisible_character, {ctx.source, first}, "", "");
  for (size_t k = 1; k < group.found.size() && k < kMaxHiddenMarks; ++k) d.marks.push_back(group.found[k].first);
  if (c == 0xFEFF) {
    d.message = fmt::format("unexpected byte order mark (U+FEFF){}", more);
    d.label = "byte order mark";
    d.help = "a byte order mark may only begin a file; remove this one (joining files keeps each file's mark)";
    return d;
  }
  std::string where = "between tokens";
  if (const std::string_view before = word_before(text, first.begin); !before.empty()) {
    where = fmt::format("after `{}`", before);
  } else if (const std::string_view after = word_after(text, first.end); !after.empty()) {
    where = fmt::format("before `{}`", after);
  }
  d.message = fmt::format("invisible character {} {}{}", describe_code_point(c), where, more);
  d.label = fmt::format("`{}` is here", escape_code_point(c));
  d.help = is_blank_like(c) ? "replace it with an ASCII space"
                            : "remove it; names use lower-case ASCII letters, digits, hyphens and dots";
  return d;
}

/// Reports bidi controls anywhere (E0007) and invisible characters outside strings and
/// comments (E0008): text that does not show what it is. One diagnostic per comment,
/// string or line of code, with a caret at each character. False when anything was found.
bool check_hidden_characters(const ParseContext& ctx) {
  const std::string_view text = ctx.file.text();
  std::vector<HiddenGroup> groups;
  // Innermost first: strings on a line, interpolations in them, strings in those. Every
  // string ends at its line, so the stack resets at each line break.
  std::vector<std::pair<Region, uint32_t>> stack{{Region::code, 0}};
  // Only the first kMaxHiddenReports groups are kept; later ones are only counted, by their
  // keys (consecutive repeats dropped, the rest made unique at the end): memory stays small
  // on a file full of such characters.
  std::map<std::pair<Code, uint32_t>, size_t> index;  // (code, region start or line) -> group
  std::vector<std::pair<Code, uint32_t>> later;
  uint32_t line_begin = 0;
  auto add = [&](Code code, Region region, uint32_t region_start, Span where, uint32_t c) {
    const auto key = std::pair(code, region == Region::code ? line_begin : region_start);
    auto it = index.find(key);
    if (it == index.end()) {
      if (groups.size() == kMaxHiddenReports) {
        if (later.empty() || later.back() != key) later.push_back(key);
        return;
      }
      it = index.emplace(key, groups.size()).first;
      groups.push_back({code, region, line_begin, {}, 0});
    }
    HiddenGroup& group = groups[it->second];
    if (group.found.size() < kMaxHiddenMarks) group.found.emplace_back(where, c);
    ++group.count;
  };
  for (uint32_t i = 0; i < text.size();) {
    // Most bytes are ASCII that changes no region: skip them without decoding.
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80 && lead != '\n' && lead != '#' && lead != '/' && lead != '"' && lead != '{' && lead != '}' &&
        lead != '\\') {
      ++i;
      continue;
    }
    const CodePoint cp = decode_code_point(text, i);  // the text is valid UTF-8 here
    const auto [region, region_start] = stack.back();
    const Span where{i, i + cp.length};
    if (cp.value == '\n') {
      stack.assign(1, {Region::code, 0});
      line_begin = i + 1;
    } else if (region == Region::code && (cp.value == '#' || text.substr(i, 2) == "//")) {
      stack.emplace_back(Region::comment, i);
    } else if (region == Region::code && cp.value == '"') {
      stack.emplace_back(Region::string, i);
    } else if (region == Region::code && cp.value == '}' && stack.size() > 1) {
      stack.pop_back();  // the end of an interpolation
    } else if (region == Region::string && cp.value == '"') {
      stack.pop_back();
    } else if (region == Region::string && cp.value == '{') {
      stack.emplace_back(Region::code, i);
    } else if (region == Region::string && cp.value == '\\' && i + 1 < text.size() &&
               (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '{')) {
      i += 2;  // an escaped quote, backslash or brace
      continue;
    } else if (is_bidi_control(cp.value)) {
      add(Code::text_direction_control, region, region_start, where, cp.value);
    } else if (region == Region::code && is_invisible(cp.value) && !(i == 0 && cp.value == 0xFEFF)) {
      add(Code::invisible_character, region, region_start, where, cp.value);
    }
    i += cp.length;
  }
  for (const HiddenGroup& group : groups) {
    ctx.diagnostics.report(group.code == Code::text_direction_control ? bidi_diagnostic(ctx, group)
                                                                      : invisible_diagnostic(ctx, group));
  }
  std::sort(later.begin(), later.end());
  later.erase(std::unique(later.begin(), later.end()), later.end());
  if (!later.empty()) {
    Diagnostic& last = ctx.diagnostics.items().back();
    last.notes.push_back({std::nullopt, fmt::format("{} more comments, strings or lines have such characters; "
                                                    "only the first {} are reported",
                                                    later.size(), kMaxHiddenReports)});
  }
  return groups.empty();
}

}  // namespace

ParseResult parse(const SourceMap& sources, SourceId source) {
  ParseResult result;
  result.file.source = source;
  ParseContext ctx{sources.get(source), source, result.diagnostics};
  if (!check_encoding(ctx)) return result;
  if (!check_hidden_characters(ctx)) {
    result.diagnostics.sort();
    return result;
  }

  const std::string& text = ctx.file.text();
  pegtl::memory_input<pegtl::tracking_mode::eager> in(text.data(), text.size(), ctx.file.path());
  std::unique_ptr<Node> root;
  try {
    root = pegtl::parse_tree::parse<r::file, selector, pegtl::nothing, control>(in, ctx);
  } catch (const pegtl::parse_error& error) {
    // Errors are recovered per declaration; one escaping here is at the file level.
    const size_t offset = error.positions().empty() ? 0 : error.positions().front().byte;
    ctx.diagnostics.report(syntax_diagnostic(ctx, "token", error.message(), static_cast<uint32_t>(offset)));
    return result;
  }
  if (root) {
    Builder builder(ctx);
    result.file = builder.file(*root);
  }
  validate_schema(result.file, result.diagnostics);
  result.diagnostics.sort();
  return result;
}

}  // namespace gov::grammar
