// The checked policy: every name resolved, every quantity in base units, every quota
// resolved to nominal / borrowing / lending limits (docs/semantics.md §2). Produced by check();
// read by inspect, lint, diff and the lowering to IR.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/source_file.hpp"
#include "compiler/model/resources.hpp"
#include "compiler/model/rule_inputs.hpp"
#include "compiler/model/team.hpp"

namespace gov::check {

/// A MIG profile an instance type's GPUs support (the catalog's `mig-profiles`).
struct MigProfile {
  std::string name;     // `mig-1g.10gb`
  int32_t slices = 0;   // compute slices of the seven of a GPU (from the name)
  int64_t per_gpu = 0;  // instances of this profile one GPU holds
};

struct InstanceType {
  std::string name;
  std::string accelerator;        // empty for CPU-only types
  model::Resources per_instance{};   // base units
  model::Amount accelerator_memory = 0;  // MiB per device
  bool hyperpod = true;
  std::vector<MigProfile> mig_profiles;  // catalog order; empty: no MIG
  Location where;

  /// The profile `name` of this type, or nullptr.
  const MigProfile* mig_profile(std::string_view name) const;
  /// How many instances of this type `amounts` fill: the largest share of any resource an
  /// instance has (0 when it has none). What "guaranteed instances" means in lint, diff and
  /// inspect.
  double instances_holding(const model::Resources& amounts) const;
};

struct Catalog {
  std::string name;
  std::vector<InstanceType> types;
  Location where;
};

struct Capacity {
  size_t type = 0;  // index into the cluster's catalog types
  int64_t instances = 0;
  Location where;
};

struct Cluster {
  std::string name;
  size_t catalog = 0;  // index into Policy::catalogs
  std::vector<Capacity> capacity;
  Location where;
  Location name_at;  // the name after `cluster`
};

enum class Prioritization { fcfs, task_ranking };
enum class IdleCompute { fcfs, fair_share };

struct Settings {
  Prioritization prioritization = Prioritization::task_ranking;
  IdleCompute idle_compute = IdleCompute::fair_share;
  bool idle_resource_sharing = false;
  int32_t default_class = -1;
  std::optional<Location> default_class_at;  // the class name of `default-priority`, when set
  /// Kueue's fairSharing.preemptionStrategies (`fair-share-preemption`), in order.
  std::vector<model::FairShareStrategy> fair_share_strategies = {model::FairShareStrategy::less_than_or_equal_to_final_share,
                                                              model::FairShareStrategy::less_than_initial_share};
  std::optional<Location> fair_share_strategies_at;  // where they were set, if they were
  Location where;
};

struct PriorityClass {
  std::string name;
  int32_t weight = 0;
  Location where;
};

/// A quota's partitions of one MIG profile (Kueue resource `nvidia.com/<profile>`), resolved:
/// counts of partitions, like a resource's amounts.
struct PartitionQuota {
  std::string profile;  // `mig-1g.10gb`
  int32_t slices = 0;
  int64_t nominal = 0;
  int64_t borrowing_limit = 0;  // model::kUnlimited: no limit
  int64_t lending_limit = model::kUnlimited;
  bool absolute_borrow_limit = false;  // set by `borrow-limit = { partitions = ... }` or `instances`
  bool borrow_limit_given = false;     // named by the quota's `borrow-limit` (a `lend` team's too, where it does nothing)
  bool lending_limit_given = false;
  Location where;  // the map entry
};

/// A team's quota for one instance type, resolved.
struct Quota {
  size_t type = 0;  // index into the cluster's catalog types
  std::string type_name;
  std::optional<int64_t> instances;  // when given as whole instances
  std::array<bool, model::kResourceCount> given{};  // amounts written (`gpus = 2`), as against derived
  model::Resources nominal{};
  model::Resources borrowing_limit{};
  model::Resources lending_limit{model::kUnlimited, model::kUnlimited, model::kUnlimited, model::kUnlimited, model::kUnlimited};
  std::array<bool, model::kResourceCount> absolute_borrow_limit{};  // set by `borrow-limit = { ... }`
  // How `borrow-limit = { ... }` was written (HyperPod's AbsoluteBorrowLimits entry: Count, amounts).
  std::optional<int64_t> borrow_limit_instances;                   // `instances = N`
  std::array<bool, model::kResourceCount> borrow_limit_given{};     // amounts written
  std::array<std::optional<Location>, model::kResourceCount> borrow_limit_at{};  // each amount written
  bool borrow_limit_unlimited = false;  // `borrow-limit = unlimited`: no limit in any resource
  std::array<bool, model::kResourceCount> lending_limit_given{};    // set by `lending-limit = { ... }`
  std::vector<PartitionQuota> partitions;  // `partitions = { ... }`, in written order
  Location where;

