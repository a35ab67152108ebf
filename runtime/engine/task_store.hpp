// Every task the engine has seen, each team's queue of pending tasks (best-effort FIFO with
// parked heads and a sticky preemptor, docs/kueue-reference.md §7) and each (team, flavor)'s
// admitted tasks kept in preemption-candidate order (§5.3).
//
// Queues are ordered sets with O(log n) operations, and the active and parked tasks of a team
// move between each other as whole sets (a swap, or the smaller merged into the larger): a
// finish brings every parked task back, and with one team holding 10^6 pending tasks moving
// them one by one made every finish O(n) (issue 26, point 11). A set's ordered tree holds one
// task per shape, the first (ShapeGroup): its like tasks follow it and move with it, so a
// requeue moves O(shapes) nodes, not O(tasks) (issue 21).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/support/assert.hpp"
#include "compiler/support/id_index.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/decision.hpp"

namespace gov::engine {

inline constexpr Time kNever = std::numeric_limits<Time>::min();

/// Where a pending task sits in its team's queue.
enum class QueueSlot : uint8_t {
  none,    // not queued (not pending, or pending in an inactive team)
  queued,  // in its team's active set (competing to be the head) or parked set (a best-effort
           // FIFO head that could not be admitted; waits for a cohort change):
           // TaskStore::is_parked says which
  sticky,  // a preemptor waiting for its victims' quota; its team's head in the next cycle
  head,    // taken as its team's head by the running cycle
};

/// One pod set of a task of several, resolved (docs/semantics-decisions.md "Pod sets").
struct PodSetRequest {
  std::string name;
  int32_t requested_flavor = -1;  // -1: the team's flavors in declared order
  int64_t pods = 1;
  Resources request{};  // the pod set's total (pods × per pod), base units
  /// A GPU partition profile it asks for that no quota gives (interned in the engine), or null.
  const std::string* unavailable_partition = nullptr;
  bool has_unavailable_partition = false;  // also when nothing interns (the check path)
};

/// What an admitted task of several pod sets holds in one flavor (its pod sets there, summed).
struct ChargePart {
  uint32_t flavor = 0;
  Resources amounts{};
};

/// One submitted task, resolved against the module (indices, exact amounts). The engine holds one
/// per task it has seen (gov-bench memory/100k-tasks): fields are grouped by size within the
/// order below to leave little padding between them.
struct Task {
  // The fields the scheduler reads on every look at a task (its queue class and last decision,
  // its cached nomination, a candidate's priority and preemption mark) come first, together in
  // the first two cache lines: a busy engine looks at thousands of tasks per event. Ordered by
  // topic, they spread over five lines of this 472-byte record (docs/perf/analysis.md, issue 21,
  // session 33).
  int32_t team = -1;         // -1 only for invalid tasks naming an unknown team
  int32_t class_index = -1;
  int32_t priority = 0;           // effective priority (docs/semantics.md §3)
  int32_t requested_flavor = -1;  // -1: the team's flavors in declared order
  TaskState state = TaskState::pending;
  QueueSlot slot = QueueSlot::none;
  PreemptionKind preempted_kind = PreemptionKind::in_team;
  bool has_decision = false;  // a decision was emitted since it was submitted
  // The last pending decision emitted, to emit a new one only when it changes.
  std::optional<PendingReason> last_reason;
  int32_t flavor = -1;  // the flavor it holds while admitted (of several pod sets: the first's)
  /// Nomination::message_serial of `last_message` when it came from one, else 0.
  uint64_t last_message_serial = 0;
  // The hash of its queue class, kept up to date by TaskStore::add and TaskStore::reclassify.
  uint64_t class_hash = 0;
  /// The id's first 8 bytes as a big-endian number, zero-padded (TaskStore::add): unequal keys
  /// order as the ids do, so most comparisons in queue and candidate order read no string.
  uint64_t id_key = 0;
  /// Its shape's entry in the scheduler's NominationCache, valid while the cache's generation
  /// is `nomination_generation` (a task's shape never changes; a cleared cache starts a new
  /// generation).
  uint64_t nomination_generation = 0;
  uint32_t nomination_slot = 0;
  /// Its slot in its team's ClassTable (TaskStore::queue_class_of) is valid while this is the
  /// table's generation (0: none; TaskStore::add clears it, so a task copied from another engine
  /// has none).
  uint32_t queue_class_generation = 0;
  uint32_t admissions = 0;     // bumps at every admission: older finish timers are stale
  Time preempted_at = kNever;  // at most one preemption per task per event time (docs/semantics.md §3)
  Time admitted_at = kNever;
  Time submitted_at = 0;
  std::vector<ChargePart> charge;
  /// Several pod sets (or one not named `main`): each assigned a flavor of its own, all or
  /// nothing. `request` is then their sum (what rules read, with `requested_flavor`, the task's
  /// own instance type). Empty: one pod set `main`.
  std::vector<PodSetRequest> pod_sets;
  Resources request{};  // totals in base units; EFA is kept but never charged

