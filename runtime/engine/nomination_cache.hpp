// Nominations remembered while nothing they read changes. A task's flavor assignment, victims and
// pending message are a function of its shape (team, instance type, request, priority — and
// submission time where a policy compares it) and of the state of the instance types it may use:
// the usage and admitted tasks there, and the fair-sharing shares of the teams with a quota there
// (a team's share depends on its own usage in every type). When parked heads come back after a
// finish, most of them ask about types the finish did not touch, or share a shape with a head
// already tried.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/flavor_assigner.hpp"
#include "runtime/engine/preemption.hpp"

namespace gov::engine {

/// The nomination of one task shape: what the cycle needs and the rendered pending message.
struct Nomination {
  Assignment assignment;
  std::vector<Target> targets;
  std::string message;  // rendered on first use
  bool message_ready = false;
  /// Names the text of `message` once rendered: a new number at every rendering (never 0), so
  /// equal serials mean equal texts (Task::last_message_serial, PendingUpdate::message_serial).
  uint64_t message_serial = 0;
  /// A parking nomination that read only its team's own state (FlavorAssigner::own_determined):
  /// it holds while Scheduler::own_version is `own_version` and every cohort bound holds, whatever
  /// the stamps of its instance types say (Scheduler::still_own_determined).
  bool own_determined = false;
  uint64_t own_version = 0;
  /// The Scheduler's number of the computation that filled this entry in (never 0): equal
  /// numbers, the same assignment and targets (a verdict on a class remembers it).
  uint64_t fill = 0;
  std::vector<FlavorAssigner::CohortBound> cohort_bounds;
  /// What the own-determined answer read, to renew it when the team's own state moved
  /// (Scheduler::renew_own_answer).
  FlavorAssigner::OwnReads own_reads;
  /// The own_version under which a renewal last failed (0: none): not tried again under it.
  uint64_t renewal_failed_at = 0;
  /// A nomination that read only the admitted tasks and usage in the flavors its task may use
  /// (FlavorAssigner::flavor_local): it holds while their FlavorStamps::local stamps hold,
  /// whatever other flavors' changes did to the teams' versions.
  bool flavor_local = false;
  /// Scheduler::set_order_keys's fair-sharing keys for this assignment, computed when the team's
  /// TaskStore::team_version was `order_keys_version` − 1 (0: not computed since the assignment
  /// was). They read only the team's usage and the assignment, and at a cycle's start the usage
  /// is a function of the team's admitted tasks, hence of its version.
  uint64_t order_keys_version = 0;
  Drs share;
  bool borrows_requested = false;

  /// A cycle parks its task: no instance type fits, or none does without victims and the search
  /// found none (Scheduler::process, and skip_quiet_cycles's test of the cycles ahead).
  bool parks() const { return assignment.mode.mode == FitMode::no_fit || (assignment.preempt_mode() && targets.empty()); }
};

/// Per instance type, a number that changes whenever anything a nomination in that type reads
/// may have changed, beside the type's local stamp (TaskStore::flavor_version: its admitted tasks
/// and usage). What the number sums depends on the policy:
/// - classical order: TaskStore::team_version of every team with a quota in the type (every
///   change of usage or of admitted tasks goes with a change of a team's admitted set);
/// - fair sharing in a flat cohort: per team with a quota in the type, a count of the changes of
///   its borrowed amounts (borrowed_amounts). A nomination there reads the type's own state and
///   the shares of teams with a quota in it, with the request added or a candidate taken out in
///   that type, which are functions of the type's usage and of those amounts: a change in
///   another type by a team that borrows no more and no less than before (most changes: a team
///   within its nominal) leaves the number alone. Only while every admitted task is charged in
///   one type (TaskStore::multi_flavor_admitted): taking out a task charged in several types
///   changes its team's share through types the number does not follow, so from the first such
///   admission on, the numbers add team versions' increases as in the classical order (an entry
///   that held before still holds until a team with a quota in its type changes: the same test
///   the classical order makes);
/// - fair sharing in a tree of cohorts: the sum over every team, in every type (a search there
///   compares cohorts' shares, which sum the usage of teams without a quota in the type).
/// Versions and counts only grow, so a sum changes with any of its terms.
class FlavorStamps {
 public:
  explicit FlavorStamps(const ir::Module& module);
  /// Brings the stamps in step with the teams' versions: each team whose version changed since
  /// the last update (TaskStore::take_changed_teams) adds its increase to the types it has a
  /// quota in (counting borrowed amounts: one, when they changed), so the stamps stay the sums
  /// and an update costs O(changed teams' quotas), not O(quotas). The store's changed list must
  /// have no other consumer; `quota` must hold the admitted tasks' usage only (between cycles).
  void update(TaskStore& tasks, const QuotaState& quota);
  uint64_t operator[](uint32_t flavor) const { return stamps_[flavor]; }
  /// Per instance type, a number that changes whenever the admitted tasks there (hence the usage
  /// there) change, in any team: TaskStore::flavor_version as of the last update.
  uint64_t local(uint32_t flavor) const { return local_[flavor]; }
  /// Changes whenever any stamp, local or not, changes: an entry checked at this epoch holds
  /// until it moves.
  uint64_t epoch() const { return epoch_; }

