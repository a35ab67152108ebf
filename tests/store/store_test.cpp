// The policy store's behaviour: round trips, idempotent apply, conflicts, rollback, objects,
// the audit log, validation and batches.
#include <fmt/format.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "compiler/support/sha256.hpp"
#include "runtime/store/store.hpp"
#include "tests/security/security_support.hpp"
#include "tests/store/store_fixture.hpp"

namespace gov::store {
namespace {

using test::apply_request;
using test::marked_files;
using test::open_or_fail;

ApplyResult must(Result<ApplyResult> result) {
  if (!result) FAIL(result.error().message);
  return *result;
}

RollbackRequest rollback_request(std::string_view policy, int64_t version) {
  RollbackRequest request;
  request.policy = std::string(policy);
  request.version = version;
  request.author = "tester";
  request.message = fmt::format("back to {}", version);
  return request;
}

TEST_CASE("store: apply, log, show and rollback round trip", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend, ".gov/policies.db");  // SQLite: the directory does not exist yet
  const std::string path = location.url();
  Store store = open_or_fail(path);

  // Byte for byte: a NUL, invalid UTF-8 and CR LF survive.
  std::vector<PolicyFile> first = marked_files("one", 2);
  first[1].text += std::string("\0\xff\xfe\r\n", 5);
  auto v1 = must(store.apply(apply_request("team-a", first, "first one")));
  CHECK(v1.version == 1);
  CHECK(v1.created);
  CHECK_FALSE(v1.previous);
  CHECK(v1.content_sha256 == content_hash(first));
  auto v2 = must(store.apply(apply_request("team-a", marked_files("two"), "second two")));
  auto v3 = must(store.apply(apply_request("team-a", marked_files("three"), "third three")));
  CHECK(v2.version == 2);
  CHECK(v3.version == 3);
  CHECK(v3.previous == 2);

  auto log = store.log("team-a", 10);
  REQUIRE(log);
  REQUIRE(log->size() == 3);
  CHECK((*log)[0].number == 3);
  CHECK((*log)[0].active);
  CHECK((*log)[0].parent == 2);
  CHECK((*log)[2].number == 1);
  CHECK_FALSE((*log)[2].parent);
  CHECK_FALSE((*log)[2].active);
  CHECK((*log)[2].author == "tester");
  CHECK((*log)[2].message == "first one");
  CHECK((*log)[2].created_ms > 0);

  auto shown = store.show("team-a", 1);
  REQUIRE(shown);
  CHECK(shown->files == first);
  CHECK(shown->info.content_sha256 == v1.content_sha256);

  auto back = must(store.rollback(rollback_request("team-a", 1)));
  CHECK(back.created);
  CHECK(back.version == 4);
  CHECK(back.previous == 3);
  CHECK(back.content_sha256 == v1.content_sha256);

