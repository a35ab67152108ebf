#include "runtime/engine/fair_share.hpp"

#include <algorithm>
#include <limits>

namespace gov::engine {

// borrowed[r] = Σ over the team's flavors of max(0, U + extra − nominal); lendable[r] = the
// cohort's quota of r over all flavors; ratio = borrowed × 1000 / lendable where lendable > 0
// (docs/kueue-reference.md §6.1; floating point exactly as Kueue HEAD computes it).
Drs dominant_resource_share(const QuotaState& quota, uint32_t team, int64_t weight_micros, uint32_t flavor,
                            const Resources* extra) {
  Drs drs;
  drs.weight = model::weight_value(weight_micros);
  drs.zero_weight = weight_micros == 0;
  // Per flavor, then per resource: one lookup of the team's cell and usage row per flavor. The
  // sums add the flavors in the same order as resource by resource would.
  Resources borrowed_by_resource{};
  for (uint32_t f : quota.quota_flavors(team)) {
    const Resources& usage = quota.usage(team, f);
    const Resources& nominal = quota.table().cell(team, f).nominal;
    const Resources* added = extra != nullptr && f == flavor ? extra : nullptr;
    for (ir::Resource r : quota.charged()) {
      const size_t i = ir::index(r);
      borrowed_by_resource[i] += std::max<Amount>(0, usage[i] + (added != nullptr ? (*added)[i] : 0) - nominal[i]);
    }
  }
  for (ir::Resource r : quota.charged()) {
    const Amount borrowed = borrowed_by_resource[ir::index(r)];
    if (borrowed == 0) continue;
    drs.borrowing = true;
    const Amount lendable = quota.lendable_total(r);
    if (lendable <= 0) continue;
    drs.unweighted = std::max(
        drs.unweighted, static_cast<double>(borrowed) * 1000.0 / static_cast<double>(lendable));
  }
  return drs;
}

Resources borrowed_amounts(const QuotaState& quota, uint32_t team) {
  Resources borrowed{};
  for (ir::Resource r : quota.charged()) {
    for (uint32_t f : quota.quota_flavors(team))
      borrowed[ir::index(r)] += std::max<Amount>(0, quota.usage(team, f, r) - quota.nominal(team, f, r));
  }
  return borrowed;
}

const Drs& TeamShareMemo::share(const QuotaState& quota, const ir::Module& module, uint32_t team, uint64_t version) {
  if (entries_.size() <= team) entries_.resize(module.teams.size());
  Entry& entry = entries_[team];
  if (entry.version_plus_one != version + 1) {
    entry.share = dominant_resource_share(quota, team, module.teams[team].fair_share_weight_micros);
    entry.version_plus_one = version + 1;
  }
  return entry.share;
}

// ------------------------------------------------------------------ trees of cohorts

namespace {

/// A head's standing at one level of the tree: the share of its ancestor there (its team, or a
/// cohort) with the head's request added, and whether that node then borrows in a requested
/// (flavor, resource).
struct Standing {
  Drs share;
  bool borrows_requested = false;
};

/// The share of a node (a team, or a cohort) whose parent is `parent`: Σ over flavors of what it
/// uses past its subtree quota (`over(f, r)`), per resource, × 1000 over Σ over flavors of the
/// parent's potential (Kueue's dominantResourceShare with calculateLendable). `borrowed(f, r)` is
/// called for every (flavor, resource) the node uses past its quota.
template <typename Over, typename Borrowed>
Drs tree_share(const QuotaState& quota, int32_t parent, int64_t weight_micros, Over over, Borrowed borrowed_in) {
  Drs out;
  out.weight = model::weight_value(weight_micros);
  out.zero_weight = weight_micros == 0;
  for (ir::Resource r : quota.charged()) {
    Amount borrowed = 0;
    for (uint32_t f = 0; f < quota.flavor_count(); ++f) {
      const Amount past = over(f, r);
      if (past <= 0) continue;
      borrowed += past;
      borrowed_in(f, r);
    }
    if (borrowed == 0) continue;
    out.borrowing = true;
    Amount lendable = 0;
    for (uint32_t f = 0; f < quota.flavor_count(); ++f) lendable = saturating_add(lendable, quota.cohort_potential(parent, f, r));
    if (lendable <= 0) continue;
    out.unweighted = std::max(out.unweighted, static_cast<double>(borrowed) * 1000.0 / static_cast<double>(lendable));
  }
  return out;
}

/// What a team uses past its nominal, and a cohort past its subtree quota, in (f, r).
auto team_over(const QuotaState& quota, uint32_t team) {
  return [&quota, team](uint32_t f, ir::Resource r) { return quota.usage(team, f, r) - quota.nominal(team, f, r); };
}
auto cohort_over(const QuotaState& quota, int32_t cohort) {
  return [&quota, cohort](uint32_t f, ir::Resource r) {
    return quota.cohort_node_usage(static_cast<uint32_t>(cohort), f, r) -
           quota.cohort_subtree_quota(static_cast<uint32_t>(cohort), f, r);
  };
}

/// A head's standing: the share of its ancestor with the head's request added, and whether that
/// ancestor then borrows in a (flavor, resource) the head requests.
template <typename Over>
Standing standing(const QuotaState& quota, int32_t parent, int64_t weight_micros, const TournamentHead& head, Over over) {
  Standing out;
  out.share = tree_share(quota, parent, weight_micros, over, [&](uint32_t f, ir::Resource r) {
    for (const auto& [flavor, request] : head.parts) {
      if (flavor == f && request[ir::index(r)] > 0) out.borrows_requested = true;
    }
  });
  return out;
}

class Tournament {
 public:
  Tournament(QuotaState& quota, const ir::Module& module, std::span<const TournamentHead> heads,
             std::span<const uint8_t> pending)
      : quota_(quota), module_(module), heads_(heads), pending_(pending), levels_(heads.size()) {
    for (size_t i = 0; i < heads.size(); ++i) {
      if (pending[i]) measure(i);
    }
  }

