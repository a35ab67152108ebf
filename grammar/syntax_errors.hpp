// Syntax errors and recovery: the PEGTL control that raises a typed SyntaxError for every
// rule of errors.hpp and reports it when rules::recover catches it, the diagnostic of each
// kind of error, and where parsing resumes. Internal to gov::grammar (includes PEGTL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <tao/pegtl.hpp>

#include "compiler/diagnostics/diagnostic.hpp"
#include "compiler/diagnostics/source_file.hpp"
#include "grammar/errors.hpp"

namespace gov::grammar {

/// Shared by the PEGTL control (error recovery) and the tree conversion.
struct ParseContext {
  const SourceFile& file;
  SourceId source;
  Diagnostics& diagnostics;
  std::size_t nodes = 0;  // syntax tree nodes made so far (parse.cpp bounds them)
};

/// A character of a name, keyword or number (what a reader takes as one word).
bool is_word_char(char c);

/// The diagnostic of a syntax error at byte `offset`.
Diagnostic syntax_diagnostic(const ParseContext& ctx, SyntaxError error, uint32_t offset);

/// Where parsing resumes after an error in a declaration that started at `start`: the
/// next line that begins (in column 1) with a declaration keyword, or the end of input.
std::size_t resume_offset(std::string_view text, std::size_t start, std::size_t error_offset);

/// What the control throws: a pegtl::parse_error (rules::recover catches those) that keeps
/// the typed error.
class SyntaxErrorException : public tao::pegtl::parse_error {
 public:
  template <typename ParseInput>
  SyntaxErrorException(SyntaxError error, const ParseInput& in) : parse_error(std::string(error.text), in), error_(error) {}
  SyntaxError error() const { return error_; }

 private:
  SyntaxError error_;
};

template <typename... States>
ParseContext& find_context(States&... states) {
  ParseContext* found = nullptr;
  auto pick = [&](auto& state) {
    if constexpr (std::is_same_v<std::decay_t<decltype(state)>, ParseContext>) found = &state;
  };
  (pick(states), ...);
  return *found;
}

/// PEGTL's must_if, with typed errors: a rule with an entry in errors.hpp raises it whenever
/// it fails (inside must<> or not), and raising a rule without one fails the build.
template <typename Rule>
struct control : tao::pegtl::normal<Rule> {
  template <typename ParseInput, typename... States>
  static void failure(const ParseInput& in, States&&... st) {
    if constexpr (syntax_error<Rule>.has_value()) {
      raise(in, st...);
    } else {
      tao::pegtl::normal<Rule>::failure(in, st...);
    }
  }

  template <typename ParseInput, typename... States>
  [[noreturn]] static void raise(const ParseInput& in, States&&... /*st*/) {
    static_assert(syntax_error<Rule>.has_value(), "every must<> target needs an entry in grammar/errors.hpp");
    throw SyntaxErrorException(*syntax_error<Rule>, in);
  }

  /// Called by rules::recover: reports the error and returns the offset to resume at.
  template <typename ParseInput, typename... States>
  static std::size_t recover(const ParseInput& /*in*/, const tao::pegtl::parse_error& error, std::size_t start,
                             States&... states) {
    ParseContext& ctx = find_context(states...);
    const auto* typed = dynamic_cast<const SyntaxErrorException*>(&error);
    const SyntaxError what = typed ? typed->error() : SyntaxError{SyntaxErrorKind::token, error.message()};
    const std::size_t offset = error.positions().empty() ? start : error.positions().front().byte;
    ctx.diagnostics.report(syntax_diagnostic(ctx, what, static_cast<uint32_t>(offset)));
    return resume_offset(ctx.file.text(), start, offset);
  }
};

}  // namespace gov::grammar
