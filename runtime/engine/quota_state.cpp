#include "runtime/engine/quota_state.hpp"

#include <algorithm>
#include <bit>
#include <limits>

#include "compiler/model/arithmetic.hpp"

namespace gov::engine {

Amount saturating_add(Amount a, Amount b) {
  if (a == ir::kUnlimited || b == ir::kUnlimited) return ir::kUnlimited;
  Amount sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    return b > 0 ? ir::kUnlimited : std::numeric_limits<Amount>::min();
  return sum;
}

namespace {

/// For each key below `keys`, the values below `values` for which `has(key, value)`.
template <typename Has>
IndexLists index_lists(size_t keys, size_t values, Has has) {
  IndexLists lists;
  lists.first.reserve(keys + 1);
  for (uint32_t key = 0; key < keys; ++key) {
    lists.first.push_back(static_cast<uint32_t>(lists.items.size()));
    for (uint32_t value = 0; value < values; ++value) {
      if (has(key, value)) lists.items.push_back(value);
    }
  }
  lists.first.push_back(static_cast<uint32_t>(lists.items.size()));
  return lists;
}

}  // namespace

QuotaState::QuotaState(const ir::Module& module)
    : table_(ir::quota_table(module)),
      // One row per slot of the table (the absent cell's row 0 first), so that usage_view()
      // needs no emptiness test (the hot path).
      usage_(table_.cells.size()),
      pool_used_(std::max<size_t>(1, table_.flavor_count)),
      flavor_usage_(std::max<size_t>(1, table_.flavor_count)) {
  for (ir::Resource r : module.charged_columns()) {
    charged_[charged_count_++] = r;
    charged_mask_ = static_cast<ResourceMask>(charged_mask_ | resource_bit(r));
  }
  for (size_t f = 0; f < table_.flavor_count; ++f) {
    for (size_t i = 0; i < module.column_count(); ++i) lendable_total_[i] += table_.cohort_quota[f][i];
  }
  flavors_of_team_ = index_lists(table_.team_count, table_.flavor_count,
                                 [this](uint32_t t, uint32_t f) { return has_quota(t, f); });
  teams_of_flavor_ = index_lists(table_.flavor_count, table_.team_count,
                                 [this](uint32_t f, uint32_t t) { return has_quota(t, f); });
  if (!module.cohorts.empty()) build_tree(module);
}

// SubtreeQuota(node) = its own nominal + Σ over children of (SubtreeQuota − local); local =
// max(0, SubtreeQuota − lendingLimit) when a lending limit is set, else 0 (Kueue's
// updateCohortResourceNode / accumulateFromChild). Children are summed before their parents: the
// nodes are visited deepest first.
void QuotaState::build_tree(const ir::Module& module) {
  tree_ = true;
  const size_t nodes = module.cohorts.size();
  const size_t flavors = table_.flavor_count;
  const size_t columns = module.column_count();
  node_parent_.resize(nodes);
  node_subtree_.assign(nodes * flavors, Resources{});
  node_local_.assign(nodes * flavors, Resources{});
  node_borrowing_.assign(nodes * flavors, ir::unlimited_columns());
  node_usage_.assign(nodes * flavors, Resources{});
  std::vector<Resources> lending(nodes * flavors, ir::unlimited_columns());
  std::vector<size_t> depth(nodes, 0);
  for (size_t c = 0; c < nodes; ++c) {
    node_parent_[c] = module.cohorts[c].parent;
    for (int32_t p = node_parent_[c]; p >= 0 && depth[c] <= nodes; p = module.cohorts[static_cast<size_t>(p)].parent)
      ++depth[c];
    for (const ir::FlavorQuota& q : module.cohorts[c].quotas) {
      const size_t k = c * flavors + q.flavor;
      node_subtree_[k] = q.nominal;
      node_borrowing_[k] = q.borrowing_limit;
      lending[k] = q.lending_limit;
    }
  }
  team_node_.resize(table_.team_count);
  for (size_t t = 0; t < table_.team_count; ++t) {
    team_node_[t] = module.teams[t].cohort;
    if (team_node_[t] < 0) continue;
    for (uint32_t f : quota_flavors(static_cast<uint32_t>(t))) {
      Resources& sum = node_subtree_[node_cell(team_node_[t], f)];
      for (size_t i = 0; i < columns; ++i) sum[i] = model::checked_add(sum[i], cell(static_cast<uint32_t>(t), f).lendable[i]);
    }
  }
  std::vector<size_t> order(nodes);
  for (size_t c = 0; c < nodes; ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&depth](size_t a, size_t b) { return depth[a] > depth[b]; });
  for (size_t f = 0; f < flavors; ++f) table_.cohort_quota[f] = Resources{};
  for (size_t c : order) {
    for (size_t f = 0; f < flavors; ++f) {
      const size_t k = c * flavors + f;
      for (size_t i = 0; i < columns; ++i) {
        if (lending[k][i] != ir::kUnlimited)
          node_local_[k][i] = std::max<Amount>(0, model::checked_sub(node_subtree_[k][i], lending[k][i]));
      }
      const int32_t parent = node_parent_[c];
      Resources& into = parent >= 0 ? node_subtree_[node_cell(parent, static_cast<uint32_t>(f))] : table_.cohort_quota[f];
      for (size_t i = 0; i < columns; ++i)
        into[i] = model::checked_add(into[i], model::checked_sub(node_subtree_[k][i], node_local_[k][i]));
    }
  }
  lendable_total_ = Resources{};
  for (size_t f = 0; f < flavors; ++f) {
    for (size_t i = 0; i < columns; ++i) lendable_total_[i] += table_.cohort_quota[f][i];
  }
  // Kueue's getNodeHeight: 1 for a cohort with any member (team or cohort), and one more than its
  // highest child cohort; 0 for an empty one. Children are visited before their parents.
  node_height_.assign(nodes, 0);
  for (size_t t = 0; t < table_.team_count; ++t) {
    if (team_node_[t] >= 0) node_height_[static_cast<size_t>(team_node_[t])] = 1;
  }
  for (size_t c : order) {
    const int32_t parent = node_parent_[c];
    if (parent < 0) continue;
    const auto above = static_cast<uint8_t>(std::min<int>(node_height_[c] + 1, kMaxBorrowingLevel));
    node_height_[static_cast<size_t>(parent)] = std::max(node_height_[static_cast<size_t>(parent)], above);
  }
}

