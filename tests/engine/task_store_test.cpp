// The queue sets' bookkeeping under random queue operations, against a plain model: each set
// holds the tasks the model says, each set's tree the first task of each shape there (its shape
// group's leader) in queue order, and each group the others, in queue order; every queued task
// has a class slot of its class; each set's class counts (of its leaders) are exact; and each
// slot's representative (the task Scheduler::quiet_classes tests the class through) is a leader
// of that slot in that set. park_first's bulk path (most of the set parks: the rest steps out and
// the set moves whole) must leave what parking the heads one by one leaves, and park_shape must
// move a head's like tasks as Kueue's SchedulingEquivalenceHashing does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/engine/task_store.hpp"

namespace gov::engine::test {
namespace {

constexpr size_t kTeams = 2;

/// Adds a pending task of one GPU count with a last pending message and queues it.
uint32_t queued_task(TaskStore& store, uint32_t team, int32_t priority, Time submitted, int gpus, std::string message) {
  Task task;
  task.id = "t" + std::to_string(store.size());
  task.team = static_cast<int32_t>(team);
  task.priority = priority;
  task.submitted_at = submitted;
  task.request[ir::index(ir::Resource::gpu)] = gpus;
  task.last_reason = PendingReason::waiting_for_quota;
  task.last_message = std::move(message);
  task.state = TaskState::pending;
  const uint32_t index = store.add(std::move(task), true);
  store.enqueue(index);
  return index;
}

struct Model {
  std::vector<uint32_t> active[kTeams];
  std::vector<uint32_t> parked[kTeams];
};

class StoreUnderTest {
 public:
  StoreUnderTest() : store_(kTeams, 1, std::vector<bool>(kTeams, false)) {}

  uint32_t add(uint32_t team, int32_t priority, Time submitted, int gpus, std::string message) {
    const uint32_t index = queued_task(store_, team, priority, submitted, gpus, std::move(message));
    insert_sorted(model_.active[team], index);
    return index;
  }

  /// Parks the first `count` active leaders of `team` with their like tasks, in the store and in
  /// the model.
  void park_first(uint32_t team, size_t count) {
    store_.park_first(team, count);
    const std::vector<uint32_t> heads = leaders(model_.active[team]);
    for (size_t i = 0; i < std::min(count, heads.size()); ++i) move_shape(team, heads[i]);
  }