  std::string id;
  /// The team name an invalid task gave, when unknown (shared: tasks are copied between engines).
  std::shared_ptr<const std::string> unknown_team;
  int64_t instances = 0;          // whole instances requested (rules read it)
  int64_t pods = 1;
  /// A GPU partition profile it asks for that no quota gives (interned in the engine), or null.
  const std::string* unavailable_partition = nullptr;
  std::optional<Time> duration;
  /// Admitted with several pod sets: each pod set's flavor, and what it holds per flavor.
  std::vector<int32_t> pod_set_flavors;
  uint64_t admission_order = 0;  // EngineCore::admissions at its latest admission (export_state)
  int32_t preempted_by = -1;

  std::string last_message;

  std::vector<RuleWarning> warnings;  // matching `warn` rules, carried by its admissions
  /// The task as it was submitted, while it is live (pending or admitted), encoded
  /// (encode_submitted): what Engine::export_state hands another policy version. Released when
  /// the task ends.
  std::string submitted;
};

/// The tasks of a store in chunks of kChunk: indices and addresses stay stable as it grows, and
/// at most one chunk is partly used (a vector's doubling left up to half its capacity unused:
/// 131,072 tasks' room for 100,000).
class TaskChunks {
 public:
  static constexpr size_t kShift = 10;
  static constexpr size_t kChunk = size_t{1} << kShift;
  size_t size() const { return size_; }
  Task& operator[](size_t index) { return chunks_[index >> kShift][index & (kChunk - 1)]; }
  const Task& operator[](size_t index) const { return chunks_[index >> kShift][index & (kChunk - 1)]; }
  void push_back(Task&& task) {
    if ((size_ & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<Task[]>(kChunk));
    (*this)[size_++] = std::move(task);
  }

 private:
  std::vector<std::unique_ptr<Task[]>> chunks_;
  size_t size_ = 0;
};

/// Task::id_key of an id.
uint64_t id_key_of(std::string_view id);
/// a.id < b.id, through the ids' keys first.
inline bool id_less(const Task& a, const Task& b) {
  if (a.id_key != b.id_key) return a.id_key < b.id_key;
  return a.id < b.id;
}

/// Calls f(flavor, amounts) for every flavor an admitted task holds quota in: its flavor and
/// request, or each part of a task of several pod sets.
template <class F>
void for_each_charge(const Task& task, F&& f) {
  if (task.charge.empty()) {
    f(static_cast<uint32_t>(task.flavor), task.request);
    return;
  }
  for (const ChargePart& part : task.charge) f(part.flavor, part.amounts);
}

/// What an admitted task holds in `flavor`, or null when nothing.
inline const Resources* charged_in(const Task& task, uint32_t flavor) {
  if (task.charge.empty()) return task.flavor == static_cast<int32_t>(flavor) ? &task.request : nullptr;
  for (const ChargePart& part : task.charge) {
    if (part.flavor == flavor) return &part.amounts;
  }
  return nullptr;
}

/// Queue order inside a team (docs/kueue-reference.md §7): higher priority, earlier submission, id.
bool queue_order_less(const Task& a, const Task& b);
/// Preemption-candidate order inside one team (docs/kueue-reference.md §5.3 rules 4–6): lower
/// priority, more recently admitted, id.
bool candidate_order_less(const Task& a, const Task& b);

/// Orders task indices in queue order, counting the comparisons (the work of queue operations,
/// which tests compare across queue lengths).
struct QueueLess {
  const TaskChunks* tasks = nullptr;
  uint64_t* comparisons = nullptr;
  bool operator()(uint32_t a, uint32_t b) const {
    ++*comparisons;
    return queue_order_less((*tasks)[a], (*tasks)[b]);
  }
};

/// What Kueue's SchedulingEquivalenceHashing hashes of a workload (computeSchedulingHash): its
/// priority and, per pod set, its name, count, requests and node selection (the instance type it
/// names, a partition profile no quota gives). Tasks of one team with equal shapes are parked
/// together (TaskStore::park_shape).
struct TaskShape {
  int32_t priority = 0;
  int32_t requested_flavor = -1;
  int64_t pods = 1;
  Resources request{};
  const std::string* unavailable_partition = nullptr;  // interned: equal names, equal pointers
  std::vector<PodSetRequest> pod_sets;                 // of a task of several (names, counts, requests)

