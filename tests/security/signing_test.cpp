// Issue 26, point 1: signed versions. Keys and key files, the signed manifests, the store's
// signature tables (migration, rollback), and the loader: cached native code runs only when
// signed by the verify key; a signature that does not verify refuses the load.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "compiler/jit/jit.hpp"
#include "compiler/driver/driver.hpp"
#include "runtime/signing/signing.hpp"
#include "compiler/support/sha256.hpp"
#include "runtime/store/store.hpp"
#include "tests/security/security_support.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
namespace signing = gov::signing;
namespace store = gov::store;
using gov::driver::CodeOrigin;
using gov::test::exec_sql;
using gov::test::Scratch;

namespace {

const char* const kWorkshop = "policies/examples/workshop-g5.gov";

/// The key id of a public key file.
std::string load_key_id(const std::string& path) {
  auto key = signing::load_public_key(path);
  REQUIRE(key.ok());
  return key.value().key_id();
}

signing::KeyPair new_keys() {
  auto pair = signing::generate_key_pair();
  REQUIRE(pair.ok());
  return std::move(pair.value());
}

/// The one cached object of the store: its key and bytes.
std::pair<std::string, store::Bytes> read_object(const std::string& db_path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT key, bytes FROM object", -1, &statement, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
  std::string key(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)));
  const auto* blob = static_cast<const uint8_t*>(sqlite3_column_blob(statement, 1));
  store::Bytes bytes(blob, blob + sqlite3_column_bytes(statement, 1));
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return {key, bytes};
}

/// Overwrites the object's bytes with a raw UPDATE, as anyone who can write the file can.
void write_object(const std::string& db_path, const std::string& key, const std::vector<uint8_t>& bytes) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "UPDATE object SET bytes = ?1 WHERE key = ?2", -1, &statement, nullptr) == SQLITE_OK);
  sqlite3_bind_blob(statement, 1, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(statement, 2, key.c_str(), -1, SQLITE_TRANSIENT);
  CHECK(sqlite3_step(statement) == SQLITE_DONE);
  sqlite3_finalize(statement);
  CHECK(sqlite3_changes(db) == 1);
  sqlite3_close(db);
}

/// Applies the workshop policy as policy `p` into a new store at `db`, signed with `key` when given.
void apply_workshop(const std::string& db, const signing::SecretKey* key) {
  gov::driver::Result loaded = gov::driver::load(gov::driver::Source::file(gov::test::repo_path(kWorkshop)));
  REQUIRE(loaded.ok());
  REQUIRE(loaded.policy->checked.ok());
  const gov::driver::CheckedPolicy& checked = loaded.policy->checked;
  auto opened = store::Store::open(db);
  REQUIRE(opened.ok());
  store::ApplyRequest request;
  request.policy = "p";
  request.author = "test";
  std::string warning;
  auto applied = gov::driver::apply_policy(opened.value(), checked, request, warning, key);
  INFO(warning);
  REQUIRE(applied.ok());
  REQUIRE(warning.empty());  // the JIT works here: the version has an object
}

store::OpenOptions read_only_options() {
  store::OpenOptions options;
  options.create = false;
  options.read_only = true;
  return options;
}

store::ApplyRequest request_of(const std::string& policy, std::vector<store::PolicyFile> files) {
  store::ApplyRequest request;
  request.policy = policy;
  request.files = std::move(files);
  request.author = "a";
  return request;
}

store::RollbackRequest rollback_to(int64_t version) {
  store::RollbackRequest request;
  request.policy = "p";
  request.version = version;
  request.author = "a";
  return request;
}

gov::driver::Result load(const std::string& db, const gov::driver::VerifyOptions& verify) {
  auto opened = store::Store::open(db, read_only_options());
  REQUIRE(opened.ok());
  return gov::driver::load(gov::driver::Source::stored(opened.value(), "p", std::nullopt, verify),
                           gov::driver::Request::running(gov::driver::BackEnd::jit));
}

gov::driver::VerifyOptions with_key(const signing::PublicKey& key, bool require = false) {
  gov::driver::VerifyOptions verify;
  verify.key = key;
  verify.require_signature = require;
  return verify;
}

bool has_tool(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

int shell(const std::string& command) {
  INFO(command);
  return std::system(command.c_str());
}

int file_mode(const std::string& path) {
  struct stat status {};
  REQUIRE(::stat(path.c_str(), &status) == 0);
  return static_cast<int>(status.st_mode & 07777);
}

}  // namespace

