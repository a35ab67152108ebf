// Issue 23 as a test author and a reviewer meet it: `gov test` (point 8: `expect eventually`, the
// decisions around a failure, -v, --run, --format json|junit, a file that does not check),
// directories as arguments (point 10), `gov apply` running the policy's tests (point 3) and
// `--db` paths that do not exist (point 7).
#include <catch2/catch.hpp>

#include <filesystem>

#include "runtime/embed/engine_internals.hpp"
#include "runtime/policy_test/policy_test.hpp"
#include "tests/check/json_reader.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::run_gov;

const char* const kHeader = R"(import "../../policies/catalog/aws-ml.gov"

cluster small {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 2 }
}

policy {
  priority training = 50
}

team ta {
  quota ml.g5.8xlarge { instances = 1 }
}

team tb {
  quota ml.g5.8xlarge { instances = 1 }
  sharing = dont-lend
}
)";

// j1 waits while j2 runs; when j2 finishes, j1 is admitted. Its first decision is `pending`,
// which a plain `expect j1 admitted` would have to spell out first.
const char* const kTests = R"(
test "after a finish, eventually admitted" {
  submit j2 { team = ta, gpus = 1 }
  submit j1 { team = ta, gpus = 1 }
  at 5
  finish j2
  expect eventually j1 admitted on ml.g5.8xlarge
}

test "the same with a plain expect" {
  submit j2 { team = ta, gpus = 1 }
  submit j1 { team = ta, gpus = 1 }
  at 5
  finish j2
  expect j1 admitted
}
)";

/// A directory under the build tree with the catalog and `tests/cli/NAME` holding `text`.
struct Written {
  gov::test::TempDir dir{"test-command"};
  std::string path;
  Written(const std::string& name, const std::string& text) {
    dir.copy_catalog();
    path = dir.write("tests/cli/" + name, text);
  }
};

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

TEST_CASE("expect eventually matches the task's latest decision, a plain expect the next one", "[cli][policy_test]") {
  const Written file("eventually.gov", std::string(kHeader) + kTests);
  for (const auto back_end : {gov::Options::BackEnd::interpreter, gov::Options::BackEnd::jit}) {
    gov::Options options;
    options.back_end = back_end;
    const gov::Engine engine = gov::Engine::compile_file(file.path, options);
    const auto policy = gov::EngineInternals::runnable(engine);
    const auto& tests = policy->checked.result.policy.tests;
    REQUIRE(tests.size() == 2);
    CHECK(gov::policy_test::run_case(engine, tests[0]).passed());
    const gov::policy_test::CaseResult plain = gov::policy_test::run_case(engine, tests[1]);
    REQUIRE(plain.failure);
    CHECK(plain.failure->actual == "outcome is pending");
    // The report shows what happened since the previous expect: j2 admitted, j1 pending, j2
    // finished, j1 admitted.
    REQUIRE(plain.failure->recent.size() == 4);
    CHECK(plain.failure->recent[2].find("j2") != std::string::npos);
    CHECK(plain.failure->recent[3].find("j1") != std::string::npos);
    CHECK(plain.failure->recent[3].find("admitted") != std::string::npos);
  }
}

TEST_CASE("gov test prints the decisions since the previous expect on a failure, and -v every stream", "[cli]") {
  const Written file("eventually.gov", std::string(kHeader) + kTests);
  const auto result = run_gov("test " + quoted(file.path));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 1);
  CHECK(result.out.find("ok    ") != std::string::npos);
  CHECK(result.out.find("decisions since the previous expect:") != std::string::npos);
  CHECK(result.out.find("1 passed, 1 failed\n") != std::string::npos);

  const auto verbose = run_gov("test -v --run eventually " + quoted(file.path));
  INFO(verbose.out << verbose.err);
  CHECK(verbose.exit_code == 0);  // --run left the failing block out
  CHECK(verbose.out.find("1 passed, 0 failed\n") != std::string::npos);
  CHECK(verbose.out.find("j1") != std::string::npos);  // the block's stream is printed
  CHECK(verbose.out.find("finished") != std::string::npos);
  CHECK(verbose.out.find("every decision of the test") == std::string::npos);  // no failure: no heading
  // A failure with -v: the recent decisions, then the whole stream under its own heading.
  const auto failing = run_gov("test -v " + quoted(file.path));
  const size_t recent = failing.out.find("decisions since the previous expect:");
  const size_t stream = failing.out.find("    every decision of the test (-v):\n");
  CHECK(recent != std::string::npos);
  CHECK(stream != std::string::npos);
  CHECK(recent < stream);

  const auto bad_regex = run_gov("test --run '(' " + quoted(file.path));
  CHECK(bad_regex.exit_code == 2);
  CHECK(bad_regex.err.find("not a regular expression") != std::string::npos);
}

