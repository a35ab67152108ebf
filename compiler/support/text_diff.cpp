#include "compiler/support/text_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

namespace gov::support {
namespace {

/// The lines of `text`, each with its line end; a last line without one is kept as it is.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const size_t length = end == std::string_view::npos ? text.size() : end + 1;
    out.push_back(text.substr(0, length));
    text.remove_prefix(length);
  }
  return out;
}

enum class Op : uint8_t { keep, remove, add };
struct Edit {
  Op op;
  size_t a;  // line index in before (keep, remove)
  size_t b;  // line index in after (keep, add)
};

constexpr size_t kMaxChangedLines = 2000;

/// A shortest edit script of a[a0, a1) into b[b0, b1) by longest common subsequence.
void middle_edits(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b, size_t a0, size_t a1,
                  size_t b0, size_t b1, std::vector<Edit>& out) {
  const size_t n = a1 - a0, m = b1 - b0;
  if (n > kMaxChangedLines || m > kMaxChangedLines) {
    for (size_t i = a0; i < a1; ++i) out.push_back({Op::remove, i, b0});
    for (size_t j = b0; j < b1; ++j) out.push_back({Op::add, a1, j});
    return;
  }
  // lcs[i][j]: the longest common subsequence of a[a0+i..a1) and b[b0+j..b1).
  std::vector<uint16_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint16_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      at(i, j) = a[a0 + i] == b[b0 + j] ? static_cast<uint16_t>(at(i + 1, j + 1) + 1) : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[a0 + i] == b[b0 + j]) {
      out.push_back({Op::keep, a0 + i++, b0 + j++});
    } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
      out.push_back({Op::remove, a0 + i++, b0 + j});  // removals first, as `diff -u` writes them
    } else {
      out.push_back({Op::add, a0 + i, b0 + j++});
    }
  }
}

std::string line_text(std::string_view line) {
  if (!line.empty() && line.back() == '\n') return std::string(line);
  return std::string(line) + "\n\\ No newline at end of file\n";
}

}  // namespace

std::string unified_diff(std::string_view before_name, std::string_view after_name, std::string_view before,
                         std::string_view after, int context) {
  if (before == after) return {};
  const std::vector<std::string_view> a = lines_of(before), b = lines_of(after);
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  std::vector<Edit> edits;
  for (size_t i = 0; i < head; ++i) edits.push_back({Op::keep, i, i});
  middle_edits(a, b, head, a.size() - tail, head, b.size() - tail, edits);
  for (size_t k = tail; k > 0; --k) edits.push_back({Op::keep, a.size() - k, b.size() - k});

  std::string out = fmt::format("--- {}\n+++ {}\n", before_name, after_name);
  const size_t span = static_cast<size_t>(std::max(context, 0));
  size_t e = 0;
  while (e < edits.size()) {
    if (edits[e].op == Op::keep) {
      ++e;
      continue;
    }
    // A hunk: from `span` lines before this change to `span` lines after the last change that
    // is at most 2 × span unchanged lines from the next.
    const size_t start = e >= span ? e - span : 0;
    size_t end = e;
    while (end < edits.size()) {
      if (edits[end].op != Op::keep) {
        ++end;
        continue;
      }
      size_t run = end;
      while (run < edits.size() && edits[run].op == Op::keep) ++run;
      if (run == edits.size() || run - end > 2 * span) {
        end = std::min(run, end + span);
        break;
      }
      end = run;
    }
    size_t a_count = 0, b_count = 0;
    for (size_t k = start; k < end; ++k) {
      a_count += edits[k].op != Op::add;
      b_count += edits[k].op != Op::remove;
    }
    const size_t a_first = edits[start].a + (a_count > 0 ? 1 : 0), b_first = edits[start].b + (b_count > 0 ? 1 : 0);
    out += fmt::format("@@ -{},{} +{},{} @@\n", a_first, a_count, b_first, b_count);
    for (size_t k = start; k < end; ++k) {
      const Edit& edit = edits[k];
      if (edit.op == Op::keep) out += " " + line_text(a[edit.a]);
      if (edit.op == Op::remove) out += "-" + line_text(a[edit.a]);
      if (edit.op == Op::add) out += "+" + line_text(b[edit.b]);
    }
    e = end;
  }
  return out;
}

}  // namespace gov::support
