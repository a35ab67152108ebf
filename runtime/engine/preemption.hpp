// Preemption target search: which admitted tasks to evict so that a task fits. Classical
// (docs/kueue-reference.md §5.4) when idle compute is fcfs, fair sharing (§6.3) when it is
// fair-share.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/quota_state.hpp"
#include "runtime/engine/task_store.hpp"

namespace gov::engine {

/// One victim and why it is preempted.
struct Target {
  uint32_t task = 0;
  PreemptionKind kind = PreemptionKind::in_team;
  bool while_borrowing =
      false;  // classical reclaim while the preemptor borrows (borrowWithinCohort)
};

/// What a preemptor asks of one flavor.
struct RequestPart {
  uint32_t flavor = 0;
  Resources request{};     // the charged amounts it asks for in the flavor
  ResourceMask needs = 0;  // the resources whose quota must be freed there (mode Preempt)
  friend bool operator==(const RequestPart&, const RequestPart&) = default;
};

/// A task that needs preemption: in one flavor, or for a task of several pod sets in each flavor
/// its pod sets were assigned (Kueue's TotalRequestsFor and flavor-resources needing
/// preemption). Parts name distinct flavors.
struct PreemptionRequest {
  uint32_t preemptor = 0;
  uint32_t team = 0;
  uint32_t part_count = 1;
  std::array<RequestPart, kMaxPodSets> parts;

  std::span<const RequestPart> all() const { return {parts.data(), part_count}; }
  const RequestPart& first() const { return parts[0]; }
  friend bool operator==(const PreemptionRequest& a, const PreemptionRequest& b) {
    if (a.preemptor != b.preemptor || a.team != b.team || a.part_count != b.part_count) return false;
    for (uint32_t i = 0; i < a.part_count; ++i) {
      if (!(a.parts[i] == b.parts[i])) return false;
    }
    return true;
  }
};

/// What the search did with one candidate; collected only for explanations.
struct CandidateNote {
  enum class Verdict : uint8_t {
    removed,                      // taken as a target (it may be given back by fill-back)
    given_back,                   // fill-back: the task fits without evicting it
    share_test_failed,            // fair sharing: S2-a (or S2-b) did not allow it
    skipped_team_within_nominal,  // its team no longer borrows in the contested resources
    skipped_needs_no_borrowing,   // classical: only usable if the preemptor would not borrow
  };
  uint32_t task = 0;
  Verdict verdict = Verdict::removed;
  double preemptor_share =
      0;  // share_test_failed: weighted shares compared (inf for weight-0 borrowers)
  double target_share = 0;
  /// share_test_failed: the test that refused it. less_than_or_equal_to_final_share compares with
  /// the victim team's share after losing the candidate; less_than_initial_share with its share now.
  ir::FairShareStrategy strategy = ir::FairShareStrategy::less_than_or_equal_to_final_share;
};
struct SearchTrace {
  std::vector<CandidateNote> notes;
};

/// What picks a one-part request's candidates besides the state: the preemptor's team, the
/// flavor, its priority and (where its team's within-team policy compares them) submission time,
/// the contested resources, and the time (a task preempted at this time is no candidate). The
/// memos below key on it with what they read of the state (preemption::candidate_choice).
struct CandidateChoice {
  Time now = 0;
  Time submitted_at = 0;
  uint32_t team = 0;
  uint32_t flavor = 0;
  int32_t priority = 0;
  ResourceMask needs = 0;
  friend bool operator==(const CandidateChoice&, const CandidateChoice&) = default;
  /// A multiplicative hash of the fields (the memos compare their keys in full).
  uint64_t hash() const;
};

/// What the own team's candidates hold, remembered per (team, flavor, preemptor's priority and,
/// where its policy compares them, submission time, contested resources) while nothing it reads
/// changes: the team's admitted tasks (TaskStore::team_version), the tasks marked preempted
/// (TaskStore::preemptions) and the time. The heads of one team in a run of quiet cycles differ
/// mostly in their request, which the sum does not read. Not thread-safe.
///
/// `preemptions` in the key is for precision, not for the decisions: under one team version,
/// marking tasks preempted only takes candidates away, so a sum kept from before a marking is
/// never smaller than the true one, and every reader of the sum (over_own_limits,
/// fits_without_teams, fair_hopeless_by_shares) is a bound that settles a search with no targets
/// only when the smaller true sum would settle it too. A stale sum costs a full search, never a
/// decision. (Checked by dropping it from the key: the streams of both benchmark traces'
/// prefixes and the property tests' long mode, 720,000 events, are unchanged; session 28.)
class OwnHeldMemo {
 public:
  struct Key {
    uint64_t team_version = 0;
    uint64_t preemptions = 0;
    CandidateChoice choice;
    friend bool operator==(const Key&, const Key&) = default;
  };
  /// The remembered sum for `key`, or null.
  const Resources* find(const Key& key) const;
  void store(const Key& key, const Resources& held);

