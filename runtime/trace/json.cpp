// The strict JSON reader: recursive descent with an explicit depth bound, no exceptions.
#include "runtime/trace/json.hpp"

#include "compiler/diagnostics/source_file.hpp"
#include "compiler/support/swar.hpp"
#include "compiler/support/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <new>
#include <utility>

namespace gov::trace {

namespace {

__extension__ typedef unsigned __int128 Uint128;  // GCC and Clang: exact products of int64s

constexpr size_t kSmallObject = 16;  // objects up to this many keys look for duplicates linearly
constexpr size_t kMessageQuoteLimit = 40;

bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}
bool is_letter(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Quotes a piece of input for a message, cut short when long.
std::string quote_for_message(std::string_view text) {
  if (text.size() <= kMessageQuoteLimit) return json_quote(text);
  size_t cut = kMessageQuoteLimit;
  while (cut > 0 && is_utf8_continuation(static_cast<unsigned char>(text[cut]))) --cut;
  return json_quote(text.substr(0, cut)) + "...";
}

// ------------------------------------------------------------------ exact numbers

// A number's text split into significant digits and a power of ten:
// value = (negative ? -1 : 1) × digits × 10^exponent, digits without leading or trailing
// zeros (empty for zero).
struct Decomposed {
  bool negative = false;
  std::string digits;
  int64_t exponent = 0;
};

Decomposed decompose(std::string_view text) {
  Decomposed d;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    d.negative = true;
    ++i;
  }
  int64_t fraction_digits = 0;
  bool in_fraction = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      in_fraction = true;
      continue;
    }
    if (in_fraction) ++fraction_digits;
    if (d.digits.empty() && text[i] == '0') continue;  // leading zeros
    d.digits += text[i];
  }
  int64_t exponent = 0;
  bool exponent_negative = false;
  if (i < text.size()) {
    ++i;  // 'e'
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    // Saturate: an exponent this large puts any value out of range (or below 1) anyway.
    for (; i < text.size(); ++i)
      exponent = std::min<int64_t>(exponent * 10 + (text[i] - '0'), 1'000'000);
  }
  d.exponent = (exponent_negative ? -exponent : exponent) - fraction_digits;
  while (!d.digits.empty() && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exponent;
  }
  return d;
}

int valuation(int64_t n, int64_t prime) {
  int count = 0;
  while (n % prime == 0) {
    n /= prime;
    ++count;
  }
  return count;
}

Uint128 parse_u128(std::string_view digits) {
  Uint128 value = 0;
  for (char c : digits) value = value * 10 + static_cast<unsigned>(c - '0');
  return value;
}

Uint128 power_of_ten(int64_t n) {
  Uint128 value = 1;
  for (int64_t i = 0; i < n; ++i) value *= 10;
  return value;
}

ExactNumber signed_result(bool negative, Uint128 magnitude) {
  constexpr auto kMax = static_cast<Uint128>(std::numeric_limits<int64_t>::max());
  if (magnitude > kMax) return {NumberStatus::out_of_range, 0};
  auto value = static_cast<int64_t>(magnitude);
  return {NumberStatus::ok, negative ? -value : value};
}

}  // namespace

// ------------------------------------------------------------------ small public helpers

std::string_view json_kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::null:
      return "null";
    case JsonKind::boolean:
      return "a boolean";
    case JsonKind::number:
      return "a number";
    case JsonKind::string:
      return "a string";
    case JsonKind::array:
      return "an array";
    case JsonKind::object:
      return "an object";
  }
  return "?";
}


// ------------------------------------------------------------------ JsonValue

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind != JsonKind::object) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].text == key) return &items[i];
  }
  return nullptr;
}

std::optional<int64_t> JsonValue::as_int64() const {
  ExactNumber number = to_units(/*factor=*/1);
  if (number.status != NumberStatus::ok) return std::nullopt;
  return number.value;
}

