// SHA-256 (FIPS 180-4): content hashes of policy versions and de-duplication of source text.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gov {

using Digest = std::array<uint8_t, 32>;

/// Incremental SHA-256. Feed bytes with update() in any number of pieces, then call
/// finish() once; the object is then spent (make a new one). Not thread-safe; no allocation.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  Digest finish();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

/// The digest as 64 lower-case hex digits.
std::string to_hex(const Digest& digest);

/// SHA-256 of `bytes` as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace gov
