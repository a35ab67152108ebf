// Quotas and usage of every (team, flavor, resource) in the cluster's single flat cohort,
// and the quota formulas of docs/kueue-reference.md §2 (available, maximum capacity, borrowing).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "compiler/ir/decisions.hpp"
#include "compiler/ir/module.hpp"

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
  const Resources& usage(uint32_t team, uint32_t flavor) const {
    return usage_[team * table_.flavor_count + flavor];
  }

  /// Adds or removes charged amounts (EFA is ignored) to a team's usage in a flavor, keeping the
  /// cohort's usage in step (cohort usage = Σ max(0, U − local), docs/kueue-reference.md §2).
  void add(uint32_t team, uint32_t flavor, const Resources& amounts);
  void subtract(uint32_t team, uint32_t flavor, const Resources& amounts);

  /// What the team can still take now: Available(cq) of docs/kueue-reference.md §2 (never
  /// negative).
  Amount available(uint32_t team, uint32_t flavor, ir::Resource r) const;
  /// The most the team could ever hold: PotentialAvailable(cq) ("maximum capacity").
  Amount max_capacity(uint32_t team, uint32_t flavor, ir::Resource r) const;
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
  /// Borrowing in at least one resource of `mask` (IsWithinNominalInResources negated).
  bool borrowing_in(uint32_t team, uint32_t flavor, ResourceMask mask) const;
  /// The fit test of the partition columns `request` asks for, by the reference formulas (the
  /// back ends' fit test, ir::fit, covers the five resources): every one within what is
  /// available, and within nominal unless `allow_borrowing`. True when it asks for none.
  bool partitions_fit(uint32_t team, uint32_t flavor, const Resources& request, bool allow_borrowing) const;
  /// U + amounts <= nominal in every charged resource requested (QuantitiesFitInQuota).
  bool fits_in_nominal(uint32_t team, uint32_t flavor, const Resources& amounts) const;

  /// The cohort's quota (its SubtreeQuota: Σ lendable + the unreserved capacity when
  /// idle-resource sharing is on), its usage and what of it is idle.
  Amount cohort_quota(uint32_t flavor, ir::Resource r) const {
    return at(table_.cohort_quota[flavor], r);
  }
  Amount cohort_usage(uint32_t flavor, ir::Resource r) const { return at(pool_used_[flavor], r); }
  Amount cohort_idle(uint32_t flavor, ir::Resource r) const;
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

  ir::QuotaTable table_;
  std::array<ir::Resource, kChargedResources.size() + ir::kPartitionColumns> charged_{};
  size_t charged_count_ = 0;
  IndexLists flavors_of_team_;  // the flavors each team has a quota for
  IndexLists teams_of_flavor_;  // the teams with a quota for each flavor
  std::vector<Resources> usage_;         // per team × flavor
  std::vector<Resources> pool_used_;     // per flavor: cohort Usage
  std::vector<Resources> flavor_usage_;  // per flavor: Σ over teams of usage
  Resources lendable_total_{};
};

}  // namespace gov::engine
