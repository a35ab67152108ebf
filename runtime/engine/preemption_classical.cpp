// Classical preemption (docs/kueue-reference.md §5.2–§5.5, Kueue HEAD classicalPreemptionStrategy)
// for a flat cohort: candidates from other teams over nominal first, then the preemptor's own team;
// one or two attempts (with and without borrowing); the minimal set with fill-back.
#include <algorithm>

#include "runtime/engine/preemption_internal.hpp"

namespace gov::engine::preemption {
namespace {

/// How a candidate of another team may be preempted (classifyPreemptionVariant, flat cohort).
enum class Variant : uint8_t {
  hierarchical_reclaim,       // the preemptor stays within its nominal: always allowed
  reclaim_without_borrowing,  // only if the preemptor ends up not borrowing
  reclaim_while_borrowing,    // borrowWithinCohort lets it go while the preemptor borrows
};

/// The candidates in classical order, produced lazily and kept so both attempts can walk them:
/// other teams' candidates merged in candidate order, then the preemptor's own team.
class ClassicalSequence {
 public:
  ClassicalSequence(const SearchContext& context, const PreemptionRequest& request,
                    const ir::Team& team)
      : context_(context), dedupe_(request.part_count > 1) {
    const Task& preemptor = context.tasks[request.preemptor];
    const Policy reclaim = reclaim_policy(team);
    for (const RequestPart& part : request.all()) {
      CandidateCursor own(context, part, preemptor, request.team, within_team_policy(team));
      if (!own.done()) own_.push_back(own);
      if (reclaim == Policy::never) continue;
      for (uint32_t t : context.quota.quota_teams(part.flavor)) {
        if (t == request.team) continue;
        // §5.2: a team at or under nominal in the contested resources is never reclaimed from.
        // Over nominal in any contested (flavor, resource) of the request, its candidates in
        // every contested flavor count (Kueue's IsWithinNominalInResources over the whole set:
        // a Kueue auditor's finding, gov tested each flavor apart).
        if (!borrowing_in_any(context, t, request)) continue;
        CandidateCursor cursor(context, part, preemptor, t, reclaim);
        if (!cursor.done()) others_.push_back(cursor);
      }
    }
  }

  bool has_other_team_candidates() const { return !others_.empty(); }
  /// Every candidate once, in no particular order (without paying for the merge).
  std::vector<uint32_t> unordered() const {
    std::vector<uint32_t> out;
    for (const std::vector<CandidateCursor>* list : {&own_, &others_}) {
      for (CandidateCursor cursor : *list) {
        for (; !cursor.done(); cursor.advance()) {
          if (dedupe_ && std::find(out.begin(), out.end(), cursor.task()) != out.end()) continue;
          out.push_back(cursor.task());
        }
      }
    }
    return out;
  }

  /// The i-th candidate, or false past the end.
  bool get(size_t i, uint32_t& task) {
    while (items_.size() <= i) {
      if (!produce()) return false;
    }
    task = items_[i];
    return true;
  }

 private:
  // The next candidate: other teams' merged in candidate order, then the own team's (merged the
  // same way across flavors). A task of several pod sets is listed in each flavor it holds, so
  // requests of several flavors skip what was already produced.
  bool produce() {
    for (;;) {
      CandidateCursor* best = earliest(others_);
      if (best == nullptr) best = earliest(own_);
      if (best == nullptr) return false;
      const uint32_t task = best->task();
      best->advance();
      if (dedupe_ && std::find(items_.begin(), items_.end(), task) != items_.end()) continue;
      items_.push_back(task);
      return true;
    }
  }
  CandidateCursor* earliest(std::vector<CandidateCursor>& cursors) {
    CandidateCursor* best = nullptr;
    for (CandidateCursor& cursor : cursors) {
      if (cursor.done()) continue;
      if (best == nullptr ||
          candidate_order_less(context_.tasks[cursor.task()], context_.tasks[best->task()])) {
        best = &cursor;
      }
    }
    return best;
  }

