// Renders diagnostics as text in the style of rustc: a `file:line:col: error[E0000]: message`
// header, the source line, a caret underline, notes and help.
#pragma once

#include <string>

#include "compiler/diagnostics/diagnostic.hpp"

namespace gov {

/// Renders one diagnostic; every line ends with '\n'. Deterministic, no colour. Paths,
/// messages, labels, notes and help pass through display_path() / escape_for_terminal(),
/// and source lines show control, bidi and invisible characters as pictures or escapes,
/// so nothing in a file or its name can drive the terminal or reorder the output.
std::string render(const Diagnostic& diagnostic, const SourceMap& sources);

/// Renders all diagnostics followed by a summary line ("2 errors, 1 warning") when
/// there is anything to report.
std::string render_all(const Diagnostics& diagnostics, const SourceMap& sources);

/// "path:line:col" of a location, the path written with display_path().
std::string format_location(const Location& where, const SourceMap& sources);

}  // namespace gov
