#include "runtime/engine/task_store.hpp"

#include <algorithm>

#include "compiler/support/assert.hpp"
#include "runtime/engine/hash_mix.hpp"

namespace gov::engine {

// std::string compares its chars as unsigned (char_traits<char>), as the big-endian key does;
// a shorter id pads with zeros, which orders it before any longer id it is a prefix of, and
// equal keys (equal first 8 bytes, or a NUL among them) fall back to the strings.
uint64_t id_key_of(std::string_view id) {
  uint64_t key = 0;
  for (size_t i = 0; i < 8; ++i)
    key = (key << 8) | (i < id.size() ? static_cast<unsigned char>(id[i]) : 0u);
  return key;
}

bool queue_order_less(const Task& a, const Task& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submitted_at != b.submitted_at) return a.submitted_at < b.submitted_at;
  return id_less(a, b);
}

bool candidate_order_less(const Task& a, const Task& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
  return id_less(a, b);
}

namespace {

/// Every team × flavor pair its own slot (1 + its position; 0 stays the absent cell's).
std::vector<uint32_t> every_pair_a_cell(size_t team_count, size_t flavor_count) {
  std::vector<uint32_t> slots(team_count * flavor_count);
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<uint32_t>(i + 1);
  return slots;
}

size_t slot_count(const std::vector<uint32_t>& slots) {
  return slots.empty() ? 1 : size_t{*std::max_element(slots.begin(), slots.end())} + 1;
}

}  // namespace

TaskStore::TaskStore(size_t team_count, size_t flavor_count, std::vector<bool> submission_matters)
    : TaskStore(team_count, flavor_count, every_pair_a_cell(team_count, flavor_count),
                std::move(submission_matters)) {}

TaskStore::TaskStore(size_t team_count, size_t flavor_count, std::vector<uint32_t> cell_slots,
                     std::vector<bool> submission_matters)
    : submission_matters_(std::move(submission_matters)),
      flavor_count_(flavor_count),
      has_work_(team_count, 0),
      in_work_teams_(team_count, 0),
      in_changed_teams_(team_count, 0),
      in_parked_teams_(team_count, 0),
      cell_slots_(std::move(cell_slots)),
      admitted_(slot_count(cell_slots_)),
      team_versions_(team_count, 0),
      team_removals_(team_count, 0),
      flavor_versions_(flavor_count, 0),
      in_changed_flavors_(flavor_count, 0),
      cell_versions_(admitted_.size(), 0) {
  GOV_ASSERT(submission_matters_.size() == team_count, "one flag per team");
  GOV_ASSERT(cell_slots_.size() == team_count * flavor_count, "one slot per team and flavor");
  queues_.reserve(team_count);
  for (size_t team = 0; team < team_count; ++team) {
    TeamQueue& q = queues_.emplace_back(QueueLess{&tasks_, &comparisons_});
    q.active.id = next_set_id_++;
    q.parked.id = next_set_id_++;
  }
}

uint32_t TaskStore::add(Task task, bool claim_id) {
  const auto index = static_cast<uint32_t>(tasks_.size());
  if (task.state == TaskState::pending) ++live_;
  task.class_hash = hash_class(task);
  task.queue_class_generation = 0;
  task.id_key = id_key_of(task.id);
  tasks_.push_back(std::move(task));
  queue_classes_.push_back(0);  // no slot until class_slot gives one
  group_of_.push_back(SetClasses::kNoGroup);
  // After the push: the index reads the id back from the task.
  if (claim_id) by_id_.assign(tasks_[index].id, index, id_at());
  return index;
}

int32_t TaskStore::find(std::string_view id) const {
  return static_cast<int32_t>(by_id_.find(id, id_at()));
}

void TaskStore::mark_work(uint32_t team) {
  has_work_[team] = 1;
  if (in_work_teams_[team]) return;
  in_work_teams_[team] = 1;
  work_teams_.push_back(team);
}

void TaskStore::bump_version(uint32_t team) {
  ++team_versions_[team];
  if (in_changed_teams_[team]) return;
  in_changed_teams_[team] = 1;
  changed_teams_.push_back(team);
}