// ---- keys -----------------------------------------------------------------------------------

TEST_CASE("key pairs round-trip through their key files and are never overwritten", "[security][signing]") {
  Scratch dir("keys");
  const signing::KeyPair pair = new_keys();
  CHECK(pair.secret.public_key() == pair.public_key);
  CHECK(pair.public_key.key_id().size() == 16);
  CHECK(pair.public_key.key_id() ==
        gov::sha256_hex(std::string_view(reinterpret_cast<const char*>(pair.public_key.bytes().data()), 32))
            .substr(0, 16));
  REQUIRE(signing::write_key_pair(pair, dir / "k").ok());
  CHECK(file_mode(dir / "k.key") == 0600);
  CHECK(gov::test::read_text(dir / "k.pub").rfind("gov-ed25519-public-v1 ", 0) == 0);
  CHECK(gov::test::read_text(dir / "k.key").rfind("gov-ed25519-secret-v1 ", 0) == 0);
  auto secret = signing::load_secret_key(dir / "k.key");
  auto public_key = signing::load_public_key(dir / "k.pub");
  REQUIRE(secret.ok());
  REQUIRE(public_key.ok());
  CHECK(secret.value().bytes() == pair.secret.bytes());
  CHECK(public_key.value() == pair.public_key);
  // Never overwritten, whichever file exists already; a refusal leaves the other untouched.
  const std::string before = gov::test::read_text(dir / "k.key");
  auto again = signing::write_key_pair(new_keys(), dir / "k");
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message == fmt::format("cannot write key file `{}`: it exists already (keys are never overwritten)",
                                             dir / "k.pub"));
  CHECK(gov::test::read_text(dir / "k.key") == before);
  fs::remove(dir / "k.pub");
  CHECK_FALSE(signing::write_key_pair(new_keys(), dir / "k").ok());
  CHECK_FALSE(fs::exists(dir / "k.pub"));
  // A symbolic link planted where the secret key goes is not followed.
  fs::create_symlink(dir / "target", dir / "l.key");
  CHECK_FALSE(signing::write_key_pair(new_keys(), dir / "l").ok());
  CHECK_FALSE(fs::exists(dir / "target"));
  CHECK_FALSE(fs::exists(dir / "l.pub"));
}

TEST_CASE("key files that are not keys are refused with the cause", "[security][signing]") {
  Scratch dir("bad-keys");
  const signing::KeyPair pair = new_keys();
  REQUIRE(signing::write_key_pair(pair, dir / "k").ok());
  const std::string secret_text = pair.secret.to_text();
  const std::string public_text = pair.public_key.to_text();
  const std::string not_secret = "cannot read signing key `x`: not a gov Ed25519 secret key";
  const std::string not_public = "cannot read verify key `x`: not a gov Ed25519 public key";
  for (const std::string& text :
       {std::string(), std::string("gov-ed25519-secret-v1"), "gov-ed25519-secret-v2" + secret_text.substr(21),
        secret_text.substr(0, 30), secret_text.substr(0, 22) + "!" + secret_text.substr(23),
        secret_text + "\n", " " + secret_text, "gov-ed25519-secret-v1 " + public_text.substr(22)}) {
    INFO(text);
    auto key = signing::parse_secret_key(text, "x");
    REQUIRE_FALSE(key.ok());
    CHECK(key.error().message == not_secret);
  }
  CHECK(signing::parse_secret_key(secret_text.substr(0, secret_text.size() - 1), "x").ok());  // no final newline
  CHECK(signing::parse_secret_key(public_text, "x").error().message ==
        "cannot read signing key `x`: it is a public key; sign with the secret key (the `.key` file)");
  CHECK(signing::parse_public_key(secret_text, "x").error().message ==
        "cannot read verify key `x`: it is a secret key; verify with the public key (the `.pub` file)");
  for (const std::string& text : {std::string("hello\n"), public_text.substr(0, 40), "gov-ed25519-public-v1 " + secret_text.substr(22)}) {
    INFO(text);
    CHECK(signing::parse_public_key(text, "x").error().message == not_public);
  }
  // A secret key whose public half is not its seed's.
  std::array<uint8_t, signing::kSecretKeyBytes> bytes = pair.secret.bytes();
  bytes[40] ^= 1;
  CHECK(signing::parse_secret_key(signing::SecretKey(bytes).to_text(), "x").error().message ==
        "cannot read signing key `x`: not a gov Ed25519 secret key (its public half does not match its seed)");
  // Readable by group or others: refused, as ssh does; a missing file names the cause.
  ::chmod((dir / "k.key").c_str(), 0640);
  CHECK(signing::load_secret_key(dir / "k.key").error().message ==
        fmt::format("cannot read signing key `{}`: it is accessible by group or others (mode 0640); make it "
                    "private with `chmod 600`",
                    dir / "k.key"));
  // A public key given as the signing key (readable by all, as a .pub is) is said to be one:
  // chmod would not help.
  REQUIRE(::chmod((dir / "k.pub").c_str(), 0644) == 0);
  CHECK(signing::load_secret_key(dir / "k.pub").error().message ==
        fmt::format("cannot read signing key `{}`: it is a public key; sign with the secret key (the `.key` file)",
                    dir / "k.pub"));
  CHECK(signing::load_secret_key(dir / "missing.key").error().message ==
        fmt::format("cannot read signing key `{}`: No such file or directory", dir / "missing.key"));
  gov::test::write_text(dir / "big.pub", std::string(1 << 20, 'a'));
  CHECK(signing::load_public_key(dir / "big.pub").error().message ==
        fmt::format("cannot read verify key `{}`: not a gov Ed25519 public key", dir / "big.pub"));
  // A FIFO without a writer is refused, not waited on (opening it blocked forever).
  REQUIRE(::mkfifo((dir / "fifo.key").c_str(), 0600) == 0);
  CHECK(signing::load_secret_key(dir / "fifo.key").error().message ==
        fmt::format("cannot read signing key `{}`: not a regular file", dir / "fifo.key"));
  CHECK(signing::load_public_key(dir / "fifo.key").error().message ==
        fmt::format("cannot read verify key `{}`: not a regular file", dir / "fifo.key"));
}

