// The admission cycle (docs/kueue-reference.md §3, docs/semantics.md §3): one head per team,
// nominated against the state at the start of the cycle, ordered (classical or fair-sharing), then
// processed one by one with usage updated after each; cycles repeat until nothing changes.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "runtime/engine/engine_core.hpp"
#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/flavor_assigner.hpp"
#include "runtime/engine/nomination_cache.hpp"

namespace gov::engine {

/// Runs cycles on an EngineCore (which must outlive it). Not thread-safe.
class Scheduler {
 public:
  explicit Scheduler(EngineCore& core)
      : core_(core),
        assigner_(core.search_context()),
        stamps_(core.module),
        reason_texts_(core.module, MessageDialect::head),
        shown_texts_(core.module, core.options.dialect) {}

  /// Runs cycles at core.now until one changes nothing (no admission, preemption, parking or
  /// return of parked heads); appends the decisions in the order they happen.
  void run_until_stable(std::vector<Decision>& out);

  /// The pending decision a task would get now if it were its team's head (for tasks that were
  /// never a head before their submission instant ended; docs/semantics.md §3 "every submitted task
  /// gets a decision at its submission time").
  void emit_current_pending(uint32_t task, std::vector<Decision>& out);

  /// The work of the cycles so far, which tests compare across queue lengths (with the queue
  /// comparisons): the cycles run one by one, plus what the quiet-cycle skip looked at (class
  /// verdicts and queued tasks walked) instead of the cycles it skipped.
  uint64_t cycles() const { return cycles_; }
  /// Nominations computed (FlavorAssigner::assign) so far: Engine::nomination_work.
  uint64_t nominations_computed() const { return fills_; }
  /// A pending task's flavor scan is to resume where it stopped (progress_): state that a
  /// restart from Engine::export_state would lose, as Kueue's restart loses it.
  bool holds_scan_progress() const { return !progress_.empty(); }

 private:
  enum class Result : uint8_t { admitted, preempting, parked, requeued };
  struct Entry {
    uint32_t task = 0;
    uint32_t team = 0;
    bool preemptor = false;            // the team's sticky preemptor: tried before every other head
    Nomination* nomination = nullptr;  // in the cache, or `own`; valid for the cycle
    Nomination own;
    uint8_t borrows = 0;             // classical order: borrowing level of the assignment
    bool borrows_requested = false;  // fair-sharing order: borrows on what it requests
    Drs share;                       // fair-sharing order: share after admission
    Result result = Result::parked;
    /// Its targets were searched again mid-cycle (recompute_overlapping), against the usage the
    /// cycle's earlier preemptors reserved rather than the usage at the cycle's start.
    bool recomputed = false;
    /// Its nomination resumed a scan where an earlier one stopped (progress_of): the next one,
    /// from wherever this one leaves it, differs.
    bool resumed = false;
  };
  struct Reservation {
    uint32_t team;
    uint32_t flavor;
    Resources amounts;
  };
  /// Kueue's flavor scan progress (LastAssignment, FlavorFungibilityPreserveScanProgress: beta and
  /// on by default since Kueue 0.19; docs/semantics-decisions.md "Flavor scan progress"): a head
  /// whose scan stopped early, at an assignment before its last flavor, and that stays pending
  /// without preempting (skipped because an earlier head took the capacity or its targets, or no
  /// candidates) starts its next scan after the flavor it stopped at.
  struct ScanProgress {
    uint32_t task = 0;
    std::array<uint8_t, kMaxSlots> next_flavor{};  // Assignment::next_flavor
    uint64_t cycle = 0;     // the scheduling cycle of the nomination (scheduling_cycle_)
    uint64_t removals = 0;  // its team's TaskStore::team_removals then
  };

