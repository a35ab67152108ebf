// The `.gov` grammar as PEGTL 3.2 rules. Pure grammar: no actions, no AST.
// Conventions (STYLE.md): snake_case rule structs, if_must<> at every commitment point,
// and an error message for every must<> target (errors.hpp; the build fails without one).
// docs/language.md is the reference for what these rules accept.
#pragma once

#include <array>
#include <string_view>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze.hpp>

namespace gov::grammar::rules {

// PEGTL grammars are written against the library's combinators unqualified; the using
// directive is confined to this rules namespace.
using namespace tao::pegtl;  // NOLINT(google-build-using-namespace)

/// Deepest nesting of parentheses, lists, braces, `not` and unary minus that gov parses.
/// Keeps recursion (and so stack use) bounded on hostile input.
inline constexpr std::size_t kMaxNesting = 64;

struct nesting_too_deep : failure {};

/// Matches R one nesting level deeper; raises `nesting_too_deep` beyond kMaxNesting.
template <typename R>
struct nest {
  using rule_t = nest;
  using subs_t = type_list<R>;

  template <apply_mode A, rewind_mode M, template <typename...> class Action,
            template <typename...> class Control, typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&&... st) {
    struct guard {
      std::size_t& depth;
      ~guard() { --depth; }
    } g{++in.private_depth};
    if (in.private_depth > kMaxNesting) Control<nesting_too_deep>::raise(in, st...);
    return Control<R>::template match<A, M, Action, Control>(in, st...);
  }
};

// ---------------------------------------------------------------- lexical structure

struct comment : seq<sor<one<'#'>, two<'/'>>, star<not_one<'\n', '\r'>>> {};
struct space_char : one<' ', '\t', '\r', '\n'> {};
/// Optional white space and comments.
struct sp : star<sor<space_char, comment>> {};
/// Required white space (binary minus needs it on both sides).
struct sp1 : plus<sor<space_char, comment>> {};

struct lower : range<'a', 'z'> {};
struct name_char : sor<lower, digit, seq<plus<one<'-'>>, at<sor<lower, digit>>>> {};
/// What may not follow a keyword: `team-a`, `teams` and `team.used` are not the keyword `team`.
struct word_end : not_at<sor<lower, digit, one<'-', '_', '.'>, range<'A', 'Z'>>> {};

template <typename Text>
struct keyword : seq<Text, word_end> {
  using text_t = Text;
};

template <typename Text>
struct keyword_chars;
template <char... Cs>
struct keyword_chars<ascii::string<Cs...>> {
  static constexpr char value[] = {Cs..., '\0'};
};
/// A keyword rule's spelling, for messages: `keyword_text<kw_team>` is "team".
template <typename Kw>
inline constexpr std::string_view keyword_text = keyword_chars<typename Kw::text_t>::value;

/// Matches any of the keywords; `words` spells them, in order. A list of keywords is written
/// once, here, and both the grammar and the messages read it.
template <typename... Kws>
struct keyword_list : sor<Kws...> {
  static constexpr std::array<std::string_view, sizeof...(Kws)> words = {keyword_text<Kws>...};
};