// ---- signatures -----------------------------------------------------------------------------

TEST_CASE("signatures verify and name the cause when they do not", "[security][signing]") {
  const signing::KeyPair pair = new_keys();
  const signing::KeyPair other = new_keys();
  const std::vector<store::PolicyFile> files = {{"p.gov", "policy"}, {"c.gov", "catalog"}};
  const std::string content = store::content_hash(files);
  const store::Signature signature = signing::sign_version(pair.secret, "p", content, files);
  CHECK(signature.key_id == pair.public_key.key_id());
  CHECK(signature.bytes.size() == signing::kSignatureBytes);
  CHECK(signing::verify_version(pair.public_key, "p", content, files, signature).ok());
  const auto not_signed = signing::verify_version(pair.public_key, "p", content, files, std::nullopt);
  CHECK(not_signed.verdict == signing::Verdict::not_signed);
  CHECK(not_signed.message == "not signed");
  const auto other_key = signing::verify_version(other.public_key, "p", content, files, signature);
  CHECK(other_key.verdict == signing::Verdict::other_key);
  CHECK(other_key.message == fmt::format("signed by another key `{}`, not by the verify key `{}`",
                                         pair.public_key.key_id(), other.public_key.key_id()));
  // Another key's signature relabelled with the verify key's id still does not verify.
  store::Signature forged = signing::sign_version(other.secret, "p", content, files);
  forged.key_id = pair.public_key.key_id();
  const auto bad = signing::verify_version(pair.public_key, "p", content, files, forged);
  CHECK(bad.verdict == signing::Verdict::bad_signature);
  CHECK(bad.message == fmt::format("the signature by key `{}` does not verify (the signed content or the signature "
                                   "was changed)",
                                   pair.public_key.key_id()));
  store::Signature truncated = signature;
  truncated.bytes.pop_back();
  CHECK(signing::verify_version(pair.public_key, "p", content, files, truncated).verdict ==
        signing::Verdict::bad_signature);
  const store::Bytes object = {1, 2, 3};
  const store::Signature object_signature = signing::sign_object(pair.secret, "p", content, "k", object);
  CHECK(signing::verify_object(pair.public_key, "p", content, "k", object, object_signature).ok());
  // A version signature is not an object signature.
  CHECK_FALSE(signing::verify_object(pair.public_key, "p", content, "k", object, signature).ok());
}

