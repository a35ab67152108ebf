// Schema migrations (PRAGMA user_version) and the open-time checks: application id, schema
// version, quick_check, journal mode and connection settings.
#include "runtime/store/schema.hpp"

#include <fmt/format.h>

#include <array>
#include <regex>
#include <string>
#include <vector>

namespace gov::store::schema {
namespace {

struct Migration {
  int64_t version;  // user_version after this step
  const char* sql;
};

// Append-only: a released step is never edited; changes are new steps. Every table is STRICT.
// Child-key columns whose parent rows are never deleted (the triggers forbid it) have no index
// of their own: foreign-key checks only need the parent's primary key.
constexpr std::array<Migration, 2> kMigrations = {{
    {1, R"sql(
CREATE TABLE policy (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
  created_ms INTEGER NOT NULL
) STRICT;

-- Source text by its SHA-256: a file that did not change between versions is stored once.
CREATE TABLE source (
  id     INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
  text   BLOB NOT NULL
) STRICT;

CREATE TABLE version (
  id             INTEGER PRIMARY KEY,
  policy_id      INTEGER NOT NULL REFERENCES policy (id),
  number         INTEGER NOT NULL CHECK (number > 0),
  parent_id      INTEGER REFERENCES version (id),
  restored_from  INTEGER REFERENCES version (id),
  content_sha256 TEXT NOT NULL CHECK (length(content_sha256) = 64),
  author         TEXT NOT NULL,
  message        TEXT NOT NULL,
  created_ms     INTEGER NOT NULL,
  active         INTEGER NOT NULL DEFAULT 0 CHECK (active IN (0, 1)),
  UNIQUE (policy_id, number)
) STRICT;
-- At most one active version per policy, found without a scan.
CREATE UNIQUE INDEX version_active ON version (policy_id) WHERE active = 1;

CREATE TABLE version_file (
  version_id INTEGER NOT NULL REFERENCES version (id),
  ordinal    INTEGER NOT NULL CHECK (ordinal >= 0),  -- 0: the entry file, then the imports
  path       TEXT NOT NULL CHECK (length(path) > 0),
  source_id  INTEGER NOT NULL REFERENCES source (id),
  PRIMARY KEY (version_id, ordinal),
  UNIQUE (version_id, path)
) STRICT, WITHOUT ROWID;

CREATE TABLE object (
  version_id INTEGER NOT NULL REFERENCES version (id),
  key        TEXT NOT NULL CHECK (length(key) > 0),
  bytes      BLOB NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (version_id, key)
) STRICT;

CREATE TABLE audit (
  id          INTEGER PRIMARY KEY,  -- increasing: rows are never deleted
  at_ms       INTEGER NOT NULL,
  policy_id   INTEGER NOT NULL REFERENCES policy (id),
  action      TEXT NOT NULL CHECK (action IN ('apply', 'rollback', 'activate')),
  version_id  INTEGER NOT NULL REFERENCES version (id),
  previous_id INTEGER REFERENCES version (id),
  author      TEXT NOT NULL,
  message     TEXT NOT NULL
) STRICT;
CREATE INDEX audit_policy ON audit (policy_id, id);

-- History is immutable: only a version's active marker ever changes.
CREATE TRIGGER version_immutable
  BEFORE UPDATE OF id, policy_id, number, parent_id, restored_from, content_sha256, author,
                   message, created_ms ON version
  BEGIN SELECT RAISE(ABORT, 'versions are immutable'); END;
CREATE TRIGGER version_kept BEFORE DELETE ON version
  BEGIN SELECT RAISE(ABORT, 'versions are never deleted'); END;
CREATE TRIGGER version_file_immutable BEFORE UPDATE ON version_file
  BEGIN SELECT RAISE(ABORT, 'the files of a version are immutable'); END;
CREATE TRIGGER version_file_kept BEFORE DELETE ON version_file
  BEGIN SELECT RAISE(ABORT, 'the files of a version are never deleted'); END;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
)sql"},
    {2, R"sql(
-- Ed25519 signatures (runtime/signing): of a version's content, and of each cached object.
-- The store keeps them; loaders check them. A version's signature never changes once its
-- content is signed, except that an apply of the same content may sign it again.
CREATE TABLE version_signature (
  version_id INTEGER PRIMARY KEY REFERENCES version (id),
  key_id     TEXT NOT NULL CHECK (length(key_id) > 0),
  signature  BLOB NOT NULL
) STRICT;

-- Replaced (or deleted) with its object.
CREATE TABLE object_signature (
  version_id INTEGER NOT NULL,
  key        TEXT NOT NULL,
  key_id     TEXT NOT NULL CHECK (length(key_id) > 0),
  signature  BLOB NOT NULL,
  PRIMARY KEY (version_id, key),
  FOREIGN KEY (version_id, key) REFERENCES object (version_id, key)
) STRICT;
)sql"},
}};

static_assert(kMigrations.back().version == kSchemaVersion, "the last migration is the schema");

// STRICT tables need SQLite 3.37.
constexpr int kMinimumSqlite = 3037000;

// What the header and the schema say about a database, read in one transaction so the three
// values come from one snapshot: read in separate statements, a process that opens a new store
// while another migrates it saw application id 0 but the tables of the finished migration.
struct Identity {
  int64_t application_id = 0;
  int64_t user_version = 0;
  int64_t objects = 0;  // rows of sqlite_schema: tables, indexes, triggers
};

enum class State : uint8_t { fresh, older, current };

Result<Identity> read_identity(sqlite::Connection& connection) {
  // Inside migrate's IMMEDIATE transaction this nests (no new transaction); alone it is one
  // read transaction.
  auto transaction = sqlite::Transaction::begin(connection, sqlite::Transaction::Mode::read);
  if (!transaction) return transaction.error();
  Identity identity;
  auto application_id = connection.scalar("PRAGMA application_id");
  if (!application_id) return application_id.error();
  identity.application_id = *application_id;
  auto user_version = connection.scalar("PRAGMA user_version");
  if (!user_version) return user_version.error();
  identity.user_version = *user_version;
  auto objects = connection.scalar("SELECT count(*) FROM sqlite_schema");
  if (!objects) return objects.error();
  identity.objects = *objects;
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return identity;
}

// Refuses what is not a gov store this gov may use; otherwise says whether it needs creating
// (new and empty), migrating (an older schema) or nothing.
Result<State> judge(const Identity& identity) {
  if (identity.application_id == kApplicationId) {
    if (identity.user_version > kSchemaVersion) {
      return Error{ErrorKind::newer_schema,
                   fmt::format("this database was written by a newer gov (schema {}; this gov knows {})",
                               identity.user_version, kSchemaVersion)};
    }
    if (identity.user_version == kSchemaVersion) return State::current;
    if (identity.user_version > 0) return State::older;
    // gov stamps the application id and user_version in the transaction that creates the
    // tables, so version 0 with tables is a store whose version was reset (by a tool or damage):
    // migrating would run over existing tables, so it is refused as corrupt.
    if (identity.objects > 0) {
      return Error{ErrorKind::corrupt,
                   fmt::format("a gov policy store whose schema version was reset (user_version is 0 but "
                               "the store has {} tables, indexes and triggers); it is not migrated over",
                               identity.objects)};
    }
    return State::fresh;
  }
  if (identity.application_id == 0 && identity.user_version == 0 && identity.objects == 0) return State::fresh;
  return Error{ErrorKind::corrupt,
               fmt::format("an SQLite database but not a gov policy store (application id {:#x})",
                           identity.application_id)};
}

// quick_check's report in words. Its first line is often only a heading ("*** in database main
// ***"); the findings follow, one per line, in SQLite's own terms (kept as the detail).
std::string describe_damage(const std::string& report) {
  std::vector<std::string> findings;
  size_t begin = 0;
  while (begin <= report.size()) {
    size_t end = report.find('\n', begin);
    if (end == std::string::npos) end = report.size();
    std::string line = report.substr(begin, end - begin);
    if (!line.empty() && line.rfind("*** ", 0) != 0) findings.push_back(line);
    begin = end + 1;
  }
  if (findings.empty()) return fmt::format("PRAGMA quick_check reported: {}", report);
  const std::string& first = findings.front();
  std::smatch match;
  std::string words;
  if (std::regex_search(first, match, std::regex("^Page ([0-9]+): btreeInitPage\\(\\) returns error code"))) {
    words = fmt::format("page {} is zeroed or unreadable (not a valid b-tree page)", match[1].str());
  } else if (std::regex_search(first, match, std::regex("^Page ([0-9]+) is never used"))) {
    words = fmt::format("page {} belongs to no table and is not free (a lost page)", match[1].str());
  } else if (std::regex_search(first, match, std::regex("(2nd reference to page|referenced more than once).*?([0-9]+)")) ||
             std::regex_search(first, match, std::regex("^Page ([0-9]+).*referenced more than once"))) {
    words = "a page is used twice (the b-tree structure is damaged)";
  } else if (std::regex_search(first, match, std::regex("^(Tree|On tree page) ([0-9]+)"))) {
    words = "a b-tree page is damaged (a cell, its pointers or its order are wrong)";
  } else if (std::regex_search(first, match, std::regex("^[Ff]reelist"))) {
    words = "the list of free pages is damaged";
  } else if (std::regex_search(first, match, std::regex("(row [0-9]+ missing from index|wrong # of entries in index) ([A-Za-z0-9_]+)"))) {
    words = fmt::format("index `{}` no longer matches its table", match[2].str());
  } else if (std::regex_search(first, match, std::regex("^(NULL value in|CHECK constraint failed in|non-[A-Z]+ value in) ([A-Za-z0-9_.]+)"))) {
    words = fmt::format("a row of `{}` breaks the schema's constraints", match[2].str());
  } else {
    words = "SQLite's check found a problem";
  }
  std::string more = findings.size() > 1 ? fmt::format("; {} more problems", findings.size() - 1) : "";
  return fmt::format("{}{} (PRAGMA quick_check: {})", words, more, first);
}

Result<void> quick_check(sqlite::Connection& connection) {
  auto report = connection.text_lines("PRAGMA quick_check");
  std::string problem;
  if (report && *report == "ok") return {};
  if (report) {
    problem = describe_damage(*report);
  } else if (report.error().kind == ErrorKind::corrupt) {
    // Damage bad enough to stop the check itself.
    problem = fmt::format("SQLite could not finish PRAGMA quick_check: {}", report.error().message);
  } else {
    return report.error();
  }
  return Error{ErrorKind::corrupt, fmt::format("the database is damaged: {}", problem)};
}

Result<void> configure(sqlite::Connection& connection, const PrepareOptions& options) {
  if (!options.read_only) {
    // Switching a new file to WAL writes its header, taking the write lock without SQLite's
    // busy handler: while another process creates the same store this waits here instead.
    auto wal = connection.text_lines_waiting("PRAGMA journal_mode = WAL");
    if (!wal) return wal.error();
    if (*wal != "wal") {
      return Error{ErrorKind::io, fmt::format("cannot switch to WAL mode (journal mode is {})", *wal)};
    }
  }
  auto settings = connection.exec(
      "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA cache_size = -32768; "
      "PRAGMA temp_store = MEMORY");
  if (!settings) return settings;
  if (!options.max_pages) return {};
  auto limit = connection.exec(fmt::format("PRAGMA max_page_count = {}", *options.max_pages).c_str());
  return limit;
}

// Creates or upgrades the schema. The identity is read again under the write lock: another
// process may have created or migrated the store since it was first read, and only what is
// read inside the transaction decides what to run.
Result<void> migrate(sqlite::Connection& connection, const Identity& first, State state, bool read_only) {
  if (state == State::current) return {};
  if (read_only) {
    return Error{ErrorKind::read_only,
                 state == State::fresh
                     ? std::string("the store is empty (not created yet) and is opened read-only")
                     : fmt::format("the store needs an upgrade (schema {} to {}) and is opened read-only",
                                   first.user_version, kSchemaVersion)};
  }
  auto transaction = sqlite::Transaction::begin(connection, sqlite::Transaction::Mode::write);
  if (!transaction) return transaction.error();
  auto identity = read_identity(connection);
  if (!identity) return identity.error();
  auto now = judge(*identity);
  if (!now) return now.error();
  if (*now == State::current) return transaction->commit();  // another process got there first
  for (const Migration& step : kMigrations) {
    if (step.version <= identity->user_version) continue;
    auto applied = connection.exec(step.sql);
    if (!applied) return applied;
  }
  auto stamped = connection.exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {}",
                                             kApplicationId, kSchemaVersion)
                                     .c_str());
  if (!stamped) return stamped;
  return transaction->commit();
}

}  // namespace

Result<void> prepare(sqlite::Connection& connection, const PrepareOptions& options) {
  if (sqlite3_libversion_number() < kMinimumSqlite) {
    return Error{ErrorKind::io,
                 fmt::format("gov needs SQLite 3.37 or newer (this is {})", sqlite3_libversion())};
  }
  // Nothing is written before the file is known to be a gov store (or new and empty): a
  // refused file stays byte for byte as it was.
  auto identity = read_identity(connection);
  if (!identity) return identity.error();
  auto state = judge(*identity);
  if (!state) return state.error();
  if (options.quick_check && *state != State::fresh) {
    auto checked = quick_check(connection);
    if (!checked) return checked;
  }
  auto configured = configure(connection, options);
  if (!configured) return configured;
  return migrate(connection, *identity, *state, options.read_only);
}

}  // namespace gov::store::schema
