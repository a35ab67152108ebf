// The JSON reader over a JsonSource (how traces are read from files) must read exactly what it
// reads from a string: a source that fills one byte at a time and poisons what it was told it
// may drop shows any lookahead past the filled text or look back into dropped text.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "runtime/trace/json.hpp"

using gov::trace::JsonKind;
using gov::trace::JsonLimits;
using gov::trace::JsonReader;
using gov::trace::JsonSource;
using gov::trace::JsonValue;

namespace {

/// Fills exactly the bytes asked for; unfilled bytes read as 0xFF and dropped ones as 0xFE, so
/// a reader that looks at either sees garbage and reads differently from the string reader.
class DribbleSource final : public JsonSource {
 public:
  explicit DribbleSource(std::string text) : input_(std::move(text)), buffer_(input_.size(), '\xFF') {}
  std::string_view text() const { return buffer_; }
  size_t fill(size_t end, size_t keep) override {
    REQUIRE(keep >= kept_);  // never decreases
    for (size_t i = kept_; i < std::min(keep, filled_); ++i) buffer_[i] = '\xFE';
    kept_ = keep;
    for (; filled_ < std::min(end, input_.size()); ++filled_) buffer_[filled_] = input_[filled_];
    return filled_;
  }

 private:
  std::string input_;
  std::string buffer_;
  size_t filled_ = 0;
  size_t kept_ = 0;
};

/// Every node with its position, for comparing two readings.
void describe(const JsonValue& v, std::string& out) {
  out += fmt::format("{}@{}:{}:{}[{}]", static_cast<int>(v.kind), v.position.offset, v.position.line,
                     v.position.column, v.kind == JsonKind::boolean ? (v.boolean ? "true" : "false") : v.text);
  for (size_t i = 0; i < v.items.size(); ++i) {
    if (i < v.keys.size()) {
      out += fmt::format(" key {}@{}:{}:{}", v.keys[i].text, v.keys[i].position.offset, v.keys[i].position.line,
                         v.keys[i].position.column);
    }
    out += " (";
    describe(v.items[i], out);
    out += ")";
  }
}

/// A trace-shaped walk: the outer object and array stepped into, each element read alone.
std::string walk(JsonReader& reader) {
  std::string out;
  if (!reader.enter_object()) return "error " + reader.error()->message;
  gov::trace::JsonKey key;
  while (reader.next_member(key) == gov::trace::JsonStep::item) {
    out += fmt::format("member {}@{}:{}; ", key.text, key.position.line, key.position.column);
    if (!reader.enter_array()) return out + "error " + reader.error()->message;
    while (reader.next_element() == gov::trace::JsonStep::item) {
      JsonValue value;
      if (!reader.read_value(value)) return out + "error " + reader.error()->message;
      describe(value, out);
      out += "; ";
    }
    if (reader.error()) return out + "error " + reader.error()->message;
  }
  if (reader.error()) return out + "error " + reader.error()->message;
  return out + (reader.finish() ? "end" : "error " + reader.error()->message);
}

}  // namespace

TEST_CASE("the JSON reader reads the same from a source filled a byte at a time as from a string",
          "[security][io]") {
  const std::vector<std::string> inputs = {
      "{\"events\": []}",
      "\xEF\xBB\xBF{\"events\": [1, 2.5e3, -0, true, false, null]}",
      "{\"events\": [\n  {\"a\": \"h\xC3\xA9llo \xF0\x9F\x98\x80\"},\n  {\"b\": \"\\ud83d\\ude00 \\u00e9 \\n\"}\n]}\n",
      "{\"events\": [{\"a\": 1,\n \"a\": 2}]}",              // duplicate key, first on an earlier line
      "{\"events\": [{\"a\": \"\\ud83d\"}]}",                  // unpaired surrogate
      "{\"events\": [{\"a\": \"\\ud83d\\u0041\"}]}",           // a high surrogate and a non-low escape
      "{\"events\": [{\"a\": tru}]}",                         // a cut literal
      "{\"events\": [{\"a\": \"\xC3\"}]}",                    // a cut UTF-8 sequence
      "{\"events\": [1,]}",                                   // trailing comma
      "{\"events\": [\"\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\" x]}",  // error after multi-byte text on one line
      "{\"events\": [1 2]}",
      "{\"events\": [1]} x",
      "{\"events\": [" + std::string(5000, ' ') + "\"" + std::string(100, 'x') + "\"" + std::string(3000, '\n') +
          "]}",
      "{\"events\": [\"" + std::string(40, 'y') + "\"]}",         // longer than max_value_bytes below
      "{\"events\": [" + std::string(40, '7') + "]}",             // a number longer than the bound
      "{\"events\": [[" + std::string(40, ' ') + "1]]}",           // whitespace inside a value past the bound
      "{\"" + std::string(40, 'k') + "\": []}",                    // a key longer than the bound
      "{\"events\": [{\"\xC3\xA9\xC3\xA9\": 1, \"z\": [1, 2, {\"q\": nul}]}]}",
      "",
      "   ",
      "{\"events\": [\"unterminated",
  };
  JsonLimits limits;
  limits.max_value_bytes = 32;
  for (const std::string& input : inputs) {
    JsonReader from_string(input, limits);
    DribbleSource source(input);
    JsonReader from_source(source.text(), limits, source);
    INFO(input.substr(0, 200));
    CHECK(walk(from_source) == walk(from_string));
  }
}
