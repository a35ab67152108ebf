// Resource groups through the embedding API (docs/semantics-decisions.md "Resource groups"): the
// admitted decision per group, Engine::check of a task of a grouped team, and a restart that keeps
// each group's instance type (`group_flavors` in the state).
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

// cpu from ml.c5.2xlarge, memory from ml.c5.xlarge then ml.m5.xlarge (Kueue's `standalone`).
constexpr const char* kPolicy = R"(import "aws-ml"
cluster c {
  catalog  = aws-ml
  capacity = { ml.c5.2xlarge: 1, ml.c5.xlarge: 1, ml.m5.xlarge: 1 }
}
policy {
  idle-compute = fcfs
}
team t {
  quota ml.c5.2xlarge { vcpus = 6 }
  quota ml.c5.xlarge { memory = 3 GiB }
  quota ml.m5.xlarge { memory = 3 GiB }
  borrow-limit = 0%
  resource-groups = {
    cpu: { covers = [vcpus], flavors = [ml.c5.2xlarge] }
    memory: { covers = [memory], flavors = [ml.c5.xlarge, ml.m5.xlarge] }
  }
}
)";

gov::Task task(const std::string& id, int64_t vcpu_millis, int64_t memory_mib) {
  gov::Task out;
  out.id = id;
  out.team = "t";
  out.amounts[static_cast<size_t>(gov::Resource::vcpu)] = vcpu_millis;
  out.amounts[static_cast<size_t>(gov::Resource::memory)] = memory_mib;
  return out;
}

}  // namespace

TEST_CASE("a task of a team with resource groups is admitted on one instance type per group", "[embed][groups]") {
  gov::test::TempDir dir("groups-admit");
  gov::Engine engine = gov::Engine::compile_file(dir.write("p.gov", kPolicy));
  // The fused fit of one flavor would find no instance type holding both: the check places each group.
  const gov::Admission checked = engine.check(task("a", 2000, 2048));
  CHECK(checked.verdict == gov::Admission::Verdict::admit);
  CHECK(checked.flavor == "ml.c5.2xlarge");
  const gov::Decision a = engine.submit(task("a", 2000, 2048), 0);
  REQUIRE(a.outcome == gov::Outcome::admitted);
  CHECK(a.flavor == "ml.c5.2xlarge");
  REQUIRE(a.pod_sets.size() == 2);
  CHECK(a.pod_sets[0].name == "main");
  CHECK(a.pod_sets[0].flavor == "ml.c5.2xlarge");
  CHECK(a.pod_sets[1].flavor == "ml.c5.xlarge");
  REQUIRE(a.pod_sets[1].usage.size() == 1);
  CHECK(a.pod_sets[1].usage[0].resource == gov::Resource::memory);
  // The memory group's first type is 2 GiB full: the next takes its memory from the second.
  CHECK(engine.check(task("b", 2000, 2048)).verdict == gov::Admission::Verdict::admit);
  const gov::Decision b = engine.submit(task("b", 2000, 2048), 1);
  REQUIRE(b.outcome == gov::Outcome::admitted);
  REQUIRE(b.pod_sets.size() == 2);
  CHECK(b.pod_sets[1].flavor == "ml.m5.xlarge");
  // The cpu group is 4 of 6 full: 3 more cpus wait, and the check says so.
  CHECK(engine.check(task("c", 3000, 1024)).verdict == gov::Admission::Verdict::pending);
  CHECK(engine.submit(task("c", 3000, 1024), 2).outcome == gov::Outcome::pending);
}

TEST_CASE("a restart keeps the instance type of each resource group of an admitted task", "[embed][groups][restart]") {
  gov::test::TempDir dir("groups-restart");
  gov::Engine engine = gov::Engine::compile_file(dir.write("p.gov", kPolicy));
  REQUIRE(engine.submit(task("a", 1000, 2048), 0).outcome == gov::Outcome::admitted);
  REQUIRE(engine.submit(task("b", 1000, 2048), 1).outcome == gov::Outcome::admitted);  // memory on ml.m5.xlarge
  REQUIRE(engine.finish("a", 2).has_value());
  const gov::ClusterState state = engine.export_state();
  REQUIRE(state.admitted.size() == 1);
  CHECK(state.admitted[0].group_flavors == std::vector<std::string>{"ml.c5.2xlarge", "ml.m5.xlarge"});
  CHECK(state.admitted[0].pod_set_flavors.empty());
  const std::string json = gov::to_json(state);
  CHECK(json.find(R"("group_flavors":["ml.c5.2xlarge","ml.m5.xlarge"])") != std::string::npos);
  gov::Engine restarted = engine.fresh();
  CHECK(restarted.load_state_json(json).empty());
  CHECK(restarted.snapshot().usage == engine.snapshot().usage);
  // Both engines place the next task's memory on the first type, which `b` does not hold.
  const gov::Decision before = engine.submit(task("c", 1000, 3072), 10);
  const gov::Decision after = restarted.submit(task("c", 1000, 3072), 10);
  REQUIRE(before.outcome == gov::Outcome::admitted);
  CHECK(after.outcome == before.outcome);
  CHECK(after.pod_sets == before.pod_sets);

  // A state naming an instance type outside the slot's group is refused with the reason.
  const std::string held = R"(["ml.c5.2xlarge","ml.m5.xlarge"])";
  std::string wrong = json;
  wrong.replace(wrong.find(held), held.size(), R"(["ml.m5.xlarge","ml.m5.xlarge"])");
  gov::Engine refused = engine.fresh();
  const std::vector<gov::LoadFailure> errors = refused.load_state_json(wrong);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.find("is not in the resource group") != std::string::npos);
}
