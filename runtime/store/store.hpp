// The versioned policy store: policies, their versions (source text, content hash, active
// marker), compiled objects and an append-only audit log, in one SQLite file or in a
// PostgreSQL database shared by many replicas (docs/store.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/store/result.hpp"

namespace gov::store {

/// The schema version this gov writes (PRAGMA user_version). A database with a larger number
/// is refused with ErrorKind::newer_schema; a smaller one is migrated when opened read-write.
inline constexpr int64_t kSchemaVersion = 2;

/// Where the store lives when no `--db` is given: `$GOV_DB` if set and not empty, else
/// `.gov/policies.db` (relative to the current directory).
std::string default_path();

/// The back ends of a Store, chosen by the location given to Store::open.
enum class Backend : uint8_t { sqlite, postgresql };

/// True for a PostgreSQL connection URL (`postgresql://…` or `postgres://…`): Store::open uses
/// the PostgreSQL back end for it. Anything else is an SQLite file path; `sqlite:FILE` names a
/// file explicitly (for `gov store copy`).
bool is_postgres_url(std::string_view location);

/// `location` fit for messages: a PostgreSQL URL with its password (in the user part or a
/// `password=` parameter) replaced by `***`; a file path as it is.
std::string display_location(std::string_view location);
/// The store's place when neither --db nor $GOV_DB names one (default_path() without them).
inline constexpr std::string_view kBuiltInPath = ".gov/policies.db";

using Bytes = std::vector<uint8_t>;

/// One source file of a version, byte for byte as it was read.
struct PolicyFile {
  std::string path;
  std::string text;
  bool operator==(const PolicyFile&) const = default;
};

/// Most files one version may have (the policy loader reads at most as many).
inline constexpr size_t kMaxFilesPerVersion = 1'000;
/// The longest policy name a store keeps (bytes): one bound for both back ends, well under what
/// PostgreSQL's change notifications carry (8,000 bytes), so that any history copies between them.
inline constexpr size_t kMaxPolicyNameBytes = 1'024;
/// Longest stored file path, in bytes.
inline constexpr size_t kMaxFilePathBytes = 1'024;

/// Why `path` cannot be a stored file path, or nullopt when it can: a stored path is relative
/// to the policy root, normalised (no empty, `.` or `..` component), at most kMaxFilePathBytes,
/// without control characters or backslashes. Checked when a version is written and when it is
/// read, so a path written into the database by other means never reaches the file system.
std::optional<std::string> file_path_problem(std::string_view path);

/// SHA-256 (64 lower-case hex digits) of a canonical serialisation of `files` in order:
/// "gov-content-v1\n", then for each file the path and the text, each preceded by its length
/// as 8 bytes big-endian. Length prefixes make the encoding unambiguous.
std::string content_hash(const std::vector<PolicyFile>& files);

/// A detached signature (runtime/signing/signing.hpp makes and checks them) and the id of the
/// key that made it. The store keeps signatures; it never checks them.
struct Signature {
  std::string key_id;
  Bytes bytes;
  bool operator==(const Signature&) const = default;
};

/// A compiled form of a version (e.g. an object file), cached under a key that names what
/// produced it (target, gov version, options).
struct CompiledObject {
  std::string key;
  Bytes bytes;
  /// Stored with the object; replacing an object replaces its signature. An unsigned
  /// replacement removes it, unless the bytes are the same (the signature still holds).
  std::optional<Signature> signature = std::nullopt;
};

/// A cached object's bytes and its signature, if any.
struct SignedObject {
  Bytes bytes;
  std::optional<Signature> signature = std::nullopt;
};

struct ApplyRequest {
  std::string policy;              // the policy's name; created with its first version
  std::vector<PolicyFile> files;   // the entry file first, then every import
  /// 64 lower-case hex digits identifying the content; empty: content_hash(files). A caller
  /// that hashes canonical content (so a reformatting is not a change) passes its own.
  std::string content_sha256;
  std::string author;
  std::string message;
  /// When set, the apply fails with ErrorKind::conflict unless this is the active version
  /// (0: the policy has no version yet). Optimistic concurrency for "I applied on top of N".
  std::optional<int64_t> expect_version;
  std::optional<CompiledObject> object;  // stored with the new (or unchanged active) version
  /// The signature of the version's content (signing::version_manifest), stored with the new
  /// version, or added to (replacing one of) the active version when the content is unchanged.
  std::optional<Signature> signature = std::nullopt;
  /// An unchanged apply whose `signature` is by another key than the active version's fails
  /// with ErrorKind::conflict unless this is set: a no-op deploy with a stale or staging key
  /// would otherwise unsign the version for every controller that verifies with the first key.
  bool replace_signature = false;
};

struct RollbackRequest {
  std::string policy;
  int64_t version = 0;  // the version whose content becomes active again
  std::string author;
  std::string message;
  std::optional<int64_t> expect_version;  // as in ApplyRequest
};

/// What apply, rollback and activate did.
struct ApplyResult {
  int64_t version = 0;              // the active version afterwards
  bool created = false;             // false: the content equals the active version's; nothing new
  std::optional<int64_t> previous;  // the version active before, if any
  std::string content_sha256;       // of the active version
};

/// A version without its files: what `log` lists.
struct VersionInfo {
  int64_t number = 0;                    // 1, 2, 3, ... per policy
  std::optional<int64_t> parent;         // the version active when this one was made
  std::optional<int64_t> restored_from;  // for a rollback: the version whose content it copies
  std::string content_sha256;
  std::string author;
  std::string message;
  int64_t created_ms = 0;  // Unix time in milliseconds
  bool active = false;
  /// The key id of the version's signature, "" when it is unsigned. Not verified: a reader
  /// that trusts it verifies the signature (driver::VerifyOptions).
  std::string signed_by;
};

/// A version with the source text of every file that went into it (entry first).
struct Version {
  VersionInfo info;
  std::vector<PolicyFile> files;
  std::optional<Signature> signature = std::nullopt;  // of the content, when the version was signed
};

struct PolicyInfo {
  std::string name;
  std::optional<int64_t> active;
  int64_t latest = 0;  // the highest version number
};

enum class AuditAction : uint8_t { apply, rollback, activate };

/// "apply", "rollback", "activate".
std::string_view audit_action_name(AuditAction action);

/// One entry of the append-only audit log: every change of a policy's active version.
struct AuditEntry {
  int64_t id = 0;  // increasing in the order of the changes
  int64_t at_ms = 0;
  AuditAction action = AuditAction::apply;
  std::string policy;
  int64_t version = 0;              // the version made active
  std::optional<int64_t> previous;  // the version active before
  std::string author;
  std::string message;
};

/// A version as copied between stores (`copy_history`): written as it is, number included.
struct ImportedVersion {
  Version version;
  std::vector<CompiledObject> objects;  // with their signatures
};

/// What copy_history did.
struct CopyResult {
  int64_t policies = 0;        // policies in the source
  int64_t versions = 0;        // versions written to the destination
  int64_t kept_versions = 0;   // versions the destination had already (its prefix)
  int64_t audit_entries = 0;   // audit entries written
};

/// Waits for changes of a store made by any process: PostgreSQL's LISTEN on a connection of
/// its own, which reconnects by itself. Used by one thread; interrupt() from any thread.
class ChangeFeed {
 public:
  virtual ~ChangeFeed() = default;
  /// Waits at most `timeout` (or until interrupt()): true when the watched policy may have a
  /// new active version — a notification came, or the connection was lost and made again
  /// (changes made meanwhile were not announced, so the caller must look) — false when the
  /// time ran out or interrupt() was called. An error (io) when the server cannot be reached;
  /// the next wait tries again.
  virtual Result<bool> wait(std::chrono::milliseconds timeout) = 0;
  /// Makes the current or next wait return false at once. Thread-safe.
  virtual void interrupt() = 0;
  /// Times the connection was made again after it was lost.
  virtual int64_t reconnects() const = 0;
};

/// Work SQLite did for a Store's statements: a deterministic measure of cost, so tests can
/// prove that a read uses an index (its work does not grow with the number of versions).
struct WorkCounters {
  int64_t vm_steps = 0;           // virtual-machine instructions run
  int64_t full_scan_steps = 0;    // rows stepped through in full table scans
  int64_t sorts = 0;              // sorts (an ORDER BY not served by an index)
  int64_t automatic_indexes = 0;  // rows put into indexes SQLite built on the fly
};

struct OpenOptions {
  bool create = true;      // create the file when missing
  /// With `create`: also create the file's missing directories. The CLI sets it for its default
  /// location (`.gov/policies.db`) only, so that a mistyped `--db /nonexistent/dir/x.db` is an
  /// error instead of a new directory tree.
  bool create_directories = true;
  bool read_only = false;  // never write; every write fails with ErrorKind::read_only
  /// How long a write waits for another process's write lock before ErrorKind::busy (PostgreSQL:
  /// `lock_timeout` on the store's lock).
  std::chrono::milliseconds busy_timeout{5000};
  /// Run PRAGMA quick_check when opening a file of at most this many bytes, and refuse it when
  /// damaged. The check reads the whole file (about 0.1 s per 10 MB); bigger stores (a hundred
  /// thousand versions and more) open without it, and SQLite still reports every damaged page
  /// it reads as `corrupt`; integrity_check() checks on demand. 0: never check.
  int64_t quick_check_max_bytes = int64_t{64} << 20;
  /// Cap the database at this many pages (PRAGMA max_page_count); writes beyond it fail with
  /// ErrorKind::full and leave the previous state. For quotas and disk-full tests.
  std::optional<int64_t> max_pages;
  /// Called at named points inside write transactions ("apply:before_activate",
  /// "apply:before_commit", "rollback:before_commit") for fault-injection tests. It must not
  /// call back into the Store.
  std::function<void(std::string_view point)> fault_hook;
};

/// A connection to one policy store file. Many processes may open the same file: writes are
/// serialised by SQLite's lock (waiting up to the busy timeout), readers never block and
/// always see whole versions (every read is one transaction on a WAL snapshot).
///
/// Not thread-safe: use a Store from one thread; open one per thread or process (never share
/// one across fork()). Move-only; the destructor closes the file. No method throws.
class Store {
 public:
  /// Opens (and creates, per `options`) the store at `path`: WAL journal, foreign keys,
  /// synchronous=FULL, the busy timeout, then schema migrations in one transaction. Errors:
  /// not_found (missing and !create), corrupt (not a database, truncated, quick_check fails,
  /// an SQLite database that is not a gov store, or a gov store whose user_version was reset
  /// to 0), newer_schema, read_only (an old schema that needs a migration but the store is
  /// read-only), busy (the message states the measured wait), io.
  /// A file without any write permission bit is opened read-only, even by root. A read-only
  /// open of a frozen store (a read-only file system, or no write bit on the file and no file
  /// creatable next to it) without a non-empty -wal file is immutable: it creates no -shm or
  /// -wal file and assumes the file does not change while open (docs/store.md).
  /// A PostgreSQL URL (is_postgres_url) opens the PostgreSQL back end instead: the same
  /// operations and errors on the `gov_*` tables of the connection's schema (docs/store.md);
  /// `create` makes the tables when missing, `read_only` makes every transaction read-only.
  static Result<Store> open(const std::string& path, const OpenOptions& options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  /// The file path, or the PostgreSQL URL without its password.
  const std::string& path() const;
  bool read_only() const;
  Backend backend() const;
  /// Why the file at path() is no longer the file this store opened, or nullopt when it still is
  /// (PostgreSQL: always nullopt). A store renamed over (a backup restored with `mv`) or deleted
  /// goes on reading the old file through its open connection, so a watcher must not take what
  /// it reads for the store now at the path (docs/store.md, "Backup and restore").
  std::optional<std::string> replaced() const;

  /// Stores a new version of `request.policy` and makes it active, in one transaction: the
  /// expect_version check, the version (number = latest + 1, parent = the active one), its
  /// files, its object, the active marker and an "apply" audit entry. When the content hash
  /// equals the active version's, nothing is created (created = false; a given object is
  /// still cached on the active version). Errors: invalid, conflict, busy, read_only, full, io.
  Result<ApplyResult> apply(const ApplyRequest& request);

  /// Makes the content of an old version active again as a new version (restored_from = it)
  /// with the same files, content hash, compiled objects and signatures (none covers the
  /// version number); audit entry "rollback". Nothing
  /// is created when its content hash equals the active one's. Errors as apply, plus
  /// not_found for an unknown policy or version.
  Result<ApplyResult> rollback(const RollbackRequest& request);

  /// Moves the active marker to an existing version without creating one; audit entry
  /// "activate". A no-op (created = false, no audit entry) when it already is active.
  Result<ApplyResult> activate(std::string_view policy, int64_t version, std::string_view author,
                               std::optional<int64_t> expect_version = std::nullopt);

  /// Versions of `policy`, newest first, at most `limit`, only those numbered below `before`
  /// when given (pass the last number of a page to get the next one). Uses the
  /// (policy, number) index: cost is O(limit · log n). Errors: not_found, io, corrupt.
  Result<std::vector<VersionInfo>> log(std::string_view policy, size_t limit,
                                       std::optional<int64_t> before = std::nullopt);

  /// One version with its files; `number` absent: the active version. The version row and
  /// its files are read in one transaction. Errors: not_found, io, corrupt.
  Result<Version> show(std::string_view policy, std::optional<int64_t> number = std::nullopt);

  /// The active version of `policy` (without files). Errors: not_found, io, corrupt.
  Result<VersionInfo> active(std::string_view policy);

  /// Caches a compiled object for a version, replacing one with the same key and its signature.
  Result<void> put_object(std::string_view policy, int64_t version, const CompiledObject& object);

  /// The cached object, or nullopt when none has that key. not_found: no such policy or version.
  Result<std::optional<Bytes>> get_object(std::string_view policy, int64_t version,
                                          std::string_view key);

  /// The cached object with its signature, or nullopt when none has that key. As get_object.
  Result<std::optional<SignedObject>> get_signed_object(std::string_view policy, int64_t version,
                                                        std::string_view key);

  /// Every cached object of a version with its signature, by key. As get_object.
  Result<std::vector<CompiledObject>> objects(std::string_view policy, int64_t version);

  /// Audit entries newest first, at most `limit`, only those with id below `before` when given;
  /// `policy` empty: every policy.
  Result<std::vector<AuditEntry>> audit(std::string_view policy, size_t limit,
                                        std::optional<int64_t> before = std::nullopt);

  /// Every policy, by name.
  Result<std::vector<PolicyInfo>> policies();

  /// Runs `body` (which calls this Store's write methods) in one transaction: all of its
  /// writes commit together or, when it returns an error, none do. For imports and bulk
  /// loads: each write inside is a savepoint, not a transaction with its own sync.
  Result<void> batch(const std::function<Result<void>(Store&)>& body);

  /// For copy_history: writes `version` as it is (number, parent, restored_from, author,
  /// message, time, files, signature, objects), not active. Its number must be the policy's
  /// latest + 1 and its parent and restored_from existing versions; its files must hash to its
  /// content hash. No audit entry. Errors: invalid, conflict, and those of apply.
  Result<void> import_version(std::string_view policy, const ImportedVersion& version);
  /// For copy_history: appends `entry` (its id is the store's own) as it is.
  Result<void> import_audit(const AuditEntry& entry);
  /// For copy_history: moves the active marker (none: clears it) without an audit entry.
  Result<void> import_active(std::string_view policy, std::optional<int64_t> version);

  /// A feed of changes to `policy` (its active version) made by any process, on a connection
  /// of its own: PostgreSQL's LISTEN/NOTIFY. nullptr for SQLite, whose readers poll.
  Result<std::unique_ptr<ChangeFeed>> changes(std::string_view policy);

  /// SQLite: PRAGMA integrity_check: "ok" or the problems found, one per line. PostgreSQL: the
  /// store's own invariants (source hashes, dense version numbers, files per version). O(size).
  Result<std::string> integrity_check();

  /// The work done since the previous call (or since open), then resets the counters.
  WorkCounters take_work_counters();

  struct Impl;  // the back end: runtime/store/backend.hpp

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Copies the whole history of `from` (every policy, version, file, object, signature and
/// audit entry, numbers and times kept, and each policy's active version) into `to`, in one
/// transaction of `to`. Each version's files are hashed before it is written (a source whose
/// files do not match their recorded content hash is refused) and every copied version is read
/// back from `to` and compared by content hash and object digests before the commit. `to` must
/// be empty or hold a prefix of `from`: for each of its policies the first versions of the same
/// policy in `from` (same numbers and content hashes) and the first audit entries; the rest is
/// appended. Anything else is refused (conflict) and nothing is written.
Result<CopyResult> copy_history(Store& from, Store& to);

}  // namespace gov::store
