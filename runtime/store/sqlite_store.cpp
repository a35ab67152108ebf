// The SQLite back end of the policy store: each write is one IMMEDIATE transaction, each read
// one WAL snapshot, and every environment failure becomes an Error naming the file.
#include "runtime/store/backend.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

#include "compiler/support/assert.hpp"
#include "runtime/store/schema.hpp"
#include "compiler/support/sha256.hpp"
#include "runtime/store/sqlite.hpp"

namespace gov::store {

using sqlite::Connection;
using sqlite::Transaction;

using detail::check_read_file;
using detail::clamp_limit;
using detail::in_context;
using detail::no_policy;
using detail::now_ms;

namespace {

class SqliteStore final : public Store::Impl {
 public:
  std::string path_;
  OpenOptions options;
  Connection db;
  std::optional<std::string> read_only_reason;  // set: every write fails with it
  // The identity of the file opened (st_dev, st_ino), taken right after opening it.
  dev_t device = 0;
  ino_t inode = 0;

  const std::string& path() const override { return path_; }
  std::optional<std::string> replaced() const override {
    struct stat now {};
    if (::stat(path_.c_str(), &now) != 0) return std::string("the file is gone from its path");
    if (now.st_dev != device || now.st_ino != inode) return std::string("another file is at its path");
    return std::nullopt;
  }
  bool read_only() const override { return read_only_reason.has_value(); }
  Backend backend() const override { return Backend::sqlite; }
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
  WorkCounters take_work_counters() override { return db.take_counters(); }
  Result<void> import_version(std::string_view policy, const ImportedVersion& version) override;
  Result<void> import_audit(const AuditEntry& entry) override;
  Result<void> import_active(std::string_view policy, std::optional<int64_t> version) override;
  Result<std::unique_ptr<ChangeFeed>> changes(std::string_view /*policy*/) override {
    return std::unique_ptr<ChangeFeed>();  // readers poll
  }
};

Result<void> check_writable(const SqliteStore& store) {
  if (!store.read_only_reason) return {};
  return Error{ErrorKind::read_only, *store.read_only_reason};
}

// ---- rows ---------------------------------------------------------------------------------

struct VersionRow {
  int64_t id = 0;
  int64_t number = 0;
  std::string content_sha256;
};

Result<std::optional<int64_t>> find_policy(Connection& db, std::string_view name) {
  auto query = db.query("SELECT id FROM policy WHERE name = ?1");
  if (!query) return query.error();
  query->bind(1, name);
  auto row = query->step();
  if (!row) return row.error();
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>(query->int64(0));
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
  auto insert = db.query("INSERT INTO policy (name, created_ms) VALUES (?1, ?2)");
  if (!insert) return insert.error();
  insert->bind(1, name).bind(2, now_ms());
  auto inserted = insert->run();
  if (!inserted) return inserted.error();
  return sqlite3_last_insert_rowid(db.get());
}

Result<std::optional<VersionRow>> read_version_row(sqlite::Query& query) {
  auto row = query.step();
  if (!row) return row.error();
  if (!*row) return std::optional<VersionRow>();
  return std::optional<VersionRow>(VersionRow{query.int64(0), query.int64(1), query.text(2)});
}

Result<std::optional<VersionRow>> active_row(Connection& db, int64_t policy_id) {
  auto query = db.query(
      "SELECT id, number, content_sha256 FROM version WHERE policy_id = ?1 AND active = 1");
  if (!query) return query.error();
  query->bind(1, policy_id);
  return read_version_row(*query);
}

Result<std::optional<VersionRow>> numbered_row(Connection& db, int64_t policy_id, int64_t number) {
  auto query = db.query(
      "SELECT id, number, content_sha256 FROM version WHERE policy_id = ?1 AND number = ?2");
  if (!query) return query.error();
  query->bind(1, policy_id).bind(2, number);
  return read_version_row(*query);
}

Result<int64_t> latest_number(Connection& db, int64_t policy_id) {
  auto query = db.query(
      "SELECT number FROM version WHERE policy_id = ?1 ORDER BY number DESC LIMIT 1");
  if (!query) return query.error();
  query->bind(1, policy_id);
  auto row = query->step();
  if (!row) return row.error();
  return *row ? query->int64(0) : 0;
}

Result<VersionRow> require_version(Connection& db, std::string_view policy, int64_t policy_id,
                                   int64_t number) {
  auto found = numbered_row(db, policy_id, number);
  if (!found) return found.error();
  if (*found) return **found;
  auto latest = latest_number(db, policy_id);
  if (!latest) return latest.error();
  return Error{ErrorKind::not_found,
               fmt::format("policy `{}` has no version {} (the latest is {})", policy, number, *latest)};
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
};

Result<int64_t> insert_version(Connection& db, const NewVersion& version) {
  auto insert = db.query(
      "INSERT INTO version (policy_id, number, parent_id, restored_from, content_sha256, author, "
      "message, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert) return insert.error();
  insert->bind(1, version.policy_id).bind(2, version.number).bind(3, version.parent_id);
  insert->bind(4, version.restored_from).bind(5, version.content_sha256).bind(6, version.author);
  insert->bind(7, version.message).bind(8, now_ms());
  auto inserted = insert->run();
  if (!inserted) return inserted.error();
  return sqlite3_last_insert_rowid(db.get());
}

Result<int64_t> store_source(Connection& db, std::string_view text) {
  std::string sha256 = sha256_hex(text);
  auto insert = db.query(
      // A row whose text no longer hashes to its key (changed outside gov, or damaged) is written
      // again: the key says what its text is, and every version naming it reads back right.
      "INSERT INTO source (sha256, text) VALUES (?1, ?2) "
      "ON CONFLICT (sha256) DO UPDATE SET text = excluded.text WHERE source.text IS NOT excluded.text");
  if (!insert) return insert.error();
  insert->bind(1, sha256).bind_blob(2, text);
  auto inserted = insert->run();
  if (!inserted) return inserted.error();
  auto select = db.query("SELECT id FROM source WHERE sha256 = ?1");
  if (!select) return select.error();
  select->bind(1, sha256);
  auto row = select->step();
  if (!row) return row.error();
  GOV_ASSERT(*row, "the source row was just inserted");
  return select->int64(0);
}

Result<void> insert_files(Connection& db, int64_t version_id, const std::vector<PolicyFile>& files) {
  for (size_t ordinal = 0; ordinal < files.size(); ++ordinal) {
    auto source_id = store_source(db, files[ordinal].text);
    if (!source_id) return source_id.error();
    auto insert = db.query(
        "INSERT INTO version_file (version_id, ordinal, path, source_id) VALUES (?1, ?2, ?3, ?4)");
    if (!insert) return insert.error();
    insert->bind(1, version_id).bind(2, static_cast<int64_t>(ordinal));
    insert->bind(3, files[ordinal].path).bind(4, *source_id);
    auto inserted = insert->run();
    if (!inserted) return inserted;
  }
  return {};
}

Result<void> copy_version_contents(Connection& db, int64_t from_id, int64_t to_id) {
  auto files = db.query(
      "INSERT INTO version_file (version_id, ordinal, path, source_id) "
      "SELECT ?2, ordinal, path, source_id FROM version_file WHERE version_id = ?1");
  if (!files) return files.error();
  files->bind(1, from_id).bind(2, to_id);
  auto copied = files->run();
  if (!copied) return copied;
  auto objects = db.query(
      "INSERT INTO object (version_id, key, bytes, created_ms) "
      "SELECT ?2, key, bytes, created_ms FROM object WHERE version_id = ?1");
  if (!objects) return objects.error();
  objects->bind(1, from_id).bind(2, to_id);
  auto copied_objects = objects->run();
  if (!copied_objects) return copied_objects;
  // Signatures cover content, never the version number: they hold for the copy too.
  auto version_signature = db.query(
      "INSERT INTO version_signature (version_id, key_id, signature) "
      "SELECT ?2, key_id, signature FROM version_signature WHERE version_id = ?1");
  if (!version_signature) return version_signature.error();
  version_signature->bind(1, from_id).bind(2, to_id);
  auto copied_signature = version_signature->run();
  if (!copied_signature) return copied_signature;
  auto object_signatures = db.query(
      "INSERT INTO object_signature (version_id, key, key_id, signature) "
      "SELECT ?2, key, key_id, signature FROM object_signature WHERE version_id = ?1");
  if (!object_signatures) return object_signatures.error();
  object_signatures->bind(1, from_id).bind(2, to_id);
  return object_signatures->run();
}

Result<void> store_version_signature(Connection& db, int64_t version_id, const Signature& signature) {
  auto upsert = db.query(
      "INSERT INTO version_signature (version_id, key_id, signature) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (version_id) DO UPDATE SET key_id = excluded.key_id, signature = excluded.signature");
  if (!upsert) return upsert.error();
  upsert->bind(1, version_id).bind(2, signature.key_id).bind_blob(3, signature.bytes);
  return upsert->run();
}

// The signature row selected by `query` (columns key_id, signature), or nullopt when none.
Result<std::optional<Signature>> read_signature(sqlite::Query& query) {
  auto row = query.step();
  if (!row) return row.error();
  if (!*row) return std::optional<Signature>();
  return std::optional<Signature>(Signature{query.text(0), query.blob_bytes(1)});
}

// The old signature covers the old bytes: a signed object replaces it; an unsigned one removes
// it unless the bytes are the same (then it still holds: re-applying unchanged content without
// a key must not unsign its native code).
Result<void> store_object(Connection& db, int64_t version_id, const CompiledObject& object) {
  if (!object.signature) {
    auto unsign = db.query(
        "DELETE FROM object_signature WHERE version_id = ?1 AND key = ?2 AND "
        "(SELECT bytes FROM object WHERE version_id = ?1 AND key = ?2) IS NOT ?3");
    if (!unsign) return unsign.error();
    unsign->bind(1, version_id).bind(2, object.key).bind_blob(3, object.bytes);
    auto unsigned_old = unsign->run();
    if (!unsigned_old) return unsigned_old;
  }
  auto upsert = db.query(
      "INSERT INTO object (version_id, key, bytes, created_ms) VALUES (?1, ?2, ?3, ?4) "
      "ON CONFLICT (version_id, key) DO UPDATE SET bytes = excluded.bytes, "
      "created_ms = excluded.created_ms");
  if (!upsert) return upsert.error();
  upsert->bind(1, version_id).bind(2, object.key).bind_blob(3, object.bytes).bind(4, now_ms());
  auto stored = upsert->run();
  if (!stored || !object.signature) return stored;
  auto signature = db.query(
      "INSERT INTO object_signature (version_id, key, key_id, signature) VALUES (?1, ?2, ?3, ?4) "
      "ON CONFLICT (version_id, key) DO UPDATE SET key_id = excluded.key_id, signature = excluded.signature");
  if (!signature) return signature.error();
  signature->bind(1, version_id).bind(2, object.key).bind(3, object.signature->key_id);
  signature->bind_blob(4, object.signature->bytes);
  return signature->run();
}

// Two statements, in this order, so the partial unique index never sees two active versions.
Result<void> make_active(Connection& db, int64_t policy_id, int64_t version_id) {
  auto clear = db.query("UPDATE version SET active = 0 WHERE policy_id = ?1 AND active = 1");
  if (!clear) return clear.error();
  clear->bind(1, policy_id);
  auto cleared = clear->run();
  if (!cleared) return cleared;
  auto mark = db.query("UPDATE version SET active = 1 WHERE id = ?1");
  if (!mark) return mark.error();
  mark->bind(1, version_id);
  return mark->run();
}

struct NewAudit {
  int64_t policy_id = 0;
  AuditAction action = AuditAction::apply;
  int64_t version_id = 0;
  std::optional<int64_t> previous_id;
  std::string_view author;
  std::string_view message;
};

Result<void> append_audit(Connection& db, const NewAudit& entry) {
  auto insert = db.query(
      "INSERT INTO audit (at_ms, policy_id, action, version_id, previous_id, author, message) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!insert) return insert.error();
  insert->bind(1, now_ms()).bind(2, entry.policy_id).bind(3, audit_action_name(entry.action));
  insert->bind(4, entry.version_id).bind(5, entry.previous_id).bind(6, entry.author);
  insert->bind(7, entry.message);
  return insert->run();
}

std::optional<int64_t> id_of(const std::optional<VersionRow>& row) {
  return row ? std::optional<int64_t>(row->id) : std::nullopt;
}
std::optional<int64_t> number_of(const std::optional<VersionRow>& row) {
  return row ? std::optional<int64_t>(row->number) : std::nullopt;
}

void fault_point(const SqliteStore& store, std::string_view point) {
  if (store.options.fault_hook) store.options.fault_hook(point);
}

// ---- writes -------------------------------------------------------------------------------

Result<ApplyResult> unchanged(Connection& db, Transaction& transaction, const VersionRow& active,
                              const std::optional<CompiledObject>& object,
                              const std::optional<Signature>& signature, const ApplyRequest* request = nullptr) {
  if (signature && request) {
    auto query = db.query("SELECT key_id, signature FROM version_signature WHERE version_id = ?1");
    if (!query) return query.error();
    query->bind(1, active.id);
    auto stored = read_signature(*query);
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
  if (signature) {  // same content: a signature of it holds for the active version
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

Result<ApplyResult> apply_in(SqliteStore& store, const ApplyRequest& request,
                             const std::string& content_sha256) {
  Connection& db = store.db;
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
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
  auto version_id = insert_version(db, {*policy_id, *latest + 1, id_of(*active), std::nullopt,
                                        content_sha256, request.author, request.message});
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
  fault_point(store, "apply:before_activate");
  auto activated = make_active(db, *policy_id, *version_id);
  if (!activated) return activated.error();
  auto audited = append_audit(db, {*policy_id, AuditAction::apply, *version_id, id_of(*active),
                                   request.author, request.message});
  if (!audited) return audited.error();
  fault_point(store, "apply:before_commit");
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return ApplyResult{*latest + 1, /*created=*/true, number_of(*active), content_sha256};
}

Result<ApplyResult> rollback_in(SqliteStore& store, const RollbackRequest& request) {
  Connection& db = store.db;
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
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
  auto version_id = insert_version(db, {*policy_id, *latest + 1, id_of(*active), target->id,
                                        target->content_sha256, request.author, request.message});
  if (!version_id) return version_id.error();
  auto copied = copy_version_contents(db, target->id, *version_id);
  if (!copied) return copied.error();
  auto written = verify_written(db, *version_id, target->content_sha256,
                                fmt::format("rolling policy `{}` back to version {}", request.policy, request.version));
  if (!written) return written.error();
  auto activated = make_active(db, *policy_id, *version_id);
  if (!activated) return activated.error();
  auto audited = append_audit(db, {*policy_id, AuditAction::rollback, *version_id, id_of(*active),
                                   request.author, request.message});
  if (!audited) return audited.error();
  fault_point(store, "rollback:before_commit");
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return ApplyResult{*latest + 1, /*created=*/true, number_of(*active), target->content_sha256};
}

Result<ApplyResult> activate_in(SqliteStore& store, std::string_view policy, int64_t number,
                                std::string_view author, std::optional<int64_t> expect_version) {
  Connection& db = store.db;
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
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
  auto activated = make_active(db, *policy_id, target->id);
  if (!activated) return activated.error();
  auto audited = append_audit(db, {*policy_id, AuditAction::activate, target->id, id_of(*active),
                                   author, fmt::format("activate version {}", number)});
  if (!audited) return audited.error();
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return ApplyResult{number, /*created=*/false, number_of(*active), target->content_sha256};
}

// ---- reads --------------------------------------------------------------------------------

VersionInfo version_info(const sqlite::Query& query) {
  VersionInfo info;
  info.number = query.int64(0);
  info.parent = query.optional_int64(1);
  info.restored_from = query.optional_int64(2);
  info.content_sha256 = query.text(3);
  info.author = query.text(4);
  info.message = query.text(5);
  info.created_ms = query.int64(6);
  info.active = query.int64(7) != 0;
  info.signed_by = query.text(8);  // NULL without a signature: ""
  return info;
}

Result<VersionInfo> info_by_id(Connection& db, int64_t version_id) {
  auto query = db.query(
      "SELECT v.number, p.number, r.number, v.content_sha256, v.author, v.message, v.created_ms, "
      "v.active, s.key_id FROM version v LEFT JOIN version p ON p.id = v.parent_id "
      "LEFT JOIN version r ON r.id = v.restored_from LEFT JOIN version_signature s ON s.version_id = v.id "
      "WHERE v.id = ?1");
  if (!query) return query.error();
  query->bind(1, version_id);
  auto row = query->step();
  if (!row) return row.error();
  GOV_ASSERT(*row, "the version id was just read");
  return version_info(*query);
}

Result<std::vector<PolicyFile>> read_files(Connection& db, int64_t version_id) {
  auto query = db.query(
      "SELECT f.path, s.text FROM version_file f JOIN source s ON s.id = f.source_id "
      "WHERE f.version_id = ?1 ORDER BY f.ordinal");
  if (!query) return query.error();
  query->bind(1, version_id);
  std::vector<PolicyFile> files;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return files;
    PolicyFile file{query->text(0), query->blob_string(1)};
    auto checked = check_read_file(file, files.size());
    if (!checked) return checked.error();
    files.push_back(std::move(file));
  }
}

// The version row of `number`, or of the active version when absent.
Result<VersionRow> locate(Connection& db, std::string_view policy, std::optional<int64_t> number) {
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  if (number) return require_version(db, policy, *policy_id, *number);
  auto active = active_row(db, *policy_id);
  if (!active) return active.error();
  if (!*active) {
    return Error{ErrorKind::not_found, fmt::format("policy `{}` has no active version", policy)};
  }
  return **active;
}

Result<Version> show_in(Connection& db, std::string_view policy, std::optional<int64_t> number) {
  auto transaction = Transaction::begin(db, Transaction::Mode::read);
  if (!transaction) return transaction.error();
  auto row = locate(db, policy, number);
  if (!row) return row.error();
  auto info = info_by_id(db, row->id);
  if (!info) return info.error();
  auto files = read_files(db, row->id);
  if (!files) return files.error();
  auto query = db.query("SELECT key_id, signature FROM version_signature WHERE version_id = ?1");
  if (!query) return query.error();
  query->bind(1, row->id);
  auto signature = read_signature(*query);
  if (!signature) return signature.error();
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return Version{std::move(*info), std::move(*files), std::move(*signature)};
}

Result<VersionInfo> active_in(Connection& db, std::string_view policy) {
  auto transaction = Transaction::begin(db, Transaction::Mode::read);
  if (!transaction) return transaction.error();
  auto row = locate(db, policy, std::nullopt);
  if (!row) return row.error();
  auto info = info_by_id(db, row->id);
  if (!info) return info.error();
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return info;
}

Result<std::vector<VersionInfo>> log_in(Connection& db, std::string_view policy, size_t limit,
                                        std::optional<int64_t> before) {
  auto transaction = Transaction::begin(db, Transaction::Mode::read);
  if (!transaction) return transaction.error();
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  auto query = db.query(
      "SELECT v.number, p.number, r.number, v.content_sha256, v.author, v.message, v.created_ms, "
      "v.active, s.key_id FROM version v LEFT JOIN version p ON p.id = v.parent_id "
      "LEFT JOIN version r ON r.id = v.restored_from LEFT JOIN version_signature s ON s.version_id = v.id "
      "WHERE v.policy_id = ?1 AND v.number < ?2 ORDER BY v.number DESC LIMIT ?3");
  if (!query) return query.error();
  query->bind(1, *policy_id).bind(2, before.value_or(std::numeric_limits<int64_t>::max()));
  query->bind(3, clamp_limit(limit));
  std::vector<VersionInfo> versions;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return versions;
    versions.push_back(version_info(*query));
  }
}


Result<std::vector<AuditEntry>> read_audit(sqlite::Query& query) {
  std::vector<AuditEntry> entries;
  for (;;) {
    auto row = query.step();
    if (!row) return row.error();
    if (!*row) return entries;
    auto action = detail::parse_action(query.text(2));
    if (!action) return Error{ErrorKind::corrupt, fmt::format("unknown audit action `{}`", query.text(2))};
    entries.push_back(AuditEntry{query.int64(0), query.int64(1), *action, query.text(3),
                                 query.int64(4), query.optional_int64(5), query.text(6),
                                 query.text(7)});
  }
}

Result<std::vector<AuditEntry>> audit_in(Connection& db, std::string_view policy, size_t limit,
                                         std::optional<int64_t> before) {
  auto transaction = Transaction::begin(db, Transaction::Mode::read);
  if (!transaction) return transaction.error();
  int64_t below = before.value_or(std::numeric_limits<int64_t>::max());
  if (policy.empty()) {
    auto query = db.query(
        "SELECT a.id, a.at_ms, a.action, p.name, v.number, pv.number, a.author, a.message "
        "FROM audit a JOIN policy p ON p.id = a.policy_id JOIN version v ON v.id = a.version_id "
        "LEFT JOIN version pv ON pv.id = a.previous_id "
        "WHERE a.id < ?1 ORDER BY a.id DESC LIMIT ?2");
    if (!query) return query.error();
    query->bind(1, below).bind(2, clamp_limit(limit));
    return read_audit(*query);
  }
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  auto query = db.query(
      "SELECT a.id, a.at_ms, a.action, p.name, v.number, pv.number, a.author, a.message "
      "FROM audit a JOIN policy p ON p.id = a.policy_id JOIN version v ON v.id = a.version_id "
      "LEFT JOIN version pv ON pv.id = a.previous_id "
      "WHERE a.policy_id = ?1 AND a.id < ?2 ORDER BY a.id DESC LIMIT ?3");
  if (!query) return query.error();
  query->bind(1, *policy_id).bind(2, below).bind(3, clamp_limit(limit));
  return read_audit(*query);
}

Result<std::vector<PolicyInfo>> policies_in(Connection& db) {
  auto transaction = Transaction::begin(db, Transaction::Mode::read);
  if (!transaction) return transaction.error();
  auto query = db.query(
      "SELECT p.name, "
      "(SELECT number FROM version WHERE policy_id = p.id AND active = 1), "
      "(SELECT number FROM version WHERE policy_id = p.id ORDER BY number DESC LIMIT 1) "
      "FROM policy p ORDER BY p.name");
  if (!query) return query.error();
  std::vector<PolicyInfo> policies;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return policies;
    policies.push_back(PolicyInfo{query->text(0), query->optional_int64(1),
                                  query->optional_int64(2).value_or(0)});
  }
}

Result<VersionRow> object_version(Connection& db, std::string_view policy, int64_t number) {
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  return require_version(db, policy, *policy_id, number);
}

Result<std::optional<SignedObject>> get_signed_object_in(Connection& db, std::string_view policy, int64_t number,
                                                         std::string_view key) {
  auto transaction = Transaction::begin(db, Transaction::Mode::read);
  if (!transaction) return transaction.error();
  auto version = object_version(db, policy, number);
  if (!version) return version.error();
  auto query = db.query("SELECT bytes FROM object WHERE version_id = ?1 AND key = ?2");
  if (!query) return query.error();
  query->bind(1, version->id).bind(2, key);
  auto row = query->step();
  if (!row) return row.error();
  if (!*row) return std::optional<SignedObject>();
  SignedObject object{query->blob_bytes(0), std::nullopt};
  auto signature_query = db.query("SELECT key_id, signature FROM object_signature WHERE version_id = ?1 AND key = ?2");
  if (!signature_query) return signature_query.error();
  signature_query->bind(1, version->id).bind(2, key);
  auto signature = read_signature(*signature_query);
  if (!signature) return signature.error();
  object.signature = std::move(*signature);
  return std::optional<SignedObject>(std::move(object));
}

Result<void> put_object_in(Connection& db, std::string_view policy, int64_t number,
                           const CompiledObject& object) {
  if (object.key.empty()) return Error{ErrorKind::invalid, "the object key is empty"};
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
  if (!transaction) return transaction.error();
  auto version = object_version(db, policy, number);
  if (!version) return version.error();
  auto stored = store_object(db, version->id, object);
  if (!stored) return stored;
  return transaction->commit();
}

Result<std::string> integrity_in(Connection& db) {
  auto report = db.text_lines("PRAGMA integrity_check");
  if (!report) return report;
  if (*report != "ok") return report;
  // foreign_key_check: one row per violation, the child table first.
  auto violations = db.text_lines("PRAGMA foreign_key_check");
  if (!violations) return violations;
  if (violations->empty()) return report;
  return fmt::format("foreign key violations in: {}", *violations);
}

// ---- opening ------------------------------------------------------------------------------

Result<void> prepare_location(const std::string& path, const OpenOptions& options, bool exists) {
  if (std::error_code ec; exists && std::filesystem::is_directory(path, ec)) {
    // SQLite would say "disk I/O error"; a store is a file.
    return Error{ErrorKind::io, "it is a directory; a policy store is a file (`--db DIR/policies.db`)"};
  }
  // A FIFO (or socket, or device) is refused before SQLite opens it: opening a FIFO without a
  // writer blocks, and `gov log` hung on one. The path's target is looked at (a link to a store
  // file is fine).
  if (std::error_code ec; exists && !std::filesystem::is_regular_file(path, ec)) {
    const auto type = std::filesystem::status(path, ec).type();
    const char* what = type == std::filesystem::file_type::fifo     ? "a FIFO"
                       : type == std::filesystem::file_type::socket ? "a socket"
                       : type == std::filesystem::file_type::block || type == std::filesystem::file_type::character
                           ? "a device"
                           : "not a regular file";
    return Error{ErrorKind::io, fmt::format("it is {}; a policy store is a regular file", what)};
  }
  if (exists) return {};
  if (!options.create || options.read_only) {
    return Error{ErrorKind::not_found, fmt::format("no policy store at `{}`", path)};
  }
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return {};
  std::error_code error;
  if (!options.create_directories && !std::filesystem::is_directory(parent, error)) {
    return Error{ErrorKind::not_found,
                 fmt::format("directory `{}` does not exist; create it first, or choose another path", parent.string())};
  }
  std::filesystem::create_directories(parent, error);
  if (!error) return {};
  return Error{ErrorKind::io, fmt::format("cannot create directory `{}` for the policy store: {}",
                                          parent.string(), error.message())};
}

// What is next to an existing store file, for a read-only open.
struct Surroundings {
  bool frozen = false;                // nobody writes it: see look_around
  bool can_create_next_to_it = true;  // this process may create the -shm file
  bool shm_exists = false;
  int64_t wal_bytes = 0;              // size of the -wal file (0: none)
  bool read_only_volume = false;      // the file system is mounted read-only
};

// A store is frozen when it cannot change while it is read: it is on a read-only file system,
// or its file has no write bit (gov writes no such file, even as root) and no file can be
// created next to it (its directory has no write bit for anyone, or this process may not write
// there). Then SQLite may read it as immutable, without WAL's shared memory.
Surroundings look_around(const std::string& path, bool file_read_only) {
  Surroundings around;
  std::string directory = std::filesystem::path(path).parent_path().string();
  if (directory.empty()) directory = ".";
  struct statvfs volume {};
  bool read_only_volume = ::statvfs(path.c_str(), &volume) == 0 && (volume.f_flag & ST_RDONLY) != 0;
  struct stat directory_status {};
  bool directory_frozen = ::stat(directory.c_str(), &directory_status) == 0 &&
                          (directory_status.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0;
  around.can_create_next_to_it = !read_only_volume && ::access(directory.c_str(), W_OK) == 0;
  around.read_only_volume = read_only_volume;
  around.frozen = read_only_volume || (file_read_only && (directory_frozen || !around.can_create_next_to_it));
  if (directory_frozen) around.can_create_next_to_it = false;  // root could, but gov does not
  struct stat side {};
  around.shm_exists = ::stat((path + "-shm").c_str(), &side) == 0;
  if (::stat((path + "-wal").c_str(), &side) == 0) around.wal_bytes = side.st_size;
  return around;
}

// SQLite reads a store in WAL mode through the shared-memory file next to it; when it cannot
// create that file it says only "unable to open database file" or "attempt to write a readonly
// database". Says why, and what to do, for a read-only open that failed so.
Error explain_read_only_failure(const std::string& path, const Surroundings& around, bool read_only, Error error,
                                bool wanted_write = false) {
  bool from_sqlite = error.kind == ErrorKind::io ||
                     (error.kind == ErrorKind::read_only && error.message.rfind("attempt to write", 0) == 0);
  if (!read_only || !from_sqlite || around.shm_exists || around.can_create_next_to_it) return error;
  if (wanted_write && around.read_only_volume) {  // advice about reading would not help a write
    error.kind = ErrorKind::read_only;
    error.message = fmt::format(
        "the store is on a read-only file system, so nothing can be written to it; apply on a writable copy "
        "(`gov store copy`) or remount the volume writable ({})",
        error.message);
    return error;
  }
  if (around.wal_bytes > 0) {
    error.message = fmt::format(
        "it has a write-ahead log `{}-wal` ({} bytes) but no shared-memory file `{}-shm`, and none can be created "
        "next to it (read-only directory or file system), so the log cannot be read safely; open the store once "
        "where it is writable to fold the log into the file ({})",
        path, around.wal_bytes, path, error.message);
    return error;
  }
  error.message = fmt::format(
      "SQLite needs the shared-memory file `{}-shm` to read a store that may change and cannot create it next to "
      "the file (read-only directory); take every write bit off the file (chmod a-w) so gov reads it as a frozen "
      "store, or let this process write the directory ({})",
      path, error.message);
  return error;
}

// SQLite opens a store in WAL mode by creating its shared-memory file `-shm` (32 KiB) next to it,
// reads included; on a full volume it says only "disk I/O error". Says that the volume is full
// (ErrorKind::full) when it has less room than that file needs.
Error explain_full_volume(const std::string& path, Error error) {
  constexpr uint64_t kShmBytes = 32 * 1024;
  if (error.kind != ErrorKind::io) return error;
  struct statvfs volume {};
  if (::statvfs(path.c_str(), &volume) != 0) return error;
  if (static_cast<uint64_t>(volume.f_bavail) * volume.f_frsize >= kShmBytes) return error;
  struct stat side {};
  if (::stat((path + "-shm").c_str(), &side) == 0 && static_cast<uint64_t>(side.st_size) >= kShmBytes) return error;
  error.kind = ErrorKind::full;
  error.message = fmt::format(
      "the volume holding it is full: SQLite needs room for the shared-memory file `{}-shm` (32 KiB) to open a "
      "store, even to read it; free space on the volume ({})",
      path, error.message);
  return error;
}

// SQLite says "unable to open database file" for a file this user may not read, or (opening it
// to write) may not write. Says which, with the file's mode and owner, for an on-call engineer.
Error explain_permission(const std::string& path, bool read_only, Error error) {
  if (error.kind != ErrorKind::io) return error;
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return error;
  const bool may_read = ::access(path.c_str(), R_OK) == 0;
  const bool may_write = read_only || ::access(path.c_str(), W_OK) == 0;
  if (may_read && may_write) return error;
  error.message = fmt::format(
      "permission denied: this user (uid {}) may not {} the file (mode {:04o}, owner uid {}, group gid {}) ({})",
      ::geteuid(), may_read ? "write" : "read", status.st_mode & 07777, status.st_uid, status.st_gid, error.message);
  return error;
}

// A file: URI naming `path` (SQLite decodes %HH; a `?` or `#` would end the path).
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  if (path.rfind("//", 0) == 0) uri += "//";  // an empty authority, so the path keeps its "//"
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '%' || byte == '?' || byte == '#' || byte < 0x20 || byte >= 0x7f) {
      uri += fmt::format("%{:02X}", byte);
    } else {
      uri += c;
    }
  }
  return uri;
}

// ---- copies (copy_history) -----------------------------------------------------------------

Result<std::vector<CompiledObject>> objects_in(Connection& db, std::string_view policy, int64_t number) {
  auto transaction = Transaction::begin(db, Transaction::Mode::read);
  if (!transaction) return transaction.error();
  auto version = object_version(db, policy, number);
  if (!version) return version.error();
  auto query = db.query(
      "SELECT o.key, o.bytes, s.key_id, s.signature FROM object o LEFT JOIN object_signature s "
      "ON s.version_id = o.version_id AND s.key = o.key WHERE o.version_id = ?1 ORDER BY o.key");
  if (!query) return query.error();
  query->bind(1, version->id);
  std::vector<CompiledObject> objects;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) break;
    CompiledObject object{query->text(0), query->blob_bytes(1), std::nullopt};
    if (!query->text(2).empty()) {  // key_id is never empty in a signature row
      object.signature = Signature{query->text(2), query->blob_bytes(3)};
    }
    objects.push_back(std::move(object));
  }
  auto committed = transaction->commit();
  if (!committed) return committed.error();
  return objects;
}

