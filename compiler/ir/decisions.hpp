// The engine's per-task decisions that every back end implements (ir::Evaluator) besides the
// rules: a task's priority, the quota-fit test of one team in one flavor (docs/kueue-reference.md
// §2) and the may-preempt predicate between two tasks (§5.1). This file is their reference
// definition: the interpreter calls these functions, the JIT compiles the same formulas with the
// module's quotas folded in as constants, and the differential tests compare the two.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/ir/module.hpp"

namespace gov::ir {

// ------------------------------------------------------------------ quota constants

/// The constants of one team in one flavor after defaults and the team's sharing strategy.
struct QuotaCell {
  bool present = false;      // the team declares a quota for the flavor
  Resources nominal{};
  Resources borrowing_limit{};  // kUnlimited: no limit
  Resources lendable{};         // L = min(nominal, lending limit): what the cohort may use
  Resources local{};            // nominal − L: private, never visible to the cohort
};

/// Every team × flavor cell of a module and each flavor's cohort quota. Plain data.
///
/// The grid is teams × every instance type of the catalog (205), and a team declares a few:
/// each declared cell is stored once, and the grid holds a 4-byte slot per team × flavor that
/// names it (slot 0 is the one absent cell, all zeros). A 10,000-team policy's table is 8 MB of
/// slots and its declared cells, not 870 MB of cells.
struct QuotaTable {
  size_t team_count = 0;
  size_t flavor_count = 0;
  std::vector<uint32_t> slots;          // [team * flavor_count + flavor]: an index into `cells`
  std::vector<QuotaCell> cells;         // cells[0] is absent; then the declared cells
  std::vector<Resources> cohort_quota;  // per flavor: Σ lendable + cohort_own
  std::vector<Resources> cohort_own;    // per flavor: unreserved capacity (idle-resource sharing)

  /// Where the team's cell of the flavor is: 0 when it declares none, else 1 + its index in
  /// declared_quotas(module). Also the team's row in UsageView::usage.
  uint32_t slot(size_t team, size_t flavor) const { return slots[team * flavor_count + flavor]; }
  const QuotaCell& cell(size_t team, size_t flavor) const { return cells[slot(team, flavor)]; }
};

/// The quota table of `module` (docs/semantics.md §2: `lend` never borrows, `dont-lend` lends
/// nothing): declared_quotas(module) over the team × flavor grid; cells[k + 1] is declared cell k.
QuotaTable quota_table(const Module& module);

/// The present cells of the quota table only, per team in declared order: what the generated
/// code carries and its object key hashes, proportional to the quotas (the dense grid is teams ×
/// every instance type of the catalog: 10,000 teams × 205 types are 2 million cells).
struct DeclaredQuotas {
  size_t team_count = 0;
  size_t flavor_count = 0;
  std::vector<uint32_t> team_first;  // team t's cells are [team_first[t], team_first[t + 1])
  std::vector<uint32_t> flavors;     // per cell: its flavor (Team::quotas[k].flavor)
  std::vector<QuotaCell> cells;      // per cell: what QuotaTable::cell(t, flavor) holds
  std::vector<Resources> cohort_quota;  // as QuotaTable's
  std::vector<Resources> cohort_own;    // as QuotaTable's
};
/// The whole GPUs that the partition columns of `amounts` are cut from: their compute slices
/// (model::parse_mig_profile) over seven per GPU, rounded up, since a GPU holding any partition is
/// no whole GPU. Idle-resource sharing reserves them beside the quotas' whole GPUs.
Amount gpus_cut_into_partitions(const Module& module, const Resources& amounts);
/// The declared cells of `module`, whose teams declare at most one quota per flavor, each
/// flavor in range (the checker's E0308; jit::validate refuses other modules).
DeclaredQuotas declared_quotas(const Module& module);

/// a + b where either may be kUnlimited ("no limit"): kUnlimited stays kUnlimited, other sums
/// saturate at the int64 bounds like checked_add.
Amount limit_add(Amount a, Amount b);

/// What a team can still take of one resource now: Available(cq) of docs/kueue-reference.md §2 for
/// a flat cohort, never negative. `usage` is the team's, `cohort_usage` the cohort's (Σ max(0, U −
/// local) over teams). Checked arithmetic: defined for every input.
Amount available(const QuotaCell& cell, const Resources& cohort_quota, Resource r, Amount usage,
                 Amount cohort_usage);
/// The most the team could ever hold of one resource: min(local + cohort quota, nominal + B).
Amount max_capacity(const QuotaCell& cell, const Resources& cohort_quota, Resource r);

// ------------------------------------------------------------------ quota fit

/// What one fit test reads that changes as tasks come and go. Each pointer addresses
/// kResourceCount amounts, indexed by ir::index(resource).
struct FitInput {
  uint32_t team = 0;
  uint32_t flavor = 0;
  const Amount* request = nullptr;       // the task's amounts
  const Amount* usage = nullptr;         // the team's usage of the flavor
  const Amount* cohort_usage = nullptr;  // the cohort's usage of the flavor
};

/// Masks over charged resources (bit ir::index(r)); EFA is never charged.
inline constexpr uint8_t kChargedMask = 0b1111;

/// The answer of a fit test for every charged resource at once.
struct FitResult {
  uint8_t fits = 0;       // not requested (amount 0), or amount <= available
  uint8_t borrows = 0;    // requested and usage + amount > nominal
  uint8_t exceeds = 0;    // requested and amount > max_capacity
  uint8_t has_quota = 0;  // 0: team or flavor out of range, or no quota there (all masks 0)