ExactNumber JsonValue::to_units(int64_t factor) const {
  if (kind != JsonKind::number) return {NumberStatus::not_a_number, 0};
  return number_units(text, factor);
}

namespace {

/// number_units of a plain decimal (-?digits(.digits)?, at most 18 digits, so it fits 64 bits
/// whole), in 128-bit arithmetic: the numbers of traces. False for any other text.
bool plain_decimal_units(std::string_view text, int64_t factor, ExactNumber& out) {
  const bool negative = !text.empty() && text[0] == '-';
  uint64_t value = 0;
  uint64_t scale = 1;  // 10^(digits after the point)
  size_t digits = 0;
  bool fraction = false;
  for (size_t i = negative ? 1 : 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !fraction) {
      fraction = true;
      continue;
    }
    if (c < '0' || c > '9' || ++digits > 18) return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (fraction) scale *= 10;
  }
  const Uint128 scaled = static_cast<Uint128>(value) * static_cast<Uint128>(factor);
  // Most numbers are whole (no division) or small enough for 64-bit division, which is a
  // single instruction where the 128-bit one is a library call.
  if (scale == 1) {
    out = signed_result(negative, scaled);
  } else if (scaled >> 64 == 0) {
    const auto narrow = static_cast<uint64_t>(scaled);
    out = narrow % scale != 0 ? ExactNumber{NumberStatus::not_exact, 0} : signed_result(negative, narrow / scale);
  } else if (scaled % scale != 0) {
    out = {NumberStatus::not_exact, 0};
  } else {
    out = signed_result(negative, scaled / scale);
  }
  return true;
}

}  // namespace

ExactNumber number_units(std::string_view text, int64_t factor) {
  if (factor < 1 || factor > 1'000'000) return {NumberStatus::not_a_number, 0};
  if (ExactNumber plain; plain_decimal_units(text, factor, plain)) return plain;
  Decomposed d = decompose(text);
  if (d.digits.empty()) return {NumberStatus::ok, 0};
  auto n = static_cast<int64_t>(d.digits.size());
  auto f = static_cast<Uint128>(factor);
  if (d.exponent >= 0) {
    if (n + d.exponent > 19) return {NumberStatus::out_of_range, 0};
    return signed_result(d.negative, parse_u128(d.digits) * power_of_ten(d.exponent) * f);
  }
  // digits × factor / 10^k is whole only if 10^k divides digits × factor. The digits end
  // in a non-zero digit, so they are not a multiple of 10: when k exceeds the powers of 2
  // and of 5 in factor (at most 19), some prime is missing and the result has a fraction.
  int64_t k = -d.exponent;
  if (k > std::max(valuation(factor, 2), valuation(factor, 5))) return {NumberStatus::not_exact, 0};
  if (n - k > 19) return {NumberStatus::out_of_range, 0};
  Uint128 digits = parse_u128(d.digits);  // at most 38 digits: fits
  Uint128 scale = power_of_ten(k);
  Uint128 whole = digits / scale;
  Uint128 rest = digits % scale * f;
  if (rest % scale != 0) return {NumberStatus::not_exact, 0};
  return signed_result(d.negative, whole * f + rest / scale);
}

// ------------------------------------------------------------------ JsonReader: lexing

JsonReader::JsonReader(std::string_view text, const JsonLimits& limits)
    : text_(text), full_(text), limits_(limits) {
  if (full_.size() > limits_.max_bytes) {
    fail(0, fmt::format("the input is {} bytes; the limit is {} bytes", full_.size(),
                        limits_.max_bytes));
    return;
  }
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") {  // a byte order mark: skipped, not a column
    bom_ = true;
    pos_ = line_start_ = column_offset_ = 3;
    released_ = {3, 1, 1};
  }
}

JsonReader::JsonReader(std::string_view text, const JsonLimits& limits, JsonSource& source)
    : text_(text.substr(0, 0)), full_(text), source_(&source), limits_(limits) {
  if (full_.size() > limits_.max_bytes) {
    fail(0, fmt::format("the input is {} bytes; the limit is {} bytes", full_.size(),
                        limits_.max_bytes));
    return;
  }
  ensure(3);
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") {
    bom_ = true;
    pos_ = line_start_ = column_offset_ = 3;
    released_ = {3, 1, 1};
  }
}

