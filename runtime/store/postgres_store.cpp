// The PostgreSQL back end of the policy store, through libpq: the SQLite store's tables as
// `gov_*` tables of the connection's schema, every writer serialised by one advisory lock per
// schema (dense version numbers), reads in REPEATABLE READ snapshots, and NOTIFY on every
// change of an active version so that watchers need not poll. The only file that includes libpq.
#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

#include "compiler/support/sha256.hpp"
#include "runtime/store/backend.hpp"

namespace gov::store {

using detail::check_read_file;
using detail::clamp_limit;
using detail::in_context;
using detail::no_policy;
using detail::now_ms;

namespace {

// The one channel every gov store of a database notifies on; the payload is `schema/policy`.
constexpr const char* kChannel = "gov_store";
// The identity of a gov store in `gov_meta` and the schema version of its tables.
constexpr const char* kApplication = "gov policy store";
constexpr int64_t kPostgresSchemaVersion = 1;

constexpr Oid kBoolOid = 16;
constexpr Oid kByteaOid = 17;
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt4Oid = 23;
constexpr Oid kTextOid = 25;

// The tables, as schema.cpp's for SQLite: the same columns, constraints, indexes and
// immutability (triggers), with `gov_` in front of each name so a shared database's own tables
// are never touched. Changes are new steps of a later schema version.
constexpr const char* kSchema = R"sql(
CREATE TABLE gov_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE gov_policy (
  id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
  created_ms BIGINT NOT NULL);
CREATE TABLE gov_source (
  id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
  text   BYTEA NOT NULL);
CREATE TABLE gov_version (
  id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  policy_id      BIGINT NOT NULL REFERENCES gov_policy (id),
  number         BIGINT NOT NULL CHECK (number > 0),
  parent_id      BIGINT REFERENCES gov_version (id),
  restored_from  BIGINT REFERENCES gov_version (id),
  content_sha256 TEXT NOT NULL CHECK (length(content_sha256) = 64),
  author         TEXT NOT NULL,
  message        TEXT NOT NULL,
  created_ms     BIGINT NOT NULL,
  active         BOOLEAN NOT NULL DEFAULT false,
  UNIQUE (policy_id, number));
CREATE UNIQUE INDEX gov_version_active ON gov_version (policy_id) WHERE active;
CREATE TABLE gov_version_file (
  version_id BIGINT NOT NULL REFERENCES gov_version (id),
  ordinal    BIGINT NOT NULL CHECK (ordinal >= 0),
  path       TEXT NOT NULL CHECK (length(path) > 0),
  source_id  BIGINT NOT NULL REFERENCES gov_source (id),
  PRIMARY KEY (version_id, ordinal),
  UNIQUE (version_id, path));
CREATE TABLE gov_object (
  version_id BIGINT NOT NULL REFERENCES gov_version (id),
  key        TEXT NOT NULL CHECK (length(key) > 0),
  bytes      BYTEA NOT NULL,
  created_ms BIGINT NOT NULL,
  PRIMARY KEY (version_id, key));
CREATE TABLE gov_version_signature (
  version_id BIGINT PRIMARY KEY REFERENCES gov_version (id),
  key_id     TEXT NOT NULL CHECK (length(key_id) > 0),
  signature  BYTEA NOT NULL);
CREATE TABLE gov_object_signature (
  version_id BIGINT NOT NULL,
  key        TEXT NOT NULL,
  key_id     TEXT NOT NULL CHECK (length(key_id) > 0),
  signature  BYTEA NOT NULL,
  PRIMARY KEY (version_id, key),
  FOREIGN KEY (version_id, key) REFERENCES gov_object (version_id, key));
CREATE TABLE gov_audit (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_ms       BIGINT NOT NULL,
  policy_id   BIGINT NOT NULL REFERENCES gov_policy (id),
  action      TEXT NOT NULL CHECK (action IN ('apply', 'rollback', 'activate')),
  version_id  BIGINT NOT NULL REFERENCES gov_version (id),
  previous_id BIGINT REFERENCES gov_version (id),
  author      TEXT NOT NULL,
  message     TEXT NOT NULL);
CREATE INDEX gov_audit_policy ON gov_audit (policy_id, id);
CREATE FUNCTION gov_refuse() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation'; END $$;
CREATE TRIGGER gov_version_immutable
  BEFORE UPDATE OF id, policy_id, number, parent_id, restored_from, content_sha256, author, message,
                   created_ms ON gov_version
  FOR EACH ROW EXECUTE FUNCTION gov_refuse('versions are immutable');
CREATE TRIGGER gov_version_kept BEFORE DELETE ON gov_version
  FOR EACH ROW EXECUTE FUNCTION gov_refuse('versions are never deleted');
CREATE TRIGGER gov_version_file_immutable BEFORE UPDATE ON gov_version_file
  FOR EACH ROW EXECUTE FUNCTION gov_refuse('the files of a version are immutable');
CREATE TRIGGER gov_version_file_kept BEFORE DELETE ON gov_version_file
  FOR EACH ROW EXECUTE FUNCTION gov_refuse('the files of a version are never deleted');
CREATE TRIGGER gov_audit_no_update BEFORE UPDATE ON gov_audit
  FOR EACH ROW EXECUTE FUNCTION gov_refuse('the audit log is append-only');
CREATE TRIGGER gov_audit_no_delete BEFORE DELETE ON gov_audit
  FOR EACH ROW EXECUTE FUNCTION gov_refuse('the audit log is append-only');
)sql";

// ---- libpq wrappers ------------------------------------------------------------------------

struct ConnectionDeleter {
  void operator()(PGconn* connection) const { PQfinish(connection); }
};
using ConnectionPtr = std::unique_ptr<PGconn, ConnectionDeleter>;

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

void ignore_notice(void* /*arg*/, const char* /*message*/) {}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// A connection's own message (libpq's, for failures with no server error), on one line.
std::string connection_message(PGconn* connection) {
  const std::string raw = trimmed(connection != nullptr ? PQerrorMessage(connection) : "out of memory");
  std::string message;  // libpq's lines ("...\n\tIs the server running...") joined by one space
  for (const char c : raw) {
    const bool space = c == '\n' || c == '\t' || c == ' ';
    if (space && (message.empty() || message.back() == ' ')) continue;
    message += space ? ' ' : c;
  }
  return message.empty() ? "the connection failed" : message;
}

// The ErrorKind of a SQLSTATE (PostgreSQL appendix A).
ErrorKind kind_of(std::string_view state) {
  if (state == "55P03" || state == "40001" || state == "40P01" || state == "57014") return ErrorKind::busy;
  if (state == "25006") return ErrorKind::read_only;
  if (state.starts_with("53")) return ErrorKind::full;  // insufficient resources: disk, memory
  if (state.starts_with("23")) return ErrorKind::conflict;
  if (state == "22021" || state == "22P05" || state == "54000") return ErrorKind::invalid;
  if (state.starts_with("XX")) return ErrorKind::corrupt;
  return ErrorKind::io;
}

// Binary parameters of one statement, with their types.
class Params {
 public:
  Params& add(int64_t value) {
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((static_cast<uint64_t>(value) >> (56 - 8 * i)) & 0xff);
    return push(kInt8Oid, std::move(bytes));
  }
  Params& add(std::optional<int64_t> value) { return value ? add(*value) : push_null(kInt8Oid); }
  Params& text(std::string_view value) { return push(kTextOid, std::string(value)); }
  Params& bytes(std::string_view value) { return push(kByteaOid, std::string(value)); }
  Params& bytes(const Bytes& value) {
    return push(kByteaOid, std::string(reinterpret_cast<const char*>(value.data()), value.size()));
  }

