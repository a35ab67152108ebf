// Quotas and usage of every (team, flavor, resource) in the cluster's single flat cohort or in a
// tree of cohorts, and the quota formulas of docs/kueue-reference.md §2 (available, maximum
// capacity, borrowing).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "compiler/ir/decisions.hpp"
#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/model/arithmetic.hpp"
#include "compiler/support/assert.hpp"

namespace gov::engine {

using ir::Amount;
using ir::Resources;

/// The resources quota is charged in: every resource but EFA (docs/semantics.md §2).
inline constexpr std::array<ir::Resource, 4> kChargedResources = {
    ir::Resource::gpu, ir::Resource::neuron, ir::Resource::vcpu, ir::Resource::memory};

/// A set of columns (resources and partition columns), one bit per ir::Resource value.
using ResourceMask = uint16_t;
static_assert(ir::kColumnCount <= 16, "a ResourceMask holds every column");
inline constexpr ResourceMask resource_bit(ir::Resource resource) {
  return static_cast<ResourceMask>(1u << ir::index(resource));
}
inline constexpr bool contains(ResourceMask mask, ir::Resource resource) {
  return (mask & resource_bit(resource)) != 0;
}

/// For each of `count` keys, an ascending list of indices, stored flat.
struct IndexLists {
  std::vector<uint32_t> first;  // per key + 1: where its list starts in `items`
  std::vector<uint32_t> items;
  std::span<const uint32_t> of(uint32_t key) const {
    return {items.data() + first[key], first[key + 1] - first[key]};
  }
};

/// Whether a request asks for any GPU partitions (then the back ends' fused fit, which covers
/// the five resources, is not the whole answer).
inline bool requests_partitions(const Resources& request) {
  Amount any = 0;
  for (size_t i = ir::kResourceCount; i < ir::kColumnCount; ++i) any |= request[i];
  return any != 0;
}

/// a + b, saturating at ir::kUnlimited (limits may be "unlimited").
Amount saturating_add(Amount a, Amount b);

/// Quotas, usage and the flat-cohort formulas of docs/kueue-reference.md §2. The constants are the
/// module's ir::QuotaTable (the formulas are ir::available / ir::max_capacity, the ones the
/// back ends compile); usage lives in dense tables indexed by team × flavor. A team without a
/// quota for a flavor has nominal 0 there and never holds it. Not thread-safe; cheap to copy
/// (explanations simulate on a copy).
class QuotaState {
 public:
  explicit QuotaState(const ir::Module& module);

  size_t team_count() const { return table_.team_count; }
  size_t flavor_count() const { return table_.flavor_count; }
  /// The charged columns: kChargedResources, then the module's partition columns. Every loop
  /// over what a task is charged walks these.
  std::span<const ir::Resource> charged() const { return {charged_.data(), charged_count_}; }
  /// The same columns as a mask.
  ResourceMask charged_mask() const { return charged_mask_; }

  /// Whether the team declares a quota for the flavor (only then may it be admitted there).
  bool has_quota(uint32_t team, uint32_t flavor) const { return cell(team, flavor).present; }
  /// The flavors the team declares a quota for, ascending: a team holds a few of the catalog's
  /// dozens of instance types, and per-team sums walk these instead of every flavor.
  std::span<const uint32_t> quota_flavors(uint32_t team) const { return flavors_of_team_.of(team); }
  /// The teams with a quota for the flavor, ascending (the candidates of a preemption there).
  std::span<const uint32_t> quota_teams(uint32_t flavor) const { return teams_of_flavor_.of(flavor); }
  Amount nominal(uint32_t team, uint32_t flavor, ir::Resource r) const {
    return at(cell(team, flavor).nominal, r);
  }
  /// ir::kUnlimited when the team may borrow without limit.
  Amount borrowing_limit(uint32_t team, uint32_t flavor, ir::Resource r) const {
    return at(cell(team, flavor).borrowing_limit, r);
  }
  /// The part of the nominal quota the cohort may use: min(nominal, lendingLimit).
  Amount lendable(uint32_t team, uint32_t flavor, ir::Resource r) const {
    return at(cell(team, flavor).lendable, r);
  }
  Amount usage(uint32_t team, uint32_t flavor, ir::Resource r) const {
    return at(usage(team, flavor), r);
  }
  /// One flat cohort: available(team, flavor, r) is max(0, private part + min(cohort_left,
  /// own_limit_left)). What the cohort has left of its quota:
  Amount cohort_left(uint32_t flavor, ir::Resource r) const {
    return model::checked_sub(cohort_quota(flavor, r), cohort_usage(flavor, r));
  }
  /// What the team's own limits leave it from the cohort: lendable part − spill + borrowing limit
  /// (ir::kUnlimited without a borrowing limit). A function of the team's own usage.
  Amount own_limit_left(uint32_t team, uint32_t flavor, ir::Resource r) const;
  /// Whether available(team, flavor, r) is bounded by the team's own borrowing limit rather than
  /// by what its cohort has left: then only the team's own tasks leaving, or a higher limit, give
  /// it more (gov eval's explanation says which).
  bool own_limit_binds(uint32_t team, uint32_t flavor, ir::Resource r) const;
  /// An upper bound of available(team, flavor, r) at this usage of the team, whatever the rest
  /// of the cohort holds: its own limits (local quota, lendable part, borrowing limit), as if the
  /// cohort had room without end. ir::kUnlimited when the borrowing limit is.
  Amount own_limits_available(uint32_t team, uint32_t flavor, ir::Resource r, Amount usage) const;
  /// Zero where the team has no quota (the absent cell's row).
  const Resources& usage(uint32_t team, uint32_t flavor) const { return usage_[table_.slot(team, flavor)]; }