void TaskStore::bump_flavor_version(uint32_t flavor) {
  ++flavor_versions_[flavor];
  if (in_changed_flavors_[flavor]) return;
  in_changed_flavors_[flavor] = 1;
  changed_flavors_.push_back(flavor);
}

void TaskStore::take_changed_flavors(std::vector<uint32_t>& out) {
  out.clear();
  out.swap(changed_flavors_);
  for (uint32_t flavor : out) in_changed_flavors_[flavor] = 0;
}

void TaskStore::take_changed_teams(std::vector<uint32_t>& out) {
  out.clear();
  out.swap(changed_teams_);
  team_visits_ += out.size();
  for (uint32_t team : out) in_changed_teams_[team] = 0;
}

// ---- queue classes

void SlotsByHash::insert(uint64_t hash, uint32_t slot) {
  GOV_ASSERT(slot < std::numeric_limits<uint32_t>::max(), "a class slot is below 2^32 - 1");
  if ((size_ + 1) * 2 > entries_.size()) grow();  // at most half full: short probes
  Entry& entry = entries_[index_of(hash)];
  GOV_ASSERT(entry.slot_plus_one == 0, "a hash is inserted once");
  entry = {hash, slot + 1};
  ++size_;
}

void SlotsByHash::clear() {
  std::fill(entries_.begin(), entries_.end(), Entry{});
  size_ = 0;
}

void SlotsByHash::grow() {
  std::vector<Entry> old(entries_.empty() ? 16 : entries_.size() * 2);
  old.swap(entries_);
  for (const Entry& entry : old) {
    if (entry.slot_plus_one != 0) entries_[index_of(entry.hash)] = entry;
  }
}

// ---- shapes (Kueue's scheduling hash)

namespace {

bool same_pod_set_shape(const PodSetRequest& a, const PodSetRequest& b) {
  return a.name == b.name && a.requested_flavor == b.requested_flavor && a.pods == b.pods && a.request == b.request &&
         a.unavailable_partition == b.unavailable_partition;
}

}  // namespace

TaskShape TaskShape::of(const Task& task) {
  TaskShape shape;
  shape.priority = task.priority;
  shape.requested_flavor = task.requested_flavor;
  shape.pods = task.pods;
  shape.request = task.request;
  shape.unavailable_partition = task.unavailable_partition;
  shape.pod_sets = task.pod_sets;
  return shape;
}

bool TaskShape::matches(const Task& task) const {
  if (priority != task.priority || requested_flavor != task.requested_flavor || pods != task.pods ||
      request != task.request || unavailable_partition != task.unavailable_partition ||
      pod_sets.size() != task.pod_sets.size()) {
    return false;
  }
  for (size_t i = 0; i < pod_sets.size(); ++i) {
    if (!same_pod_set_shape(pod_sets[i], task.pod_sets[i])) return false;
  }
  return true;
}

uint64_t TaskShape::hash(const Task& task) {
  HashMix mix;  // collisions are checked, never trusted
  mix(static_cast<uint32_t>(task.priority));
  mix(static_cast<uint32_t>(task.requested_flavor));
  mix(static_cast<uint64_t>(task.pods));
  for (Amount amount : task.request) mix(static_cast<uint64_t>(amount));
  mix(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(task.unavailable_partition)));
  for (const PodSetRequest& p : task.pod_sets) {
    mix(std::hash<std::string_view>{}(p.name));
    mix(static_cast<uint32_t>(p.requested_flavor));
    mix(static_cast<uint64_t>(p.pods));
    for (Amount amount : p.request) mix(static_cast<uint64_t>(amount));
    mix(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p.unavailable_partition)));
  }
  return mix.value();
}

