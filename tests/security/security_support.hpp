// Shared by the security tests: a private scratch directory, and SQL run on a store file as
// anyone who can write it could (triggers and all).
#pragma once

#include <sqlite3.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/support/test_support.hpp"

namespace gov::test {

/// A fresh directory under the temporary directory (no .git or gov.toml above it, a unique
/// name from mkdtemp), removed with everything in it afterwards.
struct Scratch {
  std::filesystem::path path;
  explicit Scratch(const std::string& name) {
    // mkdtemp's template: it replaces the six X in place with a unique suffix.
    std::string pattern = (std::filesystem::temp_directory_path() / ("gov-sec-" + name + "-")).string();
    pattern += std::string(6, 'X');
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = std::filesystem::canonical(pattern);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  /// The path of `relative` under the directory.
  std::string operator/(const std::string& relative) const { return (path / relative).string(); }
  /// Writes `text` to `relative` (creating directories); returns its path.
  std::string write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path file = path / relative;
    std::filesystem::create_directories(file.parent_path());
    write_text(file.string(), text);
    return file.string();
  }
};

/// Runs `sql` on the SQLite file `db_path` directly; the test fails if SQLite refuses it.
inline void exec_sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace gov::test
