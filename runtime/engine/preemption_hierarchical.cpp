// Classical preemption in a tree of cohorts (Kueue HEAD's classical/hierarchical_preemption.go and
// candidate_generator.go; docs/semantics.md §5, "Cohort trees"): candidates from the lowest common
// ancestor outward, each level's with or without the preemptor's hierarchical advantage there.
#include <algorithm>

#include "runtime/engine/preemption_internal.hpp"

namespace gov::engine::preemption {
namespace {

/// One candidate of another team: the cohort at which its subtree was reached (the lowest common
/// ancestor of its team and the preemptor's) and whether the preemptor had the hierarchical
/// advantage there (its request fits in the quota of the subtree below that cohort).
struct Candidate {
  uint32_t task = 0;
  int32_t lca = -1;
  bool advantage = false;
};

/// How a candidate of another team may be preempted (classifyPreemptionVariant).
enum class Variant : uint8_t { hierarchical_reclaim, reclaim_without_borrowing, reclaim_while_borrowing };

Variant classify(const ir::Team& team, bool advantage, const Task& preemptor, const Task& candidate) {
  if (advantage) return Variant::hierarchical_reclaim;
  if (team.borrow_within_cohort == ir::BorrowWithinCohort::never) return Variant::reclaim_without_borrowing;
  if (candidate.priority >= preemptor.priority || candidate.priority > team.borrow_priority_threshold)
    return Variant::reclaim_without_borrowing;
  return Variant::reclaim_while_borrowing;
}

class TreeSearch {
 public:
  TreeSearch(const SearchContext& context, const PreemptionRequest& request)
      : context_(context),
        request_(request),
        team_(context.module.teams[request.team]),
        preemptor_(context.tasks[request.preemptor]) {}

  void run(std::vector<Target>& out, SearchTrace* trace) {
    collect_own();
    collect_others();
    if (context_.shortcuts && !fits_without_all(context_, request_, all_candidates())) return;
    const bool forbidden = team_.borrow_within_cohort == ir::BorrowWithinCohort::never;
    bool order[2] = {true, false};
    size_t count = 2;
    if ((hierarchy_.empty() && priority_.empty()) || (forbidden && !strictly_under_nominal())) {
      count = 1;
    } else if (forbidden && hierarchy_.empty()) {
      order[0] = false;
      order[1] = true;
    }
    for (size_t a = 0; a < count; ++a) {
      out.clear();
      const bool found = attempt(order[a], out, trace);
      for (const Target& target : out) restore_to_quota(context_, target.task);
      if (found) return;
    }
    out.clear();
  }

 private:
  // The preemptor's own team's candidates (withinClusterQueue), in candidate order.
  void collect_own() {
    for (const RequestPart& part : request_.all()) {
      for (CandidateCursor cursor(context_, part, preemptor_, request_.team, within_team_policy(team_)); !cursor.done();
           cursor.advance())
        add_unique(own_, cursor.task());
    }
    sort(own_);
  }

  // collectCandidatesForHierarchicalReclaim: from the team's cohort to the root, each level's
  // subtree less the one already walked; the advantage holds from the first level whose subtree
  // quota takes what the request still needs past the local quotas below it.
  void collect_others() {
    if (team_.reclaim_within_cohort == ir::ReclaimWithinCohort::never) return;
    const QuotaState& quota = context_.quota;
    std::vector<Resources> remaining;
    bool advantage = true;
    for (const RequestPart& part : request_.all()) {
      Resources left{};
      for (ir::Resource r : quota.charged()) {
        const Amount v = part.request[ir::index(r)];
        if (v == 0) continue;
        if (quota.usage(request_.team, part.flavor, r) + v > quota.nominal(request_.team, part.flavor, r)) advantage = false;
        left[ir::index(r)] = std::max<Amount>(0, v - quota.local_available(request_.team, part.flavor, r));
      }
      remaining.push_back(left);
    }
    int32_t previous = -1;
    for (int32_t node = quota.team_cohort(request_.team); node >= 0; node = quota.cohort_parent(node)) {
      collect_subtree(node, node, previous, advantage, advantage ? hierarchy_ : priority_);
      bool fits = true;
      size_t k = 0;
      for (const RequestPart& part : request_.all()) {
        Resources& left = remaining[k++];
        for (ir::Resource r : quota.charged()) {
          const Amount v = left[ir::index(r)];
          if (v == 0) continue;
          if (quota.cohort_subtree_quota(static_cast<uint32_t>(node), part.flavor, r) <
              quota.cohort_node_usage(static_cast<uint32_t>(node), part.flavor, r) + v)
            fits = false;
          left[ir::index(r)] = std::max<Amount>(0, v - quota.cohort_local_available(node, part.flavor, r));
        }
      }
      advantage = advantage || fits;
      previous = node;
    }
    sort(hierarchy_);
    sort(priority_);
  }