TEST_CASE("every manifest field changes what is signed", "[security][signing]") {
  const signing::KeyPair pair = new_keys();
  const std::vector<store::PolicyFile> files = {{"p.gov", "policy"}, {"c.gov", "catalog"}};
  const std::string content = store::content_hash(files);
  const store::Signature version = signing::sign_version(pair.secret, "p", content, files);
  const std::string other_content(64, 'a');
  struct Variant {
    std::string policy, content;
    std::vector<store::PolicyFile> files;
  };
  for (const Variant& v : std::vector<Variant>{
           {"q", content, files},
           {"p", other_content, files},
           {"p", content, {{"q.gov", "policy"}, {"c.gov", "catalog"}}},
           {"p", content, {{"p.gov", "policy!"}, {"c.gov", "catalog"}}},
           {"p", content, {{"p.gov", "policy"}}},
           {"p", content, {{"c.gov", "catalog"}, {"p.gov", "policy"}}},
           {"p", content, {{"p.gov", "policy"}, {"c.gov", "catalog"}, {"d.gov", ""}}},
       }) {
    CHECK(signing::version_manifest(v.policy, v.content, v.files) != signing::version_manifest("p", content, files));
    CHECK(signing::verify_version(pair.public_key, v.policy, v.content, v.files, version).verdict ==
          signing::Verdict::bad_signature);
  }
  // Length prefixes: moving bytes between fields changes the manifest.
  CHECK(signing::version_manifest("pa", content, {{"b", "x"}}) != signing::version_manifest("p", content, {{"ab", "x"}}));
  const store::Bytes object = {1, 2, 3};
  const store::Signature signed_object = signing::sign_object(pair.secret, "p", content, "key", object);
  CHECK(signing::verify_object(pair.public_key, "q", content, "key", object, signed_object).verdict ==
        signing::Verdict::bad_signature);
  CHECK_FALSE(signing::verify_object(pair.public_key, "p", other_content, "key", object, signed_object).ok());
  CHECK_FALSE(signing::verify_object(pair.public_key, "p", content, "key2", object, signed_object).ok());
  CHECK_FALSE(signing::verify_object(pair.public_key, "p", content, "key", {1, 2, 4}, signed_object).ok());
  CHECK(signing::version_manifest("p", content, files).rfind("gov-version-manifest-v1\n", 0) == 0);
  CHECK(signing::object_manifest("p", content, "key", object).rfind("gov-object-manifest-v1\n", 0) == 0);
}

// ---- the store ------------------------------------------------------------------------------

TEST_CASE("a schema 1 store is migrated to schema 2 and keeps its data", "[security][signing][store]") {
  Scratch dir("migrate");
  const std::string db = dir / "p.db";
  const std::vector<store::PolicyFile> files = {{"p.gov", "policy"}};
  {
    auto opened = store::Store::open(db);
    REQUIRE(opened.ok());
    store::ApplyRequest request = request_of("p", files);
    request.object = store::CompiledObject{"k", {1, 2, 3}};
    REQUIRE(opened.value().apply(request).ok());
  }
  // Exactly a schema 1 store: schema 2 only added the two signature tables.
  exec_sql(db, "DROP TABLE object_signature; DROP TABLE version_signature; PRAGMA user_version = 1;");
  auto read_only = store::Store::open(db, read_only_options());
  REQUIRE_FALSE(read_only.ok());
  CHECK(read_only.error().kind == store::ErrorKind::read_only);
  auto opened = store::Store::open(db);
  REQUIRE(opened.ok());
  auto version = opened.value().show("p");
  REQUIRE(version.ok());
  CHECK(version.value().files == files);
  CHECK(version.value().info.author == "a");
  CHECK_FALSE(version.value().signature);
  auto object = opened.value().get_signed_object("p", 1, "k");
  REQUIRE(object.ok());
  REQUIRE(object.value());
  CHECK(object.value()->bytes == store::Bytes{1, 2, 3});
  CHECK_FALSE(object.value()->signature);
  auto integrity = opened.value().integrity_check();
  REQUIRE(integrity.ok());
  CHECK(integrity.value() == "ok");
  // And it stores signatures now.
  REQUIRE(opened.value().put_object("p", 1, {"k", {4}, store::Signature{"id", {9}}}).ok());
  CHECK(opened.value().get_signed_object("p", 1, "k").value()->signature == store::Signature{"id", {9}});
}

