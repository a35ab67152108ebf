// The syntax error of every must<> target of the grammar: a typed kind (which diagnostic
// syntax_errors.cpp reports) and a message text. The control in syntax_errors.hpp fails the
// build for any must<> target without an entry here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "grammar/rules.hpp"

namespace gov::grammar {

/// What went wrong, as far as the grammar knows; syntax_diagnostic() turns it into a
/// Diagnostic with its code, span and help.
enum class SyntaxErrorKind : uint8_t {
  token,                // a token was expected: "expected `=`, found ..." (E0010)
  nesting,              // deeper than rules::kMaxNesting (E0015)
  escape,               // an unknown `\x` escape
  unicode_escape,       // a malformed `\u{...}`: the text says what was expected
  unterminated_string,  // no closing `"` on the line
  interpolation,        // no `}` closing a `{...}` in a string
  expression,           // an expression, condition or operand was expected
  chained_comparison,   // `a < b < c`
  single_equals,        // `a = b` in a condition
  block_close,          // a block's item or `}` was expected (also: end of file, invalid property name)
  name,                 // a name was expected (also: a reserved word, an invalid name)
  declaration,          // a declaration was expected at the top level
};

struct SyntaxError {
  SyntaxErrorKind kind;
  std::string_view text;  // "expected ..." when the kind takes a text, else ""
};

namespace r = rules;

/// The error a rule raises when it fails; nullopt for rules that simply fail.
template <typename Rule>
inline constexpr std::optional<SyntaxError> syntax_error = std::nullopt;

namespace detail {
constexpr SyntaxError token(std::string_view text) { return {SyntaxErrorKind::token, text}; }
constexpr SyntaxError close(std::string_view text) { return {SyntaxErrorKind::block_close, text}; }
constexpr SyntaxError expression(std::string_view text) { return {SyntaxErrorKind::expression, text}; }
constexpr SyntaxError name(std::string_view text) { return {SyntaxErrorKind::name, text}; }
constexpr SyntaxError unicode(std::string_view text) { return {SyntaxErrorKind::unicode_escape, text}; }
constexpr SyntaxError bare(SyntaxErrorKind kind) { return {kind, ""}; }
}  // namespace detail

// Combinators that cannot fail still need an entry because they sit inside if_must<>.
template <typename... Rs>
inline constexpr std::optional<SyntaxError> syntax_error<r::star<Rs...>> = detail::token("internal: star cannot fail");
template <typename... Rs>
inline constexpr std::optional<SyntaxError> syntax_error<r::opt<Rs...>> = detail::token("internal: opt cannot fail");
template <>
inline constexpr std::optional<SyntaxError> syntax_error<r::sp> = detail::token("expected white space");
template <typename R>
inline constexpr std::optional<SyntaxError> syntax_error<r::nest<R>> = syntax_error<R>;
template <typename Item, typename Close>
inline constexpr std::optional<SyntaxError> syntax_error<r::braced_items<Item, Close>> = syntax_error<Close>;

// clang-format off
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::nesting_too_deep> = detail::bare(SyntaxErrorKind::nesting);
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::escape_char> = detail::bare(SyntaxErrorKind::escape);
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::unicode_open> = detail::unicode("`{` after `\\u`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::unicode_digits> = detail::unicode("1 to 6 hexadecimal digits");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::unicode_close> = detail::unicode("`}` after at most 6 hexadecimal digits");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::string_close> = detail::bare(SyntaxErrorKind::unterminated_string);
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::interpolation_close> = detail::bare(SyntaxErrorKind::interpolation);
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::expr> = detail::expression("expected an expression");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::condition> = detail::expression("expected a condition after `when`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::operand_after_minus> = detail::expression("expected an operand after `-`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::operand_after_mul> = detail::expression("expected an operand after `*` or `/`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::operand_after_add> = detail::expression("expected an operand after `+` or `-`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::operand_after_comparison> = detail::expression("expected an operand after the comparison");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::condition_after_not> = detail::expression("expected a condition after `not`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::condition_after_and> = detail::expression("expected a condition after `and`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::condition_after_or> = detail::expression("expected a condition after `or`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::chained_comparison> = detail::bare(SyntaxErrorKind::chained_comparison);
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::single_equals> = detail::bare(SyntaxErrorKind::single_equals);
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::paren_close> = detail::token("expected `)`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::list_close> = detail::token("expected `,` or `]`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::index_close> = detail::token("expected `]`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::equals> = detail::token("expected `=`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::colon> = detail::token("expected `:` after the key");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::value> = detail::token("expected a value (a number, a name, a string, `{ ... }` or `[ ... ]`)");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::block_close> = detail::close("expected a property (`name = value`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::map_close> = detail::close("expected an entry (`key: value`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::list_value_close> = detail::token("expected `,` or `]`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::decl_name> = detail::name("expected a name");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::block_open> = detail::token("expected `{`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::import_path> = detail::token("expected the imported file's path in quotes");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::instance_close> = detail::close("expected a property (`name = value`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::base_catalog> = detail::name("expected the name of the catalog to extend");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::catalog_open> = detail::token("expected `extends NAME` or `{`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::catalog_close> = detail::close("expected `instance` or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::cluster_close> = detail::close("expected a property (`name = value`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::priority_weight> = detail::token("expected the class's weight, a number from 0 to 100");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::policy_close> = detail::close("expected `priority`, a property (`name = value`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::quota_close> = detail::close("expected a resource (`gpus = 2`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::team_close> = detail::close("expected `quota`, a property (`name = value`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::cohort_close> = detail::close("expected `quota`, a property (`name = value`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::when_clause> = detail::token("expected `when` and a condition");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::rule_action> = detail::token("expected `deny` or `warn` and a message");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::message_string> = detail::token("expected a message in quotes");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::rule_close> = detail::close("expected `}` after the rule's action");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::submit_close> = detail::close("expected a task property (`gpus = 2`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::at_time> = detail::token("expected a time in seconds");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::resources_close> = detail::close("expected a resource (`gpus = 1`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::warned_by> = detail::token("expected `by` after `warned`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::outcome> = detail::name("expected an outcome such as `admitted` or `pending`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::test_close> = detail::close("expected a step (`submit`, `finish`, `cancel`, `at`, `expect`) or `}`");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::test_name> = detail::token("expected the test's name in quotes");
template <> inline constexpr std::optional<SyntaxError> syntax_error<r::expected_declaration> = detail::bare(SyntaxErrorKind::declaration);
// clang-format on

}  // namespace gov::grammar
