// One Diagnostic type for every stage, and the sink that collects them.
#pragma once

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
/// plausible typo (at most a third of the word's length, and at least one edit).
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// "did you mean `x`?" help text, or nullopt when nothing is close.
std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gov