// clang-format off
struct kw_import : keyword<TAO_PEGTL_STRING("import")> {};
struct kw_catalog : keyword<TAO_PEGTL_STRING("catalog")> {};
struct kw_instance : keyword<TAO_PEGTL_STRING("instance")> {};
struct kw_cluster : keyword<TAO_PEGTL_STRING("cluster")> {};
struct kw_policy : keyword<TAO_PEGTL_STRING("policy")> {};
struct kw_team : keyword<TAO_PEGTL_STRING("team")> {};
struct kw_cohort : keyword<TAO_PEGTL_STRING("cohort")> {};
struct kw_quota : keyword<TAO_PEGTL_STRING("quota")> {};
struct kw_rule : keyword<TAO_PEGTL_STRING("rule")> {};
struct kw_test : keyword<TAO_PEGTL_STRING("test")> {};
struct kw_priority : keyword<TAO_PEGTL_STRING("priority")> {};
struct kw_when : keyword<TAO_PEGTL_STRING("when")> {};
struct kw_deny : keyword<TAO_PEGTL_STRING("deny")> {};
struct kw_warn : keyword<TAO_PEGTL_STRING("warn")> {};
struct kw_submit : keyword<TAO_PEGTL_STRING("submit")> {};
struct kw_finish : keyword<TAO_PEGTL_STRING("finish")> {};
struct kw_cancel : keyword<TAO_PEGTL_STRING("cancel")> {};
struct kw_expect : keyword<TAO_PEGTL_STRING("expect")> {};
struct kw_at : keyword<TAO_PEGTL_STRING("at")> {};
struct kw_and : keyword<TAO_PEGTL_STRING("and")> {};
struct kw_or : keyword<TAO_PEGTL_STRING("or")> {};
struct kw_not : keyword<TAO_PEGTL_STRING("not")> {};
struct kw_in : keyword<TAO_PEGTL_STRING("in")> {};
struct kw_true : keyword<TAO_PEGTL_STRING("true")> {};
struct kw_false : keyword<TAO_PEGTL_STRING("false")> {};
// Contextual words of `expect` clauses; not reserved.
struct kw_on : keyword<TAO_PEGTL_STRING("on")> {};
struct kw_by : keyword<TAO_PEGTL_STRING("by")> {};
struct kw_warned : keyword<TAO_PEGTL_STRING("warned")> {};
struct kw_borrowing : keyword<TAO_PEGTL_STRING("borrowing")> {};
struct kw_short : keyword<TAO_PEGTL_STRING("short")> {};
struct kw_message : keyword<TAO_PEGTL_STRING("message")> {};
struct kw_eventually : keyword<TAO_PEGTL_STRING("eventually")> {};

/// The reserved words: never a name (`name` below), though fine as a property key or a map key.
struct reserved_word : keyword_list<kw_import, kw_catalog, kw_instance, kw_cluster, kw_policy, kw_team,
                           kw_cohort, kw_quota, kw_rule, kw_test, kw_priority, kw_when, kw_deny, kw_warn,
                           kw_submit, kw_finish, kw_cancel, kw_expect, kw_at, kw_and, kw_or,
                           kw_not, kw_in, kw_true, kw_false> {};
/// The keywords that start a declaration (parse recovery resumes at them; messages suggest them).
struct declaration_keyword : keyword_list<kw_import, kw_catalog, kw_cluster, kw_policy, kw_cohort, kw_team, kw_rule,
                                          kw_test> {};
// clang-format on

struct segment_first : seq<lower, star<name_char>> {};
struct segment_next : seq<sor<lower, digit>, star<name_char>> {};
/// `team-a`, `ml.p6-b200.48xlarge`, `task.gpus`: never a reserved word.
struct name : seq<not_at<reserved_word>, segment_first, star<one<'.'>, segment_next>> {};
/// The left side of `key = value`: reserved words are fine here (`catalog = aws-ml`).
struct key : seq<lower, star<name_char>> {};

struct digits : seq<digit, star<opt<one<'_'>>, digit>> {};
struct fraction : seq<one<'.'>, digits> {};
struct number_literal : seq<digits, opt<fraction>> {};
struct unit_word : seq<alpha, star<alnum>> {};
struct percent : one<'%'> {};
/// `%`, a unit right after the digits (`500m`, `128GiB`), or a capitalised unit after blanks (`128 GiB`).
/// A unit-like word after blanks: capitalised (`GiB`, `GB`) or a memory/milli unit in any case
/// (`gib`, `m`), so that `128 gib` gets "did you mean `GiB`?" instead of a confusing parse error.
struct loose_unit : seq<sor<seq<range<'A', 'Z'>, star<alnum>>,
                            seq<one<'g', 'm', 't', 'k', 'G', 'M', 'T', 'K'>, opt<one<'i', 'I'>>, opt<one<'b', 'B'>>,
                                not_at<alnum>>>,
                        not_at<sp, one<'=', ':'>>> {};
