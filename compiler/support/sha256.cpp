// SHA-256: OpenSSL's EVP digest, with FIPS 180-4 §6.2 written out as the fallback and the
// tests' reference.
#include "compiler/support/sha256.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gov {
namespace {

constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

constexpr std::array<uint32_t, 8> kInitialState = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

constexpr uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

uint32_t load_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

/// OpenSSL's SHA-256, fetched once per process (an implicit fetch at every init costs a
/// provider lookup); null when no provider offers it.
const EVP_MD* openssl_sha256() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

/// An initialised software digest's update and final cannot fail (OpenSSL's own contract for
/// them: only a null or uninitialised context does). If they did, no digest could be trusted,
/// and a wrong content hash would be stored or an object accepted: stop instead.
[[noreturn]] void libcrypto_broke(const char* call) {
  std::fprintf(stderr, "gov: internal error: OpenSSL's %s failed on an initialised SHA-256 context\n", call);
  std::abort();
}

}  // namespace

Sha256::Sha256() {
  if (const EVP_MD* md = openssl_sha256()) {
    openssl_ = EVP_MD_CTX_new();
    if (openssl_ != nullptr && EVP_DigestInit_ex(openssl_, md, nullptr) != 1) {
      EVP_MD_CTX_free(openssl_);
      openssl_ = nullptr;
    }
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(openssl_); }

void Sha256::update(std::string_view bytes) {
  if (openssl_ == nullptr) return portable_.update(bytes);
  if (EVP_DigestUpdate(openssl_, bytes.data(), bytes.size()) != 1) libcrypto_broke("EVP_DigestUpdate");
}

Digest Sha256::finish() {
  if (openssl_ == nullptr) return portable_.finish();
  Digest digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(openssl_, digest.data(), &length) != 1 || length != digest.size())
    libcrypto_broke("EVP_DigestFinal_ex");
  return digest;
}

Digest Sha256::portable(std::string_view bytes) {
  Portable hash;
  hash.update(bytes);
  return hash.finish();
}

Sha256::Portable::Portable() : state(kInitialState) {}

void Sha256::Portable::compress(const uint8_t* block) {
  std::array<uint32_t, 64> w;
  for (int t = 0; t < 16; ++t) w[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = state;
  for (int t = 0; t < 64; ++t) {
    uint32_t big_sigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t choose = (e & f) ^ (~e & g);
    uint32_t t1 = h + big_sigma1 + choose + kRoundConstants[t] + w[t];
    uint32_t big_sigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = big_sigma0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  std::array<uint32_t, 8> add = {a, b, c, d, e, f, g, h};
  for (size_t i = 0; i < 8; ++i) state[i] += add[i];
}

void Sha256::Portable::update(std::string_view bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t left = bytes.size();
  total_bytes += left;
  if (buffered > 0) {
    size_t take = std::min(left, buffer.size() - buffered);
    std::memcpy(buffer.data() + buffered, p, take);
    buffered += take;
    p += take;
    left -= take;
    if (buffered < buffer.size()) return;
    compress(buffer.data());
    buffered = 0;
  }
  for (; left >= 64; p += 64, left -= 64) compress(p);
  if (left > 0) std::memcpy(buffer.data(), p, left);
  buffered = left;
}

Digest Sha256::Portable::finish() {
  // Padding (§5.1.1): a 1 bit, zeros up to 56 mod 64 bytes, then the length in bits, big-endian.
  uint64_t bit_length = total_bytes * 8;
  buffer[buffered++] = 0x80;
  if (buffered > 56) {
    std::memset(buffer.data() + buffered, 0, 64 - buffered);
    compress(buffer.data());
    buffered = 0;
  }
  std::memset(buffer.data() + buffered, 0, 56 - buffered);
  for (int i = 0; i < 8; ++i) buffer[56 + i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  compress(buffer.data());
  Digest digest;
  for (size_t i = 0; i < 8; ++i) {
    for (size_t j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(state[i] >> (24 - 8 * j));
  }
  return digest;
}

std::string to_hex(const Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (uint8_t byte : digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return to_hex(hash.finish());
}

}  // namespace gov
