// Admission rules (docs/semantics.md §5): evaluated at submission, before quota, through the
// Evaluator (interpreter or JIT); `deny` rejects the task, `warn` lets it proceed with a warning.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/ir/messages.hpp"
#include "compiler/ir/evaluator.hpp"
#include "runtime/engine/quota_state.hpp"
#include "runtime/engine/task_request.hpp"
#include "runtime/engine/task_store.hpp"

namespace gov::engine {

/// What the rules said about one task.
struct RuleVerdict {
  int32_t deny_rule = -1;  // the first matching deny rule in declared order, or -1
  std::string deny_message;
  std::vector<RuleWarning> others;  // every other matching rule (warns; later denies when denied)
};

/// Holds the module and evaluator by reference (both must outlive it). Not thread-safe (it
/// reuses buffers).
class AdmissionRules {
 public:
  AdmissionRules(const ir::Module& module, const ir::Evaluator& evaluator);

  bool empty() const { return module_.rules.empty(); }
  /// Evaluates every rule for a resolved task against the current quota state.
  RuleVerdict evaluate(const Task& task, const Labels& labels, const QuotaState& quota);
  /// The input rules read (module.hpp RuleInput): task fields; team and cluster figures in the
  /// task's instance type, or summed over the team's types when it names none; label ids into
  /// `label_ids`, one per label key the rules read (input.labels then points to it).
  /// Allocates nothing; thread-safe (const, reads `quota`).
  void build_input(const TaskRequest& task, std::string_view id, const Labels& labels,
                   const QuotaState& quota, ir::RuleInput& input,
                   std::span<int64_t> label_ids) const;
  /// build_input in two halves: the string ids of a task (its id when a rule reads it, and
  /// its labels into `label_ids`), then the input from them (no strings, no hashing).
  int64_t id_string(std::string_view id) const;
  void label_strings(const Labels& labels, std::span<int64_t> label_ids) const;
  void fill_input(const TaskRequest& task, int64_t id_string, const int64_t* label_ids,
                  const QuotaState& quota, ir::RuleInput& input) const;
  /// The team and cluster figures some rule reads (ir::fill_figures) into `input`, for `team`
  /// in `requested_flavor` (or summed over its types when -1). In a tree of cohorts
  /// `team.available` is the tree's (QuotaState::available: within every ancestor's limits and
  /// what each level has unused), which the back ends' compiled figures, flat formulas over the
  /// roots' totals, cannot give; both back ends read these.
  void fill_figures(int32_t team, int32_t requested_flavor, const QuotaState& quota, ir::RuleInput& input) const;
  /// The rules on a task's fields and label ids with fill_figures's figures, as ir::conclude
  /// counts them: the first matching deny rule (-1: none) and the other matches.
  std::pair<int32_t, uint32_t> verdicts(const int64_t* fields, const int64_t* label_ids, const QuotaState& quota,
                                        std::span<uint8_t> verdicts) const;
  /// RuleInput::task of a resolved task.
  std::array<int64_t, ir::kTaskFieldCount> task_fields(const TaskRequest& task,
                                                       int64_t id_string) const;
  const ir::Evaluator& evaluator() const { return evaluator_; }

 private:
  int64_t string_id(std::string_view text) const;
  std::string render(size_t rule, const ir::RuleInput& input, const Labels& labels,
                     const Task& task) const;

  const ir::Module& module_;
  const ir::Evaluator& evaluator_;
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> string_ids_;
  std::vector<uint8_t> verdicts_;
  std::vector<int64_t> label_ids_;
  ir::FigureSlots figure_slots_;  // the team and cluster figures some rule reads
  bool reads_task_id_ = false;
};

}  // namespace gov::engine