  // Reopened, the store shows the same history.
  store = open_or_fail(path);
  auto active = store.show("team-a");
  REQUIRE(active);
  CHECK(active->info.number == 4);
  CHECK(active->info.active);
  CHECK(active->info.parent == 3);
  CHECK(active->info.restored_from == 1);
  CHECK(active->info.content_sha256 == v1.content_sha256);
  CHECK(active->info.message == "back to 1");
  CHECK(active->files == first);
  auto summary = store.active("team-a");
  REQUIRE(summary);
  CHECK(summary->number == 4);
  CHECK(test::integrity(store) == "ok");
}

TEST_CASE("store: applying the same content twice creates one version", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  auto first = must(store.apply(apply_request("p", marked_files("same"))));
  auto second = must(store.apply(apply_request("p", marked_files("same"))));
  CHECK(first.created);
  CHECK_FALSE(second.created);
  CHECK(second.version == 1);
  CHECK(second.previous == 1);
  CHECK(store.log("p", 10)->size() == 1);
  CHECK(store.audit("p", 10)->size() == 1);

  SECTION("the caller's canonical hash decides: a reformatting with the same hash is no change") {
    ApplyRequest request = apply_request("p", marked_files("same, reformatted"));
    request.content_sha256 = first.content_sha256;
    auto again = must(store.apply(request));
    CHECK_FALSE(again.created);
    CHECK(store.show("p")->files == marked_files("same"));
  }
  SECTION("content equal to an older, inactive version is a new version") {
    must(store.apply(apply_request("p", marked_files("other"))));
    auto back = must(store.apply(apply_request("p", marked_files("same"))));
    CHECK(back.created);
    CHECK(back.version == 3);
    CHECK(back.content_sha256 == first.content_sha256);
  }
}

TEST_CASE("store: an unchanged apply keeps another key's signature unless told to replace it", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  const auto signed_by = [](std::string key_id) {
    ApplyRequest request = apply_request("p", marked_files("same"));
    request.signature = Signature{std::move(key_id), Bytes(64, 7)};
    return request;
  };
  must(store.apply(apply_request("p", marked_files("same"))));  // unsigned: any key may sign it
  must(store.apply(signed_by("k1")));
  must(store.apply(signed_by("k1")));  // the same key again
  CHECK(store.show("p")->signature->key_id == "k1");
  auto refused = store.apply(signed_by("k2"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == ErrorKind::conflict);
  CHECK(refused.error().message.find("signed by key `k1`; signing it with key `k2` would replace that signature") !=
        std::string::npos);
  CHECK(store.show("p")->signature->key_id == "k1");
  ApplyRequest replace = signed_by("k2");
  replace.replace_signature = true;
  CHECK_FALSE(must(store.apply(replace)).created);
  CHECK(store.show("p")->signature->key_id == "k2");
  CHECK(store.log("p", 10)->size() == 1);
}

TEST_CASE("store: expect_version conflicts name both versions and write nothing", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  ApplyRequest request = apply_request("p", marked_files("one"));
  request.expect_version = 0;  // a new policy
  must(store.apply(request));
  request = apply_request("p", marked_files("two"));
  request.expect_version = 1;
  must(store.apply(request));

  request = apply_request("p", marked_files("three"));
  request.expect_version = 1;
  auto stale = store.apply(request);
  REQUIRE_FALSE(stale);
  CHECK(stale.error().kind == ErrorKind::conflict);
  CHECK(stale.error().message == "policy `p` is at version 2, expected version 1");

  request.expect_version = 0;
  auto not_new = store.apply(request);
  REQUIRE_FALSE(not_new);
  CHECK(not_new.error().message == "policy `p` is at version 2, expected no version");

  ApplyRequest fresh = apply_request("q", marked_files("q"));
  fresh.expect_version = 3;
  auto missing = store.apply(fresh);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == ErrorKind::conflict);
  CHECK(missing.error().message == "policy `q` has no version, expected version 3");

  RollbackRequest rollback = rollback_request("p", 1);
  rollback.expect_version = 1;
  auto stale_rollback = store.rollback(rollback);
  REQUIRE_FALSE(stale_rollback);
  CHECK(stale_rollback.error().kind == ErrorKind::conflict);

  CHECK(store.log("p", 10)->size() == 2);
  CHECK(store.active("p")->number == 2);
  CHECK(store.policies()->size() == 1);  // the conflicting apply did not create `q`
}

TEST_CASE("store: rollback makes a new version with the old content hash", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  auto v1 = must(store.apply(apply_request("p", marked_files("one"))));
  must(store.apply(apply_request("p", marked_files("two"))));

  auto back = must(store.rollback(rollback_request("p", 1)));
  CHECK(back.created);
  CHECK(back.version == 3);
  CHECK(back.content_sha256 == v1.content_sha256);
  auto v3 = store.show("p", 3);
  REQUIRE(v3);
  CHECK(v3->info.content_sha256 == store.show("p", 1)->info.content_sha256);
  CHECK(v3->files == store.show("p", 1)->files);

  SECTION("rolling back to content that is already active changes nothing") {
    auto again = must(store.rollback(rollback_request("p", 1)));
    CHECK_FALSE(again.created);
    CHECK(again.version == 3);
    CHECK(store.log("p", 10)->size() == 3);
  }
  SECTION("rollback to an unknown version or policy is not_found") {
    auto unknown = store.rollback(rollback_request("p", 9));
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().kind == ErrorKind::not_found);
    CHECK(unknown.error().message == "policy `p` has no version 9 (the latest is 3)");
    auto nobody = store.rollback(rollback_request("nobody", 1));
    REQUIRE_FALSE(nobody);
    CHECK(nobody.error().kind == ErrorKind::not_found);
    CHECK(nobody.error().message == "no policy `nobody` in the store");
  }
}