  bool run_cycle(std::vector<Decision>& out);
  void skip_quiet_cycles(std::vector<Decision>& out);
  /// What a cycle would do with a task as its team's head: not park it (`no`: it is admitted or
  /// preempts), park it with its last decision unchanged (`yes`), park it with a new pending
  /// decision (`decides`), or `unknown` (its nomination is not remembered).
  enum class Quiet : uint8_t { no, yes, decides, unknown };
  Quiet quiet_head(uint32_t task, bool compute);
  bool quiet_classes(uint32_t team, const QueueSet& set);
  /// The verdicts kept for `team`'s class slots, those of an earlier state forgotten.
  void renew_verdicts(uint32_t team);
  Quiet quiet_in_class(uint32_t task);
  /// Counts a class slot of the set looked at known to park (skip_quiet_cycles' walk).
  void tally(uint32_t slot, Quiet quiet) {
    ++parking_known_;
    if (quiet == Quiet::decides) deciders_left_ += looked_at_classes_->count(slot);
  }
  /// Emits, in the order the skipped cycles would, the new pending decisions of the heads
  /// skip_quiet_cycles found before `stop` (deciders_).
  void emit_skipped_decisions(size_t stop, std::vector<Decision>& out);
  size_t collect_heads();
  /// entries_[count], reset for a head (`task` of `team`), and count one more.
  Entry& next_entry(size_t& count, uint32_t task, uint32_t team, bool preemptor);
  void nominate(Entry& entry);
  /// With `compute` false: null when the nomination is not remembered for the current state.
  Nomination* nomination_for(Entry& entry, bool compute = true);
  bool still_own_determined(const Nomination& nomination, uint32_t team, int32_t requested_flavor) const;
  /// Every cohort bound of an own-determined nomination still holds.
  bool cohort_bounds_hold(const Nomination& nomination) const;
  /// An own-determined nomination whose own version moved (now `version`), kept when what it
  /// read still gives the same answer (FlavorAssigner::own_answer_holds), with its version and
  /// cohort bounds brought up to date. Its fill stays: the answer is the same.
  bool renew_own_answer(Nomination& nomination, const Entry& entry, uint64_t version);
  /// Assertion builds: `nomination` is what assign and targets_for give `task` now.
  bool same_as_recomputed(uint32_t task, const Nomination& nomination);
  /// A number that changes whenever the admitted tasks (hence the usage) of `team` change in an
  /// instance type a task of it asking for `requested_flavor` (or any: −1) may use: the sum of
  /// those cells' TaskStore::cell_version.
  /// Inline: a task naming its instance type (the common case) reads one cell's version.
  uint64_t own_version(uint32_t team, int32_t requested_flavor) const {
    if (requested_flavor >= 0) return core_.tasks.cell_version(team, static_cast<uint32_t>(requested_flavor));
    return own_version_of_team(team);
  }
  /// own_version over every instance type of the team.
  uint64_t own_version_of_team(uint32_t team) const;
  /// The entry's keys for order_entries; under fair sharing remembered with its nomination
  /// (Nomination::order_keys_version).
  void set_order_keys(Entry& entry);
  void compute_fair_order_keys(Entry& entry);
  void order_entries(size_t count);
  /// §3 step 5 for one head: decide, then keep or forget its scan progress; a best-effort FIFO
  /// head that parks takes the tasks of its shape along (TaskStore::park_shape).
  void process(Entry& entry, std::vector<Decision>& out);
  /// What the cycle does with the head: admit, preempt, park or requeue it (Entry::result).
  void decide(Entry& entry, std::vector<Decision>& out);
  bool finish_cycle(size_t count);
  /// The scan progress of `task` that its next nomination resumes from, or null: none, or
  /// outdated (Kueue's lastAssignmentOutdated: recorded before the previous cycle, and an admitted
  /// task of its team has left since), which is forgotten.
  const ScanProgress* progress_of(uint32_t task);
  /// After `entry` was processed: keeps the scan progress of its assignment when it stays pending
  /// with flavors left to try, else forgets the task's; true when it keeps some.
  bool record_progress(const Entry& entry);
  void forget_progress(uint32_t task);
  /// Asks for another cycle at this instant for a head whose next nomination differs (scan
  /// progress kept or used up), at most kCyclesPerInstant times per task and instant.
  void another_cycle_for(uint32_t task);
  static constexpr uint32_t kCyclesPerInstant = 4;

  bool overlaps_cycle_victims(const Entry& entry) const;
  bool recompute_overlapping(Entry& entry, std::vector<Decision>& out);
  void release_cycle_victims(bool give_back);
  void reserve_request(const Entry& entry);
  bool fits_after_cycle_victims(const Entry& entry);
  void reserve_for_unreclaimable(const Entry& entry);
  void issue_preemptions(Entry& entry, std::vector<Decision>& out);
  static PendingReason assignment_reason(const Assignment& a);
  void emit_assignment_pending(const Entry& entry, std::vector<Decision>& out);
  const std::string& assignment_message(uint32_t task, Nomination& nomination);
  /// The text a pending decision shows for `nomination`: assignment_message under the HEAD
  /// dialect, else the same reasons in the engine's dialect (valid until the next call).
  std::string_view shown_message(uint32_t task, Nomination& nomination);
  /// Takes a task's usage out of the quota (`give_back` false) or puts it back.
  void release_quota(uint32_t task, bool give_back);
  void self_check_victims(const Entry& entry);
  void self_check_usage();