 private:
  const ir::Module& module_;
  bool every_type_;             // a change of any team changes every type's stamp
  bool by_borrowing_;           // fair sharing in a flat cohort, no task charged in several types
  std::vector<uint64_t> seen_;  // per team: its version the stamps include
  std::vector<Resources> borrowed_;  // by_borrowing_: per team, its borrowed amounts the stamps include
  std::vector<uint64_t> stamps_;
  std::vector<uint64_t> local_;
  std::vector<uint32_t> changed_;  // scratch
  std::vector<uint32_t> changed_flavors_;  // scratch
  bool synced_ = false;  // local_ was read whole once
  uint64_t epoch_ = 1;
};

/// Not thread-safe. Entries returned by `lookup` stay valid until the next `begin_cycle`.
class NominationCache {
 public:
  /// Starts a cycle (entries may be forgotten only here, between cycles): forgets everything
  /// when full. Nothing else is forgotten at a cycle's start: what time changes for a search
  /// (which tasks count as preempted now) moves the versions the stamps sum
  /// (TaskStore::expire_preemption_marks).
  void begin_cycle();
  /// The entry for `task`'s shape, nullptr when the cache is full. `valid` says whether it holds
  /// the nomination for the current state (it was computed under the same stamps of every type
  /// the task may use); otherwise the caller fills it in. Records the entry in the task
  /// (Task::nomination_slot), so that its next lookups in this generation neither hash nor
  /// compare its shape.
  Nomination* lookup(const ir::Module& module, Task& task, const FlavorStamps& stamps,
                     bool& valid);
  /// As lookup, for a caller that will not fill the entry in: null when the shape has no entry,
  /// and an entry that is not `valid` is left as it was (the next lookup finds it stale too).
  Nomination* peek(const ir::Module& module, Task& task, const FlavorStamps& stamps, bool& valid);
  /// Changes whenever the entries are forgotten (begin_cycle).
  uint64_t generation() const { return generation_; }

 private:
  struct Key {
    int32_t team = -1;
    int32_t requested_flavor = -1;
    int32_t priority = 0;
    Time submitted_at = 0;  // only when the team's within-team policy compares submission times
    Resources request{};
    const std::string* unavailable_partition = nullptr;  // interned per engine: a pointer names it
    friend bool operator==(const Key&, const Key&) = default;
  };
  /// lookup (`will_fill`) and peek.
  Nomination* find(const ir::Module& module, Task& task, const FlavorStamps& stamps, bool& valid, bool will_fill);
  static Key key_of(const ir::Module& module, const Task& task);
  static uint64_t hash_of(const Key& key);
  /// The stamps of the types a task of this shape may use, summed: every stamp and local stamp,
  /// and the local stamps alone. Stamps only grow, so a sum is the same exactly when each of its
  /// terms is.
  struct StampSums {
    uint64_t all = 0;
    uint64_t local = 0;
  };
  static StampSums stamps_of(const ir::Module& module, const Key& key, const FlavorStamps& stamps);

  /// Whether `entry`, computed under the stamps `computed_under`, holds under `now` (stamps_of):
  /// a Nomination::flavor_local entry compares the local stamps only.
  static bool holds(const Nomination& entry, const StampSums& computed_under, const StampSums& now);
  /// A number no other cache or generation has used (tasks are copied between engines).
  static uint64_t new_generation();

  static constexpr size_t kMaxEntries = 4096;
  uint64_t generation_ = new_generation();  // changes whenever the entries are forgotten
  std::unordered_map<uint64_t, uint32_t> index_;  // hash → entry; lookups only, never iterated
  std::vector<Key> keys_;
  /// Per entry: the stamps it was computed under (stamps_of).
  std::vector<StampSums> stamps_;
  /// Per entry: the FlavorStamps epoch at which its stamps were last compared (or it was
  /// computed); while the epoch is the same no stamp changed, so the entry holds without a
  /// comparison (the heads of one shape in a run of quiet cycles).
  std::vector<uint64_t> checked_epoch_;
  std::deque<Nomination>
      entries_;  // stable addresses; reused: only the first keys_.size() are live
};

}  // namespace gov::engine
