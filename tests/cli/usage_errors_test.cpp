// Arguments a new user gets wrong are refused, never silently ignored or read as something else
// (found by a new-user trial of the CLI, session 31).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

TEST_CASE("gov simulate refuses a policy file beside --db instead of ignoring it", "[cli][simulate]") {
  const gov::test::TempDir dir("simulate-file-and-db");
  const gov::test::CommandResult r = run_gov("simulate policies/examples/workshop-g5.gov --trace policies/examples/workshop-g5.trace.json --db '" +
                                             (dir / "store.db") + "'");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("give a policy FILE or --db (the store's active version), not both") != std::string::npos);
}

TEST_CASE("gov log --limit takes a positive whole number, gov rollback a version number", "[cli][store]") {
  const gov::test::TempDir dir("log-limit");
  const std::string db = "'" + (dir / "store.db") + "'";
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov --db " + db).exit_code == 0);
  for (const char* bad : {"abc", "-3", "1.5", "0", "v2"}) {
    const gov::test::CommandResult r = run_gov(std::string("log --limit=") + bad + " --db " + db);
    INFO(bad << ": " << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--limit takes a positive whole number") != std::string::npos);
  }
  // Any --format printed text and exited 0 (a hostile-input helper's finding).
  for (const char* bad : {"xml", "JSON", ""}) {
    const gov::test::CommandResult r = run_gov(std::string("log --format=") + bad + " --db " + db);
    INFO(bad << ": " << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("unknown format") != std::string::npos);
  }
  // One version: gov diff has nothing to compare it with, and says so.
  const gov::test::CommandResult first = run_gov("diff --db " + db);
  INFO(first.err);
  CHECK(first.exit_code == 0);
  CHECK(first.out == "`workshop-g5` v1 has no earlier version to compare it with (give two versions, or a FILE)\n");
  const gov::test::CommandResult rollback = run_gov("rollback abc --db " + db);
  CHECK(rollback.exit_code == 2);
  CHECK(rollback.err == "error: `abc` is not a version number (usage: gov rollback VERSION)\n");
  const gov::test::CommandResult one = run_gov("log --limit 1 --db " + db);
  INFO(one.err);
  CHECK(one.exit_code == 0);
  CHECK(one.out.find("v1") != std::string::npos);
}

TEST_CASE("gov test --run that matches no block fails", "[cli][policy_test]") {
  const gov::test::CommandResult none = run_gov("test policies/examples --run no-block-has-this-name");
  INFO(none.out << none.err);
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("no test block matches `--run no-block-has-this-name`") != std::string::npos);
  // A bad back end is a usage error, not a file that did not check.
  const gov::test::CommandResult engine = run_gov("test policies/examples/workshop-g5.gov --engine foo");
  CHECK(engine.exit_code == 2);
  CHECK(engine.out.empty());
  CHECK(engine.err == "error: unknown engine `foo` (expected `jit` or `interp`)\n");
  // A filter that matches runs as before.
  const gov::test::CommandResult some = run_gov("test policies/examples/workshop-g5.gov --run .");
  INFO(some.out << some.err);
  CHECK(some.exit_code == 0);
}

TEST_CASE("gov import names the shipped catalog by default, so the policy checks from any directory", "[cli][import]") {
  const gov::test::TempDir dir("import-catalog");
  const std::string yaml = dir / "kueue.yaml";
  REQUIRE(run_gov("export kueue policies/examples/workshop-g5.gov > '" + yaml + "'").exit_code == 0);
  const gov::test::CommandResult imported = run_gov("import kueue '" + yaml + "'");
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("import \"aws-ml\"\n") != std::string::npos);
  // Written outside the source tree, it checks (a relative path to policies/catalog would not).
  const std::string back = dir.write("back.gov", imported.out);
  const gov::test::CommandResult checked = run_gov("check '" + back + "'");
  INFO(checked.err);
  CHECK(checked.exit_code == 0);
  // A shipped catalog named explicitly, and one that does not exist.
  CHECK(run_gov("import kueue '" + yaml + "' --catalog aws-ml").out == imported.out);
  const gov::test::CommandResult unknown = run_gov("import kueue '" + yaml + "' --catalog no-such-catalog");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("`--catalog no-such-catalog`: no shipped catalog of that name") != std::string::npos);
}

