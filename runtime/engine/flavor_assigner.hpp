// Flavor assignment (docs/kueue-reference.md §4, Kueue HEAD): the task's instance types are tried
// in declared order until the team's flavor fungibility stops the search (by default: the first
// where it fits, even by borrowing); failing that the preferred one tried (by default: where
// preemption could make room); failing that, no fit, with every reason.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/engine/messages.hpp"
#include "runtime/engine/preemption.hpp"

namespace gov::engine {

/// How a flavor can take a request, worst first (the internal preemptionMode of §4.3).
enum class FitMode : uint8_t { no_fit, no_candidates, preempt, reclaim, fit };

/// A mode with the borrowing level it implies (0: within nominal; borrowing: 1 in the one flat
/// cohort, the height of the lowest subtree that takes it in a tree, QuotaState::borrowing_level).
struct GranularMode {
  FitMode mode = FitMode::fit;
  uint8_t borrow = 0;
  friend bool operator==(const GranularMode&, const GranularMode&) = default;
};

/// isPreferred of §4.4: anything beats no fit, viable modes beat "no candidates"; then, with
/// the default preference (borrowing over preemption), the higher mode, then less borrowing;
/// with preemption over borrowing, less borrowing, then the higher mode.
bool is_preferred(GranularMode a, GranularMode b, ir::FlavorPreference preference);
/// With the default preference.
bool is_preferred(GranularMode a, GranularMode b);
/// shouldTryNextFlavor of §4.4 under the team's flavor fungibility.
bool should_try_next_flavor(GranularMode mode, const ir::Team& team);

/// The severity class of a no-fit (resolveNoFitReason), least severe first.
enum class NoFitClass : uint8_t { none, waiting_for_quota, exceeds_max_quota };

/// At most this many resource groups per team: each covers at least one of the four charged
/// resources (gpus, neuron, vcpus, memory; partitions go with gpus).
inline constexpr size_t kMaxGroups = 4;
/// Slots of a task of a team with resource groups: (pod set, group) pairs.
inline constexpr size_t kMaxSlots = kMaxPodSets * kMaxGroups;

/// A task of a team with resource groups (docs/semantics-decisions.md "Resource groups") is
/// assigned per slot: slot = pod set × group count + group (pod set 0 for a task without pod
/// sets); a slot asks for its pod set's request in the columns its group covers.
Resources slot_request(const Task& task, const ir::Team& team, size_t slot);
/// The number of slots of `task` in `team` (0 for a team without groups).
size_t slot_count(const Task& task, const ir::Team& team);
/// Where a task of a team with groups that asks nothing of any group is admitted (it holds
/// nothing there): its instance type (its first pod set's), else the first group's first.
int32_t idle_flavor(const Task& task, const ir::Team& team);

/// The result of assigning flavors to one task.
struct Assignment {
  int32_t flavor = -1;  // the chosen flavor, -1 when nothing could be assigned
  GranularMode mode{FitMode::no_fit, 0};
  uint8_t borrowing = 0;  // the chosen flavor's borrowing level, max over resources (Assignment.Borrowing)
  ResourceMask needs_preemption = 0;  // contested resources of the chosen flavor
  bool no_matching_flavor = false;    // the task's instance type is not one of its team's
  NoFitClass no_fit_class = NoFitClass::none;
  std::vector<FlavorReason> reasons;  // of every flavor tried; empty when it fits
  Resources short_of{};               // per resource: how much is missing now (0 when none)
  Resources maximum{};                // per resource: the maximum it exceeds (0 when none)
  ResourceMask short_mask = 0;
  ResourceMask maximum_mask = 0;
  /// A task of several pod sets: each pod set's flavor and contested resources, for the first
  /// `pod_set_count` (all of them unless a pod set could not be assigned; `flavor` is the
  /// first's). 0 for a task of one pod set.
  /// A task of a team with resource groups: the same per slot (`pod_set_count` slots then;
  /// a slot whose group the pod set asks nothing of has flavor -1), `group_count` > 0.
  uint32_t pod_set_count = 0;
  uint32_t group_count = 0;
  std::array<int32_t, kMaxSlots> pod_set_flavor{};
  std::array<ResourceMask, kMaxSlots> pod_set_needs{};
  /// Kueue's flavor scan progress (LastTriedFlavorIdx + 1; docs/semantics-decisions.md "Flavor
  /// scan progress"): per slot (slot 0 for a task of one pod set without resource groups), the
  /// position in the slot's list of flavors the next scan starts at. 0, from the first, unless the
  /// scan found an assignment and stopped before the last flavor (flavor fungibility), when it is
  /// the position after the last one tried.
  std::array<uint8_t, kMaxSlots> next_flavor{};