TEST_CASE("signatures are stored with versions and objects and copied by a rollback", "[security][signing][store]") {
  Scratch dir("store");
  auto opened = store::Store::open(dir / "p.db");
  REQUIRE(opened.ok());
  store::Store& db = opened.value();
  const store::Signature v1{"key-a", store::Bytes(64, 1)};
  const store::Signature o1{"key-a", store::Bytes(64, 2)};
  store::ApplyRequest first = request_of("p", {{"p.gov", "one"}});
  first.object = store::CompiledObject{"k", {1}, o1};
  first.signature = v1;
  REQUIRE(db.apply(first).ok());
  store::ApplyRequest second = request_of("p", {{"p.gov", "two"}});
  second.object = store::CompiledObject{"k", {2}};
  REQUIRE(db.apply(second).ok());
  CHECK_FALSE(db.show("p", 2).value().signature);
  CHECK_FALSE(db.get_signed_object("p", 2, "k").value()->signature);
  // A rollback copies the files, the objects and their signatures.
  auto rolled = db.rollback(rollback_to(1));
  REQUIRE(rolled.ok());
  CHECK(rolled.value().version == 3);
  CHECK(db.show("p", 3).value().signature == v1);
  auto copied = db.get_signed_object("p", 3, "k");
  REQUIRE(copied.value());
  CHECK(copied.value()->bytes == store::Bytes{1});
  CHECK(copied.value()->signature == o1);
  // Replacing an object replaces its signature; an unsigned replacement removes it.
  const store::Signature o2{"key-b", store::Bytes(64, 3)};
  REQUIRE(db.put_object("p", 3, {"k", {5}, o2}).ok());
  CHECK(db.get_signed_object("p", 3, "k").value()->signature == o2);
  REQUIRE(db.put_object("p", 3, {"k", {6}}).ok());
  CHECK_FALSE(db.get_signed_object("p", 3, "k").value()->signature);
  // The same bytes again without a signature keep it: it still covers them.
  REQUIRE(db.put_object("p", 3, {"k", {7}, o2}).ok());
  REQUIRE(db.put_object("p", 3, {"k", {7}}).ok());
  CHECK(db.get_signed_object("p", 3, "k").value()->signature == o2);
  CHECK(db.get_signed_object("p", 1, "k").value()->signature == o1);  // the original keeps its own
  CHECK_FALSE(db.get_signed_object("p", 3, "none").value());
  // The same content applied again with a signature signs the active version.
  store::ApplyRequest again = request_of("p", {{"p.gov", "two"}});
  again.signature = store::Signature{"key-c", store::Bytes(64, 4)};
  REQUIRE(db.apply(request_of("p", {{"p.gov", "two"}})).ok());
  auto unchanged = db.apply(again);
  REQUIRE(unchanged.ok());
  CHECK_FALSE(unchanged.value().created);
  CHECK(db.show("p").value().signature == again.signature);
  store::ApplyRequest no_key_id = request_of("p", {{"p.gov", "x"}});
  no_key_id.signature = store::Signature{"", {}};
  CHECK(db.apply(no_key_id).error().kind == store::ErrorKind::invalid);
}

// ---- loading --------------------------------------------------------------------------------

