#include "compiler/diagnostics/render.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "compiler/support/utf8.hpp"

namespace gov {
namespace {

constexpr uint32_t kTabWidth = 4;
constexpr uint32_t kMaxShownColumns = 100;  // long lines are shown as a window around the caret

// One displayable cell of a source line: its text and display width.
struct Cell {
  std::string text;
  uint32_t width;
  uint32_t offset;  // byte offset in the line
};

// East Asian wide and emoji code points take two terminal columns (a close reading of
// Unicode's EastAsianWidth W/F classes, enough to keep carets aligned).
bool is_wide(uint32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) ||
         (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
         (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
         (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD);
}

// Splits a line into display cells: tabs expand, ASCII control characters show as their
// Unicode control pictures (NUL as U+2400), other unsafe characters as escapes and invalid
// UTF-8 as U+FFFD, so that hostile bytes never reach the terminal.
std::vector<Cell> display_cells(std::string_view line) {
  std::vector<Cell> cells;
  for (size_t i = 0; i < line.size();) {
    const auto c = static_cast<unsigned char>(line[i]);
    const auto offset = static_cast<uint32_t>(i);
    if (c == '\t') {
      cells.push_back({std::string(kTabWidth, ' '), kTabWidth, offset});
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      const uint32_t picture = c == 0x7F ? 0x2421 : 0x2400 + c;
      cells.push_back({std::string{char(0xE2), char(0x90), char(0x80 + (picture & 0x3F))}, 1, offset});
      ++i;
      continue;
    }
    const CodePoint cp = decode_code_point(line, i);
    if (!cp.valid) {
      cells.push_back({"\xEF\xBF\xBD", 1, offset});
      ++i;
      continue;
    }
    // C1 controls, bidi controls (Trojan Source) and invisible characters are shown as
    // escapes such as `\u{202e}`: the line then reads in the order it is stored, and the
    // caret under the escape shows where the hidden character is.
    if (is_unsafe_for_terminal(cp.value)) {
      std::string text = escape_code_point(cp.value);
      const auto width = static_cast<uint32_t>(text.size());
      cells.push_back({std::move(text), width, offset});
      i += cp.length;
      continue;
    }
    cells.push_back({std::string(line.substr(i, cp.length)), is_wide(cp.value) ? 2u : 1u, offset});
    i += cp.length;
  }
  return cells;
}

void render_snippet(std::string& out, const SourceFile& file, Span span, std::string_view label,
                    size_t gutter, const std::vector<Span>& marks = {}) {
  const LineColumn start = file.line_column(span.begin);
  const std::string_view line = file.line_text(start.line);
  const uint32_t line_begin = file.line_start(start.line);
  const uint32_t caret_begin = span.begin - line_begin;
  const uint32_t caret_end = std::max<uint32_t>(
      caret_begin + 1, std::min<uint32_t>(span.end - line_begin, static_cast<uint32_t>(line.size())));

  // Only a window of bytes around the caret is ever shown, so only that window is split into
  // cells: a 10 MB line costs no more than a short one.
  constexpr uint32_t kWindowBytes = 4 * kMaxShownColumns;
  const auto window_start = static_cast<uint32_t>(
      utf8_boundary_at_or_before(line, caret_begin > kWindowBytes ? caret_begin - kWindowBytes : 0));
  // From the caret's start, not its end: a span of megabytes (a map on one long line) made
  // every diagnostic split all of it.
  const uint32_t window_stop = std::min<uint32_t>(static_cast<uint32_t>(line.size()),
                                                  std::min(caret_end, caret_begin + kWindowBytes) + kWindowBytes);
  std::vector<Cell> cells = display_cells(line.substr(window_start, window_stop - window_start));
  for (Cell& cell : cells) cell.offset += window_start;
  const bool cut_before = window_start > 0;
  const bool cut_after = window_stop < line.size();
  // Find the window of cells to show: the whole line, or kMaxShownColumns around the caret.
  size_t first_caret_cell = cells.size();
  for (size_t k = 0; k < cells.size(); ++k) {
    if (cells[k].offset >= caret_begin) {
      first_caret_cell = k;
      break;
    }
  }
  size_t window_begin = 0;
  size_t window_end = cells.size();
  if (cells.size() > kMaxShownColumns || cut_before || cut_after) {
    window_begin = first_caret_cell > kMaxShownColumns / 3 ? first_caret_cell - kMaxShownColumns / 3 : 0;
    window_end = std::min(cells.size(), window_begin + kMaxShownColumns);
  }
  // Further marks on this line, as [begin, end) offsets in the line.
  std::vector<std::pair<uint32_t, uint32_t>> extra;
  for (const Span& mark : marks) {
    if (mark.begin < line_begin || mark.begin - line_begin >= line.size()) continue;
    extra.emplace_back(mark.begin - line_begin, std::max(mark.begin + 1, mark.end) - line_begin);
  }
  const auto marked = [&](uint32_t offset) {
    if (offset >= caret_begin && offset < caret_end) return true;
    return std::any_of(extra.begin(), extra.end(),
                       [&](const auto& range) { return offset >= range.first && offset < range.second; });
  };
  std::string shown = window_begin > 0 || cut_before ? "..." : "";
  std::string underline(shown.size(), ' ');
  for (size_t k = window_begin; k < window_end; ++k) {
    shown += cells[k].text;
    underline.append(cells[k].width, marked(cells[k].offset) ? '^' : ' ');
  }
  if (window_end < cells.size() || cut_after) shown += "...";
  if (caret_begin >= line.size()) underline += '^';  // the end of the line (or file)
  while (!underline.empty() && underline.back() == ' ') underline.pop_back();

  const std::string pad(gutter, ' ');
  out += fmt::format("{} |\n", pad);
  out += fmt::format("{:>{}} | {}\n", start.line, gutter, shown);
  out += fmt::format("{} | {}{}{}\n", pad, underline, label.empty() ? "" : " ", escape_for_terminal(label));
}

size_t gutter_width(const Diagnostic& d, const SourceMap& sources) {
  uint32_t largest = sources.get(d.primary.source).line_column(d.primary.span.begin).line;
  for (const Note& note : d.notes) {
    if (note.where) {
      largest = std::max(largest, sources.get(note.where->source).line_column(note.where->span.begin).line);
    }
  }
  return fmt::format("{}", largest).size();
}

}  // namespace

std::string format_location(const Location& where, const SourceMap& sources) {
  const SourceFile& file = sources.get(where.source);
  const LineColumn lc = file.line_column(where.span.begin);
  return fmt::format("{}:{}:{}", display_path(file.path()), lc.line, lc.column);
}

std::string render(const Diagnostic& d, const SourceMap& sources) {
  std::string out = fmt::format("{}: {}[{}]: {}\n", format_location(d.primary, sources),
                                severity_name(d.severity), code_info(d.code).id, escape_for_terminal(d.message));
  const size_t gutter = gutter_width(d, sources);
  const std::string pad(gutter, ' ');
  render_snippet(out, sources.get(d.primary.source), d.primary.span, d.label, gutter, d.marks);
  for (const Note& note : d.notes) {
    if (!note.where) out += fmt::format("{} = note: {}\n", pad, escape_for_terminal(note.message));
  }
  if (d.help) out += fmt::format("{} = help: {}\n", pad, escape_for_terminal(*d.help));
  for (const Note& note : d.notes) {
    if (!note.where) continue;
    out += fmt::format("note: {}\n{}--> {}\n", escape_for_terminal(note.message), pad,
                       format_location(*note.where, sources));
    render_snippet(out, sources.get(note.where->source), note.where->span, "", gutter);
  }
  return out;
}

std::string render_all(const Diagnostics& diagnostics, const SourceMap& sources) {
  std::string out;
  for (const Diagnostic& d : diagnostics.items()) {
    out += render(d, sources);
    out += '\n';
  }
  const size_t errors = diagnostics.count(Severity::error);
  const size_t warnings = diagnostics.count(Severity::warning);
  if (errors + warnings > 0) {
    std::vector<std::string> parts;
    if (errors) parts.push_back(fmt::format("{} error{}", errors, errors == 1 ? "" : "s"));
    if (warnings) parts.push_back(fmt::format("{} warning{}", warnings, warnings == 1 ? "" : "s"));
    out += fmt::format("{}\n", fmt::join(parts, ", "));
  }
  return out;
}

}  // namespace gov