  int size() const { return static_cast<int>(types_.size()); }
  const Oid* types() const { return types_.data(); }
  // Pointers into this object: valid while it lives and is not changed.
  std::vector<const char*> values() const {
    std::vector<const char*> pointers;
    for (size_t i = 0; i < values_.size(); ++i) pointers.push_back(null_[i] ? nullptr : values_[i].data());
    return pointers;
  }
  std::vector<int> lengths() const {
    std::vector<int> lengths;
    for (const std::string& value : values_) lengths.push_back(static_cast<int>(value.size()));
    return lengths;
  }

 private:
  Params& push(Oid type, std::string value) {
    types_.push_back(type);
    values_.push_back(std::move(value));
    null_.push_back(false);
    return *this;
  }
  Params& push_null(Oid type) {
    types_.push_back(type);
    values_.emplace_back();
    null_.push_back(true);
    return *this;
  }
  std::vector<Oid> types_;
  std::vector<std::string> values_;
  std::vector<bool> null_;
};

// The rows of a statement, in binary format.
class Rows {
 public:
  explicit Rows(ResultPtr result) : result_(std::move(result)) {}
  int count() const { return PQntuples(result_.get()); }
  bool null(int row, int column) const { return PQgetisnull(result_.get(), row, column) == 1; }
  int64_t int64(int row, int column) const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(PQgetvalue(result_.get(), row, column));
    const int length = PQgetlength(result_.get(), row, column);
    const Oid type = PQftype(result_.get(), column);
    if (type == kBoolOid) return length > 0 && bytes[0] != 0 ? 1 : 0;
    uint64_t value = 0;
    for (int i = 0; i < length; ++i) value = (value << 8) | bytes[i];
    if (type == kInt4Oid) return static_cast<int32_t>(static_cast<uint32_t>(value));
    return static_cast<int64_t>(value);
  }
  std::optional<int64_t> optional_int64(int row, int column) const {
    if (null(row, column)) return std::nullopt;
    return int64(row, column);
  }
  std::string text(int row, int column) const {
    return std::string(PQgetvalue(result_.get(), row, column),
                       static_cast<size_t>(PQgetlength(result_.get(), row, column)));
  }
  Bytes bytes(int row, int column) const {
    const auto* data = reinterpret_cast<const uint8_t*>(PQgetvalue(result_.get(), row, column));
    return Bytes(data, data + PQgetlength(result_.get(), row, column));
  }

 private:
  ResultPtr result_;
};

// One libpq connection, its session settings and the depth of its open transaction.
class Connection {
 public:
  Connection() = default;

  static Result<Connection> open(const std::string& url, const OpenOptions& options) {
    Connection connection;
    connection.url_ = url;
    connection.read_only_ = options.read_only;
    connection.busy_timeout_ = options.busy_timeout;
    auto made = connection.connect();
    if (!made) return made.error();
    return connection;
  }

  PGconn* get() const { return connection_.get(); }
  int depth() const { return depth_; }
  void set_depth(int depth) { depth_ = depth; }
  std::chrono::milliseconds busy_timeout() const { return busy_timeout_; }

  // Connects (again): a lost connection is replaced before the next transaction.
  Result<void> connect() {
    connection_.reset(PQconnectdb(url_.c_str()));
    if (!connection_ || PQstatus(connection_.get()) != CONNECTION_OK) {
      Error error{ErrorKind::io, connection_message(connection_.get())};
      connection_.reset();
      return error;
    }
    PQsetNoticeProcessor(connection_.get(), ignore_notice, nullptr);
    Params params;
    params.text(fmt::format("{}ms", busy_timeout_.count()));
    auto lock_timeout = exec("SELECT set_config('lock_timeout', $1, false)", params);
    if (!lock_timeout) return lock_timeout.error();
    if (read_only_) {
      auto read_only = exec("SET default_transaction_read_only = on");
      if (!read_only) return read_only.error();
    }
    depth_ = 0;
    return {};
  }

  bool lost() const { return !connection_ || PQstatus(connection_.get()) != CONNECTION_OK; }

  Result<Rows> exec(const char* sql, const Params& params = {}) {
    if (!connection_) return Error{ErrorKind::io, "not connected to the server"};
    const std::vector<const char*> values = params.values();
    const std::vector<int> lengths = params.lengths();
    const std::vector<int> formats(values.size(), 1);
    ResultPtr result(PQexecParams(connection_.get(), sql, params.size(), params.types(), values.data(),
                                  lengths.data(), formats.data(), /*resultFormat=*/1));
    const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) return Rows(std::move(result));
    return error_of(result.get());
  }

  /// Several statements without parameters (the schema), by the simple query protocol.
  Result<void> exec_script(const char* sql) {
    if (!connection_) return Error{ErrorKind::io, "not connected to the server"};
    ResultPtr result(PQexec(connection_.get(), sql));
    if (result && PQresultStatus(result.get()) == PGRES_COMMAND_OK) return {};
    return error_of(result.get());
  }

  Error error_of(const PGresult* result) const {
    const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const char* primary = result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    if (state == nullptr || primary == nullptr) {  // no answer from the server: the connection
      return Error{ErrorKind::io, connection_message(connection_.get())};
    }
    return Error{kind_of(state), fmt::format("{} (SQLSTATE {})", primary, state)};
  }

 private:
  ConnectionPtr connection_;
  std::string url_;
  bool read_only_ = false;
  std::chrono::milliseconds busy_timeout_{5000};
  int depth_ = 0;
};

// A transaction, or a savepoint inside one (Store::batch). Write transactions take the store's
// advisory lock first, so every writer of a store runs alone and reads the latest commit.
// Rolls back unless committed.
class Transaction {
 public:
  enum class Mode : uint8_t { read, write };

