// A small strict JSON reader for the [check] tests: enough to validate what `gov inspect
// --format json` and `gov lint --format json|sarif` print and to pull fields out of it.
// Throws std::runtime_error on anything that is not JSON (RFC 8259), trailing text included.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/support/utf8.hpp"

namespace gov::test {

struct Json {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0;
  std::string text;               // a string's value, or a number as written
  std::vector<Json> items;        // array elements, or object values
  std::vector<std::string> keys;  // object keys, parallel to items

  bool has(std::string_view key) const {
    if (kind != Kind::object) return false;
    for (const std::string& k : keys) {
      if (k == key) return true;
    }
    return false;
  }
  const Json& operator[](std::string_view key) const {
    if (kind != Kind::object) throw std::runtime_error("not an object (looking for `" + std::string(key) + "`)");
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return items[i];
    }
    throw std::runtime_error("no key `" + std::string(key) + "`");
  }
  const Json& operator[](size_t index) const {
    if (kind != Kind::array || index >= items.size()) throw std::runtime_error("no index " + std::to_string(index));
    return items[index];
  }
  size_t size() const { return items.size(); }
  const std::string& str() const {
    if (kind != Kind::string) throw std::runtime_error("not a string");
    return text;
  }
  double num() const {
    if (kind != Kind::number) throw std::runtime_error("not a number");
    return number;
  }
  long integer() const { return static_cast<long>(num()); }
  /// A number exactly as written (`2.4`, `48`), for comparisons without floating point.
  const std::string& literal() const {
    if (kind != Kind::number) throw std::runtime_error("not a number");
    return text;
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  Json document() {
    Json value = parse_value(0);
    skip_space();
    if (at_ < text_.size()) fail("text after the document");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("invalid JSON at offset " + std::to_string(at_) + ": " + what);
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
      ++at_;
    }
  }
  char peek() {
    skip_space();
    if (at_ >= text_.size()) fail("unexpected end");
    return text_[at_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected `") + c + "`");
    ++at_;
  }
  bool word(std::string_view w) {
    if (text_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }

  Json parse_value(int depth) {
    if (depth > 200) fail("nested too deep");
    Json value;
    const char c = peek();
    if (c == '{') {
      value.kind = Json::Kind::object;
      ++at_;
      if (peek() == '}') {
        ++at_;
        return value;
      }
      for (;;) {
        if (peek() != '"') fail("expected a key");
        std::string key = parse_string();
        if (value.has(key)) fail("duplicate key `" + key + "`");
        value.keys.push_back(std::move(key));
        expect(':');
        value.items.push_back(parse_value(depth + 1));
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        return value;
      }
    }
    if (c == '[') {
      value.kind = Json::Kind::array;
      ++at_;
      if (peek() == ']') {
        ++at_;
        return value;
      }
      for (;;) {
        value.items.push_back(parse_value(depth + 1));
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect(']');
        return value;
      }
    }
    if (c == '"') {
      value.kind = Json::Kind::string;
      value.text = parse_string();
      return value;
    }
    if (word("true")) {
      value.kind = Json::Kind::boolean;
      value.boolean = true;
      return value;
    }
    if (word("false")) {
      value.kind = Json::Kind::boolean;
      return value;
    }
    if (word("null")) return value;
    return parse_number();
  }

  Json parse_number() {
    const size_t begin = at_;
    auto digits = [&] {
      const size_t start = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      if (at_ == start) fail("expected a digit");
    };
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    if (at_ < text_.size() && text_[at_] == '0') {
      ++at_;
    } else {
      digits();
    }
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      digits();
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      digits();
    }
    Json value;
    value.kind = Json::Kind::number;
    value.text = std::string(text_.substr(begin, at_ - begin));
    value.number = std::strtod(value.text.c_str(), nullptr);
    return value;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    for (;;) {
      if (at_ >= text_.size()) fail("unterminated string");
      const char c = text_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) fail("unterminated escape");
      const char e = text_[at_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t code = hex4();
          if (code >= 0xD800 && code < 0xDC00) {
            if (!word("\\u")) fail("lone surrogate");
            const uint32_t low = hex4();
            if (low < 0xDC00 || low >= 0xE000) fail("bad surrogate pair");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default: fail("unknown escape");
      }
    }
  }

  uint32_t hex4() {
    if (at_ + 4 > text_.size()) fail("short \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[at_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
      else fail("bad hex digit");
    }
    return v;
  }

  std::string_view text_;
  size_t at_ = 0;
};

inline Json parse_json(std::string_view text) { return JsonReader(text).document(); }

}  // namespace gov::test
