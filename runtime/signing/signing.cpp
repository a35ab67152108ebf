// Ed25519 keys, key files and signatures over canonical manifests, with libsodium.
#include "runtime/signing/signing.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "compiler/support/sha256.hpp"

namespace gov::signing {
namespace {

using store::Error;
using store::ErrorKind;

// A key file is one short line; anything longer is not a key (and is not read into memory).
constexpr size_t kMaxKeyFileBytes = 4096;

// sodium_init is thread-safe and idempotent; the static makes it run once per process.
bool sodium_ready() {
  static const bool ready = sodium_init() >= 0;
  return ready;
}

void append_length(std::string& out, uint64_t length) {
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((length >> shift) & 0xff);
}

void append_field(std::string& out, std::string_view field) {
  append_length(out, field.size());
  out += field;
}

std::string base64(const uint8_t* bytes, size_t size) {
  std::string out(sodium_base64_encoded_len(size, sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes, size, sodium_base64_VARIANT_ORIGINAL);
  out.resize(std::strlen(out.c_str()));
  return out;
}

// The key bytes of `text` (`prefix`, one space, base64 of exactly N bytes, an optional final
// newline), or nullopt when it is anything else.
template <size_t N>
std::optional<std::array<uint8_t, N>> decode_key(std::string_view text, std::string_view prefix) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.size() <= prefix.size() + 1 || text.substr(0, prefix.size()) != prefix || text[prefix.size()] != ' ') {
    return std::nullopt;
  }
  const std::string encoded(text.substr(prefix.size() + 1));
  if (encoded.size() != sodium_base64_encoded_len(N, sodium_base64_VARIANT_ORIGINAL) - 1) return std::nullopt;
  std::array<uint8_t, N> bytes{};
  size_t decoded = 0;
  const char* end = nullptr;
  if (sodium_base642bin(bytes.data(), bytes.size(), encoded.data(), encoded.size(), nullptr, &decoded, &end,
                        sodium_base64_VARIANT_ORIGINAL) != 0) {
    return std::nullopt;
  }
  if (decoded != N || end != encoded.data() + encoded.size()) return std::nullopt;
  return bytes;
}

Error read_error(std::string_view kind, std::string_view path, std::string_view why) {
  return Error{ErrorKind::io, fmt::format("cannot read {} `{}`: {}", kind, path, why)};
}

/// A key file's text and permission bits.
struct KeyFile {
  std::string text;
  mode_t mode = 0;
};

/// The refusal of a secret key file that group or others may read.
Error not_private(std::string_view kind, std::string_view path, mode_t mode) {
  return Error{ErrorKind::invalid, fmt::format("cannot read {} `{}`: it is accessible by group or others (mode {:04o}); "
                                               "make it private with `chmod 600`",
                                               kind, path, mode & 07777)};
}

// The whole file at `path` (at most kMaxKeyFileBytes), and its mode.
Result<KeyFile> read_key_file(const std::string& path, std::string_view kind) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever, before the check
  // below could refuse it (docs/limits.md: a FIFO is refused before a byte is read).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return read_error(kind, path, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) return read_error(kind, path, std::strerror(errno));
  if (!S_ISREG(status.st_mode)) return read_error(kind, path, "not a regular file");
  std::string text(kMaxKeyFileBytes + 1, '\0');
  size_t size = 0;
  while (size < text.size()) {
    const ssize_t got = ::read(fd, text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return read_error(kind, path, std::strerror(errno));
    if (got == 0) break;
    size += static_cast<size_t>(got);
  }
  text.resize(size);
  return KeyFile{std::move(text), status.st_mode};
}

Result<void> write_new_file(const std::string& path, std::string_view text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    const int error = errno;
    std::string why = error == EEXIST ? std::string("it exists already (keys are never overwritten)")
                                      : std::string(std::strerror(error));
    return Error{ErrorKind::io, fmt::format("cannot write key file `{}`: {}", path, why)};
  }
  size_t written = 0;
  bool failed = false;
  while (written < text.size()) {
    const ssize_t put = ::write(fd, text.data() + written, text.size() - written);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      failed = true;
      break;
    }
    written += static_cast<size_t>(put);
  }
  const int error = errno;
  if (!failed && ::fsync(fd) != 0) failed = true;
  ::close(fd);
  if (!failed) return {};
  ::unlink(path.c_str());
  return Error{ErrorKind::io, fmt::format("cannot write key file `{}`: {}", path, std::strerror(error))};
}

std::string hex_digest(std::string_view bytes) { return sha256_hex(bytes); }

std::string_view as_text(const store::Bytes& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

// ---- keys -----------------------------------------------------------------------------------

std::string PublicKey::key_id() const {
  return hex_digest(std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size())).substr(0, 16);
}

