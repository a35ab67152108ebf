// Issue 26, points 2, 3, 8, 9, 12 and 13: what a policy may read, and how a stored version is
// loaded. No file outside the policy root is ever read, whatever the working directory, the
// symbolic links or a race; a stored version is checked from memory against its content hash.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "compiler/check/program.hpp"
#include "compiler/check/sources.hpp"
#include "compiler/diagnostics/codes.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/driver/driver.hpp"
#include "runtime/store/store.hpp"
#include "tests/security/security_support.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using gov::check::Program;
using gov::test::exec_sql;
using gov::test::Scratch;

namespace {

std::vector<std::string> codes_of(const Program& program) {
  std::vector<std::string> codes;
  for (const gov::Diagnostic& d : program.diagnostics.items()) codes.emplace_back(gov::code_info(d.code).id);
  return codes;
}

bool has_code(const Program& program, const std::string& code) {
  const auto codes = codes_of(program);
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

/// Runs `body` in a forked child (so it may chdir, or hang, without harming the test
/// process); returns the child's exit status, or -1 when it was killed (SIGALRM after
/// `seconds`: a hang).
template <class Body>
int in_child(Body body, unsigned seconds = 60) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(seconds);
    ::_exit(body());
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Runs a shell command; returns its exit status and what it printed on both streams.
std::pair<int, std::string> shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

const char* const kPolicy =
    "import \"catalog.gov\"\n"
    "cluster c {\n  catalog = small\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
    "policy {\n  task-prioritization = fcfs\n  idle-compute = fcfs\n}\n"
    "team team-a {\n  quota ml.g5.8xlarge { instances = 2 }\n}\n";
const char* const kCatalog =
    "catalog small {\n  instance ml.g5.8xlarge { accelerator = nvidia-a10g, gpus = 1, vcpus = 32, memory = 128 GiB }\n}\n";

const char* const kTrace =
    "{\"events\": [{\"at\": 0, \"submit\": {\"id\": \"a1\", \"team\": \"team-a\", "
    "\"instance_type\": \"ml.g5.8xlarge\", \"gpus\": 1}}]}\n";

/// `gov simulate` of a one-task trace against the store `db`.
gov::test::CommandResult simulate(const Scratch& dir, const std::string& db) {
  const std::string trace = dir.write("trace.json", kTrace);
  return gov::test::run_gov("simulate --trace '" + trace + "' --db '" + db + "'");
}

/// A store at `dir/store.db` with the policy applied once.
std::string applied_store(const Scratch& dir) {
  const std::string entry = dir.write("pol/policy.gov", kPolicy);
  dir.write("pol/catalog.gov", kCatalog);
  const std::string db = (dir.path / "store.db").string();
  const auto result = gov::test::run_gov("apply '" + entry + "' --db '" + db + "'");
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  return db;
}

}  // namespace

TEST_CASE("the policy root: gov.toml, else the git work tree, else the entry's directory", "[security][loader]") {
  Scratch dir("root");
  const std::string entry = dir.write("repo/teams/a/policy.gov", "");
  std::string error;
  CHECK(gov::check::find_policy_root(entry, error) == (dir.path / "repo/teams/a").string());
  fs::create_directories(dir.path / "repo/.git");
  CHECK(gov::check::find_policy_root(entry, error) == (dir.path / "repo").string());
  dir.write("repo/teams/gov.toml", "");
  CHECK(gov::check::find_policy_root(entry, error) == (dir.path / "repo/teams").string());
  CHECK_FALSE(gov::check::find_policy_root((dir.path / "missing.gov").string(), error));
  CHECK(error.find("No such file") != std::string::npos);
}

TEST_CASE("imports resolve from the importing file whatever the working directory", "[security][loader]") {
  Scratch dir("cwd");
  dir.write("gov.toml", "");
  dir.write("catalog/small.gov", kCatalog);
  const std::string entry = dir.write("examples/policy.gov", std::string("import \"../catalog/small.gov\"\n") +
                                                                 (kPolicy + std::string(kPolicy).find('\n') + 1));
  fs::create_directories(dir.path / "elsewhere");
  const int status = in_child([&] {
    if (::chdir((dir.path / "elsewhere").c_str()) != 0) return 10;
    const Program program = gov::test::program_from_file(entry);
    if (program.read_failed || program.diagnostics.has_errors()) return 11;
    return program.files.size() == 2 && program.files[1].logical_path == "catalog/small.gov" ? 0 : 12;
  });
  CHECK(status == 0);
}

TEST_CASE("a deleted working directory or / as working directory lets no import out", "[security][loader]") {
  Scratch dir("deleted-cwd");
  const std::string entry = dir.write("p/policy.gov",
                                      "import \"../../../../../../../../etc/hostname\"\nimport \"/etc/hostname\"\n");
  fs::create_directories(dir.path / "gone");
  const auto both_refused = [&] {
    const Program program = gov::test::program_from_file(entry);
    if (program.read_failed) return 20;
    const auto codes = codes_of(program);
    return codes == std::vector<std::string>{"E0208", "E0208"} && program.files.size() == 1 ? 0 : 21;
  };
  CHECK(in_child([&] {
          if (::chdir((dir.path / "gone").c_str()) != 0 || ::rmdir((dir.path / "gone").c_str()) != 0) return 10;
          return both_refused();
        }) == 0);
  CHECK(in_child([&] { return ::chdir("/") == 0 ? both_refused() : 10; }) == 0);
}

TEST_CASE("a symbolic link under the root that leads out of it is refused", "[security][loader]") {
  Scratch dir("symlink");
  Scratch outside("outside");
  outside.write("secret.gov", "team stolen { }\n");
  const std::string entry = dir.write("policy.gov", "import \"lib/link.gov\"\n");
  fs::create_directories(dir.path / "lib");
  fs::create_symlink(outside.path / "secret.gov", dir.path / "lib/link.gov");
  const Program program = gov::test::program_from_file(entry);
  CHECK(codes_of(program) == std::vector<std::string>{"E0208"});
  CHECK(program.files.size() == 1);
  // A link that stays under the root is followed, and the file is known by its real path.
  dir.write("real/ok.gov", "");
  fs::create_symlink(dir.path / "real/ok.gov", dir.path / "lib/inside.gov");
  const std::string inside = dir.write("inside.gov", "import \"lib/inside.gov\"\nimport \"real/ok.gov\"\n");
  const Program followed = gov::test::program_from_file(inside);
  CHECK_FALSE(followed.diagnostics.has_errors());
  REQUIRE(followed.files.size() == 2);
  CHECK(followed.files[1].logical_path == "real/ok.gov");
}

// The root is looked for from the directory that names the entry, not from where a link leads:
// else a link in a repository (a pull request's) to any file brings that file's directory as its
// own root, and a directory walk in CI prints the file and `gov fmt` rewrites it.
TEST_CASE("an entry file that is a symbolic link out of its root is neither read nor rewritten",
          "[security][loader]") {
  Scratch repo("entry-link");
  Scratch outside("entry-target");
  repo.write("gov.toml", "");
  const std::string secret = outside.write("secret.txt", "team x {\n  quota a { k = SECRET_TOKEN }\n}\n");
  const std::string target = outside.write("ok.gov", "team  x { quota ml.g5.8xlarge { instances = 1 } }\n");
  fs::create_symlink(secret, repo.path / "s.gov");
  fs::create_symlink(target, repo.path / "s2.gov");
  for (const std::string command : {"check", "lint --format github", "fmt", "fmt --check"}) {
    INFO(command);
    const auto result = gov::test::run_gov(command + " '" + repo.path.string() + "'");
    CHECK(result.exit_code == 2);
    CHECK(result.out.find("SECRET_TOKEN") == std::string::npos);
    CHECK(result.err.find("SECRET_TOKEN") == std::string::npos);
    CHECK(result.err.find("is a symbolic link to `" + secret + "`, outside the policy root") != std::string::npos);
  }
  CHECK(gov::test::read_text(target) == "team  x { quota ml.g5.8xlarge { instances = 1 } }\n");
  // A link that stays under the root is read, and `gov fmt` formats the file it leads to.
  const std::string inside = repo.write("real/in.gov", "team  y { quota ml.g5.8xlarge { instances = 1 } }\n");
  fs::create_symlink(inside, repo.path / "real/link.gov");
  const auto formatted = gov::test::run_gov("fmt '" + (repo / "real/link.gov") + "'");
  INFO(formatted.err);
  CHECK(formatted.exit_code == 0);
  CHECK(gov::test::read_text(inside) == "team y {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n");
  CHECK(fs::is_symlink(repo.path / "real/link.gov"));
}

TEST_CASE("a symbolic link loop is reported as a loop", "[security][loader]") {
  Scratch dir("loop");
  const std::string entry = dir.write("policy.gov", "import \"a.gov\"\n");
  fs::create_symlink(dir.path / "b.gov", dir.path / "a.gov");
  fs::create_symlink(dir.path / "a.gov", dir.path / "b.gov");
  const Program program = gov::test::program_from_file(entry);
  REQUIRE(program.diagnostics.items().size() == 1);
  CHECK(program.diagnostics.items()[0].message.find("symbolic link loop") != std::string::npos);
  CHECK(codes_of(program) == std::vector<std::string>{"E0201"});
}

TEST_CASE("a link swapped between inside and outside the root never lets the outside file in",
          "[security][loader]") {
  // The old loader checked a canonical path, then opened the file by name again: a process
  // swapping a link in between won 46 of 600 tries. The check is now on the opened file.
  Scratch dir("race");
  Scratch outside("race-outside");
  outside.write("secret.gov", "team stolen { }\n");
  dir.write("safe.gov", "team safe { }\n");
  const std::string entry = dir.write("policy.gov", "import \"link.gov\"\n");
  const fs::path link = dir.path / "link.gov", staging = dir.path / "staging.gov";
  fs::create_symlink(dir.path / "safe.gov", link);
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    for (bool out = true; !stop.load(); out = !out) {
      std::error_code ec;
      fs::remove(staging, ec);
      fs::create_symlink(out ? outside.path / "secret.gov" : dir.path / "safe.gov", staging, ec);
      fs::rename(staging, link, ec);  // atomic replacement of the link
    }
  });
  int escaped = 0, inside = 0, refused = 0;
  for (int i = 0; i < 2000; ++i) {
    const Program program = gov::test::program_from_file(entry);
    if (program.files.size() == 2 && program.sources.get(program.files[1].source).text().find("stolen") !=
                                         std::string::npos) {
      ++escaped;
    } else if (program.files.size() == 2) {
      ++inside;
    } else if (has_code(program, "E0208")) {
      ++refused;
    }
  }
  stop = true;
  swapper.join();
  INFO("inside " << inside << ", refused " << refused);
  CHECK(escaped == 0);
  CHECK(inside + refused > 0);
}

