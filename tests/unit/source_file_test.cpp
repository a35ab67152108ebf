// SourceFile: line table, UTF-8 columns, CRLF, and the UTF-8 validator.
#include <catch2/catch.hpp>

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

TEST_CASE("find_invalid_utf8 accepts UTF-8 and finds the first bad byte", "[source]") {
  CHECK(gov::find_invalid_utf8("plain ascii") == std::string_view::npos);
  CHECK(gov::find_invalid_utf8("ünïcödé 日本 🚀") == std::string_view::npos);
  CHECK(gov::find_invalid_utf8("ab\xFF") == 2);
  CHECK(gov::find_invalid_utf8("\xC3") == 0);          // truncated
  CHECK(gov::find_invalid_utf8("x\xE0\x80\x80") == 1);  // overlong
  CHECK(gov::find_invalid_utf8("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
}
