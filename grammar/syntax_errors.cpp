// Syntax errors: the diagnostic of each kind of syntax error (code, span, message, help) and
// where parsing resumes after one.
#include "grammar/syntax_errors.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

#include "compiler/model/hyperpod_names.hpp"
#include "compiler/support/terminal_text.hpp"
#include "grammar/parse.hpp"

namespace gov::grammar {

namespace r = rules;

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

namespace {

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

/// What the braces of a text say, strings and comments skipped.
struct BraceScan {
  /// The innermost `{` left open at the end of the text.
  std::optional<uint32_t> unclosed;
  /// The first pair, opened inside `unclosed`, whose `}` starts its line to the left of the
  /// line its `{` is on: that `}` lines up with an outer block, so it probably closes that one,
  /// and the `{`'s own line lost its `}` (`quota x { instances = 2` with the `}` forgotten).
  std::optional<std::pair<uint32_t, uint32_t>> misaligned;  // the `{` and the `}`
};

/// One pass over the text (it may be one long line: nothing is read twice), keeping the
/// current line's indentation, so that a `}` starting its line is compared with the
/// indentation of the line its `{` is on.
BraceScan scan_braces(std::string_view text) {
  struct Open {
    uint32_t offset;
    uint32_t indent;  // of the `{`'s line
  };
  std::vector<Open> open;
  std::vector<std::pair<uint32_t, uint32_t>> misaligned;
  uint32_t line_begin = 0;
  std::optional<uint32_t> first_on_line;  // the current line's first non-blank byte
  for (uint32_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      line_begin = i + 1;
      first_on_line.reset();
      continue;
    }
    if (!first_on_line && c != ' ' && c != '\t' && c != '\r') first_on_line = i;
    if (c == '#' || (c == '/' && i + 1 < text.size() && text[i + 1] == '/')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;  // the line feed is seen next
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\n') {  // an unterminated string ends at its line
          --i;
          break;
        }
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n') ++i;
      }
    } else if (c == '{') {
      open.push_back({i, *first_on_line - line_begin});
    } else if (c == '}' && !open.empty()) {
      if (*first_on_line == i && i - line_begin < open.back().indent) misaligned.emplace_back(open.back().offset, i);
      open.pop_back();
    }
  }
  BraceScan scan;
  if (open.empty()) return scan;
  scan.unclosed = open.back().offset;
  for (const auto& pair : misaligned) {
    if (pair.first > *scan.unclosed) {
      scan.misaligned = pair;
      break;
    }
  }
  return scan;
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

/// The word (a name or key) that ends where the last token before `offset` ends; empty when
/// that token is no word.
Span word_before(std::string_view text, uint32_t offset) {
  const uint32_t end = end_of_previous_token(text, offset);
  uint32_t begin = end;
  while (begin > 0 && is_word_char(text[begin - 1])) --begin;
  return {begin, end};
}

/// Where the code before `offset` ends: end_of_previous_token, past comments too (a `}` the help
/// asks for belongs after the last token, not at the end of a comment line that follows it).
uint32_t end_of_previous_code(std::string_view text, uint32_t offset) {
  for (;;) {
    offset = end_of_previous_token(text, offset);
    if (offset == 0) return 0;
    uint32_t line_begin = offset;
    while (line_begin > 0 && text[line_begin - 1] != '\n') --line_begin;
    // The line's comment, outside strings: `#` to the end of the line.
    bool inside = false;
    uint32_t comment = offset;
    for (uint32_t i = line_begin; i < offset; ++i) {
      if (text[i] == '\\' && inside) {
        ++i;
      } else if (text[i] == '"') {
        inside = !inside;
      } else if (text[i] == '#' && !inside) {
        comment = i;
        break;
      }
    }
    if (comment == offset) return offset;
    offset = comment;  // and what comes before the comment
  }
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

/// The words that start a declaration (rules::declaration_keyword).
const std::vector<std::string>& declaration_keywords() {
  static const std::vector<std::string> words(r::declaration_keyword::words.begin(),
                                              r::declaration_keyword::words.end());
  return words;
}

/// "`a`, `b` or `c`".
template <size_t N>
std::string quoted_alternatives(const std::array<std::string_view, N>& words) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += fmt::format("`{}`", words[i]);
  }
  return out;
}

bool is_reserved(std::string_view word) {
  const auto& words = r::reserved_word::words;
  return std::find(words.begin(), words.end(), word) != words.end();
}

