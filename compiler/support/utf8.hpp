// UTF-8 helpers shared by the grammar, the diagnostics, the JSON reader and writer and the
// rule-message renderer: one definition of what is valid UTF-8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gov {

/// U+FFFD, which replaces every byte that is not UTF-8 in text gov writes.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

/// Whether `c` is a continuation byte (10xxxxxx): never the start of a code point.
inline constexpr bool is_utf8_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/// Byte length of the UTF-8 sequence starting with lead byte `c` (1 for invalid leads).
int utf8_sequence_length(unsigned char c);
/// Offset of the first byte that is not valid UTF-8, or npos when the text is valid.
size_t find_invalid_utf8(std::string_view text);
/// Length of the valid UTF-8 sequence at the start of `text`, or 0 when it is not valid
/// (truncated, overlong, a surrogate, above U+10FFFF, a stray continuation byte).
size_t utf8_prefix_length(std::string_view text);

/// One code point decoded from UTF-8. A byte that does not start a valid sequence decodes
/// as itself with `length` 1 and `valid` false.
struct CodePoint {
  uint32_t value = 0;
  uint32_t length = 1;
  bool valid = true;
};

/// Decodes the code point at `offset` of `text` (`offset < text.size()`).
CodePoint decode_code_point(std::string_view text, size_t offset);

/// Appends `code_point` (at most U+10FFFF, not a surrogate: the caller checks) as UTF-8.
void append_utf8(std::string& out, uint32_t code_point);

/// The largest offset <= `offset` (and <= text.size()) that does not fall inside a UTF-8
/// sequence: where `text` may be cut without splitting a code point.
inline size_t utf8_boundary_at_or_before(std::string_view text, size_t offset) {
  if (offset >= text.size()) return text.size();
  while (offset > 0 && is_utf8_continuation(static_cast<unsigned char>(text[offset]))) --offset;
  return offset;
}

/// Calls visit(sequence, code_point) for every code point of `text`, in order. Each byte that
/// does not start a valid UTF-8 sequence is visited as U+FFFD (kReplacementCharacter), so every
/// output built from the visited sequences is valid UTF-8 whatever the input.
template <typename Visit>
void for_each_code_point(std::string_view text, Visit visit) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_prefix_length(text.substr(i));
    if (length == 0) {
      visit(kReplacementCharacter, uint32_t{0xFFFD});
      ++i;
      continue;
    }
    visit(text.substr(i, length), decode_code_point(text, i).value);
    i += length;
  }
}

}  // namespace gov