// Kueue's addUsage / removeUsage: what a node holds past its local quota is held in its parent.
// The roots' usage is summed in pool_used_ (the cohort usage snapshots and invariants read).
void QuotaState::tree_change(uint32_t team, uint32_t flavor, const Resources& amounts, bool add) {
  const uint32_t slot = held_slot(team, flavor, amounts);
  if (slot == 0) return;
  const ir::QuotaCell& c = table_.cells[slot];
  Resources& usage = usage_[slot];
  for (ir::Resource r : charged()) {
    const size_t i = ir::index(r);
    if (amounts[i] == 0) continue;
    const Amount delta = add ? amounts[i] : -amounts[i];
    const Amount spill_before = std::max<Amount>(0, usage[i] - c.local[i]);
    usage[i] += delta;
    flavor_usage_[flavor][i] += delta;
    Amount spill = std::max<Amount>(0, usage[i] - c.local[i]) - spill_before;
    for (int32_t node = team_node_[team]; node >= 0 && spill != 0; node = node_parent_[static_cast<size_t>(node)]) {
      const size_t k = node_cell(node, flavor);
      const Amount local = node_local_[k][i];
      const Amount before = std::max<Amount>(0, node_usage_[k][i] - local);
      node_usage_[k][i] += spill;
      if (node_parent_[static_cast<size_t>(node)] < 0) pool_used_[flavor][i] += spill;
      spill = std::max<Amount>(0, node_usage_[k][i] - local) - before;
    }
  }
}

