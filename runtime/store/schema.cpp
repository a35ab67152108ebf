// Schema migrations (PRAGMA user_version) and the open-time checks: application id, schema
// version, quick_check, journal mode and connection settings.
#include "runtime/store/schema.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

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

Result<void> check_identity(sqlite::Connection& connection) {
  auto application_id = connection.scalar("PRAGMA application_id");
  if (!application_id) return application_id.error();
  auto user_version = connection.scalar("PRAGMA user_version");
  if (!user_version) return user_version.error();
  if (*application_id == kApplicationId) {
    if (*user_version <= kSchemaVersion) return {};
    return Error{ErrorKind::newer_schema,
                 fmt::format("this database was written by a newer gov (schema {}; this gov knows {})",
                             *user_version, kSchemaVersion)};
  }
  auto objects = connection.scalar("SELECT count(*) FROM sqlite_schema");
  if (!objects) return objects.error();
  if (*application_id == 0 && *user_version == 0 && *objects == 0) return {};  // new and empty
  return Error{ErrorKind::corrupt,
               fmt::format("an SQLite database but not a gov policy store (application id {:#x})",
                           *application_id)};
}

Result<void> quick_check(sqlite::Connection& connection) {
  auto report = connection.text_lines("PRAGMA quick_check");
  std::string problem;
  if (report && *report == "ok") return {};
  if (report) {
    problem = report->substr(0, report->find('\n'));
  } else if (report.error().kind == ErrorKind::corrupt) {
    problem = report.error().message;  // damage bad enough to stop the check itself
  } else {
    return report.error();
  }
  return Error{ErrorKind::corrupt, fmt::format("the database is damaged: {}", problem)};
}

Result<void> configure(sqlite::Connection& connection, const PrepareOptions& options) {
  if (!options.read_only) {
    auto wal = connection.text_lines("PRAGMA journal_mode = WAL");
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

Result<void> migrate(sqlite::Connection& connection, bool read_only) {
  auto current = connection.scalar("PRAGMA user_version");
  if (!current) return current.error();
  if (*current == kSchemaVersion) return {};
  if (read_only) {
    return Error{ErrorKind::read_only,
                 fmt::format("the store needs an upgrade (schema {} to {}) and is opened read-only",
                             *current, kSchemaVersion)};
  }
  auto transaction = sqlite::Transaction::begin(connection, sqlite::Transaction::Mode::write);
  if (!transaction) return transaction.error();
  current = connection.scalar("PRAGMA user_version");  // another process may have migrated
  if (!current) return current.error();
  for (const Migration& step : kMigrations) {
    if (step.version <= *current) continue;
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
  auto identity = check_identity(connection);
  if (!identity) return identity;
  if (options.quick_check) {
    auto checked = quick_check(connection);
    if (!checked) return checked;
  }
  auto configured = configure(connection, options);
  if (!configured) return configured;
  return migrate(connection, options.read_only);
}

}  // namespace gov::store::schema