  static TaskShape of(const struct Task& task);
  bool matches(const struct Task& task) const;
  static uint64_t hash(const struct Task& task);
};

/// What a queued task's nomination and last pending decision depend on: its shape (as
/// NominationCache keys it) and its last pending reason and message. Tasks of one class queued
/// behind a head of that class that was parked without a new decision would each be parked the
/// same way, one cycle each, with nothing changing: the scheduler parks them at once.
struct QueueClass {
  int32_t requested_flavor = -1;
  int32_t priority = 0;
  int64_t pods = 1;       // part of the shape Kueue hashes (TaskShape), so a slot has one shape
  Time submitted_at = 0;  // only when the team's within-team policy compares submission times
  Resources request{};
  const std::string* unavailable_partition = nullptr;  // interned: equal names, equal pointers
  /// A task of several pod sets is a class of its own (its pod sets, whose buffer moves with the
  /// task, identify it): their names are in its messages, which the nomination cache does not key.
  const PodSetRequest* pod_sets = nullptr;
  std::optional<PendingReason> reason;
  std::string message;
  /// Task::last_message_serial of the task the class was taken from: a task with the same
  /// nonzero serial has the same text, which is then not compared.
  uint64_t message_serial = 0;
};

/// A class table's slots by class hash: open addressing over 16-byte entries that hold the whole
/// hash beside the slot, at most half full, so that a lookup is one short probe of one array,
/// with no node to follow and no division (the std::unordered_map it replaces cost both, and
/// `TaskStore::class_slot` spent three quarters of its time there on the 85% trace:
/// docs/perf/analysis.md, session 35). Lookups, inserts and clear only.
class SlotsByHash {
 public:
  static constexpr int64_t kAbsent = -1;

  /// The slot `hash` was inserted with, or kAbsent.
  int64_t find(uint64_t hash) const {
    if (entries_.empty()) return kAbsent;
    const Entry& entry = entries_[index_of(hash)];
    return entry.slot_plus_one == 0 ? kAbsent : static_cast<int64_t>(entry.slot_plus_one - 1);
  }
  /// Maps `hash`, which must be absent, to `slot` (below 2^32 - 1).
  void insert(uint64_t hash, uint32_t slot);
  /// Forgets every hash, keeping the array.
  void clear();
  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t hash = 0;
    uint32_t slot_plus_one = 0;  // 0: empty
  };
  /// The entry holding `hash`, or the empty one where it would go.
  size_t index_of(uint64_t hash) const {
    const size_t mask = entries_.size() - 1;
    size_t i = hash & mask;
    while (entries_[i].slot_plus_one != 0 && entries_[i].hash != hash) i = (i + 1) & mask;
    return i;
  }
  void grow();

