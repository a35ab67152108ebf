// The checker's state and its parts (internal to gov::check): helpers and declarations
// (checker.cpp), teams and quotas (teams.cpp), rules (rules.cpp) and tests (tests.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/check/check.hpp"
#include "compiler/check/expressions.hpp"
#include "compiler/support/name_index.hpp"
#include "compiler/check/surface.hpp"

namespace gov::check {

inline constexpr int64_t kMaxAmount = 10'000'000;  // HyperPod's range for counts and amounts
inline constexpr size_t kMaxClasses = 10;
inline constexpr size_t kMaxQuotasPerTeam = 15;
inline constexpr size_t kMaxNameLength = 41;
/// Kubernetes' limit on an object name (a DNS subdomain): a LocalQueue name in a team's `queues`.
inline constexpr size_t kMaxQueueNameLength = 253;
/// Kubernetes' limit on a namespace name (a DNS label): a namespace in a team's `namespaces`.
inline constexpr size_t kMaxNamespaceLength = 63;

/// A declaration together with the file it came from.
template <typename T>
struct Located {
  const T* decl;
  SourceId source;
};

const ast::Property* find_property(const std::vector<ast::Property>& properties, std::string_view key);

/// The span of a string's first `{...}` interpolation (the whole string when none).
Span interpolation_span(const ast::StringLit& s);

/// Checks one program into one CheckResult; run() once.
class Checker {
 public:
  Checker(const Program& program, const CheckOptions& options, CheckResult& result)
      : program_(program), options_(options), policy_(result.policy), diagnostics_(result.diagnostics) {}

  void run();

  // ------------------------------------------------------------------ helpers (checker.cpp)

  /// A list of names and its index, made once: resolve_type runs for every quota and test step,
  /// the team and rule lookups for every step (docs/limits.md).
  struct Names {
    std::vector<std::string> list;
    NameIndex index;
    explicit Names(std::vector<std::string> names) : list(std::move(names)), index(list) {}
  };

  Diagnostic& report(Code code, Location where, std::string message, std::string label = {});
  /// Reports a name defined twice; returns true when `name` was already in `seen`.
  bool duplicate(std::map<std::string, Location>& seen, const std::string& name, Location where, std::string_view what);
  /// HyperPod's name rule for teams and classes: a DNS label of at most 41 characters.
  void check_name_format(const ast::Name& name, SourceId source, std::string_view what);
  /// A fair-share weight (a plain number, decimals allowed) in millionths, range-checked
  /// (0 to model::kMaxFairShareWeight, E0302).
  std::optional<int64_t> fair_share_weight(const ast::Value& v, SourceId source);
  std::optional<int64_t> count_in_range(const ast::Value& v, SourceId source, std::string_view what, int64_t low,
                                        int64_t high, std::string_view unit = "");
  /// The amount of a resource property in base units, range-checked.
  std::optional<model::Amount> amount(const ast::Property& p, model::Resource r, SourceId source);
  /// The instance types names resolve against: the cluster's catalog, or every catalog
  /// when the file has no cluster.
  std::vector<std::string> type_names() const;
  /// type_names() and its index; made again when the cluster or the catalogs change.
  const Names& type_lookup();
  const Names& team_lookup();
  const Names& rule_lookup();
  /// Index of an instance type in the cluster's catalog; reports E0203 when unknown.
  /// Without a cluster, returns nullopt silently unless no catalog knows the name.
  std::optional<size_t> resolve_type(const std::string& name, Location where);
  void unknown_class(const std::string& name, Location where);

  // ------------------------------------------------------------------ catalogs, cluster, policy (checker.cpp)

  void collect();
  void check_catalogs();
  InstanceType instance_type(const ast::Instance& instance, SourceId source);
  void check_cluster();
  void missing_declaration(std::string_view what);
  void check_policy_settings();
  /// Kueue accepts three lists of fair-sharing preemption strategies: S2-a alone, S2-b alone, or
  /// S2-a then S2-b (docs/kueue-reference.md §1, `parseStrategies`).
  void fair_share_preemption(const Assignment& a, Settings& settings);
  void priority_class(const ast::PriorityClass& c, SourceId source, std::map<std::string, Location>& seen);

  // ------------------------------------------------------------------ teams and quotas (teams.cpp)