  /// Kueue's PendingFlavors: a slot's scan stopped before its last flavor.
  bool pending_flavors() const {
    for (uint8_t next : next_flavor) {
      if (next != 0) return true;
    }
    return false;
  }

  bool fits() const { return mode.mode == FitMode::fit; }
  /// Kueue's public mode Preempt: the task could fit if something were preempted.
  bool preempt_mode() const {
    return mode.mode == FitMode::no_candidates || mode.mode == FitMode::preempt ||
           mode.mode == FitMode::reclaim;
  }
  void clear();
};

/// The flavors tried and the mode each got, in order (explanations only).
struct AssignmentTrace {
  std::vector<std::pair<uint32_t, GranularMode>> attempts;
  std::vector<uint32_t> pod_sets;  // a task of several pod sets: the pod set of each attempt
  std::vector<uint32_t> slots;     // a task of a team with resource groups: the slot of each attempt
};

/// Assigns flavors against the quota state of `context` (which must outlive it). Preemption
/// possibilities are simulated with the target search (the "oracle"); the quota state is
/// restored before each call returns. Not thread-safe.
class FlavorAssigner {
 public:
  explicit FlavorAssigner(const SearchContext& context) : context_(context) {}

  /// The event time candidates are checked against (at most one preemption per task per time).
  void set_now(Time now) { context_.now = now; }
  /// Lets the oracle's searches be remembered and reused under TaskStore::state_serial
  /// `serial` (0: not, the default). Only while the quota holds exactly the usage of the
  /// admitted tasks (between cycles: no reservation, no victim released) and never in
  /// self-check runs. A search of the oracle is a function of that state, the time, and the
  /// task's team, priority, instance type and amount of the contested resource (its submission
  /// time too under a within-team policy that compares them): tasks of different shapes that
  /// share these ask the same question, which the nominations of one state answer once.
  void remember_searches(uint64_t serial) { memo_serial_ = context_.shortcuts ? serial : 0; }
  /// Tells the next assignments that their tasks most likely fit nowhere (the same shape was
  /// parked under an earlier state), until called with false: flavors are then tried resource by
  /// resource without the fused fit test first, which would only fail. The answer is the same
  /// either way (self-check runs always take the per-resource path).
  void expect_no_fit(bool expect) { expect_no_fit_ = expect; }
  /// Starts each slot's scan of the next assignments at `from` (Assignment::next_flavor of an
  /// earlier one: the scan resumes where it stopped), until called with null (from the first).
  void scan_from(const std::array<uint8_t, kMaxSlots>* from) { scan_from_ = from; }
  /// Lets the searches of the next assignments and targets_for use `memos` (null: not, the
  /// default). Only while the quota holds exactly the admitted tasks' usage, as for
  /// remember_searches, and never in self-check runs (SearchContext::between_cycles).
  void memo_between_cycles(BetweenCycles* memos) { context_.between_cycles = context_.shortcuts ? memos : nullptr; }
  const SearchContext& context() const { return context_; }

  /// `pinned` >= 0 tries only that flavor (the recomputation of a task whose preemption targets
  /// overlap keeps the flavor it was nominated for, as Kueue's NominationMapping does).
  void assign(uint32_t task, Assignment& out, AssignmentTrace* trace = nullptr,
              int32_t pinned = -1);
  /// `assign` with every pod set pinned to the flavor `nominated` gave it (a task of one pod
  /// set: `pinned` = its flavor).
  void assign_pinned(uint32_t task, Assignment& out, const Assignment& nominated);
  /// The charged request of `task` in a flavor, as a preemption request needing `needs`.
  PreemptionRequest request_for(uint32_t task, uint32_t flavor, ResourceMask needs) const;
  /// What `assignment` (of `task`, not no-fit) asks of each flavor: for a task of several pod
  /// sets, its pod sets summed per flavor, in the order the flavors were first assigned.
  PreemptionRequest request_for(uint32_t task, const Assignment& assignment) const;
  /// The victims for the assignment `assign` just made (find_targets on the same state); reuses
  /// a simulation of the last assign when it searched the very same request.
  void targets_for(uint32_t task, const Assignment& assignment, std::vector<Target>& out);

