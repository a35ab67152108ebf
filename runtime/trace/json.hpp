// A small, strict JSON reader (RFC 8259) with positions on every value (the escaper is
// gov::support's, compiler/support/json_writer.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/support/expected.hpp"
#include "compiler/support/json_writer.hpp"
#include "compiler/support/utf8.hpp"

namespace gov::trace {

/// Where a value starts (offset, 1-based line, column in code points).
using JsonPosition = support::TextPosition;

/// Bounds on the input; going past one is an error, never a crash or unbounded memory.
struct JsonLimits {
  size_t max_bytes = size_t{64} << 20;  // the size of the whole text
  size_t max_depth = 64;                // arrays and objects nested in each other
  /// The most bytes one value read with JsonReader::read_value() may span (parse_json: the
  /// document). Bounds the memory of a pull reader's one value, whatever the text's size.
  size_t max_value_bytes = std::numeric_limits<size_t>::max();
};

enum class JsonKind : uint8_t { null, boolean, number, string, array, object };

/// "null", "a boolean", "a number", "a string", "an array", "an object": for messages.
std::string_view json_kind_name(JsonKind kind);

/// What JsonValue::to_units found.
enum class NumberStatus : uint8_t {
  ok,            // `value` holds the exact result
  not_exact,     // the result has a fractional part
  out_of_range,  // the result does not fit an int64
  not_a_number,  // the value is not a number
};

struct ExactNumber {
  NumberStatus status = NumberStatus::not_a_number;
  int64_t value = 0;
};

/// JsonValue::to_units on the text of a number (RFC 8259's grammar, which the caller has
/// checked): exact, no floating point; `factor` must be in 1..1,000,000 (else not_a_number).
ExactNumber number_units(std::string_view number, int64_t factor);

/// An object member's key, decoded, with the position of its opening quote.
struct JsonKey {
  std::string text;
  JsonPosition position;
};

/// One JSON value (a DOM node). Owns its children. Objects keep their members in input
/// order: `keys[i]` names `items[i]`; keys are unique (the reader rejects duplicates).
struct JsonValue {
  JsonKind kind = JsonKind::null;
  JsonPosition position;
  bool boolean = false;          // boolean
  std::string text;              // string: decoded UTF-8; number: the exact source text
  std::vector<JsonValue> items;  // array: elements; object: member values
  std::vector<JsonKey> keys;     // object: member keys, parallel to `items`

  /// The member named `key` of an object, or nullptr (also for non-objects). Linear time.
  const JsonValue* find(std::string_view key) const;
  /// The number as an int64 when its value is a whole number in range ("3", "3.0", "3e2").
  std::optional<int64_t> as_int64() const;
  /// The number times `factor`, computed exactly from the text: "0.5".to_units(1024) is
  /// 512, "1.0005".to_units(1000) is not_exact. No floating point. `factor` must be in
  /// 1..1,000,000 (else, and for non-numbers, not_a_number).
  ExactNumber to_units(int64_t factor) const;
};

/// Parses one complete JSON document: exactly one value, surrounded by whitespace only. An
/// error (the first; parsing stops there) is of kind `invalid`, its message "line 3, column 14:
/// expected ',' or '}' after an object member" and its position the offending character.
/// A leading UTF-8 byte order mark is skipped. Strings must be valid UTF-8 (\u escapes
/// included: surrogates must pair); duplicate keys in an object are an error. Never
/// throws (running out of memory is reported as an error).
support::Expected<JsonValue> parse_json(std::string_view text, const JsonLimits& limits = {});

/// Where a JsonReader's text comes from when the input is not in memory all at once (a trace
/// file read in chunks, runtime/trace/trace_file.hpp). The text has fixed addresses for the
/// whole input, but only the bytes the source has filled hold it: the reader asks for more
/// as it goes and says what it will never look at again, so that the source can drop it.
class JsonSource {
 public:
  /// Makes the text readable up to offset `end` if the input is that long, after dropping
  /// what lies before `keep` if the source wants to; returns how many bytes from the start
  /// are readable now (fewer than `end` at the end of the input or when reading failed, which
  /// the source reports itself). `keep` never decreases.
  virtual size_t fill(size_t end, size_t keep) = 0;

 protected:
  ~JsonSource() = default;
};

/// Result of one step of JsonReader.
enum class JsonStep : uint8_t { item, end, error };

/// A pull reader over one JSON text, for reading a large document piecewise: step into
/// the outer containers, then read each element as its own JsonValue, so memory holds one
/// element at a time. The text must outlive the reader. After the first error every call
/// fails and error() says why. Not thread-safe; never throws.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text, const JsonLimits& limits = {});
  /// Reads `text` piecewise from `source` (see JsonSource): `text` spans the whole input but
  /// only what the source fills is read; memory holds at most the value being read (bounded
  /// by max_value_bytes) plus what the source reads ahead. `source` must outlive the reader.
  JsonReader(std::string_view text, const JsonLimits& limits, JsonSource& source);

