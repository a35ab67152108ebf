// The policy IR: everything the back ends (interpreter, JIT) and the engine evaluate,
// lowered from a checked policy. Flat and typed: indices instead of pointers, no AST.
// `gov check --emit=ir` prints it (printer.hpp).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/model/partitions.hpp"
#include "compiler/model/resources.hpp"
#include "compiler/model/rule_inputs.hpp"
#include "compiler/model/team.hpp"

namespace gov::ir {

// ------------------------------------------------------------------ the domain vocabulary

// Resources, amounts, team settings and what rules read are gov::model's (compiler/model/): the
// checker speaks them without depending on the IR. The IR names them as its own.
using model::Amount;
using model::index;
using model::is_charged;
using model::kAllResources;
using model::kResourceCount;
using model::kubernetes_name;
using model::kUnlimited;
using model::Resource;
using model::resource_key;

/// Amounts per column: the five resources first (at ir::index(resource)), then one column per
/// GPU partition profile the module's quotas use (Module::partitions; docs/semantics-decisions.md
/// "GPU partitions (MIG)"). A column past the five is named by a Resource value
/// kResourceCount + k (partition_column(k)): every formula that takes a Resource works on it.
/// Only the module's column_count() columns are ever non-zero.
using model::kPartitionColumns;
inline constexpr size_t kColumnCount = kResourceCount + kPartitionColumns;
using Resources = std::array<Amount, kColumnCount>;
/// The five resources' amounts as columns (partition columns 0).
Resources columns_of(const model::Resources& resources);
/// Every column unlimited (a lending limit that is not set).
Resources unlimited_columns();
inline constexpr Resource partition_column(size_t k) { return static_cast<Resource>(kResourceCount + k); }
inline constexpr bool is_partition(Resource r) { return index(r) >= kResourceCount; }

using model::BorrowWithinCohort;
using model::FairShareStrategy;
using model::FlavorPreference;
using model::Queueing;
using model::ReclaimWithinCohort;
using model::Sharing;
using model::WhenCanBorrow;
using model::WhenCanPreempt;
using model::WithinTeam;
using model::borrow_within_cohort_name;
using model::fair_share_strategy_name;
using model::flavor_preference_name;
using model::queueing_name;
using model::reclaim_name;
using model::sharing_name;
using model::when_can_borrow_name;
using model::when_can_preempt_name;
using model::within_team_name;

using model::ClusterStat;
using model::kClusterStatCount;
using model::kTaskFieldCount;
using model::kTeamStatCount;
using model::TaskField;
using model::TeamStat;
using model::ValueType;

// ------------------------------------------------------------------ quotas and teams

/// An instance type the policy uses (a Kueue ResourceFlavor).
struct Flavor {
  std::string name;        // "ml.g5.8xlarge"
  Resources per_instance;  // what one instance has
  int64_t capacity = 0;    // instances of this type in the cluster
};

/// A team's quota for one flavor, after defaults (docs/semantics.md §2).
struct FlavorQuota {
  uint32_t flavor = 0;  // index into Module::flavors
  Resources nominal{};
  Resources borrowing_limit{};
  Resources lending_limit = unlimited_columns();
};

/// One of a team's resource groups (Kueue's `resourceGroups[]`): the columns it covers and the
/// flavors they are taken from, in the order they are tried (docs/semantics-decisions.md
/// "Resource groups"). Partition columns go with the group covering gpus.
struct ResourceGroup {
  uint32_t covers = 0;            // bit ir::index(column) per covered column
  std::vector<uint32_t> flavors;  // indices into Module::flavors, each a flavor of the team's quotas

