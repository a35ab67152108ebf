// The strict JSON reader and the string escaper: values, positions, errors, limits, UTF-8.
#include "runtime/trace/json.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <fmt/format.h>
#include <string>
#include <utility>
#include <vector>

using gov::trace::JsonKey;
using gov::trace::JsonKind;
using gov::trace::JsonLimits;
using gov::trace::JsonReader;
using gov::trace::JsonStep;
using gov::trace::JsonValue;
using gov::trace::NumberStatus;

namespace {

JsonValue parsed(const std::string& text) {
  auto result = gov::trace::parse_json(text);
  INFO(text << " -> " << (result.ok() ? "ok" : result.error().message));
  REQUIRE(result.ok());
  return std::move(result).value();
}

std::string error_of(const std::string& text, const JsonLimits& limits = {}) {
  auto result = gov::trace::parse_json(text, limits);
  INFO(text);
  REQUIRE_FALSE(result.ok());
  // Every JSON error is `invalid` and carries its position, which the message spells.
  const gov::support::Error& error = result.error();
  CHECK(error.kind == gov::support::ErrorKind::invalid);
  REQUIRE(error.position);
  CHECK(error.message.starts_with(fmt::format("line {}, column {}: ", error.position->line, error.position->column)));
  return error.message;
}

std::string string_value(const std::string& text) {
  JsonValue value = parsed(text);
  REQUIRE(value.kind == JsonKind::string);
  return value.text;
}

NumberStatus status_of(const std::string& number, int64_t factor) {
  return parsed(number).to_units(factor).status;
}

int64_t units_of(const std::string& number, int64_t factor) {
  auto result = parsed(number).to_units(factor);
  INFO(number << " x " << factor);
  REQUIRE(result.status == NumberStatus::ok);
  return result.value;
}

}  // namespace

TEST_CASE("json: scalars, arrays and objects in input order", "[trace][json]") {
  CHECK(parsed("null").kind == JsonKind::null);
  CHECK(parsed(" true ").boolean);
  CHECK_FALSE(parsed("false").boolean);
  CHECK(parsed("-12.50e+3").text == "-12.50e+3");  // numbers keep their text
  JsonValue object = parsed(R"({"z": 1, "a": [true, null, "x"], "m": {}})");
  REQUIRE(object.kind == JsonKind::object);
  REQUIRE(object.keys.size() == 3);
  CHECK(object.keys[0].text == "z");
  CHECK(object.keys[1].text == "a");
  CHECK(object.keys[2].text == "m");
  CHECK(object.find("a")->items.size() == 3);
  CHECK(object.find("a")->items[2].text == "x");
  CHECK(object.find("m")->kind == JsonKind::object);
  CHECK(object.find("nope") == nullptr);
  CHECK(parsed("[]").items.empty());
}

TEST_CASE("json: every value has its byte offset, line and column", "[trace][json]") {
  JsonValue value = parsed("{\n  \"a\": [1,\n    \"日本\", 2]\n}");
  const JsonValue& array = *value.find("a");
  CHECK(value.position.line == 1);
  CHECK(array.position.line == 2);
  CHECK(array.position.column == 8);
  CHECK(array.position.offset == 9);
  CHECK(value.keys[0].position.column == 3);
  CHECK(array.items[1].position.line == 3);
  CHECK(array.items[1].position.column == 5);
  CHECK(array.items[2].position.column == 11);  // columns count code points, not bytes
  CHECK(array.items[2].position.offset == 27);
}

TEST_CASE("json: string escapes and u-escapes with surrogate pairs", "[trace][json]") {
  CHECK(string_value(R"("\" \\ \/ \b \f \n \r \t")") == "\" \\ / \b \f \n \r \t");
  CHECK(string_value(R"("\u0041\u00e9\u65E5")") == "A\xC3\xA9\xE6\x97\xA5");
  CHECK(string_value(R"("\ud83d\ude80")") == "\xF0\x9F\x9A\x80");  // U+1F680 from a pair
  CHECK(string_value(R"("\uDBFF\uDFFF")") == "\xF4\x8F\xBF\xBF");  // U+10FFFF
  CHECK(string_value(R"("a\u0000b")") == std::string("a\0b", 3));
  CHECK(string_value("\"ünïcödé 日本 🚀\"") == "ünïcödé 日本 🚀");
}