/// The help for an invalid name: the gov spelling, and for a HyperPod API member gov names
/// otherwise (`Count`), which one it is.
std::string name_help(std::string_view word, std::string_view rule) {
  if (const std::optional<std::string_view> gov = model::gov_word_for_hyperpod_name(word)) {
    return fmt::format("HyperPod's `{}` is `{}` in gov", word, *gov);
  }
  std::string suggestion = model::kebab_case(word);
  // The suggestion must be a name itself: one that starts with a digit gets a letter in front.
  if (suggestion.empty() || !std::isalpha(static_cast<unsigned char>(suggestion.front()))) suggestion = "n-" + suggestion;
  return fmt::format("{} `{}`", rule, suggestion);
}


/// The notes of an unclosed block (E0031): where the block left open starts and, when a `}`
/// lines up with an outer block but closes an inner one, that inner block (whose line most
/// likely lost its `}`), with a help naming the line.
void note_unclosed(Diagnostic& d, const ParseContext& ctx, const BraceScan& braces) {
  const auto at = [&](Span span) { return Location{ctx.source, span}; };
  if (braces.unclosed) d.notes.push_back({at({*braces.unclosed, *braces.unclosed + 1}), "the block opened here is never closed"});
  if (!braces.misaligned) return;
  const auto [inner, close] = *braces.misaligned;
  d.notes.push_back({at({inner, inner + 1}),
                     fmt::format("this `{{` is closed by the `}}` on line {}, which lines up with an outer block",
                                 ctx.file.line_column(close).line)});
  d.help = fmt::format("add `}}` at the end of line {}, or at the end of the block", ctx.file.line_column(inner).line);
}

/// A declaration keyword read as a property key (`team`, `rule`, … at the start of a line,
/// then a name or `{` where `=` was expected): the block before it lacks its `}`. Reported
/// as E0031 where the `}` belongs, with a note at the `{` left open.
std::optional<Diagnostic> declaration_inside_block(const ParseContext& ctx, std::string_view expected, uint32_t offset) {
  if (expected != "expected `=`") return std::nullopt;
  const std::string_view source = ctx.file.text();
  const auto [key_begin, key_end] = word_before(source, offset);
  const std::string_view key = source.substr(key_begin, key_end - key_begin);
  const auto& keywords = declaration_keywords();
  if (std::find(keywords.begin(), keywords.end(), key) == keywords.end()) return std::nullopt;
  uint32_t line_begin = key_begin;
  while (line_begin > 0 && (source[line_begin - 1] == ' ' || source[line_begin - 1] == '\t')) --line_begin;
  if (line_begin > 0 && source[line_begin - 1] != '\n') return std::nullopt;  // not first on its line
  const BraceScan braces = scan_braces(source.substr(0, key_begin));
  if (!braces.unclosed) return std::nullopt;
  const uint32_t end = end_of_previous_code(source, line_begin);
  const auto at = [&](Span span) { return Location{ctx.source, span}; };
  Diagnostic d = make_diagnostic(Code::unclosed_block, at({end, end}),
                                 fmt::format("missing `}}` before `{}`: the block above is not closed", key),
                                 "expected `}` after this");
  d.help = "add `}` at the end of the block";
  note_unclosed(d, ctx, braces);
  d.notes.push_back({at({key_begin, key_end}), fmt::format("`{}` starts a new declaration here", key)});
  return d;
}

}  // namespace

