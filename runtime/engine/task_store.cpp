#include "runtime/engine/task_store.hpp"

#include <algorithm>
#include <cassert>

namespace gov::engine {

bool queue_order_less(const Task& a, const Task& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submitted_at != b.submitted_at) return a.submitted_at < b.submitted_at;
  return a.id < b.id;
}

bool candidate_order_less(const Task& a, const Task& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
  return a.id < b.id;
}

TaskStore::TaskStore(size_t team_count, size_t flavor_count)
    : flavor_count_(flavor_count),
      queues_(team_count),
      has_work_(team_count, 0),
      admitted_(team_count * flavor_count),
      team_versions_(team_count, 0) {}

uint32_t TaskStore::add(Task task, bool claim_id) {
  const auto index = static_cast<uint32_t>(tasks_.size());
  if (claim_id) by_id_[task.id] = index;
  tasks_.push_back(std::move(task));
  return index;
}

int32_t TaskStore::find(std::string_view id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? -1 : static_cast<int32_t>(it->second);
}

namespace {

// std heaps keep the greatest element on top; "greater" here means "earlier in queue order".
struct LaterInQueue {
  const std::vector<Task>* tasks;
  bool operator()(uint32_t a, uint32_t b) const {
    return queue_order_less((*tasks)[b], (*tasks)[a]);
  }
};

}  // namespace

void TaskStore::mark_work(uint32_t team) {
  has_work_[team] = 1;
}

void TaskStore::enqueue(uint32_t task) {
  Task& t = tasks_[task];
  assert(t.state == TaskState::pending && t.team >= 0 && "only pending tasks of known teams queue");
  t.slot = QueueSlot::active;
  TeamQueue& q = queues_[static_cast<size_t>(t.team)];
  q.heap.push_back(task);
  std::push_heap(q.heap.begin(), q.heap.end(), LaterInQueue{&tasks_});
  mark_work(static_cast<uint32_t>(t.team));
}

void TaskStore::park(uint32_t task) {
  Task& t = tasks_[task];
  t.slot = QueueSlot::parked;
  TeamQueue& q = queues_[static_cast<size_t>(t.team)];
  if (q.parked.empty()) parked_teams_.push_back(static_cast<uint32_t>(t.team));
  q.parked.push_back(task);
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
  } else {
    const LaterInQueue later{&tasks_};
    while (!q.heap.empty()) {
      const uint32_t top = q.heap.front();
      std::pop_heap(q.heap.begin(), q.heap.end(), later);
      q.heap.pop_back();
      const Task& t = tasks_[top];
      if (t.state == TaskState::pending && t.slot == QueueSlot::active) {
        head = static_cast<int32_t>(top);
        break;
      }
    }
  }
  has_work_[team] = !q.heap.empty() || q.sticky >= 0;
  if (head >= 0) tasks_[static_cast<size_t>(head)].slot = QueueSlot::head;
  return head;
}

bool TaskStore::reactivate_parked() {
  bool moved = false;
  for (uint32_t team : parked_teams_) {
    TeamQueue& q = queues_[team];
    for (uint32_t task : q.parked) {
      const Task& t = tasks_[task];
      if (t.state != TaskState::pending || t.slot != QueueSlot::parked) continue;
      enqueue(task);
      moved = true;
    }
    q.parked.clear();
  }
  parked_teams_.clear();
  return moved;
}

void TaskStore::dequeue(uint32_t task) {
  Task& t = tasks_[task];
  if (t.slot == QueueSlot::sticky) queues_[static_cast<size_t>(t.team)].sticky = -1;
  t.slot = QueueSlot::none;  // heap and parked entries are dropped lazily
}

void TaskStore::teams_with_work(std::vector<uint32_t>& out) const {
  out.clear();
  for (size_t team = 0; team < has_work_.size(); ++team) {
    if (has_work_[team]) out.push_back(static_cast<uint32_t>(team));
  }
}

void TaskStore::insert_admitted(uint32_t task) {
  const Task& t = tasks_[task];
  std::vector<uint32_t>& list =
      admitted_[static_cast<size_t>(t.team) * flavor_count_ + static_cast<size_t>(t.flavor)];
  const auto pos = std::upper_bound(list.begin(), list.end(), task, [this](uint32_t a, uint32_t b) {
    return candidate_order_less(tasks_[a], tasks_[b]);
  });
  list.insert(pos, task);
  ++team_versions_[static_cast<size_t>(t.team)];
  if (t.preempted_at != kNever)
    latest_preempted_admission_ = std::max(latest_preempted_admission_, t.preempted_at);
}

void TaskStore::erase_admitted(uint32_t task) {
  const Task& t = tasks_[task];
  std::vector<uint32_t>& list =
      admitted_[static_cast<size_t>(t.team) * flavor_count_ + static_cast<size_t>(t.flavor)];
  const auto pos = std::lower_bound(list.begin(), list.end(), task, [this](uint32_t a, uint32_t b) {
    return candidate_order_less(tasks_[a], tasks_[b]);
  });
  assert(pos != list.end() && *pos == task && "admitted task missing from its candidate list");
  list.erase(pos);
  ++team_versions_[static_cast<size_t>(t.team)];
}

}  // namespace gov::engine
