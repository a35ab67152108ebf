// A submit's `created` (issue 18): the queue-order time of a task, at or before its event's time.
// Tasks submitted in one instant queue by it, not by id; a `created` after `at` is an error.
#include <catch2/catch.hpp>

#include <string>

#include "gov/engine.hpp"
#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const std::string kWorkshop = "policies/examples/workshop-g5.gov";

/// Two tasks of team-a in one instant, each wanting the 3 GPUs the team may hold: the one ahead
/// in queue order is admitted, the other waits. `x_created`, `y_created`: JSON of their `created`
/// (empty: none).
std::string two_in_one_instant(const std::string& x_created, const std::string& y_created) {
  const auto task = [](const std::string& id, const std::string& created) {
    return R"({"at": 10, "submit": {"id": ")" + id +
           R"(", "team": "team-a", "instance_type": "ml.g5.8xlarge", "gpus": 3)" +
           (created.empty() ? "" : ", \"created\": " + created) + "}}";
  };
  return "{\"events\": [" + task("x", x_created) + ",\n" + task("y", y_created) + "]}";
}

gov::test::CommandResult simulate(const gov::test::TempDir& dir, const std::string& trace) {
  return run_gov("simulate " + kWorkshop + " --trace " + dir.write("trace.json", trace));
}

}  // namespace

TEST_CASE("tasks submitted in one instant queue by their created time", "[k8s][trace][created]") {
  gov::test::TempDir dir("created-order");
  // Without `created`, tasks of one instant and one priority queue by id: x first.
  const gov::test::CommandResult by_id = simulate(dir, two_in_one_instant("", ""));
  INFO(by_id.err);
  REQUIRE(by_id.exit_code == 0);
  CHECK(by_id.out.find(R"({"at":10,"task":"x","outcome":"admitted")") != std::string::npos);
  CHECK(by_id.out.find(R"({"at":10,"task":"y","outcome":"pending")") != std::string::npos);
  // y was created first (even before the trace starts): y is ahead, x waits.
  const gov::test::CommandResult by_created = simulate(dir, two_in_one_instant("9.5", "-3"));
  INFO(by_created.err);
  REQUIRE(by_created.exit_code == 0);
  CHECK(by_created.out.find(R"({"at":10,"task":"y","outcome":"admitted")") != std::string::npos);
  CHECK(by_created.out.find(R"({"at":10,"task":"x","outcome":"pending")") != std::string::npos);
  // `created` equal to `at` is the default: the stream is byte-identical to the one without.
  CHECK(simulate(dir, two_in_one_instant("10", "10")).out == by_id.out);
}

TEST_CASE("a created time after the event's time is an error", "[k8s][trace][created]") {
  gov::test::TempDir dir("created-errors");
  const gov::test::CommandResult late = simulate(dir, two_in_one_instant("", "10.001"));
  CHECK(late.exit_code == 1);
  CHECK(late.out.empty());
  CHECK(late.err.find(R"(event 1 (at 10): field "created": 10.001 is after 10, the event's time; a task is created )"
                      "before it is submitted") != std::string::npos);
  const gov::test::CommandResult text = simulate(dir, two_in_one_instant("\"yesterday\"", ""));
  CHECK(text.err.find(R"(event 0 (at 10): field "created": expected a number of seconds, found the string "yesterday")") !=
        std::string::npos);
  const gov::test::CommandResult fine = simulate(dir, two_in_one_instant("0.0001", ""));
  CHECK(fine.err.find(R"(field "created": 0.0001 is more precise than a millisecond)") != std::string::npos);
  const gov::test::CommandResult far = simulate(dir, two_in_one_instant("-1e12", ""));
  CHECK(far.err.find(R"(field "created": -1e12 seconds is out of range)") != std::string::npos);
  // A state entry's queue-order time is its `submitted_at`; its task has no `created`.
  const std::string state = dir.write("state.json", R"({"at": 5, "pending": [{"task": {"id": "p", "team": "team-a",
    "gpus": 1, "created": 1}, "submitted_at": 1}]})");
  const std::string task = dir.write("task.json", R"({"id": "t", "team": "team-b", "gpus": 1})");
  const gov::test::CommandResult in_state = run_gov("eval " + kWorkshop + " --task " + task + " --state " + state);
  CHECK(in_state.exit_code == 1);
  CHECK(in_state.err.find(R"(pending[0]: field "created": only a trace's submit events have a queue-order time)") !=
        std::string::npos);
}

TEST_CASE("the engine takes a task's created time as its queue-order time", "[k8s][trace][created]") {
  gov::Options options;
  options.back_end = gov::Options::BackEnd::interpreter;
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path(kWorkshop), options);
  gov::Task x;
  x.id = "x";
  x.team = "team-a";
  x.set(gov::Resource::gpu, 3);
  gov::Task y = x;
  y.id = "y";
  y.created = -3000;  // before the engine's start
  const gov::Step step = engine.step(10'000, {gov::Event::submit(x), gov::Event::submit(y)});
  REQUIRE(step.find("y") != nullptr);
  CHECK(step.find("y")->outcome == gov::Outcome::admitted);
  CHECK(step.find("x")->outcome == gov::Outcome::pending);
  const gov::Snapshot snapshot = engine.snapshot();
  REQUIRE(snapshot.tasks.size() == 2);
  CHECK(snapshot.tasks[0].id == "y");  // the snapshot lists tasks by their queue-order times
  CHECK(snapshot.tasks[0].submitted_at == -3000);  // its queue-order time
  // A creation time after the submission is an invalid task, as the trace reader refuses it.
  gov::Task z = x;
  z.id = "z";
  z.created = 10'001;
  const gov::Decision d = engine.submit(z, 10'000);
  CHECK(d.outcome == gov::Outcome::invalid);
  CHECK(d.message == "the task's creation time (`created`) is after the time it is submitted");
}