TEST_CASE("gov test --format json and junit report every block", "[cli]") {
  const Written file("eventually.gov", std::string(kHeader) + kTests);
  const auto json = run_gov("test --format json " + quoted(file.path));
  INFO(json.out << json.err);
  CHECK(json.exit_code == 1);
  const gov::test::Json doc = gov::test::JsonReader(json.out).document();
  CHECK(doc["passed"].integer() == 1);
  CHECK(doc["failed"].integer() == 1);
  const gov::test::Json& tests = doc["files"][0]["tests"];
  CHECK(tests[0]["name"].str() == "after a finish, eventually admitted");
  CHECK(tests[0]["passed"].boolean);
  CHECK(tests[1]["failure"]["actual"].str() == "outcome is pending");
  CHECK(tests[1]["failure"]["recent"].size() == 4);
  // The block's stream: decision objects, not JSON text inside strings.
  REQUIRE(tests[0]["decisions"].size() > 0);
  CHECK(tests[0]["decisions"][0]["task"].str() == "j2");
  CHECK_FALSE(tests[0]["decisions"][0]["outcome"].str().empty());

  const auto junit = run_gov("test --format junit " + quoted(file.path));
  INFO(junit.out);
  CHECK(junit.exit_code == 1);
  CHECK(junit.out.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gov test\" tests=\"2\" "
                              "failures=\"1\" errors=\"0\">"));
  CHECK(junit.out.find("<testcase classname=") != std::string::npos);
  CHECK(junit.out.find("name=\"after a finish, eventually admitted\"/>") != std::string::npos);
  CHECK(junit.out.find("<failure message=\"expected j1 admitted, but outcome is pending\">") != std::string::npos);
}

TEST_CASE("gov test says a file did not check instead of 0 passed, 0 failed", "[cli]") {
  const Written file("broken.gov", std::string(kHeader) + "team tc { sharing = lend-and-borow }\n");
  const auto result = run_gov("test " + quoted(file.path));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 1);
  CHECK(result.out.find("0 passed, 0 failed, 1 file did not check\n") != std::string::npos);
  CHECK(result.err.find("lend-and-borow") != std::string::npos);  // its diagnostics

  const auto junit = run_gov("test --format junit " + quoted(file.path));
  CHECK(junit.out.find("errors=\"1\"") != std::string::npos);
  CHECK(junit.out.find("<error message=\"the policy does not check; see gov check\"/>") != std::string::npos);

  // The JSON report says why, so that a tool need not read standard error.
  const auto json = run_gov("test --format json " + quoted(file.path));
  const gov::test::Json report = gov::test::JsonReader(json.out).document();
  REQUIRE(report["files"].size() == 1);
  CHECK_FALSE(report["files"][0]["checked"].boolean);
  const std::string error = report["files"][0]["error"].str();
  CHECK(error.find("error[E0") != std::string::npos);
  CHECK(error.find("lend-and-borow") != std::string::npos);
  CHECK(error.find('\x1b') == std::string::npos);  // no colour
}

TEST_CASE("gov fmt keeps expect eventually", "[cli]") {
  const Written file("eventually.gov", std::string(kHeader) + kTests);
  const auto check = run_gov("fmt --check " + quoted(file.path));
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  const auto ast = run_gov("check --emit=ast " + quoted(file.path));
  CHECK(ast.out.find("(expect eventually j1 admitted") != std::string::npos);
}