TEST_CASE("json: bad escapes and unpaired surrogates are errors", "[trace][json]") {
  CHECK(
      error_of(R"("ab\x")") ==
      R"(line 1, column 4: invalid escape: backslash followed by 'x'; JSON has \" \\ \/ \b \f \n \r \t and \uXXXX)");
  CHECK(error_of(R"("\u12G4")") == "line 1, column 6: expected 4 hex digits after \\u, found 'G'");
  CHECK(error_of(R"("\uD800")") ==
        "line 1, column 2: unpaired surrogate \\uD800 in a string: a high surrogate must be "
        "followed by a \\u "
        "escape of a low surrogate (\\uDC00 to \\uDFFF)");
  CHECK(error_of(R"("\uD800\u0041")").starts_with("line 1, column 2: unpaired surrogate \\uD800"));
  CHECK(error_of(R"("x\uDC00")") ==
        "line 1, column 3: unpaired surrogate \\uDC00 in a string: a low surrogate must follow a "
        "high one");
  CHECK(error_of("\"abc") == "line 1, column 1: unterminated string");
  CHECK(error_of("\"ab\ncd\"") ==
        "line 1, column 4: control character U+000A in a string; write it as an escape");
}

TEST_CASE("json: invalid UTF-8 is rejected wherever it is", "[trace][json]") {
  CHECK(error_of("\"ab\xC3\x28\"") == "line 1, column 4: invalid UTF-8 byte 0xC3 in a string");
  CHECK(error_of("\"\xC0\xAF\"") ==
        "line 1, column 2: invalid UTF-8 byte 0xC0 in a string");  // overlong
  CHECK(error_of("\"\xED\xA0\x80\"") ==
        "line 1, column 2: invalid UTF-8 byte 0xED in a string");  // surrogate
  CHECK(error_of("\"\xF4\x90\x80\x80\"") ==
        "line 1, column 2: invalid UTF-8 byte 0xF4 in a string");  // > U+10FFFF
  CHECK(error_of("\"\xE6\x97") ==
        "line 1, column 2: invalid UTF-8 byte 0xE6 in a string");  // truncated
  CHECK(error_of("\"\x80\"") == "line 1, column 2: invalid UTF-8 byte 0x80 in a string");
  CHECK(error_of("[\xFF]") ==
        "line 1, column 2: expected a value, found byte 0xFF, which is not UTF-8");
  CHECK(error_of("[é]") == "line 1, column 2: expected a value, found 'é'");
  CHECK(gov::utf8_prefix_length("\xF0\x9F\x9A\x80") == 4);
  CHECK(gov::utf8_prefix_length("\xE0\x80\x80") == 0);
}

