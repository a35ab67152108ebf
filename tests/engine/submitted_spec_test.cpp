// A live task's submitted form is kept encoded (runtime/engine/submitted_spec.hpp) and decoded for
// Engine::export_state: the round trip must give back every field.
#include <catch2/catch.hpp>

#include <limits>
#include <random>
#include <string>

#include "runtime/engine/submitted_spec.hpp"

namespace gov::engine::test {
namespace {

bool same_pod_set(const PodSet& a, const PodSet& b) {
  return a.name == b.name && a.instance_type == b.instance_type && a.instances == b.instances &&
         a.amounts == b.amounts && a.pods == b.pods && a.partitions == b.partitions;
}

bool same_task(const gov::Task& a, const gov::Task& b) {
  if (a.pod_sets.size() != b.pod_sets.size()) return false;
  for (size_t i = 0; i < a.pod_sets.size(); ++i) {
    if (!same_pod_set(a.pod_sets[i], b.pod_sets[i])) return false;
  }
  return a.id == b.id && a.team == b.team && a.priority == b.priority && a.instance_type == b.instance_type &&
         a.instances == b.instances && a.amounts == b.amounts && a.pods == b.pods && a.partitions == b.partitions &&
         a.labels == b.labels && a.duration == b.duration && a.created == b.created;
}

class RandomTasks {
 public:
  explicit RandomTasks(uint32_t seed) : rng_(seed) {}

  gov::Task next() {
    gov::Task task;
    task.id = text();
    task.team = text();
    if (coin()) task.priority = text();
    if (coin()) task.instance_type = text();
    if (coin()) task.instances = number();
    amounts(task.amounts);
    if (coin()) task.pods = number();
    for (int i = pick(3); i > 0; --i) task.partitions.emplace_back(text(), number());
    for (int i = pick(4); i > 0; --i) task.labels.emplace_back(text(), text());
    if (coin()) task.duration = number();
    if (coin()) task.created = number();
    for (int i = pick(3); i > 0; --i) {
      PodSet& pod_set = task.pod_sets.emplace_back();
      pod_set.name = text();
      if (coin()) pod_set.instance_type = text();
      if (coin()) pod_set.instances = number();
      amounts(pod_set.amounts);
      pod_set.pods = number();
      for (int j = pick(2); j > 0; --j) pod_set.partitions.emplace_back(text(), number());
    }
    return task;
  }

 private:
  bool coin() { return (rng_() & 1) != 0; }
  int pick(int most) { return static_cast<int>(rng_() % static_cast<uint32_t>(most + 1)); }
  int64_t number() {
    switch (rng_() % 5) {
      case 0: return std::numeric_limits<int64_t>::min();
      case 1: return std::numeric_limits<int64_t>::max();
      case 2: return -static_cast<int64_t>(rng_() % 1000);
      default: return static_cast<int64_t>(rng_()) * static_cast<int64_t>(rng_() % 100000);
    }
  }
  std::string text() {
    std::string s(rng_() % 20, 'x');
    for (char& c : s) c = static_cast<char>(rng_() % 256);  // NULs and bytes above 0x7f too
    return s;
  }
  void amounts(std::array<std::optional<int64_t>, kResourceCount>& out) {
    for (std::optional<int64_t>& amount : out) {
      if (coin()) amount = number();
    }
  }
  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("a submitted task survives its compact form field for field", "[engine]") {
  SECTION("an empty task") {
    const gov::Task task;
    CHECK(same_task(decode_submitted(encode_submitted(task)), task));
  }
  SECTION("random tasks with every field") {
    RandomTasks tasks(20261126);
    for (int i = 0; i < 5000; ++i) {
      const gov::Task task = tasks.next();
      const std::string bytes = encode_submitted(task);
      REQUIRE(same_task(decode_submitted(bytes), task));
    }
  }
  SECTION("a typical task is a fraction of the struct") {
    gov::Task task;
    task.id = "t123456";
    task.team = "team-0042";
    task.priority = "training";
    task.set(Resource::gpu, 8).set(Resource::vcpu, 96000).set(Resource::memory, 768LL << 30);
    task.labels = {{"project", "llm"}, {"cost-center", "cc-1"}};
    task.duration = 3'600'000;
    CHECK(encode_submitted(task).size() < 100);
    CHECK(sizeof(gov::Task) > 300);
  }
}

}  // namespace gov::engine::test