  /// Takes the head and parks it with its like tasks (process() for a best-effort FIFO head that
  /// does not fit).
  void park_with_shape(uint32_t team) {
    const int32_t head = store_.take_head(team);
    if (head < 0) return;
    const auto task = static_cast<uint32_t>(head);
    REQUIRE(model_.active[team].front() == task);
    model_.active[team].erase(model_.active[team].begin());
    const size_t like = count_shape(model_.active[team], task);
    REQUIRE(store_.park_shape(task) == like);
    move_shape(team, task);
    store_.park(task);
    insert_sorted(model_.parked[team], task);
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

  /// Cancels the k-th task (mod the count) of one of the team's sets (of the other when it is
  /// empty).
  void cancel(uint32_t team, bool parked, size_t k) {
    if ((parked ? model_.parked[team] : model_.active[team]).empty()) parked = !parked;
    std::vector<uint32_t>& list = parked ? model_.parked[team] : model_.active[team];
    if (list.empty()) return;
    const uint32_t task = list[k % list.size()];
    store_.dequeue(task);
    store_[task].state = TaskState::cancelled;
    list.erase(std::find(list.begin(), list.end(), task));
  }

  /// Gives the k-th queued task of the team a new last message (a new pending decision), with
  /// a serial that names the text (as a nomination's does) or none (0). One serial serves tasks
  /// of every shape here: TaskStore::reclassify may take a serial as naming the text only.
  void new_message(uint32_t team, bool parked, size_t k, std::string message, bool with_serial) {
    const std::vector<uint32_t>& list = parked ? model_.parked[team] : model_.active[team];
    if (list.empty()) return;
    const uint32_t task = list[k % list.size()];
    store_[task].last_message_serial = with_serial ? std::hash<std::string>{}(message) | 1 : 0;
    store_[task].last_message = std::move(message);
    store_.reclassify(task);
  }

  /// How many times the teams' class tables were rebuilt (each rebuild starts a generation).
  uint32_t table_rebuilds() const {
    uint32_t rebuilds = 0;
    for (uint32_t team = 0; team < kTeams; ++team) rebuilds += store_.queue(team).classes.generation - 1;
    return rebuilds;
  }

  void check() const {
    for (uint32_t team = 0; team < kTeams; ++team) {
      const TeamQueue& q = store_.queue(team);
      check_set(team, q.active, model_.active[team], "active");
      check_set(team, q.parked, model_.parked[team], "parked");
    }
  }

 private:
  bool like(uint32_t a, uint32_t b) const {
    return store_[a].priority == store_[b].priority && store_[a].request == store_[b].request;
  }
  size_t count_shape(const std::vector<uint32_t>& list, uint32_t task) const {
    return static_cast<size_t>(std::count_if(list.begin(), list.end(), [&](uint32_t t) { return like(t, task); }));
  }
  /// The first task of each shape, in queue order.
  std::vector<uint32_t> leaders(const std::vector<uint32_t>& list) const {
    std::vector<uint32_t> out;
    for (uint32_t task : list) {
      if (std::none_of(out.begin(), out.end(), [&](uint32_t t) { return like(t, task); })) out.push_back(task);
    }
    return out;
  }
  /// Moves the active tasks of `task`'s shape to the parked set, in the model.
  void move_shape(uint32_t team, uint32_t task) {
    std::vector<uint32_t>& active = model_.active[team];
    std::vector<uint32_t> moving;
    for (uint32_t t : active) {
      if (like(t, task)) moving.push_back(t);
    }
    for (uint32_t t : moving) {
      active.erase(std::find(active.begin(), active.end(), t));
      insert_sorted(model_.parked[team], t);
    }
  }

  void insert_sorted(std::vector<uint32_t>& list, uint32_t task) {
    const auto at = std::lower_bound(list.begin(), list.end(), task, [this](uint32_t a, uint32_t b) {
      return queue_order_less(store_[a], store_[b]);
    });
    list.insert(at, task);
  }

  /// Compares one set with the model; Catch's assertions are per set, not per task (the test
  /// checks every set after every operation).
  void check_set(uint32_t team, const QueueSet& set, const std::vector<uint32_t>& expected, const char* which) const {
    INFO(which << " set of team " << team << ", " << expected.size() << " tasks");
    const std::vector<uint32_t> heads = leaders(expected);
    REQUIRE(std::vector<uint32_t>(set.tasks.begin(), set.tasks.end()) == heads);
    const ClassTable& table = store_.queue(team).classes;
    std::map<uint32_t, uint32_t> counts;
    size_t misplaced = 0;
    size_t wrong_slot = 0;
    for (uint32_t task : expected) {
      const Task& t = store_[task];
      const ShapeGroup* group = store_.group_of(task);
      misplaced += group == nullptr || group->set != set.id || t.slot != QueueSlot::queued ? 1 : 0;
      if (group != nullptr) {
        // The group is every task of the set of this shape: its leader first, the rest in order.
        std::vector<uint32_t> members{group->leader};
        members.insert(members.end(), group->followers.begin(), group->followers.end());
        std::vector<uint32_t> like_tasks;
        for (uint32_t other : expected) {
          if (like(other, task)) like_tasks.push_back(other);
        }
        misplaced += members != like_tasks ? 1 : 0;
      }
      const bool slot_ok = t.queue_class_generation == table.generation && store_.queue_class_of(task) < table.slots.size() &&
                           table.slots[store_.queue_class_of(task)].hash == t.class_hash &&  // a slot is one class
                           table.slots[store_.queue_class_of(task)].value.message == t.last_message &&
                           table.slots[store_.queue_class_of(task)].value.priority == t.priority &&
                           table.slots[store_.queue_class_of(task)].value.request == t.request;
      wrong_slot += slot_ok ? 0 : 1;
      if (std::find(heads.begin(), heads.end(), task) != heads.end()) ++counts[store_.queue_class_of(task)];
    }
    REQUIRE(misplaced == 0);
    REQUIRE(wrong_slot == 0);
    REQUIRE(set.classes.present.size() == counts.size());
    size_t wrong_counts = 0;
    size_t wrong_representatives = 0;
    for (uint32_t slot : set.classes.present) {
      const SetClasses::Count& entry = set.classes.counts[slot];
      wrong_counts += entry.count != counts[slot] || set.classes.present[entry.position] != slot ? 1 : 0;
      if (entry.representative < 0) continue;
      const Task& rep = store_[static_cast<uint32_t>(entry.representative)];
      const ShapeGroup* group = store_.group_of(static_cast<uint32_t>(entry.representative));
      const bool in_set = rep.slot == QueueSlot::queued && group != nullptr && group->set == set.id &&
                          group->leader == static_cast<uint32_t>(entry.representative);
      wrong_representatives += in_set && store_.queue_class_of(static_cast<uint32_t>(entry.representative)) == slot ? 0 : 1;
      ++representatives_checked;
    }
    for (size_t slot = 0; slot < set.classes.counts.size(); ++slot) {
      if (counts.count(static_cast<uint32_t>(slot)) == 0 && set.classes.counts[slot].count != 0) ++wrong_counts;
    }
    REQUIRE(wrong_counts == 0);
    REQUIRE(wrong_representatives == 0);
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
  // A phase that grows the queues (sets of thousands, bulk parks), then one that drains them
  // while giving tasks many new messages (class slots pile up until the table is rebuilt).
  // Shares of the operations in percent: submit, park_first, reactivate, cycle, cancel, park
  // with the shape; the rest give a task a new message.
  struct Phase {
    int steps;
    std::array<uint64_t, 6> shares;
    uint64_t messages;
  };
  for (const Phase& phase : {Phase{6'000, {42, 10, 7, 15, 10, 6}, 3}, Phase{6'000, {4, 5, 5, 8, 48, 4}, 400}}) {
    for (int step = 0; step < phase.steps; ++step) {
      const auto team = static_cast<uint32_t>(random() % kTeams);
      uint64_t roll = random() % 100;
      const std::string message = "waiting " + std::to_string(random() % phase.messages);
      size_t op = 0;
      while (op < phase.shares.size() && roll >= phase.shares[op]) roll -= phase.shares[op++];
      switch (op) {
        case 0:  // few shapes, so that classes repeat
          s.add(team, static_cast<int32_t>(random() % 3), now++, 1 + static_cast<int>(random() % 2), message);
          break;
        case 1: s.park_first(team, static_cast<size_t>(random() % 900)); break;
        case 2: s.reactivate(); break;
        case 3: s.cycle(team, random() % 4 != 0); break;
        case 4: s.cancel(team, random() % 2 == 0, static_cast<size_t>(random())); break;
        case 5: s.park_with_shape(team); break;
        default: s.new_message(team, random() % 2 == 0, static_cast<size_t>(random()), message, random() % 4 != 0); break;
      }
      s.check();
    }
  }
  CHECK(s.representatives_checked > 10'000);
  CHECK(s.table_rebuilds() > 0);
}

namespace {

void decide(TaskStore& store, uint32_t task, std::string message, uint64_t serial) {
  store[task].last_message = std::move(message);
  store[task].last_message_serial = serial;
  store.reclassify(task);
}

}  // namespace

// TaskStore::reclassify remembers the last move between class slots (ClassTable::Move); slot
// numbers change when the table is rebuilt, so a move remembered before must not be taken after.
TEST_CASE("a rebuilt class table forgets the last move of a task between classes", "[engine][queues]") {
  TaskStore store(1, 1, {false});
  const uint32_t first = queued_task(store, 0, 0, 0, 1, "waiting");
  const uint32_t second = queued_task(store, 0, 0, 1, 2, "waiting");
  decide(store, first, "decided", 7);  // remembered: first's old slot, serial 7 -> its new slot
  // The second task's decisions pile up slots until the table is rebuilt, and then some more.
  for (int i = 0; i < 80; ++i) decide(store, second, "message " + std::to_string(i), 0);
  const ClassTable& table = store.queue(0).classes;
  REQUIRE(table.generation > 1);
  // The first task now holds the first slot again (it queues first), the remembered move's
  // origin; the same decision again must leave it in a slot of its own class.
  decide(store, first, "decided", 7);
  const ClassTable::Slot& slot = table.slots.at(store.queue_class_of(first));
  CHECK(slot.value.message == "decided");
  CHECK(slot.value.request == store[first].request);
  CHECK(store.queue_class_of(first) != store.queue_class_of(second));
}

// Equal nonzero serials mean equal texts (Nomination::message_serial), so a class's text is
// not compared when the serials match; texts rendered apart are still one class when equal.
TEST_CASE("tasks whose last messages read the same share a class slot whatever their serials", "[engine][queues]") {
  TaskStore store(1, 1, {false});
  const uint32_t a = queued_task(store, 0, 0, 0, 1, "waiting");
  const uint32_t b = queued_task(store, 0, 0, 0, 1, "waiting");
  const uint32_t c = queued_task(store, 0, 0, 0, 1, "waiting");
  decide(store, a, "needs 8 more GPUs", 3);
  decide(store, b, "needs 8 more GPUs", 9);  // the same text from another rendering
  decide(store, c, "needs 16 more GPUs", 11);
  CHECK(store.queue_class_of(a) == store.queue_class_of(b));
  CHECK(store.queue_class_of(a) != store.queue_class_of(c));
  CHECK(store.queue(0).classes.slots.at(store.queue_class_of(c)).value.message == "needs 16 more GPUs");
}

// The index is probed linearly from the hash's low bits: hashes that share them collide, and
// each must still find its own slot, across the growth of the array and after a clear.
TEST_CASE("a class table's hash index finds every hash's slot through collisions, growth and clear", "[engine][queues]") {
  SlotsByHash index;
  const auto colliding = [](uint32_t k) { return (uint64_t{k} << 32) | 5; };  // same low bits
  for (uint32_t k = 1; k <= 100; ++k) index.insert(colliding(k), k * 3);
  CHECK(index.size() == 100);
  for (uint32_t k = 1; k <= 100; ++k) CHECK(index.find(colliding(k)) == k * 3);
  CHECK(index.find(colliding(101)) == SlotsByHash::kAbsent);
  CHECK(index.find(5) == SlotsByHash::kAbsent);
  index.clear();
  CHECK(index.size() == 0);
  CHECK(index.find(colliding(7)) == SlotsByHash::kAbsent);
  index.insert(colliding(7), 0);
  CHECK(index.find(colliding(7)) == 0);
  CHECK(index.find(colliding(8)) == SlotsByHash::kAbsent);
}

}  // namespace gov::engine::test
