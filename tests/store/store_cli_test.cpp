// The store commands end to end: apply -> log -> diff -> rollback -> log, idempotent apply,
// --expect-version conflicts, and loading the active version's cached native code.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check/json_reader.hpp"
#include "tests/security/security_support.hpp"
#include "tests/store/store_fixture.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

TEST_CASE("apply, log, diff, rollback and log round-trip through the CLI", "[store][cli][backends]") {
  const gov::store::Backend backend = GENERATE(from_range(gov::store::test::test_backends()));
  INFO("back end: " << gov::store::test::backend_name(backend));
  gov::store::test::StoreLocation location(backend, "cli.db");
  const std::string db = location.url();
  const std::string flags = " --db '" + db + "'";
  const std::string keys = location.dir().path("keys/signing");
  REQUIRE(run_gov("keygen --out '" + keys + "'").exit_code == 0);
  auto first = run_gov("apply policies/examples/workshop-g5.gov -m initial --sign-key '" + keys + ".key'" + flags);
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out.find("applied `workshop-g5` version 1") != std::string::npos);
  auto again = run_gov("apply policies/examples/workshop-g5.gov" + flags);
  CHECK(again.out.find("unchanged") != std::string::npos);  // same content: no new version

  // Version 2: team-a at 3 instances (a copy under tests/ so imports stay under the root). Its test
  // blocks are the walkthrough's, which no longer hold with the larger quota: --skip-tests.
  auto second = run_gov("apply tests/diff/workshop-g5-team-a-3.gov --policy workshop-g5 -m grow --expect-version 1 --skip-tests" + flags);
  INFO(second.err);
  CHECK(second.out.find("version 2") != std::string::npos);
  auto conflict = run_gov("apply policies/examples/workshop-g5.gov --expect-version 1" + flags);
  CHECK(conflict.exit_code == 1);
  CHECK(conflict.err.find("conflict") != std::string::npos);

  auto diff = run_gov("diff" + flags);
  CHECK(diff.out.find("ml.g5.8xlarge gpu nominal: 2 → 3 (+1)") != std::string::npos);

  auto rollback = run_gov("rollback 1" + flags);
  CHECK(rollback.out.find("now version 3") != std::string::npos);
  auto log = run_gov("log --format json" + flags);
  CHECK(log.out.find("\"version\":3") != std::string::npos);
  CHECK(log.out.find("\"restored_from\":1") != std::string::npos);
  auto text_log = run_gov("log" + flags);
  // The rollback's content hash equals version 1's: the hashes of v3 and v1 agree.
  const auto hash_of = [&](const std::string& v) {
    const size_t line = text_log.out.rfind(v + " ", 0) == 0 ? 0 : text_log.out.find("\n" + v + " ") + 1;
    return text_log.out.substr(line + 27, 12);
  };
  CHECK(hash_of("v3") == hash_of("v1"));
  CHECK(hash_of("v2") != hash_of("v1"));
  // The rollback's line says so once (an SRE helper saw "rollback to version 1 (rollback to v1)").
  // gov log and gov show say which key signed a version (an SRE helper had to guess, key by key).
  const std::string key_id = first.err.substr(first.err.find("with key `") + 10, 16);
  CHECK(text_log.out.find("rollback to v1  (signed " + key_id + ")  [active]\n") != std::string::npos);
  CHECK(text_log.out.find("--skip-tests]  (unsigned)\n") != std::string::npos);  // version 2: no key
  CHECK(log.out.find("\"signed_by\":\"" + key_id + "\"") != std::string::npos);
  CHECK(log.out.find("\"signed_by\":null") != std::string::npos);
  CHECK(run_gov("show 1" + flags).out.find("\n  signed  by key `" + key_id + "` (not verified: give --verify-key)\n") !=
        std::string::npos);
  CHECK(run_gov("show 1 --verify-key '" + keys + ".pub'" + flags).out.find("\n  signed  by key `" + key_id +
                                                                         "` (verified)\n") != std::string::npos);
  CHECK(run_gov("show 2" + flags).out.find("\n  signed  no\n") != std::string::npos);
  CHECK(text_log.out.find("rollback to version") == std::string::npos);

  auto source = run_gov("show 1 --source" + flags);
  CHECK(source.out.find("team team-a") != std::string::npos);
  CHECK(source.out.find("catalog aws-ml") != std::string::npos);  // imports are stored too

  // The active version's cached native code loads without codegen: version 3 restores version
  // 1's content with its signatures, and the verify key checks them.
  auto simulate = run_gov("simulate --trace policies/examples/workshop-g5.trace.json --verify-key '" + keys + ".pub'" + flags);
  CHECK(simulate.exit_code == 0);
  CHECK(simulate.err.find("loaded cached native code (no codegen)") != std::string::npos);
  CHECK(simulate.out == gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl")));
}