TEST_CASE("store: compiled objects are cached per version and key", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  ApplyRequest request = apply_request("p", marked_files("one"));
  request.object = CompiledObject{"x86_64/gov-0.1", Bytes{0x7f, 'E', 'L', 'F', 0}};
  must(store.apply(request));

  auto object = store.get_object("p", 1, "x86_64/gov-0.1");
  REQUIRE(object);
  REQUIRE(*object);
  CHECK(**object == Bytes{0x7f, 'E', 'L', 'F', 0});
  auto missing_key = store.get_object("p", 1, "aarch64");
  REQUIRE(missing_key);
  CHECK_FALSE(*missing_key);
  auto missing_version = store.get_object("p", 7, "x86_64/gov-0.1");
  REQUIRE_FALSE(missing_version);
  CHECK(missing_version.error().kind == ErrorKind::not_found);

  REQUIRE(store.put_object("p", 1, {"x86_64/gov-0.1", Bytes{1, 2, 3}}));
  REQUIRE(store.put_object("p", 1, {"empty", Bytes{}}));
  CHECK(**store.get_object("p", 1, "x86_64/gov-0.1") == Bytes{1, 2, 3});
  CHECK(**store.get_object("p", 1, "empty") == Bytes{});
  CHECK(store.put_object("p", 1, {"", Bytes{1}}).error().kind == ErrorKind::invalid);

  // An unchanged apply still caches a new object on the active version.
  ApplyRequest same = apply_request("p", marked_files("one"));
  same.object = CompiledObject{"new-key", Bytes{9}};
  CHECK_FALSE(must(store.apply(same)).created);
  CHECK(**store.get_object("p", 1, "new-key") == Bytes{9});

  // A rollback carries the old version's objects over: same content, same code.
  must(store.apply(apply_request("p", marked_files("two"))));
  must(store.rollback(rollback_request("p", 1)));
  CHECK(**store.get_object("p", 3, "x86_64/gov-0.1") == Bytes{1, 2, 3});
  CHECK_FALSE(*store.get_object("p", 2, "x86_64/gov-0.1"));
}

TEST_CASE("store: the audit log records apply, rollback and activate, newest first", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  must(store.apply(apply_request("p", marked_files("one"), "m1")));
  must(store.apply(apply_request("p", marked_files("two"), "m2")));
  must(store.apply(apply_request("q", marked_files("q1"), "q1")));
  must(store.rollback(rollback_request("p", 1)));
  auto activated = must(store.activate("p", 2, "operator"));
  CHECK(activated.version == 2);
  CHECK(activated.previous == 3);
  CHECK_FALSE(activated.created);
  CHECK(store.active("p")->number == 2);
  CHECK(must(store.activate("p", 2, "operator")).previous == 2);  // a no-op, not audited

  auto entries = store.audit("p", 10);
  REQUIRE(entries);
  REQUIRE(entries->size() == 4);
  CHECK((*entries)[0].action == AuditAction::activate);
  CHECK((*entries)[0].version == 2);
  CHECK((*entries)[0].previous == 3);
  CHECK((*entries)[0].author == "operator");
  CHECK((*entries)[1].action == AuditAction::rollback);
  CHECK((*entries)[1].version == 3);
  CHECK((*entries)[1].message == "back to 1");
  CHECK((*entries)[2].action == AuditAction::apply);
  CHECK((*entries)[3].version == 1);
  CHECK_FALSE((*entries)[3].previous);
  CHECK((*entries)[3].policy == "p");
  CHECK((*entries)[0].id > (*entries)[1].id);

  auto page = store.audit("p", 2, (*entries)[1].id);
  REQUIRE(page);
  REQUIRE(page->size() == 2);
  CHECK(page->front().id == (*entries)[2].id);
  auto everything = store.audit("", 100);
  REQUIRE(everything);
  CHECK(everything->size() == 5);
  CHECK(audit_action_name(AuditAction::rollback) == "rollback");

  auto policies = store.policies();
  REQUIRE(policies);
  REQUIRE(policies->size() == 2);
  CHECK((*policies)[0].name == "p");
  CHECK((*policies)[0].active == 2);
  CHECK((*policies)[0].latest == 3);
  CHECK((*policies)[1].name == "q");
}

