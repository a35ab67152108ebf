#include "runtime/engine/cycle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>

namespace gov::engine {

namespace {

/// A Nomination::message_serial no engine has given (tasks may move between engines).
uint64_t next_message_serial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void Scheduler::run_until_stable(std::vector<Decision>& out) {
  // Every cycle that changes something admits, preempts (at most once per task per event
  // time), parks a head or returns parked heads, so the loop ends; the guard only turns a
  // broken invariant into a reported failure instead of a hang.
  const size_t guard = 16 * (core_.tasks.size() + core_.module.teams.size()) + 64;
  for (size_t cycles = 0; run_cycle(out); ++cycles) {
    if (cycles > guard) {
      core_.self_check_failures.push_back(
          fmt::format("admission cycles did not settle at time {}", core_.now));
      return;
    }
  }
}

bool Scheduler::run_cycle(std::vector<Decision>& out) {
  skip_quiet_cycles(out);
  const size_t count = collect_heads();
  if (count == 0) {
    if (!reactivate_after_cycle_) return false;
    reactivate_after_cycle_ = false;
    return core_.tasks.reactivate_parked();
  }
  ++scheduling_cycle_;
  if (core_.options.self_check) {
    cycle_start_usage_.clear();
    for (uint32_t t = 0; t < core_.quota.team_count(); ++t) {
      for (uint32_t f = 0; f < core_.quota.flavor_count(); ++f)
        cycle_start_usage_.push_back(core_.quota.usage(t, f));
    }
  }
  // §3 steps 3–5: nominate every head against the state at the start of the cycle, then
  // process them in order, each admission updating usage before the next head is tried.
  core_.tasks.expire_preemption_marks(core_.now);
  cache_.begin_cycle();
  stamps_.update(core_.tasks, core_.quota);
  ++cycles_;
  for (size_t i = 0; i < count; ++i) nominate(entries_[i]);
  order_entries(count);
  if (core_.module.settings.fair_sharing && core_.quota.tree()) [[unlikely]] {
    // A tree of cohorts: Kueue's tournament down the tree, each head picked against the usage
    // the heads before it left (fair_share.hpp).
    std::vector<TournamentHead> heads(count);
    for (size_t i = 0; i < count; ++i) {
      const Entry& entry = entries_[i];
      const Task& task = core_.tasks[entry.task];
      const Assignment& a = entry.nomination->assignment;
      heads[i] = {entry.team, entry.preemptor, task.priority, task.submitted_at, {}};
      if (a.flavor >= 0 && a.pod_set_count > 0) {
        const PreemptionRequest parts = assigner_.request_for(entry.task, a);
        for (const RequestPart& part : parts.all()) heads[i].parts.emplace_back(part.flavor, part.request);
      } else if (a.flavor >= 0) {
        heads[i].parts.emplace_back(static_cast<uint32_t>(a.flavor), task.request);
      }
    }
    std::vector<uint8_t> pending(count, 1);
    for (size_t n = 0; n < count; ++n) {
      const size_t i = tournament_winner(core_.quota, core_.module, heads, pending);
      pending[i] = 0;
      process(entries_[i], out);
    }
  } else {
    for (uint32_t i : order_) process(entries_[i], out);
  }
  last_cycle_parked_ = true;  // then no victims either
  for (size_t i = 0; i < count && last_cycle_parked_; ++i)
    last_cycle_parked_ = entries_[i].result == Result::parked;
  return finish_cycle(count);
}

// Inline: it runs once per task a walk looks at.
inline bool Scheduler::walk_past(TeamWalk& walk, size_t position) {
  ++cycles_;  // the work of a walk: one task looked at
  const uint32_t task = *walk.next;
  const Quiet quiet = quiet_in_class(task);
  if (quiet == Quiet::no) return false;
  if (quiet == Quiet::decides) {
    deciders_.push_back({position, walk.team, task});
    --deciders_left_;
  }
  ++walk.next;
  return true;
}

// A cycle in which every head is parked again changes nothing but where those heads wait and
// their last pending decisions (the quota a parked head reserves is given back at the cycle's
// end): the next cycle sees the same usage, so each team's next head is nominated against the
// same state as the one before it (nominations are a function of the task's shape and the state:
// NominationCache), and so on. Such cycles come in long runs after a finish brings the parked
// heads back and each team's queue is walked again (docs/perf/analysis.md: 95% of the cycles of
// the 85% trace). The cycles ahead are looked at together: the k-th cycle from now takes the k-th
// active task of every team that still has one, so they run until the first position p, in any
// team's queue, of a task that would not park (tested as process() would treat it); the p cycles
// before it are then done at once: the new pending decisions of their heads are emitted in the
// order those cycles would emit them (emit_skipped_decisions), each team's first p tasks are
// parked, in queue order, and cycle p runs as usual. The skip is exact before any cycle and is
// tried before each one (until session 29 only after a cycle that parked every head, which left the
// first cycle of every quiet run to run alone). Each team's first task is tested first; when one
// would not park, nothing is skipped. Finding a position can take a walk down a queue (a new task
// queued last behind thousands). When every team's first task parks, the cycles one by one would
// park every head of the next cycle and then walk the same queues from the skip after it, but for a
// queue of the only team at work, whose parked head took the tasks of its shape along (process(),
// TaskStore::park_shape): so a skip not right after a cycle that parked every head needs two teams
// at work. A queue holds only the first task of each shape (TaskStore's shape groups): the tasks
// shaped like a head are parked with it (Kueue's SchedulingEquivalenceHashing), so no walk meets one.
// Whether a task parks, and with which decision, depends on its queue class only, so it is tested
// once per class slot (quiet_classes, quiet_in_class), and a queue whose classes all park quietly
// is not walked at all: its length is all that counts. Decisions and their order are those of the
// cycle-by-cycle run (self-check runs take every cycle, and the property tests compare the two).
// Teams with a sticky preemptor or a StrictFIFO queue, and a cycle after an eviction, are left to
// the usual cycles; so are the heads with a new decision in a tree of cohorts, whose cycle order is
// a tournament over the usage.
void Scheduler::skip_quiet_cycles(std::vector<Decision>& out) {
  // A head with a scan to resume is nominated apart from its class, and the cycles around it are
  // counted one by one (progress_of).
  if (core_.options.self_check || reactivate_after_cycle_ || !progress_.empty()) return;
  const bool after_parking_cycle = last_cycle_parked_;
  last_cycle_parked_ = false;
  core_.tasks.teams_with_work(teams_);
  if (!after_parking_cycle && teams_.size() < 2) return;  // the case above
  for (uint32_t team : teams_) {
    if (core_.tasks.queue(team).sticky >= 0 || core_.module.teams[team].queueing == ir::Queueing::strict_fifo) return;
  }
  core_.tasks.expire_preemption_marks(core_.now);
  cache_.begin_cycle();
  stamps_.update(core_.tasks, core_.quota);
  // Each team's first task first: when one would not park, no cycle is skipped, and the cycle
  // nominates these heads anyway (the nominations are remembered), so nothing is walked for it.
  for (uint32_t team : teams_) {
    const QueueSet& active = core_.tasks.queue(team).active;
    if (active.tasks.empty()) continue;
    renew_verdicts(team);
    looked_at_classes_ = &active.classes;
    if (quiet_in_class(*active.tasks.begin()) == Quiet::no) return;
  }
  // The cycles ahead stop at the first position, in any team's queue, of a task that would not
  // park. The queues are walked together, position by position (every team's k-th task before any
  // team's k+1-th), so that no queue is walked, and no nomination made, past that position: walked
  // one after another, a long queue looked at before a short one that stops early was walked in
  // vain (on the 85% trace, 16 million of 42 million tasks looked at, and 6 million nominations).
  // A team whose every class is known to park quietly is not walked, and a walk ends once every
  // class is known to park and every task of a class that decides anew was seen.
  size_t stop = std::numeric_limits<size_t>::max();
  size_t longest = 0;
  deciders_.clear();
  walks_.clear();
  for (uint32_t team : teams_) {
    const QueueSet& active = core_.tasks.queue(team).active;
    longest = std::max(longest, active.tasks.size());
    TeamWalk walk;
    walk.team = team;
    walk.tallied = quiet_classes(team, active);
    walk.next = active.tasks.begin();
    walk.end = active.tasks.end();
    save_walk(walk);
    if (walk.next != walk.end && !walk.walked_enough()) walks_.push_back(walk);
  }
  size_t position = 0;
  for (; position < stop && walks_.size() > 1; ++position) {
    size_t kept = 0;
    for (size_t i = 0; i < walks_.size(); ++i) {
      TeamWalk& walk = walks_[i];
      look_at(walk);
      if (!walk_past(walk, position)) {
        stop = position;
        break;
      }
      save_walk(walk);
      if (walk.next == walk.end || walk.walked_enough()) continue;
      if (kept != i) walks_[kept] = walk;
      ++kept;
    }
    walks_.resize(kept);
  }
  // The last queue still walked goes on alone (one team at work: the common case).
  if (walks_.size() == 1 && position < stop) {
    TeamWalk& walk = walks_[0];
    look_at(walk);
    for (; position < stop && walk.next != walk.end; ++position) {
      if (!walk_past(walk, position)) {
        stop = position;
        break;
      }
      if (walk.walked_enough(parking_known_, deciders_left_)) break;
    }
  }
  const size_t skipped = std::min(stop, longest);
  emit_skipped_decisions(skipped, out);
  // Park each team's first heads (what those cycles' heads were), each with its like tasks.
  for (uint32_t team : teams_) core_.tasks.park_first(team, skipped);
}

// Each skipped cycle's heads that decide anew, nominated and ordered as that cycle would order
// them (order_entries: its order is total, so the heads that decide keep their order among all
// of the cycle's heads), then emitted as process() does for a parked head. A cycle with one head
// that decides has nothing to order, so its order keys (fair shares, under fair sharing) are not
// computed. Such cycles are 98% of the skipped cycles with a decision on the 70% trace's first
// 100,000 events (docs/perf/analysis.md, session 28).
void Scheduler::emit_skipped_decisions(size_t stop, std::vector<Decision>& out) {
  std::sort(deciders_.begin(), deciders_.end(),
            [](const Decider& a, const Decider& b) { return a.position < b.position; });
  size_t next = 0;
  while (next < deciders_.size() && deciders_[next].position < stop) {
    const size_t position = deciders_[next].position;
    size_t count = 0;
    for (; next < deciders_.size() && deciders_[next].position == position; ++next) {
      const Decider& decider = deciders_[next];
      next_entry(count, decider.task, decider.team, /*preemptor=*/false);
    }
    // Nominated once all are made: making one may grow entries_, and a nomination that is not
    // cached lives in its entry (Entry::own).
    for (size_t i = 0; i < count; ++i) entries_[i].nomination = nomination_for(entries_[i]);
    if (count == 1) {
      emit_assignment_pending(entries_[0], out);
      continue;
    }
    for (size_t i = 0; i < count; ++i) set_order_keys(entries_[i]);
    order_entries(count);
    for (uint32_t i : order_) emit_assignment_pending(entries_[i], out);
  }
}

// Whether every task of the set would park, and how, tested once per class slot through a task
// of it (quiet_head is a function of the queue class: the nomination of its shape against the
// state, and its last pending decision), or by the verdict kept for the slot (TeamVerdicts).
// Tallies the classes known to park (parking_known_) and the tasks of those that decide anew
// (deciders_left_) for the walk; returns false when a class known not to park ends the tally
// early (the walk then goes to where it is). A class whose nomination is not remembered for the
// current state is not nominated here: the walk does it only if it gets that far (a class far
// down the queue, behind a task that does not park, is not nominated).
bool Scheduler::quiet_classes(uint32_t team, const QueueSet& set) {
  renew_verdicts(team);
  looked_at_classes_ = &set.classes;
  parking_known_ = 0;
  deciders_left_ = 0;
  const SetClasses& classes = set.classes;
  TeamVerdicts& kept = *looked_at_;
  const TeamVerdicts::QuietTally now{kept.epoch, kept.team_stamps, set.id, classes.changes};
  if (kept.all_quiet.epoch == now.epoch && kept.all_quiet.team_stamps == now.team_stamps &&
      kept.all_quiet.set == now.set && kept.all_quiet.changes == now.changes) {
    ++cycles_;  // the work of the tally: one comparison
    parking_known_ = classes.present.size();
    return true;
  }
  std::vector<Verdict>& verdicts = kept.slots;
  if (verdicts.size() < classes.counts.size()) verdicts.resize(classes.counts.size());
  cycles_ += classes.present.size();  // the work of the tally: one verdict per class
  for (uint32_t slot : classes.present) {
    Verdict& verdict = verdicts[slot];
    if (!verdict_holds(verdict)) {
      const int32_t representative = classes.counts[slot].representative;
      if (representative < 0) continue;
      const Quiet quiet = quiet_head(static_cast<uint32_t>(representative), /*compute=*/false);
      if (quiet == Quiet::unknown) continue;
      set_verdict(verdict, slot, quiet);
    }
    if (verdict.quiet == Quiet::no) return false;  // the walk finds where
    tally(slot, verdict.quiet);
  }
  if (parking_known_ == classes.present.size() && deciders_left_ == 0 && kept.foreign == 0) kept.all_quiet = now;
  return true;
}

void Scheduler::renew_verdicts(uint32_t team) {
  if (team_verdicts_.size() <= team) team_verdicts_.resize(core_.module.teams.size());
  TeamVerdicts& kept = team_verdicts_[team];
  looked_at_ = &kept;
  looked_at_team_ = team;
  kept.team_stamps = 0;
  for (const ir::FlavorQuota& quota : core_.module.teams[team].quotas)
    kept.team_stamps += stamps_[quota.flavor] + stamps_.local(quota.flavor);
  const uint64_t cache_generation = cache_.generation();
  const uint32_t table_generation = core_.tasks.queue(team).classes.generation;
  if (kept.epoch != 0 && kept.cache_generation == cache_generation && kept.table_generation == table_generation)
    return;
  kept.cache_generation = cache_generation;
  kept.table_generation = table_generation;
  kept.epoch = ++verdict_epoch_;
  kept.foreign = 0;
}

int32_t Scheduler::class_flavor(uint32_t team, uint32_t slot) const {
  const QueueClass& value = core_.tasks.queue(team).classes.slots[slot].value;
  if (value.pod_sets != nullptr || !core_.module.teams[team].groups.empty()) return -1;
  return value.requested_flavor;
}

bool Scheduler::still_holds(Verdict& verdict, uint64_t stamps) {
  // The epoch holds the cache's generation, so the entry is still its class's shape's.
  const Nomination* nomination = verdict.nomination;
  if (nomination == nullptr || nomination->fill != verdict.fill) return false;
  // A cached nomination is of a class without pod sets or resource groups, whose class_flavor
  // is its tasks' requested flavor: the verdict's own copy, read without the class record.
  if (!still_own_determined(*nomination, looked_at_team_, verdict.flavor)) return false;
  verdict.stamps = stamps;
  return true;
}

void Scheduler::set_verdict(Verdict& verdict, uint32_t slot, Quiet quiet) {
  if (verdict.epoch != looked_at_->epoch) {
    verdict.flavor = class_flavor(looked_at_team_, slot);
    if (verdict.flavor >= 0 && core_.quota.table().slot(looked_at_team_, static_cast<uint32_t>(verdict.flavor)) == 0)
      ++looked_at_->foreign;
  }
  verdict.epoch = looked_at_->epoch;
  verdict.stamps = class_stamps(verdict.flavor);
  verdict.nomination = probed_;
  verdict.fill = probed_ != nullptr ? probed_->fill : 0;
  verdict.quiet = quiet;
}

// quiet_head of a task of the set quiet_classes last looked at, through the verdict kept for its
// class slot (a new verdict that parks is tallied).
Scheduler::Quiet Scheduler::quiet_in_class(uint32_t task) {
  const uint32_t slot = core_.tasks.queue_class_of(task);
  std::vector<Verdict>& verdicts = looked_at_->slots;
  if (slot >= verdicts.size()) verdicts.resize(slot + 1);
  Verdict& verdict = verdicts[slot];
  if (!verdict_holds(verdict)) {
    set_verdict(verdict, slot, quiet_head(task, /*compute=*/true));
    if (verdict.quiet != Quiet::no) tally(slot, verdict.quiet);
  }
  return verdict.quiet;
}

// What a cycle with `task` as its team's head would do with it (process() and emit_pending, for
// a parked head). A parked head of a team that cannot always reclaim reserves quota for the rest
// of its cycle (reserve_for_unreclaimable), but that changes only what a later head that fits is
// checked against, and a skipped cycle has none. With `compute` false, a nomination that would
// have to be computed is not, and the answer is `unknown`.
Scheduler::Quiet Scheduler::quiet_head(uint32_t task, bool compute) {
  probe_.task = task;
  probe_.team = static_cast<uint32_t>(core_.tasks[task].team);
  Nomination* nomination = nomination_for(probe_, compute);
  probed_ = nomination != &probe_.own ? nomination : nullptr;
  if (nomination == nullptr) return Quiet::unknown;
  const Assignment& a = nomination->assignment;
  if (!nomination->parks()) return Quiet::no;  // admitted or preempting
  // Parked with flavors left to try, it goes straight back and resumes its scan (process).
  if (a.pending_flavors()) return Quiet::no;
  // A tree of cohorts orders a cycle's heads by a tournament over the usage: a head that decides
  // anew is left to its cycle.
  const Quiet decides = core_.module.settings.fair_sharing && core_.quota.tree() ? Quiet::no : Quiet::decides;
  Task& t = core_.tasks[task];
  if (t.last_reason != assignment_reason(a)) return decides;
  const std::string& message = assignment_message(task, *nomination);
  if (t.last_message_serial != 0 && t.last_message_serial == nomination->message_serial) return Quiet::yes;
  if (t.last_message != message) return decides;
  t.last_message_serial = nomination->message_serial;  // the same text: the next test is a number's
  return Quiet::yes;
}

// §3 step 1: one head per team; a sticky preemptor first (docs/semantics.md §3).
size_t Scheduler::collect_heads() {
  core_.tasks.teams_with_work(teams_);
  size_t count = 0;
  for (uint32_t team : teams_) {
    const bool sticky = core_.tasks.queue(team).sticky >= 0;
    const int32_t head = core_.tasks.take_head(team);
    if (head < 0) continue;
    next_entry(count, static_cast<uint32_t>(head), team, sticky);
  }
  return count;
}

Scheduler::Entry& Scheduler::next_entry(size_t& count, uint32_t task, uint32_t team, bool preemptor) {
  if (count == entries_.size()) entries_.emplace_back();
  Entry& entry = entries_[count++];
  entry.task = task;
  entry.team = team;
  entry.preemptor = preemptor;
  entry.nomination = nullptr;
  entry.result = Result::parked;
  entry.recomputed = false;
  entry.resumed = false;
  return entry;
}

void Scheduler::nominate(Entry& entry) {
  entry.nomination = nomination_for(entry);
  set_order_keys(entry);
}

// §3 step 3: the flavor assignment and, in mode Preempt, the victims; remembered per task shape
// until something in the instance types it may use changes (NominationCache).
Nomination* Scheduler::nomination_for(Entry& entry, bool compute) {
  Task& task = core_.tasks[entry.task];
  // Self-check runs recompute everything; a task of several pod sets is its own shape (their
  // names are in its messages), so it is never cached.
  // A task of a team with resource groups is not cached either (it takes flavors of several
  // groups; the cache keys on one).
  // A task whose scan resumes where it stopped is nominated apart from its shape.
  const ScanProgress* progress = progress_.empty() ? nullptr : progress_of(entry.task);
  if (compute) entry.resumed = progress != nullptr;
  const bool use_cache = !core_.options.self_check && task.pod_sets.empty() && progress == nullptr &&
                         core_.module.teams[static_cast<size_t>(task.team)].groups.empty();
  bool valid = false;
  if (!compute && !use_cache) return nullptr;
  Nomination* stored = !use_cache ? nullptr
                       : compute  ? cache_.lookup(core_.module, task, stamps_, valid)
                                  : cache_.peek(core_.module, task, stamps_, valid);
  if (valid) return stored;
  if (stored != nullptr && stored->own_determined) {
    const uint64_t version = own_version(entry.team, task.requested_flavor);
    if (version == stored->own_version ? cohort_bounds_hold(*stored) : renew_own_answer(*stored, entry, version))
      return stored;
  }
  if (!compute) return nullptr;
  Nomination& nomination = stored != nullptr ? *stored : entry.own;
  // The message is a function of the reasons (a cached shape has no pod set names): when a new
  // state gives the same reasons, as it mostly does for a parked head, the text is kept.
  const bool had_message = stored != nullptr && nomination.message_ready;
  if (had_message) reasons_before_ = nomination.assignment.reasons;
  assigner_.set_now(core_.now);
  // Nominations are made between cycles (at a cycle's start, or in skip_quiet_cycles): the
  // quota holds the admitted tasks' usage and nothing else.
  assigner_.remember_searches(core_.tasks.state_serial());
  assigner_.memo_between_cycles(&core_.between_cycles);
  // A cached entry filled in before parked its shape then: it mostly parks again.
  assigner_.expect_no_fit(stored != nullptr && stored->fill != 0 && stored->parks());
  assigner_.scan_from(progress != nullptr ? &progress->next_flavor : nullptr);
  assigner_.assign(entry.task, nomination.assignment);
  assigner_.scan_from(nullptr);
  assigner_.expect_no_fit(false);
  assigner_.remember_searches(0);
  nomination.fill = ++fills_;
  nomination.targets.clear();
  nomination.order_keys_version = 0;
  nomination.message_ready = had_message && nomination.assignment.reasons == reasons_before_;
  if (nomination.assignment.preempt_mode()) {
    assigner_.targets_for(entry.task, nomination.assignment, nomination.targets);
  }
  assigner_.memo_between_cycles(nullptr);
  nomination.own_determined = stored != nullptr && assigner_.own_determined() && nomination.parks();
  nomination.flavor_local = stored != nullptr && assigner_.flavor_local();
  if (nomination.own_determined) {
    nomination.own_version = own_version(entry.team, task.requested_flavor);
    nomination.cohort_bounds = assigner_.cohort_bounds();
    nomination.own_reads = assigner_.own_reads();
  }
  return &nomination;
}

// Most own-determined nominations recomputed because the team's own tasks changed give the same
// answer: a resource that still fits moved (memory) while the one short (GPUs) did not, or the
// tasks changed and the usage came back. What the answer read is checked instead of recomputed.
bool Scheduler::renew_own_answer(Nomination& nomination, const Entry& entry, uint64_t version) {
  if (nomination.own_reads.flavor < 0 || version == nomination.renewal_failed_at) return false;
  assigner_.set_now(core_.now);
  assigner_.memo_between_cycles(&core_.between_cycles);
  const bool holds = assigner_.own_answer_holds(entry.task, nomination.own_reads, nomination.assignment);
  assigner_.memo_between_cycles(nullptr);
  if (!holds) {
    nomination.renewal_failed_at = version;
    return false;
  }
  nomination.own_version = version;
  nomination.cohort_bounds = assigner_.cohort_bounds();
  GOV_ASSERT(same_as_recomputed(entry.task, nomination), "a renewed own-determined nomination is the one assign gives");
  return true;
}

bool Scheduler::same_as_recomputed(uint32_t task, const Nomination& nomination) {
  Nomination fresh;
  assigner_.memo_between_cycles(&core_.between_cycles);
  assigner_.assign(task, fresh.assignment);
  if (fresh.assignment.preempt_mode()) assigner_.targets_for(task, fresh.assignment, fresh.targets);
  assigner_.memo_between_cycles(nullptr);
  const Assignment& a = fresh.assignment;
  const Assignment& b = nomination.assignment;
  return a.flavor == b.flavor && a.mode == b.mode && a.borrowing == b.borrowing &&
         a.needs_preemption == b.needs_preemption && a.no_matching_flavor == b.no_matching_flavor &&
         a.no_fit_class == b.no_fit_class && a.reasons == b.reasons && a.short_of == b.short_of &&
         a.maximum == b.maximum && a.short_mask == b.short_mask && a.maximum_mask == b.maximum_mask &&
         fresh.targets.empty() && nomination.targets.empty() && assigner_.own_determined() &&
         assigner_.cohort_bounds() == nomination.cohort_bounds;
}

// A cached nomination whose stamps moved still holds when it read only its team's own state
// (FlavorAssigner::own_determined): the team's admitted tasks, hence its usage, are the same in
// every instance type the task may use (own_version: a change in another type leaves the answer
// alone), and each available() it read still takes the team's own limit, the cohort having at
// least as much left. Time is the cache's concern as for any entry (begin_cycle).
bool Scheduler::still_own_determined(const Nomination& nomination, uint32_t team, int32_t requested_flavor) const {
  return nomination.own_determined && own_version(team, requested_flavor) == nomination.own_version &&
         cohort_bounds_hold(nomination);
}

bool Scheduler::cohort_bounds_hold(const Nomination& nomination) const {
  for (const FlavorAssigner::CohortBound& bound : nomination.cohort_bounds) {
    if (core_.quota.cohort_left(bound.flavor, bound.resource) < bound.limit_left) return false;
  }
  return true;
}

uint64_t Scheduler::own_version_of_team(uint32_t team) const {
  uint64_t sum = 0;
  for (const ir::FlavorQuota& quota : core_.module.teams[team].quotas) sum += core_.tasks.cell_version(team, quota.flavor);
  return sum;
}

void Scheduler::set_order_keys(Entry& entry) {
  const Assignment& a = entry.nomination->assignment;
  entry.borrows = a.borrowing;
  if (!core_.module.settings.fair_sharing) return;
  Nomination& nomination = *entry.nomination;
  const uint64_t version = core_.tasks.team_version(entry.team) + 1;
  if (nomination.order_keys_version != version) {
    compute_fair_order_keys(entry);
    nomination.share = entry.share;
    nomination.borrows_requested = entry.borrows_requested;
    nomination.order_keys_version = version;
    return;
  }
  entry.share = nomination.share;
  entry.borrows_requested = nomination.borrows_requested;
}

void Scheduler::compute_fair_order_keys(Entry& entry) {
  const Assignment& a = entry.nomination->assignment;
  // The fair-sharing order compares shares after admitting each entry; in a flat cohort a
  // team's share depends on its own usage only, so these keys hold for the whole cycle.
  const int64_t weight = core_.module.teams[entry.team].fair_share_weight_micros;
  entry.borrows_requested = false;
  if (a.flavor < 0) {
    entry.share = dominant_resource_share(core_.quota, entry.team, weight);
    return;
  }
  // Whether admitting `request` in `flavor` makes the team borrow in any resource it requests.
  const auto borrows_in = [&](uint32_t flavor, const Resources& request) {
    for (ir::Resource r : core_.quota.charged()) {
      const Amount amount = request[ir::index(r)];
      if (amount > 0 && core_.quota.borrowing_with(entry.team, flavor, r, amount)) return true;
    }
    return false;
  };
  if (a.pod_set_count > 0) {  // several flavors: the share with every part admitted
    const PreemptionRequest parts = assigner_.request_for(entry.task, a);
    for (const RequestPart& part : parts.all())
      entry.borrows_requested = entry.borrows_requested || borrows_in(part.flavor, part.request);
    for (const RequestPart& part : parts.all()) core_.quota.add(entry.team, part.flavor, part.request);
    entry.share = dominant_resource_share(core_.quota, entry.team, weight);
    for (const RequestPart& part : parts.all()) core_.quota.subtract(entry.team, part.flavor, part.request);
    return;
  }
  const auto flavor = static_cast<uint32_t>(a.flavor);
  const Resources& request = core_.tasks[entry.task].request;
  entry.share = dominant_resource_share(core_.quota, entry.team, weight, flavor, &request);
  entry.borrows_requested = borrows_in(flavor, request);
}

// §3 step 4. Classical: preemptor first, non-borrowing first, higher priority, earlier
// submission. Fair sharing (the tournament of a flat cohort): preemptor first, non-borrowing
// first, lower share after admission, higher priority, earlier submission. Then team order
// (one entry per team, so the order is total).
void Scheduler::order_entries(size_t count) {
  order_.resize(count);
  for (size_t i = 0; i < count; ++i) order_[i] = static_cast<uint32_t>(i);
  const bool fair = core_.module.settings.fair_sharing;
  std::sort(order_.begin(), order_.end(), [this, fair](uint32_t x, uint32_t y) {
    const Entry& a = entries_[x];
    const Entry& b = entries_[y];
    if (a.preemptor != b.preemptor) return a.preemptor;
    if (fair) {
      if (a.borrows_requested != b.borrows_requested) return !a.borrows_requested;
      const int share = compare_drs(a.share, b.share);
      if (share != 0) return share < 0;
    } else if (a.borrows != b.borrows) {
      return a.borrows < b.borrows;
    }
    const Task& ta = core_.tasks[a.task];
    const Task& tb = core_.tasks[b.task];
    if (ta.priority != tb.priority) return ta.priority > tb.priority;
    if (ta.submitted_at != tb.submitted_at) return ta.submitted_at < tb.submitted_at;
    return a.team < b.team;
  });
}

// §3 step 5 (processEntry).
void Scheduler::process(Entry& entry, std::vector<Decision>& out) {
  decide(entry, out);
  if (record_progress(entry)) {
    // Kueue's requeueIfNotPresent: a head with flavors left to try goes straight back
    // (PendingFlavors), and its next nomination differs from this one.
    if (entry.result == Result::parked) entry.result = Result::requeued;
    another_cycle_for(entry.task);
    return;
  }
  const bool strict = core_.module.teams[entry.team].queueing == ir::Queueing::strict_fifo;
  // Kueue's SchedulingEquivalenceHashing (on since 0.18): a best-effort FIFO head parked with no
  // fit or no victims takes the tasks of its queue with its shape along (handleInadmissibleHash),
  // and so ends their turns as heads: other teams' heads of the next cycles meet the team's next
  // different task, as in Kueue (a Kueue auditor's findings).
  if (entry.result == Result::parked && !strict) core_.tasks.park_shape(entry.task);
  if (!entry.resumed) return;
  // A resumed scan that left no progress: a head that stays in the queue (skipped, or a
  // StrictFIFO head) scans from the first flavor next, so the next cycle is not this one again.
  if (entry.result == Result::requeued || (entry.result == Result::parked && strict)) another_cycle_for(entry.task);
}

// Kueue retries such a head every cycle for as long as it fails; a StrictFIFO head whose scans
// alternate (one stops early with no victims, the next resumes and fits nowhere) would retry
// forever. An instant ends at a fixed point, so each task asks for at most kCyclesPerInstant more
// cycles at one time; the progress it leaves is kept for the next instant.
void Scheduler::another_cycle_for(uint32_t task) {
  if (progress_cycles_at_ != core_.now) {
    progress_cycles_at_ = core_.now;
    progress_cycles_.clear();
  }
  auto it = std::find_if(progress_cycles_.begin(), progress_cycles_.end(), [task](const auto& p) { return p.first == task; });
  if (it == progress_cycles_.end()) it = progress_cycles_.insert(progress_cycles_.end(), {task, 0});
  if (it->second >= kCyclesPerInstant) return;
  ++it->second;
  progress_requeued_ = true;
}

const Scheduler::ScanProgress* Scheduler::progress_of(uint32_t task) {
  for (size_t i = 0; i < progress_.size(); ++i) {
    const ScanProgress& progress = progress_[i];
    if (progress.task != task) continue;
    const Task& t = core_.tasks[task];
    const bool outdated = t.state != TaskState::pending ||
                          (scheduling_cycle_ - progress.cycle > 1 &&
                           core_.tasks.team_removals(static_cast<uint32_t>(t.team)) > progress.removals);
    if (!outdated) return &progress;
    progress_.erase(progress_.begin() + static_cast<std::ptrdiff_t>(i));
    return nullptr;
  }
  return nullptr;
}

bool Scheduler::record_progress(const Entry& entry) {
  // A recomputation (overlapping targets) assigned again from the first flavor (Kueue clears
  // LastAssignment first) and records its own scan.
  const Assignment& a = entry.recomputed ? entry.own.assignment : entry.nomination->assignment;
  const bool stays = entry.result == Result::parked || entry.result == Result::requeued;
  if (!stays || !a.pending_flavors()) {
    if (!progress_.empty()) forget_progress(entry.task);
    return false;
  }
  auto it = std::find_if(progress_.begin(), progress_.end(), [&](const ScanProgress& p) { return p.task == entry.task; });
  if (it == progress_.end()) it = progress_.insert(progress_.end(), ScanProgress{});
  it->task = entry.task;
  it->next_flavor = a.next_flavor;
  it->cycle = scheduling_cycle_;
  it->removals = core_.tasks.team_removals(entry.team);  // evictions come at the cycle's end
  return true;
}

void Scheduler::forget_progress(uint32_t task) {
  std::erase_if(progress_, [task](const ScanProgress& p) { return p.task == task; });
}

void Scheduler::decide(Entry& entry, std::vector<Decision>& out) {
  const Assignment& a = entry.nomination->assignment;
  if (entry.nomination->parks()) {
    if (a.preempt_mode()) reserve_for_unreclaimable(entry);
    entry.result = Result::parked;
    emit_assignment_pending(entry, out);
    return;
  }
  if (overlaps_cycle_victims(entry)) {
    if (recompute_overlapping(entry, out)) return;
    entry.result = Result::requeued;
    emit_pending(core_, entry.task,
                 {PendingReason::waiting_for_quota, kOverlappingTargets, nullptr, nullptr}, out);
    return;
  }
  if (!fits_after_cycle_victims(entry)) {
    entry.result = Result::requeued;
    emit_pending(core_, entry.task,
                 {PendingReason::waiting_for_quota, kNoLongerFits, nullptr, nullptr}, out);
    return;
  }
  if (a.preempt_mode()) {
    issue_preemptions(entry, out);
    entry.result = Result::preempting;
    return;
  }
  // The cycle's victims are charged until it ends, but their `preempted` lines come before this
  // one: its `borrowed` is counted without them, as it fitted (a what-if analyst's finding,
  // session 43: `borrowed gpu 2` where the team held 2 of its 4 once its victim was gone, and
  // the stream's own reports counted nothing borrowed).
  if (!cycle_victims_.empty()) release_cycle_victims(false);
  admit(core_, entry.task, a, out);
  if (!cycle_victims_.empty()) release_cycle_victims(true);
  entry.result = Result::admitted;
}

bool Scheduler::overlaps_cycle_victims(const Entry& entry) const {
  for (const Target& target : entry.nomination->targets) {
    if (std::find(cycle_victims_.begin(), cycle_victims_.end(), target.task) !=
        cycle_victims_.end())
      return true;
  }
  return false;
}

// Kueue HEAD's RecomputeAssignmentUponPreemptionTargetsOverlap (updateAssignmentIfNeeded; docs/
// semantics-decisions.md "Overlapping preemption targets"): the task's targets overlap this
// cycle's victims, so it is assigned again as if those preemptions had completed (their usage
// out of the quota; they are no candidates, being preempted at this instant), on the flavor it
// was nominated for. If that fits it waits for them, holding its request; if it needs other
// targets and fits with them gone, it preempts them now. Returns false when neither holds: the
// caller skips it as before.
bool Scheduler::recompute_overlapping(Entry& entry, std::vector<Decision>& out) {
  Nomination& again = entry.own;  // never the cache's: the result holds for this state only
  release_cycle_victims(false);
  assigner_.set_now(core_.now);
  assigner_.assign_pinned(entry.task, again.assignment, entry.nomination->assignment);
  again.targets.clear();
  again.message_ready = false;
  if (again.assignment.preempt_mode())
    assigner_.targets_for(entry.task, again.assignment, again.targets);
  release_cycle_victims(true);
  entry.recomputed = true;

  if (again.assignment.fits()) {
    entry.nomination = &again;
    reserve_request(entry);
    entry.result = Result::preempting;  // sticky: tried first once the victims are gone
    emit_pending(core_, entry.task,
                 {PendingReason::waiting_for_preemption, kOverlappingTargetsWillFit, nullptr,
                  nullptr},
                 out);
    return true;
  }
  if (!again.assignment.preempt_mode() || again.targets.empty()) return false;
  entry.nomination = &again;
  if (!fits_after_cycle_victims(entry)) return false;
  issue_preemptions(entry, out);
  entry.result = Result::preempting;
  return true;
}

// Takes this cycle's victims' usage out of the quota (`give_back` false) or puts it back.
void Scheduler::release_cycle_victims(bool give_back) {
  for (uint32_t victim : cycle_victims_) release_quota(victim, give_back);
}

void Scheduler::release_quota(uint32_t victim, bool give_back) {
  const Task& t = core_.tasks[victim];
  const auto team = static_cast<uint32_t>(t.team);
  for_each_charge(t, [&](uint32_t flavor, const Resources& amounts) {
    give_back ? core_.quota.add(team, flavor, amounts) : core_.quota.subtract(team, flavor, amounts);
  });
}

// A preemptor's request held on its flavor for the rest of the cycle (cq.AddUsage), so later
// heads cannot take what its victims free.
void Scheduler::reserve_request(const Entry& entry) {
  const PreemptionRequest request = assigner_.request_for(entry.task, entry.nomination->assignment);
  for (const RequestPart& part : request.all()) {
    Reservation reservation{entry.team, part.flavor, part.request};
    core_.quota.add(reservation.team, reservation.flavor, reservation.amounts);
    reservations_.push_back(reservation);
  }
}

// `fits`: the request against the current usage with every victim of this cycle, and the
// entry's own, simulated as gone (cq.Fits: request <= Available).
bool Scheduler::fits_after_cycle_victims(const Entry& entry) {
  const std::vector<Target>& targets = entry.nomination->targets;
  for (uint32_t victim : cycle_victims_) release_quota(victim, false);
  for (const Target& target : targets) release_quota(target.task, false);
  const PreemptionRequest request = assigner_.request_for(entry.task, entry.nomination->assignment);
  bool fits = true;
  for (const RequestPart& part : request.all()) {
    for (ir::Resource r : core_.quota.charged()) {
      const Amount amount = part.request[ir::index(r)];
      if (amount > 0 && amount > core_.quota.available(entry.team, part.flavor, r)) fits = false;
    }
  }
  for (const Target& target : targets) release_quota(target.task, true);
  for (uint32_t victim : cycle_victims_) release_quota(victim, true);
  return fits;
}

// quotaResourcesToReserve: a team that cannot always reclaim (reclaimWithinCohort != Any)
// holds what it could get for the rest of the cycle, so later heads cannot take it.
void Scheduler::reserve_for_unreclaimable(const Entry& entry) {
  const ir::Team& team = core_.module.teams[entry.team];
  if (team.reclaim_within_cohort == ir::ReclaimWithinCohort::any) return;
  const Assignment& assignment = entry.nomination->assignment;
  const PreemptionRequest request = assigner_.request_for(entry.task, assignment);
  for (const RequestPart& part : request.all()) {
    const uint32_t flavor = part.flavor;
    Reservation reservation{entry.team, flavor, {}};
    for (ir::Resource r : core_.quota.charged()) {
      const Amount amount = part.request[ir::index(r)];
      if (amount == 0) continue;
      const Amount used = core_.quota.usage(entry.team, flavor, r);
      const Amount nominal = core_.quota.nominal(entry.team, flavor, r);
      const Amount ceiling =
          assignment.borrowing > 0
              ? saturating_add(nominal, core_.quota.borrowing_limit(entry.team, flavor, r))
              : nominal;
      reservation.amounts[ir::index(r)] =
          std::max<Amount>(0, std::min(amount, ceiling == ir::kUnlimited ? amount : ceiling - used));
    }
    core_.quota.add(reservation.team, reservation.flavor, reservation.amounts);
    reservations_.push_back(reservation);
  }
}

void Scheduler::issue_preemptions(Entry& entry, std::vector<Decision>& out) {
  if (core_.options.self_check) self_check_victims(entry);
  const std::vector<Target>& targets = entry.nomination->targets;
  // The preemptor's usage holds the freed quota for the rest of the cycle; victims leave at
  // the end of the cycle and the preemptor is admitted first in the next one.
  reserve_request(entry);
  for (const Target& target : targets) cycle_victims_.push_back(target.task);

  const std::string message =
      pending_preemption_message(assignment_message(entry.task, *entry.nomination), targets.size());
  PendingUpdate update{PendingReason::waiting_for_preemption, message, nullptr, &targets};
  std::string shown;
  if (core_.options.dialect != MessageDialect::head) {
    shown = pending_preemption_message(shown_message(entry.task, *entry.nomination), targets.size());
    update.shown = shown;
  }
  emit_pending(core_, entry.task, update, out);
  for (const Target& target : targets) emit_preempted(core_, target, entry.task, out);
}

const std::string& Scheduler::assignment_message(uint32_t task, Nomination& nomination) {
  if (!nomination.message_ready) {
    const Task& t = core_.tasks[task];
    std::array<std::string_view, kMaxPodSets> names{};
    for (size_t i = 0; i < t.pod_sets.size(); ++i) names[i] = t.pod_sets[i].name;
    render_assignment_message(reason_texts_, nomination.assignment.reasons, nomination.message,
                              std::span<const std::string_view>(names.data(), t.pod_sets.size()));
    nomination.message_ready = true;
    nomination.message_serial = next_message_serial();
  }
  return nomination.message;
}

std::string_view Scheduler::shown_message(uint32_t task, Nomination& nomination) {
  const std::string& head = assignment_message(task, nomination);
  if (core_.options.dialect == MessageDialect::head) return head;
  const Task& t = core_.tasks[task];
  std::array<std::string_view, kMaxPodSets> names{};
  for (size_t i = 0; i < t.pod_sets.size(); ++i) names[i] = t.pod_sets[i].name;
  render_assignment_message(shown_texts_, nomination.assignment.reasons, shown_,
                            std::span<const std::string_view>(names.data(), t.pod_sets.size()));
  return shown_;
}

PendingReason Scheduler::assignment_reason(const Assignment& a) {
  if (a.no_matching_flavor) return PendingReason::no_matching_flavor;
  if (a.mode.mode == FitMode::no_fit && a.no_fit_class == NoFitClass::exceeds_max_quota)
    return PendingReason::exceeds_max_quota;
  return PendingReason::waiting_for_quota;
}

void Scheduler::emit_assignment_pending(const Entry& entry, std::vector<Decision>& out) {
  const Assignment& a = entry.nomination->assignment;
  const std::string& message = assignment_message(entry.task, *entry.nomination);
  PendingUpdate update{assignment_reason(a), message, &a, nullptr, entry.nomination->message_serial};
  if (core_.options.dialect != MessageDialect::head) update.shown = shown_message(entry.task, *entry.nomination);
  emit_pending(core_, entry.task, update, out);
}

bool Scheduler::finish_cycle(size_t count) {
  for (const Reservation& r : reservations_) core_.quota.subtract(r.team, r.flavor, r.amounts);
  reservations_.clear();
  for (uint32_t victim : cycle_victims_) evict(core_, victim);
  const bool evicted = !cycle_victims_.empty();
  cycle_victims_.clear();

  bool changed = evicted || progress_requeued_;
  progress_requeued_ = false;
  // A task that left the queue (cancelled, finished) has no scan to resume.
  if (!progress_.empty()) {
    std::erase_if(progress_, [this](const ScanProgress& p) { return core_.tasks[p.task].state != TaskState::pending; });
  }
  for (size_t i = 0; i < count; ++i) {
    const Entry& entry = entries_[i];
    switch (entry.result) {
      case Result::admitted:
        changed = true;
        break;
      case Result::preempting:
        core_.tasks.make_sticky(entry.task);
        break;
      case Result::requeued:
        core_.tasks.enqueue(entry.task);
        break;
      case Result::parked:
        // §7: StrictFIFO keeps the head where it is; BestEffortFIFO parks it until the cohort
        // changes.
        if (core_.module.teams[entry.team].queueing == ir::Queueing::strict_fifo) {
          core_.tasks.enqueue(entry.task);
        } else {
          core_.tasks.park(entry.task);
          changed = true;
        }
        break;
    }
  }
  // docs/semantics.md §3: parked heads come back one cycle after an eviction.
  if (reactivate_after_cycle_) changed = core_.tasks.reactivate_parked() || changed;
  reactivate_after_cycle_ = evicted;
  if (core_.options.self_check) self_check_usage();
  return changed;
}

void Scheduler::emit_current_pending(uint32_t task, std::vector<Decision>& out) {
  Entry entry;
  entry.task = task;
  entry.team = static_cast<uint32_t>(core_.tasks[task].team);
  entry.nomination = &entry.own;
  assigner_.set_now(core_.now);
  assigner_.assign(task, entry.own.assignment);
  if (!entry.own.assignment.fits()) {
    emit_assignment_pending(entry, out);
    return;
  }
  const std::string message = fmt::format("Workload is waiting behind the head of ClusterQueue {}",
                                          core_.module.teams[entry.team].name);
  emit_pending(core_, task, {PendingReason::waiting_for_quota, message, nullptr, nullptr}, out);
}

void Scheduler::self_check_victims(const Entry& entry) {
  const PreemptionRequest request = assigner_.request_for(entry.task, entry.nomination->assignment);
  // A recomputed search saw the usage now without this cycle's victims: check against the same.
  if (entry.recomputed) release_cycle_victims(false);
  for (const Target& target : entry.nomination->targets) {
    const Task& victim = core_.tasks[target.task];
    if (victim.preempted_at == core_.now) {
      core_.self_check_failures.push_back(
          fmt::format("`{}` preempted twice at time {}", victim.id, core_.now));
    }
    if (victim.team == static_cast<int32_t>(entry.team)) continue;
    const auto team = static_cast<uint32_t>(victim.team);
    bool over_nominal = false;
    for (const RequestPart& part : request.all()) {
      // A nomination's targets come from the cycle's start (Kueue's snapshot); a recomputed
      // one's from the usage now, which holds the requests earlier preemptors reserved (Kueue's
      // updateAssignmentIfNeeded searches the snapshot after their AddUsage).
      const Resources& usage = entry.recomputed
                                   ? core_.quota.usage(team, part.flavor)
                                   : cycle_start_usage_[team * core_.quota.flavor_count() + part.flavor];
      for (ir::Resource r : core_.quota.charged()) {
        if (contains(part.needs, r) && usage[ir::index(r)] > core_.quota.nominal(team, part.flavor, r))
          over_nominal = true;
      }
    }
    if (!over_nominal) {
      core_.self_check_failures.push_back(
          fmt::format("`{}` reclaimed from team `{}` at or under nominal at time {}", victim.id,
                      core_.module.teams[team].name, core_.now));
    }
  }
  if (core_.module.settings.fair_sharing)
    self_check_fair_tree_victims(core_.module, core_.quota,
                                 entry.recomputed ? std::span<const Resources>{} : std::span<const Resources>(cycle_start_usage_),
                                 core_.tasks, entry.team, entry.nomination->targets, core_.now, core_.self_check_failures);
  if (entry.recomputed) release_cycle_victims(true);
}

void Scheduler::self_check_usage() {
  const QuotaState& quota = core_.quota;
  for (uint32_t f = 0; f < quota.flavor_count(); ++f) {
    for (ir::Resource r : core_.quota.charged()) {
      if (quota.cohort_usage(f, r) > quota.cohort_quota(f, r)) {
        core_.self_check_failures.push_back(
            fmt::format("cohort over its quota of {} in {} at time {}", ir::resource_key(r),
                        core_.module.flavors[f].name, core_.now));
      }
      for (uint32_t t = 0; t < quota.team_count(); ++t) {
        const Amount ceiling =
            saturating_add(quota.nominal(t, f, r), quota.borrowing_limit(t, f, r));
        if (quota.usage(t, f, r) > ceiling) {
          core_.self_check_failures.push_back(
              fmt::format("team `{}` over nominal + borrowing limit of {} in {} at time {}",
                          core_.module.teams[t].name, ir::resource_key(r),
                          core_.module.flavors[f].name, core_.now));
        }
      }
    }
  }
}

}  // namespace gov::engine
