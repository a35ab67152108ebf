// SHA-256 against the FIPS 180-4 example vectors (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf").
#include "compiler/support/sha256.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/test_support.hpp"

namespace gov {
namespace {

TEST_CASE("sha256: FIPS 180-4 test vectors", "[store][sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                   "klmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // SHA2_Additional: one byte 0xbd, and 55/56/64 zero bytes around the padding boundary.
  CHECK(sha256_hex("\xbd") == "68325720aabd7c82f30f554b313d0570c95accbb7dc4b5aae11204c08ffe732b");
  CHECK(sha256_hex(std::string(55, '\0')) ==
        "02779466cdec163811d078815c633f21901413081449002f24aa3e80f0b88ef7");
  CHECK(sha256_hex(std::string(56, '\0')) ==
        "d4817aa5497628e7c77e6b606107042bbba3130888c5f47a375e6179be789fbb");
  CHECK(sha256_hex(std::string(64, '\0')) ==
        "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
}

TEST_CASE("sha256: feeding in pieces gives the one-shot digest", "[store][sha256]") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 7 + 3);
  std::string expected = sha256_hex(text);
  for (size_t piece : {1, 3, 63, 64, 65, 127, 500}) {
    Sha256 hash;
    for (size_t at = 0; at < text.size(); at += piece) hash.update(std::string_view(text).substr(at, piece));
    CHECK(to_hex(hash.finish()) == expected);
  }
}

TEST_CASE("sha256: OpenSSL hashes, and agrees with the portable code", "[store][sha256]") {
  // This machine's libcrypto offers SHA-256 (tools/deps installs it): the fallback must not be
  // what every other test silently exercises.
  CHECK(Sha256().uses_openssl());
  // Lengths around every padding and block boundary, and a long one, in pieces of varied sizes.
  gov::test::Xorshift64 next;
  for (size_t length : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 4096, 100003}) {
    std::string text(length, '\0');
    for (char& c : text) c = static_cast<char>(next());
    const Digest expected = Sha256::portable(text);
    Sha256 hash;
    for (size_t at = 0; at < length;) {
      const size_t piece = 1 + next() % 300;
      hash.update(std::string_view(text).substr(at, piece));
      at += piece;
    }
    INFO("length " << length);
    CHECK(hash.finish() == expected);
  }
  CHECK(to_hex(Sha256::portable("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace gov
