// Issue 27 through the C++ embedding API: a finish of a pending task cancels it (the call
// returns the `cancelled` decision), and step() applies the finishes due at its time together
// with its events.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include "tests/support/test_support.hpp"

namespace {

gov::Task gpus(const std::string& id, const std::string& team, int64_t count,
               const std::string& priority = "") {
  gov::Task t;
  t.id = id;
  t.team = team;
  if (!priority.empty()) t.priority = priority;
  t.set(gov::Resource::gpu, count);
  return t;
}

gov::Engine walkthrough_engine(gov::Options::BackEnd back_end) {
  gov::Options options;
  options.back_end = back_end;
  return gov::Engine::compile_file(
      gov::test::repo_path("policies/examples/cli-walkthrough-g5-12xlarge.gov"), options);
}

}  // namespace

TEST_CASE("the embedding API cancels a pending task that is finished",
          "[embed][security][sem-instant]") {
  for (auto back_end : {gov::Options::BackEnd::jit, gov::Options::BackEnd::interpreter}) {
    gov::Engine engine = walkthrough_engine(back_end);
    CHECK(engine.submit(gpus("big", "team-a", 8), 0).outcome == gov::Outcome::admitted);
    CHECK(engine.submit(gpus("waits", "team-a", 2), 0).outcome == gov::Outcome::pending);
    const std::optional<gov::Decision> finished = engine.finish("waits", 5);
    REQUIRE(finished.has_value());
    CHECK(finished->outcome == gov::Outcome::cancelled);
    CHECK(!engine.finish("waits", 6).has_value());    // it has ended
    CHECK(!engine.finish("unknown", 6).has_value());  // never submitted
    const std::optional<gov::Decision> done = engine.finish("big", 7);
    REQUIRE(done.has_value());
    CHECK(done->outcome == gov::Outcome::finished);
  }
}

TEST_CASE("the embedding API applies the finishes due at a step's time with its events",
          "[embed][security][sem-instant]") {
  for (auto back_end : {gov::Options::BackEnd::jit, gov::Options::BackEnd::interpreter}) {
    gov::Engine engine = walkthrough_engine(back_end);
    engine.submit(gpus("t13", "team-b", 7, "fine-tuning"), 0);
    engine.submit(gpus("t14", "team-b", 2), 0);
    gov::Task t16 = gpus("t16", "team-b", 2, "experimentation");
    t16.duration = 3000;
    engine.submit(t16, 1000);
    const gov::Step step = engine.step(4000, {gov::Event::finish("t14")});
    // t16 (due) and t14 finish first, then t13 is admitted without preempting anyone.
    REQUIRE(step.decisions.size() == 3);
    CHECK(step.decisions[0].task == "t16");
    CHECK(step.decisions[0].outcome == gov::Outcome::finished);
    CHECK(step.decisions[1].task == "t14");
    CHECK(step.decisions[1].outcome == gov::Outcome::finished);
    CHECK(step.decisions[2].task == "t13");
    CHECK(step.decisions[2].outcome == gov::Outcome::admitted);
  }
}