  /// A cohort term the last assign read: available() of (its team, `flavor`, `resource`) took
  /// the team's own limit (`limit_left`, QuotaState::own_limit_left) because the cohort had at
  /// least as much left; while that holds and the team's usage is the same, so is available().
  struct CohortBound {
    uint32_t flavor = 0;
    ir::Resource resource{};
    Amount limit_left = 0;
    friend bool operator==(const CohortBound&, const CohortBound&) = default;
  };
  /// Whether what the last assign (and targets_for since) answered is a function of the task's
  /// own team's admitted tasks and usage alone, given its cohort bounds: one flat cohort, no fit
  /// found, every available() own-limited, every search settled at the own team's limits
  /// (find_targets's `own_settled`). Conservative: false when unsure.
  bool own_determined() const { return own_determined_; }
  /// Whether what the last assign (and targets_for since) answered read, besides the task and
  /// the policy, only the admitted tasks and usage in the flavors the task may use: one flat
  /// cohort, one list of flavors, every search ended at a bound before its candidate walk
  /// (SearchReads::flavor_local), so no fair-sharing share was read. Conservative.
  bool flavor_local() const { return flavor_local_; }
  const std::vector<CohortBound>& cohort_bounds() const { return cohort_bounds_; }

  /// What an own-determined assignment of one flavor read of the quota: per requested resource,
  /// its fit (ResourceFit) and borrowing level as check_resource gave them (the reasons of those
  /// that do not fit are the assignment's), from the team's usage and own limit left then.
  /// `flavor` < 0: not recorded (several flavors tried, pod sets or resource groups, a pinned
  /// flavor, or an answer that is not own-determined).
  struct OwnReads {
    int32_t flavor = -1;
    std::array<uint8_t, ir::kColumnCount> fit{};
    std::array<uint8_t, ir::kColumnCount> borrow{};
    Resources usage{};
    Resources limit_left{};
  };
  /// The last assign's, valid when own_determined().
  const OwnReads& own_reads() const { return own_reads_; }
  /// Whether assign would give `task` the own-determined answer `assignment` again, exactly,
  /// given `reads`, what it read when it gave it: every requested resource checks as it did (the
  /// same fit, borrowing level and reason), every available() still takes the team's own limit,
  /// and every contested resource is still over the own team's limits with the team's
  /// candidates gone (preemption::over_own_limits, the bound that settled its search, so the
  /// whole request's search is settled with no targets too). The answer reads nothing else. On
  /// true, cohort_bounds() holds the bounds read now.
  bool own_answer_holds(uint32_t task, const OwnReads& reads, const Assignment& assignment);

 private:
  struct FlavorResult {
    GranularMode mode;  // representative (least preferred over resources): chooses the flavor
    FitMode worst = FitMode::fit;  // lowest mode over resources: what admission must respect
    uint8_t borrowing = 0;  // max over resources
    NoFitClass no_fit_class = NoFitClass::none;
    ResourceMask needs_preemption = 0;
    Resources short_of{};
    Resources maximum{};
    ResourceMask short_mask = 0;
    ResourceMask maximum_mask = 0;
  };
  /// The choice over one list of flavors (Kueue's assignFlavors loop, for a task, a pod set or a
  /// resource group): the preferred mode so far and, for the message, the least severe no-fit.
  struct FlavorChoice {
    GranularMode best{FitMode::no_fit, 255};
    FlavorResult best_result;
    FlavorResult least_severe_no_fit;  // resolveNoFitReason: the least severe class over flavors
    bool any_no_fit = false;
    bool tried = false;  // a flavor's result was taken
    int32_t chosen = -1;
    /// Takes one flavor's result; true when the search stops at it (the team's fungibility).
    bool consider(const FlavorResult& result, uint32_t flavor, const ir::Team& team);
    /// `out`'s no-fit class, shortfall and (over the maximum) maximum from the least severe no-fit.
    void report_no_fit(Assignment& out) const;
  };
  enum class ResourceFit : uint8_t { fits, exceeds_max, may_preempt, waits };
  struct ResourceCheck {
    ResourceFit fit = ResourceFit::fits;
    uint8_t borrow = 0;
    FlavorReason reason;
  };
  ResourceCheck check_resource(uint32_t team, uint32_t flavor, ir::Resource r, Amount amount) const;
  /// A scan resumed past the only flavor the task (or pod set) may use: the flavors left are
  /// mismatches (their reasons are the scan's), and nothing fits: no-matching-flavor.
  static void resumed_past_requested(Assignment& out);
  /// `request` (a task's, or one pod set's on top of `assumed`, what the task's earlier pod sets
  /// were assigned in the flavor) against one flavor.
  FlavorResult try_flavor(const Task& task, uint32_t task_index, uint32_t flavor, const Resources& request,
                          const Resources* assumed, Assignment& out);
  /// How much of the preemption search the oracle runs: all of it (find_targets), only the
  /// bounds (settled_without_targets; no answer when they do not settle it), or only the walk
  /// (the bounds were tried under the same state and did not settle it).
  enum class Search : uint8_t { full, bounds_only, walk_only };
  std::optional<GranularMode> oracle(uint32_t task, uint32_t flavor, ir::Resource resource, Amount amount,
                                     Search search = Search::full);
  /// One resource's mode into a flavor's result: the least preferred mode (`mode`), the lowest
  /// (`worst`), the highest borrowing level.
  static void worsen_by(FlavorResult& result, GranularMode mode, ir::FlavorPreference preference);
  /// try_flavor's simulations of the contested resources (`simulate`) into `result`.
  void simulate_contested(uint32_t task, uint32_t flavor, ResourceMask simulate, const Resources& amounts,
                          ir::FlavorPreference preference, FlavorResult& result);
  void assign_pod_sets(uint32_t task, Assignment& out, AssignmentTrace* trace, const Assignment* pinned);
  void assign_groups(uint32_t task, Assignment& out, AssignmentTrace* trace, const Assignment* pinned);
  bool can_preempt_while_borrowing(const ir::Team& team) const;
  uint8_t tree_borrowing_level(uint32_t team, uint32_t flavor, const Resources& request) const;
  void no_flavor_of_team(const Task& task, Assignment& out) const;