struct unit : sor<percent, unit_word, seq<plus<one<' ', '\t'>>, sor<percent, loose_unit>>> {};
struct number : seq<number_literal, opt<unit>> {};

struct boolean : sor<kw_true, kw_false> {};

struct expr;

/// `\u{202e}`: any character by its code point, 1 to 6 hex digits (parse.cpp refuses
/// surrogates, values past U+10FFFF and control characters).
struct unicode_open : one<'{'> {};
struct unicode_digits : seq<xdigit, rep_opt<5, xdigit>> {};
struct unicode_close : one<'}'> {};
struct unicode_escape : if_must<one<'u'>, unicode_open, unicode_digits, unicode_close> {};
struct escape_char : sor<one<'"', '\\', 'n', 't', '{', '}'>, unicode_escape> {};
struct escape : if_must<one<'\\'>, escape_char> {};
struct interpolation_close : one<'}'> {};
struct interpolation : if_must<one<'{'>, sp, nest<expr>, sp, interpolation_close> {};
struct string_chars : plus<not_one<'"', '\\', '{', '\n', '\r'>> {};
struct string_close : one<'"'> {};
struct string_literal : if_must<one<'"'>, star<sor<string_chars, escape, interpolation>>, string_close> {};

// ---------------------------------------------------------------- expressions

struct paren_close : one<')'> {};
struct paren : if_must<one<'('>, sp, nest<expr>, sp, paren_close> {};
struct list_close : one<']'> {};
/// An element of a list; a rule of its own because `expr` raises when it fails.
struct list_element : seq<expr> {};
struct list_expr : if_must<one<'['>, sp,
                           opt<nest<list_element>, star<sp, one<','>, sp, nest<list_element>>, opt<sp, one<','>>>, sp,
                           list_close> {};
struct primary : sor<paren, list_expr, string_literal, number, boolean, name> {};
struct index_close : one<']'> {};
struct index_suffix : if_must<one<'['>, sp, nest<expr>, sp, index_close> {};
struct postfix : seq<primary, star<index_suffix>> {};
struct operand;
struct operand_after_minus;
struct negate : if_must<one<'-'>, nest<operand_after_minus>> {};
struct operand : sor<negate, postfix> {};
struct operand_after_minus : seq<operand> {};

struct mul_op : one<'*', '/'> {};
struct operand_after_mul : seq<operand> {};
struct mul_expr : seq<operand, star<sp, mul_op, sp, must<operand_after_mul>>> {};
struct add_op : sor<seq<sp1, one<'-'>, sp1>, seq<sp, one<'+'>, sp>> {};
struct operand_after_add : seq<mul_expr> {};
struct add_expr : seq<mul_expr, star<add_op, must<operand_after_add>>> {};
struct not_in : seq<kw_not, sp, kw_in> {};
struct cmp_op : sor<two<'='>, string<'!', '='>, string<'<', '='>, string<'>', '='>, one<'<'>, one<'>'>,
                    not_in, kw_in> {};
struct chained_comparison : failure {};
struct single_equals : failure {};
/// `a = b` in a condition almost always means `a == b`.
struct comparison_typo : seq<sp, at<one<'='>, not_at<one<'='>>>, raise<single_equals>> {};
struct operand_after_comparison : seq<add_expr> {};
struct cmp_expr : seq<add_expr, opt<sp, cmp_op, sp, must<operand_after_comparison>, opt<sp, at<cmp_op>, raise<chained_comparison>>>,
                      opt<comparison_typo>> {};
struct not_expr;
struct condition_after_not : seq<not_expr> {};
struct not_prefix : if_must<kw_not, sp, nest<condition_after_not>> {};
struct not_expr : sor<not_prefix, cmp_expr> {};
struct condition_after_and : seq<not_expr> {};
struct and_expr : seq<not_expr, star<sp, kw_and, sp, must<condition_after_and>>> {};
struct condition_after_or : seq<and_expr> {};
struct or_expr : seq<and_expr, star<sp, kw_or, sp, must<condition_after_or>>> {};
// Aliases are seq<> wrappers so that the wrapped rule keeps its own parse-tree node.
struct expr : seq<or_expr> {};