  bool covers_column(Resource r) const { return (covers >> index(r) & 1u) != 0; }
};

/// One team: a Kueue ClusterQueue in the cluster's single cohort.
struct Team {
  std::string name;
  std::vector<FlavorQuota> quotas;  // in declared order: the order flavors are tried
  /// Empty: one implicit group covering every resource, whose flavors are `quotas` in order.
  /// Otherwise every quota's flavor is in exactly one group, and its uncovered columns are 0.
  std::vector<ResourceGroup> groups = {};
  Sharing sharing = Sharing::lend_and_borrow;
  WithinTeam within_team = WithinTeam::lower_priority;
  ReclaimWithinCohort reclaim_within_cohort = ReclaimWithinCohort::any;
  BorrowWithinCohort borrow_within_cohort = BorrowWithinCohort::never;
  int32_t borrow_priority_threshold = std::numeric_limits<int32_t>::max();  // maxPriorityThreshold
  Queueing queueing = Queueing::best_effort_fifo;
  WhenCanBorrow when_can_borrow = WhenCanBorrow::borrow;
  WhenCanPreempt when_can_preempt = WhenCanPreempt::try_next_flavor;
  FlavorPreference flavor_preference = FlavorPreference::borrowing_over_preemption;
  /// Kueue's fairSharing.weight in millionths (model::kWeightScale): exact decimals; the
  /// shares divide by model::weight_value of it.
  int64_t fair_share_weight_micros = 0;
  bool active = true;
  /// The team's cohort in Module::cohorts (Kueue's `spec.cohort`), or -1 in a module without a
  /// tree, where every team is in the one flat cohort.
  int32_t cohort = -1;
};

/// The cohort's own quota in one flavor (`cohort NAME { quota ... }`, Kueue's Cohort
/// nominalQuota): borrowable by every team within its limits, owned by none, never reclaimed.
struct CohortQuota {
  uint32_t flavor = 0;  // index into Module::flavors
  Resources nominal{};
};

/// One cohort of a tree (Kueue's Cohort): its parent, its own quota per flavor with the limits
/// it borrows from and lends to its parent under (docs/semantics.md §2, "Cohort trees"; no
/// limit: kUnlimited), and its fair-sharing weight.
struct CohortNode {
  std::string name;
  int32_t parent = -1;              // index into Module::cohorts; -1 for a root
  std::vector<FlavorQuota> quotas;  // declared order
  int64_t fair_share_weight_micros = model::kWeightScale;
};

struct PriorityClass {
  std::string name;
  int32_t weight = 0;
};

struct Settings {
  bool rank_by_priority = true;        // task-prioritization = task-ranking (false: fcfs, all priority 0)
  bool fair_sharing = true;            // idle-compute = fair-share (false: fcfs, classical preemption)
  bool idle_resource_sharing = false;  // unreserved capacity is the cohort's own quota
  int32_t default_class = -1;          // index into Module::classes; -1: tasks without a class get 0
  /// Fair-sharing preemption strategies in the order they are tried: [S2-a, S2-b] (Kueue's
  /// default), [S2-a] or [S2-b]; the checker allows no other list.
  std::vector<FairShareStrategy> fair_share_strategies = {FairShareStrategy::less_than_or_equal_to_final_share,
                                                          FairShareStrategy::less_than_initial_share};
};

// ------------------------------------------------------------------ rules

/// String ids: Module::strings[id]; a label that is absent reads as the empty string
/// (id 0, always interned); any other value that is not a constant reads as kOtherString.
inline constexpr int64_t kOtherString = -2;
inline constexpr int64_t kAbsentLabel = -1;

enum class Op : uint8_t {
  constant,       // r = imm
  task_field,     // r = task[imm]
  team_stat,      // r = team[imm]      (imm = stat * kResourceCount + resource)
  cluster_stat,   // r = cluster[imm]   (imm = stat * kResourceCount + resource)
  label_value,    // r = label id of Module::label_keys[imm] (absent → 0, the empty string)
  label_present,  // r = label of Module::label_keys[imm] is present
  eq, ne, lt, le, gt, ge,              // r = a op b
  logical_and, logical_or, logical_not,  // booleans are 0 / 1
  add, sub, mul, div, neg,             // checked: saturate at the int64 bounds; x / 0 = 0
  in_set,         // r = a is in Module::sets[imm]
};

/// One instruction; it writes register number = its index in Rule::code. Operands `a`
/// and `b` name earlier registers. Straight-line code: no loops and no branches, so a
/// rule evaluates in time linear in its size for every input.
struct Instr {
  Op op = Op::constant;
  ValueType type = ValueType::boolean;
  int32_t a = -1;
  int32_t b = -1;
  int64_t imm = 0;
};

/// A piece of a rule's message: literal text, or the value of a register rendered by
/// type, or a label's value (read from the task; labels are not interned).
struct MessagePart {
  enum class Kind : uint8_t { text, value, label, task_id };
  Kind kind = Kind::text;
  std::string text;     // text
  int32_t reg = -1;     // value
  ValueType type{};     // value
  int32_t label = -1;   // label: index into Module::label_keys
};

enum class RuleAction : uint8_t { deny, warn };

struct Rule {
  std::string name;
  RuleAction action = RuleAction::deny;
  /// code[0, condition_length) computes the verdict (its last register); the rest computes
  /// the values the message interpolates, needed only when the rule matched.
  std::vector<Instr> code;
  uint32_t condition_length = 0;
  std::vector<MessagePart> message;
};

/// Everything a rule reads. Filled by the engine for one task (cheap: a few arrays),
/// then handed to the evaluator.
struct RuleInput {
  std::array<int64_t, kTaskFieldCount> task{};
  std::array<int64_t, kTeamStatCount * kResourceCount> team{};
  std::array<int64_t, kClusterStatCount * kResourceCount> cluster{};
  const int64_t* labels = nullptr;  // one id per Module::label_keys entry (kAbsentLabel when missing)
};

/// What a rule index dispatches on (rule_index.hpp): a task field (team, priority, instance
/// type, id) or the value of a label, as a rule's condition reads it (label_value: an absent
/// label reads as 0, the empty string).
struct RuleKey {
  enum class Source : uint8_t { task_field, label };
  Source source = Source::task_field;
  int64_t index = 0;  // a TaskField, or an index into Module::label_keys
  friend auto operator<=>(const RuleKey&, const RuleKey&) = default;
};

/// The rules that can match when the key has one value: ascending rule indices.
struct RuleBucket {
  int64_t value = 0;
  std::vector<uint32_t> rules;
  friend bool operator==(const RuleBucket&, const RuleBucket&) = default;
};

/// The rules whose guard requires the key to have one of a few values, by value (ascending).
struct RuleDimension {
  RuleKey key;
  std::vector<RuleBucket> buckets;
  friend bool operator==(const RuleDimension&, const RuleDimension&) = default;
};

/// The rules grouped by the equality tests on task fields and labels their guards start with
/// (Cedar's policy slicing), so that a back end evaluates only the rules that can match a task:
/// the `always` list, plus in each dimension the bucket of the task's value. Every rule is in
/// exactly one place: `always`, one dimension (in the buckets of each value its guard allows),
/// or `never` (its guard allows no value: it never matches). Built by ir::index_rules
/// (rule_index.hpp); a module whose index is not built has every rule evaluated.
struct RuleIndex {
  bool built = false;
  std::vector<uint32_t> always;
  std::vector<RuleDimension> dimensions;  // by key
  std::vector<uint32_t> never;
  friend bool operator==(const RuleIndex&, const RuleIndex&) = default;
};

// ------------------------------------------------------------------ the module

struct Module {
  std::string cluster;
  Settings settings;
  std::vector<Flavor> flavors;
  std::vector<PriorityClass> classes;  // declared order
  std::vector<Team> teams;             // declared order: ties are broken by it
  /// The cohort's own quota per flavor, when the policy declares it (exclusive with
  /// Settings::idle_resource_sharing, which computes it from capacity instead).
  std::vector<CohortQuota> cohort_quotas;
  /// A tree of cohorts (parents before or after children, any order), when the policy declares
  /// one; empty for the one flat cohort. Exclusive with cohort_quotas and idle-resource sharing.
  std::vector<CohortNode> cohorts;
  std::vector<Rule> rules;             // declared order
  RuleIndex rule_index;                // ir::index_rules(*this) once the rules are final
  std::vector<std::string> strings;    // string constants; strings[0] == ""
  std::vector<std::string> label_keys;  // label keys the rules read
  std::vector<std::vector<int64_t>> sets;  // constant sets for in_set
  /// Partition column k's MIG profile (`mig-1g.10gb`), numbered in order of first use in the
  /// quotas; at most kPartitionColumns (the checker's E0333).
  std::vector<std::string> partitions;