uint32_t TaskStore::shape_index(uint32_t team, const Task& task) {
  ClassTable& table = queues_[team].classes;
  const uint64_t hash = TaskShape::hash(task);
  const int64_t found = table.shapes_by_hash.find(hash);
  if (found != SlotsByHash::kAbsent && table.shapes[static_cast<size_t>(found)].matches(task))
    return static_cast<uint32_t>(found);
  const auto index = static_cast<uint32_t>(table.shapes.size());
  table.shapes.push_back(TaskShape::of(task));
  if (found == SlotsByHash::kAbsent) table.shapes_by_hash.insert(hash, index);
  return index;
}

QueueClass TaskStore::class_of(const Task& task) const {
  QueueClass value;
  value.requested_flavor = task.requested_flavor;
  value.priority = task.priority;
  value.pods = task.pods;
  if (submission_matters_[static_cast<size_t>(task.team)]) value.submitted_at = task.submitted_at;
  value.request = task.request;
  value.unavailable_partition = task.unavailable_partition;
  value.pod_sets = task.pod_sets.empty() ? nullptr : task.pod_sets.data();
  value.reason = task.last_reason;
  value.message = task.last_message;
  value.message_serial = task.last_message_serial;
  return value;
}

bool TaskStore::same_class(const QueueClass& value, const Task& task) const {
  const Time submitted = submission_matters_[static_cast<size_t>(task.team)] ? task.submitted_at : 0;
  return value.requested_flavor == task.requested_flavor && value.priority == task.priority &&
         value.pods == task.pods && value.submitted_at == submitted && value.request == task.request &&
         value.unavailable_partition == task.unavailable_partition &&
         value.pod_sets == (task.pod_sets.empty() ? nullptr : task.pod_sets.data()) &&
         value.reason == task.last_reason &&
         ((value.message_serial != 0 && value.message_serial == task.last_message_serial) ||
          value.message == task.last_message);
}

uint64_t TaskStore::hash_class(const Task& task) const {
  if (task.team < 0) return 0;  // an invalid task never queues
  HashMix mix;  // collisions are checked, never trusted
  mix(static_cast<uint32_t>(task.requested_flavor));
  mix(static_cast<uint32_t>(task.priority));
  mix(static_cast<uint64_t>(task.pods));
  mix(submission_matters_[static_cast<size_t>(task.team)] ? static_cast<uint64_t>(task.submitted_at) : 0);
  for (Amount amount : task.request) mix(static_cast<uint64_t>(amount));
  mix(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(task.unavailable_partition)));
  if (!task.pod_sets.empty()) mix(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(task.pod_sets.data())));
  mix(task.last_reason ? static_cast<uint64_t>(*task.last_reason) + 1 : 0);
  mix(std::hash<std::string_view>{}(task.last_message));
  return mix.value();
}

uint32_t TaskStore::class_slot(uint32_t task) {
  Task& t = tasks_[task];
  ClassTable& table = queues_[static_cast<size_t>(t.team)].classes;
  if (t.queue_class_generation == table.generation) return queue_classes_[task];
  const int64_t found = table.by_hash.find(t.class_hash);
  uint32_t slot = 0;
  if (found != SlotsByHash::kAbsent && same_class(table.slots[static_cast<size_t>(found)].value, t)) {
    slot = static_cast<uint32_t>(found);
  } else {
    const uint32_t shape = shape_index(static_cast<uint32_t>(t.team), t);
    slot = static_cast<uint32_t>(table.slots.size());
    table.slots.push_back({class_of(t), t.class_hash, {}});
    table.slot_shapes.push_back(shape);
    if (found == SlotsByHash::kAbsent) table.by_hash.insert(t.class_hash, slot);
  }
  queue_classes_[task] = slot;
  t.queue_class_generation = table.generation;
  return slot;
}

void TaskStore::add_class(QueueSet& set, uint32_t task) {
  const uint32_t slot = class_slot(task);
  set.classes.add(slot, 1, -1);
  set.classes.counts[slot].representative = static_cast<int32_t>(task);  // the last one added
}

