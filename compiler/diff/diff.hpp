// Entry point of gov::diff: what changes between two checked policies, in cluster terms
// (quotas, limits, classes, rules), and the consequences worth a reviewer's eye.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/check/policy.hpp"

namespace gov::diff {

/// One changed fact. `subject` and `field` are its display grouping (`team team-a`,
/// `ml.g5.8xlarge gpu nominal`); `team`, `instance_type`, `rule`, `priority_class`, `cohort`,
/// `resource`, `profile` and `property` are the same fact typed, for JSON and for tools. Numbers are exact: resource amounts in base units
/// (`resource` says which), everything else (percent, weights, instances) as written.
struct Change {
  std::string subject{};
  std::string field{};
  std::string before{};  // display text; empty when the fact is added
  std::string after{};   // display text; empty when the fact is removed
  std::optional<std::string> delta{};  // `+1`, `-128 GiB` for numeric changes

  std::string team{};           // the team, when the fact is a team's
  std::string instance_type{};  // a quota's or capacity's instance type
  std::string rule{};           // the rule, when the fact is a rule's
  std::string priority_class{}; // the priority class, when the fact is a class's weight
  std::string cohort{};         // the cohort, when the fact is a declared cohort's
  std::optional<model::Resource> resource{};
  std::string profile{};  // a GPU partition's MIG profile (`mig-1g.10gb`), for its quota's rows
  std::string property{};  // `nominal`, `borrowing-limit`, `lending-limit`, `sharing`, `weight`, `rule`, ...
  std::optional<int64_t> before_number{};
  std::optional<int64_t> after_number{};
  bool micros = false;  // the numbers are millionths (a fair-share weight): 500000 is 0.5
  bool names = false;   // before and after are sets of names joined by `, ` (queues, namespaces, orders)
};

/// A consequence: a team loses guaranteed accelerators or is removed (its tasks become invalid),
/// guaranteed quota now exceeds the cluster's capacity, a class now outranks another, a team
/// stops lending, classes stop mattering, a deny rule is gone, a quota falls below what a given
/// cluster state holds.
struct Warning {
  std::string kind;  // e.g. "guaranteed-gpus-fall", "team-removed", "quota-below-held"
  std::string message;
  std::string team;  // when it is about one team
  std::string rule{};  // when it is about one rule
  // The same facts typed, where the warning has them, so that a gate needs no English
  // ("fail when a team loses more than 8 H100s"; a reviewer's finding, session 43).
  std::string instance_type{};
  std::string priority_class{};
  std::optional<model::Resource> resource{};
  std::string profile{};  // a GPU partition's MIG profile
  std::optional<int64_t> before_number{};  // base units of `resource`, or partitions
  std::optional<int64_t> after_number{};
};

struct PolicyDiff {
  std::vector<std::string> summary;  // one line per changed thing (a quota, a setting, a rule)
  std::vector<Change> changes;       // the detail, field by field
  std::vector<Warning> warnings;
  bool empty() const { return changes.empty(); }
};

/// What a cluster state's admitted tasks hold, per (team, instance type), in base units.
using HeldAmounts = std::map<std::pair<std::string, std::string>, model::Resources>;

/// Compares `before` with `after`. Deterministic: subjects in the order of `after` (removed
/// ones where they stood in `before`), fields in a fixed order. With `held` (what the cluster
/// holds now), also warns where a nominal quota falls below it.
PolicyDiff compare(const check::Policy& before, const check::Policy& after, const HeldAmounts* held = nullptr);

std::string render_text(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name);
std::string render_json(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name);
/// Markdown ready to paste as a pull-request comment.
std::string render_markdown(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name);

}  // namespace gov::diff
