// The parse tree -> AST conversion: which nodes the parse tree keeps, and the Builder that
// turns them into gov::ast with byte-offset spans. Internal to gov::grammar (includes PEGTL).
#pragma once

#include <tao/pegtl/contrib/parse_tree.hpp>

#include "compiler/ast/ast.hpp"
#include "grammar/rules.hpp"
#include "grammar/syntax_errors.hpp"

namespace gov::grammar {

using Node = tao::pegtl::parse_tree::node;

namespace r = rules;

/// The rules whose nodes the parse tree keeps (with their text); Builder reads only these.
template <typename Rule>
using selector = tao::pegtl::parse_tree::selector<
    Rule,
    tao::pegtl::parse_tree::store_content::on<
        r::comment, r::name, r::key, r::decl_name, r::outcome, r::word_clause, r::number, r::number_literal, r::unit,
        r::boolean, r::string_literal, r::map_name, r::list_element, r::list_item, r::string_chars, r::escape, r::interpolation, r::import_path, r::message_string,
        r::test_name, r::priority_weight, r::at_time, r::list_expr, r::index_suffix, r::negate, r::not_prefix,
        r::mul_expr, r::add_expr, r::cmp_expr, r::and_expr, r::or_expr, r::mul_op, r::add_op, r::cmp_op, r::kw_and,
        r::kw_or, r::condition, r::property, r::map_entry, r::block_value, r::map_value, r::list_value,
        r::import_decl, r::base_catalog, r::catalog_decl, r::instance_decl, r::cluster_decl, r::policy_decl, r::priority_decl,
        r::team_decl, r::cohort_decl, r::quota_decl, r::rule_decl, r::deny_action, r::warn_action, r::test_decl, r::submit_step,
        r::finish_step, r::cancel_step, r::at_step, r::expect_step, r::eventually, r::on_clause, r::by_clause, r::warned_clause,
        r::borrowing_clause, r::short_clause, r::message_clause>>;


/// The AST of a parsed file. Reports what only the conversion sees: names and strings too
/// long, numbers too large, unknown units, invalid `\u{...}` values, expressions with too
/// many operators.
ast::File build_file(const Node& root, ParseContext& ctx);

}  // namespace gov::grammar