  static Result<Transaction> begin(Connection& connection, Mode mode, int64_t lock_key) {
    if (connection.depth() > 0) {
      auto savepoint = connection.exec(fmt::format("SAVEPOINT gov_{}", connection.depth()).c_str());
      if (!savepoint) return savepoint.error();
      connection.set_depth(connection.depth() + 1);
      return Transaction(connection);
    }
    // A connection lost since the last statement (server restart, idle timeout, a terminated
    // backend) is made again here, between transactions, where nothing is lost by it.
    if (connection.lost()) {
      auto again = connection.connect();
      if (!again) return again.error();
    }
    const char* begin = mode == Mode::read ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN";
    auto begun = connection.exec(begin);
    if (!begun && connection.lost()) {  // found lost by this statement: once more
      auto again = connection.connect();
      if (!again) return again.error();
      begun = connection.exec(begin);
    }
    if (!begun) return begun.error();
    connection.set_depth(1);
    Transaction transaction(connection);
    if (mode == Mode::write) {
      const auto started = std::chrono::steady_clock::now();
      Params params;
      params.add(lock_key);
      auto locked = connection.exec("SELECT pg_advisory_xact_lock($1)", params);
      if (!locked) {
        Error error = locked.error();
        if (error.kind == ErrorKind::busy) {
          const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::steady_clock::now() - started);
          error.message = fmt::format("another writer held the store's lock (waited {} ms, the busy timeout is {} ms)",
                                      waited.count(), connection.busy_timeout().count());
        }
        return error;
      }
    }
    return transaction;
  }

  Transaction(Transaction&& other) noexcept : connection_(std::exchange(other.connection_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction() {
    if (connection_ != nullptr) roll_back();
  }

  Result<void> commit() {
    Connection& connection = *std::exchange(connection_, nullptr);
    const int depth = connection.depth();
    auto done = depth == 1 ? connection.exec("COMMIT")
                           : connection.exec(fmt::format("RELEASE SAVEPOINT gov_{}", depth - 1).c_str());
    connection.set_depth(depth - 1);
    if (!done) {
      if (depth == 1 && !connection.lost()) (void)connection.exec("ROLLBACK");
      return done.error();
    }
    return {};
  }

 private:
  explicit Transaction(Connection& connection) : connection_(&connection) {}
  void roll_back() {
    Connection& connection = *std::exchange(connection_, nullptr);
    const int depth = connection.depth();
    connection.set_depth(depth - 1);
    if (connection.lost()) return;
    if (depth == 1) {
      (void)connection.exec("ROLLBACK");
      return;
    }
    (void)connection.exec(fmt::format("ROLLBACK TO SAVEPOINT gov_{}", depth - 1).c_str());
    (void)connection.exec(fmt::format("RELEASE SAVEPOINT gov_{}", depth - 1).c_str());
  }

  Connection* connection_;
};

using Mode = Transaction::Mode;

// ---- the store -------------------------------------------------------------------------------

struct VersionRow {
  int64_t id = 0;
  int64_t number = 0;
  std::string content_sha256;
};

class PostgresStore final : public Store::Impl {
 public:
  std::string url;     // with its password, for connecting
  std::string shown;   // without it, for messages
  std::string schema;  // current_schema() of the connection
  OpenOptions options;
  Connection db;
  int64_t lock_key = 0;  // the advisory lock of this store's writers
  std::optional<std::string> read_only_reason;

  const std::string& path() const override { return shown; }
  bool read_only() const override { return read_only_reason.has_value(); }
  Backend backend() const override { return Backend::postgresql; }
  Result<ApplyResult> apply(const ApplyRequest& request, const std::string& content_sha256) override;
  Result<ApplyResult> rollback(const RollbackRequest& request) override;
  Result<ApplyResult> activate(std::string_view policy, int64_t version, std::string_view author,
                               std::optional<int64_t> expect_version) override;
  Result<std::vector<VersionInfo>> log(std::string_view policy, size_t limit,
                                       std::optional<int64_t> before) override;
  Result<Version> show(std::string_view policy, std::optional<int64_t> number) override;
  Result<VersionInfo> active(std::string_view policy) override;
  Result<void> put_object(std::string_view policy, int64_t version, const CompiledObject& object) override;
  Result<std::optional<SignedObject>> get_signed_object(std::string_view policy, int64_t version,
                                                        std::string_view key) override;
  Result<std::vector<CompiledObject>> objects(std::string_view policy, int64_t version) override;
  Result<std::vector<AuditEntry>> audit(std::string_view policy, size_t limit,
                                        std::optional<int64_t> before) override;
  Result<std::vector<PolicyInfo>> policies() override;
  Result<void> batch(Store& self, const std::function<Result<void>(Store&)>& body) override;
  Result<std::string> integrity_check() override;
  WorkCounters take_work_counters() override { return {}; }
  Result<void> import_version(std::string_view policy, const ImportedVersion& version) override;
  Result<void> import_audit(const AuditEntry& entry) override;
  Result<void> import_active(std::string_view policy, std::optional<int64_t> version) override;
  Result<std::unique_ptr<ChangeFeed>> changes(std::string_view policy) override;

  Result<Transaction> begin(Mode mode) { return Transaction::begin(db, mode, lock_key); }

  // The writes' common start: refused when read-only, else the write transaction.
  Result<Transaction> begin_write() {
    if (read_only_reason) return Error{ErrorKind::read_only, *read_only_reason};
    return begin(Mode::write);
  }

  void fault_point(std::string_view point) const {
    if (options.fault_hook) options.fault_hook(point);
  }
};

// ---- rows ------------------------------------------------------------------------------------

Result<std::optional<int64_t>> find_policy(Connection& db, std::string_view name) {
  auto rows = db.exec("SELECT id FROM gov_policy WHERE name = $1", Params().text(name));
  if (!rows) return rows.error();
  if (rows->count() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(rows->int64(0, 0));
}

Result<int64_t> require_policy(Connection& db, std::string_view name) {
  auto id = find_policy(db, name);
  if (!id) return id.error();
  if (!*id) return no_policy(name);
  return **id;
}

Result<int64_t> ensure_policy(Connection& db, std::string_view name) {
  auto id = find_policy(db, name);
  if (!id) return id.error();
  if (*id) return **id;
  auto rows = db.exec("INSERT INTO gov_policy (name, created_ms) VALUES ($1, $2) RETURNING id",
                      Params().text(name).add(now_ms()));
  if (!rows) return rows.error();
  return rows->int64(0, 0);
}

Result<std::optional<VersionRow>> version_row(Result<Rows> rows) {
  if (!rows) return rows.error();
  if (rows->count() == 0) return std::optional<VersionRow>();
  return std::optional<VersionRow>(VersionRow{rows->int64(0, 0), rows->int64(0, 1), rows->text(0, 2)});
}

Result<std::optional<VersionRow>> active_row(Connection& db, int64_t policy_id) {
  return version_row(db.exec("SELECT id, number, content_sha256 FROM gov_version WHERE policy_id = $1 AND active",
                             Params().add(policy_id)));
}

Result<std::optional<VersionRow>> numbered_row(Connection& db, int64_t policy_id, int64_t number) {
  return version_row(db.exec("SELECT id, number, content_sha256 FROM gov_version WHERE policy_id = $1 AND number = $2",
                             Params().add(policy_id).add(number)));
}

Result<int64_t> latest_number(Connection& db, int64_t policy_id) {
  auto rows = db.exec("SELECT number FROM gov_version WHERE policy_id = $1 ORDER BY number DESC LIMIT 1",
                      Params().add(policy_id));
  if (!rows) return rows.error();
  return rows->count() == 0 ? 0 : rows->int64(0, 0);
}

Result<VersionRow> require_version(Connection& db, std::string_view policy, int64_t policy_id, int64_t number) {
  auto found = numbered_row(db, policy_id, number);
  if (!found) return found.error();
  if (*found) return **found;
  auto latest = latest_number(db, policy_id);
  if (!latest) return latest.error();
  return Error{ErrorKind::not_found,
               fmt::format("policy `{}` has no version {} (the latest is {})", policy, number, *latest)};
}

Result<std::optional<int64_t>> version_id_of(Connection& db, std::string_view policy, int64_t policy_id,
                                             std::optional<int64_t> number) {
  if (!number) return std::optional<int64_t>();
  auto row = require_version(db, policy, policy_id, *number);
  if (!row) return row.error();
  return std::optional<int64_t>(row->id);
}

Result<void> check_expected(std::string_view policy, std::optional<int64_t> expected,
                            const std::optional<VersionRow>& active) {
  return detail::check_expected(policy, expected, active ? std::optional<int64_t>(active->number) : std::nullopt);
}

struct NewVersion {
  int64_t policy_id = 0;
  int64_t number = 0;
  std::optional<int64_t> parent_id;
  std::optional<int64_t> restored_from;
  std::string_view content_sha256;
  std::string_view author;
  std::string_view message;
  int64_t created_ms = 0;
};

Result<int64_t> insert_version(Connection& db, const NewVersion& version) {
  auto rows = db.exec(
      "INSERT INTO gov_version (policy_id, number, parent_id, restored_from, content_sha256, author, message, "
      "created_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
      Params()
          .add(version.policy_id)
          .add(version.number)
          .add(version.parent_id)
          .add(version.restored_from)
          .text(version.content_sha256)
          .text(version.author)
          .text(version.message)
          .add(version.created_ms));
  if (!rows) return rows.error();
  return rows->int64(0, 0);
}

Result<int64_t> store_source(Connection& db, std::string_view text) {
  const std::string sha256 = sha256_hex(text);
  // Writers hold the store's lock: no other transaction inserts this row meanwhile.
  // A row whose text no longer hashes to its key (changed outside gov, or damaged) is written again:
  // the key says what its text is, and every version naming it reads back right.
  auto inserted = db.exec("INSERT INTO gov_source (sha256, text) VALUES ($1, $2) ON CONFLICT (sha256) DO UPDATE "
                          "SET text = excluded.text WHERE gov_source.text IS DISTINCT FROM excluded.text",
                          Params().text(sha256).bytes(text));
  if (!inserted) return inserted.error();
  auto rows = db.exec("SELECT id FROM gov_source WHERE sha256 = $1", Params().text(sha256));
  if (!rows) return rows.error();
  if (rows->count() == 0) return Error{ErrorKind::corrupt, "a source row just inserted is missing"};
  return rows->int64(0, 0);
}

Result<void> insert_files(Connection& db, int64_t version_id, const std::vector<PolicyFile>& files) {
  for (size_t ordinal = 0; ordinal < files.size(); ++ordinal) {
    auto source_id = store_source(db, files[ordinal].text);
    if (!source_id) return source_id.error();
    auto inserted = db.exec("INSERT INTO gov_version_file (version_id, ordinal, path, source_id) VALUES ($1, $2, $3, $4)",
                            Params().add(version_id).add(static_cast<int64_t>(ordinal)).text(files[ordinal].path).add(*source_id));
    if (!inserted) return inserted.error();
  }
  return {};
}

Result<void> copy_version_contents(Connection& db, int64_t from_id, int64_t to_id) {
  // Signatures cover content, never the version number: they hold for the copy too.
  for (const char* sql : {
           "INSERT INTO gov_version_file (version_id, ordinal, path, source_id) "
           "SELECT $2, ordinal, path, source_id FROM gov_version_file WHERE version_id = $1",
           "INSERT INTO gov_object (version_id, key, bytes, created_ms) "
           "SELECT $2, key, bytes, created_ms FROM gov_object WHERE version_id = $1",
           "INSERT INTO gov_version_signature (version_id, key_id, signature) "
           "SELECT $2, key_id, signature FROM gov_version_signature WHERE version_id = $1",
           "INSERT INTO gov_object_signature (version_id, key, key_id, signature) "
           "SELECT $2, key, key_id, signature FROM gov_object_signature WHERE version_id = $1",
       }) {
    auto copied = db.exec(sql, Params().add(from_id).add(to_id));
    if (!copied) return copied.error();
  }
  return {};
}

Result<void> store_version_signature(Connection& db, int64_t version_id, const Signature& signature) {
  auto stored = db.exec(
      "INSERT INTO gov_version_signature (version_id, key_id, signature) VALUES ($1, $2, $3) "
      "ON CONFLICT (version_id) DO UPDATE SET key_id = excluded.key_id, signature = excluded.signature",
      Params().add(version_id).text(signature.key_id).bytes(signature.bytes));
  if (!stored) return stored.error();
  return {};
}

// As the SQLite store: a signed object replaces the old signature; an unsigned one removes it
// unless the bytes are the same (then it still holds).
Result<void> store_object(Connection& db, int64_t version_id, const CompiledObject& object) {
  if (!object.signature) {
    auto unsigned_old = db.exec(
        "DELETE FROM gov_object_signature WHERE version_id = $1 AND key = $2 AND "
        "(SELECT bytes FROM gov_object WHERE version_id = $1 AND key = $2) IS DISTINCT FROM $3",
        Params().add(version_id).text(object.key).bytes(object.bytes));
    if (!unsigned_old) return unsigned_old.error();
  }
  auto stored = db.exec(
      "INSERT INTO gov_object (version_id, key, bytes, created_ms) VALUES ($1, $2, $3, $4) "
      "ON CONFLICT (version_id, key) DO UPDATE SET bytes = excluded.bytes, created_ms = excluded.created_ms",
      Params().add(version_id).text(object.key).bytes(object.bytes).add(now_ms()));
  if (!stored) return stored.error();
  if (!object.signature) return {};
  auto signature = db.exec(
      "INSERT INTO gov_object_signature (version_id, key, key_id, signature) VALUES ($1, $2, $3, $4) "
      "ON CONFLICT (version_id, key) DO UPDATE SET key_id = excluded.key_id, signature = excluded.signature",
      Params().add(version_id).text(object.key).text(object.signature->key_id).bytes(object.signature->bytes));
  if (!signature) return signature.error();
  return {};
}

// Two statements, in this order, so the partial unique index never sees two active versions;
// then the notification, which PostgreSQL delivers when (and only if) the transaction commits.
Result<void> make_active(Connection& db, std::string_view policy, int64_t policy_id, std::optional<int64_t> version_id) {
  auto cleared = db.exec("UPDATE gov_version SET active = false WHERE policy_id = $1 AND active", Params().add(policy_id));
  if (!cleared) return cleared.error();
  if (version_id) {
    auto marked = db.exec("UPDATE gov_version SET active = true WHERE id = $1", Params().add(*version_id));
    if (!marked) return marked.error();
  }
  auto notified = db.exec("SELECT pg_notify($1, current_schema() || '/' || $2)", Params().text(kChannel).text(policy));
  if (!notified) return notified.error();
  return {};
}

struct NewAudit {
  int64_t policy_id = 0;
  AuditAction action = AuditAction::apply;
  int64_t version_id = 0;
  std::optional<int64_t> previous_id;
  std::string_view author;
  std::string_view message;
  int64_t at_ms = 0;
};

Result<void> append_audit(Connection& db, const NewAudit& entry) {
  auto inserted = db.exec(
      "INSERT INTO gov_audit (at_ms, policy_id, action, version_id, previous_id, author, message) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7)",
      Params()
          .add(entry.at_ms)
          .add(entry.policy_id)
          .text(audit_action_name(entry.action))
          .add(entry.version_id)
          .add(entry.previous_id)
          .text(entry.author)
          .text(entry.message));
  if (!inserted) return inserted.error();
  return {};
}

std::optional<int64_t> id_of(const std::optional<VersionRow>& row) {
  return row ? std::optional<int64_t>(row->id) : std::nullopt;
}
std::optional<int64_t> number_of(const std::optional<VersionRow>& row) {
  return row ? std::optional<int64_t>(row->number) : std::nullopt;
}

// ---- writes ----------------------------------------------------------------------------------

Result<std::optional<Signature>> read_signature(Result<Rows> rows);  // below, with the reads

Result<ApplyResult> unchanged(Connection& db, Transaction& transaction, const VersionRow& active,
                              const std::optional<CompiledObject>& object, const std::optional<Signature>& signature,
                              const ApplyRequest* request = nullptr) {
  if (signature && request) {
    auto stored = read_signature(
        db.exec("SELECT key_id, signature FROM gov_version_signature WHERE version_id = $1", Params().add(active.id)));
    if (!stored) return stored.error();
    auto allowed = detail::check_resign(request->policy, active.number,
                                        *stored ? std::optional<std::string>((*stored)->key_id) : std::nullopt,
                                        signature->key_id, request->replace_signature);
    if (!allowed) return allowed.error();
  }
  if (object) {
    auto stored = store_object(db, active.id, *object);
    if (!stored) return stored.error();
  }
  if (signature) {
    auto signed_version = store_version_signature(db, active.id, *signature);
    if (!signed_version) return signed_version.error();
  }
  auto committed = transaction.commit();
  if (!committed) return committed.error();
  return ApplyResult{active.number, /*created=*/false, active.number, active.content_sha256};
}

Result<std::vector<PolicyFile>> read_files(Connection& db, int64_t version_id);  // below, with the reads

/// The files of a version just written, read back inside the transaction and hashed again
/// (detail::check_written).
Result<void> verify_written(Connection& db, int64_t version_id, const std::string& content_sha256, std::string_view doing) {
  auto files = read_files(db, version_id);
  if (!files) return files.error();
  return detail::check_written(doing, *files, content_sha256);
}

/// An apply whose content is the active version's writes its files again all the same: a source
/// row changed outside gov is repaired (store_source), so the active version loads again.
Result<void> rewrite_sources(Connection& db, const std::vector<PolicyFile>& files) {
  for (const PolicyFile& file : files) {
    auto stored = store_source(db, file.text);
    if (!stored) return stored.error();
  }
  return {};
}

Result<ApplyResult> apply_in(PostgresStore& store, const ApplyRequest& request, const std::string& content_sha256) {
  Connection& db = store.db;
  auto transaction = store.begin_write();
  if (!transaction) return transaction.error();
  auto policy_id = ensure_policy(db, request.policy);
  if (!policy_id) return policy_id.error();
  auto active = active_row(db, *policy_id);
  if (!active) return active.error();
  auto expected = check_expected(request.policy, request.expect_version, *active);
  if (!expected) return expected.error();
  if (*active && (*active)->content_sha256 == content_sha256) {
    auto rewritten = rewrite_sources(db, request.files);
    if (!rewritten) return rewritten.error();
    return unchanged(db, *transaction, **active, request.object, request.signature, &request);
  }
  auto latest = latest_number(db, *policy_id);
  if (!latest) return latest.error();
  auto version_id = insert_version(db, {*policy_id, *latest + 1, id_of(*active), std::nullopt, content_sha256,
                                        request.author, request.message, now_ms()});
  if (!version_id) return version_id.error();
  auto files = insert_files(db, *version_id, request.files);
  if (!files) return files.error();
  auto written = verify_written(db, *version_id, content_sha256, fmt::format("applying policy `{}`", request.policy));
  if (!written) return written.error();
  if (request.signature) {
    auto signed_version = store_version_signature(db, *version_id, *request.signature);
    if (!signed_version) return signed_version.error();
  }
  if (request.object) {
    auto object = store_object(db, *version_id, *request.object);
    if (!object) return object.error();
  }
  store.fault_point("apply:before_activate");
  auto activated = make_active(db, request.policy, *policy_id, *version_id);
  if (!activated) return activated.error();
  auto audited = append_audit(db, {*policy_id, AuditAction::apply, *version_id, id_of(*active), request.author,
                                   request.message, now_ms()});
  if (!audited) return audited.error();
  store.fault_point("apply:before_commit");
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return ApplyResult{*latest + 1, /*created=*/true, number_of(*active), content_sha256};
}

Result<ApplyResult> rollback_in(PostgresStore& store, const RollbackRequest& request) {
  Connection& db = store.db;
  auto transaction = store.begin_write();
  if (!transaction) return transaction.error();
  auto policy_id = require_policy(db, request.policy);
  if (!policy_id) return policy_id.error();
  auto active = active_row(db, *policy_id);
  if (!active) return active.error();
  auto expected = check_expected(request.policy, request.expect_version, *active);
  if (!expected) return expected.error();
  auto target = require_version(db, request.policy, *policy_id, request.version);
  if (!target) return target.error();
  if (*active && (*active)->content_sha256 == target->content_sha256) {
    // Nothing to do only if the active version reads: "unchanged" for a damaged one left every
    // controller unable to load it while the rollback reported success.
    auto readable = verify_written(db, (*active)->id, (*active)->content_sha256,
                                   fmt::format("rolling policy `{}` back to version {} (version {} is active with its "
                                               "content)",
                                               request.policy, request.version, (*active)->number));
    if (!readable) return readable.error();
    return unchanged(db, *transaction, **active, std::nullopt, std::nullopt);
  }
  auto latest = latest_number(db, *policy_id);
  if (!latest) return latest.error();
  auto version_id = insert_version(db, {*policy_id, *latest + 1, id_of(*active), target->id, target->content_sha256,
                                        request.author, request.message, now_ms()});
  if (!version_id) return version_id.error();
  auto copied = copy_version_contents(db, target->id, *version_id);
  if (!copied) return copied.error();
  auto written = verify_written(db, *version_id, target->content_sha256,
                                fmt::format("rolling policy `{}` back to version {}", request.policy, request.version));
  if (!written) return written.error();
  auto activated = make_active(db, request.policy, *policy_id, *version_id);
  if (!activated) return activated.error();
  auto audited = append_audit(db, {*policy_id, AuditAction::rollback, *version_id, id_of(*active), request.author,
                                   request.message, now_ms()});
  if (!audited) return audited.error();
  store.fault_point("rollback:before_commit");
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return ApplyResult{*latest + 1, /*created=*/true, number_of(*active), target->content_sha256};
}

Result<ApplyResult> activate_in(PostgresStore& store, std::string_view policy, int64_t number, std::string_view author,
                                std::optional<int64_t> expect_version) {
  Connection& db = store.db;
  auto transaction = store.begin_write();
  if (!transaction) return transaction.error();
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  auto active = active_row(db, *policy_id);
  if (!active) return active.error();
  auto expected = check_expected(policy, expect_version, *active);
  if (!expected) return expected.error();
  auto target = require_version(db, policy, *policy_id, number);
  if (!target) return target.error();
  if (*active && (*active)->id == target->id) return unchanged(db, *transaction, **active, std::nullopt, std::nullopt);
  auto activated = make_active(db, policy, *policy_id, target->id);
  if (!activated) return activated.error();
  auto audited = append_audit(db, {*policy_id, AuditAction::activate, target->id, id_of(*active), author,
                                   fmt::format("activate version {}", number), now_ms()});
  if (!audited) return audited.error();
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return ApplyResult{number, /*created=*/false, number_of(*active), target->content_sha256};
}

// ---- reads -----------------------------------------------------------------------------------

constexpr const char* kVersionColumns =
    "SELECT v.number, p.number, r.number, v.content_sha256, v.author, v.message, v.created_ms, v.active, s.key_id "
    "FROM gov_version v LEFT JOIN gov_version p ON p.id = v.parent_id "
    "LEFT JOIN gov_version r ON r.id = v.restored_from LEFT JOIN gov_version_signature s ON s.version_id = v.id ";

VersionInfo version_info(const Rows& rows, int row) {
  VersionInfo info;
  info.number = rows.int64(row, 0);
  info.parent = rows.optional_int64(row, 1);
  info.restored_from = rows.optional_int64(row, 2);
  info.content_sha256 = rows.text(row, 3);
  info.author = rows.text(row, 4);
  info.message = rows.text(row, 5);
  info.created_ms = rows.int64(row, 6);
  info.active = rows.int64(row, 7) != 0;
  info.signed_by = rows.text(row, 8);  // NULL without a signature: ""
  return info;
}

Result<VersionRow> locate(Connection& db, std::string_view policy, std::optional<int64_t> number) {
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  if (number) return require_version(db, policy, *policy_id, *number);
  auto active = active_row(db, *policy_id);
  if (!active) return active.error();
  if (!*active) return Error{ErrorKind::not_found, fmt::format("policy `{}` has no active version", policy)};
  return **active;
}

Result<VersionInfo> info_by_id(Connection& db, int64_t version_id) {
  static const std::string sql = std::string(kVersionColumns) + "WHERE v.id = $1";
  auto rows = db.exec(sql.c_str(), Params().add(version_id));
  if (!rows) return rows.error();
  if (rows->count() == 0) return Error{ErrorKind::corrupt, "a version row just read is missing"};
  return version_info(*rows, 0);
}

Result<std::vector<PolicyFile>> read_files(Connection& db, int64_t version_id) {
  auto rows = db.exec(
      "SELECT f.path, s.text FROM gov_version_file f JOIN gov_source s ON s.id = f.source_id "
      "WHERE f.version_id = $1 ORDER BY f.ordinal",
      Params().add(version_id));
  if (!rows) return rows.error();
  std::vector<PolicyFile> files;
  for (int row = 0; row < rows->count(); ++row) {
    PolicyFile file{rows->text(row, 0), rows->text(row, 1)};
    auto checked = check_read_file(file, files.size());
    if (!checked) return checked.error();
    files.push_back(std::move(file));
  }
  return files;
}

Result<std::optional<Signature>> read_signature(Result<Rows> rows) {
  if (!rows) return rows.error();
  if (rows->count() == 0) return std::optional<Signature>();
  return std::optional<Signature>(Signature{rows->text(0, 0), rows->bytes(0, 1)});
}

Result<Version> show_in(PostgresStore& store, std::string_view policy, std::optional<int64_t> number) {
  Connection& db = store.db;
  auto transaction = store.begin(Mode::read);
  if (!transaction) return transaction.error();
  auto row = locate(db, policy, number);
  if (!row) return row.error();
  auto info = info_by_id(db, row->id);
  if (!info) return info.error();
  auto files = read_files(db, row->id);
  if (!files) return files.error();
  auto signature =
      read_signature(db.exec("SELECT key_id, signature FROM gov_version_signature WHERE version_id = $1", Params().add(row->id)));
  if (!signature) return signature.error();
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return Version{std::move(*info), std::move(*files), std::move(*signature)};
}

Result<VersionInfo> active_in(PostgresStore& store, std::string_view policy) {
  auto transaction = store.begin(Mode::read);
  if (!transaction) return transaction.error();
  auto row = locate(store.db, policy, std::nullopt);
  if (!row) return row.error();
  auto info = info_by_id(store.db, row->id);
  if (!info) return info.error();
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return info;
}

Result<std::vector<VersionInfo>> log_in(PostgresStore& store, std::string_view policy, size_t limit,
                                        std::optional<int64_t> before) {
  auto transaction = store.begin(Mode::read);
  if (!transaction) return transaction.error();
  auto policy_id = require_policy(store.db, policy);
  if (!policy_id) return policy_id.error();
  static const std::string sql =
      std::string(kVersionColumns) + "WHERE v.policy_id = $1 AND v.number < $2 ORDER BY v.number DESC LIMIT $3";
  auto rows = store.db.exec(sql.c_str(), Params()
                                             .add(*policy_id)
                                             .add(before.value_or(std::numeric_limits<int64_t>::max()))
                                             .add(clamp_limit(limit)));
  if (!rows) return rows.error();
  std::vector<VersionInfo> versions;
  for (int row = 0; row < rows->count(); ++row) versions.push_back(version_info(*rows, row));
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return versions;
}

Result<std::vector<AuditEntry>> read_audit(const Rows& rows) {
  std::vector<AuditEntry> entries;
  for (int row = 0; row < rows.count(); ++row) {
    auto action = detail::parse_action(rows.text(row, 2));
    if (!action) return Error{ErrorKind::corrupt, fmt::format("unknown audit action `{}`", rows.text(row, 2))};
    entries.push_back(AuditEntry{rows.int64(row, 0), rows.int64(row, 1), *action, rows.text(row, 3), rows.int64(row, 4),
                                 rows.optional_int64(row, 5), rows.text(row, 6), rows.text(row, 7)});
  }
  return entries;
}

Result<std::vector<AuditEntry>> audit_in(PostgresStore& store, std::string_view policy, size_t limit,
                                         std::optional<int64_t> before) {
  auto transaction = store.begin(Mode::read);
  if (!transaction) return transaction.error();
  const int64_t below = before.value_or(std::numeric_limits<int64_t>::max());
  constexpr const char* kColumns =
      "SELECT a.id, a.at_ms, a.action, p.name, v.number, pv.number, a.author, a.message "
      "FROM gov_audit a JOIN gov_policy p ON p.id = a.policy_id JOIN gov_version v ON v.id = a.version_id "
      "LEFT JOIN gov_version pv ON pv.id = a.previous_id ";
  Result<Rows> rows = Error{ErrorKind::io, "not read"};
  if (policy.empty()) {
    static const std::string sql = std::string(kColumns) + "WHERE a.id < $1 ORDER BY a.id DESC LIMIT $2";
    rows = store.db.exec(sql.c_str(), Params().add(below).add(clamp_limit(limit)));
  } else {
    auto policy_id = require_policy(store.db, policy);
    if (!policy_id) return policy_id.error();
    static const std::string sql =
        std::string(kColumns) + "WHERE a.policy_id = $1 AND a.id < $2 ORDER BY a.id DESC LIMIT $3";
    rows = store.db.exec(sql.c_str(), Params().add(*policy_id).add(below).add(clamp_limit(limit)));
  }
  if (!rows) return rows.error();
  auto entries = read_audit(*rows);
  if (!entries) return entries;
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return entries;
}

Result<std::vector<PolicyInfo>> policies_in(PostgresStore& store) {
  auto transaction = store.begin(Mode::read);
  if (!transaction) return transaction.error();
  auto rows = store.db.exec(
      "SELECT p.name, (SELECT number FROM gov_version WHERE policy_id = p.id AND active), "
      "(SELECT number FROM gov_version WHERE policy_id = p.id ORDER BY number DESC LIMIT 1) "
      "FROM gov_policy p ORDER BY p.name COLLATE \"C\"");
  if (!rows) return rows.error();
  std::vector<PolicyInfo> policies;
  for (int row = 0; row < rows->count(); ++row) {
    policies.push_back(PolicyInfo{rows->text(row, 0), rows->optional_int64(row, 1),
                                  rows->optional_int64(row, 2).value_or(0)});
  }
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return policies;
}

Result<VersionRow> object_version(Connection& db, std::string_view policy, int64_t number) {
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  return require_version(db, policy, *policy_id, number);
}

Result<std::vector<CompiledObject>> objects_in(PostgresStore& store, std::string_view policy, int64_t number,
                                               std::optional<std::string_view> key) {
  auto transaction = store.begin(Mode::read);
  if (!transaction) return transaction.error();
  auto version = object_version(store.db, policy, number);
  if (!version) return version.error();
  constexpr const char* kColumns =
      "SELECT o.key, o.bytes, s.key_id, s.signature FROM gov_object o LEFT JOIN gov_object_signature s "
      "ON s.version_id = o.version_id AND s.key = o.key WHERE o.version_id = $1 ";
  static const std::string one = std::string(kColumns) + "AND o.key = $2";
  static const std::string all = std::string(kColumns) + "ORDER BY o.key COLLATE \"C\"";
  auto rows = key ? store.db.exec(one.c_str(), Params().add(version->id).text(*key))
                  : store.db.exec(all.c_str(), Params().add(version->id));
  if (!rows) return rows.error();
  std::vector<CompiledObject> objects;
  for (int row = 0; row < rows->count(); ++row) {
    CompiledObject object{rows->text(row, 0), rows->bytes(row, 1), std::nullopt};
    if (!rows->null(row, 2)) object.signature = Signature{rows->text(row, 2), rows->bytes(row, 3)};
    objects.push_back(std::move(object));
  }
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return objects;
}

// ---- opening ---------------------------------------------------------------------------------

enum class Found : uint8_t { store, nothing };

// What the connection's schema holds: a gov store of a schema this gov reads, or nothing of
// ours; anything else is an error. Runs inside the caller's transaction.
Result<Found> look(PostgresStore& store) {
  Connection& db = store.db;
  // One statement, so one snapshot, for both questions: read in two (gov_meta first, then the
  // other tables), a store another process committed in between looked like tables without
  // gov_meta (a "damaged" store) to processes creating it at once.
  auto tables = db.exec(
      "SELECT count(*), count(*) FILTER (WHERE tablename = 'gov_meta') FROM pg_catalog.pg_tables "
      "WHERE schemaname = current_schema() AND tablename LIKE 'gov\\_%'");
  if (!tables) return tables.error();
  if (tables->int64(0, 1) != 0) {
    auto found = db.exec(
        "SELECT (SELECT value FROM gov_meta WHERE key = 'application'), "
        "(SELECT value FROM gov_meta WHERE key = 'schema_version')");
    if (!found) return found.error();
    const std::string application = found->null(0, 0) ? "" : found->text(0, 0);
    const std::string version = found->null(0, 1) ? "" : found->text(0, 1);
    if (application != kApplication) {
      return Error{ErrorKind::corrupt,
                   fmt::format("schema `{}` has a table `gov_meta` that is not a gov policy store's", store.schema)};
    }
    const int64_t number = std::atoll(version.c_str());
    if (number > kPostgresSchemaVersion) {
      return Error{ErrorKind::newer_schema,
                   fmt::format("this store was written by a newer gov (schema {}; this gov knows {})", number,
                               kPostgresSchemaVersion)};
    }
    if (number < 1) return Error{ErrorKind::corrupt, fmt::format("the store's schema version `{}` is not valid", version)};
    return Found::store;
  }
  // No gov_meta. Tables of ours without it are not a state gov leaves.
  if (tables->int64(0, 0) > 0) {
    return Error{ErrorKind::corrupt, fmt::format("schema `{}` has {} `gov_` tables but no `gov_meta`: not a gov policy "
                                                 "store (or a damaged one); it is not created over",
                                                 store.schema, tables->int64(0, 0))};
  }
  return Found::nothing;
}

// Finds or (read-write, `create`) makes the gov tables of the connection's schema. A store
// that exists is judged in a read transaction, without the writers' lock (an open never waits
// for an apply); a missing one is made under that lock after looking again, so processes
// opening a new store at once create it once.
Result<void> prepare(PostgresStore& store) {
  Connection& db = store.db;
  auto schema = db.exec("SELECT current_schema()::text");
  if (!schema) return schema.error();
  if (schema->count() == 0 || schema->null(0, 0)) {
    return Error{ErrorKind::not_found, "the connection's search_path names no existing schema to keep the store in"};
  }
  store.schema = schema->text(0, 0);
  auto key = db.exec("SELECT hashtextextended('gov-store:' || current_schema(), 0)");
  if (!key) return key.error();
  store.lock_key = key->int64(0, 0);
  {
    auto reading = store.begin(Mode::read);
    if (!reading) return reading.error();
    auto found = look(store);
    if (!found) return found.error();
    auto committed = reading->commit();
    if (!committed) return committed;
    if (*found == Found::store) return {};
  }
  if (!store.options.create || store.read_only_reason) {
    return Error{ErrorKind::not_found, fmt::format("no policy store in schema `{}`", store.schema)};
  }
  auto writing = store.begin(Mode::write);
  if (!writing) return writing.error();
  auto found = look(store);  // again, under the lock: another process may have made it meanwhile
  if (!found) return found.error();
  if (*found == Found::store) return writing->commit();
  auto created = db.exec_script(kSchema);
  if (!created) return created.error();
  auto stamped = db.exec("INSERT INTO gov_meta (key, value) VALUES ('application', $1), ('schema_version', $2)",
                         Params().text(kApplication).text(std::to_string(kPostgresSchemaVersion)));
  if (!stamped) return stamped.error();
  return writing->commit();
}

// ---- the change feed ---------------------------------------------------------------------

class PostgresChangeFeed final : public ChangeFeed {
 public:
  PostgresChangeFeed(std::string url, std::string payload) : url_(std::move(url)), payload_(std::move(payload)) {
    wakeup_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  }
  ~PostgresChangeFeed() override {
    if (wakeup_ >= 0) ::close(wakeup_);
  }

  Result<void> listen() {
    connection_.reset(PQconnectdb(url_.c_str()));
    if (!connection_ || PQstatus(connection_.get()) != CONNECTION_OK) {
      Error error{ErrorKind::io, connection_message(connection_.get())};
      connection_.reset();
      return error;
    }
    PQsetNoticeProcessor(connection_.get(), ignore_notice, nullptr);
    ResultPtr result(PQexec(connection_.get(), fmt::format("LISTEN {}", kChannel).c_str()));
    if (!result || PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
      Error error{ErrorKind::io, connection_message(connection_.get())};
      connection_.reset();
      return error;
    }
    return {};
  }

  Result<bool> wait(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (!connection_ || PQstatus(connection_.get()) != CONNECTION_OK) {
        auto again = listen();
        if (!again) {
          // The server is away: wait a little (interruptibly) before the caller tries again.
          pause(std::min<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(100)));
          return again.error();
        }
        reconnects_.fetch_add(1);
        return true;  // what changed while the connection was down was not announced
      }
      if (take_notifications()) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd fds[2] = {{PQsocket(connection_.get()), POLLIN, 0}, {wakeup_, POLLIN, 0}};
      const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
      if (ready < 0 && errno != EINTR) return Error{ErrorKind::io, fmt::format("poll failed: {}", std::strerror(errno))};
      if (ready > 0 && (fds[1].revents & POLLIN) != 0) {
        uint64_t count = 0;
        [[maybe_unused]] auto read = ::read(wakeup_, &count, sizeof count);
        return false;
      }
      if (ready > 0 && fds[0].revents != 0) {
        if (PQconsumeInput(connection_.get()) == 0) connection_.reset();  // lost: made again above
      }
    }
  }

  void interrupt() override {
    const uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(wakeup_, &one, sizeof one);
  }

  int64_t reconnects() const override { return reconnects_.load(); }

 private:
  bool take_notifications() {
    bool changed = false;
    while (PGnotify* notification = PQnotifies(connection_.get())) {
      if (payload_ == notification->extra) changed = true;
      PQfreemem(notification);
    }
    return changed;
  }

  void pause(std::chrono::milliseconds duration) {
    pollfd fd{wakeup_, POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(duration.count()));
  }

  std::string url_;
  std::string payload_;  // `schema/policy`: the notifications this feed is for
  ConnectionPtr connection_;
  int wakeup_ = -1;
  std::atomic<int64_t> reconnects_{0};
};

}  // namespace

