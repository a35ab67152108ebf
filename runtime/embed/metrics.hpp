// The embedded engine's Prometheus metrics: what it counts as it runs (checks, steps, reloads)
// and the text exposition format written from those counts and its state at a scrape
// (Engine::metrics, gov_engine_metrics). Kueue's metric names and labels, so that dashboards
// and alerts written for Kueue work; docs/observability.md lists every metric. Internal.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gov/types.hpp"

namespace gov::engine {
class Engine;
}

namespace gov::embed {

/// A Prometheus histogram with fixed upper bounds (`bounds`, increasing; +Inf is implied). A
/// value type; not thread-safe (the engine's state lock guards the ones it keeps).
class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds) : bounds_(bounds), counts_(bounds.size() + 1, 0) {}
  void observe(double value);
  std::span<const double> bounds() const { return bounds_; }
  /// Observations per bucket (not cumulative); the last is the +Inf bucket.
  const std::vector<uint64_t>& counts() const { return counts_; }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::span<const double> bounds_;  // static storage
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

/// Kueue's buckets of kueue_admission_wait_time_seconds: 1, 2.5, 5, 10, ... 10240 seconds.
std::span<const double> admission_wait_buckets();
/// gov_decision_latency_seconds: 10 µs to 10 s.
std::span<const double> decision_latency_buckets();

/// Engine::check's answers by verdict. count() is the hot path: no lock, no allocation, no
/// atomic read-modify-write. Each thread has a process-wide number, taken at its first check;
/// the first kSlots threads each own a slot (one writer per slot: a relaxed load and store, no
/// lock prefix), later threads share an overflow slot with atomic adds. Thread-safe; totals()
/// sums the slots.
class CheckCounters {
 public:
  static constexpr size_t kVerdicts = 4;  // Admission::Verdict
  static constexpr size_t kSlots = 64;
  void count(Admission::Verdict verdict) noexcept;
  /// The sums over the slots, by verdict (each exact; together not one atomic instant).
  std::array<uint64_t, kVerdicts> totals() const noexcept;

 private:
  struct alignas(64) Slot {
    std::array<std::atomic<uint64_t>, kVerdicts> counts{};
  };
  std::array<Slot, kSlots> slots_{};
  Slot overflow_{};
};

/// What one team's tasks did, counted from the published steps.
struct TeamCounters {
  uint64_t admitted = 0;            // kueue_admitted_workloads_total
  uint64_t evicted_preempted = 0;   // kueue_evicted_workloads_total{reason="Preempted"}
  std::array<uint64_t, 3> preempting{};  // kueue_preempted_workloads_total by PreemptionKind
  Histogram wait{admission_wait_buckets()};  // kueue_admission_wait_time_seconds
};

/// unordered_map<std::string, T> looked up by std::string_view without a copy.
struct MetricsStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename T>
using MetricsMap = std::unordered_map<std::string, T, MetricsStringHash, std::equal_to<>>;

/// The counts kept from the engine's steps. Every member function needs the engine's state
/// lock exclusively (steps are published under it); writing needs it shared at least.
class StepCounters {
 public:
  /// Counts the decisions of one published step. `team_of` gives the team of a live task id
  /// (the preempting task of a `preempted` decision); `live` says whether an id's latest
  /// decision is live after the step (an `invalid` about a live id is a duplicate submission
  /// and leaves that task's wait alone).
  template <typename TeamOf, typename IsLive>
  void record(const Step& step, const TeamOf& team_of, const IsLive& live);
  /// A pending task loaded by Engine::load_state: it has waited since `submitted_at`.
  void loaded_pending(const std::string& id, Time submitted_at) { waiting_since_.insert_or_assign(id, submitted_at); }
  /// How long one step took to decide.
  void observe_latency(double seconds) { latency_.observe(seconds); }

  const std::array<uint64_t, 7>& decisions() const { return decisions_; }
  const MetricsMap<TeamCounters>& teams() const { return teams_; }
  const Histogram& latency() const { return latency_; }

 private:
  void record_one(const Decision& d, std::string_view preempting_team, bool still_live);

  std::array<uint64_t, 7> decisions_{};  // by Outcome
  MetricsMap<TeamCounters> teams_;
  MetricsMap<Time> waiting_since_;  // pending tasks: since their submission or last preemption
  Histogram latency_{decision_latency_buckets()};
};

template <typename TeamOf, typename IsLive>
void StepCounters::record(const Step& step, const TeamOf& team_of, const IsLive& live) {
  for (const Decision& d : step.decisions) {
    std::string_view preempting;
    if (d.outcome == Outcome::preempted) preempting = team_of(d.by);
    record_one(d, preempting, d.outcome == Outcome::invalid && live(d.task));
  }
}

/// Everything a scrape writes besides the state: the policy and the counters.
struct MetricsInputs {
  const PolicyInfo* policy = nullptr;
  const StepCounters* steps = nullptr;
  std::array<uint64_t, CheckCounters::kVerdicts> checks{};
  uint64_t reloads = 0;
  uint64_t reload_failures = 0;
  uint64_t compactions = 0;
  uint64_t decision_log_write_failures = 0;
};

/// The text exposition format (version 0.0.4) of every metric, from `core`'s state now and
/// `inputs`. Deterministic order: families in a fixed order, series by label values. The
/// caller holds the engine's state lock (shared at least).
std::string write_metrics(const engine::Engine& core, const MetricsInputs& inputs);

/// `value` escaped for a label value of the exposition format (backslash, double quote,
/// newline).
std::string escape_label_value(std::string_view value);

}  // namespace gov::embed
