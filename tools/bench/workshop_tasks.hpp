// The peer comparison's tasks (tools/gen-bench workshop-tasks.json): each task with the team and
// cluster figures the ten workshop rules read, turned into ir::RuleInput for the workshop policy.
// Cedar and CEL (tools/bench/peers/) read the same file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/module.hpp"

namespace gov::bench {

/// Inputs point into `label_ids`: held by unique_ptr, never copied.
struct RuleTasks {
  std::vector<std::string> ids;
  std::vector<ir::RuleInput> inputs;
  std::vector<int64_t> label_ids;  // module.label_keys.size() per task
};

/// Reads `path` and resolves every task against `module` (teams, classes and the instance type
/// by name; labels by the module's label keys and string constants). nullptr with `error` set
/// when the file is unreadable, malformed, or names something the module does not know.
std::unique_ptr<RuleTasks> read_rule_tasks(const std::string& path, const ir::Module& module,
                                           std::string& error);

/// The rules that match each task, one bit per rule in declared order (bit i: rule i).
uint64_t verdict_mask(const std::vector<uint8_t>& verdicts);

}  // namespace gov::bench
