// RAII wrappers for sqlite3 and sqlite3_stmt: a connection with a statement cache, queries that
// reset themselves, and transactions that roll back unless committed. Internal to gov::store.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "runtime/store/result.hpp"
#include "runtime/store/store.hpp"

namespace gov::store::sqlite {

/// The ErrorKind of an SQLite result code (primary or extended).
ErrorKind error_kind(int rc);

struct StatementDeleter {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

struct ConnectionDeleter {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using ConnectionPtr = std::unique_ptr<sqlite3, ConnectionDeleter>;

class Query;

/// What the connection's busy handler saw during the current statement: SQLite calls it each
/// time a lock it needs is held by another connection, and it sleeps until the busy timeout.
/// Kept so a busy error can state the wait that really happened, not the configured one.
struct BusyWait {
  std::chrono::milliseconds timeout{0};
  std::chrono::steady_clock::time_point started;  // the first call of the current wait
  int64_t current_ms = 0;  // the current wait so far
  int64_t earlier_ms = 0;  // earlier waits of the same statement (each ended with the lock)
  bool gave_up = false;    // the current wait reached the timeout: the statement fails busy
};

/// One sqlite3 connection and the prepared statements it has cached. Owns both; the cached
/// statements are finalized before the connection is closed. Not thread-safe.
class Connection {
 public:
  /// sqlite3_open_v2 with `flags`; extended result codes on. Errors carry SQLite's message.
  static Result<Connection> open(const std::string& path, int flags);

  Connection() = default;  // closed: only to be assigned an opened one

  Connection(Connection&&) noexcept = default;
  /// Closes this connection (statements, then the connection, then its busy state) first.
  Connection& operator=(Connection&& other) noexcept;
  ~Connection() = default;

  sqlite3* get() const { return db_.get(); }
  /// An Error for `rc` with the connection's current message. A busy error says how long the
  /// statement waited for the lock (measured by the busy handler) and what the timeout is, or
  /// that SQLite returned busy before the timeout (a lock conflict waiting cannot resolve).
  Error error(int rc) const;
  /// Installs the busy handler: a statement that meets another connection's lock retries for
  /// up to `timeout` (as sqlite3_busy_timeout, with the wait measured on a steady clock).
  void set_busy_timeout(std::chrono::milliseconds timeout);
  /// Forgets the waits of the previous statement; called before each statement runs.
  void start_statement() const;
  /// Runs one or more SQL statements without results (prepared anew on every call).
  Result<void> exec(const char* sql);
  /// Runs one statement without results on its cached prepared statement (`sql` a literal).
  Result<void> run(const char* sql);
  /// A query on the cached statement for `sql`, which must be a string literal (the cache is
  /// keyed by its address). At most one Query per statement may be alive at a time.
  Result<Query> query(const char* sql);
  /// The single integer result of `sql` (e.g. a PRAGMA).
  Result<int64_t> scalar(const char* sql);
  /// The text lines of `sql`'s first column (e.g. PRAGMA quick_check).
  Result<std::string> text_lines(const char* sql);
  /// text_lines for a statement that takes the write lock from inside its own read transaction
  /// (PRAGMA journal_mode = WAL writes page 1 so): SQLite returns busy at once for it, without
  /// calling the busy handler, so it is retried here until the busy timeout. The busy error
  /// states the whole wait.
  Result<std::string> text_lines_waiting(const char* sql);
  /// Sums and resets the work counters of every cached statement.
  WorkCounters take_counters();

 private:
  explicit Connection(ConnectionPtr db) : busy_(std::make_unique<BusyWait>()), db_(std::move(db)) {}

  // On the heap: the busy handler holds its address while the Connection moves. Declared
  // before db_, so it outlives the connection that may call the handler.
  std::unique_ptr<BusyWait> busy_;
  ConnectionPtr db_;
  // Declared after db_, so destroyed first: statements are finalized before the close
  // (sqlite3_close_v2 would otherwise keep a zombie connection until they are).
  std::unordered_map<const char*, StatementPtr> cache_;
};

/// A prepared statement being bound and stepped; reset and unbound when destroyed, so the
/// cached statement is ready for the next use. Borrows the Connection.
class Query {
 public:
  Query(const Connection& connection, sqlite3_stmt* stmt) : connection_(&connection), stmt_(stmt) {}
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;
  ~Query();

  /// Parameters are 1-based. A bind error is reported by the next step().
  Query& bind(int index, int64_t value);
  Query& bind(int index, std::optional<int64_t> value);
  Query& bind(int index, std::string_view text);
  Query& bind_blob(int index, std::string_view bytes);
  Query& bind_blob(int index, const Bytes& bytes);

  /// Advances: true when a row is available, false when the statement is done.
  Result<bool> step();
  /// Steps to completion, ignoring rows.
  Result<void> run();

  int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::optional<int64_t> optional_int64(int column) const;
  std::string text(int column) const;
  std::string blob_string(int column) const;
  Bytes blob_bytes(int column) const;

 private:
  void note(int rc);

  const Connection* connection_;
  sqlite3_stmt* stmt_;
  int bind_error_ = SQLITE_OK;
};

/// A transaction on a Connection: BEGIN IMMEDIATE (write) or BEGIN (read, a WAL snapshot),
/// or a savepoint when one is already open (Store::batch). Rolls back unless commit() succeeded.
class Transaction {
 public:
  enum class Mode : uint8_t { read, write };

  static Result<Transaction> begin(Connection& connection, Mode mode);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Result<void> commit();

 private:
  Transaction(Connection& connection, Mode mode, bool nested)
      : connection_(&connection), mode_(mode), nested_(nested) {}
  void roll_back();

  Connection* connection_;
  Mode mode_;
  bool nested_;
  bool open_ = true;
};

}  // namespace gov::store::sqlite
