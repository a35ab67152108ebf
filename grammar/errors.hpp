// The message of every must<> target of the grammar, as "kind|text". The kind tells
// parse.cpp which diagnostic code to report; the text is the message. must_if fails the
// build for any must<> target without an entry here.
#pragma once

#include "grammar/rules.hpp"

namespace gov::grammar {

template <typename Rule>
inline constexpr const char* error_message = nullptr;

namespace r = rules;

// Combinators that cannot fail still need an entry because they sit inside if_must<>.
template <typename... Rs>
inline constexpr const char* error_message<r::star<Rs...>> = "token|internal: star cannot fail";
template <typename... Rs>
inline constexpr const char* error_message<r::opt<Rs...>> = "token|internal: opt cannot fail";
template <>
inline constexpr const char* error_message<r::sp> = "token|expected white space";
template <typename R>
inline constexpr const char* error_message<r::nest<R>> = error_message<R>;
template <typename Item, typename Close>
inline constexpr const char* error_message<r::braced_items<Item, Close>> = error_message<Close>;

// clang-format off
template <> inline constexpr const char* error_message<r::nesting_too_deep> = "nest|";
template <> inline constexpr const char* error_message<r::escape_char> = "escape|";
template <> inline constexpr const char* error_message<r::unicode_open> = "uescape|`{` after `\\u`";
template <> inline constexpr const char* error_message<r::unicode_digits> = "uescape|1 to 6 hexadecimal digits";
template <> inline constexpr const char* error_message<r::unicode_close> = "uescape|`}` after at most 6 hexadecimal digits";
template <> inline constexpr const char* error_message<r::string_close> = "string|";
template <> inline constexpr const char* error_message<r::interpolation_close> = "interp|";
template <> inline constexpr const char* error_message<r::expr> = "expr|expected an expression";
template <> inline constexpr const char* error_message<r::condition> = "expr|expected a condition after `when`";
template <> inline constexpr const char* error_message<r::operand_after_minus> = "expr|expected an operand after `-`";
template <> inline constexpr const char* error_message<r::operand_after_mul> = "expr|expected an operand after `*` or `/`";
template <> inline constexpr const char* error_message<r::operand_after_add> = "expr|expected an operand after `+` or `-`";
template <> inline constexpr const char* error_message<r::operand_after_comparison> = "expr|expected an operand after the comparison";
template <> inline constexpr const char* error_message<r::condition_after_not> = "expr|expected a condition after `not`";
template <> inline constexpr const char* error_message<r::condition_after_and> = "expr|expected a condition after `and`";
template <> inline constexpr const char* error_message<r::condition_after_or> = "expr|expected a condition after `or`";
template <> inline constexpr const char* error_message<r::chained_comparison> = "chain|";
template <> inline constexpr const char* error_message<r::single_equals> = "equals|";
template <> inline constexpr const char* error_message<r::paren_close> = "token|expected `)`";
template <> inline constexpr const char* error_message<r::list_close> = "token|expected `,` or `]`";
template <> inline constexpr const char* error_message<r::index_close> = "token|expected `]`";
template <> inline constexpr const char* error_message<r::equals> = "token|expected `=`";
template <> inline constexpr const char* error_message<r::colon> = "token|expected `:` after the key";
template <> inline constexpr const char* error_message<r::value> = "token|expected a value (a number, a name, a string, `{ ... }` or `[ ... ]`)";
template <> inline constexpr const char* error_message<r::block_close> = "close|expected a property (`name = value`) or `}`";
template <> inline constexpr const char* error_message<r::map_close> = "close|expected an entry (`key: value`) or `}`";
template <> inline constexpr const char* error_message<r::list_value_close> = "token|expected `,` or `]`";
template <> inline constexpr const char* error_message<r::decl_name> = "name|expected a name";
template <> inline constexpr const char* error_message<r::block_open> = "token|expected `{`";
template <> inline constexpr const char* error_message<r::import_path> = "token|expected the imported file's path in quotes";
template <> inline constexpr const char* error_message<r::instance_close> = "close|expected a property (`name = value`) or `}`";
template <> inline constexpr const char* error_message<r::catalog_close> = "close|expected `instance` or `}`";
template <> inline constexpr const char* error_message<r::cluster_close> = "close|expected a property (`name = value`) or `}`";
template <> inline constexpr const char* error_message<r::priority_weight> = "token|expected the class's weight, a number from 0 to 100";
template <> inline constexpr const char* error_message<r::policy_close> = "close|expected `priority`, a property (`name = value`) or `}`";
template <> inline constexpr const char* error_message<r::quota_close> = "close|expected a resource (`gpus = 2`) or `}`";
template <> inline constexpr const char* error_message<r::team_close> = "close|expected `quota`, a property (`name = value`) or `}`";
template <> inline constexpr const char* error_message<r::when_clause> = "token|expected `when` and a condition";
template <> inline constexpr const char* error_message<r::rule_action> = "token|expected `deny` or `warn` and a message";
template <> inline constexpr const char* error_message<r::message_string> = "token|expected a message in quotes";
template <> inline constexpr const char* error_message<r::rule_close> = "close|expected `}` after the rule's action";
template <> inline constexpr const char* error_message<r::submit_close> = "close|expected a task property (`gpus = 2`) or `}`";
template <> inline constexpr const char* error_message<r::at_time> = "token|expected a time in seconds";
template <> inline constexpr const char* error_message<r::resources_close> = "close|expected a resource (`gpus = 1`) or `}`";
template <> inline constexpr const char* error_message<r::warned_by> = "token|expected `by` after `warned`";
template <> inline constexpr const char* error_message<r::outcome> = "name|expected an outcome such as `admitted` or `pending`";
template <> inline constexpr const char* error_message<r::test_close> = "close|expected a step (`submit`, `finish`, `cancel`, `at`, `expect`) or `}`";
template <> inline constexpr const char* error_message<r::test_name> = "token|expected the test's name in quotes";
template <> inline constexpr const char* error_message<r::expected_declaration> = "decl|";
// clang-format on

/// The Errors parameter of tao::pegtl::must_if.
struct errors {
  template <typename Rule>
  static constexpr const char* message = error_message<Rule>;
};

}  // namespace gov::grammar