bool JsonReader::grow(size_t end) {
  if (source_ == nullptr || text_.size() == full_.size()) return text_.size() >= end;
  const size_t wanted = end;
  if (in_token_ && limits_.max_value_bytes < full_.size() - value_start_) {
    // A key or value may not pass max_value_bytes: its text is kept until it ends, so read no
    // further than one byte past the bound; the reader then fails with "longer than" (see fail).
    end = std::min(end, value_start_ + limits_.max_value_bytes + 1);
    if (end <= text_.size()) return text_.size() >= wanted;
  }
  // Nothing before `keep` is looked at again: a key or value being read looks back to its
  // start (its number text, its error position); between values only pos_ matters. Positions
  // are counted from marks, so one is set at `keep` before the text before it goes away.
  const size_t keep = in_token_ ? value_start_ : pos_;
  if (keep > released_.offset) released_ = position_at(keep);
  text_ = full_.substr(0, source_->fill(end, released_.offset));
  return text_.size() >= wanted;
}

void JsonReader::skip_whitespace() {
  while (!at_end()) {
    char c = text_[pos_];
    if (c == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      return;
    }
    ++pos_;
  }
}

JsonPosition JsonReader::position_at(size_t offset) {
  offset = std::min(offset, text_.size());
  // Count from the nearest known position at or before `offset`: the start, the current
  // line's start, the last position computed, or where the text may have been dropped (with
  // a source, nothing before that is read again). Linear time overall for forward reading.
  JsonPosition from = released_.offset <= offset ? released_ : JsonPosition{bom_ ? size_t{3} : 0, 1, 1};
  if (line_start_ <= offset && line_start_ > from.offset) from = {line_start_, line_, 1};
  if (column_offset_ <= offset && column_offset_ > from.offset) from = {column_offset_, column_line_, column_};
  JsonPosition p = from;
  for (size_t i = from.offset; i < offset; ++i) {
    if (i + 8 <= offset) {  // eight ASCII bytes without a newline: eight columns
      const uint64_t word = swar::load(text_, i);
      if (!(swar::any_high(word) | swar::any_equal(word, '\n'))) {
        p.column += 8;
        i += 7;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(text_[i]);
    if (c == '\n') {
      ++p.line;
      p.column = 1;
    } else if (!is_utf8_continuation(c)) {
      ++p.column;
    }
  }
  p.offset = offset;
  column_line_ = p.line;
  column_offset_ = offset;
  column_ = p.column;
  return p;
}

JsonPosition JsonReader::position() {
  skip_whitespace();
  return position_at(pos_);
}

bool JsonReader::fail(size_t offset, std::string message) {
  if (error_) return false;
  // A key or value cut at max_value_bytes (grow reads no further) ends in an error of
  // whatever came next; the real one is its length.
  if (in_token_ && pos_ > value_start_ && pos_ - value_start_ > limits_.max_value_bytes) {
    offset = value_start_;
    message = fmt::format("this value is longer than {} bytes", limits_.max_value_bytes);
  }
  const JsonPosition at = position_at(offset);
  error_ = support::Error{support::ErrorKind::invalid,
                          fmt::format("line {}, column {}: {}", at.line, at.column, message), at};
  return false;
}

bool JsonReader::fail_expected(std::string_view what) {
  if (at_end()) return fail(pos_, fmt::format("{}, found end of input", what));
  return fail(pos_, std::string(what));
}

std::string JsonReader::found_text() {
  if (at_end()) return "end of input";
  ensure(4);
  unsigned char c = peek();
  if (c == '\'') return "a single quote (JSON strings use double quotes)";
  if (c > 0x20 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
  if (c < 0x80) return fmt::format("control character U+{:04X}", c);
  size_t length = utf8_prefix_length(text_.substr(pos_));
  if (length == 0) return fmt::format("byte 0x{:02X}, which is not UTF-8", c);
  return fmt::format("'{}'", text_.substr(pos_, length));
}

bool JsonReader::check_depth(size_t depth) {
  if (depth <= limits_.max_depth) return true;
  return fail(pos_, fmt::format("nesting is deeper than {} levels", limits_.max_depth));
}

bool JsonReader::value_too_large() {
  if (pos_ - value_start_ <= limits_.max_value_bytes) return false;
  fail(value_start_, fmt::format("this value is longer than {} bytes", limits_.max_value_bytes));
  return true;
}

ptrdiff_t JsonReader::KeyIndex::find(const std::vector<JsonKey>& keys, const std::string& text) {
  if (large.empty() && keys.size() < kSmallObject) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].text == text) return static_cast<ptrdiff_t>(i);
    }
    return -1;
  }
  if (large.empty()) {
    for (size_t i = 0; i < keys.size(); ++i) large.emplace(keys[i].text, i);
  }
  auto it = large.find(text);
  return it == large.end() ? -1 : static_cast<ptrdiff_t>(it->second);
}

