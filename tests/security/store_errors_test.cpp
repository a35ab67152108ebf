// Issue 26, "clearer errors" for the store: a damaged page is named in words, a gov store whose
// schema version was reset is refused (never migrated over), the engine's open states the real
// busy wait, and a read-only open that cannot create WAL's shared memory says what to do.
#include <fmt/format.h>
#include <grp.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gov/gov.h>

#include "runtime/store/store.hpp"
#include "tests/store/store_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace gov::store {
namespace {

using test::apply_request;
using test::marked_files;

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

// A store at `path` with `versions` versions of policy "p", closed (its WAL folded in).
void make_store(const std::string& path, int versions) {
  Store store = test::open_or_fail(path);
  for (int i = 1; i <= versions; ++i) {
    std::vector<PolicyFile> files = marked_files(fmt::format("v{}", i));
    files.back().text += std::string(3000, static_cast<char>('a' + i % 26));
    REQUIRE(store.apply(apply_request("p", files, fmt::format("v{}", i))));
  }
}

Error open_error(const std::string& path, const OpenOptions& options = {}) {
  auto store = Store::open(path, options);
  REQUIRE_FALSE(store);
  return store.error();
}

// SQLite b-tree page types (the first byte of a page's header).
bool is_btree_page(unsigned char type) { return type == 0x02 || type == 0x05 || type == 0x0a || type == 0x0d; }

TEST_CASE("store errors: a zeroed page is named in words with quick_check's line as detail", "[security][store]") {
  test::TempDir dir;
  const std::string path = dir.path("p.db");
  make_store(path, 40);
  std::string bytes = read_bytes(path);
  constexpr size_t kPage = 4096;
  REQUIRE(bytes.size() > 20 * kPage);
  // The first b-tree page after the schema's root pages: zeroing it is what a torn write or a bad
  // disk block leaves.
  size_t number = 0;
  for (size_t page = 10; page * kPage <= bytes.size(); ++page) {
    if (is_btree_page(static_cast<unsigned char>(bytes[(page - 1) * kPage]))) {
      number = page;
      break;
    }
  }
  REQUIRE(number != 0);
  bytes.replace((number - 1) * kPage, kPage, std::string(kPage, '\0'));
  write_bytes(path, bytes);

  const Error error = open_error(path);
  CHECK(error.kind == ErrorKind::corrupt);
  INFO(error.message);
  CHECK(error.message.find(fmt::format("cannot open policy store `{}`: the database is damaged: page {} is zeroed or "
                                       "unreadable (not a valid b-tree page)",
                                       path, number)) == 0);
  CHECK(error.message.find(fmt::format("(PRAGMA quick_check: Page {}: ", number)) != std::string::npos);
  CHECK(error.message.find("*** in database main ***") == std::string::npos);
  CHECK(read_bytes(path) == bytes);
}

TEST_CASE("store errors: a gov store whose schema version was reset is refused and never migrated over",
          "[security][store]") {
  test::TempDir dir;
  const std::string path = dir.path("p.db");
  make_store(path, 2);
  std::string bytes = read_bytes(path);
  bytes.replace(60, 4, std::string(4, '\0'));  // header offset 60: user_version 0, application id kept
  write_bytes(path, bytes);

  const Error error = open_error(path);
  CHECK(error.kind == ErrorKind::corrupt);
  INFO(error.message);
  const std::regex expected(
      "cannot open policy store `.*`: a gov policy store whose schema version was reset \\(user_version is 0 but the "
      "store has [0-9]+ tables, indexes and triggers\\); it is not migrated over");
  CHECK(std::regex_match(error.message, expected));
  CHECK(error.message.find("already exists") == std::string::npos);
  OpenOptions read_only;
  read_only.read_only = true;
  CHECK(open_error(path, read_only).message == error.message);
  CHECK(read_bytes(path) == bytes);
}

TEST_CASE("store errors: the engine's open of a locked store states the real wait", "[security][store]") {
  test::TempDir dir;
  const std::string path = dir.path("p.db");
  make_store(path, 1);
  // Another process's connection in exclusive locking mode keeps every reader out.
  sqlite3* holder = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &holder) == SQLITE_OK);
  REQUIRE(sqlite3_exec(holder, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; SELECT count(*) FROM policy;",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  gov_open_options options;
  gov_open_options_init(&options);
  options.back_end = GOV_BACK_END_INTERPRETER;
  gov_engine* engine = nullptr;
  const gov_status status = gov_engine_open(path.c_str(), &options, &engine);
  const std::string message = status == GOV_OK ? "" : gov_last_error();
  if (engine != nullptr) gov_engine_close(engine);
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  INFO(message);
  REQUIRE(status != GOV_OK);
  CHECK(message.find("database is locked (another process held the lock: waited ") != std::string::npos);
  CHECK(message.find("the busy timeout is 5000 ms") != std::string::npos);
  std::smatch waited;
  REQUIRE(std::regex_search(message, waited, std::regex("waited ([0-9]+) ms")));
  CHECK(std::stoll(waited[1].str()) >= 5000);  // the number the busy handler measured
}

TEST_CASE("store errors: a read-only open that cannot create the shared-memory file says what to do",
          "[security][store]") {
  test::TempDir dir;
  REQUIRE(::chmod(dir.root().c_str(), 0755) == 0);
  const std::string store_dir = dir.path("store");
  std::filesystem::create_directory(store_dir);
  const std::string path = store_dir + "/p.db";
  make_store(path, 1);
  // The file keeps its owner's write bit (so it may change and is not read as immutable), but
  // the directory is closed to the reader.
  REQUIRE(::chmod(store_dir.c_str(), 0555) == 0);
  const std::string report = dir.path("report");
  { std::ofstream touch(report); }
  REQUIRE(::chmod(report.c_str(), 0666) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // As root, become `nobody` (root could create the file); otherwise the closed directory is
    // closed to this user already.
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      ::_exit(77);
    }
    OpenOptions options;
    options.read_only = true;
    auto store = Store::open(path, options);
    std::ofstream out(report);
    out << (store ? std::string("opened") : store.error().message);
    out.close();  // _exit runs no destructors
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  ::chmod(store_dir.c_str(), 0755);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::string message = read_bytes(report);
  INFO(message);
  CHECK(message.find(fmt::format("cannot open policy store `{}`: SQLite needs the shared-memory file `{}-shm`", path,
                                 path)) == 0);
  CHECK(message.find("chmod a-w") != std::string::npos);
}

// An SRE helper's finding: with the store's volume full and no -shm next to it (the usual state
// after clean exits), every open failed with SQLite's "disk I/O error", reads and controllers'
// starts included. The volume is a small tmpfs mounted for the test (root only; skipped else).
TEST_CASE("store errors: an open on a full volume says the volume is full", "[security][store]") {
  test::TempDir dir;
  const std::string volume = dir.path("volume");
  ::gov::test::SmallVolume small(volume, "600k");
  if (!small.mounted()) {
    WARN("skipped: mounting a small tmpfs needs root");
    return;
  }
  const std::string path = volume + "/p.db";
  make_store(path, 1);
  REQUIRE_FALSE(std::filesystem::exists(path + "-shm"));
  small.fill();
  for (const bool read_only : {true, false}) {
    OpenOptions options;
    options.read_only = read_only;
    options.create = false;
    const Error error = open_error(path, options);
    INFO(error.message);
    CHECK(error.kind == ErrorKind::full);
    CHECK(error.message.find(fmt::format("cannot open policy store `{}`: the volume holding it is full: SQLite needs "
                                         "room for the shared-memory file `{}-shm`",
                                         path, path)) == 0);
  }
  small.unfill();
  OpenOptions options;
  options.read_only = true;
  CHECK(Store::open(path, options).ok());  // nothing was lost
}

// An SRE helper's finding: a store this user may not read said only "unable to open database file".
TEST_CASE("store errors: a store this user may not read says so, with the file's mode and owner", "[security][store]") {
  test::TempDir dir;
  REQUIRE(::chmod(dir.root().c_str(), 0755) == 0);
  const std::string path = dir.path("p.db");
  make_store(path, 1);
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  const std::string report = dir.path("report");
  { std::ofstream touch(report); }
  REQUIRE(::chmod(report.c_str(), 0666) == 0);
  if (::geteuid() != 0) {
    WARN("skipped: becoming another user needs root");
    return;
  }
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(77);
    OpenOptions options;
    options.read_only = true;
    auto store = Store::open(path, options);
    std::ofstream out(report);
    out << (store ? std::string("opened") : store.error().message);
    out.close();
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::string message = read_bytes(report);
  CHECK(message == fmt::format("cannot open policy store `{}`: permission denied: this user (uid 65534) may not read "
                               "the file (mode 0600, owner uid 0, group gid 0) (unable to open database file)",
                               path));
}

// An SRE helper's finding: `gov apply` to a store on a read-only mount got advice about reading it
// (take the write bits off the file), which a read-only mount does not allow and a write does not
// need. Reads there still work: the store is read as immutable.
TEST_CASE("store errors: a write to a store on a read-only file system says so", "[security][store]") {
  test::TempDir dir;
  const std::string volume = dir.path("volume");
  ::gov::test::SmallVolume small(volume, "2m");
  if (!small.mounted()) {
    WARN("skipped: mounting a tmpfs needs root");
    return;
  }
  const std::string path = volume + "/p.db";
  make_store(path, 1);
  REQUIRE(small.make_read_only());
  OpenOptions write;
  write.create = false;
  const Error error = open_error(path, write);
  CHECK(error.kind == ErrorKind::read_only);
  CHECK(error.message.find("the store is on a read-only file system, so nothing can be written to it") !=
        std::string::npos);
  OpenOptions read;
  read.read_only = true;
  read.create = false;
  CHECK(Store::open(path, read).ok());
}

}  // namespace
}  // namespace gov::store
