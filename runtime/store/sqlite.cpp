// SQLite wrappers: result-code mapping, cached statements, binding, stepping and transactions.
#include "runtime/store/sqlite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <thread>

namespace gov::store::sqlite {

ErrorKind error_kind(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return ErrorKind::busy;
    case SQLITE_READONLY:
      return ErrorKind::read_only;
    case SQLITE_FULL:
      return ErrorKind::full;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
      return ErrorKind::corrupt;
    case SQLITE_CONSTRAINT:
      // Our statements satisfy the schema's constraints by construction, so a violation means
      // another writer changed the rows we based the write on.
      return ErrorKind::conflict;
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return ErrorKind::invalid;
    default:  // SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_PERM, SQLITE_NOMEM, ...
      return ErrorKind::io;
  }
}

Result<Connection> Connection::open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  ConnectionPtr db(raw);  // sqlite3_open_v2 hands out a handle even when it fails
  if (rc != SQLITE_OK) {
    std::string message = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    return Error{error_kind(rc), message};
  }
  sqlite3_extended_result_codes(raw, 1);
  return Connection(std::move(db));
}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this == &other) return *this;
  cache_.clear();
  db_.reset();
  busy_ = std::move(other.busy_);
  db_ = std::move(other.db_);
  cache_ = std::move(other.cache_);
  return *this;
}

namespace {

// Why SQLite can return busy without calling the busy handler (or before the timeout): the
// extended result code says which lock conflict it was.
std::string_view early_busy_reason(int rc) {
  switch (rc) {
    case SQLITE_BUSY_SNAPSHOT:
      return "the transaction's snapshot is older than another process's commit";
    case SQLITE_BUSY_RECOVERY:
      return "another process is recovering the write-ahead log";
    case SQLITE_BUSY_TIMEOUT:
      return "a lock wait timed out inside SQLite";
    default:
      return "a lock conflict that waiting cannot resolve (another process holds a lock this one must upgrade)";
  }
}

std::string busy_detail(const BusyWait& wait, int rc) {
  int64_t waited = wait.earlier_ms + wait.current_ms;
  if (wait.timeout.count() <= 0) return fmt::format("the busy timeout is 0 ms: did not wait; {}", early_busy_reason(rc));
  if (wait.gave_up) {
    return fmt::format("another process held the lock: waited {} ms, the busy timeout is {} ms", waited,
                       wait.timeout.count());
  }
  return fmt::format("SQLite gave up after waiting {} ms, before the busy timeout of {} ms: {}", waited,
                     wait.timeout.count(), early_busy_reason(rc));
}

// SQLite's own busy-timeout schedule (sqliteDefaultBusyCallback): short sleeps first.
constexpr std::array<int64_t, 12> kBusyDelaysMs = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};

int on_busy(void* state, int count) {
  auto& wait = *static_cast<BusyWait*>(state);
  auto now = std::chrono::steady_clock::now();
  if (count == 0) {
    // A new wait of the same statement: the previous one ended with the lock taken.
    wait.earlier_ms += wait.current_ms;
    wait.current_ms = 0;
    wait.gave_up = false;
    wait.started = now;
  }
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - wait.started);
  wait.current_ms = elapsed.count();
  if (elapsed >= wait.timeout) {
    wait.gave_up = true;
    return 0;
  }
  int64_t delay = kBusyDelaysMs[std::min<size_t>(static_cast<size_t>(count), kBusyDelaysMs.size() - 1)];
  delay = std::min<int64_t>(delay, (wait.timeout - elapsed).count());
  std::this_thread::sleep_for(std::chrono::milliseconds(std::max<int64_t>(delay, 1)));
  return 1;
}

}  // namespace

void Connection::set_busy_timeout(std::chrono::milliseconds timeout) {
  busy_->timeout = timeout;
  sqlite3_busy_handler(db_.get(), timeout.count() > 0 ? &on_busy : nullptr, busy_.get());
}

void Connection::start_statement() const {
  if (!busy_) return;
  busy_->current_ms = 0;
  busy_->earlier_ms = 0;
  busy_->gave_up = false;
}

Error Connection::error(int rc) const {
  // The connection's message belongs to its last failed call; prefer the code's own text when
  // they disagree (e.g. an error from a bind, which does not set the message).
  int current = sqlite3_extended_errcode(db_.get());
  std::string message = current == rc ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_BUSY && busy_) message += fmt::format(" ({})", busy_detail(*busy_, rc));
  return Error{error_kind(rc), message};
}

Result<void> Connection::exec(const char* sql) {
  start_statement();
  int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return error(rc);
  return {};
}

Result<void> Connection::run(const char* sql) {
  auto query = this->query(sql);
  if (!query) return query.error();
  return query->run();
}

WorkCounters Connection::take_counters() {
  WorkCounters counters;
  for (auto& [sql, statement] : cache_) {
    sqlite3_stmt* stmt = statement.get();
    counters.vm_steps += sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, /*resetFlg=*/1);
    counters.full_scan_steps += sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
    counters.sorts += sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_SORT, 1);
    counters.automatic_indexes += sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_AUTOINDEX, 1);
  }
  return counters;
}