void TaskStore::remove_class(QueueSet& set, uint32_t task) {
  const Task& t = tasks_[task];
  GOV_ASSERT(t.queue_class_generation == queues_[static_cast<size_t>(t.team)].classes.generation,
             "a queued task has a class slot");
  SetClasses& classes = set.classes;
  const uint32_t slot = queue_classes_[task];
  GOV_ASSERT(slot < classes.counts.size() && classes.counts[slot].count > 0,
             "queued task missing from its class count");
  SetClasses::Count& c = classes.counts[slot];
  if (--c.count == 0) {
    const uint32_t last = classes.present.back();
    classes.present[c.position] = last;
    classes.counts[last].position = c.position;
    classes.present.pop_back();
    ++classes.changes;
    c.representative = -1;
  } else if (c.representative == static_cast<int32_t>(task)) {
    c.representative = -1;
  }
}

// Rebuilt from the queued tasks: each leader counts in its set again, each group gets its
// shape's new index, and every follower a slot of the new generation (queue_class_of holds for
// every queued task). O(queued tasks), after at least 4 × as many slots were made.
void TaskStore::compact_classes(uint32_t team) {
  TeamQueue& q = queues_[team];
  if (q.classes.slots.size() < 64 || q.classes.slots.size() < 4 * q.queued) return;
  q.classes.slots.clear();
  q.classes.slot_shapes.clear();
  q.classes.by_hash.clear();
  q.classes.shapes.clear();
  q.classes.shapes_by_hash.clear();
  ++q.classes.generation;  // every task's slot is stale: the queued ones get new ones now
  for (QueueSet* set : {&q.active, &q.parked}) {
    const uint64_t changes = set->classes.changes;
    set->classes = {};
    set->classes.changes = changes + 1;
    for (uint32_t leader : set->tasks) {
      const uint32_t g = group_of_[leader];
      add_class(*set, leader);
      ShapeGroup& group = groups_[g];
      group.shape = q.classes.slot_shapes[queue_classes_[leader]];
      set->classes.set_group(group.shape, g);
      for (uint32_t follower : group.followers) class_slot(follower);
    }
  }
}

void TaskStore::place(std::set<uint32_t, QueueLess>& tree, uint32_t task, Hint hint) {
  // With an end as hint, a task that goes there costs one comparison (a wrong hint costs one
  // more than a plain insert).
  const auto at = hint == Hint::last ? tree.end() : tree.begin();
  if (!spare_nodes_.empty()) {
    auto node = std::move(spare_nodes_.back());
    spare_nodes_.pop_back();
    node.value() = task;
    if (hint == Hint::none) {
      tree.insert(std::move(node));
    } else {
      tree.insert(at, std::move(node));
    }
  } else if (hint == Hint::none) {
    tree.insert(task);
  } else {
    tree.insert(at, task);
  }
}

void TaskStore::recycle(std::set<uint32_t, QueueLess>& tree, TreeIt it) {
  if (spare_nodes_.size() < kSpareNodes) {
    spare_nodes_.push_back(tree.extract(it));
  } else {
    tree.erase(it);
  }
}

void TaskStore::insert(QueueSet& set, uint32_t task, Hint hint) {
  tasks_[task].slot = QueueSlot::queued;
  place(set.tasks, task, hint);
  add_class(set, task);
}

void TaskStore::erase_at(QueueSet& set, TreeIt it) {
  const uint32_t task = *it;
  recycle(set.tasks, it);
  remove_class(set, task);
}

uint32_t TaskStore::new_group(uint32_t leader, uint32_t shape) {
  uint32_t index = 0;
  if (!free_groups_.empty()) {
    index = free_groups_.back();
    free_groups_.pop_back();
  } else {
    index = static_cast<uint32_t>(groups_.size());
    groups_.emplace_back();
    groups_.back().followers = std::set<uint32_t, QueueLess>(QueueLess{&tasks_, &comparisons_});
  }
  ShapeGroup& group = groups_[index];
  group.leader = leader;
  group.shape = shape;
  group.set = 0;
  return index;
}

void TaskStore::free_group(uint32_t group) {
  GOV_ASSERT(groups_[group].followers.empty(), "a group is freed once its tasks left");
  free_groups_.push_back(group);
}