Diagnostic syntax_diagnostic(const ParseContext& ctx, SyntaxError error, uint32_t offset) {
  using K = SyntaxErrorKind;
  const K kind = error.kind;
  const std::string_view text = error.text;
  const std::string_view source = ctx.file.text();
  const Span token = token_at(source, offset);
  const std::string found = describe_token(source, token);
  auto at = [&](Span span) { return Location{ctx.source, span}; };

  switch (kind) {
    case K::nesting: {
      Diagnostic d = make_diagnostic(Code::nesting_too_deep, at(token),
                                     fmt::format("nesting deeper than {} levels", r::kMaxNesting), "too deep");
      d.help = fmt::format("gov allows at most {} levels of parentheses, lists, braces and prefix operators", r::kMaxNesting);
      return d;
    }
    case K::unterminated_string: {
      const LineColumn lc = ctx.file.line_column(offset);
      const uint32_t start = string_start(source, ctx.file.line_start(lc.line), offset);
      Diagnostic d = make_diagnostic(Code::unterminated_string, at({start, offset}), "unterminated string",
                                     "this string is never closed");
      d.help = "strings end with `\"` on the line they start";
      return d;
    }
    case K::escape: {
      Diagnostic d = make_diagnostic(Code::invalid_escape, at({offset > 0 ? offset - 1 : offset, token.end}),
                                     fmt::format("unknown escape `\\{}`", source.substr(token.begin, token.end - token.begin)),
                                     "not an escape");
      d.help = "the escapes are \\\" \\\\ \\n \\t \\{ \\} and \\u{...} (a code point in hexadecimal, as in \\u{e9})";
      return d;
    }
    case K::unicode_escape: {
      // The error is inside `\u{...}`: underline from the backslash to the offending character.
      const size_t backslash = source.rfind("\\u", offset);
      const uint32_t begin = backslash == std::string_view::npos ? offset : static_cast<uint32_t>(backslash);
      Diagnostic d = make_diagnostic(Code::invalid_escape, at({begin, std::max(token.end, offset + 1)}),
                                     fmt::format("invalid unicode escape: expected {}, found {}", text, found),
                                     "not a unicode escape");
      d.help = "write a code point as 1 to 6 hexadecimal digits in braces, as in `\\u{202e}`";
      return d;
    }
    case K::interpolation: {
      Diagnostic d = make_diagnostic(Code::unterminated_interpolation, at(token),
                                     fmt::format("expected `}}` to close the interpolation, found {}", found),
                                     "expected `}`");
      d.help = "write `\\{` for a literal brace";
      return d;
    }
    case K::chained_comparison: {
      Diagnostic d = make_diagnostic(Code::chained_comparison, at(token), "comparisons cannot be chained",
                                     "second comparison");
      d.help = "compare twice and join with `and`: `a < b and b < c`";
      return d;
    }
    case K::single_equals: {
      const uint32_t eq = skip_blank(source, offset);
      Diagnostic d = make_diagnostic(Code::expected_token, at({eq, eq + 1}), "expected `==` to compare, found `=`",
                                     "assignment is not a comparison");
      d.help = "write `==`";
      return d;
    }
    case K::expression:
      return make_diagnostic(Code::expected_expression, at(token), fmt::format("{}, found {}", text, found),
                             "expected an expression");
    case K::declaration: {
      const std::string word(source.substr(token.begin, token.end - token.begin));
      Diagnostic d = make_diagnostic(Code::expected_declaration, at(token),
                                     fmt::format("expected a declaration, found {}", found), "not a declaration");
      if (auto guess = did_you_mean(word, declaration_keywords())) {
        d.help = *guess;
      } else {
        d.help = fmt::format("declarations start with {}", quoted_alternatives(r::declaration_keyword::words));
      }
      return d;
    }
    case K::block_close: {
      if (skip_blank(source, offset) >= source.size()) {
        const uint32_t end = end_of_previous_token(source, static_cast<uint32_t>(source.size()));
        Diagnostic d = make_diagnostic(Code::unclosed_block, at({end, end}), "missing `}` at the end of the file",
                                       "expected `}` after this");
        note_unclosed(d, ctx, scan_braces(source));
        return d;
      }
      const std::string word(source.substr(token.begin, token.end - token.begin));
      if (!word.empty() && std::isalpha(static_cast<unsigned char>(word[0])) && model::kebab_case(word) != word) {
        Diagnostic d = make_diagnostic(Code::invalid_name, at(token), fmt::format("invalid name `{}`", word),
                                       "not a valid property name");
        d.help = name_help(word, "names use lower-case letters, digits and hyphens:");
        return d;
      }
      break;  // "expected a property or `}`, found ..."
    }
    case K::name: {
      const std::string word(source.substr(token.begin, token.end - token.begin));
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
        d.help = name_help(word, "names use lower-case letters, digits and hyphens and start with a letter, like");
        return d;
      }
      break;  // "expected a name, found ..."
    }
    case K::token: {
      if (auto d = declaration_inside_block(ctx, text, offset)) return *d;
      const std::string word(source.substr(token.begin, token.end - token.begin));
      // A near miss of a rule's action (`dney`), and a field in capitals (`task.Gpus`): said
      // as such, with the fix (a policy author's findings, session 43).
      if (text == "expected `deny` or `warn` and a message") {
        if (auto guess = did_you_mean(word, {"deny", "warn"})) {
          Diagnostic d = make_diagnostic(Code::expected_token, at(token), fmt::format("{}, found {}", text, found),
                                         "not `deny` or `warn`");
          d.help = *guess;
          return d;
        }
        if (word.size() > 1 && word[0] == '.' && model::kebab_case(word.substr(1)) != word.substr(1)) {
          Diagnostic d = make_diagnostic(Code::invalid_name, at({token.begin + 1, token.end}),
                                         fmt::format("invalid field name `{}`", word.substr(1)),
                                         "not a valid field name");
          d.help = fmt::format("field names are lower case: `{}`", model::kebab_case(word.substr(1)));
          return d;
        }
      }
      if (text == "expected `{`" && source.substr(token.begin, 1) == ":") {
        Diagnostic d = make_diagnostic(Code::expected_token, at(token), fmt::format("{}, found {}", text, found),
                                       "expected `{`");
        d.help = "gov blocks are braces, not indentation (as in YAML): `team a { quota ... }`";
        return d;
      }
      break;
    }
  }
  // When the expected token is missing at the end of a line, point there, not at the
  // next line's first token.
  const uint32_t previous_end = end_of_previous_token(source, offset);
  const bool line_break_before = source.substr(previous_end, offset - previous_end).find('\n') != std::string_view::npos;
  // A rule's `when` stands on a line of its own: the token found in its place is what the message
  // names, so the caret goes under it (it sat after the rule's `{`, a line above the `deny` the
  // message named: a policy author's finding, session 43).
  const bool own_line = text == "expected `when` and a condition";
  const Span primary = kind == K::token && line_break_before && !own_line ? Span{previous_end, previous_end} : token;
  std::string label(text);
  if (kind == K::block_close) label = "unexpected " + (found.front() == '`' ? std::string("token") : found);
  Diagnostic d = make_diagnostic(Code::expected_token, at(primary), fmt::format("{}, found {}", text, found), label);
  // C's and Python's logical operators where gov has words.
  const std::string_view rest = source.substr(token.begin);
  for (const auto& [op, word] : {std::pair<std::string_view, std::string_view>{"&&", "and"}, {"||", "or"}}) {
    if (rest.starts_with(op)) {
      d.primary.span = {token.begin, token.begin + static_cast<uint32_t>(op.size())};
      d.help = fmt::format("gov writes `{}` as `{}`: `task.gpus > 1 {} task.gpus < 4`", op, word, word);
      return d;
    }
  }
  if (rest.starts_with("!") && !rest.starts_with("!=")) {
    d.help = "gov writes `!` as `not`: `not (task.gpus > 4)`";
    return d;
  }
  // A snake_case word (`sharing = lend_and_borrow`): names take no `_`, so the parse read
  // `lend` and stopped at `_and_borrow`. The whole word is what to rewrite.
  if (token.begin > 0 && source[token.begin] == '_' && is_word_char(source[token.begin - 1])) {
    uint32_t begin = token.begin, end = token.begin;
    while (begin > 0 && is_word_char(source[begin - 1]) && source[begin - 1] != '.') --begin;
    while (end < source.size() && is_word_char(source[end]) && source[end] != '.') ++end;
    const std::string_view whole = source.substr(begin, end - begin);
    if (std::isalpha(static_cast<unsigned char>(whole.front()))) {  // not `1_000`
      d.primary.span = {begin, end};
      d.message = fmt::format("`{}` is not a gov name: names join words with hyphens", whole);
      d.label = "underscore";
      d.help = fmt::format("`{}` is written `{}` in gov", whole, model::kebab_case(whole));
      return d;
    }
  }
  // A map written as a block (`capacity = { T = 4 }`), or a count with a word after it
  // (`{ T: 4 instances }`, whose word was read as the next key).
  if (kind == K::token && text == "expected `:` after the key") {
    if (source.substr(token.begin, 1) == "=") {
      d.help = "a map's entries are written `key: value`, as in `capacity = { ml.g5.8xlarge: 4 }`";
      return d;
    }
    const auto [key_begin, key_end] = word_before(source, token.begin);
    const uint32_t before = end_of_previous_token(source, key_begin);
    if (key_begin < key_end && before > 0 && std::isdigit(static_cast<unsigned char>(source[before - 1]))) {
      const std::string_view word = source.substr(key_begin, key_end - key_begin);
      d.primary.span = {key_begin, key_end};
      d.message = fmt::format("`{}` after a count: a map entry's value is a plain number", word);
      d.label = "not part of the count";
      d.help = fmt::format("leave out `{}`", word);
      return d;
    }
  }
  // `priority inference = 90` outside the policy block (a new author wrote it in a team): the
  // key `priority` then a name, where a property takes `=`.
  if (kind == K::token && text == "expected `=`") {
    const Span key = word_before(source, token.begin);
    if (source.substr(key.begin, key.end - key.begin) == "priority") {
      d.help = "priority classes are declared in the `policy` block (`policy { priority inference = 90 }`); a task "
               "names its class when it is submitted";
      return d;
    }
  }
  // A value written the AWS API's way (`sharing = LendAndBorrow`): say how gov writes it.
  const std::string word(source.substr(token.begin, token.end - token.begin));
  const bool letter = !word.empty() && std::isalpha(static_cast<unsigned char>(word[0]));
  if (letter && model::kebab_case(word) != word) {
    d.help = fmt::format("`{}` is written `{}` in gov", word, model::kebab_case(word));
  } else if (word.size() > 1 && word[0] == '-' && std::isdigit(static_cast<unsigned char>(word[1]))) {
    d.help = "amounts and counts are never negative; `0` is the least";
  }
  return d;
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

bool is_reserved_word(std::string_view word) { return is_reserved(word); }

}  // namespace gov::grammar