  // collectCandidatesInSubtree: child cohorts over their subtree quota in a contested resource
  // (skipping the subtree already walked), then the cohort's teams over nominal there.
  void collect_subtree(int32_t node, int32_t root, int32_t skip, bool advantage, std::vector<Candidate>& out) {
    const QuotaState& quota = context_.quota;
    for (size_t c = 0; c < quota.cohort_count(); ++c) {
      const auto child = static_cast<int32_t>(c);
      if (quota.cohort_parent(child) != node || child == skip || cohort_within_nominal(child)) continue;
      collect_subtree(child, root, skip, advantage, out);
    }
    const Policy reclaim = reclaim_policy(team_);
    for (uint32_t t = 0; t < context_.module.teams.size(); ++t) {
      if (t == request_.team || quota.team_cohort(t) != node || !borrowing_in_any(context_, t, request_)) continue;
      for (const RequestPart& part : request_.all()) {
        if (!quota.has_quota(t, part.flavor)) continue;
        for (CandidateCursor cursor(context_, part, preemptor_, t, reclaim); !cursor.done(); cursor.advance()) {
          const bool seen = std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.task == cursor.task(); });
          if (!seen) out.push_back({cursor.task(), root, advantage});
        }
      }
    }
  }

  bool cohort_within_nominal(int32_t node) const {
    for (const RequestPart& part : request_.all()) {
      if (!context_.quota.cohort_within_nominal(node, part.flavor, part.needs)) return false;
    }
    return true;
  }

  /// usage < nominal in every contested resource (queueUnderNominalInResourcesNeedingPreemption).
  bool strictly_under_nominal() const {
    for (const RequestPart& part : request_.all()) {
      for (ir::Resource r : context_.quota.charged()) {
        if (!contains(part.needs, r)) continue;
        if (context_.quota.usage(request_.team, part.flavor, r) >= context_.quota.nominal(request_.team, part.flavor, r))
          return false;
      }
    }
    return true;
  }

  // candidateIsValid: the candidate's team and every cohort between it and the lowest common
  // ancestor still over nominal in a contested resource (earlier removals may have ended that).
  bool valid(const Candidate& candidate, Variant variant, bool allow_borrowing) const {
    if (allow_borrowing && variant == Variant::reclaim_without_borrowing) return false;
    const auto team = static_cast<uint32_t>(context_.tasks[candidate.task].team);
    if (!borrowing_in_any(context_, team, request_)) return false;
    for (int32_t node = context_.quota.team_cohort(team); node >= 0 && node != candidate.lca;
         node = context_.quota.cohort_parent(node)) {
      if (cohort_within_nominal(node)) return false;
    }
    return true;
  }

  bool attempt(bool allow_borrowing, std::vector<Target>& targets, SearchTrace* trace) {
    for (const std::vector<Candidate>* list : {&hierarchy_, &priority_}) {
      for (const Candidate& candidate : *list) {
        const Variant variant = classify(team_, candidate.advantage, preemptor_, context_.tasks[candidate.task]);
        if (!valid(candidate, variant, allow_borrowing)) {
          note(trace, candidate.task,
               allow_borrowing && variant == Variant::reclaim_without_borrowing
                   ? CandidateNote::Verdict::skipped_needs_no_borrowing
                   : CandidateNote::Verdict::skipped_team_within_nominal);
          continue;
        }
        if (take({candidate.task, PreemptionKind::reclaim, variant == Variant::reclaim_while_borrowing}, allow_borrowing,
                 targets, trace))
          return true;
      }
    }
    for (const Candidate& candidate : own_) {
      if (take({candidate.task, PreemptionKind::in_team, false}, allow_borrowing, targets, trace)) return true;
    }
    return false;
  }

  bool take(Target target, bool allow_borrowing, std::vector<Target>& targets, SearchTrace* trace) {
    remove_from_quota(context_, target.task);
    targets.push_back(target);
    note(trace, target.task, CandidateNote::Verdict::removed);
    if (!request_fits(context_, request_, allow_borrowing)) return false;
    fill_back(context_, request_, allow_borrowing, targets, trace);
    return true;
  }

  std::vector<uint32_t> all_candidates() const {
    std::vector<uint32_t> out;
    for (const std::vector<Candidate>* list : {&hierarchy_, &priority_, &own_}) {
      for (const Candidate& c : *list) {
        if (std::find(out.begin(), out.end(), c.task) == out.end()) out.push_back(c.task);
      }
    }
    return out;
  }

  static void add_unique(std::vector<Candidate>& list, uint32_t task) {
    if (std::none_of(list.begin(), list.end(), [task](const Candidate& c) { return c.task == task; }))
      list.push_back({task, -1, false});
  }

  void sort(std::vector<Candidate>& list) const {
    std::stable_sort(list.begin(), list.end(), [this](const Candidate& a, const Candidate& b) {
      return candidate_order_less(context_.tasks[a.task], context_.tasks[b.task]);
    });
  }

  const SearchContext& context_;
  const PreemptionRequest& request_;
  const ir::Team& team_;
  const Task& preemptor_;
  std::vector<Candidate> own_;        // same-queue candidates
  std::vector<Candidate> hierarchy_;  // other teams', with the hierarchical advantage
  std::vector<Candidate> priority_;   // other teams', without it
};

}  // namespace

void hierarchical_classical_targets(const SearchContext& context, const PreemptionRequest& request,
                                    std::vector<Target>& out, SearchTrace* trace) {
  TreeSearch(context, request).run(out, trace);
}

}  // namespace gov::engine::preemption
