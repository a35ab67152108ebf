// The PostgreSQL store (issue 25): many processes applying at once, a server killed mid-apply,
// the change feed across a dropped connection, copying histories between back ends, what a load
// verifies, and the open-time checks. Tests tagged [postgresql] need $GOV_TEST_PG (the test
// command starts a server: tests/store/postgres-server) and fail without it.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "compiler/driver/driver.hpp"
#include "compiler/support/sha256.hpp"
#include "runtime/store/store.hpp"
#include "tests/store/store_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace gov::store {
namespace {

using test::apply_request;
using test::marked_files;
using test::open_or_fail;

constexpr int kProcesses = 20;
constexpr int kAppliesEach = 25;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string run_script(const std::string& arguments) {
  const std::string command = fmt::format("{}/tests/store/postgres-server {} 2>&1", GOV_SOURCE_DIR, arguments);
  std::string output;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[512];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    const int status = ::pclose(pipe);
    if (status != 0) FAIL(fmt::format("`{}` failed ({}): {}", command, status, output));
  }
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

// A PostgreSQL server of the test's own (one the test may kill), stopped at the end.
class PrivateServer {
 public:
  PrivateServer() {
    // The server runs as an unprivileged user (as root: gov-postgres), who must reach its directory.
    std::filesystem::permissions(dir_.root(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                                  std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                                  std::filesystem::perms::others_exec);
    url_ = run_script("start " + dir_.path("server"));
  }
  ~PrivateServer() {
    const std::string command = fmt::format("{}/tests/store/postgres-server stop {} >/dev/null 2>&1", GOV_SOURCE_DIR,
                                            dir_.path("server"));
    (void)!std::system(command.c_str());
  }
  const std::string& url() const { return url_; }
  void kill() { run_script("kill " + dir_.path("server")); }
  void start_again() { run_script("start-again " + dir_.path("server")); }

 private:
  test::TempDir dir_;
  std::string url_;
};

// Kills and reaps a child when the test ends early (a failed REQUIRE), so none is left behind.
struct ChildGuard {
  pid_t pid = -1;
  ~ChildGuard() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

TEST_CASE("store concurrency: 20 processes apply 25 times each while a reader checks every version",
          "[store][concurrency][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  const std::string url = location.url();
  { open_or_fail(url); }  // created before the race
  int start[2];
  REQUIRE(::pipe(start) == 0);
  std::vector<pid_t> children;
  for (int id = 0; id < kProcesses; ++id) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child != 0) {
      children.push_back(child);
      continue;
    }
    ::close(start[1]);
    char go = 0;
    (void)!::read(start[0], &go, 1);  // EOF when the parent closes its end: all start at once
    std::ofstream out(location.dir().path(fmt::format("applier-{}.txt", id)));
    OpenOptions options;
    options.busy_timeout = std::chrono::milliseconds(120'000);  // 500 applies wait in one queue
    auto store = Store::open(url, options);
    if (!store) {
      out << "error " << store.error().message << "\n";
      ::_exit(1);
    }
    for (int round = 0; round < kAppliesEach; ++round) {
      const std::string marker = fmt::format("p{}a{}", id, round);
      auto applied = store->apply(apply_request("shared", marked_files(marker, round % 3), "apply " + marker));
      if (applied) {
        out << "ok " << applied->version << " " << applied->content_sha256 << "\n";
      } else {
        out << "error " << error_kind_name(applied.error().kind) << " " << applied.error().message << "\n";
      }
    }
    out.close();
    ::_exit(0);
  }
  ::close(start[0]);
  ::close(start[1]);