  /// Adds or removes charged amounts (EFA is ignored) to a team's usage in a flavor, keeping the
  /// cohort's usage in step (cohort usage = Σ max(0, U − local), docs/kueue-reference.md §2).
  void add(uint32_t team, uint32_t flavor, const Resources& amounts);
  void subtract(uint32_t team, uint32_t flavor, const Resources& amounts);

  /// What the team can still take now: Available(cq) of docs/kueue-reference.md §2 (never
  /// negative).
  Amount available(uint32_t team, uint32_t flavor, ir::Resource r) const;
  /// The most the team could ever hold: PotentialAvailable(cq) ("maximum capacity").
  Amount max_capacity(uint32_t team, uint32_t flavor, ir::Resource r) const;
  /// Which limit gives max_capacity its value (explanations): the team's own (its nominal quota
  /// plus its borrowing limit, or the flat cohort) when `cohort` is -1, else the tree's cohort
  /// `cohort`, through its borrowing limit or, at a root (`total`), all its subtree holds.
  struct CapacityBound {
    int32_t cohort = -1;
    bool total = false;
  };
  CapacityBound max_capacity_bound(uint32_t team, uint32_t flavor, ir::Resource r) const;
  /// The fit test of `request` (the five resources) for the team in the flavor: the back end's
  /// compiled test (Evaluator::fit) in the one flat cohort; in a tree, the same answer by the
  /// tree's formulas (available and max_capacity up the tree), which the back ends do not compile.
  ir::FitResult fit(const ir::Evaluator& evaluator, uint32_t team, uint32_t flavor, const Resources& request) const {
    if (!tree_) [[likely]] return evaluator.fit(fit_input(team, flavor, request));
    return tree_fit(team, flavor, request);
  }
  /// Whether the module has a tree of cohorts (then decisions take the per-resource path).
  bool tree() const { return tree_; }
  /// A cohort of the tree: its subtree quota (its own quota plus what its children lend it) and
  /// its usage (what its children use past their local quota), per flavor.
  Amount cohort_subtree_quota(uint32_t cohort, uint32_t flavor, ir::Resource r) const {
    return at(node_subtree_[cohort * table_.flavor_count + flavor], r);
  }
  Amount cohort_node_usage(uint32_t cohort, uint32_t flavor, ir::Resource r) const {
    return at(node_usage_[cohort * table_.flavor_count + flavor], r);
  }
  /// The tree's structure: a team's cohort, a cohort's parent (-1 at a root, and for every team
  /// outside a tree), the number of cohorts.
  int32_t team_cohort(uint32_t team) const { return tree_ ? team_node_[team] : -1; }
  int32_t cohort_parent(int32_t cohort) const { return node_parent_[static_cast<size_t>(cohort)]; }
  size_t cohort_count() const { return node_parent_.size(); }
  /// Kueue's potentialAvailable of a cohort: the most its subtree could hold (the lendable
  /// amounts of the shares of its children).
  Amount cohort_potential(int32_t cohort, uint32_t flavor, ir::Resource r) const {
    return tree_potential(cohort, flavor, ir::index(r));
  }
  /// Usage <= subtree quota in every resource of `mask` (Kueue's IsWithinNominalInResources of a
  /// Cohort).
  bool cohort_within_nominal(int32_t cohort, uint32_t flavor, ResourceMask mask) const;
  /// What of the cohort's local quota (kept from its parent by its lending limit) is unused.
  Amount cohort_local_available(int32_t cohort, uint32_t flavor, ir::Resource r) const {
    const size_t k = node_cell(cohort, flavor);
    return std::max<Amount>(0, node_local_[k][ir::index(r)] - node_usage_[k][ir::index(r)]);
  }
  /// Kueue's mayReclaimInHierarchy (FindHeightOfLowestSubtreeThatFits): in a tree, whether
  /// usage + `amount` fits without borrowing in some subtree below the root that holds the team
  /// (then preemption may reclaim there even while the team borrows). False outside a tree.
  bool may_reclaim_in_hierarchy(uint32_t team, uint32_t flavor, ir::Resource r, Amount amount) const;
  /// What of the team's local quota (nominal less what it lends) is unused.
  Amount local_available(uint32_t team, uint32_t flavor, ir::Resource r) const {
    return std::max<Amount>(0, cell(team, flavor).local[ir::index(r)] - usage(team, flavor, r));
  }
  /// The input of Evaluator::fit for `request` in this state (pointers into this state and
  /// `request`, valid until either changes).
  ir::FitInput fit_input(uint32_t team, uint32_t flavor, const Resources& request) const {
    return {team, flavor, request.data(), usage(team, flavor).data(), pool_used_[flavor].data()};
  }
  /// The constants, and the usage tables as Evaluator::decide reads them.
  const ir::QuotaTable& table() const { return table_; }
  ir::UsageView usage_view() const {
    static_assert(sizeof(Resources) == ir::kColumnCount * sizeof(Amount), "rows are packed");
    return {usage_.front().data(), pool_used_.front().data(), flavor_usage_.front().data()};
  }
  /// U > nominal.
  bool borrowing(uint32_t team, uint32_t flavor, ir::Resource r) const {
    return usage(team, flavor, r) > nominal(team, flavor, r);
  }
  /// U + extra > nominal: 1 when admitting `extra` makes the team borrow (the borrowing level).
  bool borrowing_with(uint32_t team, uint32_t flavor, ir::Resource r, Amount extra) const {
    return usage(team, flavor, r) + extra > nominal(team, flavor, r);
  }
  /// Kueue's borrowing level (FindHeightOfLowestSubtreeThatFits, the `borrow` of a flavor
  /// assignment): 0 when U + `extra` is within the team's nominal quota; in the one flat cohort 1
  /// otherwise (borrowing_with); in a tree the height (distance to its furthest leaf, a team being
  /// a leaf) of the lowest cohort on the team's path whose subtree takes it without borrowing, or
  /// of the root when none does. Lower is more local: flavor choice and the cycle's entry order
  /// prefer it. Heights above kMaxBorrowingLevel count as that.
  uint8_t borrowing_level(uint32_t team, uint32_t flavor, ir::Resource r, Amount extra) const {
    if (!borrowing_with(team, flavor, r, extra)) return 0;
    if (!tree_) [[likely]] return 1;
    return tree_borrowing_level(team, flavor, r, extra);
  }
  /// The most borrowing_level reports (255 is the assigner's "no mode yet").
  static constexpr uint8_t kMaxBorrowingLevel = 254;
  /// Borrowing in at least one resource of `mask` (IsWithinNominalInResources negated).
  bool borrowing_in(uint32_t team, uint32_t flavor, ResourceMask mask) const;
  /// The fit test of the partition columns `request` asks for, by the reference formulas (the
  /// back ends' fit test, ir::fit, covers the five resources): every one within what is
  /// available, and within nominal unless `allow_borrowing`. True when it asks for none.
  bool partitions_fit(uint32_t team, uint32_t flavor, const Resources& request, bool allow_borrowing) const;
  /// U + amounts <= nominal in every charged resource requested (QuantitiesFitInQuota).
  bool fits_in_nominal(uint32_t team, uint32_t flavor, const Resources& amounts) const;

