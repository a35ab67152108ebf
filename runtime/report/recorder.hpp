// The report library's one entry point: a Recorder fed a decision stream, one decision at a
// time, that keeps what the reports need (usage intervals split by day, task counts) in memory
// bounded by the live tasks and the rows, and hands the reports out at the end.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gov/types.hpp"
#include "runtime/report/timeline.hpp"
#include "runtime/trace/holdings.hpp"

namespace gov::report {

/// The resources a usage report counts time of: accelerators (GPU, Neuron) and vCPUs.
inline constexpr std::array<Resource, 3> kReportedResources = {Resource::gpu, Resource::neuron, Resource::vcpu};

/// One day, team and instance type of a usage report. Resource-time is exact: base units ×
/// milliseconds (device-ms for gpu and neuron, millicore-ms for vcpu), saturating at the int64
/// bound; `borrowed` is the part above the team's nominal quota in that instance type at each
/// moment (trace::HoldingsClock: Kueue's borrowing), own = used − borrowed.
struct UsageRow {
  int64_t day = 0;            // whole days since time 0 of the stream (time 0 = 1970-01-01, UTC)
  std::string team;
  std::string instance_type;  // empty: tasks pending at the end that never held an instance type
  std::array<int64_t, kReportedResources.size()> used{};      // in kReportedResources order
  std::array<int64_t, kReportedResources.size()> borrowed{};
  int64_t admitted = 0;        // admissions that day (a re-admission after a preemption counts)
  int64_t preempted = 0;       // preemptions of the team's tasks that day
  int64_t finished = 0;        // tasks that finished that day
  int64_t pending_at_end = 0;  // last day only: tasks still pending at the end
};

/// Collects a decision stream for the reports. Feed every decision in stream order (a whole
/// `gov simulate` run, steps in sequence). A task holds what its `admitted` decision gives, in
/// each instance type it gives it in (trace::holdings_of: pod sets and resource groups on their
/// own types), until its next `preempted`, `finished`, `cancelled`, `rejected` or `invalid`, or
/// the end: the same accounting as the simulation summary (trace::SummaryBuilder), so the hours
/// add up to its GPU-hours and borrowed GPU-hours. The nominal quotas come from `setup`. Memory: one record per live task plus one per row; with the timeline,
/// also the report's series (at most Buckets::kMaxBuckets values per team and instance type)
/// and one wait per admission (for exact percentiles). Move-only; not thread-safe.
class Recorder {
 public:
  /// `timeline`: also collect the HTML report's data (report()), with `setup` (the policy's
  /// teams, quotas and capacity).
  explicit Recorder(ReportSetup setup = {}, bool timeline = false);
  ~Recorder();
  Recorder(Recorder&&) noexcept;
  Recorder& operator=(Recorder&&) noexcept;

  /// Feeds the next decision.
  void add(const Decision& decision);
  /// The HTML report's data until `end` (default: the last decision's time). Call once, at the
  /// end, and only on a recorder made with `timeline`.
  ReportData report(std::optional<Time> end = std::nullopt);
  /// The usage report: rows ordered by day, team and instance type. Tasks still admitted count
  /// until `end` (default: the time of the last decision, as the summary). Does not change the
  /// recorder.
  std::vector<UsageRow> usage(std::optional<Time> end = std::nullopt) const;
  /// The most rows a usage report holds (one per day, team and instance type): a one-line trace
  /// whose task runs for 10^12 s spans 31,700 years, and wrote 703 MB (a what-if analyst's
  /// finding, session 43).
  static constexpr size_t kMaxUsageRows = 1'000'000;
  /// Whether the usage report reached kMaxUsageRows (in add() or in a usage() call): its rows are
  /// then incomplete, and the report must not be written.
  bool usage_overflowed() const { return overflowed_; }
  /// The time of the last decision fed (0 before any).
  Time last_time() const { return last_; }
  /// Where time 0 falls, in milliseconds since 1970-01-01 UTC, for the usage report's days (0,
  /// the default: a trace's times are that themselves). `gov simulate --workloads` replays from
  /// the earliest creationTimestamp at time 0, and gives it here so that the days are the
  /// workloads' dates. Set before the first add().
  void set_usage_origin(Time origin) { origin_ = origin; }
  /// The instance type a submitted task asks for, given before its first decision: a task that
  /// never runs counts as pending at the end in that type's row, not in a row of no type (an SRE
  /// helper's finding: "how many H100 tasks are queued" could not be read from the CSV).
  void note_requested(const std::string& task, const std::string& instance_type) {
    auto [it, inserted] = live_.try_emplace(task);
    if (inserted) it->second.flavor = instance_type;
  }

 private:
  struct Live {
    std::string team;
    std::string flavor;  // the instance type it holds (its first), or last held; empty before any
    std::vector<trace::Holding> holding;  // while admitted
  };
  using Key = std::tuple<int64_t, std::string, std::string>;  // day, team, instance type

  /// The row of `day`, team and instance type in `rows`, or null once kMaxUsageRows are there
  /// (overflowed_ is then set).
  UsageRow* row(std::map<Key, UsageRow>& rows, int64_t day, const std::string& team, const std::string& flavor) const;
  /// Adds the resource-time of [from, to) of one team and instance type to the rows of the days
  /// it spans.
  void charge(std::map<Key, UsageRow>& rows, const std::string& team, const std::string& flavor, Time from, Time to,
              const trace::ResourceArray& held, const trace::ResourceArray& borrowed) const;
  /// The UTC day (days since 1970-01-01) of time `at`, given the origin.
  int64_t day_at(Time at) const;
  void release(Live& task, Time at);

  std::unordered_map<std::string, Live> live_;
  trace::HoldingsClock clock_;
  std::map<Key, UsageRow> rows_;
  Time last_ = 0;
  Time origin_ = 0;  // set_usage_origin
  mutable bool overflowed_ = false;  // usage_overflowed
  std::unique_ptr<Timeline> timeline_;  // with `timeline` only
};

}  // namespace gov::report