  EngineCore& core_;
  FlavorAssigner assigner_;
  NominationCache cache_;
  FlavorStamps stamps_;  // of the current cycle
  // A pending message is rendered in Kueue HEAD's words whatever the dialect: that text is what
  // decides whether a task's decision changed (emit_pending) and which queue class it is in, so
  // that the decisions are the same in every dialect (the v0.9 texts leave amounts out: the
  // structured `short` changed while its text did not). The dialect's text is what a decision shows.
  ReasonTexts reason_texts_;  // assignment_message's: HEAD
  ReasonTexts shown_texts_;   // shown_message's: the engine's dialect
  std::string shown_;         // shown_message's last text
  std::vector<Entry> entries_;   // reused across cycles
  std::vector<uint32_t> order_;  // processing order (indices into entries_)
  std::vector<uint32_t> teams_;
  std::vector<uint32_t> cycle_victims_;
  std::vector<Reservation> reservations_;
  std::vector<Resources> cycle_start_usage_;  // self-check only: team × flavor
  bool reactivate_after_cycle_ = false;       // an eviction happened in the previous cycle
  /// The previous cycle parked every head: the next ones are likely to do the same
  /// (skip_quiet_cycles tries then).
  bool last_cycle_parked_ = false;
  struct Verdict {
    uint64_t epoch = 0;   // valid while its team's TeamVerdicts::epoch is this
    uint64_t stamps = 0;  // and its class's stamps (class_stamps) are this,
    /// or the cached nomination it was drawn from, still as filled in then (`fill`), holds as
    /// Nomination::own_determined (null: a nomination the cache does not keep).
    const Nomination* nomination = nullptr;
    uint64_t fill = 0;
    int32_t flavor = -1;  // whose stamps those are (class_flavor), or -1: every type of the team
    Quiet quiet = Quiet::unknown;  // yes, no or decides
  };
  /// skip_quiet_cycles's verdicts on one team's class slots. A verdict is a function of the
  /// slot's class and of the nomination of its shape, which the NominationCache keeps while the
  /// stamps of the shape's instance types hold: a verdict is kept from one quiet run to the next
  /// while the sum of those stamps and their local stamps (class_stamps; they only grow, so the
  /// sum moves with any of them), the cache's generation and the class table's generation are
  /// the same, so that a class whose instance type a finish did not touch costs a sum, not a
  /// nomination lookup.
  struct TeamVerdicts {
    uint64_t cache_generation = 0;
    uint32_t table_generation = 0;
    uint64_t epoch = 0;
    uint64_t team_stamps = 0;  // of every type of the team, as of the last renew_verdicts
    std::vector<Verdict> slots;
    /// Verdicts of this epoch on a class naming an instance type the team has no quota in: its
    /// stamps are not among the team's, so no tally is remembered while there are any.
    uint32_t foreign = 0;
    /// The last tally that found every class of a set (QueueSet::id) parking quietly, and what it
    /// was made under. While the epoch, the team's stamps and the slots present in that set are
    /// the same, each verdict it read still holds by its stamps (the team's stamps are a sum of
    /// numbers that only grow: an equal sum is equal terms), so the tally is too.
    struct QuietTally {
      uint64_t epoch = 0;  // 0: none
      uint64_t team_stamps = 0;
      uint32_t set = 0;
      uint64_t changes = 0;  // SetClasses::changes
    };
    QuietTally all_quiet;
  };
  /// The instance type whose stamps a verdict on `team`'s class slot holds under: the type its
  /// tasks name when their nominations are cached shapes (which read that type only:
  /// NominationCache::stamps_of), else -1: every type of the team.
  int32_t class_flavor(uint32_t team, uint32_t slot) const;
  /// Those stamps' sum, with the local stamps.
  uint64_t class_stamps(int32_t flavor) const {
    if (flavor < 0) return looked_at_->team_stamps;
    const auto f = static_cast<uint32_t>(flavor);
    return stamps_[f] + stamps_.local(f);
  }
  /// Whether `verdict` (on a class slot) holds now for the team looked at. A verdict whose stamps
  /// moved still holds when the nomination it was drawn from is unchanged and still
  /// own-determined: quiet_head would find that very entry and answer the same (it is then
  /// renewed under the stamps of now).
  /// Inline for the common answers (it runs once per class slot of every team a skip looks at).
  bool verdict_holds(Verdict& verdict) {
    if (verdict.epoch != looked_at_->epoch) return false;
    const uint64_t stamps = class_stamps(verdict.flavor);
    return verdict.stamps == stamps || still_holds(verdict, stamps);
  }
  /// verdict_holds for a verdict of this epoch whose stamps are no longer `stamps`.
  bool still_holds(Verdict& verdict, uint64_t stamps);
  /// Records a verdict on `slot` of the team looked at, under the state now.
  void set_verdict(Verdict& verdict, uint32_t slot, Quiet quiet);
  std::vector<TeamVerdicts> team_verdicts_;
  uint64_t verdict_epoch_ = 0;  // the last epoch handed to a team
  TeamVerdicts* looked_at_ = nullptr;  // the team quiet_classes last renewed
  uint32_t looked_at_team_ = 0;         // and its index
  // skip_quiet_cycles, for the team looked at: its classes known to park (quiet or with a new
  // decision), and how many of its tasks of classes known to decide are not walked yet.
  const SetClasses* looked_at_classes_ = nullptr;
  size_t parking_known_ = 0;
  size_t deciders_left_ = 0;
  /// skip_quiet_cycles' walk down one team's queue: where it is, and the team's tally so far
  /// (what parking_known_ and deciders_left_ hold while the team is looked at).
  struct TeamWalk {
    uint32_t team = 0;
    bool tallied = false;  // quiet_classes looked at every class slot of the set
    size_t parking_known = 0;
    size_t deciders_left = 0;
    const SetClasses* classes = nullptr;
    std::set<uint32_t, QueueLess>::const_iterator next, end;
    /// Every class is known to park, and every task of a class that decides anew was seen.
    bool walked_enough(size_t known, size_t left) const { return tallied && known == classes->present.size() && left == 0; }
    bool walked_enough() const { return walked_enough(parking_known, deciders_left); }
  };
  /// Looks at `walk`'s team again (the context quiet_classes set up for it, without renewing it).
  void look_at(const TeamWalk& walk) {
    looked_at_ = &team_verdicts_[walk.team];
    looked_at_team_ = walk.team;
    looked_at_classes_ = walk.classes;
    parking_known_ = walk.parking_known;
    deciders_left_ = walk.deciders_left;
  }
  /// Keeps the tally of the team looked at in `walk`.
  void save_walk(TeamWalk& walk) const {
    walk.classes = looked_at_classes_;
    walk.parking_known = parking_known_;
    walk.deciders_left = deciders_left_;
  }
  /// One step of `walk` (its team looked at): false when its next task would not park (a cycle
  /// ahead at `position` changes something); else counts a new decision there and moves on.
  bool walk_past(TeamWalk& walk, size_t position);
  std::vector<TeamWalk> walks_;  // skip_quiet_cycles', reused
  /// A head in the skipped cycles that parks with a new decision: its cycle (its position in its
  /// team's queue) and the task.
  struct Decider {
    size_t position;
    uint32_t team;
    uint32_t task;
  };
  std::vector<Decider> deciders_;
  Entry probe_;  // skip_quiet_cycles: the head being looked at
  const Nomination* probed_ = nullptr;  // quiet_head's nomination when the cache keeps it, or null
  uint64_t fills_ = 0;  // Nomination::fill's last number
  std::vector<FlavorReason> reasons_before_;  // nomination_for: a cached entry's last reasons
  uint64_t cycles_ = 0;
  /// Few at a time: heads skipped after a scan that stopped early, kept until their next
  /// nomination. While there are any, cycles run one by one (no quiet-cycle skip), so
  /// scheduling_cycle_ counts each.
  std::vector<ScanProgress> progress_;
  uint64_t scheduling_cycle_ = 0;  // Kueue's schedulingCycle: the cycles with heads
  bool progress_requeued_ = false;  // a head of this cycle goes back with a scan to resume or just resumed
  Time progress_cycles_at_ = -1;     // the instant progress_cycles_ counts for
  std::vector<std::pair<uint32_t, uint32_t>> progress_cycles_;  // per task: cycles asked for at it
};

}  // namespace gov::engine