  const SearchContext& context_;
  bool dedupe_;
  std::vector<CandidateCursor> others_;
  std::vector<CandidateCursor> own_;
  std::vector<uint32_t> items_;
};

Variant classify(const ir::Team& team, bool hierarchical_advantage, const Task& preemptor,
                 const Task& candidate) {
  if (hierarchical_advantage) return Variant::hierarchical_reclaim;
  if (team.borrow_within_cohort == ir::BorrowWithinCohort::never)
    return Variant::reclaim_without_borrowing;
  if (candidate.priority >= preemptor.priority ||
      candidate.priority > team.borrow_priority_threshold) {
    return Variant::reclaim_without_borrowing;
  }
  return Variant::reclaim_while_borrowing;
}

/// usage < nominal in every contested resource (queueUnderNominalInResourcesNeedingPreemption).
bool strictly_under_nominal(const QuotaState& quota, const PreemptionRequest& request) {
  for (const RequestPart& part : request.all()) {
    for (ir::Resource r : quota.charged()) {
      if (!contains(part.needs, r)) continue;
      if (quota.usage(request.team, part.flavor, r) >= quota.nominal(request.team, part.flavor, r))
        return false;
    }
  }
  return true;
}

/// The whole request within the team's nominal quota in every flavor (QuantitiesFitInQuota).
bool fits_in_nominal(const QuotaState& quota, const PreemptionRequest& request) {
  for (const RequestPart& part : request.all()) {
    if (!quota.fits_in_nominal(request.team, part.flavor, part.request)) return false;
  }
  return true;
}

struct Attempts {
  bool allow_borrowing[2] = {true, false};
  size_t count = 1;
};

// The attempt order of classicalPreemptionStrategy.
Attempts attempts_for(const ir::Team& team, bool other_candidates, bool hierarchical_advantage,
                      bool under_nominal) {
  const bool borrow_within_cohort_forbidden =
      team.borrow_within_cohort == ir::BorrowWithinCohort::never;
  if (!other_candidates || (borrow_within_cohort_forbidden && !under_nominal))
    return {{true, false}, 1};
  if (borrow_within_cohort_forbidden && !hierarchical_advantage) return {{false, true}, 2};
  return {{true, false}, 2};
}

void restore_all(const SearchContext& context, const std::vector<Target>& targets) {
  for (const Target& target : targets) restore_to_quota(context, target.task);
}

/// One attempt: remove valid candidates in order until the request fits, then fill back.
bool attempt(const SearchContext& context, const PreemptionRequest& request, const ir::Team& team,
             bool hierarchical_advantage, bool allow_borrowing, ClassicalSequence& sequence,
             std::vector<Target>& targets, SearchTrace* trace) {
  const Task& preemptor = context.tasks[request.preemptor];
  uint32_t task = 0;
  for (size_t i = 0; sequence.get(i, task); ++i) {
    const Task& candidate = context.tasks[task];
    const bool same_team = candidate.team == static_cast<int32_t>(request.team);
    Target target{task, PreemptionKind::in_team, false};
    if (!same_team) {
      const Variant variant = classify(team, hierarchical_advantage, preemptor, candidate);
      if (allow_borrowing && variant == Variant::reclaim_without_borrowing) {
        note(trace, task, CandidateNote::Verdict::skipped_needs_no_borrowing);
        continue;
      }
      if (!borrowing_in_any(context, static_cast<uint32_t>(candidate.team), request)) {
        note(trace, task, CandidateNote::Verdict::skipped_team_within_nominal);
        continue;
      }
      target.kind = PreemptionKind::reclaim;
      target.while_borrowing = variant == Variant::reclaim_while_borrowing;
    }
    remove_from_quota(context, task);
    targets.push_back(target);
    note(trace, task, CandidateNote::Verdict::removed);
    if (request_fits(context, request, allow_borrowing)) {
      fill_back(context, request, allow_borrowing, targets, trace);
      return true;
    }
  }
  return false;
}

}  // namespace

void classical_targets(const SearchContext& context, const PreemptionRequest& request,
                       std::vector<Target>& out, SearchTrace* trace) {
  if (context.quota.tree()) [[unlikely]] return hierarchical_classical_targets(context, request, out, trace);
  const ir::Team& team = context.module.teams[request.team];
  ClassicalSequence sequence(context, request, team);
  if (context.shortcuts && !fits_without_all(context, request, sequence.unordered())) return;
  // Flat cohort: the preemptor has the "hierarchical advantage" over every other team exactly
  // when the whole request fits within its nominal (QuantitiesFitInQuota).
  const bool advantage = fits_in_nominal(context.quota, request);
  const Attempts attempts = attempts_for(team, sequence.has_other_team_candidates(), advantage,
                                         strictly_under_nominal(context.quota, request));
  for (size_t a = 0; a < attempts.count; ++a) {
    out.clear();
    const bool found = attempt(context, request, team, advantage, attempts.allow_borrowing[a],
                               sequence, out, trace);
    restore_all(context, out);
    if (found) return;
  }
  out.clear();
}

}  // namespace gov::engine::preemption
