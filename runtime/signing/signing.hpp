// Ed25519 signing of stored policy versions and their cached objects: keys, key files, the
// canonical manifests that are signed, and verification with a reason when it fails.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/store/result.hpp"
#include "runtime/store/store.hpp"

namespace gov::signing {

inline constexpr size_t kPublicKeyBytes = 32;
inline constexpr size_t kSecretKeyBytes = 64;  // libsodium's form: the seed, then the public key
inline constexpr size_t kSignatureBytes = 64;

/// First token of a key file: a secret key is `gov-ed25519-secret-v1 <base64 of 64 bytes>\n`,
/// a public key `gov-ed25519-public-v1 <base64 of 32 bytes>\n`.
inline constexpr std::string_view kSecretKeyPrefix = "gov-ed25519-secret-v1";
inline constexpr std::string_view kPublicKeyPrefix = "gov-ed25519-public-v1";

/// Errors use the store's Result: `io` when a file cannot be read or written, `invalid` when
/// its content is not a key (or a secret key file is readable by others).
template <class T>
using Result = store::Result<T>;

/// An Ed25519 public key. A plain value; thread-safe to share.
class PublicKey {
 public:
  explicit PublicKey(const std::array<uint8_t, kPublicKeyBytes>& bytes) : bytes_(bytes) {}
  const std::array<uint8_t, kPublicKeyBytes>& bytes() const { return bytes_; }
  /// The first 16 hex digits of SHA-256 of the key's bytes: names the key in messages and in
  /// the store's signature rows.
  std::string key_id() const;
  /// The key file's text (with the final newline).
  std::string to_text() const;
  bool operator==(const PublicKey&) const = default;

 private:
  std::array<uint8_t, kPublicKeyBytes> bytes_;
};

/// An Ed25519 secret key; its bytes are wiped when it is destroyed. Move-only.
class SecretKey {
 public:
  explicit SecretKey(const std::array<uint8_t, kSecretKeyBytes>& bytes) : bytes_(bytes) {}
  SecretKey(SecretKey&& other) noexcept;
  SecretKey& operator=(SecretKey&& other) noexcept;
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;
  ~SecretKey();

  const std::array<uint8_t, kSecretKeyBytes>& bytes() const { return bytes_; }
  PublicKey public_key() const;
  std::string to_text() const;

 private:
  std::array<uint8_t, kSecretKeyBytes> bytes_;
};

struct KeyPair {
  SecretKey secret;
  PublicKey public_key;
};

/// A new random key pair. Error only when libsodium cannot be initialised.
Result<KeyPair> generate_key_pair();

/// Parses key file text (as written by to_text()); `path` only names the file in errors, e.g.
/// "cannot read signing key `k.key`: not a gov Ed25519 secret key".
Result<SecretKey> parse_secret_key(std::string_view text, std::string_view path);
Result<PublicKey> parse_public_key(std::string_view text, std::string_view path);

/// Reads a key file. A secret key file that group or others may read is refused, as ssh does.
Result<SecretKey> load_secret_key(const std::string& path);
Result<PublicKey> load_public_key(const std::string& path);

/// Writes `prefix`.key (mode 0600) and `prefix`.pub (0644), creating the parent directory.
/// Refuses to overwrite either file or to follow a symbolic link (O_CREAT|O_EXCL|O_NOFOLLOW);
/// when the second file cannot be written the first is removed again.
Result<void> write_key_pair(const KeyPair& pair, const std::string& prefix);

/// The canonical bytes a version signature covers: "gov-version-manifest-v1\n", then the
/// policy name, the content hash, the number of files (8 bytes big-endian), and each file's
/// path and SHA-256 (hex) of its text; every string preceded by its length as 8 bytes
/// big-endian. The version number is not covered: a rollback copies signatures.
std::string version_manifest(std::string_view policy, std::string_view content_sha256,
                             const std::vector<store::PolicyFile>& files);

/// The canonical bytes an object signature covers: "gov-object-manifest-v1\n", then the
/// policy name, the content hash, the object key and the SHA-256 (hex) of the object bytes,
/// each length-prefixed as above.
std::string object_manifest(std::string_view policy, std::string_view content_sha256, std::string_view object_key,
                            const store::Bytes& object);

/// A detached signature of `manifest` by `key`, with the key's id.
store::Signature sign(const SecretKey& key, std::string_view manifest);

store::Signature sign_version(const SecretKey& key, std::string_view policy, std::string_view content_sha256,
                              const std::vector<store::PolicyFile>& files);
store::Signature sign_object(const SecretKey& key, std::string_view policy, std::string_view content_sha256,
                             std::string_view object_key, const store::Bytes& object);

/// The outcome of checking a signature.
enum class Verdict : uint8_t {
  verified,
  not_signed,     // no signature
  other_key,      // signed with a key whose id is not the verify key's
  bad_signature,  // the key id matches but the signature does not verify: something was changed
};

struct Verification {
  Verdict verdict = Verdict::not_signed;
  std::string message;  // empty when verified; else why, naming the key ids, e.g. "not signed"
  bool ok() const { return verdict == Verdict::verified; }
};

/// Checks `signature` (absent: not signed) over `manifest` with `key`.
Verification verify(const PublicKey& key, std::string_view manifest, const std::optional<store::Signature>& signature);

Verification verify_version(const PublicKey& key, std::string_view policy, std::string_view content_sha256,
                            const std::vector<store::PolicyFile>& files,
                            const std::optional<store::Signature>& signature);
Verification verify_object(const PublicKey& key, std::string_view policy, std::string_view content_sha256,
                           std::string_view object_key, const store::Bytes& object,
                           const std::optional<store::Signature>& signature);

}  // namespace gov::signing
