// Security tests of file I/O: atomic rewrites by `gov fmt`, read errors reported by every
// reader (an LD_PRELOAD shim fails reads with EIO), FIFOs refused, bounded resources.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "compiler/diagnostics/atomic_write.hpp"
#include "compiler/diagnostics/source_file.hpp"
#include "runtime/trace/trace_file.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using gov::test::read_text;
using gov::test::repo_path;
using gov::test::write_text;

namespace {

/// A fresh directory under /tmp, removed with everything in it.
struct Scratch {
  fs::path root;
  Scratch() {
    static int counter = 0;
    root = fs::temp_directory_path() / fmt::format("gov-sec-io-{}-{}", ::getpid(), counter++);
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
  std::string path(const std::string& name) const { return (root / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    fs::create_directories((root / name).parent_path());
    write_text(path(name), text);
    return path(name);
  }
};

struct Shell {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `script` with /bin/sh in the repository root; `gov` names the binary under test.
/// `timeout` only keeps a regression from hanging the suite (a blocked open fails the test
/// with exit 124); no assertion depends on time.
Shell run_shell(const std::string& script) {
  static int counter = 0;
  const fs::path err_path =
      fs::temp_directory_path() / fmt::format("gov-sec-io-stderr-{}-{}.txt", ::getpid(), counter++);
  const std::string command = fmt::format(
      "cd '{}' && export gov='{}' && ASAN_OPTIONS=verify_asan_link_order=0 timeout 60 sh -c '{}' 2>'{}'", GOV_SOURCE_DIR,
      GOV_BINARY, script, err_path.string());
  Shell result;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_path.string());
  fs::remove(err_path);
  return result;
}

/// A valid policy (the workshop's, with the shipped catalog beside it) padded with comments
/// to `padding` bytes before its teams, so that a read failing early loses real content.
std::string write_policy(const Scratch& scratch, size_t padding = 0) {
  scratch.write("p/catalog/aws-ml.gov", read_text(repo_path("policies/catalog/aws-ml.gov")));
  std::string text = read_text(repo_path("policies/examples/workshop-g5.gov"));
  text.replace(text.find("../catalog/"), 3, "");  // the catalog beside it, under the policy's root
  std::string pad;
  while (pad.size() < padding) pad += "# padding so that the teams come after the first reads of the file\n";
  const size_t teams = text.find("# Team-A-Quota-Allocation");
  text.insert(teams, pad);
  return scratch.write("p/policy.gov", text);
}

/// An unformatted but valid policy: `gov fmt` rewrites it.
const char* kUnformatted = "policy {   idle-compute = fair-share }\n";

mode_t mode_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

size_t entries_in(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

// ------------------------------------------------------------------ atomic writes (4b, 6)

TEST_CASE("gov fmt does not follow a symbolic link planted at its old temporary name", "[security][io]") {
  Scratch scratch;
  const std::string policy = scratch.write("a.gov", kUnformatted);
  const std::string victim = scratch.write("victim.txt", "precious\n");
  fs::create_symlink(victim, policy + ".gov-fmt.tmp");
  const Shell r = run_shell(fmt::format("\"$gov\" fmt {}", policy));
  CHECK(r.exit_code == 0);
  CHECK(read_text(victim) == "precious\n");
  CHECK(fs::is_symlink(policy + ".gov-fmt.tmp"));
  CHECK(read_text(policy) != kUnformatted);  // it was formatted
}

TEST_CASE("gov fmt keeps a 0600 policy 0600", "[security][io]") {
  Scratch scratch;
  const std::string policy = scratch.write("a.gov", kUnformatted);
  REQUIRE(::chmod(policy.c_str(), 0600) == 0);
  const Shell r = run_shell(fmt::format("umask 022 && \"$gov\" fmt {}", policy));
  CHECK(r.exit_code == 0);
  CHECK(read_text(policy) != kUnformatted);
  CHECK(mode_of(policy) == 0600);
  CHECK(entries_in(scratch.root) == 1);  // no temporary file left behind
}

TEST_CASE("gov fmt on a full disk fails with exit 2 and leaves the policy byte-identical", "[security][io]") {
  Scratch scratch;
  const std::string policy = scratch.write("a.gov", kUnformatted);
  // A file size limit of 0 makes every write fail with EFBIG, as a full disk fails them; with
  // SIGXFSZ ignored the process sees the error instead of being killed. Its stderr goes to the
  // pipe (a file could not be written either); the exit status is echoed after the limit ends.
  const Shell r =
      run_shell(fmt::format("(trap \"\" XFSZ; ulimit -f 0; exec \"$gov\" fmt {} 2>&1); echo \"exit $?\"", policy));
  CHECK(r.out.find("exit 2") != std::string::npos);
  CHECK(r.out.find(fmt::format("error: cannot write `{}`: write failed: File too large", policy)) != std::string::npos);
  CHECK(read_text(policy) == kUnformatted);
  CHECK(entries_in(scratch.root) == 1);  // the temporary file was removed
}

TEST_CASE("gov fmt keeps the owner and group of a policy when it may", "[security][io]") {
  if (::geteuid() != 0) return;  // only root may give a file to another user
  Scratch scratch;
  const std::string policy = scratch.write("a.gov", kUnformatted);
  REQUIRE(::chown(policy.c_str(), 65534, 65534) == 0);
  REQUIRE(::chmod(policy.c_str(), 0640) == 0);
  const Shell r = run_shell(fmt::format("\"$gov\" fmt {}", policy));
  CHECK(r.exit_code == 0);
  struct stat info {};
  REQUIRE(::stat(policy.c_str(), &info) == 0);
  CHECK(info.st_uid == 65534u);
  CHECK(info.st_gid == 65534u);
  CHECK((info.st_mode & 07777) == 0640u);
  CHECK(read_text(policy) != kUnformatted);
}

TEST_CASE("write_file_atomically replaces the file a symbolic link points to and keeps the link", "[security][io]") {
  Scratch scratch;
  const std::string target = scratch.write("real.gov", "old\n");
  REQUIRE(::chmod(target.c_str(), 0640) == 0);
  fs::create_symlink("real.gov", scratch.root / "link.gov");
  std::string error;
  REQUIRE(gov::write_file_atomically(scratch.path("link.gov"), "new\n", error));
  CHECK(fs::is_symlink(scratch.root / "link.gov"));
  CHECK(read_text(target) == "new\n");
  CHECK(mode_of(target) == 0640);
  CHECK(entries_in(scratch.root) == 2);
}

// `gov export hyperpod --out DIR` writes names gov picks into a directory that may be shared: a
// link planted at `apply.sh` overwrote the file it pointed to and made it executable.
TEST_CASE("write_file_atomically not following links replaces a planted link and leaves its target alone",
          "[security][io]") {
  Scratch scratch;
  const std::string victim = scratch.write("victim.txt", "precious\n");
  REQUIRE(::chmod(victim.c_str(), 0644) == 0);
  fs::create_symlink("victim.txt", scratch.root / "apply.sh");
  gov::AtomicWriteOptions options;
  options.follow_link = false;
  options.mode = 0755;
  std::string error;
  REQUIRE(gov::write_file_atomically(scratch.path("apply.sh"), "#!/bin/sh\n", error, options));
  CHECK_FALSE(fs::is_symlink(scratch.root / "apply.sh"));
  CHECK(read_text(scratch.path("apply.sh")) == "#!/bin/sh\n");
  CHECK(mode_of(scratch.path("apply.sh")) == 0755);
  CHECK(read_text(victim) == "precious\n");
  CHECK(mode_of(victim) == 0644);
  // A file there keeps nothing of itself: the new one has the mode asked for.
  const std::string planted = scratch.write("plan.json", "{}\n");
  REQUIRE(::chmod(planted.c_str(), 0666) == 0);
  options.mode = 0644;
  REQUIRE(gov::write_file_atomically(planted, "[]\n", error, options));
  CHECK(mode_of(planted) == 0644);
  CHECK(read_text(planted) == "[]\n");
}

TEST_CASE("write_file_atomically reports a directory it cannot write into", "[security][io]") {
  if (::geteuid() == 0) return;  // root writes anywhere
  Scratch scratch;
  const std::string policy = scratch.write("ro/a.gov", "old\n");
  REQUIRE(::chmod(scratch.path("ro").c_str(), 0500) == 0);
  std::string error;
  CHECK_FALSE(gov::write_file_atomically(policy, "new\n", error));
  CHECK(error.find("cannot create a temporary file in") != std::string::npos);
  CHECK(read_text(policy) == "old\n");
  ::chmod(scratch.path("ro").c_str(), 0700);
}

// ------------------------------------------------------------------ read errors (7)

namespace {

/// `command` with reads of files ending in `file` failing with EIO after `after` bytes.
std::string with_eio(const std::string& file, size_t after, const std::string& command) {
  return fmt::format("GOV_EIO_PATH={} GOV_EIO_AFTER={} LD_PRELOAD={} {}", file, after, GOV_EIO_SHIM, command);
}

}  // namespace

TEST_CASE("the EIO shim fails reads of the named file only", "[security][io]") {
  Scratch scratch;
  const std::string policy = write_policy(scratch);
  const Shell clean = run_shell(with_eio("/nothing-matches.gov", 0, fmt::format("\"$gov\" check {}", policy)));
  CHECK(clean.exit_code == 0);
  const Shell failing = run_shell(with_eio("/p/policy.gov", 0, fmt::format("cat {} >/dev/null", policy)));
  CHECK(failing.exit_code != 0);
}

TEST_CASE("a read error in the middle of a policy fails gov check with exit 2", "[security][io]") {
  Scratch scratch;
  const std::string policy = write_policy(scratch, 100'000);
  const Shell r = run_shell(with_eio("/p/policy.gov", 65536, fmt::format("\"$gov\" check {}", policy)));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(fmt::format("error: cannot read `{}`: read failed after 65536 bytes: Input/output error", policy)) !=
        std::string::npos);
}

TEST_CASE("a read error in the middle of a policy fails gov apply with exit 2 and stores nothing", "[security][io]") {
  Scratch scratch;
  const std::string policy = write_policy(scratch, 100'000);
  const std::string db = scratch.path("store.db");
  const Shell r = run_shell(with_eio("/p/policy.gov", 65536, fmt::format("\"$gov\" apply --db {} {}", db, policy)));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("read failed after 65536 bytes: Input/output error") != std::string::npos);
  const Shell log = run_shell(fmt::format("\"$gov\" log --db {}", db));
  CHECK(log.out.find("1") == std::string::npos);  // no version 1
  // The same file without the fault is stored: the failure above was the read error.
  CHECK(run_shell(fmt::format("\"$gov\" apply --db {} {}", db, policy)).exit_code == 0);
}

TEST_CASE("a read error in an imported file is reported and nothing is stored", "[security][io]") {
  Scratch scratch;
  const std::string policy = write_policy(scratch);
  const std::string db = scratch.path("store.db");
  const Shell r = run_shell(with_eio("/catalog/aws-ml.gov", 4096, fmt::format("\"$gov\" apply --db {} {}", db, policy)));
  CHECK(r.exit_code != 0);
  CHECK(r.err.find(fmt::format("cannot import `{}`: read failed after 4096 bytes: Input/output error",
                               scratch.path("p/catalog/aws-ml.gov"))) != std::string::npos);
  CHECK(run_shell(fmt::format("\"$gov\" log --db {}", db)).out.find("1") == std::string::npos);
}

TEST_CASE("read_text_fd reads a file from its offset and leaves the descriptor open", "[security][io]") {
  Scratch scratch;
  const std::string path = scratch.write("a.txt", "hello, world");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::lseek(fd, 7, SEEK_SET) == 7);
  std::string error;
  std::optional<std::string> text = gov::read_text_fd(fd, 100, error);
  REQUIRE(text);
  CHECK(*text == "world");
  CHECK(::lseek(fd, 0, SEEK_SET) == 0);  // still open
  CHECK_FALSE(gov::read_text_fd(fd, 5, error));
  CHECK(error == "file is 12 bytes; gov reads at most 5 bytes");
  ::close(fd);
}

// ------------------------------------------------------------------ FIFOs (13)

TEST_CASE("a FIFO as a policy or an import is refused without blocking", "[security][io]") {
  Scratch scratch;
  const std::string fifo = scratch.path("fifo.gov");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Shell entry = run_shell(fmt::format("\"$gov\" check {}", fifo));
  CHECK(entry.exit_code == 2);
  CHECK(entry.err.find(fmt::format("error: cannot read `{}`: not a regular file (a FIFO)", fifo)) != std::string::npos);
  const std::string importer = scratch.write("main.gov", "import \"fifo.gov\"\n");
  const Shell import = run_shell(fmt::format("\"$gov\" check {}", importer));
  CHECK(import.exit_code == 1);
  CHECK(import.err.find(fmt::format("cannot import `{}`: not a regular file (a FIFO)", fifo)) != std::string::npos);
  const Shell format = run_shell(fmt::format("\"$gov\" fmt {}", fifo));
  CHECK(format.exit_code == 2);
  CHECK(format.err.find("not a regular file (a FIFO)") != std::string::npos);
  // In process too, in a child: a reader that blocks is killed by the alarm instead of hanging
  // the suite (exit 1: refused with the right message; anything else fails).
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::alarm(60);
    std::string error;
    const bool refused = !gov::read_text_file(fifo, 100, error) && error == "not a regular file (a FIFO)";
    ::_exit(refused ? 1 : 0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
}

// ------------------------------------------------------------------ traces (7, 13, 15a)

namespace {

/// The workshop policy beside its catalog, and a valid trace of `events` submits padded with
/// `pad` spaces each (so that a fault offset lands in the middle of the events).
struct TraceSetup {
  Scratch scratch;
  std::string policy;
  std::string trace;
  explicit TraceSetup(size_t events, size_t pad = 0) {
    policy = write_policy(scratch);
    std::string text = "{\"events\": [\n";
    for (size_t i = 0; i < events; ++i) {
      text += fmt::format("{}{{\"at\": {}, \"submit\": {{\"id\": \"t{}\", \"team\": \"team-a\", "
                          "\"instance_type\": \"ml.g5.8xlarge\", \"gpus\": 1, \"duration\": 1}}{}}}\n",
                          i == 0 ? "" : ",", i, i, std::string(pad, ' '));
    }
    text += "]}\n";
    trace = scratch.write("t/trace.json", text);
  }
};

}  // namespace

TEST_CASE("a read error in a trace fails gov simulate with exit 2 and no decisions", "[security][io]") {
  TraceSetup setup(200, 1000);  // about 280 KB
  const Shell clean = run_shell(fmt::format("\"$gov\" simulate {} --trace {}", setup.policy, setup.trace));
  REQUIRE(clean.exit_code == 0);
  REQUIRE(!clean.out.empty());
  for (size_t after : {size_t{0}, size_t{65536}, size_t{200'000}}) {
    const Shell r = run_shell(
        with_eio("/t/trace.json", after, fmt::format("\"$gov\" simulate {} --trace {}", setup.policy, setup.trace)));
    INFO(after << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(fmt::format("error: cannot read `{}`: read failed after {} bytes: Input/output error",
                                 setup.trace, after)) != std::string::npos);
    CHECK(r.out.empty());  // nothing of a trace that could not be read is simulated
  }
}

TEST_CASE("a FIFO as a trace, a task or a state file is refused without blocking", "[security][io]") {
  TraceSetup setup(1);
  const std::string fifo = setup.scratch.path("fifo.json");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Shell trace = run_shell(fmt::format("\"$gov\" simulate {} --trace {}", setup.policy, fifo));
  CHECK(trace.exit_code == 2);
  CHECK(trace.err.find(fmt::format("error: cannot read `{}`: not a regular file (a FIFO)", fifo)) != std::string::npos);
  const Shell task = run_shell(fmt::format("\"$gov\" eval {} --task {}", setup.policy, fifo));
  CHECK(task.exit_code == 2);
  CHECK(task.err.find(fmt::format("error: cannot read `{}`: not a regular file (a FIFO)", fifo)) != std::string::npos);
}

TEST_CASE("a read error in a task or state file fails gov eval with exit 2", "[security][io]") {
  TraceSetup setup(1);
  const std::string task = setup.scratch.write("task.json", "{\"id\": \"x\", \"team\": \"team-a\", \"gpus\": 1}" +
                                                                std::string(100'000, ' ') + "\n");
  const Shell r = run_shell(with_eio("/task.json", 4096, fmt::format("\"$gov\" eval {} --task {}", setup.policy, task)));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(fmt::format("error: cannot read `{}`: read failed after 4096 bytes: Input/output error", task)) !=
        std::string::npos);
}

TEST_CASE("reading a 256 MiB whitespace trace keeps resident memory far below the file size", "[security][io]") {
  TraceSetup setup(1);
  const std::string big = setup.scratch.path("blank.json");
  {
    FILE* out = std::fopen(big.c_str(), "wb");
    REQUIRE(out != nullptr);
    std::fputs("{\"events\": [", out);
    const std::string spaces(1 << 20, ' ');
    for (int i = 0; i < 256; ++i) REQUIRE(std::fwrite(spaces.data(), 1, spaces.size(), out) == spaces.size());
    std::fputs("]}\n", out);
    REQUIRE(std::fclose(out) == 0);
  }
  // The child's peak resident set, from wait4. Linux keeps the high-water mark of the memory
  // the child had before exec (a copy of this process's), so the number is exact only when this
  // process is small: CTest runs each test case in a process of its own, as tools/test does.
  // Run inside a long `gov_tests` invocation it can exceed the bound without gov using more.
  const auto peak_mib_of = [&](const std::string& trace) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::execl(GOV_BINARY, GOV_BINARY, "simulate", setup.policy.c_str(), "--trace", trace.c_str(), "--engine",
              "interp", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    struct rusage usage {};
    REQUIRE(::wait4(child, &status, 0, &usage) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    return usage.ru_maxrss / 1024;  // ru_maxrss is in KiB on Linux
  };
  // Against the same command on an empty trace: what the file adds, whatever the build's own
  // footprint (a sanitizer build's gov takes about 170 MiB before reading anything).
  const std::string empty = setup.scratch.path("empty.json");
  {
    FILE* out = std::fopen(empty.c_str(), "wb");
    REQUIRE(out != nullptr);
    std::fputs("{\"events\": []}\n", out);
    REQUIRE(std::fclose(out) == 0);
  }
  const long baseline_mib = peak_mib_of(empty);
  const long peak_mib = peak_mib_of(big);
  INFO("peak resident set: " << peak_mib << " MiB for a 256 MiB trace, " << baseline_mib << " MiB for an empty one");
  CHECK(peak_mib - baseline_mib < 64);  // measured: no growth; a mapped file kept all 256 MiB (and more) resident
}

TEST_CASE("a trace file truncated while it is read is an error not a SIGBUS", "[security][io]") {
  Scratch scratch;
  const std::string path = scratch.write("t.json", std::string(3 << 20, ' '));
  gov::support::Expected<gov::trace::TraceFile> file = gov::trace::TraceFile::open(path, size_t{1} << 30);
  REQUIRE(file);
  CHECK(file->fill(1, 0) >= 1);
  // Another process truncates the file: a mapping of it would raise SIGBUS on the next page.
  REQUIRE(::truncate(path.c_str(), 0) == 0);
  CHECK(file->fill(3 << 20, 0) == gov::trace::TraceFile::kChunkBytes);
  REQUIRE(file->error());
  CHECK(*file->error() == fmt::format("the file ended after {} bytes while it was read; it had {} bytes",
                                      gov::trace::TraceFile::kChunkBytes, 3 << 20));
}
