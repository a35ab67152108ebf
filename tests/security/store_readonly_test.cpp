// Issue 26, point 17: a store on a read-only volume (a 0444 file in a 0555 directory, or a
// read-only mount) is read by every command that only reads and by the embedding API, and
// nothing is created next to it; a write-ahead log left next to it is read or clearly refused.
#include <fcntl.h>
#include <grp.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gov/gov.h>

#include "runtime/store/store.hpp"
#include "tests/store/store_fixture.hpp"

namespace gov::store {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;
constexpr int kSkipped = 77;  // a child that could not set up its case (no mount permission)

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string shell_quoted(const std::string& text) { return "'" + text + "'"; }

std::set<std::string> entries(const std::string& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) names.insert(entry.path().filename().string());
  return names;
}

// Runs `body` in a forked child (as `uid` when given and the tests run as root; a non-root run
// is already another user than the store's owner would need to be) and returns its exit code,
// or -1 when it did not exit normally.
int in_child(const std::function<int()>& body, std::optional<uid_t> uid = std::nullopt) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const bool switch_user = uid && ::geteuid() == 0;
    if (switch_user && (::setgroups(0, nullptr) != 0 || ::setgid(*uid) != 0 || ::setuid(*uid) != 0)) {
      ::_exit(kSkipped);
    }
    ::_exit(body());
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A scratch layout: `root` (0755, so another user may pass), `root/store/p.db` with two
// versions of policy `p` (v2 active), and `root/out` (0777) for the commands' output.
struct Layout {
  test::TempDir dir;
  std::string store_dir = dir.path("store");
  std::string db = dir.path("store/p.db");
  std::string out = dir.path("out");

  Layout() {
    REQUIRE(::chmod(dir.root().c_str(), 0755) == 0);
    fs::create_directory(store_dir);
    fs::create_directory(out);
    REQUIRE(::chmod(out.c_str(), 0777) == 0);
    const std::string examples = std::string(GOV_SOURCE_DIR) + "/policies/examples/";
    for (const char* file : {"workshop-kr-g5-8xlarge.gov", "workshop-g5.gov"}) {
      const std::string command = fmt::format("{} apply {} --policy p --db {} > /dev/null 2>&1", shell_quoted(GOV_BINARY),
                                              shell_quoted(examples + file), shell_quoted(db));
      REQUIRE(std::system(command.c_str()) == 0);
    }
  }
  ~Layout() {
    ::chmod(store_dir.c_str(), 0755);  // so TempDir can remove it
  }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;

  void freeze() const {
    REQUIRE(::chmod(db.c_str(), 0444) == 0);
    REQUIRE(::chmod(store_dir.c_str(), 0555) == 0);
  }
};

// The read commands, each with a line its output must contain.
struct ReadCommand {
  std::string arguments;
  std::string expected;
};

std::vector<ReadCommand> read_commands() {
  const std::string trace = std::string(GOV_SOURCE_DIR) + "/policies/examples/workshop-g5.trace.json";
  return {
      {"log", "v2 "},
      {"show", "policy p version 2 (active)"},
      {"show 1 --source", "# ==> "},
      {"show 2 --inspect", "team-a"},
      {"diff 1 2", ""},
      {"simulate --engine interp --trace " + shell_quoted(trace), "\"a1\""},
  };
}

// Runs every read command on `db` and the C embedding API; returns 0 when all of them read the
// store, else the number of the first that failed (its stderr is in `out`/N.err).
int read_everything(const std::string& db, const std::string& out) {
  std::vector<ReadCommand> commands = read_commands();
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string stdout_path = fmt::format("{}/{}.out", out, i);
    const std::string stderr_path = fmt::format("{}/{}.err", out, i);
    const std::string command = fmt::format("{} {} --db {} > {} 2> {}", shell_quoted(GOV_BINARY), commands[i].arguments,
                                            shell_quoted(db), shell_quoted(stdout_path), shell_quoted(stderr_path));
    if (std::system(command.c_str()) != 0) return static_cast<int>(i) + 1;
    if (read_text(stdout_path).find(commands[i].expected) == std::string::npos) return static_cast<int>(i) + 1;
  }
  gov_open_options options;
  gov_open_options_init(&options);
  options.back_end = GOV_BACK_END_INTERPRETER;
  gov_engine* engine = nullptr;
  const std::string embed_error = fmt::format("{}/embed.err", out);
  if (gov_engine_open(db.c_str(), &options, &engine) != GOV_OK) {
    std::ofstream(embed_error) << gov_last_error();
    return 50;
  }
  const int64_t version = gov_engine_version(engine);
  gov_engine_close(engine);
  if (version != 2) {
    std::ofstream(embed_error) << "version " << version;
    return 51;
  }
  return 0;
}

std::string failure_text(int code, const std::string& out) {
  if (code == 0) return "";
  if (code >= 50) return fmt::format("embedding API: {}", read_text(out + "/embed.err"));
  const size_t i = static_cast<size_t>(code - 1);
  if (i >= read_commands().size()) return fmt::format("child exited with {}", code);
  return fmt::format("gov {}: {}{}", read_commands()[i].arguments, read_text(fmt::format("{}/{}.err", out, i)),
                     read_text(fmt::format("{}/{}.out", out, i)).substr(0, 300));
}

