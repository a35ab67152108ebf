// The CLI as a new user reads it (issue 23): `gov eval`'s verdict and candidate list agree
// (point 12); `gov simulate --format text` counts tasks per team and gives waits in human units
// (point 14).
#include <catch2/catch.hpp>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

TEST_CASE("gov eval does not say no candidates and then list them", "[cli][eval]") {
  const gov::test::TempDir dir("eval-cli");
  const std::string task = dir.write("task.json", R"({"id": "a1", "team": "team-a", "gpus": 3, "priority": "training"})");
  // team-b holds its own two GPUs: within nominal quota, never reclaimed from.
  const std::string state = dir.write("state.json", R"({"at": 10, "admitted": [{"task": {"id": "b1", "team": "team-b",
      "gpus": 2, "priority": "training"}, "submitted_at": 1, "admitted_at": 1, "flavor": "ml.g5.8xlarge"}]})");
  auto result = run_gov("eval policies/examples/workshop-g5.gov --task '" + task + "' --state '" + state + "'");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("ml.g5.8xlarge: needs preemption, but no task may be preempted for it") != std::string::npos);
  CHECK(result.out.find("tasks considered for preemption (none may be preempted):\n    - b1 (team team-b") !=
        std::string::npos);
  CHECK(result.out.find("no preemption candidates") == std::string::npos);
}

TEST_CASE("gov simulate --format text counts tasks per team and gives waits in human units", "[cli][simulate]") {
  const gov::test::TempDir dir("simulate-text");
  // team-b holds its 2 GPUs with b0 for two and a half hours; b1 (2 GPUs, same priority) could
  // only borrow 1 more, so it waits for b0; b2 asks for more than team-b can ever hold.
  const std::string trace = dir.write("trace.json", R"({"events": [
    {"at": 0, "submit": {"id": "b0", "team": "team-b", "gpus": 2, "duration": 9000}},
    {"at": 1, "submit": {"id": "b1", "team": "team-b", "gpus": 2}},
    {"at": 2, "submit": {"id": "b2", "team": "team-b", "gpus": 8}}
  ]})");
  auto result = run_gov("simulate policies/examples/workshop-g5.gov --trace '" + trace + "' --format text");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("team    submitted  admitted  rejected  pending  mean wait  p95 wait") != std::string::npos);
  // Waits: b0 0 s, b1 8,999 s: the mean is 1h 14m, the p95 2h 29m.
  CHECK(result.out.find("team-b          3         2         0        1     1h 14m    2h 29m") != std::string::npos);
}
