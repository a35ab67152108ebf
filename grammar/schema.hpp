// The shape of every block: which properties it has and what kind of value each takes.
// Checked right after parsing, so that later stages see only well-formed blocks.
#pragma once

#include <string_view>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::grammar {

enum class ValueKind {
  integer,       // 4
  vcpu_count,    // 4, 0.5 or 500m
  size,          // 128 GiB
  percentage,    // 50%
  name,          // aws-ml
  boolean,       // true
  choice,        // one of PropertySpec::choices
  capacity_map,  // { ml.g5.8xlarge: 4 }
  labels_map,    // { project: "llm" }
  resources,     // a block of PropertySpec::block's shape: { gpus = 1, memory = 64 GiB }
  choice_list,   // [a, b]: each one of PropertySpec::choices
  choice_or_block,  // one of PropertySpec::choices, or a block of PropertySpec::block's shape
};

enum class BlockKind {
  instance, cluster, policy, team, quota, submit, resources,
  amounts,               // a quota's `lending-limit`: `instances` or resources
  borrow_within_cohort,  // { policy = lower-priority, max-priority-threshold = training }
};

struct PropertySpec {
  std::string_view key;
  ValueKind kind;
  std::vector<std::string_view> choices = {};
  BlockKind block = BlockKind::resources;  // the shape of a block value (resources, choice_or_block)
};

/// The properties a block may have, in documentation order.
const std::vector<PropertySpec>& block_schema(BlockKind kind);

/// Reports unknown and duplicate properties, values of the wrong kind, unknown choices,
/// and `expect` steps with unknown outcomes or clauses that do not fit the outcome.
void validate_schema(const ast::File& file, Diagnostics& diagnostics);

/// Outcomes of an `expect` step and the words each accepts as a bare clause.
const std::vector<std::string_view>& expect_outcomes();

}  // namespace gov::grammar