void TaskStore::join(QueueSet& set, uint32_t task, Hint hint) {
  Task& t = tasks_[task];
  t.slot = QueueSlot::queued;  // a follower is queued too (insert sets it for a leader)
  TeamQueue& q = queues_[static_cast<size_t>(t.team)];
  ++q.queued;
  const uint32_t shape = q.classes.slot_shapes[class_slot(task)];
  const uint32_t existing = set.classes.group_of(shape);
  if (existing == SetClasses::kNoGroup) {
    const uint32_t made = new_group(task, shape);
    group_of_[task] = made;
    attach(set, made, hint);
    return;
  }
  group_of_[task] = existing;
  ShapeGroup& group = groups_[existing];
  if (!set.tasks.key_comp()(task, group.leader)) {
    place(group.followers, task, Hint::last);  // a new task mostly queues last among its like tasks
    return;
  }
  // It goes before the leader (a task requeued after an eviction): it leads, the leader follows.
  const uint32_t before = group.leader;
  erase_at(set, set.tasks.find(before));
  place(group.followers, before, Hint::first);
  group.leader = task;
  insert(set, task, hint);
}

void TaskStore::leave(QueueSet& set, uint32_t task) {
  ShapeGroup& group = groups_[group_of_[task]];
  if (group.leader == task) {
    // The first task (a head being taken) leaves without a search.
    const auto it = *set.tasks.begin() == task ? set.tasks.begin() : set.tasks.find(task);
    GOV_ASSERT(it != set.tasks.end(), "a group's leader is in its set's tree");
    leave_at(set, it);
    return;
  }
  const auto it = group.followers.find(task);
  GOV_ASSERT(it != group.followers.end(), "a queued task leads or follows in its group");
  recycle(group.followers, it);
  group_of_[task] = SetClasses::kNoGroup;
  --queues_[static_cast<size_t>(tasks_[task].team)].queued;
}

void TaskStore::leave_at(QueueSet& set, TreeIt it) {
  const uint32_t task = *it;
  const uint32_t index = group_of_[task];
  erase_at(set, it);
  group_of_[task] = SetClasses::kNoGroup;
  --queues_[static_cast<size_t>(tasks_[task].team)].queued;
  ShapeGroup& group = groups_[index];
  if (group.followers.empty()) {
    set.classes.set_group(group.shape, SetClasses::kNoGroup);
    free_group(index);
    return;
  }
  group.leader = *group.followers.begin();
  recycle(group.followers, group.followers.begin());  // the node serves the leader's place below
  insert(set, group.leader, Hint::none);
}

void TaskStore::detach(QueueSet& set, uint32_t group, TreeIt it) {
  GOV_ASSERT(*it == groups_[group].leader, "a group leaves its set by its leader's node");
  erase_at(set, it);
  set.classes.set_group(groups_[group].shape, SetClasses::kNoGroup);
  groups_[group].set = 0;
  ++group_moves_;
}

void TaskStore::attach(QueueSet& set, uint32_t group, Hint hint) {
  const uint32_t shape = groups_[group].shape;
  const uint32_t there = set.classes.group_of(shape);
  if (there == SetClasses::kNoGroup) {
    groups_[group].set = set.id;
    set.classes.set_group(shape, group);
    insert(set, groups_[group].leader, hint);
    return;
  }
  // Two groups of one shape meet (one was queued while the other was parked): the record with
  // more followers keeps them all, and only the other's tasks are relabelled, so that a task is
  // relabelled O(log n) times at most. The earlier leader leads.
  erase_at(set, set.tasks.find(groups_[there].leader));
  const bool keep_there = groups_[there].followers.size() >= groups_[group].followers.size();
  const uint32_t keep = keep_there ? there : group;
  const uint32_t gone = keep_there ? group : there;
  ShapeGroup& kept = groups_[keep];
  ShapeGroup& merged = groups_[gone];
  group_of_[merged.leader] = keep;
  for (uint32_t task : merged.followers) group_of_[task] = keep;
  group_moves_ += merged.size();
  uint32_t leader = kept.leader, follower = merged.leader;
  if (set.tasks.key_comp()(follower, leader)) std::swap(leader, follower);
  kept.followers.merge(merged.followers);
  place(kept.followers, follower, Hint::none);
  free_group(gone);
  kept.leader = leader;
  kept.set = set.id;
  set.classes.set_group(shape, keep);
  insert(set, leader, hint);
}