TEST_CASE("gov check, lint, fmt and test take directories", "[cli]") {
  const Written file("eventually.gov", std::string(kHeader) + kTests);
  file.dir.write("tests/cli/.hidden/skipped.gov", "this is not a policy");
  const std::string dir = quoted(file.dir / "tests");
  const auto check = run_gov("check " + dir);
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);  // the hidden directory's file is not read
  CHECK(run_gov("lint " + dir).exit_code == 0);
  CHECK(run_gov("fmt --check " + dir).exit_code == 0);
  const auto test = run_gov("test --run eventually " + dir);
  CHECK(test.exit_code == 0);
  CHECK(test.out.find("eventually.gov: after a finish, eventually admitted") != std::string::npos);

  file.dir.write("empty/readme.txt", "no policies\n");
  const auto none = run_gov("check " + quoted(file.dir / "empty"));
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("holds no policy file (`*.gov`)") != std::string::npos);
}

// Issue 23, point 3: a version whose own tests fail used to be stored.
TEST_CASE("gov apply runs the policy's tests and refuses on a failure unless --skip-tests", "[cli][store]") {
  const Written file("eventually.gov", std::string(kHeader) + kTests);
  const std::string db = quoted(file.dir / "policies.db");
  const auto refused = run_gov("apply " + quoted(file.path) + " --db " + db + " -m first");
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("FAIL  ") != std::string::npos);
  CHECK(refused.err.find("the same with a plain expect") != std::string::npos);
  CHECK(refused.err.find("1 of the policy's 2 tests failed; nothing applied") != std::string::npos);
  CHECK(run_gov("log --db " + db).exit_code != 0);  // nothing was stored (no store, or no policy)

  const auto skipped = run_gov("apply " + quoted(file.path) + " --db " + db + " -m first --skip-tests");
  INFO(skipped.out << skipped.err);
  CHECK(skipped.exit_code == 0);
  const auto log = run_gov("log --format json --db " + db);
  CHECK(log.out.find("first [tests skipped: --skip-tests]") != std::string::npos);

  // Passing tests: applied without the flag.
  const Written passing("passing.gov", std::string(kHeader) + R"(
test "after a finish, eventually admitted" {
  submit j2 { team = ta, gpus = 1 }
  submit j1 { team = ta, gpus = 1 }
  at 5
  finish j2
  expect eventually j1 admitted on ml.g5.8xlarge
}
)");
  const auto applied = run_gov("apply " + quoted(passing.path) + " --db " + quoted(passing.dir / "p.db"));
  INFO(applied.out << applied.err);
  CHECK(applied.exit_code == 0);
  CHECK(applied.out.find("applied `passing` version 1") != std::string::npos);
}

// Issue 23, point 7: a mistyped --db used to create the directories on the way silently.
TEST_CASE("gov apply --db in a directory that does not exist is an error, not a new directory tree", "[cli][store]") {
  const Written file("passing.gov", std::string(kHeader));
  const std::string missing = file.dir / "no/such/dir";
  const auto result = run_gov("apply " + quoted(file.path) + " --db " + quoted(missing + "/x.db"));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 2);  // a store that cannot be opened: an I/O problem
  CHECK(result.err.find("directory `" + missing + "` does not exist; create it first") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(file.dir / "no"));
  // An existing directory is fine.
  CHECK(run_gov("apply " + quoted(file.path) + " --db " + quoted(file.dir / "x.db")).exit_code == 0);
}

