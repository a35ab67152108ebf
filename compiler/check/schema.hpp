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

/// Outcomes of an `expect` step.
const std::vector<std::string_view>& expect_outcomes();

}  // namespace gov::check