void JsonReader::KeyIndex::add(const std::vector<JsonKey>& keys) {
  if (!large.empty()) large.emplace(keys.back().text, keys.size() - 1);
}

// ------------------------------------------------------------------ JsonReader: values

bool JsonReader::parse_value(JsonValue& out, size_t depth) {
  skip_whitespace();
  if (value_too_large()) return false;
  out.position = position_at(pos_);
  if (at_end()) return fail(pos_, "expected a value, found end of input");
  unsigned char c = peek();
  if (c == '{') return parse_object(out, depth);
  if (c == '[') return parse_array(out, depth);
  if (c == '"') {
    out.kind = JsonKind::string;
    return parse_string(out.text);
  }
  if (c == '-' || is_digit(c)) return parse_number(out);
  if (is_letter(c)) return parse_literal(out);
  return fail(pos_, fmt::format("expected a value, found {}", found_text()));
}

bool JsonReader::parse_object(JsonValue& out, size_t depth) {
  if (!check_depth(depth)) return false;
  out.kind = JsonKind::object;
  ++pos_;  // '{'
  skip_whitespace();
  if (!at_end() && peek() == '}') {
    ++pos_;
    return true;
  }
  KeyIndex index;
  for (bool after_comma = false;; after_comma = true) {
    JsonKey key;
    if (!parse_member_key(out.keys, index, after_comma, key)) return false;
    out.keys.push_back(std::move(key));
    index.add(out.keys);
    // Parsed in place (no move of a nested value); after an error `out` is not looked at.
    if (!parse_value(out.items.emplace_back(), depth + 1)) return false;
    skip_whitespace();
    if (at_end() || (peek() != ',' && peek() != '}'))
      return fail_expected("expected ',' or '}' after an object member");
    if (text_[pos_++] == '}') return true;
  }
}

bool JsonReader::parse_member_key(std::vector<JsonKey>& keys, KeyIndex& index, bool after_comma,
                                  JsonKey& key) {
  skip_whitespace();
  if (at_end() || peek() != '"') {
    if (after_comma && !at_end() && peek() == '}') {
      return fail(pos_, "expected a string key after ','; trailing commas are not allowed");
    }
    return fail_expected(after_comma ? "expected a string key after ','"
                                     : "expected a string key or '}'");
  }
  key.position = position_at(pos_);
  key.text.clear();
  if (!parse_string(key.text)) return false;
  ptrdiff_t earlier = index.find(keys, key.text);
  if (earlier >= 0) {
    const JsonPosition& first = keys[static_cast<size_t>(earlier)].position;
    return fail(key.position.offset,
                fmt::format("duplicate key {} (first at line {}, column {})",
                            quote_for_message(key.text), first.line, first.column));
  }
  skip_whitespace();
  if (at_end() || peek() != ':') return fail_expected("expected ':' after an object key");
  ++pos_;
  return true;
}