// ---------------------------------------------------------------- property values

// must_if raises whenever a rule with a message fails, even outside must<>: rules used
// both as must<> targets and as lookaheads or optional items get separate names.
struct value;
struct equals : one<'='> {};
struct equals_ahead : one<'='> {};
struct list_item : seq<value> {};
struct colon : one<':'> {};
struct property : if_must<key, sp, equals, sp, value> {};
/// Map keys may be reserved words (`labels = { team: "nlp" }`).
struct map_name : seq<segment_first, star<one<'.'>, segment_next>> {};
struct map_key : sor<string_literal, map_name> {};
struct map_entry : if_must<map_key, sp, colon, sp, value> {};

/// Items of a `{ ... }` body separated by commas or line breaks, then the closing brace
/// (Close raises a message naming what the body may contain).
template <typename Item, typename Close>
struct braced_items : seq<sp, star<Item, sp, opt<one<','>, sp>>, must<Close>> {};

struct block_close : one<'}'> {};
struct map_close : one<'}'> {};
// Lookaheads use rules the parse tree does not store: at<> keeps the nodes it matched.
struct key_ahead : seq<lower, star<name_char>> {};
struct block_value : seq<one<'{'>, sp, at<key_ahead, sp, equals_ahead>, braced_items<property, block_close>> {};
struct map_value : if_must<one<'{'>, braced_items<map_entry, map_close>> {};
struct list_value_close : one<']'> {};
struct list_value : if_must<one<'['>, sp, opt<list_item, star<sp, one<','>, sp, list_item>, opt<sp, one<','>>>, sp,
                            list_value_close> {};
struct value : sor<nest<block_value>, nest<map_value>, nest<list_value>, string_literal, number, boolean, name> {};

// ---------------------------------------------------------------- declarations

struct decl_name : name {};
struct block_open : one<'{'> {};

struct import_path : string_literal {};
struct import_decl : if_must<kw_import, sp, import_path> {};

struct instance_close : one<'}'> {};
struct instance_decl : if_must<kw_instance, sp, decl_name, sp, block_open, braced_items<property, instance_close>> {};
struct catalog_close : one<'}'> {};
/// `extends` is a word only here, after a catalog's name; it is not reserved.
struct kw_extends : keyword<TAO_PEGTL_STRING("extends")> {};
struct base_catalog : name {};
struct extends_clause : if_must<kw_extends, sp, base_catalog, sp> {};
struct catalog_open : one<'{'> {};
struct catalog_decl : if_must<kw_catalog, sp, decl_name, sp, opt<extends_clause>, catalog_open, braced_items<instance_decl, catalog_close>> {};

struct cluster_close : one<'}'> {};
struct cluster_decl : if_must<kw_cluster, sp, decl_name, sp, block_open, braced_items<property, cluster_close>> {};

struct priority_weight : number {};
struct priority_decl : if_must<kw_priority, sp, decl_name, sp, equals, sp, priority_weight> {};
struct policy_item : sor<priority_decl, property> {};
struct policy_close : one<'}'> {};
struct policy_decl : if_must<kw_policy, sp, block_open, braced_items<policy_item, policy_close>> {};

struct quota_close : one<'}'> {};
struct quota_decl : if_must<kw_quota, sp, decl_name, sp, block_open, braced_items<property, quota_close>> {};
struct team_item : sor<quota_decl, property> {};
struct team_close : one<'}'> {};
struct team_decl : if_must<kw_team, sp, decl_name, sp, block_open, braced_items<team_item, team_close>> {};
/// `cohort NAME { quota T { ... } }`: the cohort the teams are in, with its own quota (Kueue's Cohort).
struct cohort_close : one<'}'> {};
struct cohort_decl : if_must<kw_cohort, sp, decl_name, sp, block_open, braced_items<team_item, cohort_close>> {};