  /// One simulation of the last assign: a search for one contested resource of one flavor.
  struct Simulated {
    PreemptionRequest request;
    std::vector<Target> targets;
    SearchReads reads;  // find_targets's
  };
  /// request_for of a task of one pod set, into `into` (reused: only the first part is written).
  void one_part_request(PreemptionRequest& into, uint32_t task, uint32_t flavor, ResourceMask needs) const;
  /// Whether `simulated`, a search the own team's limits settled with no targets, settles the
  /// search for `request` (the whole request of the same task in its flavor) the same way.
  static bool own_limits_settle(const Simulated& simulated, const PreemptionRequest& request);
  /// Records what a search read (own_determined, flavor_local).
  void note_search(const SearchReads& reads);
  /// Records that available(team, flavor, r) was read (own_determined).
  void note_available_read(uint32_t team, uint32_t flavor, ir::Resource r);

  /// The oracle's searches under one state (remember_searches): direct-mapped by a hash of the
  /// key, each slot checked against the whole key.
  struct OracleKey {
    uint64_t serial = 0;
    Time now = 0;
    uint32_t team = 0;
    uint32_t flavor = 0;
    int32_t priority = 0;
    Time submitted_at = 0;  // only when the team's within-team policy compares submissions
    ir::Resource resource{};
    Amount amount = 0;
    friend bool operator==(const OracleKey&, const OracleKey&) = default;
  };
  struct OracleSlot {
    OracleKey key;  // serial 0: empty
    GranularMode mode;
    std::vector<Target> targets;
    SearchReads reads;
  };
  static constexpr size_t kOracleSlots = 256;
  OracleSlot& oracle_slot(const OracleKey& key);
  /// Records a simulation of the last assign (reused by targets_for).
  void record_simulation(const PreemptionRequest& request, const std::vector<Target>& targets,
                         const SearchReads& reads);

  SearchContext context_;
  uint64_t memo_serial_ = 0;
  bool expect_no_fit_ = false;
  const std::array<uint8_t, kMaxSlots>* scan_from_ = nullptr;
  std::vector<OracleSlot> oracle_memo_;  // kOracleSlots once used
  std::vector<Target> scratch_;
  // The oracle's and targets_for's requests, reused: constructing one zeroes about 1 KB.
  PreemptionRequest oracle_request_;
  PreemptionRequest whole_request_;
  std::vector<Simulated> simulated_;  // of the last assign, reused by targets_for
  size_t simulated_count_ = 0;
  bool own_determined_ = false;
  bool flavor_local_ = false;
  std::vector<CohortBound> cohort_bounds_;
  OwnReads own_reads_;
  uint32_t own_reads_flavors_ = 0;  // the flavors the last assign recorded reads of
};

}  // namespace gov::engine
