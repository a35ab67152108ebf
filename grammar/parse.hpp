// Entry point of gov::grammar: source text -> AST with spans, plus syntax diagnostics.
#pragma once

#include <string_view>

#include <cstddef>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::grammar {

/// Files larger than this are refused with E0001 (docs/limits.md).
inline constexpr std::size_t kMaxFileBytes = 8u << 20;
/// Longest run of one binary operator (`a and b and ...`) in one expression.
inline constexpr std::size_t kMaxOperatorChain = 4096;
/// Most operators (binary, prefix and `[...]`) in the expressions of one declaration. The
/// checker, the lowering and the printers walk expression trees recursively; this bounds
/// their depth (chains in parentheses in chains would otherwise nest without limit).
inline constexpr std::size_t kMaxDeclarationOperators = 4096;
/// Longest string literal, in bytes of its text (escapes resolved, interpolations left out).
inline constexpr std::size_t kMaxStringBytes = 4096;
/// Most syntax tree nodes (names, numbers, strings, operators, list items, blocks) of one
/// file: about 200 bytes each while the file is parsed (a 2 MiB policy of 10,000 teams has
/// 255,000).
inline constexpr std::size_t kMaxSyntaxNodes = 2'000'000;
/// Longest name (`team-a`, `ml.g5.8xlarge`, `task.labels`): a DNS subdomain's limit.
inline constexpr std::size_t kMaxNameBytes = 253;

struct ParseResult {
  ast::File file;           // every declaration that parsed; broken ones are left out
  Diagnostics diagnostics;  // syntax errors, in source order
  bool ok() const { return !diagnostics.has_errors(); }
};

/// Parses `sources.get(source)`. Never throws for any input: syntax errors are
/// diagnostics, reported once per broken declaration (the parser skips to the next line
/// that starts a declaration). Syntax only: which properties a block has and what values
/// they take is gov::check's (check::parse_file parses and validates both).
ParseResult parse(const SourceMap& sources, SourceId source);

/// Whether `word` is one of the language's reserved words (`team`, `test`, `policy`, `in`, ...),
/// which can never be a name: what writes names into `.gov` text (gov import) tests them first.
bool is_reserved_word(std::string_view word);

}  // namespace gov::grammar