  // The reader: every version it sees is whole (its sources are there and hash to its content
  // hash) and the active number never goes back.
  Store reader = open_or_fail(url);
  int64_t last_seen = 0;
  int reads = 0;
  size_t running = children.size();
  std::vector<int> statuses(children.size(), -1);
  while (running > 0) {
    auto version = reader.show("shared");
    if (version) {
      ++reads;
      INFO("read " << reads);
      REQUIRE(test::whole_version_problem(*version).empty());
      CHECK(version->info.number >= last_seen);
      last_seen = version->info.number;
      if (version->info.number > 1) {  // an older version, read in its own snapshot
        auto older = reader.show("shared", version->info.number - 1);
        REQUIRE(older);
        REQUIRE(test::whole_version_problem(*older).empty());
      }
    } else {
      REQUIRE(version.error().kind == ErrorKind::not_found);
    }
    for (size_t i = 0; i < children.size(); ++i) {
      if (statuses[i] != -1) continue;
      int status = 0;
      if (::waitpid(children[i], &status, WNOHANG) == children[i]) {
        statuses[i] = status;
        --running;
      }
    }
  }
  std::map<int64_t, std::string> reported;
  for (int id = 0; id < kProcesses; ++id) {
    CHECK(WIFEXITED(statuses[id]));
    CHECK(WEXITSTATUS(statuses[id]) == 0);
    const std::vector<std::string> lines = lines_of(location.dir().path(fmt::format("applier-{}.txt", id)));
    CHECK(lines.size() == kAppliesEach);
    for (const std::string& line : lines) {
      INFO(line);
      std::istringstream words(line);
      std::string word;
      int64_t number = 0;
      std::string hash;
      words >> word >> number >> hash;
      REQUIRE(word == "ok");
      CHECK(reported.emplace(number, hash).second);  // every number once
    }
  }
  constexpr int64_t kTotal = int64_t{kProcesses} * kAppliesEach;
  REQUIRE(static_cast<int64_t>(reported.size()) == kTotal);
  CHECK(reported.begin()->first == 1);
  CHECK(reported.rbegin()->first == kTotal);  // dense: 1 ... 500
  auto log = reader.log("shared", 10'000);
  REQUIRE(log);
  REQUIRE(static_cast<int64_t>(log->size()) == kTotal);
  for (const VersionInfo& info : *log) CHECK(reported.at(info.number) == info.content_sha256);
  CHECK(reader.audit("shared", 10'000)->size() == log->size());
  CHECK(test::integrity(reader) == "ok");
  UNSCOPED_INFO(fmt::format("{}: {} applies by {} processes, {} reads", test::backend_name(backend), kTotal, kProcesses,
                            reads));
}

// Processes that open a new store at once create it once, and every one opens it: on PostgreSQL
// one of them judged the schema in two statements, and a store committed between the two looked
// like `gov_` tables without `gov_meta` ("not a gov policy store (or a damaged one)").
TEST_CASE("store concurrency: eight processes creating one new store at once all open it", "[store][concurrency][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  constexpr int kRounds = 6;
  constexpr int kOpeners = 8;
  for (int round = 0; round < kRounds; ++round) {
    test::StoreLocation location(backend);
    int start[2];
    REQUIRE(::pipe(start) == 0);
    std::vector<pid_t> children;
    for (int id = 0; id < kOpeners; ++id) {
      const pid_t child = ::fork();
      REQUIRE(child >= 0);
      if (child != 0) {
        children.push_back(child);
        continue;
      }
      ::close(start[1]);
      char go = 0;
      (void)!::read(start[0], &go, 1);  // EOF when the parent closes its end: all start at once
      OpenOptions options;
      options.busy_timeout = std::chrono::milliseconds(60'000);
      auto store = Store::open(location.url(), options);
      if (!store) {
        std::ofstream(location.dir().path(fmt::format("opener-{}.txt", id))) << store.error().message << "\n";
        ::_exit(1);
      }
      ::_exit(0);
    }
    ::close(start[0]);
    ::close(start[1]);
    for (size_t i = 0; i < children.size(); ++i) {
      int status = 0;
      ::waitpid(children[i], &status, 0);
      INFO("round " << round << ", opener " << i << ": "
                    << gov::test::read_text(location.dir().path(fmt::format("opener-{}.txt", i))));
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
    Store store = open_or_fail(location.url());
    CHECK(store.policies()->empty());
  }
}

TEST_CASE("postgresql store: the server killed with SIGKILL in the middle of an apply leaves no half version",
          "[postgresql][store][fault]") {
  for (const char* point : {"apply:before_activate", "apply:before_commit", "rollback:before_commit"}) {
    INFO(point);
    PrivateServer server;
    {
      Store store = open_or_fail(server.url());
      REQUIRE(store.apply(apply_request("p", marked_files("one"), "first one")));
      REQUIRE(store.apply(apply_request("p", marked_files("two"), "second two")));
    }
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t writer = ::fork();
    REQUIRE(writer >= 0);
    if (writer == 0) {
      ::close(ready[0]);
      OpenOptions options;
      options.fault_hook = [&](std::string_view at) {
        if (at != point) return;
        char byte = 1;
        (void)!::write(ready[1], &byte, 1);
        ::pause();  // inside the transaction until the server dies under it
      };
      auto store = Store::open(server.url(), options);
      if (!store) ::_exit(2);
      if (std::string_view(point).starts_with("rollback")) {
        RollbackRequest back;
        back.policy = "p";
        back.version = 1;
        back.author = "tester";
        (void)store->rollback(back);
      } else {
        (void)store->apply(apply_request("p", marked_files("three", 2), "third three"));
      }
      ::_exit(0);
    }
    ChildGuard guard{writer};
    ::close(ready[1]);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);  // the writer is inside its transaction
    ::close(ready[0]);
    {  // meanwhile a reader sees version 2, whole
      Store reader = open_or_fail(server.url());
      auto active = reader.show("p");
      REQUIRE(active);
      CHECK(active->info.number == 2);
    }
    server.kill();  // kill -9 of the postmaster: its backends die with it
    ::kill(writer, SIGKILL);
    ::waitpid(writer, nullptr, 0);
    guard.pid = -1;
    server.start_again();  // crash recovery

    Store store = open_or_fail(server.url());
    auto log = store.log("p", 10);
    REQUIRE(log);
    CHECK(log->size() == 2);
    auto active = store.show("p");
    REQUIRE(active);
    CHECK(active->info.number == 2);
    CHECK(test::whole_version_problem(*active).empty());
    CHECK(store.audit("p", 10)->size() == 2);
    CHECK(test::postgres_exec(server.url(), "SELECT count(*) FROM gov_version_file") == "4");  // 2 versions × 2 files
    CHECK(test::integrity(store) == "ok");
    auto next = store.apply(apply_request("p", marked_files("four"), "fourth four"));
    REQUIRE(next);
    CHECK(next->version == 3);
  }
}

TEST_CASE("postgresql store: the change feed reports applies and catches up after its connection is dropped",
          "[postgresql][store][watch]") {
  test::StoreLocation location(Backend::postgresql);
  // Its own application name, so that terminating the feed's connection touches no other test.
  const std::string url = location.url() + "&application_name=" + location.schema();
  Store writer = open_or_fail(url);
  REQUIRE(writer.apply(apply_request("p", marked_files("one"), "first one")));
  auto feed = writer.changes("p");
  REQUIRE(feed);
  REQUIRE(*feed);
  auto quiet = (*feed)->wait(std::chrono::milliseconds(50));
  REQUIRE(quiet);
  CHECK_FALSE(*quiet);  // nothing applied: nothing reported

  Store other = open_or_fail(url);
  REQUIRE(other.apply(apply_request("p", marked_files("two"), "second two")));
  auto changed = (*feed)->wait(std::chrono::seconds(30));
  REQUIRE(changed);
  CHECK(*changed);
  REQUIRE(other.apply(apply_request("q", marked_files("other"), "another policy other")));
  auto unrelated = (*feed)->wait(std::chrono::milliseconds(200));
  REQUIRE(unrelated);
  CHECK_FALSE(*unrelated);  // another policy's apply is not this feed's change

  // Drop every connection of this test (the feed's among them), then apply while it is down.
  test::postgres_exec(test::postgres_server_url(),
                      fmt::format("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{}' "
                                  "AND pid <> pg_backend_pid()",
                                  location.schema()));
  auto applied = other.apply(apply_request("p", marked_files("three"), "third three"));  // reconnects by itself
  REQUIRE(applied);
  CHECK(applied->version == 3);
  bool caught_up = false;
  for (int attempt = 0; attempt < 10 && !caught_up; ++attempt) {
    auto after = (*feed)->wait(std::chrono::seconds(5));
    if (after && *after) caught_up = true;
  }
  CHECK(caught_up);
  CHECK((*feed)->reconnects() == 1);
  auto active = writer.active("p");  // the writer's own connection was dropped too
  REQUIRE(active);
  CHECK(active->number == 3);

  // interrupt() ends a wait at once.
  std::thread interrupter([&] { (*feed)->interrupt(); });
  auto interrupted = (*feed)->wait(std::chrono::seconds(60));
  interrupter.join();
  REQUIRE(interrupted);
  CHECK_FALSE(*interrupted);
}

// A history with rollbacks, an activate, objects and signatures in `store`.
void write_history(Store& store) {
  ApplyRequest first = apply_request("p", marked_files("one", 2), "first one");
  first.files[1].text += std::string("\0\xff\r\n", 4);
  first.object = CompiledObject{"x86_64", Bytes{1, 2, 3}, Signature{"k1", Bytes(64, 7)}};
  first.signature = Signature{"k1", Bytes(64, 9)};
  REQUIRE(store.apply(first));
  ApplyRequest second = apply_request("p", marked_files("two"), "second two");
  second.object = CompiledObject{"x86_64", Bytes{4, 5}};
  REQUIRE(store.apply(second));
  RollbackRequest back;
  back.policy = "p";
  back.version = 1;
  back.author = "tester";
  back.message = "back to one";
  REQUIRE(store.rollback(back));
  REQUIRE(store.activate("p", 2, "tester"));
  REQUIRE(store.apply(apply_request("q", marked_files("other"), "q other")));
}

// Everything copy_history promises to keep, as text, for comparing two stores.
std::string history_text(Store& store) {
  std::string text;
  auto policies = store.policies();
  REQUIRE(policies);
  for (const PolicyInfo& policy : *policies) {
    text += fmt::format("policy {} active {} latest {}\n", policy.name, policy.active.value_or(0), policy.latest);
    auto log = store.log(policy.name, 1000);
    REQUIRE(log);
    for (const VersionInfo& info : *log) {
      auto version = store.show(policy.name, info.number);
      REQUIRE(version);
      text += fmt::format("  v{} parent {} restored {} {} {} {} {} {} sig {}\n", info.number, info.parent.value_or(0),
                          info.restored_from.value_or(0), info.content_sha256, info.author, info.message,
                          info.created_ms, info.active, version->signature ? version->signature->key_id : "-");
      for (const PolicyFile& file : version->files) text += fmt::format("    {} {}\n", file.path, sha256_hex(file.text));
      auto objects = store.objects(policy.name, info.number);
      REQUIRE(objects);
      for (const CompiledObject& object : *objects) {
        text += fmt::format("    object {} {} bytes sig {}\n", object.key, object.bytes.size(),
                            object.signature ? object.signature->key_id : "-");
      }
    }
  }
  auto audit = store.audit("", 1000);
  REQUIRE(audit);
  for (const AuditEntry& entry : *audit) {
    text += fmt::format("audit {} {} {} {} {} {} {}\n", entry.at_ms, audit_action_name(entry.action), entry.policy,
                        entry.version, entry.previous.value_or(0), entry.author, entry.message);
  }
  return text;
}

TEST_CASE("postgresql store: a history copied from SQLite to PostgreSQL and back is the same history",
          "[postgresql][store][copy]") {
  test::StoreLocation sqlite_location(Backend::sqlite);
  test::StoreLocation postgres_location(Backend::postgresql);
  test::StoreLocation back_location(Backend::sqlite, "back.db");
  Store original = open_or_fail(sqlite_location.url());
  write_history(original);
  const std::string expected = history_text(original);

  Store postgres = open_or_fail(postgres_location.url());
  auto copied = copy_history(original, postgres);
  REQUIRE(copied);
  CHECK(copied->policies == 2);
  CHECK(copied->versions == 4);
  CHECK(copied->kept_versions == 0);
  CHECK(copied->audit_entries == 5);
  CHECK(history_text(postgres) == expected);
  CHECK(test::integrity(postgres) == "ok");

  Store back = open_or_fail("sqlite:" + back_location.url());
  REQUIRE(copy_history(postgres, back));
  CHECK(history_text(back) == expected);
  CHECK(test::integrity(back) == "ok");

  SECTION("a destination holding a prefix gets the rest") {
    REQUIRE(original.apply(apply_request("p", marked_files("five"), "fifth five")));
    auto again = copy_history(original, postgres);
    REQUIRE(again);
    CHECK(again->versions == 1);
    CHECK(again->kept_versions == 4);
    CHECK(again->audit_entries == 1);
    CHECK(history_text(postgres) == history_text(original));
    auto nothing = copy_history(original, postgres);  // the same again: nothing to do
    REQUIRE(nothing);
    CHECK(nothing->versions == 0);
  }
  SECTION("a destination that has diverged is refused and left as it was") {
    REQUIRE(postgres.apply(apply_request("p", marked_files("elsewhere"), "elsewhere elsewhere")));
    REQUIRE(original.apply(apply_request("p", marked_files("five"), "fifth five")));
    const std::string before = history_text(postgres);
    auto refused = copy_history(original, postgres);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::conflict);
    CHECK(refused.error().message.find("is not the source's version 4") != std::string::npos);
    CHECK(history_text(postgres) == before);
  }
  SECTION("a source version whose files were changed is not copied") {
    test::StoreLocation target(Backend::postgresql);
    test::postgres_exec(postgres_location.url(),
                        "UPDATE gov_source SET text = 'changed'::bytea "
                        "WHERE id = (SELECT min(id) FROM gov_source)");
    Store into = open_or_fail(target.url());
    auto refused = copy_history(postgres, into);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::corrupt);
    CHECK(refused.error().message.find("does not match its recorded content hash") != std::string::npos);
    CHECK(into.policies()->empty());  // one transaction: nothing was written
  }
}

TEST_CASE("postgresql store: loading a tampered version is refused as on SQLite", "[postgresql][store][security]") {
  test::StoreLocation location(Backend::postgresql);
  Store store = open_or_fail(location.url());
  REQUIRE(store.apply(apply_request("p", marked_files("one"), "first one")));
  test::postgres_exec(location.url(), "UPDATE gov_source SET text = convert_to('team evil {}', 'UTF8') "
                                      "WHERE id = (SELECT min(id) FROM gov_source)");
  driver::Result loaded = driver::load(driver::Source::stored(store, "p", std::nullopt, {}),
                                       driver::Request::up_to(driver::Stage::check));
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error->message.find("do not match its recorded content hash") != std::string::npos);
  // History is immutable here too: the triggers refuse changes to versions and the audit log.
  CHECK(test::postgres_error(location.url(), "UPDATE gov_version SET message = 'x'").find("versions are immutable") !=
        std::string::npos);
  CHECK(test::postgres_error(location.url(), "DELETE FROM gov_audit").find("append-only") != std::string::npos);
}

TEST_CASE("postgresql store: opening checks what is in the schema", "[postgresql][store]") {
  SECTION("a read-only open of an empty schema finds no store and creates nothing") {
    test::StoreLocation location(Backend::postgresql);
    OpenOptions read_only;
    read_only.read_only = true;
    auto opened = Store::open(location.url(), read_only);
    REQUIRE_FALSE(opened);
    CHECK(opened.error().kind == ErrorKind::not_found);
    CHECK(opened.error().message.find("no policy store in schema") != std::string::npos);
    CHECK(test::postgres_exec(location.url(), "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()") == "0");
  }
  SECTION("a newer schema is refused") {
    test::StoreLocation location(Backend::postgresql);
    { open_or_fail(location.url()); }
    test::postgres_exec(location.url(), "UPDATE gov_meta SET value = '7' WHERE key = 'schema_version'");
    auto opened = Store::open(location.url());
    REQUIRE_FALSE(opened);
    CHECK(opened.error().kind == ErrorKind::newer_schema);
  }
  SECTION("gov tables without gov_meta are not created over") {
    test::StoreLocation location(Backend::postgresql);
    test::postgres_exec(location.url(), "CREATE TABLE gov_policy (id int)");
    auto opened = Store::open(location.url());
    REQUIRE_FALSE(opened);
    CHECK(opened.error().kind == ErrorKind::corrupt);
  }
  SECTION("a read-only store refuses writes") {
    test::StoreLocation location(Backend::postgresql);
    { REQUIRE(open_or_fail(location.url()).apply(apply_request("p", marked_files("one"), "first one"))); }
    OpenOptions read_only;
    read_only.read_only = true;
    Store store = open_or_fail(location.url(), read_only);
    auto refused = store.apply(apply_request("p", marked_files("two"), "second two"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::read_only);
    CHECK(store.show("p")->info.number == 1);
  }
  SECTION("text that PostgreSQL cannot keep is refused as invalid and nothing is written") {
    test::StoreLocation location(Backend::postgresql);
    Store store = open_or_fail(location.url());
    ApplyRequest request = apply_request("p", marked_files("one"), "first one");
    request.author = "\xff\xfe";
    auto refused = store.apply(request);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::invalid);
    CHECK(refused.error().message.find("22021") != std::string::npos);
    CHECK(store.policies()->empty());
  }
  SECTION("a server that is not there is an io error naming the URL without its password") {
    const std::string url = "postgresql://gov:secret@/postgres?host=/nonexistent-dir&port=5432";
    auto opened = Store::open(url);
    REQUIRE_FALSE(opened);
    CHECK(opened.error().kind == ErrorKind::io);
    CHECK(opened.error().message.find("secret") == std::string::npos);
    CHECK(opened.error().message.find("postgresql://gov:***@/postgres") != std::string::npos);
    CHECK(opened.error().message.find_first_of("\n\t") == std::string::npos);  // libpq's lines on one line
  }
}

TEST_CASE("postgresql store: gov store copy moves a history from SQLite to PostgreSQL and back",
          "[postgresql][store][cli]") {
  test::StoreLocation sqlite_location(Backend::sqlite);
  test::StoreLocation postgres_location(Backend::postgresql);
  const std::string back = sqlite_location.dir().path("back.db");
  const std::string flags = " --db '" + sqlite_location.url() + "'";
  REQUIRE(gov::test::run_gov("apply policies/examples/workshop-g5.gov -m first" + flags).exit_code == 0);
  REQUIRE(gov::test::run_gov("apply tests/diff/workshop-g5-team-a-3.gov --policy workshop-g5 -m grow --skip-tests" + flags)
              .exit_code == 0);
  REQUIRE(gov::test::run_gov("rollback 1" + flags).exit_code == 0);

  auto to_postgres = gov::test::run_gov("store copy --from 'sqlite:" + sqlite_location.url() + "' --to '" +
                                        postgres_location.url() + "'");
  INFO(to_postgres.out << to_postgres.err);
  REQUIRE(to_postgres.exit_code == 0);
  CHECK(to_postgres.out.find("copied 3 versions and 3 audit entries of 1 policy") != std::string::npos);
  CHECK(to_postgres.out.find("verified by its content hash") != std::string::npos);
  auto to_sqlite = gov::test::run_gov("store copy --from '" + postgres_location.url() + "' --to 'sqlite:" + back + "'");
  INFO(to_sqlite.out << to_sqlite.err);
  REQUIRE(to_sqlite.exit_code == 0);
  // The same history, as `gov log` prints it, from all three stores.
  const auto log_of = [](const std::string& db) { return gov::test::run_gov("log --db '" + db + "'").out; };
  CHECK(log_of(postgres_location.url()) == log_of(sqlite_location.url()));
  CHECK(log_of(back) == log_of(sqlite_location.url()));
  auto simulate = gov::test::run_gov("simulate --trace policies/examples/workshop-g5.trace.json --db '" +
                                     postgres_location.url() + "'");
  CHECK(simulate.exit_code == 0);
  CHECK(simulate.out == gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl")));

  // Copying again is a no-op; into a store that went its own way, a refusal that changes nothing.
  CHECK(gov::test::run_gov("store copy --from 'sqlite:" + sqlite_location.url() + "' --to '" + postgres_location.url() +
                           "'")
            .out.find("copied 0 versions") != std::string::npos);
  REQUIRE(gov::test::run_gov("apply tests/diff/workshop-g5-team-a-3.gov --policy workshop-g5 -m other --skip-tests --db '" +
                             back + "'")
              .exit_code == 0);
  auto refused = gov::test::run_gov("store copy --from '" + back + "' --to 'sqlite:" + sqlite_location.url() + "'");
  CHECK(refused.exit_code == 0);  // sqlite has 3 versions, back has 4: a prefix, so the rest is copied
  // The PostgreSQL store gets a version 4 of its own (a comment more than team-a-3's content).
  const std::string own = postgres_location.dir().path("workshop-g5-own.gov");
  {
    std::ofstream out(own);
    std::string text = gov::test::read_text(gov::test::repo_path("tests/diff/workshop-g5-team-a-3.gov"));
    const std::string relative = "import \"../../policies/catalog/aws-ml.gov\"";
    REQUIRE(text.find(relative) != std::string::npos);
    text.replace(text.find(relative), relative.size(), "import \"aws-ml\"");  // the shipped catalog, by name
    out << text << "# mine\n";
  }
  auto mine = gov::test::run_gov("apply '" + own + "' --policy workshop-g5 -m mine --skip-tests --db '" +
                                 postgres_location.url() + "'");
  INFO(mine.out << mine.err);
  REQUIRE(mine.exit_code == 0);
  auto diverged = gov::test::run_gov("store copy --from '" + back + "' --to '" + postgres_location.url() + "'");
  CHECK(diverged.exit_code == 1);
  CHECK(diverged.err.find("error: conflict: the destination's version 4") != std::string::npos);
  auto usage = gov::test::run_gov("store copy --from '" + back + "'");
  CHECK(usage.exit_code == 2);
}

TEST_CASE("store: display_location hides a PostgreSQL password", "[store]") {
  CHECK(display_location("postgresql://u:pw@h:5432/db?sslmode=require") == "postgresql://u:***@h:5432/db?sslmode=require");
  CHECK(display_location("postgres://h/db?user=u&password=pw&x=1") == "postgres://h/db?user=u&password=***&x=1");
  CHECK(display_location("postgresql://u@h/db") == "postgresql://u@h/db");
  // Every parameter libpq reads as a password: sslpassword, and names written with escapes.
  CHECK(display_location("postgresql:///pc?host=h&sslpassword=zzz&password=s3cret") ==
        "postgresql:///pc?host=h&sslpassword=***&password=***");
  CHECK(display_location("postgresql:///pc?pass%77ord=s3cret&PASSWORD=x") == "postgresql:///pc?pass%77ord=***&PASSWORD=***");
  CHECK(display_location("postgresql:///pc?passwordless=1&user=u") == "postgresql:///pc?passwordless=1&user=u");
  CHECK(display_location(".gov/policies.db") == ".gov/policies.db");
  CHECK(is_postgres_url("postgresql:///x"));
  CHECK_FALSE(is_postgres_url("sqlite:x.db"));
}

}  // namespace
}  // namespace gov::store
