// Classification and readable escapes of characters a terminal would act on or hide.
#include "compiler/support/terminal_text.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>


namespace gov {
namespace {

struct NamedCodePoint {
  uint32_t value;
  std::string_view name;
};

// Sorted by code point: the characters gov names in messages. Names are Unicode's.
constexpr std::array kNames = {
    NamedCodePoint{0x0000, "NULL"},
    NamedCodePoint{0x0009, "CHARACTER TABULATION"},
    NamedCodePoint{0x000A, "LINE FEED"},
    NamedCodePoint{0x000D, "CARRIAGE RETURN"},
    NamedCodePoint{0x001B, "ESCAPE"},
    NamedCodePoint{0x007F, "DELETE"},
    NamedCodePoint{0x00A0, "NO-BREAK SPACE"},
    NamedCodePoint{0x00AD, "SOFT HYPHEN"},
    NamedCodePoint{0x034F, "COMBINING GRAPHEME JOINER"},
    NamedCodePoint{0x061C, "ARABIC LETTER MARK"},
    NamedCodePoint{0x115F, "HANGUL CHOSEONG FILLER"},
    NamedCodePoint{0x1160, "HANGUL JUNGSEONG FILLER"},
    NamedCodePoint{0x1680, "OGHAM SPACE MARK"},
    NamedCodePoint{0x180E, "MONGOLIAN VOWEL SEPARATOR"},
    NamedCodePoint{0x2000, "EN QUAD"},
    NamedCodePoint{0x2001, "EM QUAD"},
    NamedCodePoint{0x2002, "EN SPACE"},
    NamedCodePoint{0x2003, "EM SPACE"},
    NamedCodePoint{0x2004, "THREE-PER-EM SPACE"},
    NamedCodePoint{0x2005, "FOUR-PER-EM SPACE"},
    NamedCodePoint{0x2006, "SIX-PER-EM SPACE"},
    NamedCodePoint{0x2007, "FIGURE SPACE"},
    NamedCodePoint{0x2008, "PUNCTUATION SPACE"},
    NamedCodePoint{0x2009, "THIN SPACE"},
    NamedCodePoint{0x200A, "HAIR SPACE"},
    NamedCodePoint{0x200B, "ZERO WIDTH SPACE"},
    NamedCodePoint{0x200C, "ZERO WIDTH NON-JOINER"},
    NamedCodePoint{0x200D, "ZERO WIDTH JOINER"},
    NamedCodePoint{0x200E, "LEFT-TO-RIGHT MARK"},
    NamedCodePoint{0x200F, "RIGHT-TO-LEFT MARK"},
    NamedCodePoint{0x2028, "LINE SEPARATOR"},
    NamedCodePoint{0x2029, "PARAGRAPH SEPARATOR"},
    NamedCodePoint{0x202A, "LEFT-TO-RIGHT EMBEDDING"},
    NamedCodePoint{0x202B, "RIGHT-TO-LEFT EMBEDDING"},
    NamedCodePoint{0x202C, "POP DIRECTIONAL FORMATTING"},
    NamedCodePoint{0x202D, "LEFT-TO-RIGHT OVERRIDE"},
    NamedCodePoint{0x202E, "RIGHT-TO-LEFT OVERRIDE"},
    NamedCodePoint{0x202F, "NARROW NO-BREAK SPACE"},
    NamedCodePoint{0x205F, "MEDIUM MATHEMATICAL SPACE"},
    NamedCodePoint{0x2060, "WORD JOINER"},
    NamedCodePoint{0x2061, "FUNCTION APPLICATION"},
    NamedCodePoint{0x2062, "INVISIBLE TIMES"},
    NamedCodePoint{0x2063, "INVISIBLE SEPARATOR"},
    NamedCodePoint{0x2064, "INVISIBLE PLUS"},
    NamedCodePoint{0x2066, "LEFT-TO-RIGHT ISOLATE"},
    NamedCodePoint{0x2067, "RIGHT-TO-LEFT ISOLATE"},
    NamedCodePoint{0x2068, "FIRST STRONG ISOLATE"},
    NamedCodePoint{0x2069, "POP DIRECTIONAL ISOLATE"},
    NamedCodePoint{0x206A, "INHIBIT SYMMETRIC SWAPPING"},
    NamedCodePoint{0x206B, "ACTIVATE SYMMETRIC SWAPPING"},
    NamedCodePoint{0x206C, "INHIBIT ARABIC FORM SHAPING"},
    NamedCodePoint{0x206D, "ACTIVATE ARABIC FORM SHAPING"},
    NamedCodePoint{0x206E, "NATIONAL DIGIT SHAPES"},
    NamedCodePoint{0x206F, "NOMINAL DIGIT SHAPES"},
    NamedCodePoint{0x3000, "IDEOGRAPHIC SPACE"},
    NamedCodePoint{0x3164, "HANGUL FILLER"},
    NamedCodePoint{0xFEFF, "ZERO WIDTH NO-BREAK SPACE"},
    NamedCodePoint{0xFFA0, "HALFWIDTH HANGUL FILLER"},
    NamedCodePoint{0xFFF9, "INTERLINEAR ANNOTATION ANCHOR"},
    NamedCodePoint{0xFFFA, "INTERLINEAR ANNOTATION SEPARATOR"},
    NamedCodePoint{0xFFFB, "INTERLINEAR ANNOTATION TERMINATOR"},
};

std::string_view name_of(uint32_t c) {
  const auto it = std::lower_bound(kNames.begin(), kNames.end(), c,
                                   [](const NamedCodePoint& entry, uint32_t value) { return entry.value < value; });
  if (it == kNames.end() || it->value != c) return {};
  return it->name;
}

bool is_control(uint32_t c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F); }

// Copies `text`, escaping what is unsafe; with `path`, backslashes are doubled too.
std::string escape(std::string_view text, bool path) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const CodePoint cp = decode_code_point(text, i);
    if (!cp.valid) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
    } else if (is_unsafe_for_terminal(cp.value)) {
      out += escape_code_point(cp.value);
    } else if (path && cp.value == '\\') {
      out += "\\\\";
    } else {
      out += text.substr(i, cp.length);
    }
    i += cp.length;
  }
  return out;
}

}  // namespace

bool is_bidi_control(uint32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

bool is_invisible(uint32_t c) {
  if (c < 0xA0 || is_bidi_control(c)) return false;
  // Tag characters (U+E0000-U+E007F) are invisible and can smuggle ASCII past a reader.
  if (c >= 0xE0000 && c <= 0xE007F) return true;
  return !name_of(c).empty();
}

bool is_unsafe_for_terminal(uint32_t c) { return is_control(c) || is_bidi_control(c) || is_invisible(c); }

std::string describe_code_point(uint32_t c) {
  const std::string_view name = name_of(c);
  if (name.empty()) return fmt::format("U+{:04X}", c);
  return fmt::format("U+{:04X} {}", c, name);
}

std::string escape_code_point(uint32_t c) {
  switch (c) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  if (c < 0x80) return fmt::format("\\x{:02x}", c);
  return fmt::format("\\u{{{:x}}}", c);
}

std::string escape_for_terminal(std::string_view text) { return escape(text, /*path=*/false); }

std::string escape_lines_for_terminal(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    out += escape_for_terminal(text.substr(0, end));
    if (end == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(end + 1);
  }
  return out;
}

std::string display_path(std::string_view path) { return escape(path, /*path=*/true); }

}  // namespace gov