  std::vector<Entry> entries_;  // a power of two of them, or none
  size_t size_ = 0;
};

/// One team's queue classes: each class among its queued tasks has a slot, which a queued task
/// names (TaskStore::queue_class_of, valid while Task::queue_class_generation is the table's
/// generation). Slots are found by class hash and checked with the whole class; a class whose
/// hash another class holds gets a slot of its own that no hash finds (so one class may have
/// several slots, and a slot is always one class). The table is rebuilt from the queued tasks
/// when it has grown to many times their number (TaskStore::compact_classes).
struct ClassTable {
  /// The last move of a queued task out of a slot whose new message came from a nomination
  /// (Task::last_message_serial): a task leaving the slot with the same reason and serial (hence
  /// the same text; the slot gives the rest of the class) lands in slot `to`, found without
  /// hashing or comparing the text (the tasks of a class decide anew together).
  struct Move {
    uint64_t serial = 0;  // 0: none yet
    std::optional<PendingReason> reason;
    uint32_t to = 0;
  };
  struct Slot {
    QueueClass value;
    uint64_t hash = 0;
    Move last_move;
  };
  std::vector<Slot> slots;
  /// Each slot's shape, an index into `shapes` (a class has one shape): apart from the slots,
  /// whose records are large, since walks read it for every task.
  std::vector<uint32_t> slot_shapes;
  SlotsByHash by_hash;  // the first slot of each hash
  /// The shapes of the slots, each once (found by TaskShape::hash, checked with the whole shape).
  std::vector<TaskShape> shapes;
  SlotsByHash shapes_by_hash;  // the first shape of each hash
  uint32_t generation = 1;
};

/// How many leaders (tasks in the set's tree) of each class slot a queue set holds, and its
/// groups of like tasks.
struct SetClasses {
  struct Count {
    uint32_t count = 0;
    /// A task of the slot in the set (the last one added), or -1 when it left and no other was
    /// added since: the scheduler tests a class through it (Scheduler::quiet_classes).
    int32_t representative = -1;
    uint32_t position = 0;  // in `present`, while count > 0
  };
  std::vector<Count> counts;      // by slot; may be shorter than the table
  std::vector<uint32_t> present;  // the slots with count > 0, in no particular order
  /// The set's group of each shape (ClassTable::shapes; an index into TaskStore's groups), or
  /// kNoGroup: a set holds at most one group of a shape, and only its first task, the leader, is
  /// in the set's tree and counted above (TaskStore::ShapeGroup).
  static constexpr uint32_t kNoGroup = UINT32_MAX;
  std::vector<uint32_t> shape_groups;
  uint32_t group_of(uint32_t shape) const { return shape < shape_groups.size() ? shape_groups[shape] : kNoGroup; }
  void set_group(uint32_t shape, uint32_t group) {
    if (shape >= shape_groups.size()) shape_groups.resize(shape + 1, kNoGroup);
    shape_groups[shape] = group;
  }
  /// Moves whenever `present` changes (it only grows, and travels with the set, as its id does):
  /// the same set id and number, the same slots present.
  uint64_t changes = 0;
  uint32_t count(uint32_t slot) const { return slot < counts.size() ? counts[slot].count : 0; }
  /// Member by member (QueueSet's swap).
  friend void swap(SetClasses& a, SetClasses& b) noexcept {
    a.counts.swap(b.counts);
    a.present.swap(b.present);
    a.shape_groups.swap(b.shape_groups);
    std::swap(a.changes, b.changes);
  }
  /// Counts `n` more tasks of `slot`, `representative` one of them (kept if the slot has one).
  void add(uint32_t slot, uint32_t n, int32_t representative) {
    if (slot >= counts.size()) counts.resize(slot + 1);
    Count& c = counts[slot];
    if (c.count == 0) {
      c.position = static_cast<uint32_t>(present.size());
      present.push_back(slot);
      ++changes;
    }
    c.count += n;
    if (c.representative < 0) c.representative = representative;
  }
};

/// Kueue's like tasks (SchedulingEquivalenceHashing): the queued tasks of one team and one shape
/// in one queue set. Only the group's first task in queue order, its leader, can be a head: a
/// best-effort FIFO head that parks takes its like tasks along (TaskStore::park_shape), and when
/// it is admitted the next one leads. So a set's tree holds the leaders only, and a group moves
/// between sets as one record (its leader's node and its set id): a requeue of a queue of like
/// tasks (a sweep) costs O(shapes), not O(tasks), and the quiet-cycle skip never meets a like
/// task (docs/perf/analysis.md, issue 21, session 42).
struct ShapeGroup {
  uint32_t leader = 0;
  uint32_t set = 0;    // QueueSet::id of the set holding it
  uint32_t shape = 0;  // in its team's ClassTable::shapes (renumbered by TaskStore::compact_classes)
  /// The other tasks, in queue order (all later than the leader).
  std::set<uint32_t, QueueLess> followers;
  size_t size() const { return followers.size() + 1; }
};

/// An ordered set of queued tasks (the leaders of its shape groups) and the count of each class
/// among them.
struct QueueSet {
  std::set<uint32_t, QueueLess> tasks;
  SetClasses classes;
  uint32_t id = 0;  // what ShapeGroup::set holds for its groups; moves with the set
  /// Trades the two sets' contents, ids included, member by member: std::swap's three moves
  /// and a destruction cost about a hundred instructions more, and the queues trade sets on most
  /// moves (TaskStore::move_all).
  friend void swap(QueueSet& a, QueueSet& b) noexcept {
    a.tasks.swap(b.tasks);
    swap(a.classes, b.classes);
    std::swap(a.id, b.id);
  }
};

/// One team's pending tasks.
struct TeamQueue {
  explicit TeamQueue(QueueLess less) {
    active.tasks = std::set<uint32_t, QueueLess>(less);
    parked.tasks = std::set<uint32_t, QueueLess>(less);
  }
  QueueSet active;      // competing to be the head, in queue order
  QueueSet parked;      // parked heads (and their like tasks)
  int32_t sticky = -1;  // the preemptor that is its head in the next cycle
  size_t queued = 0;    // tasks in `active` and `parked`, followers included
  ClassTable classes;   // of the tasks in `active` and `parked`
};

/// Hashes std::string keys by std::string_view, so lookups do not allocate.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

/// Owns the tasks; indices are stable for the life of the store. Not thread-safe; not copyable
/// or movable (the queues' orderings point at the tasks).
class TaskStore {
 public:
  /// `submission_matters[t]`: team t's within-team policy compares submission times (they are
  /// then part of a task's queue class). `cell_slots`: per team × flavor, the slot of the team's
  /// quota cell there (ir::QuotaTable::slots: 0 where it declares none, else 1 + its declared
  /// index), so that the per-cell lists and versions grow with the quotas, not with teams × the
  /// catalog; only cells with a slot may hold admitted tasks.
  TaskStore(size_t team_count, size_t flavor_count, std::vector<uint32_t> cell_slots,
            std::vector<bool> submission_matters);
  /// A store where every team × flavor pair is a cell (tests, hand-built states).
  TaskStore(size_t team_count, size_t flavor_count, std::vector<bool> submission_matters);
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  size_t size() const { return tasks_.size(); }
  Task& operator[](uint32_t index) { return tasks_[index]; }
  const Task& operator[](uint32_t index) const { return tasks_[index]; }
  /// A queued task's slot in its team's ClassTable. Kept apart from the Task, in a dense array:
  /// the quiet-cycle skip reads it for every task it walks, and a task's record (472 bytes) is a
  /// cache miss where 4 bytes of this array mostly are not.
  uint32_t queue_class_of(uint32_t task) const { return queue_classes_[task]; }