  /// The five resources plus the partition columns.
  size_t column_count() const { return kResourceCount + partitions.size(); }
  /// The charged columns (every resource but EFA, then the partition columns), in order.
  std::vector<Resource> charged_columns() const;
  /// A column's key in the decision stream and JSON: `gpu`, …, or the profile (`mig-1g.10gb`).
  std::string_view column_key(Resource r) const;
  /// A column's Kubernetes resource name: `nvidia.com/gpu`, …, or `nvidia.com/mig-1g.10gb`.
  std::string column_kubernetes_name(Resource r) const;
  /// A column as the public API names it: a resource with an empty profile, or a partition
  /// column as Resource::gpu with its profile (gov::ResourceAmount and the rows).
  ::gov::ResourceAmount public_amount(Resource r, Amount amount) const;
  std::string_view partition_of(Resource r) const { return is_partition(r) ? column_key(r) : std::string_view(); }
  static Resource public_resource(Resource r) { return is_partition(r) ? Resource::gpu : r; }
  /// The column of a profile, or -1 when no quota of the module gives it.
  int32_t partition_index(std::string_view profile) const;

  /// Index of a team, flavor or class by name, or -1.
  int32_t team_index(std::string_view name) const;
  int32_t flavor_index(std::string_view name) const;
  int32_t class_index(std::string_view name) const;
  /// A task's effective priority: its class weight (or the default class's, or 0);
  /// always 0 under fcfs prioritization. `class_index` may be -1.
  int32_t priority_of(int32_t class_index) const;
};

}  // namespace gov::ir
