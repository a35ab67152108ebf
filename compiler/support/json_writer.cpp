// JSON strings and documents.
#include "compiler/support/json_writer.hpp"

#include <fmt/format.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compiler/support/assert.hpp"
#include "compiler/support/swar.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/support/utf8.hpp"

namespace gov {
namespace {

void append_unicode_escape(std::string& out, uint32_t c) {
  if (c > 0xFFFF) {
    const uint32_t v = c - 0x10000;
    out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
  } else {
    out += fmt::format("\\u{:04x}", c);
  }
}

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

void append_json_string(std::string& out, std::string_view text, JsonEscapes escapes) {
  out += '"';
  size_t i = 0;
  while (i < text.size()) {
    // A run of printable ASCII that needs no escape goes in one append (most text is one run).
    const size_t run = plain_run_end(text, i);
    if (run > i) {
      out.append(text.data() + i, run - i);
      i = run;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8_prefix_length(text.substr(i));
      if (length == 0) {
        out += kReplacementCharacter;
        ++i;
        continue;
      }
      const uint32_t c_point = escapes == JsonEscapes::unsafe ? decode_code_point(text, i).value : 0;
      if (escapes == JsonEscapes::unsafe && is_unsafe_for_terminal(c_point)) {
        append_unicode_escape(out, c_point);
      } else {
        out.append(text.substr(i, length));
      }
      i += length;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (c == 0x7F && escapes == JsonEscapes::unsafe)) {
          append_unicode_escape(out, c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
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