// ---- the back end's methods ----------------------------------------------------------------

Result<ApplyResult> PostgresStore::apply(const ApplyRequest& request, const std::string& hash) {
  return in_context(fmt::format("apply policy `{}` to `{}`", request.policy, path()), apply_in(*this, request, hash));
}

Result<ApplyResult> PostgresStore::rollback(const RollbackRequest& request) {
  return in_context(fmt::format("roll back policy `{}` in `{}`", request.policy, path()), rollback_in(*this, request));
}

Result<ApplyResult> PostgresStore::activate(std::string_view policy, int64_t version, std::string_view author,
                                            std::optional<int64_t> expect_version) {
  return in_context(fmt::format("activate version {} of policy `{}` in `{}`", version, policy, path()),
                    activate_in(*this, policy, version, author, expect_version));
}

Result<std::vector<VersionInfo>> PostgresStore::log(std::string_view policy, size_t limit,
                                                    std::optional<int64_t> before) {
  return in_context(fmt::format("read the log of policy `{}` from `{}`", policy, path()),
                    log_in(*this, policy, limit, before));
}

Result<Version> PostgresStore::show(std::string_view policy, std::optional<int64_t> number) {
  return in_context(fmt::format("read policy `{}` from `{}`", policy, path()), show_in(*this, policy, number));
}

