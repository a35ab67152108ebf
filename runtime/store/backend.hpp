// The one interface every store back end implements (SQLite, PostgreSQL), and the checks and
// messages they share. Internal to gov::store: the public Store forwards to it.
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
#include "runtime/store/store.hpp"

namespace gov::store {

/// A back end of Store. Each method has the contract of the Store method of the same name
/// (store.hpp); the error messages name the store by `path()` (a PostgreSQL URL without its
/// password). `apply` receives a request that `validate` accepted and its content hash.
struct Store::Impl {
  virtual ~Impl() = default;

  virtual const std::string& path() const = 0;
  virtual bool read_only() const = 0;
  virtual Backend backend() const = 0;
  /// Store::replaced's answer; back ends without a file are never replaced.
  virtual std::optional<std::string> replaced() const { return std::nullopt; }

  virtual Result<ApplyResult> apply(const ApplyRequest& request, const std::string& content_sha256) = 0;
  virtual Result<ApplyResult> rollback(const RollbackRequest& request) = 0;
  virtual Result<ApplyResult> activate(std::string_view policy, int64_t version, std::string_view author,
                                       std::optional<int64_t> expect_version) = 0;
  virtual Result<std::vector<VersionInfo>> log(std::string_view policy, size_t limit,
                                               std::optional<int64_t> before) = 0;
  virtual Result<Version> show(std::string_view policy, std::optional<int64_t> number) = 0;
  virtual Result<VersionInfo> active(std::string_view policy) = 0;
  virtual Result<void> put_object(std::string_view policy, int64_t version, const CompiledObject& object) = 0;
  virtual Result<std::optional<SignedObject>> get_signed_object(std::string_view policy, int64_t version,
                                                                std::string_view key) = 0;
  virtual Result<std::vector<CompiledObject>> objects(std::string_view policy, int64_t version) = 0;
  virtual Result<std::vector<AuditEntry>> audit(std::string_view policy, size_t limit,
                                                std::optional<int64_t> before) = 0;
  virtual Result<std::vector<PolicyInfo>> policies() = 0;
  /// Runs `body(self)` in one transaction (self is the Store that owns this back end).
  virtual Result<void> batch(Store& self, const std::function<Result<void>(Store&)>& body) = 0;
  virtual Result<std::string> integrity_check() = 0;
  virtual WorkCounters take_work_counters() = 0;

  virtual Result<void> import_version(std::string_view policy, const ImportedVersion& version) = 0;
  virtual Result<void> import_audit(const AuditEntry& entry) = 0;
  virtual Result<void> import_active(std::string_view policy, std::optional<int64_t> version) = 0;

  /// A feed of this store's changes on a connection of its own, or nullptr when the back end
  /// has none (SQLite: readers poll).
  virtual Result<std::unique_ptr<ChangeFeed>> changes(std::string_view policy) = 0;
};

namespace detail {

/// Opens an SQLite store file (sqlite_store.cpp).
Result<std::unique_ptr<Store::Impl>> open_sqlite(const std::string& path, const OpenOptions& options);
/// Opens a PostgreSQL store at `url` (postgres_store.cpp).
Result<std::unique_ptr<Store::Impl>> open_postgres(const std::string& url, const OpenOptions& options);

int64_t now_ms();
bool is_sha256_hex(std::string_view text);
/// `files`, read back inside the transaction that wrote a version, against the content hash the
/// version records: corrupt (naming `doing`) when they do not give it, so that a version whose
/// source rows were changed outside gov or are damaged is never made active (both back ends).
Result<void> check_written(std::string_view doing, const std::vector<PolicyFile>& files, const std::string& content_sha256);
int64_t clamp_limit(size_t limit);

/// Errors about the request (conflict, not_found, invalid and the kinds of other layers) are
/// complete sentences; errors of the environment get "cannot DOING: " in front.
Error in_context(std::string_view doing, Error error);
template <class T>
Result<T> in_context(std::string_view doing, Result<T> result) {
  if (result) return result;
  return in_context(doing, result.error());
}

Error no_policy(std::string_view policy);
/// The apply's own checks: names, files, paths, hash, object key, signature key ids.
Result<void> validate(const ApplyRequest& request);
/// conflict unless `expected` is absent or equals `active` (0: no version).
Result<void> check_expected(std::string_view policy, std::optional<int64_t> expected,
                            std::optional<int64_t> active);
/// A stored file read back, checked as apply checks it (corrupt when it would be refused).
Result<void> check_read_file(const PolicyFile& file, size_t files_before);
/// An unchanged apply of version `number` signed by `signing_key`, where the version is signed by
/// `stored_key` (nullopt: unsigned): a conflict unless the keys agree, or `replace` says to.
Result<void> check_resign(std::string_view policy, int64_t number, const std::optional<std::string>& stored_key,
                          const std::string& signing_key, bool replace);
std::optional<AuditAction> parse_action(std::string_view name);

}  // namespace detail
}  // namespace gov::store
