// Fault injection: read-only files, a full disk, a writer killed inside its transaction,
// truncated and garbage files, and a database from a newer schema. Each ends with a clear error
// and the previous state intact.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "runtime/store/store.hpp"
#include "tests/store/store_fixture.hpp"

namespace gov::store {
namespace {

using test::apply_request;
using test::marked_files;
using test::open_or_fail;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string random_bytes(size_t size, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(generator() & 0xff);
  return bytes;
}

// A store at `path` with `versions` versions of policy "p" (marker "v1", "v2", ...), closed,
// so its WAL is checkpointed into the main file.
void make_store(const std::string& path, int versions, size_t padding = 0) {
  Store store = open_or_fail(path);
  for (int i = 1; i <= versions; ++i) {
    std::vector<PolicyFile> files = marked_files(fmt::format("v{}", i));
    files.back().text += random_bytes(padding, static_cast<uint32_t>(i));
    auto applied = store.apply(apply_request("p", files, fmt::format("v{}", i)));
    REQUIRE(applied);
  }
}

// Opens `path` and checks that policy "p" is at `version`, whole, and the file is sound.
void require_intact(const std::string& path, int64_t version, int64_t versions) {
  Store store = open_or_fail(path);
  auto active = store.show("p");
  REQUIRE(active);
  CHECK(active->info.number == version);
  CHECK(test::whole_version_problem(*active).empty());
  CHECK(store.log("p", 1000)->size() == static_cast<size_t>(versions));
  CHECK(test::integrity(store) == "ok");
}

Error open_error(const std::string& path, const OpenOptions& options = {}) {
  auto store = Store::open(path, options);
  REQUIRE_FALSE(store);
  return store.error();
}

TEST_CASE("store fault: a read-only file refuses writes and keeps its state", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 2);
  REQUIRE(::chmod(path.c_str(), 0444) == 0);

  Store store = open_or_fail(path);  // opened read-write, found read-only (even as root)
  CHECK(store.read_only());
  auto applied = store.apply(apply_request("p", marked_files("v3"), "v3"));
  REQUIRE_FALSE(applied);
  CHECK(applied.error().kind == ErrorKind::read_only);
  CHECK(applied.error().message ==
        fmt::format("cannot apply policy `p` to `{}`: the file is read-only", path));
  CHECK(store.rollback({"p", 1, "tester", "back", std::nullopt}).error().kind == ErrorKind::read_only);
  CHECK(store.put_object("p", 1, {"k", Bytes{1}}).error().kind == ErrorKind::read_only);
  CHECK(store.show("p")->info.number == 2);
  CHECK(test::integrity(store) == "ok");

  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  store = open_or_fail(path);
  CHECK_FALSE(store.read_only());
  REQUIRE(store.apply(apply_request("p", marked_files("v3"), "v3")));
}

TEST_CASE("store fault: a read-only open reads and never writes", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 1);
  Store writer = open_or_fail(path);
  OpenOptions options;
  options.read_only = true;
  Store reader = open_or_fail(path, options);
  CHECK(reader.read_only());
  auto refused = reader.apply(apply_request("p", marked_files("v2"), "v2"));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::read_only);
  CHECK(refused.error().message.find("the store is opened read-only") != std::string::npos);
  CHECK(reader.batch([](Store&) { return Result<void>(); }).error().kind == ErrorKind::read_only);

  // The read-only connection follows the writer's commits.
  REQUIRE(writer.apply(apply_request("p", marked_files("v2"), "v2")));
  auto seen = reader.show("p");
  REQUIRE(seen);
  CHECK(seen->info.number == 2);
  CHECK(test::whole_version_problem(*seen).empty());
}