void TaskStore::move_all(QueueSet& from, QueueSet& into) {
  if (from.tasks.empty()) return;
  if (into.tasks.size() < from.tasks.size()) swap(from, into);  // ids travel with the sets
  if (from.tasks.empty()) return;  // `into` was empty: the swap moved everything
  // The sets of a team mostly meet end to end (the heads parked in this instant come before the
  // tasks still active behind them): each leader then goes in at the end it joins, one comparison
  // each.
  const QueueLess& less = into.tasks.key_comp();
  std::vector<uint32_t>& moving = moving_groups_;
  moving.clear();
  for (uint32_t leader : from.tasks) moving.push_back(group_of_[leader]);
  if (less(*std::prev(into.tasks.end()), *from.tasks.begin())) {
    for (uint32_t group : moving) {
      detach(from, group, from.tasks.begin());
      attach(into, group, Hint::last);
    }
  } else if (less(*std::prev(from.tasks.end()), *into.tasks.begin())) {
    for (auto g = moving.rbegin(); g != moving.rend(); ++g) {
      detach(from, *g, std::prev(from.tasks.end()));
      attach(into, *g, Hint::first);
    }
  } else {
    for (uint32_t group : moving) {
      detach(from, group, from.tasks.begin());
      attach(into, group, Hint::none);
    }
  }
  GOV_ASSERT(from.tasks.empty(), "queue orders are total: no task is in two sets");
}

void TaskStore::note_parked(uint32_t team) {
  // parked_teams_ lists each team with parked tasks once (a parked set emptied by cancels keeps
  // its team listed until the next reactivation).
  if (in_parked_teams_[team]) return;
  in_parked_teams_[team] = 1;
  parked_teams_.push_back(team);
}

// ---- queues

void TaskStore::enqueue(uint32_t task) {
  Task& t = tasks_[task];
  GOV_ASSERT(t.state == TaskState::pending && t.team >= 0, "only pending tasks of known teams queue");
  const auto team = static_cast<uint32_t>(t.team);
  join(queues_[team].active, task);
  mark_work(team);
  compact_classes(team);
}

void TaskStore::park(uint32_t task) {
  const auto team = static_cast<uint32_t>(tasks_[task].team);
  TeamQueue& q = queues_[team];
  if (q.parked.tasks.empty()) note_parked(team);
  // Heads are parked in queue order as a walk goes down the queue: most go last.
  join(q.parked, task, Hint::last);
}

void TaskStore::make_sticky(uint32_t task) {
  Task& t = tasks_[task];
  t.slot = QueueSlot::sticky;
  queues_[static_cast<size_t>(t.team)].sticky = static_cast<int32_t>(task);
  mark_work(static_cast<uint32_t>(t.team));
}

int32_t TaskStore::take_head(uint32_t team) {
  TeamQueue& q = queues_[team];
  int32_t head = -1;
  if (q.sticky >= 0) {
    head = q.sticky;
    q.sticky = -1;
  } else if (!q.active.tasks.empty()) {
    head = static_cast<int32_t>(*q.active.tasks.begin());
    leave_at(q.active, q.active.tasks.begin());  // its next like task, if any, leads
  }
  has_work_[team] = !q.active.tasks.empty() || q.sticky >= 0;
  if (head >= 0) tasks_[static_cast<size_t>(head)].slot = QueueSlot::head;
  return head;
}

