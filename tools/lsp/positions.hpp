// LSP positions (0-based line, character in UTF-16 code units, as the protocol's default
// encoding counts) and the byte offsets gov's spans use, both ways, on one text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gov::lsp {

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;  // UTF-16 code units
  friend bool operator==(const Position&, const Position&) = default;
};

/// Line starts of a text, for conversions. The text must outlive it.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  /// The position of byte `offset` (clamped to the text; inside a UTF-8 sequence counts as
  /// its start).
  Position position(uint32_t offset) const;
  /// The byte offset of `position` (a line past the end: the end; a character past the line's
  /// end: the line's end, before its line break).
  uint32_t offset(Position position) const;

 private:
  std::string_view text_;
  std::vector<uint32_t> starts_;
};

/// `file:///a/b%20c.gov` → `/a/b c.gov`; empty when the URI is not a file URI or not absolute.
std::string path_of_uri(std::string_view uri);
/// `/a/b c.gov` → `file:///a/b%20c.gov`.
std::string uri_of_path(std::string_view path);

}  // namespace gov::lsp