std::string PublicKey::to_text() const {
  return fmt::format("{} {}\n", kPublicKeyPrefix, base64(bytes_.data(), bytes_.size()));
}

SecretKey::SecretKey(SecretKey&& other) noexcept : bytes_(other.bytes_) {
  sodium_memzero(other.bytes_.data(), other.bytes_.size());
}

SecretKey& SecretKey::operator=(SecretKey&& other) noexcept {
  if (this == &other) return *this;
  bytes_ = other.bytes_;
  sodium_memzero(other.bytes_.data(), other.bytes_.size());
  return *this;
}

SecretKey::~SecretKey() { sodium_memzero(bytes_.data(), bytes_.size()); }

PublicKey SecretKey::public_key() const {
  std::array<uint8_t, kPublicKeyBytes> bytes{};
  crypto_sign_ed25519_sk_to_pk(bytes.data(), bytes_.data());
  return PublicKey(bytes);
}

std::string SecretKey::to_text() const {
  return fmt::format("{} {}\n", kSecretKeyPrefix, base64(bytes_.data(), bytes_.size()));
}

Result<KeyPair> generate_key_pair() {
  if (!sodium_ready()) return Error{ErrorKind::io, "cannot initialise libsodium"};
  std::array<uint8_t, kPublicKeyBytes> public_bytes{};
  std::array<uint8_t, kSecretKeyBytes> secret_bytes{};
  crypto_sign_keypair(public_bytes.data(), secret_bytes.data());
  KeyPair pair{SecretKey(secret_bytes), PublicKey(public_bytes)};
  sodium_memzero(secret_bytes.data(), secret_bytes.size());
  return pair;
}

Result<SecretKey> parse_secret_key(std::string_view text, std::string_view path) {
  if (!sodium_ready()) return Error{ErrorKind::io, "cannot initialise libsodium"};
  auto bytes = decode_key<kSecretKeyBytes>(text, kSecretKeyPrefix);
  const Error not_a_key{ErrorKind::invalid,
                        fmt::format("cannot read signing key `{}`: not a gov Ed25519 secret key", path)};
  if (!bytes) {
    if (decode_key<kPublicKeyBytes>(text, kPublicKeyPrefix)) {
      return Error{ErrorKind::invalid, fmt::format("cannot read signing key `{}`: it is a public key; sign with the "
                                                   "secret key (the `.key` file)",
                                                   path)};
    }
    return not_a_key;
  }
  // The second half must be the public key of the first (the seed): a damaged key would sign
  // with one key and name another.
  std::array<uint8_t, kPublicKeyBytes> derived{};
  std::array<uint8_t, kSecretKeyBytes> rebuilt{};
  crypto_sign_seed_keypair(derived.data(), rebuilt.data(), bytes->data());
  const bool consistent = sodium_memcmp(rebuilt.data(), bytes->data(), rebuilt.size()) == 0;
  sodium_memzero(rebuilt.data(), rebuilt.size());
  SecretKey key(*bytes);
  sodium_memzero(bytes->data(), bytes->size());
  if (!consistent) {
    return Error{ErrorKind::invalid,
                 fmt::format("cannot read signing key `{}`: not a gov Ed25519 secret key (its public half does "
                             "not match its seed)",
                             path)};
  }
  return key;
}

Result<PublicKey> parse_public_key(std::string_view text, std::string_view path) {
  if (!sodium_ready()) return Error{ErrorKind::io, "cannot initialise libsodium"};
  auto bytes = decode_key<kPublicKeyBytes>(text, kPublicKeyPrefix);
  if (!bytes) {
    if (text.substr(0, kSecretKeyPrefix.size()) == kSecretKeyPrefix) {
      return Error{ErrorKind::invalid, fmt::format("cannot read verify key `{}`: it is a secret key; verify with "
                                                   "the public key (the `.pub` file)",
                                                   path)};
    }
    return Error{ErrorKind::invalid, fmt::format("cannot read verify key `{}`: not a gov Ed25519 public key", path)};
  }
  return PublicKey(*bytes);
}

Result<SecretKey> load_secret_key(const std::string& path) {
  auto file = read_key_file(path, "signing key");
  if (!file) return file.error();
  // A secret key that group or others may read is refused; a public key given by mistake is
  // said to be one first (it need not be private, and chmod would not help).
  const bool public_key = decode_key<kPublicKeyBytes>(file->text, kPublicKeyPrefix).has_value();
  auto key = !public_key && (file->mode & 077) != 0 ? Result<SecretKey>(not_private("signing key", path, file->mode))
                                                    : parse_secret_key(file->text, path);
  sodium_memzero(file->text.data(), file->text.size());
  return key;
}