  /// Adds a task; the id now names it (a later task with the same id replaces the name only
  /// when `claim_id`).
  uint32_t add(Task task, bool claim_id);
  /// The latest task with this id, or -1.
  int32_t find(std::string_view id) const;
  /// Live tasks (pending or admitted): those added pending, less those ended since (O(1), for
  /// the embedding runtime's bound on live tasks).
  size_t live() const { return live_; }
  /// Records that a live task ended (finished or cancelled).
  void ended() {
    GOV_ASSERT(live_ > 0, "a task ended that was never live");
    --live_;
  }

  // ---- queues
  /// Puts a pending task in its team's active set (it competes again).
  void enqueue(uint32_t task);
  /// Parks a head that could not be admitted (best-effort FIFO).
  void park(uint32_t task);
  /// Makes a preemptor its team's head for the next cycle.
  void make_sticky(uint32_t task);
  /// Takes the team's head for a cycle (the sticky preemptor, else the best active task), or -1.
  int32_t take_head(uint32_t team);
  /// Parks the team's first `count` active leaders (or all, when fewer), in queue order, each with
  /// its like tasks: what `count` cycles that each take the team's head and park it leave,
  /// without the steps between (the team has no sticky preemptor). O(min(count, rest) · log n)
  /// plus a merge into the parked set: the parking groups move one by one when they are fewer
  /// than those that stay, else those that stay step out, the set moves whole and they step back in.
  void park_first(uint32_t team, size_t count);
  /// Moves every parked task of the cohort back into its heap; returns whether any moved.
  bool reactivate_parked();
  /// Forgets a pending task that is cancelled.
  void dequeue(uint32_t task);
  /// Whether a pending task is parked.
  bool is_parked(uint32_t task) const;
  /// Records that a task's last pending reason or message changed (its queue class); the
  /// class hash is kept from then on, so queue moves do not hash.
  void reclassify(uint32_t task);
  /// Kueue's SchedulingEquivalenceHashing for a best-effort FIFO head `head` that was just
  /// parked (no fit, or no victims: handleInadmissibleHash): parks every active task of its team
  /// with its shape, without a decision (its active group, as one record); returns how many.
  /// O(log n).
  size_t park_shape(uint32_t head);
  /// Whether a task of `task`'s shape is parked in its team (Kueue's hashToBulkMoveReason, which
  /// its requeue clears as reactivate_parked empties the parked sets): a task submitted then is
  /// parked at once (PushOrUpdate).
  bool shape_parked(uint32_t task);
  /// The shape group of a queued task, or null when it is not queued (tests).
  const ShapeGroup* group_of(uint32_t task) const {
    return group_of_[task] == SetClasses::kNoGroup ? nullptr : &groups_[group_of_[task]];
  }
  /// Whether the team has an active or sticky task.
  bool has_active_work(uint32_t team) const {
    return !queues_[team].active.tasks.empty() || queues_[team].sticky >= 0;
  }
  /// Queue comparisons made so far: the work of queue operations, for tests.
  uint64_t queue_comparisons() const { return comparisons_; }
  /// Shape groups moved between sets and tasks relabelled when two groups merged so far: the
  /// work of queue moves that make no comparison, for the same tests.
  uint64_t group_moves() const { return group_moves_; }
  /// Teams looked at so far by teams_with_work and take_changed_teams: the per-team work of the
  /// cycles, for tests that compare it across team counts.
  uint64_t team_visits() const { return team_visits_; }
  /// Teams whose queue has an active or sticky task, in declaration order. O(k log k) for the k
  /// teams listed with work since the last call, not O(teams): a cycle touches only the teams
  /// that have heads (issue 21).
  void teams_with_work(std::vector<uint32_t>& out);
  const TeamQueue& queue(uint32_t team) const { return queues_[team]; }