  void check_teams();
  /// `cohort NAME { ... }`: the one flat cohort's own quota (not with idle-resource sharing), or a
  /// tree of cohorts (parents, limits, weights; teams join with `cohort = NAME`).
  void check_cohort();
  Cohort resolve_cohort(const ast::Cohort& decl, SourceId source);
  void root_limits(const Cohort& cohort);
  void check_idle_sharing(const Cohort& cohort);
  void check_cohort_tree(std::vector<Cohort> cohorts);
  /// E0342 for `who` (a `what`: team or cohort) naming cohort `name`.
  void unknown_cohort(const std::string& name, Location where, std::string_view what, const std::string& who);
  /// A team's `queues = [...]` or `namespaces = [...]` (teams.cpp): valid Kubernetes names, none twice.
  void team_kubernetes_names(const Assignment& a, Team& team, bool namespaces);
  /// Queues and namespaces claimed by two teams, or queues named as another team's plain
  /// LocalQueue (E0230).
  void check_queue_claims();
  Team resolve_team(const ast::Team& team, SourceId source);
  /// `borrow-within-cohort = lower-priority`, or the block form with an optional
  /// `max-priority-threshold` (a class: victims of other teams above its weight are spared).
  void borrow_within_cohort(const Assignment& a, Team& out);
  /// Kueue's validation of preemption: borrowWithinCohort needs reclaimWithinCohort other than
  /// Never (a team that never reclaims cannot reclaim while borrowing either).
  void check_preemption_controls(const Team& team, const std::optional<Location>& reclaim_at);
  /// Kueue's validation of flavorFungibility: a preference only chooses among flavors when the
  /// search tries them all, i.e. when both policies are TryNextFlavor.
  void check_fungibility(const Team& team, const std::optional<Location>& preference_at);
  /// `cohort`: a cohort's quota, whose lending limit bounds its whole subtree's quota, so it may be
  /// above the cohort's own nominal (Kueue's cohort webhook: enforceNominalGreaterThanLending off).
  std::optional<Quota> resolve_quota(const ast::Quota& q, SourceId source, const Team& team, bool cohort = false);
  /// Kueue's validation of resourceGroups (pkg/webhooks/clusterqueue_webhook.go) on a team's
  /// `resource-groups`, against the quota blocks `team` declares.
  void check_resource_groups(const ast::Team& decl, SourceId source, Team& team);
  /// `lending-limit = { ... }` inside a quota: Kueue's lendingLimit, at most the nominal quota.
  void lending_limit(const ast::Property& p, const InstanceType& type, SourceId source, const Team& team, Quota& out,
                     bool cohort = false);
  static std::string_view display_name(model::Resource r);
  static std::string display_amount(model::Resource r, model::Amount a);
  bool accelerator_fits(const InstanceType& type, model::Resource r, const ast::Property& p, SourceId source);

  // ------------------------------------------------------------------ GPU partitions (partitions.cpp)

  /// A catalog instance's `mig-profiles = { mig-1g.10gb: 7, ... }`: profile → instances per GPU.
  void mig_profiles(const Assignment& a, InstanceType& t);
  /// E0332 when an instance type has `mig-profiles` and no GPUs.
  void mig_profiles_need_gpus(const ast::Instance& instance, SourceId source, const InstanceType& t);
  /// A quota's `partitions = { ... }` with their borrowing and lending limits, checked against
  /// the type's profiles and the cluster's GPUs; false when an error was reported.
  bool quota_partitions(const QuotaDraft& draft, const InstanceType& type, SourceId source, const Team& team, Quota& out);
  bool partition_limits(const QuotaDraft& draft, const InstanceType& type, SourceId source, const Team& team, Quota& out);
  /// The `partitions = { ... }` of a `borrow-limit` or `lending-limit` (`limit`) into `counts`;
  /// each profile must be one the quota gives.
  bool limit_partitions(const ast::Property& p, std::string_view limit, const InstanceType& type, SourceId source,
                        const Quota& out, std::map<std::string, int64_t>& counts);
  /// E0331: necessary conditions for the quota's partitions and GPUs to fit the cluster's GPUs.
  bool partitions_fit_cluster(const QuotaDraft& draft, const InstanceType& type, SourceId source, const Quota& out);
  /// E0333: at most model::kPartitionColumns distinct profiles per policy.
  void check_partition_profiles();

  // ------------------------------------------------------------------ rules (rules.cpp)

  ExprScope scope() const;
  void check_rules();

  // ------------------------------------------------------------------ tests (tests.cpp)

  void check_tests();
  std::optional<TestStep> test_step(const ast::Step& step, SourceId source, std::map<std::string, Location>& submitted,
                                    int64_t& clock);
  bool known_task(const ast::Name& task, SourceId source, const std::map<std::string, Location>& submitted);
  void submit(const ast::Step& step, SourceId source, TestStep& out);
  /// Reports a submitted task's team or class when the policy has no such team or class.
  void known_team(const std::string& team, Location where);
  void known_class(const std::string& name, Location where);
  /// A task's `labels = { ... }`.
  void labels(const Assignment& a, TestStep& out);
  gov::ResourceAmounts resources(const std::vector<ast::Property>& block, SourceId source);
  /// A test's `partitions = { mig-1g.10gb: 2 }` (a submit's, per-pod's or an expectation's)
  /// appended to `out` as (profile, count); counts checked, profiles left to the engine.
  void partition_amounts(const ast::Value& map, SourceId source, std::vector<std::pair<std::string, int64_t>>& out);
  void expect(const ast::Step& step, SourceId source, const std::map<std::string, Location>& submitted, TestStep& out);
  /// `name` is a rule of the policy that takes `action` (E0219 for an unknown one, E0045 for the other action).
  void known_rule(const ast::Name& name, SourceId source, ast::RuleAction action);

 private:
  const Program& program_;
  const CheckOptions& options_;
  Policy& policy_;
  Diagnostics& diagnostics_;
  std::vector<Located<ast::Catalog>> catalogs_;
  std::vector<Located<ast::Cluster>> clusters_;
  std::vector<Located<ast::Policy>> policies_;
  std::vector<Located<ast::Team>> teams_;
  std::vector<Located<ast::Cohort>> cohorts_;
  std::vector<Located<ast::Rule>> rules_;
  std::vector<Located<ast::Test>> tests_;
  std::optional<Names> type_lookup_;
  std::pair<size_t, size_t> type_lookup_key_{};
  std::optional<Names> team_lookup_;
  std::optional<Names> rule_lookup_;
  bool warned_unchecked_types_ = false;  // W0118 is said once per policy
};

}  // namespace gov::check
