// The queue sets' bookkeeping under random queue operations, against a plain model: each set
// holds the tasks the model says, in queue order; a counted set's class counts are exact; and
// each class's representative (the task Scheduler::all_classes_quiet tests the class through) is
// a task of that class in that set. park_first's bulk path (most of the set parks: the rest steps
// out and the set moves whole) must leave what parking the heads one by one leaves.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/engine/task_store.hpp"

namespace gov::engine::test {
namespace {

constexpr size_t kTeams = 2;

struct Model {
  std::vector<uint32_t> active[kTeams];
  std::vector<uint32_t> parked[kTeams];
};

class StoreUnderTest {
 public:
  StoreUnderTest() : store_(kTeams, 1, std::vector<bool>(kTeams, false)) {}

  uint32_t add(uint32_t team, int32_t priority, Time submitted, int gpus, std::string message) {
    Task task;
    task.id = "t" + std::to_string(store_.size());
    task.team = static_cast<int32_t>(team);
    task.priority = priority;
    task.submitted_at = submitted;
    task.request[ir::index(ir::Resource::gpu)] = gpus;
    task.last_reason = PendingReason::waiting_for_quota;
    task.last_message = std::move(message);
    task.state = TaskState::pending;
    const uint32_t index = store_.add(std::move(task), true);
    store_.enqueue(index);
    insert_sorted(model_.active[team], index);
    return index;
  }

  /// Parks the first `count` active tasks of `team`, in the store and in the model.
  void park_first(uint32_t team, size_t count) {
    store_.park_first(team, count);
    std::vector<uint32_t>& active = model_.active[team];
    const size_t n = std::min(count, active.size());
    for (size_t i = 0; i < n; ++i) insert_sorted(model_.parked[team], active[i]);
    active.erase(active.begin(), active.begin() + static_cast<std::ptrdiff_t>(n));
  }

  void reactivate() {
    store_.reactivate_parked();
    for (size_t team = 0; team < kTeams; ++team) {
      for (uint32_t task : model_.parked[team]) insert_sorted(model_.active[team], task);
      model_.parked[team].clear();
    }
  }

  /// Takes the head and parks it (a cycle that parks its head), or puts it back.
  void cycle(uint32_t team, bool park) {
    const int32_t head = store_.take_head(team);
    if (head < 0) return;
    const auto task = static_cast<uint32_t>(head);
    REQUIRE(model_.active[team].front() == task);
    model_.active[team].erase(model_.active[team].begin());
    if (park) {
      store_.park(task);
      insert_sorted(model_.parked[team], task);
    } else {
      store_.enqueue(task);
      insert_sorted(model_.active[team], task);
    }
  }

  /// Cancels the k-th task (mod the count) of one of the team's sets.
  void cancel(uint32_t team, bool parked, size_t k) {
    std::vector<uint32_t>& list = parked ? model_.parked[team] : model_.active[team];
    if (list.empty()) return;
    const uint32_t task = list[k % list.size()];
    store_.dequeue(task);
    store_[task].state = TaskState::cancelled;
    list.erase(std::find(list.begin(), list.end(), task));
  }

  /// Gives the k-th queued task of the team a new last message (a new pending decision).
  void new_message(uint32_t team, bool parked, size_t k, std::string message) {
    const std::vector<uint32_t>& list = parked ? model_.parked[team] : model_.active[team];
    if (list.empty()) return;
    const uint32_t task = list[k % list.size()];
    store_[task].last_message = std::move(message);
    store_.reclassify(task);
  }

  void check() const {
    for (uint32_t team = 0; team < kTeams; ++team) {
      const TeamQueue& q = store_.queue(team);
      check_set(q.active, model_.active[team], "active");
      check_set(q.parked, model_.parked[team], "parked");
    }
  }

 private:
  void insert_sorted(std::vector<uint32_t>& list, uint32_t task) {
    const auto at = std::lower_bound(list.begin(), list.end(), task, [this](uint32_t a, uint32_t b) {
      return queue_order_less(store_[a], store_[b]);
    });
    list.insert(at, task);
  }

  void check_set(const QueueSet& set, const std::vector<uint32_t>& expected, const char* which) const {
    INFO(which << " set of " << expected.size() << " tasks");
    REQUIRE(std::vector<uint32_t>(set.tasks.begin(), set.tasks.end()) == expected);
    for (uint32_t task : expected) {
      REQUIRE(store_[task].queue_set == set.id);
      REQUIRE(store_[task].slot == QueueSlot::queued);
    }
    if (expected.size() >= QueueSet::kCountFrom) REQUIRE(set.counted);
    if (expected.empty()) REQUIRE_FALSE(set.counted);
    if (!set.counted) return;
    std::map<uint64_t, size_t> counts;
    for (uint32_t task : expected) ++counts[store_[task].class_hash];
    REQUIRE(set.classes.size() == counts.size());
    for (const auto& [hash, entry] : set.classes) {
      REQUIRE(entry.count == counts[hash]);
      if (entry.representative < 0) continue;
      const auto rep = static_cast<uint32_t>(entry.representative);
      REQUIRE(std::find(expected.begin(), expected.end(), rep) != expected.end());
      REQUIRE(store_[rep].class_hash == hash);
      ++representatives_checked;
    }
  }

  TaskStore store_;
  Model model_;

 public:
  mutable size_t representatives_checked = 0;
};

}  // namespace

TEST_CASE("queue sets keep their order, class counts and class representatives under random operations",
          "[engine][queues]") {
  std::mt19937_64 random(20261127);
  StoreUnderTest s;
  Time now = 0;
  for (int step = 0; step < 6'000; ++step) {
    const auto team = static_cast<uint32_t>(random() % kTeams);
    const uint64_t roll = random() % 100;
    if (roll < 45) {  // a submission: few shapes and messages, so that classes repeat
      s.add(team, static_cast<int32_t>(random() % 3), now++, 1 + static_cast<int>(random() % 2),
            "waiting " + std::to_string(random() % 3));
    } else if (roll < 55) {
      s.park_first(team, static_cast<size_t>(random() % 900));
    } else if (roll < 62) {
      s.reactivate();
    } else if (roll < 80) {
      s.cycle(team, random() % 4 != 0);
    } else if (roll < 90) {
      s.cancel(team, random() % 2 == 0, static_cast<size_t>(random()));
    } else {
      s.new_message(team, random() % 2 == 0, static_cast<size_t>(random()), "waiting " + std::to_string(random() % 4));
    }
    s.check();
  }
  CHECK(s.representatives_checked > 10'000);
}

}  // namespace gov::engine::test
