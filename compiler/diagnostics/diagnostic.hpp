// One Diagnostic type for every stage, and the sink that collects them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diagnostics/codes.hpp"
#include "compiler/diagnostics/source_file.hpp"

namespace gov {

/// A secondary message, optionally pointing at a related place.
struct Note {
  std::optional<Location> where;
  std::string message;
};

/// A user-facing problem. Messages start lower-case, have no final period and put user
/// names in backticks; `label` is the short text printed under the caret.
struct Diagnostic {
  Code code;
  Severity severity = Severity::error;
  Location primary;
  std::string message;
  std::string label;
  std::vector<Note> notes;
  std::optional<std::string> help;
  /// More spans in the primary's file, on the primary's line, that the text renderer
  /// underlines with it: one caret per hidden character, say. Spans on other lines are
  /// not shown. The machine formats (formats.hpp) carry only `primary`; the message must
  /// say what the marks point at.
  std::vector<Span> marks;
};

/// Builds a diagnostic with the code's default severity.
Diagnostic make_diagnostic(Code code, Location primary, std::string message, std::string label = {});

/// Collects diagnostics in the order they are reported.
class Diagnostics {
 public:
  Diagnostic& report(Diagnostic diagnostic) {
    items_.push_back(std::move(diagnostic));
    return items_.back();
  }
  const std::vector<Diagnostic>& items() const { return items_; }
  std::vector<Diagnostic>& items() { return items_; }
  bool has_errors() const;
  size_t count(Severity severity) const;
  void append(const Diagnostics& other);
  /// Sorts by file, offset and code, so output never depends on discovery order.
  void sort();

 private:
  std::vector<Diagnostic> items_;
};

/// The candidate closest to `word` by edit distance, if it is close enough to be a
/// plausible typo (at most a third of the word's length, and at least one edit). Words and
/// candidates longer than 256 bytes never match. Under a SuggestionBudget that is spent,
/// nothing matches.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// Bounds the work of closest_match() on this thread while it lives. Each comparison costs
/// about the product of the two lengths; once the budget is spent, closest_match() finds
/// nothing (diagnostics then come without a "did you mean"). Without it a file with a
/// million unknown names checked against ten thousand teams would take hours; with it the
/// suggestions cost a fraction of a second. Deterministic for a given input. Budgets nest:
/// an inner one applies until it ends. Not copyable; create and destroy on one thread.
class SuggestionBudget {
 public:
  /// About 0.1 s of comparisons.
  static constexpr uint64_t kDefaultCells = 100'000'000;
  explicit SuggestionBudget(uint64_t cells = kDefaultCells);
  ~SuggestionBudget();
  SuggestionBudget(const SuggestionBudget&) = delete;
  SuggestionBudget& operator=(const SuggestionBudget&) = delete;

  /// Takes `cells` from the innermost budget of this thread; false (and the budget is then
  /// empty) when it has fewer left. Always true without a budget.
  static bool spend(uint64_t cells);

 private:
  uint64_t remaining_;
  SuggestionBudget* outer_;
};

/// "did you mean `x`?" help text, or nullopt when nothing is close.
std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// "the teams are `a`, `b`", or past `shown` names "the teams include `a`, ..., `j` (10000 in
/// all)": help text that stays short however many names a policy has (`names` not empty).
std::string names_help(std::string_view plural, const std::vector<std::string>& names, size_t shown = 10);

}  // namespace gov
