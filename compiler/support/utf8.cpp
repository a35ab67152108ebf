// UTF-8: decoding, validation, encoding.
#include "compiler/support/utf8.hpp"

namespace gov {

int utf8_sequence_length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

size_t find_invalid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int length = 0;
    uint32_t code = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
      code = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      code = c & 0x07;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (int k = 1; k < length; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      code = (code << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values above U+10FFFF are not UTF-8.
    if ((length == 3 && code < 0x800) || (length == 4 && (code < 0x10000 || code > 0x10FFFF)) ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

size_t utf8_prefix_length(std::string_view text) {
  if (text.empty()) return 0;
  auto c0 = static_cast<unsigned char>(text[0]);
  if (c0 < 0x80) return 1;
  size_t length = c0 < 0xC2 ? 0 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : c0 < 0xF5 ? 4 : 0;
  if (length == 0 || text.size() < length) return 0;
  // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
  unsigned char low = c0 == 0xE0 ? 0xA0 : c0 == 0xF0 ? 0x90 : 0x80;
  unsigned char high = c0 == 0xED ? 0x9F : c0 == 0xF4 ? 0x8F : 0xBF;
  auto c1 = static_cast<unsigned char>(text[1]);
  if (c1 < low || c1 > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (!is_utf8_continuation(static_cast<unsigned char>(text[i]))) return 0;
  }
  return length;
}

CodePoint decode_code_point(std::string_view text, size_t offset) {
  const auto lead = static_cast<unsigned char>(text[offset]);
  if (lead < 0x80) return {lead, 1, true};
  const auto length = static_cast<size_t>(utf8_sequence_length(lead));
  const std::string_view sequence = text.substr(offset, length);
  if (length == 1 || sequence.size() != length || find_invalid_utf8(sequence) != std::string_view::npos) {
    return {lead, 1, false};
  }
  uint32_t value = lead & (0xFFu >> (length + 1));
  for (size_t k = 1; k < length; ++k) value = (value << 6) | (static_cast<unsigned char>(sequence[k]) & 0x3F);
  return {value, static_cast<uint32_t>(length), true};
}

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

}  // namespace gov