TEST_CASE("gov test checks a file without test blocks as gov check does, and runs the rest", "[cli][policy_test]") {
  // The shipped catalog has no cluster and no tests: nothing to run, nothing wrong (gov check
  // passes it), so `gov test policies` does not fail on it.
  const gov::test::CommandResult catalog = run_gov("test policies/catalog");
  INFO(catalog.out << catalog.err);
  CHECK(catalog.exit_code == 0);
  CHECK(catalog.out == "0 passed, 0 failed\n");
  const gov::test::CommandResult all = run_gov("test policies");
  INFO(all.err);
  CHECK(all.exit_code == 0);
  CHECK(all.out.find("did not check") == std::string::npos);
  // A file with test blocks still needs a cluster and a policy to run them.
  const gov::test::TempDir dir("test-no-cluster");
  const std::string file = dir.write("t.gov", "import \"aws-ml\"\nteam x { quota ml.g5.8xlarge { instances = 1 } }\n"
                                               "test \"a\" {\n  submit t { team = x, gpus = 1 }\n  expect t admitted\n}\n");
  const gov::test::CommandResult needs = run_gov("test '" + file + "'");
  CHECK(needs.exit_code == 1);
  CHECK(needs.err.find("error[E0216]: this policy has no `cluster` declaration") != std::string::npos);
  CHECK(needs.out == "0 passed, 0 failed, 1 file did not check\n");
}

TEST_CASE("gov eval of a bad Kubernetes object says where once", "[cli][eval]") {
  const gov::test::TempDir dir("eval-located");
  const std::string job = dir.write("job.yaml",
                                    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  labels:\n"
                                    "    kueue.x-k8s.io/queue-name: team-a\nspec:\n  template:\n    spec:\n"
                                    "      containers:\n        - name: c\n          resources:\n            requests:\n"
                                    "              nvidia.com/gpu: \"1x\"\n");
  const gov::test::CommandResult r = run_gov("eval policies/examples/workshop-g5.gov --task '" + job + "'");
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("job.yaml:14:31: Job `j`: `spec.template.spec.containers[0].resources.requests.nvidia.com/gpu`: "
                   "`1x` is not a Kubernetes quantity") != std::string::npos);
  CHECK(r.err.find("line 14, column 31") == std::string::npos);
}

TEST_CASE("gov inspect shows a zero memory limit in GiB, beside the other memory cells", "[cli][inspect]") {
  const gov::test::TempDir dir("inspect-zero");
  const std::string policy = dir.write("z.gov", "import \"aws-ml\"\n"
                                                "cluster c { catalog = aws-ml, capacity = { ml.g5.8xlarge: 4 } }\n"
                                                "policy { priority a = 1 }\n"
                                                "team t { quota ml.g5.8xlarge { instances = 2, borrow-limit = { memory = 0 GiB } } }\n");
  const gov::test::CommandResult r = run_gov("inspect '" + policy + "'");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("    memory                    256 GiB            0 GiB      unlimited") != std::string::npos);
  CHECK(r.out.find("0 TiB") == std::string::npos);
}

TEST_CASE("gov check --emit over several files names each file before its stage", "[cli]") {
  const gov::test::CommandResult two =
      run_gov("check --emit=ir policies/examples/workshop-g5.gov policies/examples/rules.gov");
  INFO(two.out << two.err);
  REQUIRE(two.exit_code == 0);
  const size_t first = two.out.find("==> policies/examples/workshop-g5.gov <==\n");
  const size_t second = two.out.find("\n==> policies/examples/rules.gov <==\n");
  CHECK(first == 0);
  REQUIRE(second != std::string::npos);
  CHECK(two.out.find("module ", first) < second);  // each file's module under its own name
  CHECK(two.out.find("module ", second) != std::string::npos);
  // One file: its stage alone, as before.
  const gov::test::CommandResult one = run_gov("check --emit=ir policies/examples/workshop-g5.gov");
  CHECK(one.out.starts_with("module "));
}

TEST_CASE("gov simulate with no FILE replays the default store, and a store it cannot open exits 2",
          "[cli][simulate]") {
  const gov::test::TempDir dir("simulate-default-store");
  const std::string db = dir / "store.db";
  const std::string trace = " --trace policies/examples/workshop-g5.trace.json";
  REQUIRE(run_gov("apply policies/examples/workshop-g5.gov --db '" + db + "'").exit_code == 0);
  const gov::test::CommandResult from_file = run_gov("simulate policies/examples/workshop-g5.gov" + trace);
  REQUIRE(from_file.exit_code == 0);
  ::setenv("GOV_DB", db.c_str(), 1);
  const gov::test::CommandResult from_store = run_gov("simulate" + trace);
  ::unsetenv("GOV_DB");
  INFO(from_store.err);
  CHECK(from_store.exit_code == 0);
  CHECK(from_store.out == from_file.out);
  // Missing, a directory, not a store: as gov log and gov show, exit 2 (a hostile-input
  // helper's finding: simulate exited 1).
  for (const std::string& bad : {dir / "missing.db", dir.path().string(), std::string("README.md")}) {
    const gov::test::CommandResult r = run_gov("simulate --db '" + bad + "'" + trace);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(run_gov("log --db '" + bad + "'").exit_code == 2);
  }
}

