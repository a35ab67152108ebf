// `gov eval` as a new user reads it (issue 23, point 12): when preemption is needed but no task
// may be preempted, the verdict and the candidate list say the same thing.
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
