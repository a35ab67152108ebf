// The shape of every block: which properties it has and what kind of value each takes
// (the tables of surface.hpp). Checked right after parsing (parse_file), so that the checker
// sees only well-formed blocks.
#pragma once

#include <string_view>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostic.hpp"
#include "grammar/parse.hpp"

namespace gov::check {

/// Parses one file (grammar::parse) and validates its blocks (validate_schema): how every
/// reader of policy files parses one. Never throws; problems are diagnostics, in source order.
grammar::ParseResult parse_file(const SourceMap& sources, SourceId source);

/// Reports unknown and duplicate properties, values of the wrong kind, unknown choices,
/// and `expect` steps with unknown outcomes or clauses that do not fit the outcome.
void validate_schema(const ast::File& file, Diagnostics& diagnostics);

/// Whether validate_schema reports `code`: a block's shape (E0040–E0045). A shape error leaves
/// every declaration in place, so checking goes on (check::check then holds back its own
/// findings in each declaration that has one: they may be the shape error's consequences).
bool is_shape_error(Code code);

/// True when `diagnostics` has an error that is not a shape error: a syntax error or an import
/// that could not be read. Such errors drop declarations, and checking what is left would
/// report their absence as more errors, so the checker does not run.
bool stops_checking(const Diagnostics& diagnostics);

/// Outcomes of an `expect` step.
const std::vector<std::string_view>& expect_outcomes();

}  // namespace gov::check
