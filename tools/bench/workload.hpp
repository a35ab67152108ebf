// The benchmark workload: a checked, lowered policy and tasks generated from a seed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/module.hpp"
#include "runtime/engine/decision.hpp"

namespace gov::bench {

/// A module and inputs for it. Inputs point into `label_ids`: move the Workload, never
/// copy it (it is held by unique_ptr for that reason).
struct Workload {
  ir::Module module;
  std::vector<ir::RuleInput> inputs;  // rules only: prepared inputs
  std::vector<int64_t> label_ids;     // label_keys.size() ids per input
  /// The hot-path decision: tasks as a controller submits them (names, labels), mostly
  /// valid and passing the rules, some denied, in the workshop's sizes.
  std::vector<gov::Task> tasks;
};

/// Loads, checks and lowers the policy at `path` (imports may reach `root`), then makes
/// `count` tasks deterministically from `seed`: teams, classes, instance types, sizes and
/// labels in the ranges the workshop uses, team and cluster figures to match. nullptr
/// with `error` set when the policy does not check.
std::unique_ptr<Workload> make_workload(const std::string& path, const std::string& root,
                                        uint64_t seed, size_t count, std::string* error);

}  // namespace gov::bench