 private:
  struct Slot {
    bool used = false;
    Key key;
    Resources held{};
  };
  static size_t slot_of(const Key& key);
  static constexpr size_t kSlots = 64;
  std::array<Slot, kSlots> slots_{};
};

/// The teams with candidates for a one-part request (preemption::teams_with_candidates) and what
/// it finds available, per charged resource, with every one of them gone (the own team's
/// candidates only: preemption::fits_without_teams): functions of the state
/// (TaskStore::state_serial between cycles, and the time, which decides which tasks count as
/// preempted now) and of what picks those candidates (the team, the flavor, the preemptor's
/// priority and, where its policy compares them, submission time, and the contested resources),
/// not of the amounts requested. Heads parked in one state ask again and again with other
/// amounts. Direct-mapped; not thread-safe.
class TeamsGoneMemo {
 public:
  struct Key {
    uint64_t serial = 0;  // TaskStore::state_serial
    CandidateChoice choice;
    friend bool operator==(const Key&, const Key&) = default;
  };
  /// Answers of preemption::fair_hopeless_by_shares for one entry's key, by requested amounts.
  /// Under one key that bound is monotone in the request: a larger request raises the
  /// preemptor's share (so fewer teams can yield), finds less available and is less often within
  /// nominal. So a request at least as large, in every resource, as one found hopeless is
  /// hopeless, and one at most as large as one found hopeful is not. The last few of each are
  /// kept (on the 85% trace 70% of the bound's calls are answered so).
  class HopelessAnswers {
   public:
    /// The answer a kept request decides for `request`, or none.
    std::optional<bool> find(const Resources& request) const;
    void add(const Resources& request, bool hopeless);
    void clear() { hopeless_.count = hopeless_.next = hopeful_.count = hopeful_.next = 0; }

   private:
    static constexpr size_t kKept = 4;
    struct Kept {
      std::array<Resources, kKept> requests{};
      uint8_t count = 0;
      uint8_t next = 0;  // the oldest, replaced next when full
    };
    Kept hopeless_, hopeful_;
  };
  struct Entry {
    bool used = false;
    Key key;
    std::vector<uint32_t> teams;  // with candidates; when empty, the rest is unset
    bool has_quota = false;       // the team has a quota in the flavor
    Resources available{};        // per charged resource, with `teams` gone
    HopelessAnswers hopeless;     // fair-sharing only, filled in as the bound is asked
  };
  /// The entry for `key`, or null.
  Entry* find(const Key& key);
  /// Stores a copy of `entry` but for its answers (in a slot whose buffers are reused; no
  /// answers yet) and returns it.
  Entry& store(const Entry& entry);