TEST_CASE("store: malformed requests are invalid and write nothing", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  auto kind_of = [&](ApplyRequest request) {
    auto result = store.apply(request);
    REQUIRE_FALSE(result);
    return result.error().kind;
  };
  CHECK(kind_of(apply_request("", marked_files("x"))) == ErrorKind::invalid);
  CHECK(kind_of(apply_request("p", {})) == ErrorKind::invalid);
  CHECK(kind_of(apply_request("p", {{"a.gov", "x"}, {"a.gov", "y"}})) == ErrorKind::invalid);
  CHECK(kind_of(apply_request("p", {{"", "x"}})) == ErrorKind::invalid);
  // One bound on names for both back ends: PostgreSQL refused a 9,000-byte name as `io` (its
  // notification payload) that SQLite kept, so that history could not be copied.
  CHECK(kind_of(apply_request(std::string(kMaxPolicyNameBytes + 1, 'a'), marked_files("x"))) == ErrorKind::invalid);
  CHECK(store.apply(apply_request(std::string(kMaxPolicyNameBytes, 'a'), marked_files("x"))));
  ApplyRequest bad_hash = apply_request("p", marked_files("x"));
  bad_hash.content_sha256 = "ABC";
  CHECK(kind_of(bad_hash) == ErrorKind::invalid);
  CHECK(store.policies()->size() == 1);  // the longest name
  CHECK(store.show("p").error().kind == ErrorKind::not_found);
  CHECK(store.log("p", 1).error().message == "no policy `p` in the store");
}

TEST_CASE("store: a batch commits all of its writes or none", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  auto failed = store.batch([](Store& inside) -> Result<void> {
    auto applied = inside.apply(apply_request("p", marked_files("one")));
    if (!applied) return applied.error();
    return Error{ErrorKind::invalid, "stop here"};
  });
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message == "stop here");
  CHECK(store.policies()->empty());

  auto done = store.batch([](Store& inside) -> Result<void> {
    for (int i = 0; i < 3; ++i) {
      auto applied = inside.apply(apply_request("p", marked_files(fmt::format("v{}", i))));
      if (!applied) return applied.error();
    }
    // A failed write inside rolls back only itself.
    ApplyRequest stale = apply_request("p", marked_files("stale"));
    stale.expect_version = 1;
    if (inside.apply(stale)) return Error{ErrorKind::invalid, "expected a conflict"};
    return {};
  });
  REQUIRE(done);
  CHECK(store.active("p")->number == 3);
  CHECK(store.log("p", 10)->size() == 3);
}

namespace {
/// Runs `sql` (written for SQLite; `gov_` tables on PostgreSQL) on the store behind gov's back.
void behind_gov(const test::StoreLocation& location, const std::string& sqlite_sql, const std::string& postgres_sql) {
  if (location.backend() == Backend::sqlite) {
    gov::test::exec_sql(location.url(), sqlite_sql);
  } else {
    test::postgres_exec(location.url(), postgres_sql);
  }
}

/// Whether version `number` of policy `p` reads back to its recorded content hash.
bool reads_back(Store& store, int64_t number) {
  auto version = store.show("p", number);
  return version && content_hash(version->files) == version->info.content_sha256;
}
}  // namespace

