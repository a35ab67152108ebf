// The language surface: one table per block, listing its properties in documentation order,
// each with its key, the kind of value it takes, its choices (the words and the enum values
// they stand for) and how the checker stores it. The tables feed the schema check
// (schema.cpp), the checker's assignment (Checker::assign) and the words inspect and diff
// print (word_of). Adding a property is a row here plus its semantics.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/check/policy.hpp"
#include "compiler/check/quotas.hpp"

namespace gov::check {

class Checker;

enum class ValueKind {
  integer,          // 4
  vcpu_count,       // 4, 0.5 or 500m
  size,             // 128 GiB
  percentage,       // 50%
  decimal,          // 1 or 0.5: a plain number, decimals allowed
  name,             // aws-ml
  boolean,          // true
  choice,           // one of PropertySpec::choices
  capacity_map,     // { ml.g5.8xlarge: 4 }
  profile_map,      // { mig-1g.10gb: 14 }: MIG profiles to counts
  labels_map,       // { project: "llm" }
  resources,        // a block of PropertySpec::block's shape: { gpus = 1, memory = 64 GiB }
  choice_list,      // [a, b]: each one of PropertySpec::choices
  choice_or_block,  // one of PropertySpec::choices, or a block of PropertySpec::block's shape
  string_list,      // ["ml-research", "batch"]
  pod_set_map,      // { master: { vcpus = 4 }, worker: { pods = 3, gpus = 8 } }: pod sets by name
  group_map,        // { compute: { covers = [vcpus], flavors = [a] } }: resource groups by name
  name_list,        // [ml.c5.xlarge, ml.m5.xlarge]: names
};

enum class BlockKind {
  instance, cluster, policy, team, quota, submit, resources,
  amounts,               // a quota's `lending-limit`: `instances` or resources
  borrow_amounts,        // a quota's `borrow-limit = { ... }`: as `amounts`, and `gpus = unlimited`
  borrow_within_cohort,  // { policy = lower-priority, max-priority-threshold = training }
  pod_set,               // one pod set of a submitted task: { pods = 3, gpus = 8, instance-type = ... }
  cohort,                // `cohort NAME { ... }`: `parent`, `borrow-limit`, `fair-share-weight`, quotas
  cohort_quota,          // a root cohort's `quota`: `instances`, amounts, `partitions`; no limits (no parent)
  resource_group,        // one of a team's `resource-groups`: { covers = [vcpus], flavors = [a, b] }
};

/// A word a property accepts and the enum value it stands for (the enum's underlying value).
struct Choice {
  std::string_view word;
  int value;
};

/// The shape of one property: what the schema check needs.
struct PropertySpec {
  std::string_view key;
  ValueKind kind;
  std::vector<Choice> choices = {};                      // in documentation order
  BlockKind block = BlockKind::resources;                // the shape of a block value (resources, choice_or_block)
  std::optional<model::Resource> resource = std::nullopt;  // the resource an amount property gives

