// Machine-readable diagnostic output for `gov lint --format json|sarif|github`.
#pragma once

#include <string>
#include <string_view>

#include "compiler/diagnostics/diagnostic.hpp"

namespace gov {

// Shared contract of the three renderers:
// - Diagnostics are written in the order they are stored; call Diagnostics::sort() first
//   for output that does not depend on discovery order.
// - Lines and columns are 1-based and come from SourceFile::line_column (columns count
//   UTF-8 code points). Offsets past the end of a file are clamped to its end, and an end
//   before its begin is clamped to the begin.
// - The output is always valid UTF-8: bytes of the text that are not UTF-8 become U+FFFD.
// - No control character (C0, DEL, C1), bidi control or invisible character of a path or
//   message reaches the output raw (terminal_text.hpp): JSON and SARIF write them as
//   `\u` and four hex digits (the decoded strings are unchanged), SARIF URIs percent-encode them, and
//   GitHub commands show them as readable escapes (`\x1b`, `\u{202e}`).
// - Every location must name a source in `sources` (a broken invariant otherwise).
// - Pure functions of their arguments: deterministic and safe to call from several threads
//   on the same (unmodified) inputs.

/// One JSON document, on one line and ending with '\n':
/// {"diagnostics":[{"code","name","severity","message","file","span","label","help"?,"notes"}],
///  "errors":N,"warnings":N}. A span is {"start":P,"end":P} with P = {"line","column","offset"}
/// (byte offset; `end` is exclusive). "help" is omitted when there is none; a note has
/// "file" and "span" only when it points somewhere.
std::string render_json(const Diagnostics& diagnostics, const SourceMap& sources);

/// A SARIF 2.1.0 log (indented JSON ending with '\n') with one run of the `gov` driver at
/// `tool_version`: one rule per distinct code used, in order of first use, and one result
/// per diagnostic. Regions use code-point columns (run.columnKind "unicodeCodePoints") with
/// an exclusive endColumn; an empty span covers one column. Artifact URIs are the paths as
/// given, with forward slashes and percent-encoding where a URI needs it.
std::string render_sarif(const Diagnostics& diagnostics, const SourceMap& sources, std::string_view tool_version);

/// GitHub Actions workflow commands, one line per diagnostic, each ending with '\n':
/// `::error file=P,line=L,col=C,endLine=L2,endColumn=C2,title=E0020 unknown-unit::MESSAGE`
/// (`::warning`, `::notice` for warnings and notes). endColumn is exclusive, as in SARIF.
/// Spans across lines carry only line and endLine, since GitHub drops columns then.
/// The help, if any, follows the message on its own line. Values are escaped as the
/// runner expects, so no message can end the line or start another command.
std::string render_github(const Diagnostics& diagnostics, const SourceMap& sources);

}  // namespace gov