Result<VersionInfo> PostgresStore::active(std::string_view policy) {
  return in_context(fmt::format("read policy `{}` from `{}`", policy, path()), active_in(*this, policy));
}

Result<void> PostgresStore::put_object(std::string_view policy, int64_t number, const CompiledObject& object) {
  const std::string doing = fmt::format("store object `{}` of policy `{}` in `{}`", object.key, policy, path());
  if (object.key.empty()) return Error{ErrorKind::invalid, "the object key is empty"};
  auto transaction = begin_write();
  if (!transaction) return in_context(doing, transaction.error());
  auto version = object_version(db, policy, number);
  if (!version) return in_context(doing, version.error());
  auto stored = store_object(db, version->id, object);
  if (!stored) return in_context(doing, stored.error());
  return in_context(doing, transaction->commit());
}

Result<std::optional<SignedObject>> PostgresStore::get_signed_object(std::string_view policy, int64_t version,
                                                                    std::string_view key) {
  auto objects = in_context(fmt::format("read object `{}` of policy `{}` from `{}`", key, policy, path()),
                            objects_in(*this, policy, version, key));
  if (!objects) return objects.error();
  if (objects->empty()) return std::optional<SignedObject>();
  return std::optional<SignedObject>(SignedObject{std::move(objects->front().bytes), std::move(objects->front().signature)});
}

