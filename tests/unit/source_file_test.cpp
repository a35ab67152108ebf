// SourceFile: line table, UTF-8 columns, CRLF, and the UTF-8 validator.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "compiler/diagnostics/source_file.hpp"

using gov::SourceFile;

TEST_CASE("line and column of byte offsets, counting code points", "[source]") {
  SourceFile file("f.gov", "ab\nçé x\r\nlast");
  CHECK(file.line_count() == 3);
  CHECK(file.line_column(0).line == 1);
  CHECK(file.line_column(4).line == 2);
  CHECK(file.line_column(3).column == 1);
  CHECK(file.line_column(8).column == 4);  // after "çé " (5 bytes, 3 code points)
  CHECK(file.line_text(2) == "çé x");      // CR stripped
  CHECK(file.line_text(3) == "last");
  CHECK(file.line_column(1000).line == 3);  // past the end clamps
}

TEST_CASE("columns on long lines, from the checkpoints, are the code points counted from the line's start", "[source]") {
  // Three long lines of mixed widths (1- to 4-byte sequences, and bytes that are no valid
  // UTF-8, which count one column each), around lines shorter than a checkpoint's stride.
  std::string text = "short\n";
  const std::string pieces[] = {"a", "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x9A\x80", "\xFF", "\xE6\x97"};
  for (int line = 0; line < 3; ++line) {
    for (int i = 0; i < 9000; ++i) text += pieces[(i * 7 + line) % 6];
    text += line == 1 ? "\r\n" : "\n";
    text += "x\n";
  }
  const SourceFile file("long.gov", text);
  // The reference: walk from the line's start as a plain count would, at every offset.
  uint32_t line = 1;
  uint32_t column = 1;
  uint32_t next = 0;  // the next offset a step from the line's start lands on
  size_t checked = 0;
  for (uint32_t offset = 0; offset <= text.size(); ++offset) {
    if (offset > 0 && text[offset - 1] == '\n') {
      ++line;
      column = 1;
      next = offset;
    }
    while (next < offset) {  // an offset inside a sequence counts the sequence's column once past it
      next += static_cast<uint32_t>(std::max(1, gov::utf8_sequence_length(static_cast<unsigned char>(text[next]))));
      ++column;
    }
    const gov::LineColumn got = file.line_column(offset);
    if (got.line != line || got.column != column) {
      INFO("offset " << offset);
      CHECK(got.line == line);
      CHECK(got.column == column);
      break;
    }
    ++checked;
  }
  CHECK(checked == text.size() + 1);
}

TEST_CASE("find_invalid_utf8 accepts UTF-8 and finds the first bad byte", "[source]") {
  CHECK(gov::find_invalid_utf8("plain ascii") == std::string_view::npos);
  CHECK(gov::find_invalid_utf8("ünïcödé 日本 🚀") == std::string_view::npos);
  CHECK(gov::find_invalid_utf8("ab\xFF") == 2);
  CHECK(gov::find_invalid_utf8("\xC3") == 0);          // truncated
  CHECK(gov::find_invalid_utf8("x\xE0\x80\x80") == 1);  // overlong
  CHECK(gov::find_invalid_utf8("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
}