// Kueue's available(): at a root, SubtreeQuota − Usage; below it, the node's local quota left
// plus what its parent has, capped by what its borrowing limit still allows it to take there.
Amount QuotaState::tree_available(int32_t node, uint32_t flavor, size_t i) const {
  const size_t k = node_cell(node, flavor);
  const Amount subtree = node_subtree_[k][i];
  const Amount usage = node_usage_[k][i];
  const int32_t parent = node_parent_[static_cast<size_t>(node)];
  if (parent < 0) return model::checked_sub(subtree, usage);
  Amount from_parent = tree_available(parent, flavor, i);
  const Amount local = node_local_[k][i];
  if (node_borrowing_[k][i] != ir::kUnlimited) {
    const Amount stored = model::checked_sub(subtree, local);
    const Amount used = std::max<Amount>(0, model::checked_sub(usage, local));
    from_parent = std::min(from_parent, model::checked_add(model::checked_sub(stored, used), node_borrowing_[k][i]));
  }
  return model::checked_add(std::max<Amount>(0, model::checked_sub(local, usage)), from_parent);
}

// Kueue's potentialAvailable(): the same with no usage.
Amount QuotaState::tree_potential(int32_t node, uint32_t flavor, size_t i) const {
  const size_t k = node_cell(node, flavor);
  const int32_t parent = node_parent_[static_cast<size_t>(node)];
  if (parent < 0) return node_subtree_[k][i];
  const Amount potential = model::checked_add(node_local_[k][i], tree_potential(parent, flavor, i));
  return std::min(potential, ir::limit_add(node_subtree_[k][i], node_borrowing_[k][i]));
}

ir::FitResult QuotaState::tree_fit(uint32_t team, uint32_t flavor, const Resources& request) const {
  if (team >= table_.team_count || flavor >= table_.flavor_count || !has_quota(team, flavor)) return {};
  ir::FitResult result;
  result.has_quota = 1;
  for (ir::Resource r : ir::kAllResources) {
    if (!ir::is_charged(r)) continue;
    const size_t i = ir::index(r);
    const auto bit = static_cast<uint8_t>(1u << i);
    const Amount amount = request[i];
    if (amount == 0) {
      result.fits |= bit;
      continue;
    }
    if (amount <= available(team, flavor, r)) result.fits |= bit;
    if (model::checked_add(usage(team, flavor, r), amount) > nominal(team, flavor, r)) result.borrows |= bit;
    if (amount > max_capacity(team, flavor, r)) result.exceeds |= bit;
  }
  return result;
}

// The cohort's usage counts only what spills over a team's private (local) quota.
void QuotaState::add(uint32_t team, uint32_t flavor, const Resources& amounts) {
  if (tree_) [[unlikely]] return tree_change(team, flavor, amounts, true);
  flat_change(team, flavor, amounts, true);
}

void QuotaState::subtract(uint32_t team, uint32_t flavor, const Resources& amounts) {
  if (tree_) [[unlikely]] return tree_change(team, flavor, amounts, false);
  flat_change(team, flavor, amounts, false);
}

void QuotaState::flat_change(uint32_t team, uint32_t flavor, const Resources& amounts, bool add) {
  const uint32_t slot = held_slot(team, flavor, amounts);
  if (slot == 0) return;
  const ir::QuotaCell& c = table_.cells[slot];
  Resources& usage = usage_[slot];
  for (ir::Resource r : charged()) {
    const size_t i = ir::index(r);
    if (amounts[i] == 0) continue;
    const Amount delta = add ? amounts[i] : -amounts[i];
    const Amount spill_before = std::max<Amount>(0, usage[i] - c.local[i]);
    usage[i] += delta;
    flavor_usage_[flavor][i] += delta;
    const Amount spill_after = std::max<Amount>(0, usage[i] - c.local[i]);
    pool_used_[flavor][i] += spill_after - spill_before;
  }
}