TEST_CASE("store read-only: a frozen store is read by every read command as another user", "[security][store]") {
  Layout layout;
  layout.freeze();
  const std::set<std::string> before = entries(layout.store_dir);
  // The case of the issue: a controller that is not root, so the directory really is closed to it.
  const int code = in_child([&] { return read_everything(layout.db, layout.out); }, kNobody);
  INFO(failure_text(code, layout.out));
  CHECK(code == 0);
  CHECK(entries(layout.store_dir) == before);
}

TEST_CASE("store read-only: a frozen store is read by root without creating anything next to it",
          "[security][store]") {
  Layout layout;
  layout.freeze();
  const std::set<std::string> before = entries(layout.store_dir);
  const int code = read_everything(layout.db, layout.out);
  INFO(failure_text(code, layout.out));
  CHECK(code == 0);
  CHECK(entries(layout.store_dir) == before);  // no -shm, no -wal
  // The Store API as well: every read, and writes refused.
  OpenOptions options;
  options.read_only = true;
  Store store = test::open_or_fail(layout.db, options);
  CHECK(store.show("p")->info.number == 2);
  CHECK(store.log("p", 10)->size() == 2);
  CHECK(store.audit("", 10)->size() == 2);
  CHECK(test::integrity(store) == "ok");
  CHECK(store.apply(test::apply_request("p", test::marked_files("v3"))).error().kind == ErrorKind::read_only);
  CHECK(entries(layout.store_dir) == before);
}

TEST_CASE("store read-only: a store on a read-only mount is read by every read command", "[security][store]") {
  Layout layout;  // write bits stay on: only the mount is read-only
  const std::set<std::string> before = entries(layout.store_dir);
  const int code = in_child([&] {
    // A private mount namespace, so the read-only bind mount is seen by this child only.
    if (::unshare(CLONE_NEWNS) != 0) return kSkipped;
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return kSkipped;
    if (::mount(layout.store_dir.c_str(), layout.store_dir.c_str(), nullptr, MS_BIND, nullptr) != 0) return kSkipped;
    if (::mount(nullptr, layout.store_dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
      return kSkipped;
    }
    if (::access(layout.store_dir.c_str(), W_OK) == 0 || errno != EROFS) return kSkipped;
    return read_everything(layout.db, layout.out);
  });
  if (code == kSkipped) {
    WARN("no permission for a read-only bind mount here; the mode-bit cases cover the rest");
    return;
  }
  INFO(failure_text(code, layout.out));
  CHECK(code == 0);
  CHECK(entries(layout.store_dir) == before);
}

// Leaves a write-ahead log with a committed, never checkpointed version 3 next to the store: a
// writer that is killed after its commit, before it closes.
void leave_wal_with_version_3(const Layout& layout) {
  const int code = in_child([&] {
    auto store = Store::open(layout.db);
    if (!store) return 1;
    auto applied = store->apply(test::apply_request("p", test::marked_files("v3"), "v3"));
    if (!applied || applied->version != 3) return 2;
    ::_exit(0);  // no close: the log is not folded into the file
  });
  REQUIRE(code == 0);
  REQUIRE(fs::file_size(layout.db + "-wal") > 0);
}

TEST_CASE("store read-only: a frozen store with a write-ahead log reads the log or is refused clearly",
          "[security][store]") {
  Layout layout;
  leave_wal_with_version_3(layout);
  SECTION("with its shared-memory file, the log is read: the newest version is seen") {
    layout.freeze();
    const std::set<std::string> before = entries(layout.store_dir);
    const std::string report = layout.out + "/active";
    const int code = in_child(
        [&] {
          OpenOptions options;
          options.read_only = true;
          auto store = Store::open(layout.db, options);
          std::ofstream out(report);
          if (!store) {
            out << store.error().message;
            return 1;
          }
          auto active = store->show("p");
          if (!active) {
            out << active.error().message;
            return 2;
          }
          out << active->info.number << " " << test::whole_version_problem(*active);
          return 0;
        },
        kNobody);
    INFO(read_text(report));
    CHECK(code == 0);
    CHECK(read_text(report) == "3 ");  // version 3 lives only in the log: never a stale read
    CHECK(entries(layout.store_dir) == before);
  }
  SECTION("without it, the store is refused with the reason") {
    fs::remove(layout.db + "-shm");
    layout.freeze();
    const std::set<std::string> before = entries(layout.store_dir);
    const std::string report = layout.out + "/error";
    const int code = in_child(
        [&] {
          OpenOptions options;
          options.read_only = true;
          auto store = Store::open(layout.db, options);
          std::ofstream out(report);
          if (store) {
            out << "opened: v" << store->show("p")->info.number;
            return 1;
          }
          out << error_kind_name(store.error().kind) << ": " << store.error().message;
          return 0;
        },
        kNobody);
    const std::string message = read_text(report);
    INFO(message);
    CHECK(code == 0);
    CHECK(message.find(fmt::format("cannot open policy store `{}`: it has a write-ahead log `{}-wal` (", layout.db,
                                   layout.db)) != std::string::npos);
    CHECK(message.find("open the store once where it is writable") != std::string::npos);
    CHECK(entries(layout.store_dir) == before);
  }
}

}  // namespace
}  // namespace gov::store
