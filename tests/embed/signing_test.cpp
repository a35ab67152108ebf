// Signed versions through the embedding API (issue 26, point 1): gov::Options and the C
// gov_open_options take the verify key and require_signature; cached native code runs only
// when the store's version and object are signed by that key.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>
#include <gov/gov.h>

#include <string>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

const std::string kWorkshop = "policies/examples/workshop-g5.gov";

gov::ErrorCode open_error(const std::string& db, const gov::Options& options, std::string& message) {
  try {
    gov::Engine::open_store(db, options);
  } catch (const gov::Error& error) {
    message = error.what();
    return error.code();
  }
  return gov::ErrorCode::internal;  // opened: not what the callers expect
}

}  // namespace

TEST_CASE("embedding: cached native code runs only when signed by the verify key", "[embed][security][signing]") {
  gov::test::ScratchDir dir("embed-signing");
  const std::string signed_db = dir / "signed.db";
  const std::string unsigned_db = dir / "unsigned.db";
  const gov::signing::KeyPair keys = gov::test::write_test_key_pair(dir / "signing");
  const gov::signing::KeyPair other = gov::test::write_test_key_pair(dir / "other");
  gov::test::apply_policy_file(signed_db, gov::test::repo_path(kWorkshop), "workshop-g5", &keys.secret);
  gov::test::apply_policy_file(unsigned_db, gov::test::repo_path(kWorkshop), "workshop-g5");

  gov::Options verified;
  verified.verify_key_path = dir / "signing.pub";
  verified.require_signature = true;
  CHECK(gov::Engine::open_store(signed_db, verified).policy().cached_code);
  CHECK_FALSE(gov::Engine::open_store(signed_db).policy().cached_code);  // no key: compiled
  gov::Options key_only;
  key_only.verify_key_path = dir / "signing.pub";
  CHECK_FALSE(gov::Engine::open_store(unsigned_db, key_only).policy().cached_code);  // not signed: compiled

  std::string message;
  CHECK(open_error(unsigned_db, verified, message) == gov::ErrorCode::store);
  CHECK(message == "version 1 of policy `workshop-g5` is not signed and a signature by key `" + keys.public_key.key_id() +
                       "` is required");
  gov::Options wrong = verified;
  wrong.verify_key_path = dir / "other.pub";
  wrong.require_signature = false;
  CHECK(open_error(signed_db, wrong, message) == gov::ErrorCode::store);
  CHECK(message == "version 1 of policy `workshop-g5`: signed by another key `" + keys.public_key.key_id() +
                       "`, not by the verify key `" + other.public_key.key_id() + "`");
  gov::Options missing;
  missing.verify_key_path = dir / "missing.pub";
  CHECK(open_error(signed_db, missing, message) == gov::ErrorCode::io);
  gov::Options secret;
  secret.verify_key_path = dir / "signing.key";
  CHECK(open_error(signed_db, secret, message) == gov::ErrorCode::invalid_argument);
  CHECK(message.find("it is a secret key") != std::string::npos);
  gov::Options file_options;
  file_options.require_signature = true;
  CHECK_THROWS_AS(gov::Engine::compile_file(gov::test::repo_path(kWorkshop), file_options), gov::Error);
}

TEST_CASE("C: gov_open_options carries the verify key and require_signature", "[embed][c][security][signing]") {
  gov::test::ScratchDir dir("c-signing");
  const std::string signed_db = dir / "signed.db";
  const std::string unsigned_db = dir / "unsigned.db";
  const gov::signing::KeyPair keys = gov::test::write_test_key_pair(dir / "signing");
  gov::test::apply_policy_file(signed_db, gov::test::repo_path(kWorkshop), "workshop-g5", &keys.secret);
  gov::test::apply_policy_file(unsigned_db, gov::test::repo_path(kWorkshop), "workshop-g5");
  gov_open_options options;
  gov_open_options_init(&options);
  CHECK(options.verify_key_path == nullptr);
  CHECK(options.require_signature == 0);
  const std::string pub = dir / "signing.pub";
  options.verify_key_path = pub.c_str();
  options.require_signature = 1;
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open(signed_db.c_str(), &options, &engine) == GOV_OK);
  gov_engine_close(engine);
  engine = nullptr;
  CHECK(gov_engine_open(unsigned_db.c_str(), &options, &engine) == GOV_ERROR_STORE);
  CHECK(engine == nullptr);
  CHECK(std::string(gov_last_error()).find("is not signed and a signature by key") != std::string::npos);
}
