// Helpers for the store tests: a temporary directory, policies whose files carry a marker,
// and checks that a version read back is whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/store/store.hpp"

namespace gov::store::test {

/// A fresh directory under the system's temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& root() const { return root_; }
  /// `root/name`.
  std::string path(std::string_view name) const;

 private:
  std::string root_;
};

/// An entry file and `imports` imported files, every one containing `marker` (so a reader can
/// tell whether all files of a version belong together).
std::vector<PolicyFile> marked_files(std::string_view marker, int imports = 1);

/// An apply of `files` to `policy` by "tester" with `message`.
ApplyRequest apply_request(std::string_view policy, std::vector<PolicyFile> files,
                           std::string_view message = "change");

/// Empty when `version` is whole: its content hash is content_hash(files), every file carries
/// the marker of the entry file and the message names it. Otherwise what is wrong.
std::string whole_version_problem(const Version& version);

/// The store's integrity_check report, or the error's message.
std::string integrity(Store& store);

/// Opens `path` or fails the test with the error's message.
Store open_or_fail(const std::string& path, const OpenOptions& options = {});

/// The back ends the store tests tagged [backends] run on (GENERATE over them): SQLite; or,
/// when $GOV_TEST_PG names a PostgreSQL server (the test command's fixture starts one with
/// tests/store/postgres-server), PostgreSQL; GOV_TEST_BACKENDS=both runs both in one process.
std::vector<Backend> test_backends();
std::string_view backend_name(Backend backend);

/// $GOV_TEST_PG; fails the test when it is not set (the [postgresql] tests need a server).
std::string postgres_server_url();

/// A fresh, empty store location: an SQLite file in a temporary directory, or a PostgreSQL
/// schema of its own on $GOV_TEST_PG (its URL sets the search_path), dropped afterwards.
class StoreLocation {
 public:
  explicit StoreLocation(Backend backend, std::string_view file_name = "p.db");
  ~StoreLocation();
  StoreLocation(const StoreLocation&) = delete;
  StoreLocation& operator=(const StoreLocation&) = delete;

  const std::string& url() const { return url_; }
  Backend backend() const { return backend_; }
  const TempDir& dir() const { return dir_; }
  const std::string& schema() const { return schema_; }

 private:
  Backend backend_;
  TempDir dir_;
  std::string url_;
  std::string schema_;  // PostgreSQL only
};

/// Runs `sql` on the PostgreSQL server of `url` (its schema, if the URL sets one): the first
/// column of the first row, "" when none; fails the test on an error.
std::string postgres_exec(const std::string& url, const std::string& sql);
/// Runs `sql` on `url` expecting it to fail: the server's error message ("" when it succeeded).
std::string postgres_error(const std::string& url, const std::string& sql);

}  // namespace gov::store::test