TEST_CASE("a FIFO as entry file or import is refused without waiting for a writer", "[security][loader]") {
  Scratch dir("fifo");
  REQUIRE(::mkfifo((dir.path / "pipe.gov").c_str(), 0600) == 0);
  const std::string entry = dir.write("policy.gov", "import \"pipe.gov\"\n");
  // In a child with an alarm: before the fix, opening the FIFO blocked forever.
  CHECK(in_child([&] {
          const Program program = gov::test::program_from_file(entry);
          if (program.diagnostics.items().size() != 1) return 20;
          return program.diagnostics.items()[0].message.find("not a regular file (a FIFO)") != std::string::npos ? 0
                                                                                                                : 21;
        },
                 20) == 0);
  CHECK(in_child([&] {
          const Program program = gov::test::program_from_file((dir.path / "pipe.gov").string());
          return program.read_failed && program.read_error.find("a FIFO") != std::string::npos ? 0 : 20;
        },
                 20) == 0);
  const auto cli = gov::test::run_gov("check '" + (dir.path / "pipe.gov").string() + "'");
  CHECK(cli.exit_code == 2);
  CHECK(cli.err.find("not a regular file (a FIFO)") != std::string::npos);
}

TEST_CASE("imports are bounded in number, with one diagnostic", "[security][loader]") {
  Scratch dir("many");
  std::string entry_text;
  for (size_t i = 0; i < gov::check::kMaxProgramFiles + 5; ++i) {
    dir.write("f/" + std::to_string(i) + ".gov", "");
    entry_text += "import \"f/" + std::to_string(i) + ".gov\"\n";
  }
  // The same file imported many times is read once and costs a hash lookup per import.
  for (int i = 0; i < 50'000; ++i) entry_text += "import \"f/0.gov\"\n";
  const std::string entry = dir.write("policy.gov", entry_text);
  const Program program = gov::test::program_from_file(entry);
  CHECK(program.files.size() == gov::check::kMaxProgramFiles);
  CHECK(codes_of(program) == std::vector<std::string>{"E0006"});
  CHECK(program.diagnostics.items()[0].message == "a policy reads at most 1000 files");
}

TEST_CASE("logical paths: normalised, relative, never above the root", "[security][loader]") {
  using gov::check::normalise_logical_path;
  CHECK(normalise_logical_path("a/./b/../c.gov") == "a/c.gov");
  CHECK(normalise_logical_path("a//c.gov") == "a/c.gov");
  CHECK_FALSE(normalise_logical_path("../x.gov"));
  CHECK_FALSE(normalise_logical_path("a/../../x.gov"));
  CHECK_FALSE(normalise_logical_path("/etc/passwd"));
  CHECK_FALSE(normalise_logical_path(std::string("a\0b", 3)));
  CHECK_FALSE(normalise_logical_path(""));
  CHECK_FALSE(normalise_logical_path(std::string(2000, 'a')));
}

TEST_CASE("stored paths are validated when written and when read", "[security][loader][store]") {
  using gov::store::file_path_problem;
  CHECK_FALSE(file_path_problem("policies/examples/p.gov"));
  for (const std::string bad : {"../../x/owned.sh", "/etc/x", "a/../b", "./a", "a//b", "", "a\nb", "a\\b"}) {
    INFO(bad);
    CHECK(file_path_problem(bad));
  }
  CHECK(file_path_problem(std::string("a\0b", 3)));
}

TEST_CASE("a stored path leading out of the store's directory writes nothing and is refused", "[security][loader]") {
  Scratch dir("stored-path");
  const std::string db = applied_store(dir);
  // What anyone who can write the file can do: the triggers are not a protection.
  exec_sql(db,
           "DROP TRIGGER version_file_immutable; "
           "UPDATE version_file SET path = '../../x/owned.sh' WHERE ordinal = 1;");
  const fs::path planted = fs::temp_directory_path() / ".." / "x" / "owned.sh";
  const std::string trace = dir.write("trace.json", kTrace);
  for (const std::string& command : std::vector<std::string>{"show --inspect", "simulate --trace '" + trace + "'", "diff 1 1"}) {
    INFO(command);
    const auto result = gov::test::run_gov(command + " --db '" + db + "'");
    CHECK(result.exit_code != 0);
    CHECK(result.err.find("invalid file: file path \"../../x/owned.sh\"") != std::string::npos);
  }
  auto store = gov::store::Store::open(db);
  REQUIRE(store.ok());
  auto loaded = gov::driver::load(gov::driver::Source::stored(store.value(), "policy"),
                                  gov::driver::Request::running(gov::driver::BackEnd::interpreter));
  REQUIRE(loaded.error);
  CHECK(loaded.error->message.find("\"../../x/owned.sh\"") != std::string::npos);
  CHECK_FALSE(fs::exists(planted));
  CHECK_FALSE(fs::exists("/x/owned.sh"));
  // Even a Version built by hand (not read through the store) is checked in memory only.
  gov::store::Version version;
  version.files = {{"policy.gov", kPolicy}, {"../../x/owned.sh", kCatalog}};
  version.info.content_sha256 = gov::store::content_hash(version.files);
  const gov::driver::Result checked = gov::driver::load(gov::driver::Source::version(version));
  REQUIRE(checked.error);
  const std::string& why = checked.error->message;
  CHECK(why.find("not a plain relative path: \"../../x/owned.sh\"") != std::string::npos);
  CHECK_FALSE(fs::exists(planted));
}

TEST_CASE("a version applied from another directory loads again", "[security][loader]") {
  Scratch dir("apply-elsewhere");
  dir.write("pol/policy.gov", kPolicy);
  dir.write("pol/catalog.gov", kCatalog);
  fs::create_directories(dir.path / "work");
  const std::string db = (dir.path / "store.db").string();
  const std::string cd = "cd '" + (dir.path / "work").string() + "' && '" + GOV_BINARY + "' ";
  const auto run = [&](const std::string& args) { return shell(cd + args + " --db '" + db + "'"); };
  const auto [applied, apply_out] = run("apply ../pol/policy.gov");
  INFO(apply_out);
  REQUIRE(applied == 0);
  const auto [shown, show_out] = run("show --inspect");
  INFO(show_out);
  CHECK(shown == 0);
  CHECK(show_out.find("files   policy.gov catalog.gov") != std::string::npos);
  CHECK(show_out.find("team-a") != std::string::npos);
}

TEST_CASE("a changed byte of stored source is refused, naming the cause", "[security][loader]") {
  Scratch dir("content-hash");
  const std::string db = applied_store(dir);
  exec_sql(db, "UPDATE source SET text = CAST(replace(CAST(text AS TEXT), 'instances = 2', 'instances = 3') AS BLOB);");
  const auto result = gov::test::run_gov("show --inspect --db '" + db + "'");
  CHECK(result.exit_code != 0);
  CHECK(result.err.find("do not match its recorded content hash") != std::string::npos);
  CHECK(result.err.find("changed outside gov") != std::string::npos);
  const auto simulated = simulate(dir, db);
  CHECK(simulated.exit_code == 1);  // as show: the store opened, a version in it is refused
  CHECK(simulated.err.find("do not match its recorded content hash") != std::string::npos);
  // The store's fault, not the policy's (an embedding helper's finding: controllers saw
  // ErrorCode::policy, which docs/embedding.md keeps for a policy with errors).
  auto store = gov::store::Store::open(db);
  REQUIRE(store.ok());
  const gov::driver::Result loaded = gov::driver::load(gov::driver::Source::stored(store.value(), "policy"),
                                                       gov::driver::Request::up_to(gov::driver::Stage::check));
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error->kind == gov::support::ErrorKind::store);
}