Amount QuotaState::available(uint32_t team, uint32_t flavor, ir::Resource r) const {
  if (tree_) [[unlikely]] {
    // The team as a node below its cohort: its private quota left, plus what the cohort has,
    // capped by its borrowing limit (ir::available's formula with the cohort's tree_available).
    const ir::QuotaCell& c = cell(team, flavor);
    const size_t i = ir::index(r);
    const Amount usage = this->usage(team, flavor, r);
    const Amount private_left = std::max<Amount>(0, model::checked_sub(c.local[i], usage));
    Amount from_cohort = team_node_[team] < 0 ? 0 : tree_available(team_node_[team], flavor, i);
    if (c.borrowing_limit[i] != ir::kUnlimited) {
      const Amount spill = std::max<Amount>(0, model::checked_sub(usage, c.local[i]));
      from_cohort = std::min(from_cohort, model::checked_add(model::checked_sub(c.lendable[i], spill), c.borrowing_limit[i]));
    }
    return std::max<Amount>(0, model::checked_add(private_left, from_cohort));
  }
  return ir::available(cell(team, flavor), table_.cohort_quota[flavor], r, usage(team, flavor, r),
                       cohort_usage(flavor, r));
}

Amount QuotaState::own_limit_left(uint32_t team, uint32_t flavor, ir::Resource r) const {
  const ir::QuotaCell& c = cell(team, flavor);
  const size_t i = ir::index(r);
  const Amount spill = std::max<Amount>(0, model::checked_sub(usage(team, flavor, r), c.local[i]));
  return ir::limit_add(model::checked_sub(c.lendable[i], spill), c.borrowing_limit[i]);
}

bool QuotaState::own_limit_binds(uint32_t team, uint32_t flavor, ir::Resource r) const {
  const ir::QuotaCell& c = cell(team, flavor);
  const size_t i = ir::index(r);
  if (c.borrowing_limit[i] == ir::kUnlimited) return false;
  const Amount from_cohort = !tree_                 ? cohort_left(flavor, r)
                             : team_node_[team] < 0 ? 0
                                                    : tree_available(team_node_[team], flavor, i);
  return own_limit_left(team, flavor, r) <= from_cohort;  // equal: the cohort freeing more gives it nothing
}

// Both formulas of available() are max(0, private_left + min(from the cohort, lendable − spill +
// B)) once the borrowing limit B is finite; this is that without the cohort's term.
Amount QuotaState::own_limits_available(uint32_t team, uint32_t flavor, ir::Resource r, Amount usage) const {
  const ir::QuotaCell& c = cell(team, flavor);
  const size_t i = ir::index(r);
  if (c.borrowing_limit[i] == ir::kUnlimited) return ir::kUnlimited;
  const Amount private_left = std::max<Amount>(0, model::checked_sub(c.local[i], usage));
  const Amount spill = std::max<Amount>(0, model::checked_sub(usage, c.local[i]));
  const Amount limit_left = model::checked_add(model::checked_sub(c.lendable[i], spill), c.borrowing_limit[i]);
  return std::max<Amount>(0, model::checked_add(private_left, limit_left));
}

Amount QuotaState::max_capacity(uint32_t team, uint32_t flavor, ir::Resource r) const {
  if (tree_) [[unlikely]] {
    const ir::QuotaCell& c = cell(team, flavor);
    const size_t i = ir::index(r);
    const Amount from_cohort = team_node_[team] < 0 ? 0 : tree_potential(team_node_[team], flavor, i);
    return std::min(model::checked_add(c.local[i], from_cohort), ir::limit_add(c.nominal[i], c.borrowing_limit[i]));
  }
  return ir::max_capacity(cell(team, flavor), table_.cohort_quota[flavor], r);
}

// The terms of max_capacity and tree_potential, taken apart: the team's own limit binds when it
// is at most what the tree offers; up the tree, a cohort's borrowing limit binds where it is
// below its local quota plus its parent's potential, and a root binds with its subtree quota.
QuotaState::CapacityBound QuotaState::max_capacity_bound(uint32_t team, uint32_t flavor, ir::Resource r) const {
  if (!tree_ || team_node_[team] < 0) return {};
  const size_t i = ir::index(r);
  const ir::QuotaCell& c = cell(team, flavor);
  int32_t node = team_node_[team];
  if (ir::limit_add(c.nominal[i], c.borrowing_limit[i]) <= model::checked_add(c.local[i], tree_potential(node, flavor, i)))
    return {};
  for (;;) {
    const size_t k = node_cell(node, flavor);
    const int32_t parent = node_parent_[static_cast<size_t>(node)];
    if (parent < 0) return {node, true};
    const Amount limit = ir::limit_add(node_subtree_[k][i], node_borrowing_[k][i]);
    if (limit < model::checked_add(node_local_[k][i], tree_potential(parent, flavor, i))) return {node, false};
    node = parent;
  }
}