Result<std::vector<CompiledObject>> PostgresStore::objects(std::string_view policy, int64_t version) {
  return in_context(fmt::format("read the objects of version {} of policy `{}` from `{}`", version, policy, path()),
                    objects_in(*this, policy, version, std::nullopt));
}

Result<std::vector<AuditEntry>> PostgresStore::audit(std::string_view policy, size_t limit,
                                                     std::optional<int64_t> before) {
  return in_context(fmt::format("read the audit log of `{}`", path()), audit_in(*this, policy, limit, before));
}

Result<std::vector<PolicyInfo>> PostgresStore::policies() {
  return in_context(fmt::format("list the policies in `{}`", path()), policies_in(*this));
}

Result<void> PostgresStore::batch(Store& self, const std::function<Result<void>(Store&)>& body) {
  const std::string doing = fmt::format("write a batch to `{}`", path());
  auto transaction = begin_write();
  if (!transaction) return in_context(doing, transaction.error());
  auto done = body(self);
  if (!done) return done;  // the transaction rolls back
  return in_context(doing, transaction->commit());
}

Result<std::string> PostgresStore::integrity_check() {
  const std::string doing = fmt::format("check `{}`", path());
  auto transaction = begin(Mode::read);
  if (!transaction) return in_context(doing, transaction.error());
  std::vector<std::string> problems;
  struct Check {
    const char* sql;
    const char* what;
  };
  for (const Check& check : {
           Check{"SELECT count(*) FROM gov_source WHERE encode(sha256(text), 'hex') <> sha256",
                 "source rows whose text does not match their SHA-256"},
           Check{"SELECT count(*) FROM (SELECT policy_id FROM gov_version GROUP BY policy_id "
                 "HAVING max(number) <> count(*)) gaps",
                 "policies whose version numbers are not 1, 2, 3, ..."},
           Check{"SELECT count(*) FROM gov_version v WHERE NOT EXISTS "
                 "(SELECT 1 FROM gov_version_file f WHERE f.version_id = v.id AND f.ordinal = 0)",
                 "versions without an entry file"},
       }) {
    auto rows = db.exec(check.sql);
    if (!rows) return in_context(doing, rows.error());
    if (const int64_t count = rows->int64(0, 0); count > 0) problems.push_back(fmt::format("{} {}", count, check.what));
  }
  auto committed = transaction->commit();
  if (!committed) return in_context(doing, committed.error());
  if (problems.empty()) return std::string("ok");
  std::string report;
  for (const std::string& problem : problems) report += (report.empty() ? "" : "\n") + problem;
  return report;
}

