// JSON strings and documents.
#include "compiler/support/json_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compiler/support/assert.hpp"
#include "compiler/support/swar.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/support/utf8.hpp"

namespace gov {
namespace {

/// A byte a JSON string holds as it is: printable ASCII but '"' and '\\'.
bool is_plain(unsigned char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

/// The end of the run of plain bytes of `text` from `at`. Sixteen bytes at a time with SSE2 (the
/// position of the first byte that is not plain comes from the comparison's mask), then eight
/// (SWAR), then one. Most text is one run.
size_t plain_run_end(std::string_view text, size_t at) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i del = _mm_set1_epi8(0x7F);
  for (; at + 16 <= text.size(); at += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + at));
    // The comparison is signed: bytes 0x80 and above are negative, hence below 0x20 too.
    const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                                         _mm_or_si128(_mm_cmplt_epi8(bytes, space), _mm_cmpeq_epi8(bytes, del)));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return at + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; at + 8 <= text.size(); at += 8) {
    const uint64_t word = swar::load(text, at);
    if (swar::any_below(word, 0x20) | swar::any_high(word) | swar::any_equal(word, 0x7F) |
        swar::any_equal(word, '"') | swar::any_equal(word, '\\'))
      break;
  }
  while (at < text.size() && is_plain(static_cast<unsigned char>(text[at]))) ++at;
  return at;
}

}  // namespace

namespace {

/// A code point as a JSON `\u` escape of four lowercase hexadecimal digits, or above U+FFFF as
/// a surrogate pair of two such escapes: at most 12 bytes.
char* write_unicode_escape(char* p, uint32_t c) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto unit = [&p](uint32_t u) {
    const char escape[6] = {'\\', 'u', kHex[(u >> 12) & 15], kHex[(u >> 8) & 15], kHex[(u >> 4) & 15], kHex[u & 15]};
    std::memcpy(p, escape, sizeof escape);
    p += sizeof escape;
  };
  if (c > 0xFFFF) {
    const uint32_t v = c - 0x10000;
    unit(0xD800 + (v >> 10));
    unit(0xDC00 + (v & 0x3FF));
  } else {
    unit(c);
  }
  return p;
}

/// The character at `i` of `text`, which is not ASCII, written at `p` as a JSON string holds it:
/// U+FFFD for a byte that starts no UTF-8 sequence, a `\u` escape for a code point that
/// JsonEscapes::unsafe hides (with those escapes), else as it is. Returns the bytes it took,
/// having written at most 6 for each.
size_t write_non_ascii(char*& p, std::string_view text, size_t i, JsonEscapes escapes) {
  const size_t length = utf8_prefix_length(text.substr(i));
  if (length == 0) {
    std::memcpy(p, kReplacementCharacter.data(), kReplacementCharacter.size());
    p += kReplacementCharacter.size();
    return 1;
  }
  const uint32_t c_point = escapes == JsonEscapes::unsafe ? decode_code_point(text, i).value : 0;
  if (escapes == JsonEscapes::unsafe && is_unsafe_for_terminal(c_point)) {
    p = write_unicode_escape(p, c_point);
  } else {
    std::memcpy(p, text.data() + i, length);
    p += length;
  }
  return length;
}

/// Escapes `text` from `i` at `p`, until `limit` (or the end) is reached; a code point that
/// starts before `limit` is written whole, so the input consumed may pass `limit` by up to three
/// bytes. Writes at most 6 bytes per input byte consumed (kJsonEscapeGrowth): an escaped control
/// is 6 bytes for 1, U+FFFD 3 for 1, a surrogate pair 12 for 4. Returns the input position reached.
size_t escape_json(char*& p, std::string_view text, size_t i, size_t limit, JsonEscapes escapes) {
  const std::string_view window = text.substr(0, std::min(limit, text.size()));
  while (i < window.size()) {
    // A run of printable ASCII that needs no escape is copied at once (most text is one run).
    const size_t run = plain_run_end(window, i);
    if (run > i) {
      std::memcpy(p, text.data() + i, run - i);
      p += run - i;
      i = run;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      i += write_non_ascii(p, text, i, escapes);
      continue;
    }
    char short_escape = 0;
    switch (c) {
      case '"': short_escape = '"'; break;
      case '\\': short_escape = '\\'; break;
      case '\n': short_escape = 'n'; break;
      case '\r': short_escape = 'r'; break;
      case '\t': short_escape = 't'; break;
      case '\b': short_escape = 'b'; break;
      case '\f': short_escape = 'f'; break;
      default: break;
    }
    if (short_escape != 0) {
      *p++ = '\\';
      *p++ = short_escape;
    } else if (c < 0x20 || (c == 0x7F && escapes == JsonEscapes::unsafe)) {
      p = write_unicode_escape(p, c);
    } else {
      *p++ = static_cast<char>(c);
    }
    ++i;
  }
  return i;
}

