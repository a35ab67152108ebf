// The table of every diagnostic code: stable id, name, severity and a one-line summary.
// docs/diagnostics.md mirrors this table (a test keeps them in sync).
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace gov {

enum class Severity { error, warning, note };

// X(enumerator, "code", "name", severity, "summary")
#define GOV_DIAGNOSTIC_CODES(X)                                                                     \
  X(file_too_large, "E0001", "file-too-large", error, "the file is larger than gov reads (see docs/limits.md)") \
  X(invalid_utf8, "E0002", "invalid-utf8", error, "the file is not valid UTF-8")                    \
  X(nesting_too_deep, "E0003", "nesting-too-deep", error, "expressions or values are nested deeper than gov allows") \
  X(control_character, "E0004", "control-character", error, "the file contains a control character such as NUL (anywhere, comments included)") \
  X(too_long, "E0005", "too-long", error, "a string or name is longer than gov reads (see docs/limits.md)") \
  X(too_many, "E0006", "too-many", error, "a policy declares more teams, cohorts, rules, tests or instance types, or reads more files, than gov allows (see docs/limits.md)") \
  X(text_direction_control, "E0007", "text-direction-control", error, "a comment, string or name contains a character that changes the direction of text, such as U+202E RIGHT-TO-LEFT OVERRIDE (Trojan Source)") \
  X(invisible_character, "E0008", "invisible-character", error, "an invisible or space-like character, such as a zero-width space, a no-break space or a second byte order mark, stands outside strings and comments") \
  X(unterminated_string, "E0010", "unterminated-string", error, "a string is missing its closing quote before the end of the line") \
  X(invalid_escape, "E0011", "invalid-escape", error, "a string contains a backslash escape gov does not know") \
  X(unterminated_interpolation, "E0012", "unterminated-interpolation", error, "an interpolation `{...}` in a string is not closed") \
  X(unknown_unit, "E0020", "unknown-unit", error, "a quantity has a unit gov does not know (memory uses MiB, GiB, TiB; vCPU uses m)") \
  X(invalid_number, "E0021", "invalid-number", error, "a number is too large or has too many decimals") \
  X(expected_declaration, "E0030", "expected-declaration", error, "something other than a declaration stands at the top level of a file") \
  X(unclosed_block, "E0031", "unclosed-block", error, "a `{` is never closed before the end of the file") \
  X(expected_token, "E0032", "expected-token", error, "the parser expected a particular token, such as `=` or a name") \
  X(reserved_word, "E0033", "reserved-word", error, "a reserved word is used where a name is expected") \
  X(invalid_name, "E0034", "invalid-name", error, "a name uses characters other than lower-case letters, digits, hyphens and dots") \
  X(expected_expression, "E0035", "expected-expression", error, "a rule condition or operand is missing") \
  X(chained_comparison, "E0036", "chained-comparison", error, "comparisons are chained, as in `a < b < c`") \
  X(unknown_property, "E0040", "unknown-property", error, "a block has a property it does not define") \
  X(duplicate_property, "E0041", "duplicate-property", error, "a property is given twice in one block, or a clause twice in one `expect`") \
  X(wrong_value_kind, "E0042", "wrong-value-kind", error, "a property's value is of the wrong kind, such as a number where a percentage is expected") \
  X(unknown_enum_value, "E0043", "unknown-enum-value", error, "a property is set to a value that is not one of its choices") \
  X(unknown_outcome, "E0044", "unknown-outcome", error, "an `expect` step names an outcome that does not exist") \
  X(clause_not_allowed, "E0045", "clause-not-allowed", error, "an `expect` clause does not apply to the expected outcome") \
  X(import_not_found, "E0201", "import-not-found", error, "an imported file cannot be read") \
  X(import_cycle, "E0202", "import-cycle", error, "files import each other in a cycle") \
  X(unknown_instance_type, "E0203", "unknown-instance-type", error, "an instance type is not in the cluster's catalog") \
  X(unknown_team, "E0204", "unknown-team", error, "a team name does not match any team") \
  X(unknown_priority_class, "E0205", "unknown-priority-class", error, "a priority class name does not match any class of the policy") \
  X(unknown_catalog, "E0206", "unknown-catalog", error, "a cluster, or a catalog's `extends`, names a catalog that is not defined") \
  X(duplicate_definition, "E0207", "duplicate-definition", error, "two teams, cohorts, classes, rules, catalogs, instance types, tests or tasks have the same name") \
  X(import_outside_root, "E0208", "import-outside-root", error, "an import leaves the policy's root directory") \
  X(unknown_field, "E0209", "unknown-field", error, "a path such as `task.gpus` names a field that does not exist") \
  X(type_mismatch, "E0210", "type-mismatch", error, "an operator is applied to values of types it does not accept") \
  X(unknown_name, "E0211", "unknown-name", error, "a name in a condition is not a class, team or instance type") \
  X(condition_not_boolean, "E0213", "condition-not-boolean", error, "a rule's `when` condition is not true or false") \
  X(interpolation_not_allowed, "E0214", "interpolation-not-allowed", error, "`{...}` is used in a string that is not a rule message") \
  X(unknown_task, "E0215", "unknown-task", error, "a test step names a task that was not submitted before it") \
  X(missing_cluster_or_policy, "E0216", "missing-cluster-or-policy", error, "a policy that is inspected, simulated, applied or compiled needs exactly one `cluster` (a missing `policy` block is `policy {}`)") \
  X(duplicate_cluster_or_policy, "E0217", "duplicate-cluster-or-policy", error, "more than one `cluster` or `policy` declaration") \
  X(missing_property, "E0218", "missing-property", error, "a required property is missing (such as an instance type's `vcpus`)") \
  X(unknown_rule, "E0219", "unknown-rule", error, "a test names a rule that does not exist") \
  X(import_too_deep, "E0220", "import-too-deep", error, "imports are nested deeper than gov follows") \
  X(empty_quota, "E0221", "empty-quota", error, "a quota gives neither `instances` nor any resource") \
  X(invalid_time, "E0222", "invalid-time", error, "a test's `at` goes back in time or has more than millisecond precision") \
  X(catalog_cycle, "E0223", "catalog-cycle", error, "catalogs extend each other in a cycle") \
  X(queue_claimed_twice, "E0230", "queue-claimed-twice", error, "a queue or namespace name is in two teams' `queues` or `namespaces` (or twice in one), or a queue names another team") \
  X(invalid_queue_name, "E0231", "invalid-queue-name", error, "a team's `queues` or `namespaces` gives a name that is not a Kubernetes LocalQueue or namespace name, or HyperPod's name of a team's queue") \
  X(too_many_priority_classes, "E0301", "too-many-priority-classes", error, "a policy has more than 10 priority classes (HyperPod's limit)") \
  X(out_of_range, "E0302", "out-of-range", error, "a number is outside the range HyperPod accepts for it") \
  X(invalid_name_format, "E0303", "invalid-name-format", error, "a team or class name is longer than 41 characters or is not a DNS label") \
  X(too_many_quotas, "E0304", "too-many-quotas", error, "a team has more than 15 quota entries (HyperPod's limit)") \
  X(accelerator_mismatch, "E0305", "accelerator-mismatch", error, "`gpus` on an instance type without GPUs, or `neuron` on one without Neuron devices") \
  X(quota_exceeds_instances, "E0306", "quota-exceeds-instances", error, "a quota asks for more of a resource than its instance count holds (no longer reported: a quota cannot give both, E0314)") \
  X(conflicting_accelerators, "E0307", "conflicting-accelerators", error, "an instance type has both `gpus` and `neuron`") \
  X(duplicate_quota, "E0308", "duplicate-quota", error, "a team has two quotas for the same instance type") \
  X(lending_limit_above_nominal, "E0309", "lending-limit-above-nominal", error, "a quota's lending limit is above its nominal quota (Kueue rejects it)") \
  X(lending_limit_without_lending, "E0310", "lending-limit-without-lending", error, "a `dont-lend` team, which lends nothing, sets a lending limit") \
  X(borrow_without_reclaim, "E0311", "borrow-without-reclaim", error, "`borrow-within-cohort` is set while `reclaim-within-cohort` is `never` (Kueue rejects it)") \
  X(invalid_fair_share_preemption, "E0312", "invalid-fair-share-preemption", error, "`fair-share-preemption` is not one of the three lists Kueue accepts") \
  X(preference_without_try_next_flavor, "E0313", "preference-without-try-next-flavor", error, "`flavor-preference` is set while `when-can-borrow` or `when-can-preempt` stops the search (Kueue rejects it)") \
  X(quota_mixes_instances_and_amounts, "E0314", "quota-mixes-instances-and-amounts", error, "a quota gives both `instances` and resource amounts (HyperPod takes a count of instances or amounts, not both)") \
  X(not_expressible, "E0401", "not-expressible", error, "`gov export`: the target (Kueue or SageMaker HyperPod) has no field for a construct of the policy; `--allow-lossy` drops it with a comment") \
  X(cohort_quota_with_idle_sharing, "E0340", "cohort-quota-with-idle-sharing", error, "the cohort's own quota is given twice: by a `cohort` block's quotas and by `idle-resource-sharing = true`") \
  X(second_cohort, "E0341", "second-cohort", error, "a policy declares a second root `cohort` while no team joins a cohort: every team is in the one flat cohort") \
  X(unknown_cohort, "E0342", "unknown-cohort", error, "a team's `cohort` or a cohort's `parent` names no cohort the policy declares") \
  X(cohort_cycle, "E0343", "cohort-cycle", error, "cohorts' parents form a cycle (Kueue rejects a Cohort that is its own ancestor)") \
  X(root_cohort_limit, "E0344", "root-cohort-limit", error, "a cohort without a parent has a borrow limit: a root borrows from no one") \
  X(cohort_tree_with_idle_sharing, "E0345", "cohort-tree-with-idle-sharing", error, "`idle-resource-sharing` (HyperPod's one flat cohort) is set in a policy with a tree of cohorts") \
  X(team_without_cohort, "E0346", "team-without-cohort", error, "a team joins no cohort while the policy's tree of cohorts has several roots") \
  X(resource_covered_twice, "E0350", "resource-covered-twice", error, "a resource is covered by two resource groups of a team (Kueue rejects it)") \
  X(flavor_in_two_groups, "E0351", "flavor-in-two-groups", error, "an instance type is listed in two resource groups of a team (Kueue rejects it)") \
  X(quota_outside_group, "E0352", "quota-outside-group", error, "a quota gives a resource its instance type's resource group does not cover (Kueue rejects it)") \
  X(group_flavor_without_quota, "E0353", "group-flavor-without-quota", error, "a resource group lists an instance type its team has no quota for") \
  X(quota_without_group, "E0354", "quota-without-group", error, "a team with resource groups has a quota for an instance type none of its groups lists") \
  X(empty_resource_group, "E0355", "empty-resource-group", error, "a resource group covers no resource or lists no instance type (Kueue requires at least one of each)") \
  X(unsupported_partition, "E0330", "unsupported-partition", error, "a quota gives partitions of a MIG profile its instance type's GPUs do not support") \
  X(partitions_exceed_gpus, "E0331", "partitions-exceed-gpus", error, "a quota gives more partitions of an instance type than the cluster's GPUs of that type can hold") \
  X(invalid_mig_profile, "E0332", "invalid-mig-profile", error, "a catalog's `mig-profiles` names a profile not of the form `mig-<slices>g.<memory>gb`, or is given to an instance type without GPUs") \
  X(too_many_partition_profiles, "E0333", "too-many-partition-profiles", error, "the teams' quotas use more distinct MIG profiles than gov allows in one policy (8, see docs/limits.md)") \
  X(quota_exceeds_capacity, "W0101", "quota-exceeds-capacity", warning, "the teams' guaranteed quotas for an instance type add up to more than the cluster has") \
  X(quota_without_capacity, "W0102", "quota-without-capacity", warning, "a team has a quota for an instance type the cluster has none of") \
  X(weight_without_fair_share, "W0103", "weight-without-fair-share", warning, "fair-share weights are set while idle compute is `fcfs`, where they have no effect") \
  X(borrow_limit_on_lend_team, "W0104", "borrow-limit-on-lend-team", warning, "a `lend` team never borrows, so its borrow limit has no effect") \
  X(borrower_without_lender, "W0105", "borrower-without-lender", warning, "a team may borrow an instance type that no other team lends") \
  X(unusable_priority_class, "W0106", "unusable-priority-class", warning, "priority classes are declared while task prioritization is `fcfs`, where every task has priority 0") \
  X(equal_priority_weights, "W0107", "equal-priority-weights", warning, "two priority classes have the same weight, so neither outranks the other") \
  X(constant_rule, "W0108", "constant-rule", warning, "a rule's condition does not depend on the task: it always or never matches") \
  X(warn_duplicates_deny, "W0109", "warn-duplicates-deny", warning, "a `warn` rule has the same condition as a `deny` rule, so it can never be seen") \
  X(test_asserts_nothing, "W0110", "test-asserts-nothing", warning, "a test has no `expect` step") \
  X(not_hyperpod_type, "W0111", "not-hyperpod-type", warning, "a quota or capacity uses an instance type HyperPod does not support") \
  X(borrow_within_cohort_with_fair_share, "W0112", "borrow-within-cohort-with-fair-share", warning, "`borrow-within-cohort` is set while idle compute is `fair-share`, where Kueue ignores it") \
  X(fair_share_preemption_without_fair_share, "W0113", "fair-share-preemption-without-fair-share", warning, "`fair-share-preemption` is set while idle compute is `fcfs`, where it has no effect") \
  X(fungibility_with_one_instance_type, "W0114", "fungibility-with-one-instance-type", warning, "flavor fungibility is set on a team with one instance type, where there is no other to try") \
  X(threshold_without_borrowing, "W0115", "threshold-without-borrowing", warning, "`max-priority-threshold` is set while the `borrow-within-cohort` policy is `never`, where it has no effect") \
  X(team_never_runs, "W0116", "team-never-runs", warning, "a team has no quota, or only zero quotas with nothing to borrow: it can never run a task") \
  X(unknown_allow, "W0117", "unknown-allow", warning, "a `# gov:allow(...)` comment names no lint warning, so it silences nothing") \
  X(instance_types_not_checked, "W0118", "instance-types-not-checked", warning, "no catalog is visible, so the instance types a file names are not checked") \
  X(queue_name_too_long, "W0119", "queue-name-too-long", warning, "a team's name is so long that the LocalQueue HyperPod names for it (`hyperpod-ns-TEAM-localqueue`) is longer than the 63 characters a `kueue.x-k8s.io/queue-name` label takes, so no job can name it") \
  X(accelerators_borrowed_alone, "W0120", "accelerators-borrowed-alone", warning, "a quota's `borrow-limit = { gpus = N }` lets the team borrow accelerators but no vCPU or memory, so a task that asks for CPU or memory beyond the quota can never run there") \
  X(not_exportable_to_target, "W0150", "not-exportable-to-target", warning, "`gov lint --target`: the policy says something the chosen export target cannot express, so `gov export` for it would refuse it (E0401)") \
  X(partition_not_in_hyperpod_api, "W0130", "partition-not-in-hyperpod-api", warning, "a quota gives partitions of a MIG profile HyperPod's API does not accept (fine for Kueue, not for `gov export hyperpod`)") \
  X(weight_not_in_hyperpod_api, "W0140", "weight-not-in-hyperpod-api", warning, "a team's fair-share weight is not a whole number from 0 to 100, what HyperPod's API takes (fine for Kueue, not for `gov export hyperpod`)") \
  X(borrow_limit_outside_documented_range, "W0401", "borrow-limit-outside-documented-range", warning, "`gov export hyperpod`: a team's borrow limit is outside 1–500 %, the range HyperPod's documentation gives (its API model accepts 0–10000)") \
  X(cluster_name_rewritten, "W0402", "cluster-name-rewritten", warning, "`gov export hyperpod`: the cluster's name is not one HyperPod accepts for its cluster policy (letters, digits and hyphens, at most 63), so the policy is exported under another")

enum class Code {
#define GOV_X(id, code, name, severity, summary) id,
  GOV_DIAGNOSTIC_CODES(GOV_X)
#undef GOV_X
};

struct CodeInfo {
  Code code;
  std::string_view id;       // "E0020"
  std::string_view name;     // "unknown-unit": what `# gov:allow(name)` and `--allow` take
  Severity severity;         // the default severity
  std::string_view summary;  // one sentence, no final period
};

/// "error", "warning", "note".
std::string_view severity_name(Severity severity);

/// Every code, in table order.
std::span<const CodeInfo> all_codes();
const CodeInfo& code_info(Code code);
/// Looks a code up by id ("E0020") or name ("unknown-unit").
std::optional<CodeInfo> find_code(std::string_view id_or_name);

}  // namespace gov