  bool fits_all() const { return has_quota != 0 && fits == kChargedMask; }
  /// The C ABI of the generated code returns the four bytes packed in one 32-bit integer.
  uint32_t packed() const {
    return uint32_t{fits} | uint32_t{borrows} << 8 | uint32_t{exceeds} << 16 |
           uint32_t{has_quota} << 24;
  }
  static FitResult unpack(uint32_t bits) {
    return {static_cast<uint8_t>(bits), static_cast<uint8_t>(bits >> 8),
            static_cast<uint8_t>(bits >> 16), static_cast<uint8_t>(bits >> 24)};
  }
  friend bool operator==(const FitResult&, const FitResult&) = default;
};

/// The reference fit test.
FitResult fit(const QuotaTable& table, const FitInput& input);

// ------------------------------------------------------------------ preemption policy

/// A preemption policy as a predicate over priorities (docs/kueue-reference.md §5.1).
enum class PreemptionPolicy : uint8_t { never, lower_priority, lower_or_newer_equal_priority, any };
/// Kueue's withinClusterQueue / reclaimWithinCohort of a team as a policy.
PreemptionPolicy within_team_policy(const Team& team);
PreemptionPolicy reclaim_policy(const Team& team);

/// The two tasks of a may-preempt question. Times order submissions (queue order).
struct PreemptionPair {
  uint32_t preemptor_team = 0;
  int32_t preemptor_priority = 0;
  int64_t preemptor_submitted = 0;
  uint32_t candidate_team = 0;
  int32_t candidate_priority = 0;
  int64_t candidate_submitted = 0;
};

/// The whole second a time in milliseconds falls in (rounded down): the precision of a
/// Kubernetes timestamp, which LowerOrNewerEqualPriority compares.
int64_t whole_seconds(int64_t millis);
/// Whether `policy` lets the preemptor preempt the candidate.
bool policy_allows(PreemptionPolicy policy, const PreemptionPair& pair);
/// The reference may-preempt predicate: within the preemptor's team its within-team policy,
/// across teams its reclaim policy (whether the candidate's team is borrowing is the
/// search's business, not this predicate's). False for teams out of range.
bool may_preempt(const Module& module, const PreemptionPair& pair);

/// The reference priority: Module::priority_of, with class indices outside the module's
/// classes read as "no class" (-1).
int32_t priority(const Module& module, int32_t class_index);

// ------------------------------------------------------------------ the whole decision

/// The usage tables of a cluster state, as the engine keeps them (kColumnCount amounts per
/// entry): every team's usage of each instance type it declares a quota for, the cohort's and
/// all teams' usage per flavor. A team's usage is kept per quota cell, at its slot in the
/// QuotaTable (QuotaTable::slot; declared cell k at k + 1); row 0, the absent cell's, is all
/// zeros: a team never holds an instance type it has no quota for.
struct UsageView {
  const Amount* usage = nullptr;         // [QuotaTable::slot(team, flavor)]
  const Amount* cohort_usage = nullptr;  // [flavor]
  const Amount* flavor_usage = nullptr;  // [flavor]
};

/// RuleInput::team / ::cluster slots (stat × kResourceCount + resource) some rule reads.
struct FigureSlots {
  std::vector<uint8_t> team;
  std::vector<uint8_t> cluster;
};
FigureSlots figure_slots(const Module& module);

/// Writes the figures of `slots` into input.team / input.cluster (others are left alone):
/// each summed over the task's instance type when it names one (requested_flavor >= 0, which
/// must be < flavor_count), else over its team's instance types, saturating at the int64
/// maximum. `team` must be in range. Team figures: nominal, used, borrowed (max(0, used −
/// nominal)), borrowing limit, available (0 without a quota); cluster figures: capacity,
/// used, available (max(0, capacity − used)).
void fill_figures(const Module& module, const QuotaTable& table, const UsageView& usage,
                  uint32_t team, int32_t requested_flavor, const FigureSlots& slots,
                  RuleInput& input);

/// One admission decision against a state: the task's fields (RuleInput::task layout,
/// already resolved), its label ids and the state's usage.
struct DecideInput {
  const int64_t* task = nullptr;    // kTaskFieldCount fields; team and flavor must be in range
  const int64_t* labels = nullptr;  // one id per label key, or null
  UsageView usage;
};
/// What the rules and the fit said.
struct DecideResult {
  int32_t deny_rule = -1;  // the first matching deny rule in declared order, or -1
  uint32_t warnings = 0;   // every other matching rule
  int32_t flavor = -1;     // the first of the team's instance types (declared order; only the
                           // requested one if it names one) where fit(...).fits_all() (with
                           // when-can-borrow = try-next-flavor, the first that fits without
                           // borrowing, else the first borrowing fit unless the team prefers
                           // preemption over borrowing), or -1 (also when the team is inactive,
                           // and when a deny rule matched: a rejected task is not fitted)
  uint8_t borrows = 0;     // 1 when the fit there borrows
  friend bool operator==(const DecideResult&, const DecideResult&) = default;
};

/// Whether a DecideInput's team and requested flavor are in range (decide() answers the empty
/// result, with every verdict 0, when they are not).
bool decide_input_in_range(const Module& module, const DecideInput& input);
/// The reference conclusion from rule verdicts: the first deny rule and the warnings, then
/// the first fitting instance type. The task's request is its fields gpus..efa (TaskField
/// order is resource order).
DecideResult conclude(const Module& module, const QuotaTable& table, const DecideInput& input,
                      std::span<const uint8_t> verdicts);
/// conclude's second half: `rules` (deny_rule and warnings, as the verdicts give them) with the
/// fit filled in, unless a deny rule matched. For a back end that counts the matches of the
/// rules it evaluated (the rule index) instead of reading every verdict.
DecideResult conclude_fit(const Module& module, const QuotaTable& table, const DecideInput& input,
                          DecideResult rules);

}  // namespace gov::ir
