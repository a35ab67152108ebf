#include "compiler/diagnostics/diagnostic.hpp"

#include <algorithm>
#include <array>
#include <tuple>

#include <fmt/format.h>

namespace gov {

Diagnostic make_diagnostic(Code code, Location primary, std::string message, std::string label) {
  Diagnostic d{code, code_info(code).severity, primary, std::move(message), std::move(label), {}, {}, {}};
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

constexpr size_t kMaxSuggestedLength = 256;

thread_local SuggestionBudget* current_budget = nullptr;

/// Levenshtein distance of two strings of at most kMaxSuggestedLength bytes, without allocating.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::array<uint16_t, kMaxSuggestedLength + 1> previous{};
  std::array<uint16_t, kMaxSuggestedLength + 1> current{};
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = static_cast<uint16_t>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = static_cast<uint16_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const uint16_t substitution = static_cast<uint16_t>(previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
      current[j] = std::min({static_cast<uint16_t>(previous[j] + 1), static_cast<uint16_t>(current[j - 1] + 1),
                             substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

size_t length_difference(size_t a, size_t b) { return a > b ? a - b : b - a; }

}  // namespace

SuggestionBudget::SuggestionBudget(uint64_t cells) : remaining_(cells), outer_(current_budget) {
  current_budget = this;
}

SuggestionBudget::~SuggestionBudget() { current_budget = outer_; }

bool SuggestionBudget::spend(uint64_t cells) {
  SuggestionBudget* budget = current_budget;
  if (budget == nullptr) return true;
  if (budget->remaining_ < cells) {
    budget->remaining_ = 0;
    return false;
  }
  budget->remaining_ -= cells;
  return true;
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > kMaxSuggestedLength) return std::nullopt;  // a typo is short
  const size_t limit = std::max<size_t>(1, (word.size() + 2) / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (!SuggestionBudget::spend(1)) return std::nullopt;
    // The distance is at least the difference in length: skip what cannot win.
    if (candidate.size() > kMaxSuggestedLength || length_difference(word.size(), candidate.size()) >= best_distance) {
      continue;
    }
    if (!SuggestionBudget::spend((word.size() + 1) * (candidate.size() + 1))) return std::nullopt;
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

std::string names_help(std::string_view plural, const std::vector<std::string>& names, size_t shown) {
  if (names.size() <= shown) return fmt::format("the {} are `{}`", plural, fmt::join(names, "`, `"));
  const std::vector<std::string> first(names.begin(), names.begin() + static_cast<ptrdiff_t>(shown));
  return fmt::format("the {} include `{}`, ... ({} in all)", plural, fmt::join(first, "`, `"), names.size());
}

}  // namespace gov