TEST_CASE("json: nesting deeper than the limit is an error, not a crash", "[trace][json]") {
  std::string ok = std::string(64, '[') + std::string(64, ']');
  CHECK(parsed(ok).kind == JsonKind::array);
  std::string deep = std::string(65, '[') + std::string(65, ']');
  CHECK(error_of(deep) == "line 1, column 65: nesting is deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += "{\"a\":";
  CHECK(error_of(objects + "1" + std::string(65, '}')) ==
        "line 1, column 321: nesting is deeper than 64 levels");
  CHECK(error_of(std::string(100000, '[')) ==
        "line 1, column 65: nesting is deeper than 64 levels");
  JsonLimits shallow;
  shallow.max_depth = 2;
  CHECK(error_of("[[[]]]", shallow) == "line 1, column 3: nesting is deeper than 2 levels");
}

TEST_CASE("json: the input size limit", "[trace][json]") {
  JsonLimits small;
  small.max_bytes = 10;
  CHECK(error_of("[1,2,3,4,5]", small) ==
        "line 1, column 1: the input is 11 bytes; the limit is 10 bytes");
  CHECK(gov::trace::parse_json("[1,2,3,4]", small).ok());
}

TEST_CASE("json: trailing garbage and structural errors", "[trace][json]") {
  CHECK(error_of("{} x") ==
        "line 1, column 4: expected end of input after the JSON value, found 'x'");
  CHECK(error_of("1 2") ==
        "line 1, column 3: expected end of input after the JSON value, found '2'");
  CHECK(error_of("") == "line 1, column 1: expected a value, found end of input");
  CHECK(error_of("  \n ") == "line 2, column 2: expected a value, found end of input");
  CHECK(error_of("{\n  \"events\": [\n    {\"at\": 0 \"submit\": 1}]}") ==
        "line 3, column 14: expected ',' or '}' after an object member");
  CHECK(error_of("{\"a\":1") ==
        "line 1, column 7: expected ',' or '}' after an object member, found end of input");
  CHECK(error_of("[1 2]") == "line 1, column 4: expected ',' or ']' after an array element");
  CHECK(error_of("{\"a\" 1}") == "line 1, column 6: expected ':' after an object key");
  CHECK(error_of("{1:2}") == "line 1, column 2: expected a string key or '}'");
  CHECK(error_of("{\"a\":1,}") ==
        "line 1, column 8: expected a string key after ','; trailing commas are not allowed");
  CHECK(error_of("[1,]") ==
        "line 1, column 4: expected a value after ','; trailing commas are not allowed");
  CHECK(
      error_of("['a']") ==
      "line 1, column 2: expected a value, found a single quote (JSON strings use double quotes)");
  CHECK(error_of("tru") ==
        "line 1, column 1: unknown literal \"tru\"; JSON has true, false and null");
  CHECK(error_of("[NaN]") ==
        "line 1, column 2: unknown literal \"NaN\"; JSON has true, false and null");
  CHECK(error_of("{\"a\":\x01}") ==
        "line 1, column 6: expected a value, found control character U+0001");
}

TEST_CASE("json: a byte order mark is skipped", "[trace][json]") {
  CHECK(parsed("\xEF\xBB\xBF{}").kind == JsonKind::object);
  CHECK(error_of("\xEF\xBB\xBF}") == "line 1, column 1: expected a value, found '}'");
}

TEST_CASE("json: duplicate keys are reported with both places", "[trace][json]") {
  CHECK(error_of(R"({"a":1,"b":2,"a":3})") ==
        "line 1, column 14: duplicate key \"a\" (first at line 1, column 2)");
  std::string big = "{";
  for (int i = 0; i < 40; ++i) big += "\"k" + std::to_string(i) + "\":0,";
  big += "\n\"k7\":1}";  // past the linear scan: found through the hash index
  CHECK(error_of(big) == "line 2, column 1: duplicate key \"k7\" (first at line 1, column 51)");
  CHECK(error_of(R"({"a":{"x":1,"x":2}})") ==
        "line 1, column 13: duplicate key \"x\" (first at line 1, column 7)");
  CHECK(parsed(R"({"a":{"a":1}})").kind ==
        JsonKind::object);  // the same key in another object is fine
}

TEST_CASE("json: number grammar", "[trace][json]") {
  for (const char* ok : {"0", "-0", "12", "1.5", "1e3", "1E+3", "1e-3", "-0.0e0",
                         "123456789012345678901234567890"}) {
    CHECK(parsed(ok).kind == JsonKind::number);
  }
  CHECK(error_of("01") == "line 1, column 1: leading zeros are not allowed in numbers");
  CHECK(error_of("-") == "line 1, column 2: expected a digit after '-', found end of input");
  CHECK(error_of("1.") ==
        "line 1, column 3: expected a digit after the decimal point, found end of input");
  CHECK(error_of("1.e3") ==
        "line 1, column 3: expected a digit after the decimal point, found 'e'");
  CHECK(error_of("1e") == "line 1, column 3: expected a digit in the exponent, found end of input");
  CHECK(error_of(".5") == "line 1, column 1: expected a value, found '.'");
  CHECK(error_of("+1") == "line 1, column 1: expected a value, found '+'");
}

TEST_CASE("json: exact integer and decimal reading, no floating point", "[trace][json]") {
  CHECK(parsed("3").as_int64() == 3);
  CHECK(parsed("3.0").as_int64() == 3);
  CHECK(parsed("3e2").as_int64() == 300);
  CHECK(parsed("-7").as_int64() == -7);
  CHECK(parsed("-0").as_int64() == 0);
  CHECK_FALSE(parsed("1.5").as_int64());
  CHECK_FALSE(parsed("\"3\"").as_int64());
  CHECK(parsed("9223372036854775807").as_int64() == INT64_MAX);
  CHECK(status_of("9223372036854775808", 1) == NumberStatus::out_of_range);
  CHECK(parsed("-9223372036854775807").as_int64() == -INT64_MAX);
  CHECK(units_of("1.5", 1000) == 1500);
  CHECK(units_of("1.0010", 1000) == 1001);  // trailing zeros are not precision
  CHECK(units_of("0.001", 1000) == 1);
  CHECK(units_of("25e-3", 1000) == 25);
  CHECK(units_of("0.5", 1024) == 512);
  CHECK(units_of("0.0009765625", 1024) == 1);  // 1 MiB
  CHECK(units_of("1234567890123456.789", 1000) == 1234567890123456789);
  CHECK(units_of("0e999999999999999", 1000) == 0);
  CHECK(status_of("1.0005", 1000) == NumberStatus::not_exact);
  CHECK(status_of("0.1", 1024) == NumberStatus::not_exact);
  CHECK(status_of("1e-400", 1000) == NumberStatus::not_exact);
  CHECK(status_of("1.00000000000000000000000000000000000000001", 1000) == NumberStatus::not_exact);
  CHECK(status_of("12345678901234567.890", 1000) == NumberStatus::out_of_range);
  CHECK(status_of("1e19", 1) == NumberStatus::out_of_range);
  CHECK(status_of("1e999999999999", 1) == NumberStatus::out_of_range);
  CHECK(parsed("true").to_units(1).status == NumberStatus::not_a_number);
}

TEST_CASE("json: plain decimals read as the general path reads them", "[trace][json]") {
  // number_units reads decimals of up to 18 digits by a short path; with "e0" after it the same
  // number takes the general path (decompose), which must give the same status and value.
  std::mt19937 random(11);
  const int64_t factors[] = {1, 1000, 1024, 1'000'000, 3};
  size_t not_exact = 0, out_of_range = 0;
  for (int n = 0; n < 20'000; ++n) {
    std::string text = random() % 4 == 0 ? "-" : "";
    const size_t digits = 1 + random() % 19;
    const size_t point = random() % 3 == 0 ? 0 : 1 + random() % digits;  // 0: no point
    for (size_t i = 0; i < digits; ++i) {
      if (i == point && point < digits) text += '.';
      text += static_cast<char>('0' + (i == 0 && point != 1 && digits > 1 ? 1 + random() % 9 : random() % 10));
    }
    const int64_t factor = factors[random() % 5];
    const gov::trace::ExactNumber plain = gov::trace::number_units(text, factor);
    const gov::trace::ExactNumber general = gov::trace::number_units(text + "e0", factor);
    INFO(text << " x " << factor);
    REQUIRE(plain.status == general.status);
    REQUIRE(plain.value == general.value);
    not_exact += plain.status == NumberStatus::not_exact;
    out_of_range += plain.status == NumberStatus::out_of_range;
  }
  CHECK(not_exact > 100);
  CHECK(out_of_range > 100);
}

TEST_CASE("json: the escaper writes valid JSON and valid UTF-8", "[trace][json]") {
  CHECK(gov::json_quote("a\"b\\c\n\t\x01\x7F") == "\"a\\\"b\\\\c\\n\\t\\u0001\x7F\"");
  CHECK(gov::json_quote("日本 🚀") == "\"日本 🚀\"");
  CHECK(gov::json_quote("ok\xFF\xC3") ==
        "\"ok\xEF\xBF\xBD\xEF\xBF\xBD\"");  // U+FFFD per bad byte
  const char raw[] = "x\0y\b\f\r/\"\\\x1F é";
  std::string tricky(raw, sizeof(raw) - 1);
  CHECK(string_value(gov::json_quote(tricky)) == tricky);
}

// The escaper and the position counter test eight bytes at once (compiler/support/swar.hpp);
// each special byte is put at every offset of a long plain run, so it falls in every lane of a
// word and in the byte-by-byte tail.
TEST_CASE("json: escapes and columns are right wherever a special byte falls in a long run",
          "[trace][json]") {
  const std::vector<std::pair<std::string, std::string>> specials = {
      {"\"", "\\\""}, {"\\", "\\\\"}, {"\n", "\\n"}, {std::string(1, '\0'), "\\u0000"},
      {"\x1F", "\\u001f"}, {"\x7F", "\x7F"}, {"\x20", " "}, {"\x7E", "~"}, {"é", "é"}, {"\xFF", "\xEF\xBF\xBD"}};
  for (size_t length : {size_t{7}, size_t{8}, size_t{9}, size_t{23}}) {
    for (size_t at = 0; at <= length; ++at) {
      for (const auto& [special, escaped] : specials) {
        const std::string plain(length, 'a');
        const std::string text = plain.substr(0, at) + special + plain.substr(at);
        INFO("length " << length << ", at " << at << ", byte " << static_cast<int>(static_cast<unsigned char>(special[0])));
        CHECK(gov::json_quote(text) == "\"" + plain.substr(0, at) + escaped + plain.substr(at) + "\"");
      }
    }
  }
  // Columns count code points and restart after a newline, wherever they fall in a word. The
  // error is at `x`.
  for (size_t at = 0; at <= 20; ++at) {
    for (const std::string& wide : {std::string("é"), std::string("日")}) {
      const std::string text = "[\"" + std::string(at, 'b') + wide + std::string(17, 'c') + "\", x]";
      INFO("at " << at << ", " << wide);
      CHECK(error_of(text).starts_with(fmt::format("line 1, column {}: ", at + 24)));
    }
    const std::string text = "[" + std::string(at, ' ') + "\n" + std::string(17, ' ') + "x]";
    INFO("newline at " << at);
    CHECK(error_of(text).starts_with("line 2, column 18: "));
  }
}

TEST_CASE("json: the pull reader steps into containers and reads one element at a time",
          "[trace][json]") {
  std::string text = R"({"meta": {"x": 1}, "items": [{"n": 1}, {"n": 2}], "tail": true})";
  JsonReader reader(text);
  REQUIRE(reader.peek_kind() == JsonKind::object);
  REQUIRE(reader.enter_object());
  JsonKey key;
  REQUIRE(reader.next_member(key) == JsonStep::item);
  CHECK(key.text == "meta");
  REQUIRE(reader.skip_value());
  REQUIRE(reader.next_member(key) == JsonStep::item);
  CHECK(key.text == "items");
  REQUIRE(reader.enter_array());
  JsonValue element;
  std::vector<int64_t> seen;
  while (reader.next_element() == JsonStep::item) {
    REQUIRE(reader.read_value(element));
    seen.push_back(*element.find("n")->as_int64());
  }
  CHECK(seen == std::vector<int64_t>{1, 2});
  REQUIRE(reader.next_member(key) == JsonStep::item);
  CHECK(key.text == "tail");
  REQUIRE(reader.skip_value());
  CHECK(reader.next_member(key) == JsonStep::end);
  CHECK(reader.finish());
}

TEST_CASE("json: the pull reader reports duplicates, bad separators and trailing data",
          "[trace][json]") {
  JsonReader duplicate(R"({"a": 1, "a": 2})");
  JsonKey key;
  REQUIRE(duplicate.enter_object());
  REQUIRE(duplicate.next_member(key) == JsonStep::item);
  REQUIRE(duplicate.skip_value());
  CHECK(duplicate.next_member(key) == JsonStep::error);
  CHECK(duplicate.error()->message ==
        "line 1, column 10: duplicate key \"a\" (first at line 1, column 2)");

  JsonReader separator("[1 2]");
  REQUIRE(separator.enter_array());
  REQUIRE(separator.next_element() == JsonStep::item);
  REQUIRE(separator.skip_value());
  CHECK(separator.next_element() == JsonStep::error);
  CHECK(separator.error()->message ==
        "line 1, column 4: expected ',' or ']' after an array element");
  CHECK_FALSE(separator.skip_value());  // stays failed

  JsonReader trailing("[] []");
  REQUIRE(trailing.enter_array());
  REQUIRE(trailing.next_element() == JsonStep::end);
  CHECK_FALSE(trailing.finish());
  CHECK(trailing.error()->message ==
        "line 1, column 4: expected end of input after the JSON value, found '['");
}