Result<PublicKey> load_public_key(const std::string& path) {
  auto file = read_key_file(path, "verify key");
  if (!file) return file.error();
  return parse_public_key(file->text, path);
}

Result<void> write_key_pair(const KeyPair& pair, const std::string& prefix) {
  const std::string secret_path = prefix + ".key";
  const std::string public_path = prefix + ".pub";
  const std::filesystem::path parent = std::filesystem::path(secret_path).parent_path();
  if (!parent.empty()) {
    std::error_code error;
    std::filesystem::create_directories(parent, error);
    if (error) {
      return Error{ErrorKind::io, fmt::format("cannot create directory `{}`: {}", parent.string(), error.message())};
    }
  }
  // Neither file may exist: check the public one first so a refusal leaves nothing behind.
  struct stat status {};
  if (::lstat(public_path.c_str(), &status) == 0) {
    return Error{ErrorKind::io,
                 fmt::format("cannot write key file `{}`: it exists already (keys are never overwritten)", public_path)};
  }
  std::string secret_text = pair.secret.to_text();
  auto secret = write_new_file(secret_path, secret_text, 0600);
  sodium_memzero(secret_text.data(), secret_text.size());
  if (!secret) return secret;
  auto public_file = write_new_file(public_path, pair.public_key.to_text(), 0644);
  if (!public_file) ::unlink(secret_path.c_str());
  return public_file;
}

// ---- manifests and signatures -----------------------------------------------------------------

std::string version_manifest(std::string_view policy, std::string_view content_sha256,
                             const std::vector<store::PolicyFile>& files) {
  std::string out = "gov-version-manifest-v1\n";
  append_field(out, policy);
  append_field(out, content_sha256);
  append_length(out, files.size());
  for (const store::PolicyFile& file : files) {
    append_field(out, file.path);
    append_field(out, hex_digest(file.text));
  }
  return out;
}

std::string object_manifest(std::string_view policy, std::string_view content_sha256, std::string_view object_key,
                            const store::Bytes& object) {
  std::string out = "gov-object-manifest-v1\n";
  append_field(out, policy);
  append_field(out, content_sha256);
  append_field(out, object_key);
  append_field(out, hex_digest(as_text(object)));
  return out;
}

store::Signature sign(const SecretKey& key, std::string_view manifest) {
  sodium_ready();  // a SecretKey exists, so a parse or generate already initialised libsodium
  store::Signature signature{key.public_key().key_id(), store::Bytes(kSignatureBytes)};
  crypto_sign_detached(signature.bytes.data(), nullptr, reinterpret_cast<const unsigned char*>(manifest.data()),
                       manifest.size(), key.bytes().data());
  return signature;
}

store::Signature sign_version(const SecretKey& key, std::string_view policy, std::string_view content_sha256,
                              const std::vector<store::PolicyFile>& files) {
  return sign(key, version_manifest(policy, content_sha256, files));
}

store::Signature sign_object(const SecretKey& key, std::string_view policy, std::string_view content_sha256,
                             std::string_view object_key, const store::Bytes& object) {
  return sign(key, object_manifest(policy, content_sha256, object_key, object));
}

Verification verify(const PublicKey& key, std::string_view manifest, const std::optional<store::Signature>& signature) {
  if (!signature) return {Verdict::not_signed, "not signed"};
  const std::string expected = key.key_id();
  if (signature->key_id != expected) {
    return {Verdict::other_key, fmt::format("signed by another key `{}`, not by the verify key `{}`",
                                            signature->key_id, expected)};
  }
  const bool valid = sodium_ready() && signature->bytes.size() == kSignatureBytes &&
                     crypto_sign_verify_detached(signature->bytes.data(),
                                                 reinterpret_cast<const unsigned char*>(manifest.data()),
                                                 manifest.size(), key.bytes().data()) == 0;
  if (valid) return {Verdict::verified, ""};
  return {Verdict::bad_signature,
          fmt::format("the signature by key `{}` does not verify (the signed content or the signature was changed)",
                      expected)};
}

Verification verify_version(const PublicKey& key, std::string_view policy, std::string_view content_sha256,
                            const std::vector<store::PolicyFile>& files,
                            const std::optional<store::Signature>& signature) {
  return verify(key, version_manifest(policy, content_sha256, files), signature);
}

Verification verify_object(const PublicKey& key, std::string_view policy, std::string_view content_sha256,
                           std::string_view object_key, const store::Bytes& object,
                           const std::optional<store::Signature>& signature) {
  return verify(key, object_manifest(policy, content_sha256, object_key, object), signature);
}

}  // namespace gov::signing