bool JsonReader::parse_array(JsonValue& out, size_t depth) {
  if (!check_depth(depth)) return false;
  out.kind = JsonKind::array;
  ++pos_;  // '['
  skip_whitespace();
  if (!at_end() && peek() == ']') {
    ++pos_;
    return true;
  }
  for (;;) {
    JsonValue element;
    if (!parse_value(element, depth + 1)) return false;
    out.items.push_back(std::move(element));
    skip_whitespace();
    if (at_end() || (peek() != ',' && peek() != ']'))
      return fail_expected("expected ',' or ']' after an array element");
    if (text_[pos_++] == ']') return true;
    skip_whitespace();
    if (!at_end() && peek() == ']')
      return fail(pos_, "expected a value after ','; trailing commas are not allowed");
  }
}

bool JsonReader::parse_string(std::string& out) {
  string_start_ = pos_;
  ++pos_;  // '"'
  for (;;) {
    if (at_end()) return fail(string_start_, "unterminated string");
    if (value_too_large()) return false;
    unsigned char c = peek();
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (c == '\\') {
      if (!parse_escape(out)) return false;
    } else if (c < 0x20) {
      return fail(pos_,
                  fmt::format("control character U+{:04X} in a string; write it as an escape", c));
    } else if (c >= 0x80) {
      if (!parse_utf8(out)) return false;
    } else {
      size_t run = pos_;  // a run of plain ASCII, appended at once (at most 64 KiB at a time)
      const size_t run_end = std::min(text_.size(), pos_ + (size_t{1} << 16));
      while (run < run_end) {
        auto r = static_cast<unsigned char>(text_[run]);
        if (r == '"' || r == '\\' || r < 0x20 || r >= 0x80) break;
        ++run;
      }
      out.append(text_.substr(pos_, run - pos_));
      pos_ = run;
    }
  }
}

bool JsonReader::parse_utf8(std::string& out) {
  ensure(4);
  size_t length = utf8_prefix_length(text_.substr(pos_));
  if (length == 0)
    return fail(pos_, fmt::format("invalid UTF-8 byte 0x{:02X} in a string", peek()));
  out.append(text_.substr(pos_, length));
  pos_ += length;
  return true;
}

bool JsonReader::parse_escape(std::string& out) {
  size_t start = pos_;
  ++pos_;  // '\\'
  if (at_end()) return fail(string_start_, "unterminated string");
  char c = text_[pos_];
  switch (c) {
    case '"':
      out += '"';
      break;
    case '\\':
      out += '\\';
      break;
    case '/':
      out += '/';
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'u':
      return parse_unicode_escape(out);
    default:
      return fail(
          start, fmt::format(
                     "invalid escape: backslash followed by {}; JSON has \\\" \\\\ \\/ \\b \\f \\n "
                     "\\r \\t and \\uXXXX",
                     found_text()));
  }
  ++pos_;
  return true;
}

bool JsonReader::parse_unicode_escape(std::string& out) {
  size_t start = pos_ - 1;  // the backslash
  ++pos_;                   // 'u'
  uint32_t cp = 0;
  if (!parse_hex4(cp)) return false;
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return fail(
        start,
        fmt::format(
            "unpaired surrogate \\u{:04X} in a string: a low surrogate must follow a high one",
            cp));
  }
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t low = 0;
    ensure(2);
    bool paired = text_.substr(pos_, 2) == "\\u";
    if (paired) {
      pos_ += 2;
      if (!parse_hex4(low)) return false;
      paired = low >= 0xDC00 && low <= 0xDFFF;
    }
    if (!paired) {
      return fail(
          start,
          fmt::format(
              "unpaired surrogate \\u{:04X} in a string: a high surrogate must be followed by "
              "a \\u escape of a low surrogate (\\uDC00 to \\uDFFF)",
              cp));
    }
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  append_utf8(out, cp);
  return true;
}