TEST_CASE("a wrapped native object with a recomputed digest runs only without signatures", "[security][signing]") {
  for (const char* tool : {"objcopy", "ld", "cc"}) {
    if (!has_tool(tool)) {
      WARN("skipped: `" << tool << "` is not installed (binutils and a C compiler are needed to build the wrapped object)");
      return;
    }
  }
  Scratch dir("tamper");
  const std::string db = dir / "p.db";
  const signing::KeyPair keys = new_keys();
  apply_workshop(db, &keys.secret);
  const auto signed_load = load(db, with_key(keys.public_key, /*require=*/true));
  REQUIRE(signed_load.ok());
  CHECK(signed_load.policy->code == CodeOrigin::cached);
  const int32_t honest = signed_load.policy->evaluator->priority(0);

  // The attack: take the stored object, rename `gov_priority` and link a wrapper around it,
  // then write it back with its digest recomputed (ObjectCode::serialize does what an attacker
  // would do by hand: the digest is unkeyed).
  auto [key, stored] = read_object(db);
  auto object = gov::jit::ObjectCode::deserialize(stored);
  REQUIRE(object.ok());
  gov::test::write_text(dir / "original.o", std::string(object.value().bytes.begin(), object.value().bytes.end()));
  gov::test::write_text(dir / "wrapper.c",
                        "int gov_priority_original(int class_index);\n"
                        "int gov_priority(int class_index) { return gov_priority_original(class_index) + 1000000; }\n");
  REQUIRE(shell("nm '" + dir / "original.o" + "' | grep -q ' T gov_priority$'") == 0);
  REQUIRE(shell("objcopy --redefine-sym gov_priority=gov_priority_original '" + dir / "original.o" + "' '" +
                dir / "renamed.o" + "'") == 0);
  REQUIRE(shell("cc -c -O2 -fPIC -fno-asynchronous-unwind-tables -o '" + dir / "wrapper.o" + "' '" + dir / "wrapper.c" +
                "'") == 0);
  REQUIRE(shell("ld -r -o '" + dir / "wrapped.o" + "' '" + dir / "renamed.o" + "' '" + dir / "wrapper.o" + "'") == 0);
  const std::string wrapped = gov::test::read_text(dir / "wrapped.o");
  gov::jit::ObjectCode evil = object.value();
  evil.bytes.assign(wrapped.begin(), wrapped.end());
  const std::vector<uint8_t> evil_bytes = evil.serialize();
  write_object(db, key, evil_bytes);

  // (a) Before signatures the loader executed it: the digest holds and the JIT links it.
  auto reread = gov::jit::ObjectCode::deserialize(read_object(db).second);
  REQUIRE(reread.ok());
  CodeOrigin origin = CodeOrigin::interpreter;
  std::string warning;
  auto evaluator = gov::driver::make_evaluator(signed_load.policy->module, gov::driver::BackEnd::jit, &reread.value(),
                                              origin, warning);
  REQUIRE(evaluator);
  CHECK(origin == CodeOrigin::cached);
  CHECK(evaluator->priority(0) == honest + 1000000);  // the attacker's code ran

  // (b) With the verify key the load is refused, naming the object and the key.
  const auto refused = load(db, with_key(keys.public_key));
  REQUIRE(refused.error);
  CHECK(refused.error->kind == gov::driver::ErrorKind::signature);
  CHECK(refused.error->message ==
        fmt::format("version 1 of policy `p`: cached object `{}`: the signature by key `{}` does not verify (the "
                    "signed content or the signature was changed)",
                    key, keys.public_key.key_id()));
  // Without a key the object is never executed: the policy is compiled from its sources.
  const auto unverified = load(db, {});
  REQUIRE(unverified.ok());
  CHECK(unverified.policy->code == CodeOrigin::compiled);
  CHECK(unverified.policy->code_note == "stored native code not run: no verify key configured");
  CHECK(unverified.policy->evaluator->priority(0) == honest);
  // Removing the object's signature as well: not executed, and said so.
  exec_sql(db, "DELETE FROM object_signature");
  const auto unsigned_object = load(db, with_key(keys.public_key));
  REQUIRE(unsigned_object.ok());
  CHECK(unsigned_object.policy->code == CodeOrigin::compiled);
  CHECK(unsigned_object.policy->code_note == "stored native code not run: the cached object is not signed");
  CHECK(unsigned_object.policy->evaluator->priority(0) == honest);
}

TEST_CASE("a version signature that does not verify refuses the load", "[security][signing]") {
  Scratch dir("refuse");
  const std::string db = dir / "p.db";
  const signing::KeyPair keys = new_keys();
  const signing::KeyPair other = new_keys();
  apply_workshop(db, &keys.secret);
  REQUIRE(load(db, with_key(keys.public_key)).ok());
  // Signed by another key: refused with both ids, even without require_signature.
  const auto wrong_key = load(db, with_key(other.public_key));
  REQUIRE(wrong_key.error);
  CHECK(wrong_key.error->kind == gov::driver::ErrorKind::signature);
  CHECK(wrong_key.error->message == fmt::format("version 1 of policy `p`: signed by another key `{}`, not by the verify "
                                                "key `{}`",
                                                keys.public_key.key_id(), other.public_key.key_id()));
  for (auto back_end : {gov::driver::BackEnd::jit, gov::driver::BackEnd::interpreter}) {
    auto opened = store::Store::open(db, read_only_options());
    REQUIRE(opened.ok());
    CHECK_FALSE(gov::driver::load(gov::driver::Source::stored(opened.value(), "p", std::nullopt, with_key(other.public_key)),
                                  gov::driver::Request::running(back_end))
                    .ok());
  }
  const std::string does_not_verify =
      fmt::format("version 1 of policy `p`: the signature by key `{}` does not verify (the signed content or the "
                  "signature was changed)",
                  keys.public_key.key_id());
  // A changed signature byte.
  exec_sql(db, "UPDATE version_signature SET signature = zeroblob(64)");
  CHECK(load(db, with_key(keys.public_key)).error->message == does_not_verify);
  // Changed source text (with the content hash recomputed would need a new version row: the
  // signature covers each file's hash, so the text alone is enough to refuse).
  Scratch dir2("refuse-text");
  const std::string db2 = dir2 / "p.db";
  apply_workshop(db2, &keys.secret);
  exec_sql(db2, "UPDATE source SET text = CAST(text || ' ' AS BLOB)");
  const auto changed = load(db2, with_key(keys.public_key));
  REQUIRE(changed.error);
  CHECK(changed.error->message == does_not_verify);
}

