// What the HTML report draws, collected from a decision stream in bounded memory: series in
// time buckets that widen as the stream goes on (at most kMaxBuckets, so a million events and a
// thousand teams stay small), wait histograms, preemptions by kind, the worst waits.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gov/types.hpp"
#include "runtime/trace/holdings.hpp"

namespace gov::report {

/// A team's quota of one resource in one instance type (what Snapshot::usage rows say).
struct QuotaInfo {
  std::string team;
  std::string flavor;
  Resource resource = Resource::gpu;
  int64_t nominal = 0;
  int64_t borrowing_limit = 0;  // kUnlimited when unlimited
};

/// How much of one resource one instance type has in the cluster (instances × per instance).
struct CapacityInfo {
  std::string flavor;
  Resource resource = Resource::gpu;
  int64_t capacity = 0;
};

/// What the report knows besides the stream: the policy's teams (declared order), quotas and
/// capacity. Empty is allowed (teams then come from the stream, no quota lines are drawn).
struct ReportSetup {
  std::string policy;  // a name for the title
  std::vector<std::string> teams;
  std::vector<QuotaInfo> quotas;
  std::vector<CapacityInfo> capacity;
};

/// Time buckets: they start at `origin` and are `width` ms wide; when a time beyond the last
/// one comes, the width doubles and neighbours merge (Timeline merges its series), so there are
/// never more than kMaxBuckets. A value type.
struct Buckets {
  static constexpr size_t kMaxBuckets = 120;
  static constexpr Time kFirstWidth = 1000;
  bool started = false;
  Time origin = 0;
  Time width = kFirstWidth;
  size_t count = 0;  // buckets in use
};

/// One row of the worst-waits table.
struct WaitRow {
  Time wait = 0;  // ms
  std::string task;
  std::string team;
  Time submitted = 0;            // when the wait began (submission or last preemption)
  std::optional<Time> admitted;  // nullopt: still pending at the end
  std::string reason;            // the last pending decision's reason
  std::string message;           // and its message
};

/// Upper bounds (seconds) of the wait histogram's bins; the last bin is everything above.
const std::vector<double>& wait_bins();

/// The data of one report, ready to be written.
struct ReportData {
  std::string policy;
  Time origin = 0;      // ms, the first bucket's start
  Time epoch = 0;       // ms since 1970-01-01 UTC at time 0 (Recorder::set_usage_origin)
  Time width = 0;       // ms per bucket
  size_t buckets = 0;
  Time end = 0;
  std::vector<std::string> teams;
  std::vector<std::string> flavors;
  struct Series {  // one team × instance type
    size_t team = 0;
    size_t flavor = 0;
    Resource resource = Resource::gpu;  // the resource charted (GPU, else Neuron, else vCPU)
    int64_t nominal = 0;
    int64_t borrowing_limit = kUnlimited;
    std::vector<double> own;       // average amount held within nominal per bucket
    std::vector<double> borrowed;  // average amount borrowed per bucket
  };
  std::vector<Series> usage;
  std::vector<std::vector<double>> pending;  // per team: average pending tasks per bucket
  std::vector<std::vector<uint64_t>> waits;  // per team: histogram over wait_bins() (+1 overflow)
  /// p50, p95, p99 of the admission waits (seconds, nearest rank, exact), per team and over all
  /// teams; -1 when no task was admitted.
  std::vector<std::array<double, 3>> percentiles;
  std::array<double, 3> percentiles_all{-1, -1, -1};
  struct Preemption {
    size_t team = 0;  // the preempted task's team
    size_t bucket = 0;
    size_t kind = 0;  // PreemptionKind
    uint64_t count = 0;
  };
  std::vector<Preemption> preemptions;
  struct Capacity {
    size_t flavor = 0;
    Resource resource = Resource::gpu;
    int64_t capacity = 0;
  };
  std::vector<Capacity> capacity;
  std::vector<WaitRow> worst;  // the worst overall and each team's worst, worst first
};

/// Collects a ReportData from a decision stream (Recorder feeds it). Not thread-safe.
class Timeline {
 public:
  static constexpr size_t kWorstOverall = 50;
  static constexpr size_t kWorstPerTeam = 5;

  explicit Timeline(ReportSetup setup);
  Timeline(const Timeline&) = delete;  // the buckets point into its series
  Timeline& operator=(const Timeline&) = delete;

  void add(const Decision& decision);
  /// The report until `end` (tasks still admitted or pending count until then). Changes the
  /// timeline (it charges the open intervals); call once, at the end.
  ReportData finish(Time end);

 private:
  struct Live {
    size_t team = 0;
    std::vector<trace::Holding> holding;  // while admitted: per instance type it holds
    bool pending = false;
    Time waiting_since = 0;
    std::string reason;
    std::string message;
  };

  size_t team_index(const std::string& name);
  size_t flavor_index(const std::string& name);
  size_t series_index(size_t team, size_t flavor);
  /// Adds `amount` × time over [from, to) to `series`.
  void charge(std::vector<double>& series, double amount, Time from, Time to);
  /// Makes the buckets reach `at` (widening and merging every series as needed).
  void cover(Time at);
  /// Every series, for merging and resizing.
  template <typename F>
  void each_series(F f);
  void set_pending(size_t team, int delta, Time at);
  void release(Live& task, Time at);
  /// Adds what `team` held in `flavor` over [from, to) to its usage series: own and borrowed
  /// (above its nominal quota there: trace::HoldingsClock) of the series' charted resource.
  void charge_usage(const std::string& team, const std::string& flavor, Time from, Time to,
                    const trace::ResourceArray& held, const trace::ResourceArray& borrowed);
  void keep_worst(WaitRow row);

  ReportSetup setup_;
  Buckets buckets_;
  std::vector<std::string> teams_;
  std::unordered_map<std::string, size_t> team_slots_;
  std::vector<std::string> flavors_;
  std::unordered_map<std::string, size_t> flavor_slots_;
  std::vector<ReportData::Series> series_;
  std::unordered_map<uint64_t, size_t> series_slots_;  // team << 32 | flavor
  std::vector<std::vector<double>> pending_;
  std::vector<int64_t> pending_now_;
  std::vector<Time> pending_since_;
  std::vector<std::vector<uint64_t>> waits_;
  std::vector<std::array<std::vector<double>, 3>> preemptions_;  // per team, per kind
  std::unordered_map<std::string, Live> live_;
  trace::HoldingsClock clock_;
  std::vector<WaitRow> worst_;                 // a heap, least bad on top
  std::vector<std::vector<WaitRow>> worst_per_team_;
};

}  // namespace gov::report