  /// The partitions of `profile`, or nullptr.
  const PartitionQuota* partition(std::string_view profile) const;
};

/// One of a team's `resource-groups` (Kueue's `resourceGroups[]`): the resources it covers and
/// the instance types (the team's quotas) they are taken from, in the order they are tried.
struct ResourceGroup {
  std::string name;                     // the map key: gov's, Kueue's groups have none
  std::vector<model::Resource> covers;  // written order (`coveredResources`)
  std::vector<std::pair<std::string, Location>> flavors;  // written order (`flavors[].name`)
  Location where;                       // the name
  Location covers_at;                   // the `covers` value, or `where` when not written
};

struct Team {
  std::string name;
  std::vector<Quota> quotas;  // declared order; resolved ones only (needs a cluster and a known type)
  /// `resource-groups`: empty for a team whose every resource comes from one flavor, its quotas
  /// in declared order (the one implicit group). Checked by Checker::check_resource_groups.
  std::vector<ResourceGroup> groups;
  size_t declared_quotas = 0;  // `quota` blocks written, resolved or not
  model::Sharing sharing = model::Sharing::lend_and_borrow;
  int32_t borrow_limit_percent = 50;
  bool borrow_limit_given = false;
  /// `borrow-limit = unlimited` (Kueue's borrowingLimit absent): no borrowing limit wherever a
  /// quota gives none of its own; borrow_limit_percent is then unused.
  bool borrow_limit_unlimited = false;
  model::WithinTeam preempt_team_tasks = model::WithinTeam::lower_priority;
  /// Kueue's fairSharing.weight, any decimal from 0 to model::kMaxFairShareWeight, in millionths
  /// (model::kWeightScale); HyperPod takes whole numbers 0–100 (lint W0140, export E0401).
  int64_t fair_share_weight_micros = 0;
  bool fair_share_weight_given = false;
  std::optional<Location> fair_share_weight_at;  // the value, when written
  bool active = true;
  // Kueue's controls beyond HyperPod's (docs/language.md); the defaults are what HyperPod writes
  // into its ClusterQueues (seed 004): borrowWithinCohort LowerPriority (never for a team that
  // never reclaims, see resolve_team) and whenCanBorrow TryNextFlavor. The IR keeps Kueue's own
  // API defaults (Never, MayStopSearch) for modules built without the checker.
  model::ReclaimWithinCohort reclaim_within_cohort = model::ReclaimWithinCohort::any;
  model::BorrowWithinCohort borrow_within_cohort = model::BorrowWithinCohort::lower_priority;
  int32_t borrow_priority_threshold = -1;  // index into Policy::classes; -1: none
  model::Queueing queueing = model::Queueing::best_effort_fifo;
  model::WhenCanBorrow when_can_borrow = model::WhenCanBorrow::try_next_flavor;
  model::WhenCanPreempt when_can_preempt = model::WhenCanPreempt::try_next_flavor;
  model::FlavorPreference flavor_preference = model::FlavorPreference::borrowing_over_preemption;
  // Where some of them were written, for lint warnings about settings without effect.
  std::optional<Location> borrow_limit_at;  // the `borrow-limit = N%` property, when written
  std::optional<Location> borrow_within_cohort_at;
  std::optional<Location> reclaim_within_cohort_at;  // its value
  std::optional<Location> preempt_team_tasks_at;     // its value
  std::optional<Location> queueing_at;               // its value
  std::optional<Location> flavor_preference_at;      // the property
  std::optional<Location> borrow_priority_threshold_at;
  std::optional<Location> fungibility_at;  // the first of when-can-borrow, when-can-preempt, flavor-preference
  /// `queues`: the Kueue LocalQueue names (the `kueue.x-k8s.io/queue-name` label) whose workloads
  /// are this team's, for clusters that do not name queues as HyperPod does; `namespaces`: the
  /// namespaces whose workloads are this team's when their queue says nothing
  /// (docs/kubernetes.md). Valid names, each claimed by one team only (E0230, E0231).
  struct ClaimedName {
    std::string name;
    Location where;
  };
  std::vector<ClaimedName> queues;
  std::vector<ClaimedName> namespaces;
  /// `cohort = NAME`: the cohort of a tree the team joins (Kueue's ClusterQueue `spec.cohort`);
  /// empty when not written. `cohort_index` is its index in Policy::cohort_tree once resolved.
  std::string cohort;
  std::optional<Location> cohort_at;  // the name, when written
  int32_t cohort_index = -1;
  Location where;

