// `gov keygen`: a new Ed25519 key pair for signing stored versions (`gov apply --sign-key`).
#include <fmt/format.h>

#include "runtime/signing/signing.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

int run_keygen(const Args& args) {
  if (!args.positional.empty()) {
    fmt::print(stderr, "error: `gov keygen` takes no arguments (the files are named by --out PREFIX)\n");
    return kUsage;
  }
  const std::string prefix = args.value("out").value_or(".gov/signing");
  if (prefix.empty()) {
    fmt::print(stderr, "error: --out needs a path prefix\n");
    return kUsage;
  }
  auto pair = signing::generate_key_pair();
  if (!pair.ok()) {
    fmt::print(stderr, "error: {}\n", pair.error().message);
    return kFailed;
  }
  auto written = signing::write_key_pair(pair.value(), prefix);
  if (!written.ok()) {
    fmt::print(stderr, "error: {}\n", written.error().message);
    return kFailed;
  }
  fmt::print("key id {}\n", pair.value().public_key.key_id());
  fmt::print(stderr,
             "wrote `{0}.key` (secret: sign with `gov apply --sign-key {0}.key`) and `{0}.pub` (give it to "
             "controllers: --verify-key, gov::Options::verify_key_path)\n",
             prefix);
  return kOk;
}

}  // namespace

Command keygen_command() {
  return {{"keygen", "gov keygen [--out PREFIX]",
           "Make an Ed25519 key pair for signing stored versions.",
           "Writes PREFIX.key (the secret key, mode 0600) and PREFIX.pub (the public key) and prints the key id\n"
           "(the first 16 hex digits of the public key's SHA-256). Never overwrites a file or follows a symbolic\n"
           "link. `gov apply --sign-key PREFIX.key` signs versions; controllers verify with PREFIX.pub and run\n"
           "cached native code only when its signatures verify.",
           {{"out", "PREFIX", "where to write the key files (default .gov/signing)"}}},
          run_keygen};
}

}  // namespace gov::cli
