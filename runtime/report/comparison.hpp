// What-if comparison: one trace replayed against two policies (`gov simulate A.gov B.gov --trace
// T`), per team the difference in waits, GPU-hours, borrowed GPU-hours and preemptions, and the
// tasks whose outcome changed. Built from the two decision streams alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gov/types.hpp"
#include "runtime/report/recorder.hpp"

namespace gov::report {

/// How one task ended in one replay.
struct TaskOutcome {
  std::string team;
  Time submitted = 0;
  std::optional<Time> first_admitted;
  std::optional<Time> finished;  // when it finished (its duration ran out, or a finish event)
  uint32_t preemptions = 0;
  Outcome last = Outcome::pending;  // its last decision's outcome
  std::string rule;                 // rejected: the rule
  std::string flavor;               // the instance type it last held
  std::optional<PendingReason> reason;  // its last pending decision's reason, if any

  /// `finished`, `admitted at the end`, `pending at the end`, `rejected by R`, ... in words.
  std::string describe() const;
};

/// One replay's outcome per task and per team, fed its decision stream in order. Memory: one
/// record per task of the trace plus one wait per admitted task. Not thread-safe.
class RunOutcomes {
 public:
  /// `setup`: the replay's policy (its teams' nominal quotas decide what they borrow).
  explicit RunOutcomes(ReportSetup setup = {}) : recorder_(std::move(setup)) {}
  void add(const Decision& decision);
  /// Closes the replay at `end` (default: the last decision's time).
  void finish(std::optional<Time> end = std::nullopt);

  const std::unordered_map<std::string, TaskOutcome>& tasks() const { return tasks_; }
  /// The task ids in the order they first appeared.
  const std::vector<std::string>& order() const { return order_; }
  const Recorder& recorder() const { return recorder_; }
  Time end() const { return end_; }

 private:
  std::unordered_map<std::string, TaskOutcome> tasks_;
  std::vector<std::string> order_;
  Recorder recorder_;
  Time end_ = 0;
};

/// One team's figures in one replay.
struct TeamFigures {
  uint64_t admitted = 0;            // tasks admitted at least once
  uint64_t never_admitted = 0;      // tasks pending at the end that were never admitted: no wait
                                    // of theirs is in mean_wait and p95_wait
  uint64_t never_fit = 0;           // of those, the ones last pending with exceeds-max-quota: larger
                                    // than the team may ever hold, so they can never run
  std::optional<double> mean_wait;  // seconds, submission to first admission
  std::optional<double> p95_wait;   // seconds, nearest rank
  int64_t gpu_millis = 0;           // GPU × ms held
  int64_t borrowed_gpu_millis = 0;  // GPU × ms borrowed
  uint64_t preempted = 0;           // preemptions its tasks suffered
};

struct TeamComparison {
  std::string team;
  TeamFigures a;
  TeamFigures b;
};

/// A task whose outcome differs between the two replays.
struct ChangedTask {
  std::string task;
  std::string team;
  TaskOutcome a;
  TaskOutcome b;
};

struct Comparison {
  std::string policy_a;  // names for the reader (the files)
  std::string policy_b;
  std::vector<TeamComparison> teams;  // in order of first appearance in A, then B's others
  std::vector<ChangedTask> changed;   // in the trace's order, at most kMaxChangedListed
  size_t changed_total = 0;           // all of them
  size_t tasks = 0;
  /// Tasks that finished in both replays, at another time in B: a delay a preemption or a longer
  /// queue causes leaves the outcome (finished) and the first wait alone, so it is counted here.
  size_t finished_later = 0;
  size_t finished_earlier = 0;
  Time later_by = 0;    // summed, ms
  Time earlier_by = 0;  // summed, ms
  static constexpr size_t kMaxChangedListed = 1000;
};

/// Compares two finished replays of one trace. A task's outcome changed when its last outcome,
/// its rule, whether it was ever admitted, or how often it was preempted differ.
Comparison compare(const RunOutcomes& a, const RunOutcomes& b, std::string policy_a, std::string policy_b);

/// A table per team (A, B and B − A) and the changed tasks, for people. Ends with a newline.
std::string comparison_text(const Comparison& comparison);
/// The same as one JSON document (json_writer).
std::string comparison_json(const Comparison& comparison);
/// The same as one self-contained HTML page (bar charts of the differences per team, the
/// tables, a team filter; no external URL).
std::string comparison_html(const Comparison& comparison);

}  // namespace gov::report
