// The one JSON writer and string escaper for every document gov writes off the hot path (lint
// JSON and SARIF, `gov diff --format json`, `gov log --format json`); the decision stream keeps its
// own allocation-free writer (runtime/trace/decision_writer.cpp) but escapes strings here too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gov {

/// What append_json_string escapes besides what JSON requires.
enum class JsonEscapes : uint8_t {
  /// Only what RFC 8259 requires: '"', '\\' and C0 controls (`\n`, `\t`, ... or `\u00XX`). The
  /// decision stream, traces and the embedding API's JSON are written so, byte for byte.
  required,
  /// Also DEL, C1 controls, bidi controls and invisible characters (terminal_text.hpp), the
  /// JavaScript line terminators U+2028/U+2029 among them, as `\uXXXX` (a surrogate pair above
  /// U+FFFF): the decoded string is the same, and the document can be pasted anywhere or shown
  /// on a terminal without being reordered or acted on.
  unsafe,
};

/// Appends `text` to `out` as a quoted JSON string. Bytes that are not valid UTF-8 become
/// U+FFFD, so the output is always valid UTF-8 and valid JSON, whatever `text` holds.
void append_json_string(std::string& out, std::string_view text, JsonEscapes escapes = JsonEscapes::required);
/// The most bytes an escaped JSON string takes per byte of its text (an escaped control
/// character: `\u00XX`).
inline constexpr size_t kJsonEscapeGrowth = 6;
/// Writes `text` as a quoted JSON string (as append_json_string) at `out`, which must have room
/// for kJsonEscapeGrowth * text.size() + 2 bytes; returns the end of what it wrote. For writers
/// that set room aside once for a whole line (the decision stream).
char* write_json_string(char* out, std::string_view text, JsonEscapes escapes = JsonEscapes::required);
/// `text` as a quoted JSON string (see append_json_string).
std::string json_quote(std::string_view text, JsonEscapes escapes = JsonEscapes::required);

/// A streaming JSON writer: compact, or indented by two spaces. Keys and values are written in
/// call order; the caller keeps the nesting balanced (a broken invariant otherwise). Strings
/// are escaped with JsonEscapes::unsafe. Not thread-safe; one document per writer.
class JsonWriter {
 public:
  explicit JsonWriter(bool indented) : indented_(indented) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  void key(std::string_view name);
  void string(std::string_view text);
  void number(int64_t value);
  void number(uint64_t value);
  void number(uint32_t value) { number(uint64_t{value}); }
  /// A number given as exact decimal text ("12", "0.5", "-3.25"), written as it is: amounts
  /// formatted by gov::model keep their exact digits. `text` must be a JSON number (assert).
  void decimal(std::string_view text);
  void boolean(bool value);
  void null();
  /// A value that is already a compact JSON document (a decision-stream line), embedded as it
  /// is but for the characters JsonEscapes::unsafe hides: raw non-ASCII bytes and DEL appear
  /// only inside its strings, where their escape means the same. `json` must be valid JSON.
  void embedded(std::string_view json);
  void field(std::string_view name, std::string_view text) {
    key(name);
    string(text);
  }
  void field(std::string_view name, const char* text) { field(name, std::string_view(text)); }
  void field(std::string_view name, int64_t value) {
    key(name);
    number(value);
  }
  void field(std::string_view name, uint64_t value) {
    key(name);
    number(value);
  }
  void field(std::string_view name, uint32_t value) { field(name, uint64_t{value}); }
  void field(std::string_view name, bool value) {
    key(name);
    boolean(value);
  }

  /// The document, ending with '\n'. The writer is spent afterwards.
  std::string finish();

 private:
  void separate();
  void open(char bracket);
  void close(char bracket);
  void newline();

  std::string out_;
  bool indented_;
  bool after_key_ = false;
  std::vector<bool> nonempty_;  // one entry per open container: has it an item yet?
};

}  // namespace gov