// Issue 23, point 1: --root names the directory imports must stay under, for every command that
// loads a file, and gov::Options::policy_root does the same for Engine::compile_file.
TEST_CASE("the root option lets a policy import from above its gov.toml project only when given", "[cli]") {
  gov::test::TempDir dir("root-option");
  dir.copy_catalog();
  dir.write("shared/teams.gov", "team team-a {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n");
  dir.write("project/gov.toml", "");
  const std::string policy = dir.write("project/policy.gov", R"(import "../policies/catalog/aws-ml.gov"
import "../shared/teams.gov"

cluster small {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 2 }
}

policy {
  priority training = 50
}
)");
  // The default root is project/ (its gov.toml): both imports leave it.
  const auto confined = run_gov("check " + quoted(policy));
  CHECK(confined.exit_code == 1);
  CHECK(confined.err.find("E0208") != std::string::npos);
  const std::string root = " --root " + quoted(dir.path().string());
  for (const char* command : {"check ", "lint ", "inspect ", "test "}) {
    const auto result = run_gov(command + quoted(policy) + root);
    INFO(command << result.out << result.err);
    CHECK(result.exit_code == 0);
  }
  gov::Options options;
  options.back_end = gov::Options::BackEnd::interpreter;
  CHECK_THROWS_AS(gov::Engine::compile_file(policy, options), gov::Error);
  options.policy_root = dir.path().string();
  CHECK(gov::Engine::compile_file(policy, options).policy().name == "policy");
}

// Issue 23, point 9: a CRLF file used to come out of gov fmt with LF line ends.
TEST_CASE("gov fmt keeps a CRLF file CRLF and an LF file LF", "[cli]") {
  gov::test::TempDir dir("fmt-crlf");
  const std::string crlf = dir.write("crlf.gov", "# a comment\r\npolicy {\r\n  priority   training = 50 # trailing\r\n}\r\n");
  CHECK(run_gov("fmt " + quoted(crlf)).exit_code == 0);
  CHECK(gov::test::read_text(crlf) == "# a comment\r\npolicy {\r\n  priority training = 50  # trailing\r\n}\r\n");
  CHECK(run_gov("fmt --check " + quoted(crlf)).exit_code == 0);  // idempotent
  const std::string lf = dir.write("lf.gov", "policy {\n  priority   training = 50\n}\n");
  CHECK(run_gov("fmt " + quoted(lf)).exit_code == 0);
  CHECK(gov::test::read_text(lf) == "policy {\n  priority training = 50\n}\n");
}

// A policy author's findings (session 43): a clause given twice in one `expect` had only its last
// checked, so `borrowing { gpus = 1 } borrowing { }` passed with nothing borrowed; and `rejected
// by` a warn rule passed the checker, failing only when run.
TEST_CASE("gov check refuses an expect that states one fact twice or names a rule of the other kind", "[cli]") {
  const std::string rules = "rule big {\n  when task.gpus > 1\n  warn \"big\"\n}\nrule huge {\n  when task.gpus > 2\n  deny \"huge\"\n}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"expect a admitted borrowing { gpus = 1 } borrowing { }", "error[E0041]: `borrowing` is given twice in one `expect`"},
      {"expect a pending waiting-for-quota exceeds-max-quota", "error[E0041]: a reason is given twice in one `expect`"},
      {"expect a admitted message \"nope\" message \"Quota reserved in ClusterQueue ta\"",
       "error[E0041]: `message` is given twice in one `expect`"},
      {"expect a rejected by big", "error[E0045]: rule `big` only warns: it never rejects a task"},
      {"expect a admitted warned by huge", "error[E0045]: rule `huge` denies: it never only warns about a task"},
  };
  for (const auto& [expect, message] : cases) {
    const Written file("twice.gov", std::string(kHeader) + rules + "test \"t\" {\n  submit a { team = ta, gpus = 1 }\n  " +
                                        expect + "\n}\n");
    const gov::test::CommandResult r = run_gov("test " + quoted(file.path));
    INFO(expect << "\n" << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.find("1 file did not check") != std::string::npos);
  }
  // `warned by` may repeat: a task can match several warn rules.
  const Written many("many.gov", std::string(kHeader) +
                                     "rule wide {\n  when task.gpus > 0\n  warn \"wide\"\n}\n"
                                     "rule any {\n  when task.gpus >= 1\n  warn \"any\"\n}\n"
                                     "test \"t\" {\n  submit a { team = ta, gpus = 1 }\n  expect a admitted warned by wide warned by any\n}\n");
  const gov::test::CommandResult ok = run_gov("test " + quoted(many.path));
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
}