void TaskStore::park_first(uint32_t team, size_t count) {
  TeamQueue& q = queues_[team];
  GOV_ASSERT(q.sticky < 0, "a team with a sticky preemptor takes it as its next head");
  if (count == 0 || q.active.tasks.empty()) return;
  if (q.parked.tasks.empty()) note_parked(team);
  const size_t size = q.active.tasks.size();
  if (count >= size - std::min(size, count)) {
    // Most of the set parks: the rest steps out, the set moves whole, the rest steps back in
    // (no group of theirs meets one of its shape: a set has one group per shape).
    std::vector<uint32_t>& rest = scratch_groups_;
    rest.clear();
    for (size_t i = count; i < size; ++i) {
      const auto last = std::prev(q.active.tasks.end());
      rest.push_back(group_of_[*last]);
      detach(q.active, rest.back(), last);
    }
    move_all(q.active, q.parked);  // q.active is empty afterwards (ids travel with the sets)
    for (auto r = rest.rbegin(); r != rest.rend(); ++r) attach(q.active, *r, Hint::last);
    has_work_[team] = !q.active.tasks.empty();
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint32_t group = group_of_[*q.active.tasks.begin()];
    detach(q.active, group, q.active.tasks.begin());
    attach(q.parked, group, Hint::last);  // heads park in queue order
  }
  has_work_[team] = true;
}

bool TaskStore::reactivate_parked() {
  bool moved = false;
  for (uint32_t team : parked_teams_) {
    in_parked_teams_[team] = 0;
    TeamQueue& q = queues_[team];
    if (q.parked.tasks.empty()) continue;
    move_all(q.parked, q.active);
    mark_work(team);
    moved = true;
  }
  parked_teams_.clear();
  return moved;
}

void TaskStore::dequeue(uint32_t task) {
  Task& t = tasks_[task];
  const auto team = static_cast<uint32_t>(t.team);
  TeamQueue& q = queues_[team];
  if (t.slot == QueueSlot::sticky) q.sticky = -1;
  if (t.slot == QueueSlot::queued) leave(set_of(team, groups_[group_of_[task]]), task);
  t.slot = QueueSlot::none;
}

bool TaskStore::is_parked(uint32_t task) const {
  const Task& t = tasks_[task];
  return t.slot == QueueSlot::queued && groups_[group_of_[task]].set == queues_[static_cast<size_t>(t.team)].parked.id;
}

void TaskStore::reclassify(uint32_t task) {
  Task& t = tasks_[task];
  if (t.slot != QueueSlot::queued) {  // heads, sticky and admitted tasks are in no set
    t.class_hash = hash_class(t);
    t.queue_class_generation = 0;  // a slot is found again when it queues
    return;
  }
  const auto team = static_cast<uint32_t>(t.team);
  TeamQueue& q = queues_[team];
  const ShapeGroup& group = groups_[group_of_[task]];
  if (group.leader != task) {  // a follower counts in no set: its slot only is found anew
    t.class_hash = hash_class(t);
    t.queue_class_generation = 0;
    class_slot(task);
    compact_classes(team);
    return;
  }
  QueueSet& set = set_of(team, group);
  const uint32_t from = queue_classes_[task];
  remove_class(set, task);
  // Tasks of one class that get the same nomination's decision move to the same class: after the
  // first, the move is remembered.
  ClassTable::Move& move = q.classes.slots[from].last_move;
  if (t.last_message_serial != 0 && move.serial == t.last_message_serial && move.reason == t.last_reason) {
    t.class_hash = q.classes.slots[move.to].hash;
    queue_classes_[task] = move.to;  // its slot's generation holds: add_class takes this slot
    add_class(set, task);
  } else {
    t.class_hash = hash_class(t);
    t.queue_class_generation = 0;
    add_class(set, task);
    // add_class may grow the table: the reference above may no longer hold.
    if (t.last_message_serial != 0)
      q.classes.slots[from].last_move = {t.last_message_serial, t.last_reason, queue_classes_[task]};
  }
  compact_classes(team);
}