bool QuotaState::borrowing_in(uint32_t team, uint32_t flavor, ResourceMask mask) const {
  // The searches ask this of every team of a flavor, twice per search: walk the mask's bits
  // (usually one or two), not every charged column.
  mask &= charged_mask_;
  if (mask == 0) return false;
  const Resources& used = usage(team, flavor);
  const Resources& nominal = cell(team, flavor).nominal;
  for (; mask != 0; mask &= static_cast<ResourceMask>(mask - 1)) {
    const auto i = static_cast<size_t>(std::countr_zero(mask));
    if (used[i] > nominal[i]) return true;
  }
  return false;
}

bool QuotaState::fits_in_nominal(uint32_t team, uint32_t flavor, const Resources& amounts) const {
  for (ir::Resource r : charged()) {
    const Amount amount = amounts[ir::index(r)];
    if (amount > 0 && usage(team, flavor, r) + amount > nominal(team, flavor, r)) return false;
  }
  return true;
}

bool QuotaState::partitions_fit(uint32_t team, uint32_t flavor, const Resources& request,
                                bool allow_borrowing) const {
  for (ir::Resource r : charged().subspan(kChargedResources.size())) {
    const Amount amount = request[ir::index(r)];
    if (amount == 0) continue;
    if (amount > available(team, flavor, r)) return false;
    if (!allow_borrowing && borrowing_with(team, flavor, r, amount)) return false;
  }
  return true;
}

bool QuotaState::cohort_within_nominal(int32_t cohort, uint32_t flavor, ResourceMask mask) const {
  const size_t k = node_cell(cohort, flavor);
  for (ir::Resource r : charged()) {
    if (contains(mask, r) && node_usage_[k][ir::index(r)] > node_subtree_[k][ir::index(r)]) return false;
  }
  return true;
}

bool QuotaState::may_reclaim_in_hierarchy(uint32_t team, uint32_t flavor, ir::Resource r, Amount amount) const {
  if (!tree_) return false;
  const size_t i = ir::index(r);
  const int32_t first = team_node_[team];
  if (!borrowing_with(team, flavor, r, amount)) return first >= 0;
  Amount remaining = amount - local_available(team, flavor, r);
  for (int32_t node = first; node >= 0; node = node_parent_[static_cast<size_t>(node)]) {
    const size_t k = node_cell(node, flavor);
    if (model::checked_add(node_usage_[k][i], remaining) <= node_subtree_[k][i]) return node_parent_[static_cast<size_t>(node)] >= 0;
    remaining -= cohort_local_available(node, flavor, r);
  }
  return false;
}

// FindHeightOfLowestSubtreeThatFits: what the team's local quota leaves is looked for up the
// path, each cohort's unused local quota taken off on the way (as may_reclaim_in_hierarchy).
uint8_t QuotaState::tree_borrowing_level(uint32_t team, uint32_t flavor, ir::Resource r, Amount extra) const {
  const int32_t first = team_node_[team];
  if (first < 0) return 0;
  const size_t i = ir::index(r);
  Amount remaining = extra - local_available(team, flavor, r);
  int32_t root = first;
  for (int32_t node = first; node >= 0; node = node_parent_[static_cast<size_t>(node)]) {
    const size_t k = node_cell(node, flavor);
    if (model::checked_add(node_usage_[k][i], remaining) <= node_subtree_[k][i])
      return node_height_[static_cast<size_t>(node)];
    remaining -= cohort_local_available(node, flavor, r);
    root = node;
  }
  return node_height_[static_cast<size_t>(root)];
}

Amount QuotaState::cohort_idle(uint32_t flavor, ir::Resource r) const {
  return std::max<Amount>(0, cohort_quota(flavor, r) - cohort_usage(flavor, r));
}

}  // namespace gov::engine