 private:
  static size_t slot_of(const Key& key);
  static constexpr size_t kSlots = 64;
  std::array<Entry, kSlots> slots_{};
};

/// Memos valid only while the quota holds exactly the admitted tasks' usage: between cycles,
/// when the scheduler nominates (no reservation, no victim released), with no search simulating.
struct BetweenCycles {
  TeamShareMemo shares;
  TeamsGoneMemo teams_gone;
};

/// Everything a search reads. `quota` is mutated while simulating and restored before return.
struct SearchContext {
  const ir::Module& module;
  const ir::Evaluator& evaluator;  // the fit test and the may-preempt predicate
  const TaskStore& tasks;
  QuotaState& quota;
  Time now = 0;
  /// Take the shortcuts that cannot change an answer (skip hopeless searches, reuse a
  /// simulation); off in self-check runs, so comparing decisions tests them.
  bool shortcuts = true;
  /// Self-check runs: where the searches report a broken contract (fill-back's minimal set);
  /// null otherwise.
  std::vector<std::string>* self_check_failures = nullptr;
  /// With the shortcuts: the own team's candidate sums of earlier searches (null: none kept).
  OwnHeldMemo* own_held_memo = nullptr;
  /// Set only while the quota holds exactly the admitted tasks' usage (the scheduler's
  /// nominations between cycles, with the shortcuts): the memos of those states. Null otherwise.
  BetweenCycles* between_cycles = nullptr;
};

/// Appends to `out` the victims that make `request` fit, in the order they were chosen, or
/// nothing when no set of allowed candidates does (all or nothing). Candidates: the preemptor's
/// own team per its within-team policy; other teams over nominal in the contested resources per
/// the reclaim policy; never a task already preempted at this event time. `trace` may be null.
/// `reads`, when given, says what the answer read (for the caches that keep it).
struct SearchReads {
  /// The search ended at the own team's limits (preemption::over_own_limits): its empty answer
  /// read only the own team's admitted tasks and usage (FlavorAssigner::own_determined).
  bool own_settled = false;
  /// The search ended at a bound before walking any candidate (the own team's limits, no team
  /// with candidates, or no fit with every candidate team's usage gone): its empty answer read
  /// admitted tasks and usage in the request's flavors only, and no fair-sharing share (a
  /// team's share sums its usage in every flavor). FlavorAssigner::flavor_local.
  bool flavor_local = false;
};
void find_targets(const SearchContext& context, const PreemptionRequest& request,
                  std::vector<Target>& out, SearchTrace* trace = nullptr, SearchReads* reads = nullptr);
/// The bounds find_targets tries first in runs with shortcuts (SearchContext::shortcuts), each in
/// O(teams) or the own team's candidates: true when one settles that no search can succeed (the
/// answer is no targets), with what it read in `reads` (empty when false).
bool settled_without_targets(const SearchContext& context, const PreemptionRequest& request, SearchReads& reads);
/// The first of those bounds: the request's one part is over the own team's limits even with
/// what the team's candidates hold gone (the bound behind SearchReads::own_settled).
bool over_own_limits(const SearchContext& context, const PreemptionRequest& request);
/// find_targets without those bounds: the candidate walk (fair sharing or classical). Its answer
/// reads other teams' candidates and shares (SearchReads{}).
void search_targets(const SearchContext& context, const PreemptionRequest& request, std::vector<Target>& out,
                    SearchTrace* trace = nullptr);

/// Self-check (EngineOptions::self_check) of the victims of a fair-sharing search in a tree of
/// cohorts, against the usage the search saw: `start_usage` (team × flavor), or the usage of
/// `quota` when it is empty. A victim of another team is in the preemptor's tree, and every
/// cohort between its team and their lowest common ancestor used more than its subtree quota
/// (Kueue's walk prunes the others, and removals only lower usage). Appends one message per
/// violation to `failures`.
void self_check_fair_tree_victims(const ir::Module& module, const QuotaState& quota,
                                  std::span<const Resources> start_usage, const TaskStore& tasks,
                                  uint32_t preemptor_team, std::span<const Target> targets, Time now,
                                  std::vector<std::string>& failures);

}  // namespace gov::engine