TEST_CASE("a damaged cached object is not used, and the reason is named", "[security][loader]") {
  Scratch dir("object");
  const std::string db = applied_store(dir);
  exec_sql(db, "UPDATE object SET bytes = zeroblob(64);");
  const auto result = simulate(dir, db);
  INFO(result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.err.find("loaded cached native code") == std::string::npos);
  // Unsigned, so no object is even read (signed versions: tests/security/signing_test.cpp,
  // where a changed object refuses the load).
  CHECK(result.err.find("stored native code not run: no verify key configured") != std::string::npos);
}

TEST_CASE("loading a stored version writes no temporary file", "[security][loader]") {
  // The old loader wrote the version's files under $TMPDIR/gov-version-<pid>-<version>-<n>, a
  // predictable name (a planted symlink redirected the writes), or, when $TMPDIR was no
  // directory, under the working directory. With $TMPDIR a plain file and the working
  // directory deleted, nothing can be created: every command that loads a version still works.
  Scratch dir("no-temp");
  const std::string db = applied_store(dir);
  const std::string not_a_directory = dir.write("tmp-is-a-file", "");
  const std::string trace = dir.write("trace.json", kTrace);
  for (const std::string& command : std::vector<std::string>{"show --inspect", "diff 1 1", "simulate --trace '" + trace + "'"}) {
    INFO(command);
    const std::string gone = (dir.path / "gone").string();
    fs::create_directories(gone);
    const auto [status, output] = shell("cd '" + gone + "' && rmdir '" + gone + "' && TMPDIR='" + not_a_directory +
                                        "' '" + GOV_BINARY + "' " + command + " --db '" + db + "'");
    INFO(output);
    CHECK(status == 0);
  }
}