/// Input bytes escaped per step of append_json_string: the room it sets aside stays small
/// whatever the text's size.
constexpr size_t kAppendChunk = 4096;

}  // namespace

char* write_json_string(char* out, std::string_view text, JsonEscapes escapes) {
  *out++ = '"';
  escape_json(out, text, 0, text.size(), escapes);
  *out++ = '"';
  return out;
}

void append_json_string(std::string& out, std::string_view text, JsonEscapes escapes) {
  out += '"';
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = out.size();
    // Room for the chunk, and for the last code point passing its end by up to three bytes.
    out.resize(start + kJsonEscapeGrowth * (std::min(kAppendChunk, text.size() - i) + 3));
    char* p = out.data() + start;
    i = escape_json(p, text, i, i + kAppendChunk, escapes);
    out.resize(static_cast<size_t>(p - out.data()));
  }
  out += '"';
}

std::string json_quote(std::string_view text, JsonEscapes escapes) {
  std::string out;
  append_json_string(out, text, escapes);
  return out;
}

void JsonWriter::key(std::string_view name) {
  separate();
  append_json_string(out_, name, JsonEscapes::unsafe);
  out_ += indented_ ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::string(std::string_view text) {
  separate();
  append_json_string(out_, text, JsonEscapes::unsafe);
}

void JsonWriter::embedded(std::string_view json) {
  separate();
  size_t i = 0;
  while (i < json.size()) {
    const auto c = static_cast<unsigned char>(json[i]);
    if (c < 0x7F) {
      const size_t start = i;
      while (i < json.size() && static_cast<unsigned char>(json[i]) < 0x7F) ++i;
      out_.append(json.substr(start, i - start));
      continue;
    }
    // DEL or a non-ASCII character: only inside a string, escaped as string() escapes it.
    char written[4 * kJsonEscapeGrowth];
    char* p = written;
    if (c == 0x7F) {
      p = write_unicode_escape(p, c);
      ++i;
    } else {
      i += write_non_ascii(p, json, i, JsonEscapes::unsafe);
    }
    out_.append(written, static_cast<size_t>(p - written));
  }
}

void JsonWriter::number(int64_t value) {
  separate();
  out_ += fmt::format("{}", value);
}

void JsonWriter::number(uint64_t value) {
  separate();
  out_ += fmt::format("{}", value);
}

namespace {

/// RFC 8259's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view text) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < text.size() && text[i] == '.' && (++i, !digits())) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

}  // namespace

void JsonWriter::decimal(std::string_view text) {
  GOV_ASSERT(is_json_number(text), "JsonWriter::decimal given text that is not a JSON number");
  separate();
  out_ += text;
}

void JsonWriter::boolean(bool value) {
  separate();
  out_ += value ? "true" : "false";
}

void JsonWriter::null() {
  separate();
  out_ += "null";
}

std::string JsonWriter::finish() {
  GOV_ASSERT(nonempty_.empty(), "unbalanced JSON nesting");
  out_ += '\n';
  return std::move(out_);
}

// Writes what comes before a value: nothing after a key, else a comma between items and, when
// indented, a line break.
void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (nonempty_.empty()) return;  // the top-level value
  if (nonempty_.back()) out_ += ',';
  nonempty_.back() = true;
  newline();
}

void JsonWriter::open(char bracket) {
  separate();
  out_ += bracket;
  nonempty_.push_back(false);
}

void JsonWriter::close(char bracket) {
  GOV_ASSERT(!nonempty_.empty(), "closing a JSON container that is not open");
  const bool had_items = nonempty_.back();
  nonempty_.pop_back();
  if (had_items) newline();
  out_ += bracket;
}

void JsonWriter::newline() {
  if (!indented_) return;
  out_ += '\n';
  out_.append(2 * nonempty_.size(), ' ');
}

}  // namespace gov
