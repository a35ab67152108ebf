#include "tools/lsp/positions.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace gov::lsp {

LineIndex::LineIndex(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (uint32_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts_.push_back(i + 1);
  }
}

namespace {

/// Length in bytes of the UTF-8 sequence starting with `lead` (1 for invalid bytes).
uint32_t sequence_length(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC2) return 2;
  return 1;
}

}  // namespace

Position LineIndex::position(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  const auto after = std::upper_bound(starts_.begin(), starts_.end(), offset);
  const uint32_t line = static_cast<uint32_t>(after - starts_.begin()) - 1;
  uint32_t character = 0;
  for (uint32_t i = starts_[line]; i < offset;) {
    const uint32_t length = sequence_length(static_cast<unsigned char>(text_[i]));
    if (i + length > offset) break;
    character += length == 4 ? 2 : 1;  // outside the BMP: a surrogate pair
    i += length;
  }
  return {line, character};
}

uint32_t LineIndex::offset(Position position) const {
  if (position.line >= starts_.size()) return static_cast<uint32_t>(text_.size());
  const uint32_t line_end = position.line + 1 < starts_.size() ? starts_[position.line + 1] - 1
                                                               : static_cast<uint32_t>(text_.size());
  uint32_t i = starts_[position.line], character = 0;
  while (i < line_end && character < position.character) {
    const uint32_t length = sequence_length(static_cast<unsigned char>(text_[i]));
    character += length == 4 ? 2 : 1;
    i = std::min(i + length, line_end);
  }
  if (i > starts_[position.line] && i == line_end && i > 0 && text_[i - 1] == '\r') --i;
  return i;
}

std::string path_of_uri(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (!uri.starts_with(kScheme)) return {};
  uri.remove_prefix(kScheme.size());
  if (uri.starts_with("localhost/")) uri.remove_prefix(std::string_view("localhost").size());
  if (!uri.starts_with('/')) return {};
  std::string out;
  for (size_t i = 0; i < uri.size(); ++i) {
    const char c = uri[i];
    if (c == '%') {
      auto hex = [](char h) -> int {
        if (h >= '0' && h <= '9') return h - '0';
        if (h >= 'a' && h <= 'f') return h - 'a' + 10;
        if (h >= 'A' && h <= 'F') return h - 'A' + 10;
        return -1;
      };
      if (i + 2 >= uri.size()) return {};  // a malformed escape
      const int high = hex(uri[i + 1]), low = hex(uri[i + 2]);
      if (high < 0 || low < 0) return {};
      const char decoded = static_cast<char>(high * 16 + low);
      if (decoded == '\0') return {};  // a NUL in a path names no file
      out += decoded;
      i += 2;
      continue;
    }
    if (c == '?' || c == '#') break;
    out += c;
  }
  return out;
}

std::string uri_of_path(std::string_view path) {
  std::string out = "file://";
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    const bool plain = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '/' ||
                       c == '-' || c == '_' || c == '.' || c == '~';
    out += plain ? std::string(1, c) : fmt::format("%{:02X}", u);
  }
  return out;
}

}  // namespace gov::lsp