  /// The cohort's quota (its SubtreeQuota: Σ lendable + the unreserved capacity when
  /// idle-resource sharing is on), its usage and what of it is idle. In a tree: summed over the
  /// roots.
  Amount cohort_quota(uint32_t flavor, ir::Resource r) const {
    return at(table_.cohort_quota[flavor], r);
  }
  Amount cohort_usage(uint32_t flavor, ir::Resource r) const { return at(pool_used_[flavor], r); }
  Amount cohort_idle(uint32_t flavor, ir::Resource r) const;
  /// What of the team's cohort's quota is unused: cohort_idle in the one flat cohort; in a tree
  /// the team's own cohort's subtree quota less its usage (never negative).
  Amount team_cohort_idle(uint32_t team, uint32_t flavor, ir::Resource r) const {
    if (!tree_ || team_node_[team] < 0) [[likely]] return cohort_idle(flavor, r);
    const size_t k = node_cell(team_node_[team], flavor);
    return std::max<Amount>(0, node_subtree_[k][ir::index(r)] - node_usage_[k][ir::index(r)]);
  }
  /// Σ over teams of usage: what admitted tasks hold of a flavor in the whole cluster.
  Amount flavor_usage(uint32_t flavor, ir::Resource r) const {
    return at(flavor_usage_[flavor], r);
  }
  /// Σ over flavors of the cohort quota: the denominator of dominant resource shares (§6.1).
  Amount lendable_total(ir::Resource r) const { return at(lendable_total_, r); }

