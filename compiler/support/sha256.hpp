// SHA-256 (FIPS 180-4): content hashes of policy versions, de-duplication of source text, the
// keys and digests of compiled objects.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX; the header stays free of OpenSSL's

namespace gov {

using Digest = std::array<uint8_t, 32>;

/// Incremental SHA-256. Feed bytes with update() in any number of pieces, then call
/// finish() once; the object is then spent (make a new one). Not thread-safe.
///
/// OpenSSL's libcrypto does the hashing: it uses the CPU's SHA extensions where there are any,
/// about 9× faster than portable code on the object bytes a controller's load verifies
/// (docs/performance.md). Creating a hash allocates OpenSSL's context. Should OpenSSL be unable
/// to hash (no SHA-256 in its configured providers), the portable code of FIPS 180-4 §6.2 in
/// sha256.cpp hashes instead, with the same results; tests compare the two.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  Digest finish();

  /// Whether OpenSSL hashes (else the portable code).
  bool uses_openssl() const { return openssl_ != nullptr; }

  /// The portable code alone, as a whole-buffer hash: the reference the tests compare
  /// OpenSSL's digests with.
  static Digest portable(std::string_view bytes);

 private:
  /// FIPS 180-4 §6.2 written out: the fallback.
  struct Portable {
    std::array<uint32_t, 8> state;
    std::array<uint8_t, 64> buffer{};
    size_t buffered = 0;
    uint64_t total_bytes = 0;

    Portable();
    void update(std::string_view bytes);
    Digest finish();
    void compress(const uint8_t* block);
  };

  evp_md_ctx_st* openssl_ = nullptr;
  Portable portable_;
};

/// The digest as 64 lower-case hex digits.
std::string to_hex(const Digest& digest);

/// SHA-256 of `bytes` as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace gov