  /// The team's borrow limit as written: `50%` or `unlimited`.
  std::string borrow_limit_text() const;
};

/// The cohort every team is in, when the policy declares it (`cohort NAME { quota T { ... } }`):
/// its own quota per instance type (Kueue's Cohort `spec.resourceGroups[].flavors[].resources[]
/// .nominalQuota`), resolved like a team's nominal quota; no team owns it, so it is never
/// reclaimed. Exclusive with `idle-resource-sharing` (E0340).
///
/// In a tree of cohorts (Policy::cohort_tree) a cohort may also have a parent (Kueue's Cohort
/// `spec.parentName`), borrowing and lending limits in its quotas (`borrowingLimit`,
/// `lendingLimit`, only below a root) and a fair-sharing weight (`spec.fairSharing.weight`).
struct Cohort {
  std::string name;
  std::vector<Quota> quotas;  // declared order; only `nominal` and `partitions[].nominal` count at a root
  Location where;             // the name
  std::string parent_name;    // `parent = NAME`; empty for a root
  std::optional<Location> parent_at;
  int32_t parent = -1;        // index into Policy::cohort_tree, -1 for a root
  /// `borrow-limit = N% | unlimited` for every quota of the cohort (a quota's own
  /// `borrow-limit = { ... }` overrides it); Kueue's default is no limit.
  bool borrow_limit_unlimited = true;
  int32_t borrow_limit_percent = 0;
  std::optional<Location> borrow_limit_at;
  int64_t fair_share_weight_micros = model::kWeightScale;  // Kueue's default weight 1
  bool fair_share_weight_given = false;
  std::optional<Location> fair_share_weight_at;
};

/// A typed rule expression (see docs/language.md for the types and operators).
struct TypedExpr {
  enum class Kind { constant, string_constant, task_field, team_stat, cluster_stat, label_value, label_present,
                    unary, binary, in_set };
  Kind kind = Kind::constant;
  model::ValueType type = model::ValueType::boolean;
  Span span;
  int64_t value = 0;         // constant; task_field (model::TaskField); team/cluster stat index
  std::string text;          // string_constant; label key for label_value / label_present
  ast::UnaryOp unary_op{};
  ast::BinaryOp binary_op{};
  std::vector<TypedExpr> operands;
  std::vector<int64_t> set;           // in_set: constant values
  std::vector<std::string> string_set;  // in_set over strings
};

struct MessagePart {
  std::string text;
  std::optional<TypedExpr> value;
};

struct Rule {
  std::string name;
  ast::RuleAction action = ast::RuleAction::deny;
  TypedExpr when;
  std::vector<MessagePart> message;
  std::optional<bool> constant;  // the condition's value when it does not depend on the task
  std::string condition_text;    // canonical source text, for diffs
  std::string message_text;
  Location where;
};

/// One step of a test, names resolved.
struct TestStep {
  ast::Step::Kind kind = ast::Step::Kind::submit;
  std::string task;
  Location where;
  // submit: the task exactly as the engine receives it (its `id` is `task`)
  gov::Task submitted;
  // at
  int64_t time_ms = 0;
  // expect
  std::string outcome;
  /// `expect eventually`: matched against the task's latest decision so far, skipping (and
  /// consuming) the ones before it that no `expect` took.
  bool eventually = false;
  std::optional<std::string> flavor;     // on (the first `on`)
  /// Every `on`: several name a task's pod sets' flavors, in pod set order.
  std::vector<std::string> flavors;
  std::optional<std::string> by;         // by (task or rule)
  std::vector<std::string> warned_by;    // warned by
  std::optional<std::string> word;       // reason or kind
  // borrowing / short: the amounts written, nonzero ones in resource order (as decisions list them)
  std::optional<gov::ResourceAmounts> borrowing;
  std::optional<gov::ResourceAmounts> short_of;
  std::optional<std::string> message;
};

struct Test {
  std::string name;
  std::vector<TestStep> steps;
  Location where;
};

struct Policy {
  std::vector<Catalog> catalogs;
  std::optional<Cluster> cluster;
  std::optional<Settings> settings;
  std::vector<PriorityClass> classes;
  std::vector<Team> teams;
  /// The one flat cohort's own quota (`cohort NAME { quota ... }` without a tree): every team is in
  /// it, as in HyperPod.
  std::optional<Cohort> cohort;
  /// A tree of cohorts, when the policy declares one (a team's `cohort = NAME`, a cohort's
  /// `parent`, or several cohort blocks): every cohort block in declared order, each team in one
  /// of them (Team::cohort_index); `cohort` is then empty.
  std::vector<Cohort> cohort_tree;
  std::vector<Rule> rules;
  std::vector<Test> tests;

  /// The instance types of the cluster's catalog (empty without a cluster).
  const std::vector<InstanceType>& types() const;
  /// Instances of a type in the cluster's capacity (0 when absent).
  int64_t capacity_of(size_t type) const;
  /// The distinct MIG profiles the teams' quotas give, in order of first use (teams, then
  /// quotas, then partitions in declared order): the engine's partition columns.
  std::vector<std::string> partition_profiles() const;
};

}  // namespace gov::check