Result<Query> Connection::query(const char* sql) {
  auto found = cache_.find(sql);
  if (found == cache_.end()) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    if (rc != SQLITE_OK) return error(rc);
    found = cache_.emplace(sql, StatementPtr(raw)).first;
  }
  return Query(*this, found->second.get());
}

Result<int64_t> Connection::scalar(const char* sql) {
  auto query = this->query(sql);
  if (!query) return query.error();
  auto row = query->step();
  if (!row) return row.error();
  if (!*row) return Error{ErrorKind::io, "no result"};
  return query->int64(0);
}

Result<std::string> Connection::text_lines(const char* sql) {
  auto query = this->query(sql);
  if (!query) return query.error();
  std::string lines;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return lines;
    if (!lines.empty()) lines += '\n';
    lines += query->text(0);
  }
}

Result<std::string> Connection::text_lines_waiting(const char* sql) {
  auto started = std::chrono::steady_clock::now();
  for (size_t attempt = 0;; ++attempt) {
    auto lines = text_lines(sql);
    if (lines || lines.error().kind != ErrorKind::busy || !busy_) return lines;
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (elapsed >= busy_->timeout) {
      int rc = sqlite3_extended_errcode(db_.get());
      busy_->earlier_ms = 0;
      busy_->current_ms = elapsed.count();
      busy_->gave_up = true;
      return error((rc & 0xff) == SQLITE_BUSY ? rc : SQLITE_BUSY);
    }
    int64_t delay = kBusyDelaysMs[std::min(attempt, kBusyDelaysMs.size() - 1)];
    delay = std::min<int64_t>(delay, (busy_->timeout - elapsed).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max<int64_t>(delay, 1)));
  }
}

Query::Query(Query&& other) noexcept
    : connection_(other.connection_), stmt_(other.stmt_), bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

Query::~Query() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Query::note(int rc) {
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

Query& Query::bind(int index, int64_t value) {
  note(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Query& Query::bind(int index, std::optional<int64_t> value) {
  note(value ? sqlite3_bind_int64(stmt_, index, *value) : sqlite3_bind_null(stmt_, index));
  return *this;
}

// An empty view may have a null data pointer, which SQLite would bind as NULL: the columns are
// NOT NULL, so an empty value is bound from a non-null pointer.
Query& Query::bind(int index, std::string_view text) {
  const char* data = text.empty() ? "" : text.data();
  note(sqlite3_bind_text64(stmt_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Query& Query::bind_blob(int index, std::string_view bytes) {
  if (bytes.empty()) {
    note(sqlite3_bind_zeroblob(stmt_, index, 0));
    return *this;
  }
  note(sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  return *this;
}

Query& Query::bind_blob(int index, const Bytes& bytes) {
  return bind_blob(index, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Result<bool> Query::step() {
  if (bind_error_ != SQLITE_OK) return connection_->error(bind_error_);
  connection_->start_statement();
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return connection_->error(rc);
}

Result<void> Query::run() {
  for (;;) {
    auto row = step();
    if (!row) return row.error();
    if (!*row) return {};
  }
}

std::optional<int64_t> Query::optional_int64(int column) const {
  if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(stmt_, column);
}

std::string Query::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (data == nullptr) return {};
  return std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Query::blob_string(int column) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  if (data == nullptr) return {};  // a zero-length blob
  return std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

Bytes Query::blob_bytes(int column) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, column));
  if (data == nullptr) return {};
  return Bytes(data, data + sqlite3_column_bytes(stmt_, column));
}

Result<Transaction> Transaction::begin(Connection& connection, Mode mode) {
  bool nested = sqlite3_get_autocommit(connection.get()) == 0;
  if (nested) {
    if (mode == Mode::write) {
      auto opened = connection.run("SAVEPOINT gov_write");
      if (!opened) return opened.error();
    }
    return Transaction(connection, mode, /*nested=*/true);
  }
  auto opened = connection.run(mode == Mode::write ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!opened) return opened.error();
  return Transaction(connection, mode, /*nested=*/false);
}

Transaction::Transaction(Transaction&& other) noexcept
    : connection_(other.connection_), mode_(other.mode_), nested_(other.nested_), open_(other.open_) {
  other.open_ = false;
}

Transaction::~Transaction() {
  if (open_) roll_back();
}

Result<void> Transaction::commit() {
  open_ = false;
  if (nested_ && mode_ == Mode::read) return {};
  auto committed = connection_->run(nested_ ? "RELEASE gov_write" : "COMMIT");
  if (!committed) roll_back();
  return committed;
}

void Transaction::roll_back() {
  open_ = false;
  if (nested_) {
    if (mode_ == Mode::read) return;
    // Errors are ignored: when SQLite already rolled the outer transaction back (it does on
    // SQLITE_FULL and some I/O errors) the savepoint is gone too.
    (void)connection_->run("ROLLBACK TO gov_write");
    (void)connection_->run("RELEASE gov_write");
    return;
  }
  if (sqlite3_get_autocommit(connection_->get()) != 0) return;  // SQLite rolled back already
  (void)connection_->run("ROLLBACK");
}

}  // namespace gov::store::sqlite
