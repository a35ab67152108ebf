// Shared by the fuzz targets: a check that reports a broken property and aborts (libFuzzer
// and the replay driver both treat the abort as a finding), and input helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace gov::fuzz {

/// Prints `what` (and `detail`, which may be long: the inputs that disagree) and aborts.
[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz finding: %.*s\n", static_cast<int>(what.size()), what.data());
  if (!detail.empty()) std::fprintf(stderr, "%.*s\n", static_cast<int>(detail.size()), detail.data());
  std::abort();
}

/// Unlike assert(), active in Release builds: the replay of the corpus runs in one.
inline void require(bool condition, std::string_view what, std::string_view detail = {}) {
  if (!condition) fail(what, detail);
}

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Reads bytes from the front of a fuzz input; past the end every read gives 0, so any input
/// decodes to something (libFuzzer's FuzzedDataProvider, without its header).
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return empty() ? 0 : size_ - pos_; }
  uint8_t byte() { return empty() ? 0 : data_[pos_++]; }
  /// A value in [0, bound) from one or two bytes; 0 when bound is 0.
  uint32_t below(uint32_t bound) {
    if (bound == 0) return 0;
    const uint32_t raw = bound <= 256 ? byte() : (uint32_t{byte()} << 8 | byte());
    return raw % bound;
  }
  bool flag() { return (byte() & 1) != 0; }
  uint64_t u64() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = value << 8 | byte();
    return value;
  }
  int64_t i64() { return static_cast<int64_t>(u64()); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace gov::fuzz
