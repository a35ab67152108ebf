#include "compiler/diagnostics/diagnostic.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace gov {

Diagnostic make_diagnostic(Code code, Location primary, std::string message, std::string label) {
  Diagnostic d{code, code_info(code).severity, primary, std::move(message), std::move(label), {}, {}};
  return d;
}

bool Diagnostics::has_errors() const { return count(Severity::error) > 0; }

size_t Diagnostics::count(Severity severity) const {
  return static_cast<size_t>(std::count_if(items_.begin(), items_.end(),
                                           [&](const Diagnostic& d) { return d.severity == severity; }));
}

void Diagnostics::append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

void Diagnostics::sort() {
  std::stable_sort(items_.begin(), items_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(a.primary.source, a.primary.span.begin, a.code) <
           std::tuple(b.primary.source, b.primary.span.begin, b.code);
  });
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > 256) return std::nullopt;  // a typo is short; keep this O(n*m) cheap
  const size_t limit = std::max<size_t>(1, (word.size() + 2) / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (candidate.size() > 256) continue;
    const size_t distance = edit_distance(word, candidate);
    if (distance > 0 && distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto match = closest_match(word, candidates);
  if (!match) return std::nullopt;
  return fmt::format("did you mean `{}`?", *match);
}

}  // namespace gov
