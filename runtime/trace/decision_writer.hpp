// Writes decisions: the JSON-lines decision stream of docs/interfaces.md, and a readable text form
// ending with a per-team summary computed from the decisions alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/module.hpp"
#include "gov/types.hpp"
#include "runtime/trace/holdings.hpp"
#include "runtime/trace/wait_stats.hpp"

namespace gov::trace {

/// Appends one decision to `out` as a JSON object on one line, without a newline, exactly
/// as docs/interfaces.md "Decision stream": keys at, task, outcome, team, then by outcome
/// admitted → flavor, usage, borrowed, [warnings], message; pending → reason, [short],
/// [max], [victims], message; preempted → by, kind, message; rejected → rule, message;
/// finished, cancelled → nothing; invalid → message. Optional parts are written when
/// non-empty (`reason` when set). `at` is seconds ("5", "90.5"); amounts are in file units
/// (gpu/neuron/efa devices, vcpu vCPUs, memory_gib GiB), integers when whole, else the
/// exact decimal. Strings are escaped; the output is valid UTF-8 whatever the input.
/// Only allocation can fail (std::bad_alloc).
void append_decision_json(std::string& out, const gov::Decision& decision);
/// The same, as a new string.
std::string decision_json(const gov::Decision& decision);

/// One decision as one readable line, without a newline:
/// `   5s  b1  team-b  admitted on ml.g5.8xlarge  gpu 2, vcpu 64, memory 256 GiB`.
/// Control characters in names and messages are escaped so that it stays one line.
std::string decision_text(const gov::Decision& decision);

/// What one team's tasks did over a decision stream.
struct TeamSummary {
  std::string team;
  int64_t submitted = 0;                  // tasks seen
  int64_t admitted = 0;                   // tasks admitted at least once
  int64_t rejected = 0;                   // tasks a rule rejected
  int64_t pending = 0;                    // tasks still waiting at the end
  /// How long the longest waiting of those has been waiting at the end, from its submission:
  /// the wait `mean_wait` and `p95_wait` leave out (nullopt when none waits).
  std::optional<gov::Time> oldest_pending;
  std::optional<gov::Time> mean_wait;  // submission → first admission, over admitted tasks
  std::optional<gov::Time> p95_wait;   // nullopt when no task was admitted
  int64_t gpu_millis = 0;                 // GPUs held × time, GPU-milliseconds
  int64_t borrowed_gpu_millis = 0;        // GPUs held above the team's nominal quota × time (HoldingsClock)
  int64_t neuron_millis = 0;              // Neuron devices held × time (Trainium, Inferentia)
  int64_t borrowed_neuron_millis = 0;     // the same above nominal quota
  int64_t preempted = 0;                  // preemptions its tasks suffered
  int64_t preemptions_caused = 0;         // preemptions of any team's tasks by its tasks
};

/// Builds per-team summaries from a decision stream fed one decision at a time, in
/// stream order. A task is submitted at its first decision; it holds `usage` from each
/// `admitted` decision until its next `preempted`, `finished` or `cancelled` (or the end).
/// Borrowed hours are the team's (HoldingsClock): what its tasks hold in an instance type above
/// its nominal quota there, so set the nominal quotas first (without them everything held
/// counts as borrowed). Memory: one small record per live task (forgotten once it finishes, is
/// cancelled, rejected or invalid) plus per-team and per-instance-type totals. Not thread-safe.
class SummaryBuilder {
 public:
  /// The team's nominal quota of `resource` in `flavor` (Snapshot::usage's rows).
  void set_nominal(const std::string& team, const std::string& flavor, gov::Resource resource, int64_t amount) {
    clock_.set_nominal(team, flavor, resource, amount);
  }
  /// Feeds the next decision.
  void add(const gov::Decision& decision);
  /// One summary per team, in order of first appearance. Tasks still holding resources
  /// count until `end` (default: the time of the last decision). Does not change the builder.
  std::vector<TeamSummary> summarize(std::optional<gov::Time> end = std::nullopt) const;
  /// Tasks seen and not yet finished, cancelled, rejected or invalid.
  size_t live_tasks() const { return live_.size(); }
  /// The time of the last decision fed (0 before any).
  gov::Time last_time() const { return last_; }

 private:
  struct LiveTask {
    size_t team = 0;
    gov::Time submitted = 0;
    bool admitted_once = false;
    std::vector<Holding> holding;  // while admitted
  };
  struct TeamTotals {
    TeamSummary summary;
    WaitStats waits;
  };

  size_t team_slot(const std::string& name);
  void release(LiveTask& task, gov::Time at);
  void admit(LiveTask& task, const gov::Decision& decision);

  std::vector<TeamTotals> teams_;
  std::unordered_map<std::string, size_t> team_slots_;
  std::unordered_map<std::string, LiveTask> live_;
  HoldingsClock clock_;
  gov::Time last_ = 0;
};

/// The summary as a table, one row per team, with a header line: task counts (submitted,
/// admitted, rejected, still pending), waits in human units (`45s`, `2m 05s`, `9h 20m`,
/// `3d 4h`), GPU-hours with three decimals, and Neuron-device-hours when any team used Neuron
/// devices. Ends with a newline.
std::string summary_text(const std::vector<TeamSummary>& teams);

/// A duration as people read it: `0s`, `45s`, `2m 05s`, `9h 20m`, `3d 4h` (two units at most,
/// rounded down; below a minute, seconds with up to three decimals, as `1.5s`).
std::string duration_text(gov::Time millis);

}  // namespace gov::trace