bool JsonReader::parse_hex4(uint32_t& out) {
  out = 0;
  for (int i = 0; i < 4; ++i) {
    int digit = at_end() ? -1 : hex_value(peek());
    if (digit < 0)
      return fail(pos_, fmt::format("expected 4 hex digits after \\u, found {}", found_text()));
    out = out * 16 + static_cast<uint32_t>(digit);
    ++pos_;
  }
  return true;
}

bool JsonReader::parse_digits(std::string_view what) {
  if (at_end() || !is_digit(peek()))
    return fail(pos_, fmt::format("{}, found {}", what, found_text()));
  while (!at_end() && is_digit(peek())) ++pos_;
  return true;
}

bool JsonReader::parse_number(JsonValue& out) {
  size_t start = pos_;
  if (peek() == '-') ++pos_;
  if (!at_end() && peek() == '0') {
    ++pos_;
    if (!at_end() && is_digit(peek()))
      return fail(start, "leading zeros are not allowed in numbers");
  } else if (!parse_digits("expected a digit after '-'")) {
    return false;
  }
  if (!at_end() && peek() == '.') {
    ++pos_;
    if (!parse_digits("expected a digit after the decimal point")) return false;
  }
  if (!at_end() && (peek() == 'e' || peek() == 'E')) {
    ++pos_;
    if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
    if (!parse_digits("expected a digit in the exponent")) return false;
  }
  if (value_too_large()) return false;
  out.kind = JsonKind::number;
  out.text.assign(text_.substr(start, pos_ - start));
  return true;
}

bool JsonReader::parse_literal(JsonValue& out) {
  size_t start = pos_;
  while (!at_end() && (is_letter(peek()) || is_digit(peek()) || peek() == '_')) ++pos_;
  std::string_view word = text_.substr(start, pos_ - start);
  if (word == "true" || word == "false") {
    out.kind = JsonKind::boolean;
    out.boolean = word == "true";
    return true;
  }
  if (word == "null") {
    out.kind = JsonKind::null;
    return true;
  }
  return fail(start, fmt::format("unknown literal {}; JSON has true, false and null",
                                 quote_for_message(word)));
}

// ------------------------------------------------------------------ JsonReader: stepping

namespace {

// Runs one step of the reader; an allocation failure becomes `on_failure()`'s result.
template <typename Body, typename Fail>
auto guarded(Body&& body, Fail&& on_failure) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return on_failure();
  } catch (const std::length_error&) {
    return on_failure();
  }
}

}  // namespace

std::optional<JsonKind> JsonReader::peek_kind() {
  if (error_) return std::nullopt;
  skip_whitespace();
  if (at_end()) return std::nullopt;
  unsigned char c = peek();
  if (c == '{') return JsonKind::object;
  if (c == '[') return JsonKind::array;
  if (c == '"') return JsonKind::string;
  if (c == '-' || is_digit(c)) return JsonKind::number;
  if (c == 't' || c == 'f') return JsonKind::boolean;
  if (c == 'n') return JsonKind::null;
  return std::nullopt;
}

bool JsonReader::enter_object() {
  if (error_) return false;
  if (peek_kind() != JsonKind::object)
    return fail(pos_, fmt::format("expected an object, found {}", found_text()));
  if (!check_depth(frames_.size() + 1)) return false;
  ++pos_;
  return guarded(
      [&] {
        frames_.emplace_back().object = true;
        return true;
      },
      [&] { return fail(pos_, "out of memory"); });
}

bool JsonReader::enter_array() {
  if (error_) return false;
  if (peek_kind() != JsonKind::array)
    return fail(pos_, fmt::format("expected an array, found {}", found_text()));
  if (!check_depth(frames_.size() + 1)) return false;
  ++pos_;
  return guarded(
      [&] {
        frames_.emplace_back().object = false;
        return true;
      },
      [&] { return fail(pos_, "out of memory"); });
}

