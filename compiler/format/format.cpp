#include "compiler/format/format.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "compiler/ast/source_text.hpp"

namespace gov::format {
namespace {

/// One printable line inside a block. `left` and `right` are joined by `separator`, with
/// `left` padded so that the separators of a run of rows in the same group line up.
struct Row {
  Span span{};
  std::string left{};
  std::string separator{};
  std::string right{};
  int group = 0;  // rows align only with neighbours of the same group; 0 = never aligned
  /// A map or block value the author wrote over several lines stays so: `left separator {`,
  /// one row per entry (each keeping its comments), then `}` (`closing` is the value's span).
  std::vector<Row> children{};
  Span closing{};
};

std::string inline_properties(const std::vector<ast::Property>& properties) {
  if (properties.empty()) return "{}";
  std::vector<std::string> items;
  for (const ast::Property& p : properties) items.push_back(fmt::format("{} = {}", p.key.text, ast::value_text(*p.value)));
  return fmt::format("{{ {} }}", fmt::join(items, ", "));
}

enum Group { kNone = 0, kProperty = 1, kQuota = 2, kPriority = 3, kInstance = 4, kMapEntry = 5 };

/// Whether the source breaks the line between a `{` value's opening brace and its first entry.
bool written_multiline(const ast::Value& value, std::string_view source) {
  if (value.kind != ast::Value::Kind::map && value.kind != ast::Value::Kind::block) return false;
  const uint32_t first = value.kind == ast::Value::Kind::map ? (value.map.empty() ? value.span.end : value.map.front().span.begin)
                                                             : (value.block.empty() ? value.span.end : value.block.front().span.begin);
  if (first <= value.span.begin || first > source.size()) return false;
  return source.substr(value.span.begin, first - value.span.begin).find('\n') != std::string_view::npos;
}

Row property_row(const ast::Property& p, std::string_view source);

/// The rows of a multi-line map or block value.
std::vector<Row> value_rows(const ast::Value& value, std::string_view source) {
  std::vector<Row> out;
  if (value.kind == ast::Value::Kind::map) {
    for (const ast::MapEntry& e : value.map) {
      const std::string key = e.key_is_string ? ast::quoted_text(e.key.text) : e.key.text;
      out.push_back({e.span, key + ":", " ", ast::value_text(*e.value), kMapEntry, {}, {}});
    }
  } else {
    for (const ast::Property& p : value.block) out.push_back(property_row(p, source));
  }
  return out;
}

Row property_row(const ast::Property& p, std::string_view source) {
  Row row{p.span, p.key.text, " = ", ast::value_text(*p.value), kProperty, {}, {}};
  if (written_multiline(*p.value, source)) {
    row.right = "{";
    row.children = value_rows(*p.value, source);
    row.closing = p.value->span;
  }
  return row;
}

/// An item written `head { properties }` (a quota, a catalog's instance, a test's submit): on one
/// line, or, when the author broke the line after its `{`, one row per property as written
/// (each keeping its comments), then `}`. `head_end` is where the head ends (the `{` follows).
Row braced_row(Span span, std::string left, const std::vector<ast::Property>& properties, int group, uint32_t head_end,
               std::string_view source) {
  Row row{span, std::move(left), " ", inline_properties(properties), group, {}, {}};
  if (properties.empty() || span.end == 0) return row;
  const uint32_t first = properties.front().span.begin;
  const size_t brace = source.find('{', head_end);
  if (brace == std::string_view::npos || brace >= first || first > source.size()) return row;
  if (source.substr(brace, first - brace).find('\n') == std::string_view::npos) return row;
  row.right = "{";
  row.group = kNone;  // its `{` lines up with nothing
  for (const ast::Property& p : properties) row.children.push_back(property_row(p, source));
  row.closing = Span{static_cast<uint32_t>(brace), span.end};
  return row;
}

class Formatter {
 public:
  Formatter(const ast::File& file, const SourceFile& source) : file_(file), source_(source) {}

  std::string run() {
    bool first = true;
    for (const ast::Declaration& d : file_.declarations) {
      const Span span = ast::span_of(d);
      leading_comments(span.begin, 0, /*at_top=*/first);
      if (!first && !last_was_comment_) out_ += '\n';
      if (first && last_was_comment_ && blank_line_before(span.begin)) out_ += '\n';
      first = false;
      std::visit([&](const auto& decl) { this->declaration(decl); }, d);
    }
    leading_comments(static_cast<uint32_t>(source_.text().size()) + 1, 0, first);
    return out_;
  }

 private:
  // ---------------------------------------------------------------- comments and lines

  std::string_view comment_text(size_t i) const {
    std::string_view text = source_.slice(file_.comments[i].span);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    return text;
  }

  uint32_t line_of(uint32_t offset) const { return source_.line_column(offset).line; }

  /// True when the source has an empty line between the previous token and `offset`.
  bool blank_line_before(uint32_t offset) const {
    const std::string& text = source_.text();
    int newlines = 0;
    for (int64_t i = static_cast<int64_t>(offset) - 1; i >= 0; --i) {
      const char c = text[i];
      if (c == '\n') {
        if (++newlines == 2) return true;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return false;
      }
    }
    return false;
  }

