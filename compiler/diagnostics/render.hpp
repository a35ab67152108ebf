// Renders diagnostics as text in the style of rustc: a `file:line:col: error[E0000]: message`
// header, the source line, a caret underline, notes and help.
#pragma once

#include <string>

#include "compiler/diagnostics/diagnostic.hpp"

namespace gov {

/// Renders one diagnostic; every line ends with '\n'. Deterministic, no colour.
std::string render(const Diagnostic& diagnostic, const SourceMap& sources);

/// Renders all diagnostics followed by a summary line ("2 errors, 1 warning") when
/// there is anything to report.
std::string render_all(const Diagnostics& diagnostics, const SourceMap& sources);

/// "path:line:col" of a location.
std::string format_location(const Location& where, const SourceMap& sources);

}  // namespace gov