  // ---- admitted tasks, per (team, flavor) in candidate order
  void insert_admitted(uint32_t task);
  void erase_admitted(uint32_t task);
  const std::vector<uint32_t>& admitted(uint32_t team, uint32_t flavor) const {
    return admitted_[cell_slot(team, flavor)];  // the absent cell's list is empty
  }
  /// Bumped whenever the team's admitted tasks change in any flavor (so does its usage): what
  /// the nomination cache checks its entries against.
  uint64_t team_version(uint32_t team) const { return team_versions_[team]; }
  /// Bumped whenever an admitted task of the team leaves (finished, cancelled or evicted): Kueue's
  /// ClusterQueue AllocatableResourceGeneration, which only a removal moves (deleteWorkload), and
  /// which dates a flavor scan's progress (Scheduler::progress_of).
  uint64_t team_removals(uint32_t team) const { return team_removals_[team]; }
  /// Bumped whenever any team's admitted tasks in `flavor` change (so does the usage there):
  /// what a nomination that read only that flavor's state is checked against
  /// (Nomination::flavor_local).
  uint64_t flavor_version(uint32_t flavor) const { return flavor_versions_[flavor]; }
  /// Bumped whenever the team's admitted tasks in `flavor` change (so does its usage there).
  uint64_t cell_version(uint32_t team, uint32_t flavor) const { return cell_versions_[cell_slot(team, flavor)]; }
  /// Moves into `out` (cleared first) the teams whose version changed since the last call, each
  /// once, in no particular order. One consumer: the scheduler's FlavorStamps, which keeps its
  /// sums in step with the versions in O(changed teams) instead of O(quotas) per cycle.
  void take_changed_teams(std::vector<uint32_t>& out);
  /// The same for the instance types whose flavor_version changed (the same consumer).
  void take_changed_flavors(std::vector<uint32_t>& out);
  /// Target searches skip tasks preempted at the current time, so a search made at time T may
  /// change at a later time when a task preempted at T was admitted again at T: at `now`, every
  /// such task no longer preempted now counts as changed, as if admitted again (its cells',
  /// instance types' and team's versions, and the state serial, move), so that what is kept
  /// under those versions (nominations, their verdicts, the searches' memos) is looked at again
  /// where it may differ, and nowhere else. Called before a cycle reads the versions.
  void expire_preemption_marks(Time now);
  /// Whether a task charged in more than one instance type was ever admitted (one way: it stays
  /// true). Until then removing any admitted task changes usage in one type only, which
  /// FlavorStamps' finer stamps under fair sharing rely on.
  bool multi_flavor_admitted() const { return multi_flavor_admitted_; }
  /// Records that a task was marked preempted (Task::preempted_at): candidate walks skip tasks
  /// preempted at the current time, so what they found may change (OwnHeldMemo).
  void note_preempted() {
    ++preemptions_;
    ++state_serial_;
  }
  uint64_t preemptions() const { return preemptions_; }
  /// Bumped whenever any task is admitted or leaves its admission, and whenever one is marked
  /// preempted: while it and the time are the same, so are the admitted tasks, what a search
  /// may take of them, and, between cycles, the usage (FlavorAssigner's memo of searches).
  uint64_t state_serial() const { return state_serial_; }