  /// The kind of the next value (after whitespace), or nullopt when no value can start
  /// there (end of input, a stray character). Consumes nothing but whitespace.
  std::optional<JsonKind> peek_kind();
  /// Position of the next non-whitespace byte.
  JsonPosition position();
  /// Bytes of the text consumed so far: everything before it has been read.
  size_t offset() const { return pos_; }

  /// Consumes the '{' or '[' of the next value and steps into it; false on error.
  bool enter_object();
  bool enter_array();
  /// In an object stepped into: reads the next key and its ':' into `key` (item: the
  /// member's value comes next), or consumes the '}' and steps out (end).
  JsonStep next_member(JsonKey& key);
  /// In an array stepped into: item when an element comes next, or consumes the ']' and
  /// steps out (end).
  JsonStep next_element();

  /// Reads the next complete value into `out`; false on error.
  bool read_value(JsonValue& out);

  // A caller's own reading of a value, for a fast path that knows the value's shape: it looks
  // at the raw text, and either consumes the value whole or leaves it to read_value.
  /// The readable text from the next value (after whitespace): at most `n` bytes, fewer at the
  /// end of the input. Valid until the next call. Consumes nothing but whitespace.
  std::string_view lookahead(size_t n);
  /// Whether read_value would accept a value of `bytes` bytes nested `depth` levels deep (the
  /// value itself counts one) as far as the limits go.
  bool fits_limits(size_t bytes, size_t depth) const;
  /// Consumes `bytes` bytes of the text from the next value on: a complete, valid value the
  /// caller read through lookahead, holding no line feed, within fits_limits.
  void skip_read(size_t bytes) { pos_ += bytes; }
  /// Reads and discards the next complete value; false on error.
  bool skip_value();
  /// Checks that only whitespace remains after the outermost value; false on error.
  bool finish();

  /// The first error (kind `invalid`, message with its line and column, position set).
  const std::optional<support::Error>& error() const { return error_; }

 private:
  /// The keys of one object so far, for finding duplicates: a linear scan while the
  /// object is small, a hash index once it is not (linear time overall).
  struct KeyIndex {
    std::unordered_map<std::string, size_t> large;
    /// Index in `keys` of a key equal to `text`, or -1.
    ptrdiff_t find(const std::vector<JsonKey>& keys, const std::string& text);
    void add(const std::vector<JsonKey>& keys);
  };
  struct Frame {
    bool object = false;
    bool first = true;
    std::vector<JsonKey> keys;  // object: keys seen so far
    KeyIndex index;
  };

  // Lexing. With a source, reaching the end of the filled text asks for more.
  bool at_end() { return pos_ >= text_.size() && !grow(pos_ + 1); }
  /// Asks the source for the text up to `end`; true when it is readable.
  bool grow(size_t end);
  /// Makes `n` bytes from pos_ readable when the input has them (for lookahead).
  void ensure(size_t n) {
    if (pos_ + n > text_.size()) grow(pos_ + n);
  }
  unsigned char peek() const { return static_cast<unsigned char>(text_[pos_]); }
  void skip_whitespace();
  JsonPosition position_at(size_t offset);
  bool fail(size_t offset, std::string message);
  bool fail_expected(std::string_view what);

  // Values.
  bool parse_value(JsonValue& out, size_t depth);
  bool parse_object(JsonValue& out, size_t depth);
  bool parse_array(JsonValue& out, size_t depth);
  bool parse_member_key(std::vector<JsonKey>& keys, KeyIndex& index, bool after_comma,
                        JsonKey& key);
  bool parse_string(std::string& out);
  bool parse_escape(std::string& out);
  bool parse_unicode_escape(std::string& out);
  bool parse_hex4(uint32_t& out);
  bool parse_utf8(std::string& out);
  bool parse_number(JsonValue& out);
  bool parse_digits(std::string_view what);
  bool parse_literal(JsonValue& out);
  bool check_depth(size_t depth);
  /// Fails when the value being read spans more than max_value_bytes.
  bool value_too_large();
  std::string found_text();

  std::string_view text_;  // with a source: the filled part of full_
  std::string_view full_;  // the whole input (with a source, partly unfilled or dropped)
  JsonSource* source_ = nullptr;
  JsonLimits limits_;
  bool bom_ = false;        // the text starts with a byte order mark
  bool in_token_ = false;   // reading a key or value, which may look back to value_start_
  JsonPosition released_;   // the position before which the source may have dropped the text
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t line_start_ = 0;
  size_t column_line_ = 1;    // a cached (line, offset, column), so that columns cost
  size_t column_offset_ = 0;  // linear time overall
  size_t column_ = 1;
  size_t string_start_ = 0;
  size_t value_start_ = 0;  // where the value read_value() is reading starts
  std::vector<Frame> frames_;
  std::optional<support::Error> error_;
};

}  // namespace gov::trace