JsonStep JsonReader::next_member(JsonKey& key) {
  if (error_ || frames_.empty() || !frames_.back().object) {
    if (!error_) fail(pos_, "internal: next_member outside an object");
    return JsonStep::error;
  }
  Frame& frame = frames_.back();
  skip_whitespace();
  value_start_ = pos_;  // the key is bounded like a value
  in_token_ = true;
  struct EndToken {
    bool& in_token;
    ~EndToken() { in_token = false; }
  } end_token{in_token_};
  bool first = std::exchange(frame.first, false);
  if (!at_end() && peek() == '}' && first) {
    ++pos_;
    frames_.pop_back();
    return JsonStep::end;
  }
  if (!first) {
    if (at_end() || (peek() != ',' && peek() != '}')) {
      fail_expected("expected ',' or '}' after an object member");
      return JsonStep::error;
    }
    if (text_[pos_++] == '}') {
      frames_.pop_back();
      return JsonStep::end;
    }
  }
  return guarded(
      [&] {
        if (!parse_member_key(frame.keys, frame.index, !first, key)) return JsonStep::error;
        frame.keys.push_back(key);
        frame.index.add(frame.keys);
        return JsonStep::item;
      },
      [&] {
        fail(pos_, "out of memory");
        return JsonStep::error;
      });
}

JsonStep JsonReader::next_element() {
  if (error_ || frames_.empty() || frames_.back().object) {
    if (!error_) fail(pos_, "internal: next_element outside an array");
    return JsonStep::error;
  }
  Frame& frame = frames_.back();
  skip_whitespace();
  value_start_ = pos_;  // the key is bounded like a value
  bool first = std::exchange(frame.first, false);
  if (!first) {
    if (at_end() || (peek() != ',' && peek() != ']')) {
      fail_expected("expected ',' or ']' after an array element");
      return JsonStep::error;
    }
    if (text_[pos_++] == ',') {
      skip_whitespace();
      if (!at_end() && peek() == ']') {
        fail(pos_, "expected a value after ','; trailing commas are not allowed");
        return JsonStep::error;
      }
      return JsonStep::item;
    }
    frames_.pop_back();
    return JsonStep::end;
  }
  if (!at_end() && peek() == ']') {
    ++pos_;
    frames_.pop_back();
    return JsonStep::end;
  }
  return JsonStep::item;
}

bool JsonReader::read_value(JsonValue& out) {
  if (error_) return false;
  return guarded(
      [&] {
        out = JsonValue{};
        value_start_ = pos_;
        in_token_ = true;
        // The bound holds for every value, whatever it ends with (a number's digits are not
        // checked as they are read).
        const bool ok = parse_value(out, frames_.size() + 1) && !value_too_large();
        in_token_ = false;
        return ok;
      },
      [&] {
        in_token_ = false;
        return fail(pos_, "out of memory");
      });
}

std::string_view JsonReader::lookahead(size_t n) {
  if (error_) return {};
  skip_whitespace();
  ensure(n);
  return text_.substr(pos_, std::min(n, text_.size() - pos_));
}

bool JsonReader::fits_limits(size_t bytes, size_t depth) const {
  return !error_ && bytes <= limits_.max_value_bytes && frames_.size() + depth <= limits_.max_depth;
}

bool JsonReader::skip_value() {
  JsonValue ignored;
  return read_value(ignored);
}

bool JsonReader::finish() {
  if (error_) return false;
  if (!frames_.empty()) return fail(pos_, "internal: finish inside a container");
  skip_whitespace();
  if (at_end()) return true;
  return fail(pos_,
              fmt::format("expected end of input after the JSON value, found {}", found_text()));
}

support::Expected<JsonValue> parse_json(std::string_view text, const JsonLimits& limits) {
  JsonValue value;
  JsonReader reader(text, limits);
  if (reader.read_value(value) && reader.finish()) return value;
  if (reader.error()) return *reader.error();
  return support::Error{support::ErrorKind::invalid, "malformed JSON", reader.position()};
}

}  // namespace gov::trace