Result<void> PostgresStore::import_version(std::string_view policy, const ImportedVersion& imported) {
  const VersionInfo& info = imported.version.info;
  const std::string doing = fmt::format("copy version {} of policy `{}` to `{}`", info.number, policy, path());
  auto transaction = begin_write();
  if (!transaction) return in_context(doing, transaction.error());
  auto policy_id = ensure_policy(db, policy);
  if (!policy_id) return in_context(doing, policy_id.error());
  auto latest = latest_number(db, *policy_id);
  if (!latest) return in_context(doing, latest.error());
  if (info.number != *latest + 1) {
    return Error{ErrorKind::conflict,
                 fmt::format("policy `{}` is at version {}; version {} cannot follow it", policy, *latest, info.number)};
  }
  auto parent = version_id_of(db, policy, *policy_id, info.parent);
  if (!parent) return in_context(doing, parent.error());
  auto restored = version_id_of(db, policy, *policy_id, info.restored_from);
  if (!restored) return in_context(doing, restored.error());
  auto version_id = insert_version(db, {*policy_id, info.number, *parent, *restored, info.content_sha256, info.author,
                                        info.message, info.created_ms});
  if (!version_id) return in_context(doing, version_id.error());
  auto files = insert_files(db, *version_id, imported.version.files);
  if (!files) return in_context(doing, files.error());
  if (imported.version.signature) {
    auto signed_version = store_version_signature(db, *version_id, *imported.version.signature);
    if (!signed_version) return in_context(doing, signed_version.error());
  }
  for (const CompiledObject& object : imported.objects) {
    auto stored = store_object(db, *version_id, object);
    if (!stored) return in_context(doing, stored.error());
  }
  return in_context(doing, transaction->commit());
}

