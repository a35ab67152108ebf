// Helpers for the store tests (see store_fixture.hpp).
#include "tests/store/store_fixture.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

namespace gov::store::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gov-store-XXXXXX").string();
  const char* made = ::mkdtemp(pattern.data());
  REQUIRE(made != nullptr);
  root_ = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::permissions(root_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ignored);
  std::filesystem::remove_all(root_, ignored);
}

std::string TempDir::path(std::string_view name) const { return fmt::format("{}/{}", root_, name); }

std::vector<PolicyFile> marked_files(std::string_view marker, int imports) {
  std::vector<PolicyFile> files;
  std::string entry = fmt::format("// marker {}\n", marker);
  for (int i = 0; i < imports; ++i) entry += fmt::format("import \"lib{}.gov\"\n", i);
  entry += fmt::format("team team-a {{\n  fair-share-weight = 1\n}}\n");
  files.push_back({"policy.gov", entry});
  for (int i = 0; i < imports; ++i) {
    files.push_back({fmt::format("lib{}.gov", i), fmt::format("// marker {}\n// import {}\n", marker, i)});
  }
  return files;
}

ApplyRequest apply_request(std::string_view policy, std::vector<PolicyFile> files,
                           std::string_view message) {
  ApplyRequest request;
  request.policy = std::string(policy);
  request.files = std::move(files);
  request.author = "tester";
  request.message = std::string(message);
  return request;
}

std::string whole_version_problem(const Version& version) {
  if (version.files.empty()) return "no files";
  if (content_hash(version.files) != version.info.content_sha256) {
    return fmt::format("version {}: the files do not hash to the content hash", version.info.number);
  }
  const std::string& entry = version.files.front().text;
  std::string first_line = entry.substr(0, entry.find('\n'));
  for (const PolicyFile& file : version.files) {
    if (file.text.rfind(first_line + "\n", 0) != 0) {
      return fmt::format("version {}: `{}` lacks `{}`", version.info.number, file.path, first_line);
    }
  }
  std::string marker = first_line.substr(first_line.rfind(' ') + 1);
  if (version.info.message.find(marker) == std::string::npos) {
    return fmt::format("version {}: message `{}` does not name marker `{}`", version.info.number,
                       version.info.message, marker);
  }
  return {};
}

std::string integrity(Store& store) {
  auto report = store.integrity_check();
  return report ? *report : report.error().message;
}

Store open_or_fail(const std::string& path, const OpenOptions& options) {
  auto store = Store::open(path, options);
  if (!store) FAIL(store.error().message);
  return std::move(*store);
}

std::vector<Backend> test_backends() {
  const char* server = std::getenv("GOV_TEST_PG");
  const char* which = std::getenv("GOV_TEST_BACKENDS");
  const bool have_server = server != nullptr && *server != '\0';
  if (which != nullptr && std::string_view(which) == "both") {
    if (!have_server) FAIL("GOV_TEST_BACKENDS=both needs GOV_TEST_PG (tests/store/postgres-server start DIR prints it)");
    return {Backend::sqlite, Backend::postgresql};
  }
  if (have_server) return {Backend::postgresql};
  return {Backend::sqlite};
}

std::string_view backend_name(Backend backend) { return backend == Backend::sqlite ? "sqlite" : "postgresql"; }

std::string postgres_server_url() {
  const char* server = std::getenv("GOV_TEST_PG");
  if (server == nullptr || *server == '\0') {
    FAIL("GOV_TEST_PG is not set: the PostgreSQL tests need a server (the test command starts one; by hand: "
         "tests/store/postgres-server start /tmp/pg, then GOV_TEST_PG=<the printed URL>)");
  }
  return server;
}

namespace {

// The first value of `sql`'s first row and the error, if any.
std::pair<std::string, std::string> run_sql(const std::string& url, const std::string& sql) {
  PGconn* connection = PQconnectdb(url.c_str());
  if (PQstatus(connection) != CONNECTION_OK) {
    std::string message = PQerrorMessage(connection);
    PQfinish(connection);
    FAIL(fmt::format("cannot connect to `{}`: {}", url, message));
  }
  PQclear(PQexec(connection, "SET client_min_messages = warning"));
  PGresult* result = PQexec(connection, sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  std::string value;
  std::string error;
  if (status == PGRES_TUPLES_OK && PQntuples(result) > 0 && PQnfields(result) > 0) value = PQgetvalue(result, 0, 0);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) error = PQerrorMessage(connection);
  PQclear(result);
  PQfinish(connection);
  return {value, error};
}

}  // namespace

std::string postgres_exec(const std::string& url, const std::string& sql) {
  auto [value, error] = run_sql(url, sql);
  if (!error.empty()) FAIL(fmt::format("`{}` failed: {}", sql, error));
  return value;
}

std::string postgres_error(const std::string& url, const std::string& sql) { return run_sql(url, sql).second; }

StoreLocation::StoreLocation(Backend backend, std::string_view file_name) : backend_(backend) {
  if (backend == Backend::sqlite) {
    url_ = dir_.path(file_name);
    return;
  }
  static std::atomic<int> counter{0};
  const std::string server = postgres_server_url();
  schema_ = fmt::format("t_{}_{}_{}", ::getpid(), counter.fetch_add(1), std::rand() % 100000);
  postgres_exec(server, fmt::format("CREATE SCHEMA {}", schema_));
  url_ = fmt::format("{}{}options=-csearch_path%3D{}", server, server.find('?') == std::string::npos ? "?" : "&", schema_);
}

StoreLocation::~StoreLocation() {
  if (schema_.empty()) return;
  // Not postgres_exec: a destructor must not FAIL. A leftover schema dies with the server.
  if (PGconn* connection = PQconnectdb(std::getenv("GOV_TEST_PG") ? std::getenv("GOV_TEST_PG") : "")) {
    if (PQstatus(connection) == CONNECTION_OK) {
      PQclear(PQexec(connection, "SET client_min_messages = warning"));  // no notice per dropped table
      PQclear(PQexec(connection, fmt::format("DROP SCHEMA {} CASCADE", schema_).c_str()));
    }
    PQfinish(connection);
  }
}

}  // namespace gov::store::test
