// Issue 26, point 16 and the store's busy messages: many processes creating one new store at
// the same moment all succeed, and a busy error states the wait SQLite really made.
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/store/store.hpp"
#include "tests/store/store_fixture.hpp"

namespace gov::store {
namespace {

using test::apply_request;
using test::marked_files;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The body of one opener: waits for the start signal (EOF on `start_fd`, when the parent closes
// its end, so every opener starts at the same moment), opens (creating) the store, reads it,
// and writes "ok" or the error to `report`.
[[noreturn]] void opener(const std::string& path, int start_fd, const std::string& report) {
  char go = 0;
  (void)!::read(start_fd, &go, 1);
  std::ofstream out(report);
  auto store = Store::open(path);
  if (!store) {
    out << "open " << error_kind_name(store.error().kind) << ": " << store.error().message;
    out.close();
    ::_exit(1);
  }
  auto policies = store->policies();
  if (!policies) {
    out << "read " << error_kind_name(policies.error().kind) << ": " << policies.error().message;
    out.close();
    ::_exit(1);
  }
  out << "ok";
  out.close();
  ::_exit(0);
}

TEST_CASE("store open: twenty processes creating one new store at once all succeed",
          "[security][store]") {
  constexpr int kRounds = 30;
  constexpr int kProcesses = 20;
  test::TempDir dir;
  std::vector<std::string> failures;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = dir.path(fmt::format("round-{}.db", round));
    int start[2];
    REQUIRE(::pipe(start) == 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const std::string report = dir.path(fmt::format("round-{}-{}.out", round, i));
      pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        ::close(start[1]);
        opener(path, start[0], report);
      }
      children.push_back(pid);
    }
    ::close(start[0]);
    ::close(start[1]);  // every opener starts now
    for (int i = 0; i < kProcesses; ++i) {
      int status = 0;
      REQUIRE(::waitpid(children[static_cast<size_t>(i)], &status, 0) == children[static_cast<size_t>(i)]);
      const std::string outcome = read_text(dir.path(fmt::format("round-{}-{}.out", round, i)));
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || outcome != "ok") {
        failures.push_back(fmt::format("round {} process {}: {}", round, i, outcome));
      }
    }
    // The store they made is one sound store.
    Store store = test::open_or_fail(path);
    CHECK(test::integrity(store) == "ok");
    REQUIRE(store.apply(apply_request("p", marked_files("v1"), "v1")));
  }
  INFO(fmt::format("{} of {} opens failed; the first: {}", failures.size(), kRounds * kProcesses,
                   failures.empty() ? "" : failures.front()));
  CHECK(failures.empty());
}

// The number of milliseconds in "waited N ms" in `message`, or -1.
int64_t waited_ms(const std::string& message) {
  std::smatch match;
  if (!std::regex_search(message, match, std::regex("waited ([0-9]+) ms"))) return -1;
  return std::stoll(match[1].str());
}

// A raw SQLite connection holding the write lock of `path` (BEGIN IMMEDIATE) until destroyed.
struct WriteLock {
  sqlite3* db = nullptr;
  explicit WriteLock(const std::string& path) {
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  ~WriteLock() {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;
};

TEST_CASE("store open: a busy apply states the wait of its busy timeout", "[security][store]") {
  test::TempDir dir;
  const std::string path = dir.path("p.db");
  { Store made = test::open_or_fail(path); }
  OpenOptions options;
  options.busy_timeout = std::chrono::milliseconds(200);
  Store store = test::open_or_fail(path, options);
  WriteLock lock(path);
  auto applied = store.apply(apply_request("p", marked_files("v1"), "v1"));
  REQUIRE_FALSE(applied);
  CHECK(applied.error().kind == ErrorKind::busy);
  const std::string& message = applied.error().message;
  INFO(message);
  CHECK(message.find(fmt::format("cannot apply policy `p` to `{}`: database is locked (", path)) == 0);
  CHECK(message.find("the busy timeout is 200 ms") != std::string::npos);
  CHECK(waited_ms(message) >= 200);  // SQLite's busy handler gave up only after the timeout
  CHECK(message.find("5000") == std::string::npos);
}

TEST_CASE("store open: opening a new store that another process locks states the wait",
          "[security][store]") {
  test::TempDir dir;
  const std::string path = dir.path("p.db");
  { std::ofstream empty(path); }  // a new, empty store: the open must migrate it
  WriteLock lock(path);
  OpenOptions options;
  options.busy_timeout = std::chrono::milliseconds(200);
  auto store = Store::open(path, options);
  REQUIRE_FALSE(store);
  CHECK(store.error().kind == ErrorKind::busy);
  const std::string& message = store.error().message;
  INFO(message);
  CHECK(message.find(fmt::format("cannot open policy store `{}`: database is locked (", path)) == 0);
  CHECK(message.find("the busy timeout is 200 ms") != std::string::npos);
  CHECK(waited_ms(message) >= 200);
}

}  // namespace
}  // namespace gov::store