TEST_CASE("without a verified signature cached native code never runs", "[security][signing]") {
  Scratch dir("unsigned");
  const std::string db = dir / "p.db";
  const signing::KeyPair keys = new_keys();
  apply_workshop(db, nullptr);
  const auto with = load(db, with_key(keys.public_key));
  REQUIRE(with.ok());
  CHECK(with.policy->code == CodeOrigin::compiled);
  CHECK(with.policy->code_note == "stored native code not run: version 1 is not signed");
  const auto without = load(db, {});
  REQUIRE(without.ok());
  CHECK(without.policy->code == CodeOrigin::compiled);
  CHECK(without.policy->code_note == "stored native code not run: no verify key configured");
  // require_signature: an unsigned version, or no key to check with, is refused.
  const auto required = load(db, with_key(keys.public_key, /*require=*/true));
  REQUIRE(required.error);
  CHECK(required.error->message ==
        fmt::format("version 1 of policy `p` is not signed and a signature by key `{}` is required",
                    keys.public_key.key_id()));
  gov::driver::VerifyOptions no_key;
  no_key.require_signature = true;
  CHECK(load(db, no_key).error->message ==
        "version 1 of policy `p`: a signature is required but no verify key is configured");
  // A signed version loads its cached object; its rollback copy does too (same content).
  Scratch dir2("signed");
  const std::string signed_db = dir2 / "p.db";
  apply_workshop(signed_db, &keys.secret);
  {
    auto opened = store::Store::open(signed_db);
    REQUIRE(opened.ok());
    REQUIRE(opened.value().apply(request_of("p", {{"p.gov", "x"}})).ok());
    REQUIRE(opened.value().rollback(rollback_to(1)).ok());
  }
  const auto rolled = load(signed_db, with_key(keys.public_key, /*require=*/true));
  REQUIRE(rolled.ok());
  CHECK(rolled.policy->version == 3);
  CHECK(rolled.policy->code == CodeOrigin::cached);
}

// ---- the command line -------------------------------------------------------------------------