  void line(int indent, std::string_view text) {
    out_ += std::string(2 * indent, ' ');
    out_ += text;
    out_ += '\n';
    last_was_comment_ = false;
  }

  /// Prints, each on its own line, the comments that start before `offset`.
  void leading_comments(uint32_t offset, int indent, bool at_top) {
    bool first = true;
    while (next_comment_ < file_.comments.size() && file_.comments[next_comment_].span.begin < offset) {
      const uint32_t begin = file_.comments[next_comment_].span.begin;
      const bool keep_blank = blank_line_before(begin) && !(at_top && out_.empty());
      if (keep_blank && !out_.empty() && !(first && !last_was_comment_ && indent > 0 && opened_block_)) out_ += '\n';
      line(indent, comment_text(next_comment_));
      last_was_comment_ = true;
      opened_block_ = false;
      ++next_comment_;
      first = false;
    }
  }

  /// Appends a comment that sits on source line `source_line` to the line just printed, unless it
  /// begins at or after `before` (the next row's start, when a row shares its source line with
  /// the next: `gpus = 1, labels = { k: "v" # c }` keeps the comment with `labels`).
  void trailing_comment(uint32_t source_line, uint32_t before = std::numeric_limits<uint32_t>::max()) {
    if (next_comment_ >= file_.comments.size()) return;
    if (line_of(file_.comments[next_comment_].span.begin) != source_line) return;
    if (file_.comments[next_comment_].span.begin >= before) return;
    out_.pop_back();  // the newline
    out_ += "  ";
    out_ += comment_text(next_comment_++);
    out_ += '\n';
  }

  void open(int indent, std::string_view header, uint32_t brace_offset) {
    line(indent, header);
    trailing_comment(line_of(brace_offset));
    opened_block_ = true;
  }

  /// Closes a block. An empty block (nothing printed since its header, which ends in `{`) closes on
  /// the header's line, `cohort org {}`, as it would be written by hand.
  void close(int indent, const Span& block) {
    leading_comments(block.end - 1, indent + 1, false);
    if (opened_block_ && out_.ends_with("{\n")) {
      out_.back() = '}';
      out_ += '\n';
      trailing_comment(line_of(block.end - 1));
      return;
    }
    line(indent, "}");
    trailing_comment(line_of(block.end - 1));
  }

  /// Prints the rows of a block body with aligned separators and kept blank lines.
  void rows(const std::vector<Row>& items, int indent) {
    // Alignment width per row: the widest `left` of its run (same group, no blank line).
    std::vector<size_t> width(items.size(), 0);
    for (size_t i = 0; i < items.size();) {
      size_t j = i + 1;
      while (j < items.size() && items[i].group != kNone && items[j].group == items[i].group &&
             !blank_line_before_row(items, j)) {
        ++j;
      }
      size_t widest = 0;
      for (size_t k = i; k < j; ++k) widest = std::max(widest, items[k].left.size());
      for (size_t k = i; k < j; ++k) width[k] = items[i].group == kNone ? 0 : widest;
      i = j;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      const Row& row = items[i];
      const bool had_comment = next_comment_ < file_.comments.size() &&
                               file_.comments[next_comment_].span.begin < row.span.begin;
      if (i > 0 && !had_comment && blank_line_before(row.span.begin)) out_ += '\n';
      leading_comments(row.span.begin, indent, false);
      if (had_comment && blank_line_before(row.span.begin)) out_ += '\n';
      std::string left = row.left;
      if (width[i] > left.size()) left.append(width[i] - left.size(), ' ');
      if (!row.children.empty()) {
        open(indent, left + row.separator + row.right, row.closing.begin);
        rows(row.children, indent + 1);
        close(indent, row.closing);
        opened_block_ = false;
        continue;
      }
      // Comments inside a row that prints on one line move above it.
      leading_comments(row.span.end, indent, false);
      line(indent, left + row.separator + row.right);
      trailing_comment(line_of(row.span.end > row.span.begin ? row.span.end - 1 : row.span.end),
                       i + 1 < items.size() ? items[i + 1].span.begin : std::numeric_limits<uint32_t>::max());
      opened_block_ = false;
    }
  }

  bool blank_line_before_row(const std::vector<Row>& items, size_t j) const {
    if (blank_line_before(items[j].span.begin)) return true;
    // A comment line between rows with a blank line above it also breaks the run.
    for (size_t c = next_comment_; c < file_.comments.size(); ++c) {
      const Span s = file_.comments[c].span;
      if (s.begin >= items[j].span.begin) break;
      if (s.begin > items[j - 1].span.end && blank_line_before(s.begin)) return true;
    }
    return false;
  }

  // ---------------------------------------------------------------- declarations

  void declaration(const ast::Import& d) {
    line(0, "import " + ast::string_text(d.path));
    trailing_comment(line_of(d.span.end - 1));
  }

