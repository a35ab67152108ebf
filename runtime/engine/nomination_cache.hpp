// Nominations remembered while nothing changes: between two changes to usage or to the admitted
// tasks, a task's flavor assignment, victims and pending message are a function of its shape
// (team, instance type, request, priority — and submission time where a policy compares it).
// When many parked heads come back after a finish, most share a shape with one already tried.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/engine/flavor_assigner.hpp"
#include "runtime/engine/preemption.hpp"

namespace gov::engine {

/// The nomination of one task shape: what the cycle needs and the rendered pending message.
struct Nomination {
  Assignment assignment;
  std::vector<Target> targets;
  std::string message;  // rendered on first use
  bool message_ready = false;
};

/// Not thread-safe. Entries stay valid until the next `begin` that finds a new epoch or time.
class NominationCache {
 public:
  /// Starts a lookup round: forgets everything when `epoch` (bumped by every change to usage or
  /// to the admitted tasks) or `now` (which candidates are excluded) moved since the last round.
  void begin(uint64_t epoch, Time now);
  /// The cached nomination of `task`'s shape, or nullptr.
  Nomination* find(const ir::Module& module, const Task& task);
  /// Stores a nomination for `task`'s shape (nullptr when the cache is full); the caller fills it.
  Nomination* insert(const ir::Module& module, const Task& task);

 private:
  struct Key {
    int32_t team = -1;
    int32_t requested_flavor = -1;
    int32_t priority = 0;
    Time submitted_at = 0;  // only when the team's within-team policy compares submission times
    Resources request{};
    friend bool operator==(const Key&, const Key&) = default;
  };
  static Key key_of(const ir::Module& module, const Task& task);
  static uint64_t hash_of(const Key& key);

  static constexpr size_t kMaxEntries = 4096;
  uint64_t epoch_ = ~uint64_t{0};
  Time now_ = 0;
  std::unordered_map<uint64_t, uint32_t> index_;  // hash → entry; lookups only, never iterated
  std::vector<Key> keys_;
  std::deque<Nomination>
      entries_;  // stable addresses; reused: only the first keys_.size() are live
};

}  // namespace gov::engine