// A source row changed outside gov (or damaged) is shared by every version with that file: an
// apply reused it as it was, signed what it meant to write and made an unloadable version active,
// and applying again said "unchanged". A rollback copied a damaged version the same way. Now an
// apply writes the row again, and nothing is made active that does not read back to its hash.
TEST_CASE("store: an apply repairs a source row changed outside gov, and a rollback onto one is refused", "[store][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  Store store = open_or_fail(location.url());
  const std::vector<PolicyFile> one = marked_files("one");
  must(store.apply(apply_request("p", one)));
  // The imported file (shared with the next version) gains a line behind gov's back.
  const std::string sha = gov::sha256_hex(one[1].text);
  behind_gov(location, "UPDATE source SET text = CAST(text || x'0a23' AS BLOB) WHERE sha256 = '" + sha + "'",
             "UPDATE gov_source SET text = text || convert_to(E'\\n#', 'UTF8') WHERE sha256 = '" + sha + "'");
  REQUIRE_FALSE(reads_back(store, 1));

  SECTION("applying the same content again repairs the active version") {
    auto again = must(store.apply(apply_request("p", one)));
    CHECK_FALSE(again.created);
    CHECK(reads_back(store, 1));
  }
  SECTION("a new version with the file repairs it, and the old version with it") {
    std::vector<PolicyFile> two = one;
    two[0].text += "\n# two";
    must(store.apply(apply_request("p", two)));
    CHECK(reads_back(store, 2));
    CHECK(reads_back(store, 1));
  }
  SECTION("a rollback onto a version that does not read back is refused, and changes nothing") {
    std::vector<PolicyFile> two = marked_files("two");
    two[1] = one[1];  // shares the damaged import: repairs it
    must(store.apply(apply_request("p", two)));
    const std::string entry = gov::sha256_hex(one[0].text);
    behind_gov(location, "UPDATE source SET text = CAST(text || x'0a23' AS BLOB) WHERE sha256 = '" + entry + "'",
               "UPDATE gov_source SET text = text || convert_to(E'\\n#', 'UTF8') WHERE sha256 = '" + entry + "'");
    auto back = store.rollback(rollback_request("p", 1));
    REQUIRE_FALSE(back);
    CHECK(back.error().kind == ErrorKind::corrupt);
    CHECK(back.error().message.find("do not read back to the content hash") != std::string::npos);
    CHECK(store.log("p", 10)->size() == 2);
    CHECK(store.active("p")->number == 2);
  }
  // An SRE helper's finding: a rollback to the active content said "unchanged" while the active
  // version did not load anywhere.
  SECTION("a rollback to the content of a damaged active version is refused, not \"unchanged\"") {
    must(store.apply(apply_request("p", one)));  // repaired
    must(store.apply(apply_request("p", marked_files("two"))));
    REQUIRE(must(store.rollback(rollback_request("p", 1))).version == 3);
    behind_gov(location, "UPDATE source SET text = CAST(text || x'0a23' AS BLOB) WHERE sha256 = '" + sha + "'",
               "UPDATE gov_source SET text = text || convert_to(E'\\n#', 'UTF8') WHERE sha256 = '" + sha + "'");
    auto again = store.rollback(rollback_request("p", 1));
    REQUIRE_FALSE(again);
    CHECK(again.error().kind == ErrorKind::corrupt);
    CHECK(again.error().message.find("rolling policy `p` back to version 1 (version 3 is active with its content): "
                                     "the stored files do not read back") != std::string::npos);
  }
}

TEST_CASE("store: content_hash is length-prefixed and ordered", "[store]") {
  std::string one = content_hash({{"ab", "c"}});
  CHECK(one.size() == 64);
  CHECK(one == content_hash({{"ab", "c"}}));
  CHECK(one != content_hash({{"a", "bc"}}));
  CHECK(content_hash({{"a", ""}, {"b", ""}}) != content_hash({{"b", ""}, {"a", ""}}));
  CHECK(content_hash({{"a", "x"}, {"b", ""}}) != content_hash({{"a", ""}, {"b", "x"}}));
}

TEST_CASE("store: where the store lives and opening a missing one", "[store]") {
  ::setenv("GOV_DB", "/tmp/elsewhere.db", /*overwrite=*/1);
  CHECK(default_path() == "/tmp/elsewhere.db");
  ::setenv("GOV_DB", "", /*overwrite=*/1);
  CHECK(default_path() == ".gov/policies.db");
  ::unsetenv("GOV_DB");
  CHECK(default_path() == ".gov/policies.db");

  test::TempDir dir;
  OpenOptions no_create;
  no_create.create = false;
  auto missing = Store::open(dir.path("missing.db"), no_create);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(missing.error().message == fmt::format("no policy store at `{}`", dir.path("missing.db")));
  OpenOptions read_only;
  read_only.read_only = true;
  CHECK(Store::open(dir.path("missing.db"), read_only).error().kind == ErrorKind::not_found);
  CHECK_FALSE(std::filesystem::exists(dir.path("missing.db")));
}

}  // namespace
}  // namespace gov::store