  void declaration(const ast::Catalog& d) {
    if (d.base) open(0, fmt::format("catalog {} extends {} {{", d.name.text, d.base->text), d.base->span.end);
    else open(0, fmt::format("catalog {} {{", d.name.text), d.name.span.end);
    std::vector<Row> items;
    for (const ast::Instance& i : d.instances) {
      items.push_back(braced_row(i.span, "instance " + i.type.text, i.properties, kInstance, i.type.span.end, source_.text()));
    }
    rows(items, 1);
    close(0, d.span);
  }

  void declaration(const ast::Cluster& d) {
    open(0, fmt::format("cluster {} {{", d.name.text), d.name.span.end);
    std::vector<Row> items;
    for (const ast::Property& p : d.properties) items.push_back(property_row(p, source_.text()));
    rows(items, 1);
    close(0, d.span);
  }

  void declaration(const ast::Policy& d) {
    open(0, "policy {", d.span.begin);
    std::vector<Row> items;
    for (const auto& item : d.items) {
      if (const auto* p = std::get_if<ast::Property>(&item)) {
        items.push_back(property_row(*p, source_.text()));
      } else {
        const auto& c = std::get<ast::PriorityClass>(item);
        items.push_back({c.span, "priority " + c.name.text, " = ", ast::number_text(c.weight), kPriority});
      }
    }
    rows(items, 1);
    close(0, d.span);
  }

  void declaration(const ast::Team& d) { quota_block("team", d); }
  void declaration(const ast::Cohort& d) { quota_block("cohort", d); }

  // `team NAME { ... }` and `cohort NAME { ... }`: properties and `quota` lines.
  template <typename Declaration>
  void quota_block(std::string_view keyword, const Declaration& d) {
    open(0, fmt::format("{} {} {{", keyword, d.name.text), d.name.span.end);
    std::vector<Row> items;
    for (const auto& item : d.items) {
      if (const auto* p = std::get_if<ast::Property>(&item)) {
        items.push_back(property_row(*p, source_.text()));
      } else {
        const auto& q = std::get<ast::Quota>(item);
        items.push_back(braced_row(q.span, "quota " + q.instance_type.text, q.properties, kQuota, q.instance_type.span.end,
                                   source_.text()));
      }
    }
    rows(items, 1);
    close(0, d.span);
  }


  void declaration(const ast::Rule& d) {
    open(0, fmt::format("rule {} {{", d.name.text), d.name.span.end);
    std::vector<Row> items;
    items.push_back({d.when->span, "when " + ast::expr_text(*d.when), "", "", kNone});
    items.push_back({Span{d.action_span.begin, d.action_span.end},
                     std::string(d.action == ast::RuleAction::deny ? "deny " : "warn ") + ast::string_text(d.message),
                     "", "", kNone});
    rows(items, 1);
    close(0, d.span);
  }

  void declaration(const ast::Test& d) {
    open(0, fmt::format("test {} {{", ast::string_text(d.name)), d.name.span.end);
    std::vector<Row> items;
    for (const ast::Step& s : d.steps) {
      if (s.kind == ast::Step::Kind::submit) {
        items.push_back(braced_row(s.span, "submit " + s.task.text, s.properties, kNone, s.task.span.end, source_.text()));
      } else {
        items.push_back({s.span, step_text(s), "", "", kNone});
      }
    }
    rows(items, 1);
    close(0, d.span);
  }

  static std::string step_text(const ast::Step& s) {
    switch (s.kind) {
      case ast::Step::Kind::submit: return fmt::format("submit {} {}", s.task.text, inline_properties(s.properties));
      case ast::Step::Kind::finish: return "finish " + s.task.text;
      case ast::Step::Kind::cancel: return "cancel " + s.task.text;
      case ast::Step::Kind::at: return "at " + ast::number_text(s.time);
      case ast::Step::Kind::expect: break;
    }
    std::string text = fmt::format("expect {}{} {}", s.eventually ? "eventually " : "", s.task.text, s.outcome.text);
    for (const ast::ExpectClause& c : s.clauses) {
      using K = ast::ExpectClause::Kind;
      switch (c.kind) {
        case K::on: text += " on " + c.name.text; break;
        case K::by: text += " by " + c.name.text; break;
        case K::warned_by: text += " warned by " + c.name.text; break;
        case K::borrowing: text += " borrowing " + inline_properties(c.resources); break;
        case K::short_of: text += " short " + inline_properties(c.resources); break;
        case K::message: text += " message " + ast::string_text(c.message); break;
        case K::word: text += " " + c.name.text; break;
      }
    }
    return text;
  }

  const ast::File& file_;
  const SourceFile& source_;
  std::string out_;
  size_t next_comment_ = 0;
  bool last_was_comment_ = false;
  bool opened_block_ = false;
};

}  // namespace

std::string format(const ast::File& file, const SourceFile& source) {
  std::string text = Formatter(file, source).run();
  // A file written with CRLF line ends (Windows editors) keeps them: its first line end decides.
  const std::string_view input = source.text();
  const size_t first_break = input.find('\n');
  if (first_break == std::string_view::npos || first_break == 0 || input[first_break - 1] != '\r') return text;
  std::string crlf;
  crlf.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    if (c == '\r') continue;  // a comment's own CR, if the parser kept it: one CRLF per line
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  return crlf;
}

}  // namespace gov::format