size_t TaskStore::park_shape(uint32_t head) {
  const Task& h = tasks_[head];
  const auto team = static_cast<uint32_t>(h.team);
  TeamQueue& q = queues_[team];
  // A head's class slot is mostly still valid (it left its set this cycle): its shape without a hash.
  const uint32_t shape =
      h.queue_class_generation == q.classes.generation ? q.classes.slot_shapes[queue_classes_[head]] : shape_index(team, h);
  const uint32_t group = q.active.classes.group_of(shape);
  if (group == SetClasses::kNoGroup) return 0;
  const size_t like = groups_[group].size();
  if (q.parked.tasks.empty()) note_parked(team);
  detach(q.active, group, q.active.tasks.find(groups_[group].leader));
  attach(q.parked, group, Hint::last);
  has_work_[team] = has_active_work(team);
  return like;
}

bool TaskStore::shape_parked(uint32_t task) {
  const Task& t = tasks_[task];
  const auto team = static_cast<uint32_t>(t.team);
  const QueueSet& parked = queues_[team].parked;
  if (parked.tasks.empty()) return false;
  return parked.classes.group_of(shape_index(team, t)) != SetClasses::kNoGroup;
}

void TaskStore::teams_with_work(std::vector<uint32_t>& out) {
  // A team stays listed after its work is taken (take_head, park_shape clear its flag);
  // the listed teams without work leave the list here.
  out.clear();
  size_t kept = 0;
  team_visits_ += work_teams_.size();
  for (uint32_t team : work_teams_) {
    if (!has_work_[team]) {
      in_work_teams_[team] = 0;
      continue;
    }
    work_teams_[kept++] = team;
    out.push_back(team);
  }
  work_teams_.resize(kept);
  std::sort(out.begin(), out.end());
}

void TaskStore::insert_admitted(uint32_t task) {
  const Task& t = tasks_[task];
  for_each_charge(t, [&](uint32_t flavor, const Resources&) {
    const uint32_t slot = held_slot(static_cast<uint32_t>(t.team), flavor);
    std::vector<uint32_t>& list = admitted_[slot];
    const auto pos = std::upper_bound(list.begin(), list.end(), task, [this](uint32_t a, uint32_t b) {
      return candidate_order_less(tasks_[a], tasks_[b]);
    });
    list.insert(pos, task);
    bump_flavor_version(flavor);
    ++cell_versions_[slot];
  });
  bump_version(static_cast<uint32_t>(t.team));
  ++state_serial_;
  for (const ChargePart& part : t.charge) {
    if (part.flavor != t.charge.front().flavor) multi_flavor_admitted_ = true;
  }
  if (t.preempted_at != kNever) marked_admitted_.push_back(task);
}

void TaskStore::expire_preemption_marks(Time now) {
  size_t kept = 0;
  for (uint32_t task : marked_admitted_) {
    const Task& t = tasks_[task];
    if (t.state != TaskState::admitted) continue;  // gone: its leaving moved the versions
    if (t.preempted_at == now) {
      marked_admitted_[kept++] = task;  // still skipped by searches at this time
      continue;
    }
    for_each_charge(t, [&](uint32_t flavor, const Resources&) {
      bump_flavor_version(flavor);
      ++cell_versions_[held_slot(static_cast<uint32_t>(t.team), flavor)];
    });
    bump_version(static_cast<uint32_t>(t.team));
    ++state_serial_;
  }
  marked_admitted_.resize(kept);
}

void TaskStore::erase_admitted(uint32_t task) {
  const Task& t = tasks_[task];
  for_each_charge(t, [&](uint32_t flavor, const Resources&) {
    const uint32_t slot = held_slot(static_cast<uint32_t>(t.team), flavor);
    std::vector<uint32_t>& list = admitted_[slot];
    const auto pos = std::lower_bound(list.begin(), list.end(), task, [this](uint32_t a, uint32_t b) {
      return candidate_order_less(tasks_[a], tasks_[b]);
    });
    GOV_ASSERT(pos != list.end() && *pos == task, "admitted task missing from its candidate list");
    list.erase(pos);
    bump_flavor_version(flavor);
    ++cell_versions_[slot];
  });
  bump_version(static_cast<uint32_t>(t.team));
  ++team_removals_[static_cast<uint32_t>(t.team)];
  ++state_serial_;
}

}  // namespace gov::engine