TEST_CASE("gov keygen apply --sign-key and simulate --verify-key --require-signature", "[security][signing][cli]") {
  Scratch dir("cli");
  const std::string prefix = dir / "keys/signing";
  auto keygen = gov::test::run_gov("keygen --out '" + prefix + "'");
  INFO(keygen.err);
  REQUIRE(keygen.exit_code == 0);
  auto key = signing::load_public_key(prefix + ".pub");
  REQUIRE(key.ok());
  CHECK(keygen.out == "key id " + key.value().key_id() + "\n");
  CHECK(file_mode(prefix + ".key") == 0600);
  auto refused = gov::test::run_gov("keygen --out '" + prefix + "'");
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("it exists already (keys are never overwritten)") != std::string::npos);

  const std::string trace = dir / "trace.json";
  gov::test::write_text(trace, "{\"events\": []}\n");
  const std::string unsigned_db = dir / "unsigned.db";
  auto applied = gov::test::run_gov("apply " + std::string(kWorkshop) + " --db '" + unsigned_db + "'");
  REQUIRE(applied.exit_code == 0);
  CHECK(applied.err.find("notice: version 1 is not signed; controllers that require signatures will refuse it "
                         "(gov keygen, --sign-key)") != std::string::npos);
  const std::string verify = " --verify-key '" + prefix + ".pub' --require-signature";
  auto simulate = gov::test::run_gov("simulate --db '" + unsigned_db + "' --trace '" + trace + "'" + verify);
  CHECK(simulate.exit_code == 1);
  CHECK(simulate.out.empty());
  CHECK(simulate.err == fmt::format("error: version 1 of policy `workshop-g5` is not signed and a signature by key `{}` "
                                    "is required\n",
                                    key.value().key_id()));
  for (const std::string command : {"show --inspect", "diff 1 1"}) {
    INFO(command);
    auto result = gov::test::run_gov(command + " --db '" + unsigned_db + "'" + verify);
    CHECK(result.exit_code == 1);
    CHECK(result.out.empty());
    CHECK(result.err.find("is not signed and a signature by key") != std::string::npos);
  }

  const std::string signed_db = dir / "signed.db";
  auto signed_apply =
      gov::test::run_gov("apply " + std::string(kWorkshop) + " --db '" + signed_db + "' --sign-key '" + prefix + ".key'");
  INFO(signed_apply.err);
  REQUIRE(signed_apply.exit_code == 0);
  CHECK(signed_apply.err.find("signed version 1 with key `" + key.value().key_id() + "`") != std::string::npos);
  auto trusted = gov::test::run_gov("simulate --db '" + signed_db + "' --trace '" + trace + "'" + verify);
  CHECK(trusted.exit_code == 0);
  CHECK(trusted.err.find("loaded cached native code (no codegen)") != std::string::npos);
  auto untrusted = gov::test::run_gov("simulate --db '" + signed_db + "' --trace '" + trace + "'");
  CHECK(untrusted.exit_code == 0);
  CHECK(untrusted.err.find("compiled native code (stored native code not run: no verify key configured)") != std::string::npos);
  // $GOV_VERIFY_KEY names the key too; a key that cannot be read is a usage error.
  auto from_env = gov::test::run_gov("simulate --db '" + signed_db + "' --trace '" + trace + "' --verify-key '" +
                                     dir / "missing.pub" + "'");
  CHECK(from_env.exit_code == 2);
  CHECK(from_env.err == fmt::format("error: cannot read verify key `{}`: No such file or directory\n", dir / "missing.pub"));
}

TEST_CASE("an unchanged apply with another key does not replace the version's signature without --resign",
          "[security][signing][cli]") {
  // An SRE helper's finding: a no-op deploy with a stale $GOV_SIGNING_KEY replaced the production
  // signature, with no new version and nothing in the log; every controller that restarted with
  // the production verify key then refused the store.
  Scratch dir("resign");
  for (const char* name : {"production", "staging"}) {
    REQUIRE(gov::test::run_gov(fmt::format("keygen --out '{}'", dir / name)).exit_code == 0);
  }
  const std::string production = load_key_id(dir / "production.pub");
  const std::string staging = load_key_id(dir / "staging.pub");
  const std::string db = " --db '" + dir / "store.db" + "'";
  const std::string apply = "apply " + std::string(kWorkshop) + db + " --sign-key ";
  REQUIRE(gov::test::run_gov(apply + "'" + dir / "production.key" + "'").exit_code == 0);
  // The same key again, and any key on an unsigned version, are fine.
  CHECK(gov::test::run_gov(apply + "'" + dir / "production.key" + "'").exit_code == 0);

  const gov::test::CommandResult refused = gov::test::run_gov(apply + "'" + dir / "staging.key" + "'");
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.empty());
  CHECK(refused.err == fmt::format("error: conflict: version 1 of `workshop-g5` has this content and is signed by key "
                                   "`{0}`; signing it with key `{1}` would replace that signature, and controllers "
                                   "that verify with `{0}` would refuse the version (give --resign to replace it)\n",
                                   production, staging));
  const std::string trace = dir / "trace.json";
  gov::test::write_text(trace, "{\"events\": []}\n");
  const std::string simulate = "simulate" + db + " --trace '" + trace + "' --require-signature --verify-key ";
  CHECK(gov::test::run_gov(simulate + "'" + dir / "production.pub" + "'").exit_code == 0);

  const gov::test::CommandResult replaced = gov::test::run_gov(apply + "'" + dir / "staging.key" + "' --resign");
  INFO(replaced.err);
  CHECK(replaced.exit_code == 0);
  CHECK(replaced.out == "unchanged: `workshop-g5` is at version 1 with the same content\n");
  CHECK(gov::test::run_gov(simulate + "'" + dir / "production.pub" + "'").exit_code == 1);
  CHECK(gov::test::run_gov(simulate + "'" + dir / "staging.pub" + "'").exit_code == 0);
}
