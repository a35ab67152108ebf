// JSON, SARIF 2.1.0 and GitHub Actions renderings of diagnostics.
#include "compiler/diagnostics/formats.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "compiler/support/json_writer.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/support/utf8.hpp"
#include "compiler/support/assert.hpp"

namespace gov {
namespace {

constexpr std::string_view kSarifSchema = "https://json.schemastore.org/sarif-2.1.0.json";
constexpr std::string_view kInformationUri = "https://github.com/gov-policy/gov";
constexpr std::string_view kHelpUriBase = "https://github.com/gov-policy/gov/blob/main/docs/diagnostics.md#";

std::string_view github_command(Severity severity) {
  switch (severity) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "notice";
  }
  return "error";
}

// --- Positions --------------------------------------------------------------------------

struct Point {
  uint32_t line;
  uint32_t column;
  uint32_t offset;
};

struct Range {
  Point start;
  Point end;  // exclusive
};

Range resolve(const SourceFile& file, Span span) {
  const auto size = static_cast<uint32_t>(
      std::min<size_t>(file.text().size(), std::numeric_limits<uint32_t>::max()));
  const uint32_t begin = std::min(span.begin, size);
  const uint32_t end = std::clamp(span.end, begin, size);
  const LineColumn start_lc = file.line_column(begin);
  const LineColumn end_lc = file.line_column(end);
  return {{start_lc.line, start_lc.column, begin}, {end_lc.line, end_lc.column, end}};
}

const SourceFile& file_of(const Location& where, const SourceMap& sources) {
  GOV_ASSERT(where.source < sources.size(), "a diagnostic points into a file the SourceMap does not have");
  return sources.get(where.source);
}

void write_point(JsonWriter& json, const Point& point) {
  json.begin_object();
  json.field("line", point.line);
  json.field("column", point.column);
  json.field("offset", point.offset);
  json.end_object();
}

void write_file_and_span(JsonWriter& json, const Location& where, const SourceMap& sources) {
  const SourceFile& file = file_of(where, sources);
  const Range range = resolve(file, where.span);
  json.field("file", file.path());
  json.key("span");
  json.begin_object();
  json.key("start");
  write_point(json, range.start);
  json.key("end");
  write_point(json, range.end);
  json.end_object();
}

// --- SARIF ------------------------------------------------------------------------------

// A relative URI reference for a path: backslashes become slashes, and every byte other
// than an unreserved character or '/' is percent-encoded (spaces, '%', '#', '?', ':' that
// would read as a scheme, non-ASCII bytes).
std::string artifact_uri(std::string_view path) {
  // An absolute path is a `file` URI (SARIF §3.4.3: a relative reference or an absolute URI; a
  // bare `/x.gov` is neither, and code scanning cannot place it).
  std::string uri = path.starts_with('/') ? "file://" : "";
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || c == '/') {
      uri += ch;
    } else if (c == '\\') {
      uri += '/';
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void write_physical_location(JsonWriter& json, const Location& where, const SourceMap& sources,
                             std::string_view region_message) {
  const SourceFile& file = file_of(where, sources);
  const Range range = resolve(file, where.span);
  // SARIF regions are never empty: an empty span (a missing token) covers one column.
  const bool empty = range.start.offset == range.end.offset;
  json.key("physicalLocation");
  json.begin_object();
  json.key("artifactLocation");
  json.begin_object();
  json.field("uri", artifact_uri(file.path()));
  json.end_object();
  json.key("region");
  json.begin_object();
  json.field("startLine", range.start.line);
  json.field("startColumn", range.start.column);
  json.field("endLine", empty ? range.start.line : range.end.line);
  json.field("endColumn", empty ? range.start.column + 1 : range.end.column);
  if (!region_message.empty()) {
    json.key("message");
    json.begin_object();
    json.field("text", region_message);
    json.end_object();
  }
  json.end_object();
  json.end_object();
}

// --- GitHub -----------------------------------------------------------------------------

// The runner's escaping (actions/toolkit `escapeData`/`escapeProperty`), applied to valid
// UTF-8 so that no byte can end the line early. Other controls (ESC starts a colour or a
// cursor movement in the log viewer), bidi controls and invisible characters are written
// as readable escapes (`\x1b`, `\u{202e}`): the runner passes them through unchanged.
std::string escape_github(std::string_view text, bool property) {
  std::string out;
  for_each_code_point(text, [&](std::string_view sequence, uint32_t c) {
    switch (c) {
      case '%': out += "%25"; return;
      case '\r': out += "%0D"; return;
      case '\n': out += "%0A"; return;
      case ':':
        if (property) {
          out += "%3A";
          return;
        }
        break;
      case ',':
        if (property) {
          out += "%2C";
          return;
        }
        break;
      default: break;
    }
    if (is_unsafe_for_terminal(c)) {
      out += escape_code_point(c);
      return;
    }
    out += sequence;
  });
  return out;
}

}  // namespace

std::string render_json(const Diagnostics& diagnostics, const SourceMap& sources) {
  JsonWriter json(/*indented=*/false);
  json.begin_object();
  json.key("diagnostics");
  json.begin_array();
  for (const Diagnostic& d : diagnostics.items()) {
    const CodeInfo& info = code_info(d.code);
    json.begin_object();
    json.field("code", info.id);
    json.field("name", info.name);
    json.field("severity", severity_name(d.severity));
    json.field("message", d.message);
    write_file_and_span(json, d.primary, sources);
    json.field("label", d.label);
    if (d.help) json.field("help", *d.help);
    json.key("notes");
    json.begin_array();
    for (const Note& note : d.notes) {
      json.begin_object();
      json.field("message", note.message);
      if (note.where) write_file_and_span(json, *note.where, sources);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.field("errors", diagnostics.count(Severity::error));
  json.field("warnings", diagnostics.count(Severity::warning));
  json.end_object();
  return json.finish();
}

std::string render_sarif(const Diagnostics& diagnostics, const SourceMap& sources, std::string_view tool_version) {
  // One rule per code used, in order of first use; rule_index maps a code to its rule.
  std::vector<Code> rules;
  std::vector<size_t> rule_index(all_codes().size(), SIZE_MAX);
  for (const Diagnostic& d : diagnostics.items()) {
    size_t& index = rule_index[static_cast<size_t>(d.code)];
    if (index != SIZE_MAX) continue;
    index = rules.size();
    rules.push_back(d.code);
  }

  JsonWriter json(/*indented=*/true);
  json.begin_object();
  json.field("$schema", kSarifSchema);
  json.field("version", "2.1.0");
  json.key("runs");
  json.begin_array();
  json.begin_object();

  json.key("tool");
  json.begin_object();
  json.key("driver");
  json.begin_object();
  json.field("name", "gov");
  json.field("version", tool_version);
  json.field("informationUri", kInformationUri);
  json.key("rules");
  json.begin_array();
  for (const Code code : rules) {
    const CodeInfo& info = code_info(code);
    json.begin_object();
    json.field("id", info.id);
    json.field("name", info.name);
    json.key("shortDescription");
    json.begin_object();
    json.field("text", info.summary);
    json.end_object();
    json.field("helpUri", std::string(kHelpUriBase) + lower(info.id));
    json.key("defaultConfiguration");
    json.begin_object();
    json.field("level", severity_name(info.severity));
    json.end_object();
    json.end_object();
  }
  json.end_array();
  json.end_object();
  json.end_object();

  // Columns count code points (SARIF's default would be UTF-16 code units).
  json.field("columnKind", "unicodeCodePoints");

  json.key("results");
  json.begin_array();
  for (const Diagnostic& d : diagnostics.items()) {
    json.begin_object();
    json.field("ruleId", code_info(d.code).id);
    json.field("ruleIndex", rule_index[static_cast<size_t>(d.code)]);
    json.field("level", severity_name(d.severity));
    json.key("message");
    json.begin_object();
    // Notes without a place are part of the message, as the help is (those with one are
    // relatedLocations); a reviewer's finding, session 43: SARIF dropped them.
    std::string text = d.message;
    for (const Note& note : d.notes) {
      if (!note.where) text += fmt::format(" (note: {})", note.message);
    }
    if (d.help) text += fmt::format(" (help: {})", *d.help);
    json.field("text", text);
    json.end_object();
    json.key("locations");
    json.begin_array();
    json.begin_object();
    write_physical_location(json, d.primary, sources, d.label);
    json.end_object();
    json.end_array();
    const bool has_related =
        std::any_of(d.notes.begin(), d.notes.end(), [](const Note& note) { return note.where.has_value(); });
    if (has_related) {
      json.key("relatedLocations");
      json.begin_array();
      uint64_t id = 0;
      for (const Note& note : d.notes) {
        if (!note.where) continue;
        json.begin_object();
        json.field("id", id++);
        write_physical_location(json, *note.where, sources, /*region_message=*/"");
        json.key("message");
        json.begin_object();
        json.field("text", note.message);
        json.end_object();
        json.end_object();
      }
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();

  json.end_object();
  json.end_array();
  json.end_object();
  return json.finish();
}

std::string render_github(const Diagnostics& diagnostics, const SourceMap& sources) {
  std::string out;
  for (const Diagnostic& d : diagnostics.items()) {
    const SourceFile& file = file_of(d.primary, sources);
    const Range range = resolve(file, d.primary.span);
    const CodeInfo& info = code_info(d.code);
    std::string position;
    if (range.start.line == range.end.line) {
      // Same convention as SARIF: exclusive end, an empty span covers one column.
      const uint32_t end_column = std::max(range.end.column, range.start.column + 1);
      position = fmt::format("line={},col={},endLine={},endColumn={}", range.start.line, range.start.column,
                             range.end.line, end_column);
    } else {
      // The runner drops col/endColumn when line and endLine differ; say only what it keeps.
      position = fmt::format("line={},endLine={}", range.start.line, range.end.line);
    }
    std::string message = escape_github(d.message, /*property=*/false);
    // Notes stay in the annotation (one annotation per diagnostic), each with where it points.
    for (const Note& note : d.notes) {
      std::string where;
      if (note.where) {
        const SourceFile& note_file = file_of(*note.where, sources);
        const Range note_range = resolve(note_file, note.where->span);
        where = fmt::format(" ({}:{}:{})", note_file.path(), note_range.start.line, note_range.start.column);
      }
      message += "%0Anote: " + escape_github(note.message + where, /*property=*/false);
    }
    if (d.help) message += "%0Ahelp: " + escape_github(*d.help, /*property=*/false);
    out += fmt::format("::{} file={},{},title={}::{}\n", github_command(d.severity),
                       escape_github(file.path(), /*property=*/true), position,
                       escape_github(fmt::format("{} {}", info.id, info.name), /*property=*/true), message);
  }
  return out;
}

}  // namespace gov