  size_t winner() {
    int32_t best = -1;
    for (size_t c = 0; c < module_.cohorts.size(); ++c) {
      if (module_.cohorts[c].parent >= 0) continue;
      const int32_t candidate = run(static_cast<int32_t>(c));
      if (candidate >= 0 && (best < 0 || less(static_cast<size_t>(candidate), static_cast<size_t>(best), -1)))
        best = candidate;
    }
    return static_cast<size_t>(best);
  }

 private:
  // Every level's standing of head i: its team's at the team's cohort, then each cohort's at its
  // parent, with the head's parts added for the while.
  void measure(size_t i) {
    const TournamentHead& head = heads_[i];
    for (const auto& [flavor, request] : head.parts) quota_.add(head.team, flavor, request);
    const int32_t cohort = quota_.team_cohort(head.team);
    auto& levels = levels_[i];
    levels.emplace_back(cohort, standing(quota_, cohort, module_.teams[head.team].fair_share_weight_micros, head,
                                         team_over(quota_, head.team)));
    for (int32_t node = cohort; quota_.cohort_parent(node) >= 0; node = quota_.cohort_parent(node)) {
      const int32_t parent = quota_.cohort_parent(node);
      levels.emplace_back(parent, standing(quota_, parent, module_.cohorts[static_cast<size_t>(node)].fair_share_weight_micros,
                                           head, cohort_over(quota_, node)));
    }
    for (const auto& [flavor, request] : head.parts) quota_.subtract(head.team, flavor, request);
  }

  const Standing* at(size_t i, int32_t level) const {
    for (const auto& [cohort, s] : levels_[i]) {
      if (cohort == level) return &s;
    }
    return nullptr;
  }

  /// runTournament: the best of the cohort's child cohorts' winners and its teams' heads.
  int32_t run(int32_t cohort) {
    int32_t best = -1;
    const auto consider = [&](int32_t candidate) {
      if (candidate >= 0 && (best < 0 || less(static_cast<size_t>(candidate), static_cast<size_t>(best), cohort)))
        best = candidate;
    };
    for (size_t c = 0; c < module_.cohorts.size(); ++c) {
      if (module_.cohorts[c].parent == cohort && static_cast<int32_t>(c) != cohort) consider(run(static_cast<int32_t>(c)));
    }
    for (size_t i = 0; i < heads_.size(); ++i) {
      if (pending_[i] && quota_.team_cohort(heads_[i].team) == cohort) consider(static_cast<int32_t>(i));
    }
    return best;
  }

  /// Whether head a goes before head b when compared at `level` (-1: across roots).
  bool less(size_t a, size_t b, int32_t level) const {
    const TournamentHead& x = heads_[a];
    const TournamentHead& y = heads_[b];
    if (x.preemptor != y.preemptor) return x.preemptor;
    const Standing* sx = level >= 0 ? at(a, level) : nullptr;
    const Standing* sy = level >= 0 ? at(b, level) : nullptr;
    if (sx != nullptr && sy != nullptr) {
      if (sx->borrows_requested != sy->borrows_requested) return !sx->borrows_requested;
      const int share = compare_drs(sx->share, sy->share);
      if (share != 0) return share < 0;
    }
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.submitted != y.submitted) return x.submitted < y.submitted;
    return x.team < y.team;
  }

  QuotaState& quota_;
  const ir::Module& module_;
  std::span<const TournamentHead> heads_;
  std::span<const uint8_t> pending_;
  std::vector<std::vector<std::pair<int32_t, Standing>>> levels_;  // per head: (the cohort compared at, standing)
};

}  // namespace

Drs team_share_in_tree(const QuotaState& quota, const ir::Module& module, uint32_t team) {
  return tree_share(quota, quota.team_cohort(team), module.teams[team].fair_share_weight_micros, team_over(quota, team),
                    [](uint32_t, ir::Resource) {});
}

Drs cohort_share(const QuotaState& quota, const ir::Module& module, int32_t cohort) {
  const int64_t weight_micros = module.cohorts[static_cast<size_t>(cohort)].fair_share_weight_micros;
  const int32_t parent = quota.cohort_parent(cohort);
  if (parent < 0) {
    Drs root;  // Kueue: a node without a parent borrows nothing
    root.weight = model::weight_value(weight_micros);
    root.zero_weight = weight_micros == 0;
    return root;
  }
  return tree_share(quota, parent, weight_micros, cohort_over(quota, cohort), [](uint32_t, ir::Resource) {});
}

size_t tournament_winner(QuotaState& quota, const ir::Module& module, std::span<const TournamentHead> heads,
                         std::span<const uint8_t> pending) {
  return Tournament(quota, module, heads, pending).winner();
}

}  // namespace gov::engine
