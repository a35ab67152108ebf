// The store's schema and its migrations, and the checks run on a database before it is used.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/store/result.hpp"
#include "runtime/store/sqlite.hpp"

namespace gov::store::schema {

/// PRAGMA application_id of a gov policy store ("GOVS"): tells our files from other SQLite files.
inline constexpr int64_t kApplicationId = 0x474f5653;

struct PrepareOptions {
  bool read_only = false;
  bool quick_check = true;
  std::optional<int64_t> max_pages;
};

/// Makes a freshly opened connection ready: refuses a database that is not SQLite, not a gov
/// store, from a newer schema or (with quick_check) damaged; then WAL, foreign keys,
/// synchronous=FULL and the page limit; then runs the pending migrations in one IMMEDIATE
/// transaction (re-reading user_version inside it, so two processes opening a new store at
/// once migrate it once). Error messages do not name the file; the caller adds it.
Result<void> prepare(sqlite::Connection& connection, const PrepareOptions& options);

}  // namespace gov::store::schema