TEST_CASE("gov simulate refuses a report path that is one of its inputs", "[cli][simulate]") {
  // A planner helper lost a trace to `--usage-report T.json` with `--trace T.json`.
  const gov::test::TempDir dir("simulate-report-input");
  const std::string trace = dir.write("t.json", gov::test::read_text(gov::test::repo_path(
                                                    "policies/examples/workshop-g5.trace.json")));
  const std::string before = gov::test::read_text(trace);
  const gov::test::CommandResult r =
      run_gov("simulate policies/examples/workshop-g5.gov --trace '" + trace + "' --usage-report '" + trace + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: `" + trace + "` is an input of this run; writing a report there would replace it\n");
  CHECK(gov::test::read_text(trace) == before);
  CHECK(run_gov("simulate policies/examples/workshop-g5.gov --trace '" + trace + "' --usage-report '" +
                (dir / "usage.json") + "'")
            .exit_code == 0);
}

TEST_CASE("gov simulate warns when the guaranteed quotas exceed the cluster's capacity", "[cli][simulate]") {
  // A planner helper's finding: "team-b gets 4 more H100s" written as a quota change replayed 28
  // GPUs on a 24-GPU cluster without a word (admission is decided on quotas alone).
  const std::string trace = " --trace policies/examples/workshop-g5.trace.json";
  const gov::test::CommandResult over = run_gov("simulate policies/examples/workshop-kr-g5-8xlarge.gov" + trace);
  CHECK(over.exit_code == 0);
  CHECK(over.err == "warning: team `team-b`'s quota takes the guaranteed `ml.g5.8xlarge` to 3 instances, more than "
                    "the cluster's 2: admission is decided on quotas alone, so this replay may hold more than exists "
                    "(`gov lint`: W0101)\n");
  CHECK(run_gov("simulate policies/examples/workshop-g5.gov" + trace).err.empty());
  const gov::test::CommandResult compared =
      run_gov("simulate policies/examples/workshop-g5.gov policies/examples/workshop-kr-g5-8xlarge.gov" + trace);
  CHECK(compared.err.find("warning: policies/examples/workshop-kr-g5-8xlarge.gov: team `team-b`'s quota takes") == 0);
}

TEST_CASE("gov simulate --until sets the horizon of a run and of a comparison", "[cli][simulate]") {
  // A planner helper's finding: a task still running at the end counted only until the last
  // decision (0 GPU-hours for a task without a duration), and a policy's figures differed between a
  // run of its own and a what-if, which counts both replays until the later end.
  const gov::test::TempDir dir("simulate-until");
  const std::string trace = dir.write("t.json", R"({"events": [
    {"at": 0, "submit": {"id": "a1", "team": "team-a", "gpus": 1}},
    {"at": 5000, "submit": {"id": "a2", "team": "team-a", "gpus": 1}}]})");
  const std::string run = "simulate policies/examples/workshop-g5.gov --trace '" + trace + "'";
  const gov::test::CommandResult hour = run_gov(run + " --until 3600 --format text");
  INFO(hour.err);
  REQUIRE(hour.exit_code == 0);
  CHECK(hour.out.find("a2") == std::string::npos);  // after the horizon: not replayed
  const size_t row = hour.out.find("\nteam-a ");
  REQUIRE(row != std::string::npos);
  CHECK(hour.out.find(" 1.000 ", row) != std::string::npos);  // one GPU for one hour
  const gov::test::CommandResult without = run_gov(run + " --format text");
  CHECK(without.out.find(" 1.000 ", without.out.find("\nteam-a ")) == std::string::npos);
  // The same horizon in a comparison: B's figures are B's own run's.
  const gov::test::CommandResult compared =
      run_gov("simulate policies/examples/workshop-g5.gov policies/examples/workshop-g5.gov --trace '" + trace +
              "' --until 3600 --format json");
  REQUIRE(compared.exit_code == 0);
  CHECK(compared.out.find(R"("gpu_hours":1,)") != std::string::npos);
  for (const char* bad : {"-1", "1.2345", "x", "1e3", "2000000000000", "007", "1.", ".5"}) {
    const gov::test::CommandResult r = run_gov(run + " --until " + bad);
    INFO(bad);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--until takes a time in seconds") != std::string::npos);
  }
}