TEST_CASE("store fault: a full disk fails the apply and keeps the previous version", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 1);
  int64_t pages = static_cast<int64_t>(std::filesystem::file_size(path) / 4096);

  OpenOptions tiny;
  tiny.max_pages = pages + 2;
  {
    Store store = open_or_fail(path, tiny);
    std::vector<PolicyFile> big = marked_files("v2");
    big.back().text += random_bytes(1 << 20, 2);  // 256 pages
    auto applied = store.apply(apply_request("p", big, "v2"));
    REQUIRE_FALSE(applied);
    CHECK(applied.error().kind == ErrorKind::full);
    CHECK(applied.error().message.find("cannot apply policy `p`") == 0);
    CHECK(store.show("p")->info.number == 1);
    CHECK(test::integrity(store) == "ok");

    // The same connection keeps working for writes that fit.
    auto small = store.apply(apply_request("p", marked_files("v2"), "v2"));
    REQUIRE(small);
    CHECK(small->version == 2);
  }
  require_intact(path, 2, 2);
}

// Forks a writer that stops at `point` inside its apply transaction, tells us through a pipe,
// and is killed with SIGKILL there.
void kill_writer_at(const std::string& path, const std::string& point, size_t padding) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    OpenOptions options;
    options.fault_hook = [&](std::string_view at) {
      if (at != point) return;
      char byte = 1;
      (void)!::write(ready[1], &byte, 1);
      for (;;) ::pause();
    };
    auto store = Store::open(path, options);
    if (!store) ::_exit(2);
    std::vector<PolicyFile> files = marked_files("doomed");
    files.back().text += random_bytes(padding, 7);
    (void)store->apply(apply_request("p", files, "doomed"));
    ::_exit(3);  // the hook never returns
  }
  ::close(ready[1]);
  char byte = 0;
  ssize_t got = ::read(ready[0], &byte, 1);
  ::close(ready[0]);
  int status = 0;
  if (got != 1) {
    ::waitpid(child, &status, 0);
    FAIL(fmt::format("the writer did not reach `{}` (exit status {})", point, status));
  }

  // While the dying writer holds the lock: readers see the old version, writers get `busy`.
  OpenOptions impatient;
  impatient.busy_timeout = std::chrono::milliseconds(50);
  {
    Store store = open_or_fail(path, impatient);
    CHECK(store.show("p")->info.number == 1);
    auto blocked = store.apply(apply_request("p", marked_files("blocked"), "blocked"));
    REQUIRE_FALSE(blocked);
    CHECK(blocked.error().kind == ErrorKind::busy);
    CHECK(blocked.error().message.find("the busy timeout is 50 ms") != std::string::npos);
  }

  REQUIRE(::kill(child, SIGKILL) == 0);
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
}

TEST_CASE("store fault: a writer killed in the middle of apply leaves the old version", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 1);
  std::string point = GENERATE(as<std::string>{}, "apply:before_activate", "apply:before_commit");
  size_t padding = GENERATE(size_t{0}, size_t{8} << 20);  // 8 MiB: uncommitted pages spill to the WAL
  CAPTURE(point, padding);

  kill_writer_at(path, point, padding);
  require_intact(path, 1, 1);
  Store store = open_or_fail(path);
  auto next = store.apply(apply_request("p", marked_files("v2"), "v2"));
  REQUIRE(next);
  CHECK(next->version == 2);  // no number was taken by the dead writer
}

TEST_CASE("store fault: a truncated file is reported as corrupt and left alone", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 20, 4096);
  std::string whole = read_bytes(path);
  REQUIRE(whole.size() > 16 * 4096);
  size_t keep = GENERATE(size_t{50}, size_t{4096}, size_t{8 * 4096}, size_t{8 * 4096 + 100});
  CAPTURE(keep);
  std::string truncated = whole.substr(0, keep);
  write_bytes(path, truncated);

  Error error = open_error(path);
  CHECK(error.kind == ErrorKind::corrupt);
  CHECK(error.message.find(fmt::format("cannot open policy store `{}`: ", path)) == 0);
  CHECK(read_bytes(path) == truncated);  // nothing was "repaired" or overwritten
  OpenOptions read_only;
  read_only.read_only = true;
  CHECK(open_error(path, read_only).kind == ErrorKind::corrupt);

  write_bytes(path, whole);  // the untouched copy is still a sound store
  require_intact(path, 20, 20);
}