 private:
  void mark_work(uint32_t team);
  void bump_version(uint32_t team);
  void bump_flavor_version(uint32_t flavor);
  QueueClass class_of(const Task& task) const;
  bool same_class(const QueueClass& value, const Task& task) const;
  uint64_t hash_class(const Task& task) const;
  using TreeIt = std::set<uint32_t, QueueLess>::const_iterator;
  /// Where a task is expected to go in an ordered set: anywhere, first or last.
  enum class Hint : uint8_t { none, first, last };
  /// A task joins `set`: a group of its shape there, else a new one (it then leads it).
  void join(QueueSet& set, uint32_t task, Hint hint = Hint::none);
  /// A queued task of `set` leaves it (the next of its group leads, if any).
  void leave(QueueSet& set, uint32_t task);
  /// The group's leader, at `it` in `set`'s tree, leaves it; the next task of the group leads.
  void leave_at(QueueSet& set, TreeIt it);
  /// Takes a group out of `set` (its leader at `it`), to attach it elsewhere.
  void detach(QueueSet& set, uint32_t group, TreeIt it);
  /// Puts a detached group into `set`, merged into the group of its shape there if any.
  void attach(QueueSet& set, uint32_t group, Hint hint);
  /// A leader enters or leaves a set's tree and class counts.
  void insert(QueueSet& set, uint32_t task, Hint hint = Hint::none);
  void erase_at(QueueSet& set, TreeIt it);
  /// A task's node goes into an ordered set (a spare node when there is one), or leaves it (its
  /// node kept as a spare).
  void place(std::set<uint32_t, QueueLess>& tree, uint32_t task, Hint hint);
  void recycle(std::set<uint32_t, QueueLess>& tree, TreeIt it);
  uint32_t new_group(uint32_t leader, uint32_t shape);
  void free_group(uint32_t group);
  QueueSet& set_of(uint32_t team, const ShapeGroup& group) {
    TeamQueue& q = queues_[team];
    return group.set == q.active.id ? q.active : q.parked;
  }
  /// The task's slot in its team's class table, found or made (it must be queued or queuing).
  uint32_t class_slot(uint32_t task);
  void add_class(QueueSet& set, uint32_t task);
  void remove_class(QueueSet& set, uint32_t task);
  /// The shape index of `task`'s shape in its team's table, added when new.
  uint32_t shape_index(uint32_t team, const Task& task);
  /// Rebuilds a team's class table from its queued tasks when it holds many more slots than
  /// they need (classes of tasks that left stay until then). Amortised O(1) per slot made.
  void compact_classes(uint32_t team);
  /// Moves every group of `from` into `into` (the smaller set's groups move, merged into `into`'s
  /// groups of their shapes; the sets may trade places). `into` then holds them all and `from`
  /// is empty.
  void move_all(QueueSet& from, QueueSet& into);
  void note_parked(uint32_t team);