 private:
  static Amount at(const Resources& values, ir::Resource r) { return values[ir::index(r)]; }
  const ir::QuotaCell& cell(uint32_t team, uint32_t flavor) const {
    return table_.cell(team, flavor);
  }
  /// The slot of the team's cell of a flavor, whose usage row changes by `amounts`; 0 where the
  /// team declares no quota (the shared absent row, which stays zeros), which only a change of
  /// nothing may ask for: a team holds only instance types it has a quota for (every admission
  /// path checks has_quota), and the bounds that take a team's usage away and put it back do so
  /// with its zero usage there.
  uint32_t held_slot(uint32_t team, uint32_t flavor, const Resources& amounts) const {
    const uint32_t slot = table_.slot(team, flavor);
    if (slot == 0) [[unlikely]] {
      for (ir::Resource r : charged())
        GOV_ASSERT(amounts[ir::index(r)] == 0, "a team holds an instance type it has no quota for");
    }
    return slot;
  }

  // The tree of cohorts (docs/semantics.md §2, "Cohort trees"; Kueue's resource_node.go). Nodes
  // are the module's cohorts; per node × flavor its subtree quota, local quota (what its lending
  // limit keeps from its parent), borrowing limit (kUnlimited: none) and usage.
  void build_tree(const ir::Module& module);
  /// add or subtract in the one flat cohort.
  void flat_change(uint32_t team, uint32_t flavor, const Resources& amounts, bool add);
  void tree_change(uint32_t team, uint32_t flavor, const Resources& amounts, bool add);
  Amount tree_available(int32_t node, uint32_t flavor, size_t i) const;
  Amount tree_potential(int32_t node, uint32_t flavor, size_t i) const;
  ir::FitResult tree_fit(uint32_t team, uint32_t flavor, const Resources& request) const;
  uint8_t tree_borrowing_level(uint32_t team, uint32_t flavor, ir::Resource r, Amount extra) const;
  size_t node_cell(int32_t node, uint32_t flavor) const {
    return static_cast<size_t>(node) * table_.flavor_count + flavor;
  }

  ir::QuotaTable table_;
  bool tree_ = false;
  std::vector<int32_t> node_parent_;       // per cohort
  std::vector<int32_t> team_node_;         // per team: its cohort
  std::vector<uint8_t> node_height_;       // per cohort: getNodeHeight, capped at kMaxBorrowingLevel
  std::vector<Resources> node_subtree_;    // per cohort × flavor
  std::vector<Resources> node_local_;      // per cohort × flavor
  std::vector<Resources> node_borrowing_;  // per cohort × flavor
  std::vector<Resources> node_usage_;      // per cohort × flavor
  std::array<ir::Resource, kChargedResources.size() + ir::kPartitionColumns> charged_{};
  size_t charged_count_ = 0;
  ResourceMask charged_mask_ = 0;  // the charged columns as a mask
  IndexLists flavors_of_team_;  // the flavors each team has a quota for
  IndexLists teams_of_flavor_;  // the teams with a quota for each flavor
  std::vector<Resources> usage_;         // per slot of table_ (ir::UsageView::usage)
  std::vector<Resources> pool_used_;     // per flavor: cohort Usage
  std::vector<Resources> flavor_usage_;  // per flavor: Σ over teams of usage
  Resources lendable_total_{};
};

}  // namespace gov::engine