TEST_CASE("store fault: a garbage file is reported as corrupt and left alone", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");

  SECTION("random bytes") {
    std::string garbage = random_bytes(64 * 1024, 42);
    write_bytes(path, garbage);
    Error error = open_error(path);
    CHECK(error.kind == ErrorKind::corrupt);
    CHECK(error.message == fmt::format("cannot open policy store `{}`: file is not a database", path));
    CHECK(read_bytes(path) == garbage);
  }
  SECTION("an SQLite header followed by random pages") {
    make_store(path, 5, 4096);
    std::string bytes = read_bytes(path);
    std::string garbage = bytes.substr(0, 100) + random_bytes(bytes.size() - 100, 43);
    write_bytes(path, garbage);
    Error error = open_error(path);
    CHECK(error.kind == ErrorKind::corrupt);
    CHECK(read_bytes(path) == garbage);
  }
  SECTION("damaged pages behind a sound schema fail quick_check") {
    make_store(path, 20, 4096);
    std::string bytes = read_bytes(path);
    std::string damaged = bytes.substr(0, 8 * 4096) + random_bytes(4096, 44) + bytes.substr(9 * 4096);
    write_bytes(path, damaged);
    Error error = open_error(path);
    CHECK(error.kind == ErrorKind::corrupt);
    INFO(error.message);
    CHECK(error.message.find("the database is damaged: ") != std::string::npos);
    CHECK(read_bytes(path) == damaged);

    // Without the open-time check (as for stores beyond quick_check_max_bytes) the damage is
    // found on demand.
    OpenOptions unchecked;
    unchecked.quick_check_max_bytes = 0;
    unchecked.read_only = true;
    Store store = open_or_fail(path, unchecked);
    CHECK(test::integrity(store) != "ok");
    CHECK(read_bytes(path) == damaged);
  }
}

// A copy cut short (a full disk, an interrupted transfer) is named as such, with both sizes,
// where SQLite says only "database disk image is malformed"; the file is left as it is.
TEST_CASE("store fault: a truncated store is named truncated and left alone", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 20, 4096);
  const std::string bytes = read_bytes(path);
  REQUIRE(bytes.size() > 3 * 4096);
  const size_t pages = bytes.size() / 4096;
  for (const size_t keep : {bytes.size() - 4096, size_t{4096}}) {
    INFO(keep);
    write_bytes(path, bytes.substr(0, keep));
    Error error = open_error(path);
    CHECK(error.kind == ErrorKind::corrupt);
    CHECK(error.message == fmt::format("cannot open policy store `{}`: the database is damaged: the file is truncated: it "
                                       "holds {} bytes, and its header says {} ({} pages of 4096 bytes)",
                                       path, keep, bytes.size(), pages));
    CHECK(read_bytes(path) == bytes.substr(0, keep));
  }
  write_bytes(path, bytes.substr(0, 50));
  CHECK(open_error(path).message.find("the file is truncated: it holds 50 bytes, less than an SQLite header (100)") !=
        std::string::npos);
}

TEST_CASE("store fault: a database from a newer schema is refused untouched", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 1);
  std::string bytes = read_bytes(path);
  bytes.replace(60, 4, std::string("\x00\x00\x03\xe7", 4));  // header offset 60: user_version 999
  write_bytes(path, bytes);

  Error error = open_error(path);
  CHECK(error.kind == ErrorKind::newer_schema);
  CHECK(error.message == fmt::format("cannot open policy store `{}`: this database was written "
                                     "by a newer gov (schema 999; this gov knows 2)",
                                     path));
  OpenOptions read_only;
  read_only.read_only = true;
  CHECK(open_error(path, read_only).kind == ErrorKind::newer_schema);
  CHECK(read_bytes(path) == bytes);
}

TEST_CASE("store fault: an SQLite database that is not a gov store is refused untouched", "[store][fault]") {
  test::TempDir dir;
  std::string path = dir.path("p.db");
  make_store(path, 1);
  std::string bytes = read_bytes(path);
  bytes.replace(68, 4, std::string(4, '\0'));  // header offset 68: application_id 0
  write_bytes(path, bytes);

  Error error = open_error(path);
  CHECK(error.kind == ErrorKind::corrupt);
  CHECK(error.message == fmt::format("cannot open policy store `{}`: an SQLite database but not a "
                                     "gov policy store (application id 0x0)",
                                     path));
  CHECK(read_bytes(path) == bytes);
}

}  // namespace
}  // namespace gov::store
