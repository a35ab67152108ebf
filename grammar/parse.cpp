// Entry point of gov::grammar: checks that the text is readable (size, UTF-8, control and
// hidden characters), parses it with the PEGTL grammar (syntax_errors.* reports and recovers
// from errors) and converts the tree (builder.*). The blocks' shapes are gov::check's
// (compiler/check/schema.hpp, parse_file).
#include "grammar/parse.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "grammar/errors.hpp"
#include "grammar/builder.hpp"
#include "grammar/rules.hpp"
#include "grammar/syntax_errors.hpp"

namespace gov::grammar {
namespace {

namespace pegtl = tao::pegtl;

/// Thrown past the parser's error recovery when a file has more syntax nodes than
/// kMaxSyntaxNodes: where the next node would have started.
struct TooManySyntaxNodes {
  std::size_t offset;
};

/// The control that counts the nodes the tree keeps. The tree costs about 200 bytes a node, so
/// an 8 MiB file of `{1}` interpolations, list elements or `+ 1` operands (one node per 2 or 3
/// bytes) took 2 to 4 GB before any other bound was looked at.
template <typename Rule>
struct counting_control : control<Rule> {
  template <typename ParseInput, typename... States>
  static void success(const ParseInput& in, States&&... st) {
    if constexpr (selector<Rule>::value) {
      ParseContext& ctx = find_context(st...);
      if (++ctx.nodes > kMaxSyntaxNodes) throw TooManySyntaxNodes{in.byte()};
    }
    control<Rule>::success(in, st...);
  }
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
    // A CR that ends no CRLF: classic Mac OS line ends, which the lexer would split lines at
    // while every position counted them as one line.
    if (c == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) {
      Diagnostic d = make_diagnostic(Code::control_character, {ctx.source, {uint32_t(i), uint32_t(i + 1)}},
                                     "carriage return U+000D without a line feed", "here");
      d.help = "lines end with LF or CRLF in policy files; save the file with one of those line endings";
      ctx.diagnostics.report(std::move(d));
      return false;
    }
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
    root = pegtl::parse_tree::parse<r::file, selector, pegtl::nothing, counting_control>(in, ctx);
  } catch (const TooManySyntaxNodes& too_many) {
    Diagnostic d = make_diagnostic(Code::too_many, {source, {uint32_t(too_many.offset), uint32_t(too_many.offset)}},
                                   fmt::format("the file has more than {} syntax elements (names, numbers, operators, "
                                               "list items); gov reads at most that many from one file",
                                               kMaxSyntaxNodes),
                                   "the limit is reached here");
    d.help = "split the policy into several files joined with `import`";
    ctx.diagnostics.report(std::move(d));
    return result;
  } catch (const pegtl::parse_error& error) {
    // Errors are recovered per declaration; one escaping here is at the file level.
    const size_t offset = error.positions().empty() ? 0 : error.positions().front().byte;
    const SyntaxError what{SyntaxErrorKind::token, error.message()};
    ctx.diagnostics.report(syntax_diagnostic(ctx, what, static_cast<uint32_t>(offset)));
    return result;
  }
  if (root) result.file = build_file(*root, ctx);
  result.diagnostics.sort();
  return result;
}

}  // namespace gov::grammar