  bool has_choice(std::string_view word) const;
  std::vector<std::string_view> words() const;
  std::optional<int> value_of(std::string_view word) const;
};

/// What a setter sees: the property being assigned, its row, and the checker (for ranges,
/// name resolution and diagnostics).
struct Assignment {
  Checker& checker;
  SourceId source;
  const ast::Property& property;
  const PropertySpec& spec;
  const ast::Value& value() const { return *property.value; }
  Location at(Span span) const { return {source, span}; }
};

/// One row of a block's table. `set` stores the property into the block's Target; it is
/// called once per occurrence, in source order, after the schema check reported unknown
/// keys, wrong kinds and unknown choices (setters skip values of the wrong kind).
template <typename Target>
struct Property {
  PropertySpec spec;
  void (*set)(const Assignment& assignment, Target& target) = nullptr;
};

template <typename Target>
using Table = std::vector<Property<Target>>;

// ------------------------------------------------------------------ the blocks' targets

/// The cluster policy while its properties are read: `default-priority` names a class that
/// may be declared after it.
struct SettingsDraft : Settings {
  std::optional<std::pair<std::string, Location>> default_class_name;
};

/// A cluster while its properties are read: `capacity` resolves against the catalog `catalog`
/// names, so both are kept (the first of each; the schema check reports the others) and
/// Checker::check_cluster reads them together.
struct ClusterDraft {
  const ast::Property* catalog = nullptr;
  const ast::Property* capacity = nullptr;
};

/// The block form of `borrow-within-cohort` while its properties are read (the first of each).
struct BorrowWithinCohortDraft {
  const ast::Property* policy = nullptr;
  const ast::Property* threshold = nullptr;  // `max-priority-threshold`
};

/// A quota while its properties are read.
struct QuotaDraft {
  const InstanceType* type = nullptr;
  Quota* out = nullptr;
  GivenAmounts given{};
  GivenAmounts absolute{};  // `borrow-limit = { ... }`
  std::map<model::Resource, Span> given_spans;
  const ast::Property* lending = nullptr;  // `lending-limit = { ... }`
  const ast::Property* partitions = nullptr;  // `partitions = { ... }` (the first)
  // `borrow-limit = { ... }`'s partitions, resolved once the quota's partitions are known.
  std::optional<int64_t> borrow_instances;
  const ast::Property* borrow_partitions = nullptr;
};

/// A quota's `lending-limit = { ... }` while its properties are read.
struct LendingDraft {
  std::optional<int64_t> instances;
  const ast::Property* instances_at = nullptr;
  GivenAmounts given{};
  std::map<model::Resource, const ast::Property*> given_at;
  const ast::Property* partitions = nullptr;  // `partitions = { ... }` (the first)
};

/// A task of a `submit` step while its properties are read.
struct SubmitDraft {
  TestStep* step = nullptr;
  bool has_team = false;
};

/// One pod set of a `submit`'s `pod-sets` while its properties are read.
struct PodSetDraft {
  gov::PodSet* pod_set = nullptr;
};

/// One of a team's `resource-groups` while its properties are read.
struct ResourceGroupDraft {
  ResourceGroup* group = nullptr;
};

/// The amounts of a resources block (`borrowing { ... }`, `per-pod`, a quota's
/// `borrow-limit`), in source order; nullopt where the amount was invalid (reported).
using ResourceAmounts = std::vector<std::pair<model::Resource, std::optional<model::Amount>>>;

// ------------------------------------------------------------------ the tables (surface.cpp)

const Table<InstanceType>& instance_table();
/// One pod set's block in a `submit`'s `pod-sets` (amounts are per pod).
const Table<PodSetDraft>& pod_set_table();
/// One group's block in a team's `resource-groups`.
const Table<ResourceGroupDraft>& resource_group_table();
const Table<ClusterDraft>& cluster_table();
const Table<SettingsDraft>& policy_table();
const Table<Team>& team_table();
const Table<QuotaDraft>& quota_table();
const Table<LendingDraft>& amounts_table();
/// A quota's `borrow-limit = { ... }`: amounts_table's rows, and each resource may be
/// `unlimited` (Kueue's borrowingLimit left out for that resource alone), stored as kUnlimited.
const Table<LendingDraft>& borrow_amounts_table();
const Table<BorrowWithinCohortDraft>& borrow_within_cohort_table();
/// A cohort's properties (`parent`, `borrow-limit`, `fair-share-weight`); its quotas are quota_table's.
const Table<Cohort>& cohort_table();
const Table<SubmitDraft>& submit_table();
const Table<ResourceAmounts>& resources_table();

/// The shapes of a block's properties, in documentation order (the schema check's view).
const std::vector<const PropertySpec*>& block_schema(BlockKind kind);

/// The row of `key` in a block's table, or nullptr.
template <typename Target>
const Property<Target>* find_row(const Table<Target>& table, std::string_view key) {
  for (const Property<Target>& row : table) {
    if (row.spec.key == key) return &row;
  }
  return nullptr;
}

/// Stores one property into `target` through its row's setter. Unknown keys (reported by the
/// schema check) and rows without a setter are skipped.
template <typename Target>
void assign(const Table<Target>& table, const ast::Property& property, Checker& checker, SourceId source,
            Target& target) {
  const Property<Target>* row = find_row(table, property.key.text);
  if (!row || !row->set) return;
  row->set(Assignment{checker, source, property, row->spec}, target);
}

template <typename Target>
void assign_all(const Table<Target>& table, const std::vector<ast::Property>& properties, Checker& checker,
                SourceId source, Target& target) {
  for (const ast::Property& property : properties) assign(table, property, checker, source, target);
}

// ------------------------------------------------------------------ words

/// The property key of a resource amount: `gpus`, `neuron`, `vcpus`, `memory`, `efa`.
std::string_view resource_word(model::Resource resource);
/// The resource a property key gives, or nullopt.
std::optional<model::Resource> resource_of(std::string_view key);

/// The word a setting's value is written as (and printed as by inspect and diff). The
/// settings in ir are spelled by ir's names (the vocabulary's words, which the tables' choices
/// are made of); the cluster policy's own by the policy table.
std::string_view word_of(Prioritization value);
std::string_view word_of(IdleCompute value);
std::string_view word_of(model::Sharing value);
std::string_view word_of(model::WithinTeam value);
std::string_view word_of(model::ReclaimWithinCohort value);
std::string_view word_of(model::BorrowWithinCohort value);
std::string_view word_of(model::Queueing value);
std::string_view word_of(model::WhenCanBorrow value);
std::string_view word_of(model::WhenCanPreempt value);
std::string_view word_of(model::FlavorPreference value);
std::string_view word_of(model::FairShareStrategy value);

}  // namespace gov::check
