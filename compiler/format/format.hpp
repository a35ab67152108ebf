// `gov fmt`: the canonical layout of a parsed file. Entry point of gov::format.
#pragma once

#include <string>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/source_file.hpp"

namespace gov::format {

/// The canonical text of `file` (parsed from `source` without errors): two-space
/// indentation, `=` aligned within each run of properties, one-line resource blocks, one
/// blank line between declarations, blank lines inside blocks kept (at most one), every
/// comment kept on its line or as a trailing comment. Idempotent: formatting the output
/// again gives the same bytes, and the output parses to the same AST. Line ends are LF, or CRLF
/// when the source's first line ends with CRLF (a Windows file stays one).
std::string format(const ast::File& file, const SourceFile& source);

}  // namespace gov::format