  uint64_t comparisons_ = 0;
  uint64_t group_moves_ = 0;
  uint64_t team_visits_ = 0;
  std::vector<bool> submission_matters_;  // per team
  uint32_t next_set_id_ = 1;
  size_t flavor_count_ = 0;
  size_t live_ = 0;
  TaskChunks tasks_;
  IdIndex by_id_;  // task ids to indices into tasks_ (the latest task of each id)
  std::vector<uint32_t> queue_classes_;  // every task's class slot (queue_class_of), by index
  std::vector<uint32_t> group_of_;  // per task: its ShapeGroup while queued, else kNoGroup
  std::vector<ShapeGroup> groups_;
  std::vector<uint32_t> free_groups_;  // indices of groups_ not in use
  /// A task's id by index, as by_id_ reads it back (a task's id never changes once added).
  auto id_at() const {
    return [this](uint32_t index) -> std::string_view { return tasks_[index].id; };
  }
  std::vector<TeamQueue> queues_;
  /// Nodes of queue sets' trees kept for reuse: a head moves from the active to the parked set
  /// without a free and a malloc (at most kSpareNodes kept).
  static constexpr size_t kSpareNodes = 1024;
  std::vector<std::set<uint32_t, QueueLess>::node_type> spare_nodes_;
  std::vector<uint32_t> scratch_groups_;  // park_first: the groups that stay active
  std::vector<uint32_t> moving_groups_;   // move_all
  std::vector<uint8_t> has_work_;                // per team: heap or sticky may hold a task
  std::vector<uint32_t> work_teams_;             // teams listed as having work (unordered)
  std::vector<uint8_t> in_work_teams_;           // per team: listed in work_teams_
  std::vector<uint32_t> changed_teams_;          // teams whose version changed since taken
  std::vector<uint8_t> in_changed_teams_;        // per team: listed in changed_teams_
  std::vector<uint32_t> parked_teams_;           // teams with parked tasks (unordered)
  std::vector<uint8_t> in_parked_teams_;         // per team: listed in parked_teams_
  uint32_t cell_slot(uint32_t team, uint32_t flavor) const {
    return cell_slots_[static_cast<size_t>(team) * flavor_count_ + flavor];
  }
  /// The slot of a cell that gains or loses an admitted task (never the absent one).
  uint32_t held_slot(uint32_t team, uint32_t flavor) const {
    const uint32_t slot = cell_slot(team, flavor);
    GOV_ASSERT(slot != 0, "an admitted task charged where its team has no quota");
    return slot;
  }
  std::vector<uint32_t> cell_slots_;             // team × flavor: the cell's slot
  std::vector<std::vector<uint32_t>> admitted_;  // per cell slot
  std::vector<uint64_t> team_versions_;          // per team
  std::vector<uint64_t> team_removals_;          // per team
  std::vector<uint64_t> flavor_versions_;        // per flavor
  std::vector<uint32_t> changed_flavors_;        // flavors whose version changed since taken
  std::vector<uint8_t> in_changed_flavors_;      // per flavor: listed in changed_flavors_
  std::vector<uint64_t> cell_versions_;          // per cell slot
  /// Admitted while marked preempted (Task::preempted_at): expire_preemption_marks's tasks.
  std::vector<uint32_t> marked_admitted_;
  bool multi_flavor_admitted_ = false;
  uint64_t preemptions_ = 0;
  uint64_t state_serial_ = 1;
};

}  // namespace gov::engine