struct condition : seq<expr> {};
struct when_clause : if_must<kw_when, sp, condition> {};
struct message_string : string_literal {};
struct deny_action : if_must<kw_deny, sp, message_string> {};
struct warn_action : if_must<kw_warn, sp, message_string> {};
struct rule_action : sor<deny_action, warn_action> {};
struct rule_close : one<'}'> {};
struct rule_decl : if_must<kw_rule, sp, decl_name, sp, block_open, sp, when_clause, sp, rule_action, sp, rule_close> {};

struct submit_close : one<'}'> {};
struct submit_step : if_must<kw_submit, sp, decl_name, sp, block_open, braced_items<property, submit_close>> {};
struct finish_step : if_must<kw_finish, sp, decl_name> {};
struct cancel_step : if_must<kw_cancel, sp, decl_name> {};
struct at_time : number {};
struct at_step : if_must<kw_at, sp, at_time> {};

struct resources_close : one<'}'> {};
struct on_clause : if_must<kw_on, sp, decl_name> {};
struct by_clause : if_must<kw_by, sp, decl_name> {};
struct warned_by : kw_by {};
struct warned_clause : if_must<kw_warned, sp, warned_by, sp, decl_name> {};
struct borrowing_clause : if_must<kw_borrowing, sp, block_open, braced_items<property, resources_close>> {};
struct short_clause : if_must<kw_short, sp, block_open, braced_items<property, resources_close>> {};
struct message_clause : if_must<kw_message, sp, message_string> {};
struct word_clause : name {};
struct expect_clause : sor<on_clause, by_clause, warned_clause, borrowing_clause, short_clause, message_clause,
                           word_clause> {};
struct outcome : name {};
/// `expect eventually T ...`: the word whenever a task and an outcome follow it (so in an
/// `expect`, a task cannot be called `eventually`, docs/language.md).
struct eventually : seq<kw_eventually, at<sp, decl_name, sp, outcome>> {};
struct expect_step : if_must<kw_expect, sp, opt<eventually, sp>, decl_name, sp, outcome, star<sp, expect_clause>> {};
struct step : sor<submit_step, finish_step, cancel_step, at_step, expect_step> {};
struct test_close : one<'}'> {};
struct test_name : string_literal {};
struct test_decl : if_must<kw_test, sp, test_name, sp, block_open, braced_items<step, test_close>> {};

struct expected_declaration : failure {};
struct declaration : sor<import_decl, catalog_decl, cluster_decl, policy_decl, team_decl, cohort_decl, rule_decl, test_decl,
                         raise<expected_declaration>> {};

/// Parses one declaration; on a syntax error, records it (the Control's `recover` hook)
/// and skips to the next line that starts with a declaration keyword, so that every
/// broken declaration is reported once.
template <typename R>
struct recover {
  using rule_t = recover;
  using subs_t = type_list<R>;

  template <apply_mode A, rewind_mode M, template <typename...> class Action,
            template <typename...> class Control, typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&&... st) {
    const char* start = in.current();
    try {
      return Control<R>::template match<A, M, Action, Control>(in, st...);
    } catch (const parse_error& error) {
      in.private_depth = 0;
      const auto offset = [&](const char* p) { return static_cast<std::size_t>(p - in.begin()); };
      const std::size_t resume = Control<R>::recover(in, error, offset(start), st...);
      if (resume > offset(in.current())) in.bump(resume - offset(in.current()));
      return true;
    }
  }
};

struct bom : utf8::bom {};
struct file : seq<opt<bom>, sp, star<not_at<eof>, recover<declaration>, sp>, eof> {};

}  // namespace gov::grammar::rules

namespace tao::pegtl {

template <typename Name, typename R>
struct analyze_traits<Name, gov::grammar::rules::nest<R>> : analyze_traits<Name, typename seq<R>::rule_t> {};

template <typename Name, typename R>
struct analyze_traits<Name, gov::grammar::rules::recover<R>> : analyze_traits<Name, typename seq<R>::rule_t> {};

}  // namespace tao::pegtl