// A store that cannot be opened is an I/O problem, exit status 2, as `gov store copy` has it
// (docs/interfaces.md); a missing version is the command failing, 1, said in words.
TEST_CASE("store commands explain a missing, corrupt or misplaced store", "[store][cli]") {
  auto missing = run_gov("log --db /nonexistent/dir/x.db");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "error: no policy store at `/nonexistent/dir/x.db`\n");  // the path once (an SRE helper's finding)
  const std::string garbage = (std::filesystem::temp_directory_path() / ("gov-garbage-" + std::to_string(::getpid()) + ".db")).string();
  gov::test::write_text(garbage, std::string(5000, 'x'));
  auto corrupt = run_gov("log --db '" + garbage + "'");
  CHECK(corrupt.exit_code == 2);
  CHECK(corrupt.err.find("error: cannot open policy store `" + garbage + "`: ") == 0);
  std::filesystem::remove(garbage);
  auto directory = run_gov("log --db '" + std::filesystem::temp_directory_path().string() + "'");
  CHECK(directory.exit_code == 2);
  CHECK(directory.err.find("it is a directory; a policy store is a file") != std::string::npos);
  // A FIFO: opening it without a writer blocked `gov log` for ever; refused before it is opened.
  const std::string fifo = (std::filesystem::temp_directory_path() / ("gov-fifo-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const char* command : {"log", "show", "apply policies/examples/workshop-g5.gov"}) {
    auto on_fifo = run_gov(std::string(command) + " --db '" + fifo + "'");
    CHECK(on_fifo.exit_code == 2);
    CHECK(on_fifo.err.find("it is a FIFO; a policy store is a regular file") != std::string::npos);
  }
  std::filesystem::remove(fifo);

  const std::string db = (std::filesystem::temp_directory_path() / ("gov-cli-missing-version-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(db);
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov --db '" + db + "'").exit_code == 0);
  // Page 1's b-tree header damaged: SQLite's "database disk image is malformed", said as damage.
  {
    const std::string copy = db + ".damaged";
    std::filesystem::copy_file(db, copy, std::filesystem::copy_options::overwrite_existing);
    std::string bytes = gov::test::read_text(copy);
    for (size_t i = 100; i < 108; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    gov::test::write_text(copy, bytes);
    auto damaged = run_gov("log --db '" + copy + "'");
    CHECK(damaged.exit_code == 2);
    CHECK(damaged.err.find("the database is damaged: its header or schema does not read (SQLite: ") != std::string::npos);
    std::filesystem::remove(copy);
  }
  auto rollback = run_gov("rollback 9 --db '" + db + "'");
  CHECK(rollback.exit_code == 1);
  CHECK(rollback.err == "error: policy `workshop-g5` has no version 9 (the latest is 1)\n");
  std::filesystem::remove(db);
}

TEST_CASE("gov log --format json escapes quotes, backslashes and newlines in authors and messages", "[store][cli]") {
  const std::string db =
      (std::filesystem::temp_directory_path() / ("gov-cli-log-json-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(db);
  const std::string flags = " --db '" + db + "'";
  // Given through files, so no shell quoting is involved.
  const std::string message = "say \"hi\"\\n\nline 2\t\x1b[31m", author = "o\"brien\\x";
  gov::test::write_text(db + ".message", message);
  gov::test::write_text(db + ".author", author);
  auto applied = run_gov("apply policies/examples/workshop-g5.gov -m \"$(cat '" + db + ".message')\" --author \"$(cat '" +
                         db + ".author')\"" + flags);
  INFO(applied.err);
  REQUIRE(applied.exit_code == 0);
  auto log = run_gov("log --format json" + flags);
  REQUIRE(log.exit_code == 0);
  const gov::test::Json versions = gov::test::JsonReader(log.out).document();
  REQUIRE(versions.size() == 1);
  CHECK(versions[0]["message"].str() == message);
  CHECK(versions[0]["author"].str() == author);
  for (const char* suffix : {"", ".message", ".author"}) std::filesystem::remove(db + suffix);
}

// `gov show --source` is how an operator audits a version: it printed a source row changed outside
// gov (control bytes included) with exit 0, even with --require-signature. Every show now checks
// the content hash (and, when asked, the signature) before printing. Extra arguments are refused.
TEST_CASE("gov show checks the content hash before printing, and log and show refuse extra arguments", "[store][cli]") {
  gov::test::TempDir dir("show-tampered");
  const std::string db = dir.path() / "s.db";
  const std::string flags = " --db '" + db + "'";
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov -m first" + flags).exit_code == 0);
  CHECK(run_gov("show --source" + flags).exit_code == 0);
  gov::test::exec_sql(db, "UPDATE source SET text = CAST(text || x'1b5b324a' AS BLOB) WHERE id = "
                          "(SELECT min(source_id) FROM version_file)");
  for (const char* how : {"show --source", "show", "show --inspect", "show 1 --source --require-signature"}) {
    INFO(how);
    const auto shown = run_gov(std::string(how) + flags);
    CHECK(shown.exit_code == 1);
    CHECK(shown.out.empty());
    CHECK(shown.err.find("version 1's stored files do not match its recorded content hash") != std::string::npos);
  }
  CHECK(run_gov("log extra" + flags).exit_code == 2);
  const auto two = run_gov("show 1 2" + flags);
  CHECK(two.exit_code == 2);
  CHECK(two.err.find("gov show takes one version at most") != std::string::npos);
}

// An SRE helper's findings: two people rolling back in one incident could not guard against each
// other, and a rollback to an unsigned version said nothing about signatures (apply does).
TEST_CASE("gov rollback takes --expect-version and says when the new version is unsigned", "[store][cli]") {
  const gov::test::TempDir dir("rollback-expect");
  const std::string flags = " --db '" + (dir / "store.db") + "'";
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov" + flags).exit_code == 0);
  REQUIRE(run_gov("apply tests/diff/workshop-g5-team-a-3.gov --policy workshop-g5 --skip-tests" + flags).exit_code == 0);
  const gov::test::CommandResult stale = run_gov("rollback 1 --expect-version 1" + flags);
  CHECK(stale.exit_code == 1);
  CHECK(stale.err.find("policy `workshop-g5` is at version 2, expected version 1") != std::string::npos);
  CHECK(run_gov("log" + flags).out.find("v3") == std::string::npos);
  CHECK(run_gov("rollback 1 --expect-version x" + flags).exit_code == 2);
  const gov::test::CommandResult done = run_gov("rollback 1 --expect-version 2" + flags);
  INFO(done.err);
  CHECK(done.exit_code == 0);
  CHECK(done.out == "rolled back `workshop-g5` to the content of version 1: now version 3\n");
  CHECK(done.err.find("notice: version 3 is not signed, as version 1, whose content it restores, was not; controllers "
                      "that require signatures will refuse it") == 0);
}

// An SRE helper's finding: a refused copy left an empty store at the destination, which then read
// as a valid, empty backup ("has no policy yet").
TEST_CASE("a refused gov store copy leaves no store it created behind", "[store][cli]") {
  const gov::test::TempDir dir("store-copy-refused");
  const std::string source = dir / "source.db";
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov --db '" + source + "'").exit_code == 0);
  gov::test::exec_sql(source, "UPDATE source SET text = CAST(CAST(text AS TEXT) || ' ' AS BLOB)");
  const std::string backup = dir / "backup.db";
  const gov::test::CommandResult refused = run_gov("store copy --from 'sqlite:" + source + "' --to 'sqlite:" + backup + "'");
  INFO(refused.err);
  CHECK(refused.exit_code != 0);
  CHECK_FALSE(std::filesystem::exists(backup));
  CHECK_FALSE(std::filesystem::exists(backup + "-wal"));
  // A destination that was there before is left as it was.
  const std::string kept = dir / "kept.db";
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov --db '" + kept + "' --policy other").exit_code == 0);
  CHECK(run_gov("store copy --from 'sqlite:" + source + "' --to 'sqlite:" + kept + "'").exit_code != 0);
  CHECK(run_gov("log --db '" + kept + "'").exit_code == 0);
}

// An SRE helper's finding: a store truncated to 0 bytes became a new store without a word.
TEST_CASE("gov apply says when it makes a new store in an empty file", "[store][cli]") {
  const gov::test::TempDir dir("apply-empty-file");
  const std::string db = dir.write("store.db", "");
  // A hostile-input helper's finding (session 40): `gov log` made the schema in the empty file, so
  // the apply after it said nothing. Commands that read or change a store refuse the file as it is.
  for (const char* command : {"log", "show", "rollback 1"}) {
    INFO(command);
    const gov::test::CommandResult refused = run_gov(std::string(command) + " --db '" + db + "'");
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("is an empty file, not a policy store: `gov apply FILE --db") != std::string::npos);
    CHECK(std::filesystem::file_size(db) == 0);
  }
  const gov::test::CommandResult r = run_gov("apply policies/examples/workshop-g5.gov --db '" + db + "'");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("notice: `" + db + "` was an empty file; a new store was made in it") != std::string::npos);
  CHECK(run_gov("apply tests/diff/workshop-g5-team-a-3.gov --policy workshop-g5 --skip-tests --db '" + db + "'")
            .err.find("empty file") == std::string::npos);
}

// A new author's finding: a renamed policy file started a second history without a word, and
// gov log then asked for --policy. The first apply under a new name says so, with the name to
// continue the other history.
TEST_CASE("gov apply says when a file's name starts a second policy in the store", "[store][cli]") {
  const gov::test::TempDir dir("apply-renamed-file");
  const std::string db = dir / "store.db";
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov --db '" + db + "'").exit_code == 0);
  std::string text = gov::test::read_text(gov::test::repo_path("policies/examples/workshop-g5.gov"));
  text.replace(text.find("import \"../catalog/aws-ml.gov\""), std::string("import \"../catalog/aws-ml.gov\"").size(),
               "import \"aws-ml\"");
  const std::string renamed = dir.write("ml-prod.gov", text);
  const gov::test::CommandResult forked = run_gov("apply '" + renamed + "' --db '" + db + "'");
  INFO(forked.err);
  CHECK(forked.exit_code == 0);
  CHECK(forked.err.find("notice: `ml-prod` is a new policy in this store, beside `workshop-g5` (a policy is named after "
                        "its file); to continue another's history, apply with --policy workshop-g5") != std::string::npos);
  // Its second version, and an apply that names the policy, say nothing of it.
  CHECK(run_gov("apply policies/examples/workshop-g5.gov --policy ml-prod --db '" + db + "'").err.find("new policy") ==
        std::string::npos);
}

// A new author's finding: gov apply checks but does not lint, so a quota on an instance type the
// cluster lacks (W0102) was applied without a word. A created version's lint warnings are counted
// in one note with their codes; a clean policy gets none.
TEST_CASE("gov apply counts the lint warnings of what it applied", "[store][cli]") {
  const gov::test::TempDir dir("apply-lint-note");
  const std::string db = dir / "store.db";
  const std::string policy = dir.write("p.gov", R"(import "aws-ml"
cluster c {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 4 }
}
policy {
  priority training = 50
}
team a {
  quota ml.g5.8xlarge  { instances = 2 }
  quota ml.p4d.24xlarge { instances = 1 }
}
)");
  const gov::test::CommandResult r = run_gov("apply '" + policy + "' --db '" + db + "'");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  // W0102 (no capacity of ml.p4d.24xlarge) and W0105 (a team that may borrow what no one lends).
  CHECK(r.err.find("note: `gov lint " + policy + "` finds 2 warnings (W0102, W0105)\n") != std::string::npos);
  const gov::test::CommandResult clean = run_gov("apply policies/examples/workshop-g5.gov --db '" + (dir / "clean.db") + "'");
  CHECK(clean.err.find("gov lint") == std::string::npos);
}