// The id of version `number` of `policy_id`, or nullopt for none.
Result<std::optional<int64_t>> version_id_of(Connection& db, std::string_view policy, int64_t policy_id,
                                             std::optional<int64_t> number) {
  if (!number) return std::optional<int64_t>();
  auto row = require_version(db, policy, policy_id, *number);
  if (!row) return row.error();
  return std::optional<int64_t>(row->id);
}

Result<void> import_version_in(Connection& db, std::string_view policy, const ImportedVersion& imported) {
  const VersionInfo& info = imported.version.info;
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
  if (!transaction) return transaction.error();
  auto policy_id = ensure_policy(db, policy);
  if (!policy_id) return policy_id.error();
  auto latest = latest_number(db, *policy_id);
  if (!latest) return latest.error();
  if (info.number != *latest + 1) {
    return Error{ErrorKind::conflict, fmt::format("policy `{}` is at version {}; version {} cannot follow it",
                                                  policy, *latest, info.number)};
  }
  auto parent = version_id_of(db, policy, *policy_id, info.parent);
  if (!parent) return parent.error();
  auto restored = version_id_of(db, policy, *policy_id, info.restored_from);
  if (!restored) return restored.error();
  auto insert = db.query(
      "INSERT INTO version (policy_id, number, parent_id, restored_from, content_sha256, author, "
      "message, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert) return insert.error();
  insert->bind(1, *policy_id).bind(2, info.number).bind(3, *parent).bind(4, *restored);
  insert->bind(5, info.content_sha256).bind(6, info.author).bind(7, info.message).bind(8, info.created_ms);
  auto inserted = insert->run();
  if (!inserted) return inserted;
  const int64_t version_id = sqlite3_last_insert_rowid(db.get());
  auto files = insert_files(db, version_id, imported.version.files);
  if (!files) return files;
  if (imported.version.signature) {
    auto signed_version = store_version_signature(db, version_id, *imported.version.signature);
    if (!signed_version) return signed_version;
  }
  for (const CompiledObject& object : imported.objects) {
    auto stored = store_object(db, version_id, object);
    if (!stored) return stored;
  }
  return transaction->commit();
}

Result<void> import_audit_in(Connection& db, const AuditEntry& entry) {
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
  if (!transaction) return transaction.error();
  auto policy_id = require_policy(db, entry.policy);
  if (!policy_id) return policy_id.error();
  auto version = version_id_of(db, entry.policy, *policy_id, entry.version);
  if (!version) return version.error();
  auto previous = version_id_of(db, entry.policy, *policy_id, entry.previous);
  if (!previous) return previous.error();
  auto insert = db.query(
      "INSERT INTO audit (at_ms, policy_id, action, version_id, previous_id, author, message) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!insert) return insert.error();
  insert->bind(1, entry.at_ms).bind(2, *policy_id).bind(3, audit_action_name(entry.action));
  insert->bind(4, **version).bind(5, *previous).bind(6, entry.author).bind(7, entry.message);
  auto inserted = insert->run();
  if (!inserted) return inserted;
  return transaction->commit();
}

Result<void> import_active_in(Connection& db, std::string_view policy, std::optional<int64_t> number) {
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
  if (!transaction) return transaction.error();
  auto policy_id = require_policy(db, policy);
  if (!policy_id) return policy_id.error();
  auto version = version_id_of(db, policy, *policy_id, number);
  if (!version) return version.error();
  if (*version) {
    auto activated = make_active(db, *policy_id, **version);
    if (!activated) return activated;
  } else {
    auto clear = db.query("UPDATE version SET active = 0 WHERE policy_id = ?1 AND active = 1");
    if (!clear) return clear.error();
    clear->bind(1, *policy_id);
    auto cleared = clear->run();
    if (!cleared) return cleared;
  }
  return transaction->commit();
}

}  // namespace

// ---- public API ---------------------------------------------------------------------------

Result<ApplyResult> SqliteStore::apply(const ApplyRequest& request, const std::string& hash) {
  std::string doing = fmt::format("apply policy `{}` to `{}`", request.policy, path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  return in_context(doing, apply_in(*this, request, hash));
}

Result<ApplyResult> SqliteStore::rollback(const RollbackRequest& request) {
  std::string doing = fmt::format("roll back policy `{}` in `{}`", request.policy, path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  return in_context(doing, rollback_in(*this, request));
}

Result<ApplyResult> SqliteStore::activate(std::string_view policy, int64_t version, std::string_view author,
                                          std::optional<int64_t> expect_version) {
  std::string doing = fmt::format("activate version {} of policy `{}` in `{}`", version, policy, path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  return in_context(doing, activate_in(*this, policy, version, author, expect_version));
}

Result<std::vector<VersionInfo>> SqliteStore::log(std::string_view policy, size_t limit,
                                                  std::optional<int64_t> before) {
  return in_context(fmt::format("read the log of policy `{}` from `{}`", policy, path()),
                    log_in(db, policy, limit, before));
}

Result<Version> SqliteStore::show(std::string_view policy, std::optional<int64_t> number) {
  return in_context(fmt::format("read policy `{}` from `{}`", policy, path()), show_in(db, policy, number));
}

Result<VersionInfo> SqliteStore::active(std::string_view policy) {
  return in_context(fmt::format("read policy `{}` from `{}`", policy, path()), active_in(db, policy));
}

Result<void> SqliteStore::put_object(std::string_view policy, int64_t version, const CompiledObject& object) {
  std::string doing = fmt::format("store object `{}` of policy `{}` in `{}`", object.key, policy, path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  return in_context(doing, put_object_in(db, policy, version, object));
}

Result<std::optional<SignedObject>> SqliteStore::get_signed_object(std::string_view policy, int64_t version,
                                                                  std::string_view key) {
  return in_context(fmt::format("read object `{}` of policy `{}` from `{}`", key, policy, path()),
                    get_signed_object_in(db, policy, version, key));
}

Result<std::vector<CompiledObject>> SqliteStore::objects(std::string_view policy, int64_t version) {
  return in_context(fmt::format("read the objects of version {} of policy `{}` from `{}`", version, policy, path()),
                    objects_in(db, policy, version));
}

Result<std::vector<AuditEntry>> SqliteStore::audit(std::string_view policy, size_t limit,
                                                   std::optional<int64_t> before) {
  return in_context(fmt::format("read the audit log of `{}`", path()), audit_in(db, policy, limit, before));
}

Result<std::vector<PolicyInfo>> SqliteStore::policies() {
  return in_context(fmt::format("list the policies in `{}`", path()), policies_in(db));
}

Result<void> SqliteStore::batch(Store& self, const std::function<Result<void>(Store&)>& body) {
  const std::string doing = fmt::format("write a batch to `{}`", path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  auto transaction = Transaction::begin(db, Transaction::Mode::write);
  if (!transaction) return in_context(doing, transaction.error());
  auto done = body(self);
  if (!done) return done;  // the transaction rolls back
  return in_context(doing, transaction->commit());
}

Result<std::string> SqliteStore::integrity_check() {
  return in_context(fmt::format("check `{}`", path()), integrity_in(db));
}

Result<void> SqliteStore::import_version(std::string_view policy, const ImportedVersion& version) {
  std::string doing = fmt::format("copy version {} of policy `{}` to `{}`", version.version.info.number, policy, path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  return in_context(doing, import_version_in(db, policy, version));
}

Result<void> SqliteStore::import_audit(const AuditEntry& entry) {
  std::string doing = fmt::format("copy an audit entry of policy `{}` to `{}`", entry.policy, path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  return in_context(doing, import_audit_in(db, entry));
}

Result<void> SqliteStore::import_active(std::string_view policy, std::optional<int64_t> version) {
  std::string doing = fmt::format("set the active version of policy `{}` in `{}`", policy, path());
  auto writable = check_writable(*this);
  if (!writable) return in_context(doing, writable.error());
  return in_context(doing, import_active_in(db, policy, version));
}

/// A file shorter than its SQLite header says (a copy cut short, a full disk), in words where
/// SQLite says only "database disk image is malformed". nullopt when the file is not SQLite's
/// (reported later, by what reads it) or its header's page count is not to be trusted (bytes
/// 92-95 differ from the change counter at 24-27: an old writer), or when a write-ahead log holds
/// pages the file does not have yet.
std::optional<std::string> truncated_file(const std::string& path) {
  static constexpr char kMagic[] = "SQLite format 3";  // and its NUL: 16 bytes
  struct stat status {};
  struct stat wal {};
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  if (::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) return std::nullopt;
  const auto size = static_cast<int64_t>(status.st_size);
  unsigned char header[100] = {};
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return std::nullopt;
  const size_t read = std::fread(header, 1, sizeof header, file);
  std::fclose(file);
  if (read == 0 || std::memcmp(header, kMagic, std::min<size_t>(read, sizeof kMagic)) != 0) return std::nullopt;
  if (read < sizeof header) {
    return fmt::format("the file is truncated: it holds {} bytes, less than an SQLite header (100)", size);
  }
  const auto be16 = [&](size_t at) { return uint32_t{header[at]} << 8 | header[at + 1]; };
  const auto be32 = [&](size_t at) { return be16(at) << 16 | be16(at + 2); };
  const int64_t page_size = be16(16) == 1 ? 65536 : be16(16);
  const int64_t pages = be32(28);
  if (pages == 0 || be32(92) != be32(24)) return std::nullopt;
  const int64_t expected = page_size * pages;
  if (size >= expected) return std::nullopt;
  return fmt::format("the file is truncated: it holds {} bytes, and its header says {} ({} pages of {} bytes)", size,
                     expected, pages, page_size);
}

namespace detail {

Result<std::unique_ptr<Store::Impl>> open_sqlite_file(const std::string& path, const OpenOptions& options);

// A store SQLite finds damaged is looked at again, to name a truncated file as such: after the
// failure, not before it (another process may be creating the file meanwhile, its header written
// before its first page).
Result<std::unique_ptr<Store::Impl>> open_sqlite(const std::string& path, const OpenOptions& options) {
  auto opened = open_sqlite_file(path, options);
  if (opened || opened.error().kind != ErrorKind::corrupt) return opened;
  if (std::optional<std::string> cut = truncated_file(path)) {
    return Error{ErrorKind::corrupt, fmt::format("cannot open policy store `{}`: the database is damaged: {}", path, *cut)};
  }
  // SQLite's own words for a damaged first page or schema ("database disk image is malformed",
  // "malformed database schema (audit) - ...") said as the other damage is, in words first.
  const std::string& message = opened.error().message;
  if (message.find("the database is damaged") == std::string::npos && message.find("malformed") != std::string::npos) {
    const std::string prefix = fmt::format("cannot open policy store `{}`: ", path);
    const std::string sqlite_words = message.starts_with(prefix) ? message.substr(prefix.size()) : message;
    return Error{ErrorKind::corrupt,
                 fmt::format("{}the database is damaged: its header or schema does not read (SQLite: {})", prefix,
                             sqlite_words)};
  }
  return opened;
}

Result<std::unique_ptr<Store::Impl>> open_sqlite_file(const std::string& path, const OpenOptions& options) {
  auto impl = std::make_unique<SqliteStore>();
  impl->path_ = path;
  impl->options = options;
  const std::string doing = fmt::format("open policy store `{}`", path);
  struct stat status {};
  bool exists = ::stat(path.c_str(), &status) == 0;
  auto location = prepare_location(path, options, exists);
  if (!location) return in_context(doing, location.error());
  // Root may write any file; a store whose every write bit is off is treated as frozen anyway.
  bool file_read_only = exists && (status.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0;
  if (options.read_only) impl->read_only_reason = "the store is opened read-only";
  if (file_read_only) impl->read_only_reason = "the file is read-only";
  Surroundings around = exists ? look_around(path, file_read_only) : Surroundings{};

  // A frozen store is read as immutable: no -shm or -wal is created (WAL's shared memory needs
  // write access next to the file, which a read-only volume does not give) and no lock taken.
  bool immutable = impl->read_only_reason && around.frozen && around.wal_bytes == 0;
  int flags = impl->read_only_reason ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  std::string name = immutable ? file_uri(path) + "?immutable=1" : path;
  if (immutable) flags |= SQLITE_OPEN_URI;
  auto connection = Connection::open(name, flags | SQLITE_OPEN_NOMUTEX);
  if (!connection) {
    return in_context(doing, explain_permission(path, impl->read_only_reason.has_value(),
                                                explain_full_volume(path, connection.error())));
  }
  impl->db = std::move(*connection);
  impl->db.set_busy_timeout(options.busy_timeout);
  if (!impl->read_only_reason && sqlite3_db_readonly(impl->db.get(), "main") == 1) {
    impl->read_only_reason = "the file is not writable";
  }
  bool read_only = impl->read_only_reason.has_value();
  bool quick_check = !exists || status.st_size <= options.quick_check_max_bytes;
  auto prepared = schema::prepare(impl->db, {read_only, quick_check, options.max_pages});
  if (!prepared) {
    return in_context(doing, explain_permission(path, read_only,
                                                explain_full_volume(path, explain_read_only_failure(path, around, read_only,
                                                                                                     prepared.error(),
                                                                                                     !options.read_only))));
  }
  if (read_only) {
    auto query_only = impl->db.exec("PRAGMA query_only = ON");
    if (!query_only) return in_context(doing, query_only.error());
  }
  if (struct stat opened {}; ::stat(path.c_str(), &opened) == 0) {
    impl->device = opened.st_dev;
    impl->inode = opened.st_ino;
  }
  return std::unique_ptr<Store::Impl>(std::move(impl));
}

}  // namespace detail
}  // namespace gov::store