Result<void> PostgresStore::import_audit(const AuditEntry& entry) {
  const std::string doing = fmt::format("copy an audit entry of policy `{}` to `{}`", entry.policy, path());
  auto transaction = begin_write();
  if (!transaction) return in_context(doing, transaction.error());
  auto policy_id = require_policy(db, entry.policy);
  if (!policy_id) return in_context(doing, policy_id.error());
  auto version = version_id_of(db, entry.policy, *policy_id, entry.version);
  if (!version) return in_context(doing, version.error());
  auto previous = version_id_of(db, entry.policy, *policy_id, entry.previous);
  if (!previous) return in_context(doing, previous.error());
  auto appended = append_audit(db, {*policy_id, entry.action, **version, *previous, entry.author, entry.message, entry.at_ms});
  if (!appended) return in_context(doing, appended.error());
  return in_context(doing, transaction->commit());
}

Result<void> PostgresStore::import_active(std::string_view policy, std::optional<int64_t> number) {
  const std::string doing = fmt::format("set the active version of policy `{}` in `{}`", policy, path());
  auto transaction = begin_write();
  if (!transaction) return in_context(doing, transaction.error());
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return in_context(doing, policy_id.error());
  auto version = version_id_of(db, policy, *policy_id, number);
  if (!version) return in_context(doing, version.error());
  auto activated = make_active(db, policy, *policy_id, *version);
  if (!activated) return in_context(doing, activated.error());
  return in_context(doing, transaction->commit());
}

Result<std::unique_ptr<ChangeFeed>> PostgresStore::changes(std::string_view policy) {
  auto feed = std::make_unique<PostgresChangeFeed>(url, fmt::format("{}/{}", schema, policy));
  auto listening = feed->listen();
  if (!listening) return in_context(fmt::format("listen for changes of policy `{}` in `{}`", policy, path()), listening.error());
  return std::unique_ptr<ChangeFeed>(std::move(feed));
}

namespace detail {

Result<std::unique_ptr<Store::Impl>> open_postgres(const std::string& url, const OpenOptions& options) {
  auto store = std::make_unique<PostgresStore>();
  store->url = url;
  store->shown = display_location(url);
  store->options = options;
  const std::string doing = fmt::format("open policy store `{}`", store->shown);
  if (options.read_only) store->read_only_reason = "the store is opened read-only";
  auto connection = Connection::open(url, options);
  if (!connection) return in_context(doing, connection.error());
  store->db = std::move(*connection);
  auto prepared = prepare(*store);
  if (!prepared) return in_context(doing, prepared.error());
  return std::unique_ptr<Store::Impl>(std::move(store));
}

}  // namespace detail
}  // namespace gov::store
