// The engine's Prometheus metrics: counting (checks, steps) and the text exposition format.
#include "runtime/embed/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "compiler/model/partitions.hpp"
#include "compiler/model/resources.hpp"
#include "runtime/engine/engine.hpp"

namespace gov::embed {

namespace {

// Kueue's generateExponentialBuckets(14): 1, then 2.5 doubling 13 times.
constexpr std::array<double, 14> kAdmissionWaitBuckets = {1,   2.5, 5,    10,   20,   40,   80,
                                                          160, 320, 640, 1280, 2560, 5120, 10240};
constexpr std::array<double, 19> kLatencyBuckets = {1e-5,   2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
                                                    2.5e-3, 5e-3,   1e-2, 2.5e-2, 5e-2, 0.1,  0.25,
                                                    0.5,    1,      2.5,  5,    10};

// Kueue's `reason` of kueue_preempted_workloads_total, by gov's kind of preemption.
std::string_view preemption_reason(size_t kind) {
  switch (static_cast<PreemptionKind>(kind)) {
    case PreemptionKind::in_team: return "InClusterQueue";
    case PreemptionKind::reclaim: return "InCohortReclamation";
    case PreemptionKind::fair_sharing: return "InCohortFairSharing";
  }
  return "?";
}

std::string_view verdict_name(size_t verdict) {
  switch (static_cast<Admission::Verdict>(verdict)) {
    case Admission::Verdict::admit: return "admit";
    case Admission::Verdict::reject: return "reject";
    case Admission::Verdict::pending: return "pending";
    case Admission::Verdict::invalid: return "invalid";
  }
  return "?";
}

/// A sample value: integers exactly, other values in the shortest form that reads back the
/// same; +Inf, -Inf and NaN as the format spells them.
std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::trunc(value) && std::fabs(value) < 9.0e15) return fmt::format("{}", static_cast<int64_t>(value));
  return fmt::format("{}", value);
}

/// An amount in the units Kueue reports: devices, CPU cores, memory bytes.
double kubernetes_amount(Resource resource, int64_t amount) {
  switch (resource) {
    case Resource::vcpu: return static_cast<double>(amount) / static_cast<double>(model::kMillicoresPerVcpu);
    case Resource::memory: return static_cast<double>(amount) * 1024.0 * 1024.0;
    case Resource::gpu:
    case Resource::neuron:
    case Resource::efa: return static_cast<double>(amount);
  }
  return static_cast<double>(amount);
}

/// Writes families: one `# HELP` and `# TYPE` each, then its samples.
class Writer {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  /// `labels` is the inside of the braces, already escaped (may be empty).
  void sample(std::string_view name, std::string_view labels, std::string_view value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  void histogram(std::string_view name, std::string_view labels, const Histogram& h) {
    const std::string prefix = labels.empty() ? std::string() : std::string(labels) + ",";
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds().size(); ++i) {
      cumulative += h.counts()[i];
      sample(fmt::format("{}_bucket", name), fmt::format("{}le=\"{}\"", prefix, number(h.bounds()[i])),
             fmt::format("{}", cumulative));
    }
    cumulative += h.counts().back();
    sample(fmt::format("{}_bucket", name), fmt::format("{}le=\"+Inf\"", prefix), fmt::format("{}", cumulative));
    sample(fmt::format("{}_sum", name), labels, number(h.sum()));
    sample(fmt::format("{}_count", name), labels, fmt::format("{}", h.count()));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string label(std::string_view key, std::string_view value) {
  return fmt::format("{}=\"{}\"", key, escape_label_value(value));
}

}  // namespace

std::span<const double> admission_wait_buckets() {
  return kAdmissionWaitBuckets;
}

std::span<const double> decision_latency_buckets() {
  return kLatencyBuckets;
}

void Histogram::observe(double value) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);  // le: value ≤ bound
  ++counts_[static_cast<size_t>(it - bounds_.begin())];
  sum_ += value;
  ++count_;
}

namespace {

/// This thread's number in the process (0, 1, 2, ... in the order threads first check).
/// initial-exec: a fixed offset from the thread pointer, also inside libgov.so (no call to
/// __tls_get_addr on the hot path); constant-initialised, so no guard.
[[gnu::tls_model("initial-exec")]] thread_local uint32_t thread_number = UINT32_MAX;
std::atomic<uint32_t> next_thread_number{0};

}  // namespace

void CheckCounters::count(Admission::Verdict verdict) noexcept {
  uint32_t number = thread_number;
  if (number == UINT32_MAX) [[unlikely]] {
    number = next_thread_number.fetch_add(1, std::memory_order_relaxed);
    if (number == UINT32_MAX) number = UINT32_MAX - 1;  // never the "unset" value again
    thread_number = number;
  }
  const auto v = static_cast<size_t>(verdict);
  if (number < kSlots) [[likely]] {
    std::atomic<uint64_t>& slot = slots_[number].counts[v];  // this thread is its only writer
    slot.store(slot.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  overflow_.counts[v].fetch_add(1, std::memory_order_relaxed);
}

std::array<uint64_t, CheckCounters::kVerdicts> CheckCounters::totals() const noexcept {
  std::array<uint64_t, kVerdicts> sums{};
  for (const Slot& slot : slots_) {
    for (size_t v = 0; v < kVerdicts; ++v) sums[v] += slot.counts[v].load(std::memory_order_relaxed);
  }
  for (size_t v = 0; v < kVerdicts; ++v) sums[v] += overflow_.counts[v].load(std::memory_order_relaxed);
  return sums;
}

void StepCounters::record_one(const Decision& d, std::string_view preempting_team, bool still_live) {
  ++decisions_[static_cast<size_t>(d.outcome)];
  switch (d.outcome) {
    case Outcome::admitted: {
      auto team = teams_.find(d.team);
      if (team == teams_.end()) team = teams_.emplace(d.team, TeamCounters{}).first;
      ++team->second.admitted;
      // Kueue: from the workload's creation, or its last requeue, until its admission. A task
      // admitted by the step that submitted it has no entry: it waited for nothing.
      Time since = d.at;
      if (auto waiting = waiting_since_.find(d.task); waiting != waiting_since_.end()) {
        since = waiting->second;
        waiting_since_.erase(waiting);
      }
      team->second.wait.observe(static_cast<double>(std::max<Time>(0, d.at - since)) / 1000.0);
      return;
    }
    case Outcome::pending:
      waiting_since_.try_emplace(d.task, d.at);
      return;
    case Outcome::preempted: {
      auto team = teams_.find(d.team);
      if (team == teams_.end()) team = teams_.emplace(d.team, TeamCounters{}).first;
      ++team->second.evicted_preempted;
      waiting_since_.insert_or_assign(d.task, d.at);  // requeued: its wait starts again
      if (d.kind && !preempting_team.empty()) {
        auto by = teams_.find(preempting_team);
        if (by == teams_.end()) by = teams_.emplace(std::string(preempting_team), TeamCounters{}).first;
        ++by->second.preempting[static_cast<size_t>(*d.kind)];
      }
      return;
    }
    case Outcome::invalid:
      if (still_live) return;  // a duplicate submission of a live id: that task still waits
      waiting_since_.erase(d.task);
      return;
    case Outcome::rejected:
    case Outcome::finished:
    case Outcome::cancelled:
      waiting_since_.erase(d.task);
      return;
  }
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string write_metrics(const engine::Engine& core, const MetricsInputs& inputs) {
  const ir::Module& module = core.module();
  const Snapshot snapshot = core.snapshot(/*with_ended_tasks=*/false);
  const std::string cohort = module.cluster.empty() ? std::string("default") : module.cluster;
  Writer w;

  // ---------------------------------------------------------------- Kueue: ClusterQueue status
  struct TaskCounts {
    uint64_t active = 0;
    uint64_t inadmissible = 0;
    uint64_t admitted = 0;
  };
  std::vector<TaskCounts> per_team(module.teams.size());
  for (const TaskRow& row : snapshot.tasks) {
    const int32_t team = module.team_index(row.team);
    if (team < 0) continue;
    TaskCounts& counts = per_team[static_cast<size_t>(team)];
    if (row.state == TaskState::admitted) {
      ++counts.admitted;
    } else if (row.state == TaskState::pending) {
      ++(row.parked ? counts.inadmissible : counts.active);
    }
  }
  w.family("kueue_pending_workloads", "gauge",
           "The number of pending workloads, per 'cluster_queue' (team) and 'status' (active: in the queue; "
           "inadmissible: parked until the cohort changes)");
  for (size_t t = 0; t < module.teams.size(); ++t) {
    const std::string queue = label("cluster_queue", module.teams[t].name);
    w.sample("kueue_pending_workloads", queue + ",status=\"active\"", fmt::format("{}", per_team[t].active));
    w.sample("kueue_pending_workloads", queue + ",status=\"inadmissible\"", fmt::format("{}", per_team[t].inadmissible));
  }
  w.family("kueue_admitted_active_workloads", "gauge",
           "The number of admitted workloads that are active (not finished), per 'cluster_queue'");
  for (size_t t = 0; t < module.teams.size(); ++t) {
    w.sample("kueue_admitted_active_workloads", label("cluster_queue", module.teams[t].name),
             fmt::format("{}", per_team[t].admitted));
  }

  // Counters keep their series after a reload that removes a team (they only grow); sorted by
  // team so that the output is deterministic.
  std::map<std::string_view, const TeamCounters*> teams;
  if (inputs.steps != nullptr) {
    for (const auto& [name, counters] : inputs.steps->teams()) teams.emplace(name, &counters);
  }
  w.family("kueue_admitted_workloads_total", "counter", "The total number of admitted workloads per 'cluster_queue'");
  for (const auto& [name, counters] : teams) {
    if (counters->admitted > 0) {
      w.sample("kueue_admitted_workloads_total", label("cluster_queue", name), fmt::format("{}", counters->admitted));
    }
  }
  w.family("kueue_evicted_workloads_total", "counter",
           "The number of evicted workloads per 'cluster_queue' and 'reason' (gov evicts by preemption only: "
           "Preempted)");
  for (const auto& [name, counters] : teams) {
    if (counters->evicted_preempted > 0) {
      w.sample("kueue_evicted_workloads_total", label("cluster_queue", name) + ",reason=\"Preempted\"",
               fmt::format("{}", counters->evicted_preempted));
    }
  }
  w.family("kueue_preempted_workloads_total", "counter",
           "The number of preempted workloads per 'preempting_cluster_queue' and 'reason' (InClusterQueue, "
           "InCohortReclamation, InCohortFairSharing)");
  for (const auto& [name, counters] : teams) {
    for (size_t kind = 0; kind < counters->preempting.size(); ++kind) {
      if (counters->preempting[kind] == 0) continue;
      w.sample("kueue_preempted_workloads_total",
               label("preempting_cluster_queue", name) + "," + label("reason", preemption_reason(kind)),
               fmt::format("{}", counters->preempting[kind]));
    }
  }
  w.family("kueue_admission_wait_time_seconds", "histogram",
           "The time between a workload was created or requeued until admission, per 'cluster_queue'");
  for (const auto& [name, counters] : teams) {
    if (counters->wait.count() > 0) {
      w.histogram("kueue_admission_wait_time_seconds", label("cluster_queue", name), counters->wait);
    }
  }

  // ---------------------------------------------------------------- Kueue: quotas and usage
  struct QuotaRow {
    std::string labels;
    const UsageRow* usage;
    int64_t lending_limit;
  };
  std::vector<QuotaRow> rows;
  rows.reserve(snapshot.usage.size());
  for (const UsageRow& row : snapshot.usage) {
    int64_t lending = kUnlimited;
    const int32_t team = module.team_index(row.team);
    const int32_t flavor = module.flavor_index(row.flavor);
    if (team >= 0 && flavor >= 0) {
      for (const ir::FlavorQuota& quota : module.teams[static_cast<size_t>(team)].quotas) {
        if (quota.flavor != static_cast<uint32_t>(flavor)) continue;
        const int32_t partition = row.partition.empty() ? -1 : module.partition_index(row.partition);
        const size_t column = partition < 0 ? static_cast<size_t>(row.resource)
                                            : ir::index(ir::partition_column(static_cast<size_t>(partition)));
        lending = quota.lending_limit[column];
      }
    }
    // In a tree of cohorts a ClusterQueue's cohort is its team's (Kueue's `spec.cohortName`).
    const std::string& team_cohort =
        team >= 0 && module.teams[static_cast<size_t>(team)].cohort >= 0
            ? module.cohorts[static_cast<size_t>(module.teams[static_cast<size_t>(team)].cohort)].name
            : cohort;
    rows.push_back({label("cohort", team_cohort) + "," + label("cluster_queue", row.team) + "," + label("flavor", row.flavor) +
                        "," + label("resource", row.partition.empty() ? std::string(model::kubernetes_name(row.resource))
                                                                      : model::partition_resource_name(row.partition)),
                    &row, lending});
  }
  w.family("kueue_cluster_queue_resource_usage", "gauge",
           "The resource usage (admitted workloads) per 'cluster_queue', 'flavor' and 'resource' (devices, CPU "
           "cores, memory bytes)");
  for (const QuotaRow& row : rows) {
    w.sample("kueue_cluster_queue_resource_usage", row.labels,
             number(kubernetes_amount(row.usage->resource, row.usage->used)));
  }
  w.family("kueue_cluster_queue_nominal_quota", "gauge",
           "The nominal quota per 'cluster_queue', 'flavor' and 'resource'");
  for (const QuotaRow& row : rows) {
    w.sample("kueue_cluster_queue_nominal_quota", row.labels,
             number(kubernetes_amount(row.usage->resource, row.usage->nominal)));
  }
  w.family("kueue_cluster_queue_borrowing_limit", "gauge",
           "The borrowing limit per 'cluster_queue', 'flavor' and 'resource' (no series when unlimited)");
  for (const QuotaRow& row : rows) {
    if (row.usage->borrowing_limit == kUnlimited) continue;
    w.sample("kueue_cluster_queue_borrowing_limit", row.labels,
             number(kubernetes_amount(row.usage->resource, row.usage->borrowing_limit)));
  }
  w.family("kueue_cluster_queue_lending_limit", "gauge",
           "The lending limit per 'cluster_queue', 'flavor' and 'resource' (no series when unlimited)");
  for (const QuotaRow& row : rows) {
    if (row.lending_limit == kUnlimited) continue;
    w.sample("kueue_cluster_queue_lending_limit", row.labels,
             number(kubernetes_amount(row.usage->resource, row.lending_limit)));
  }
  if (module.settings.fair_sharing) {
    w.family("kueue_cluster_queue_weighted_share", "gauge",
             "The maximum over resources of the usage above nominal quota per 1000 lendable units in the cohort, "
             "divided by the fair-share weight, per 'cluster_queue' (9223372036854775807 for a borrowing team "
             "of weight 0)");
    for (size_t t = 0; t < module.teams.size(); ++t) {
      const double share = core.weighted_share(static_cast<uint32_t>(t));
      w.sample("kueue_cluster_queue_weighted_share", label("cluster_queue", module.teams[t].name),
               std::isinf(share) ? std::string("9223372036854775807") : number(share));
    }
  }

  // ---------------------------------------------------------------- gov's own
  if (inputs.policy != nullptr) {
    const PolicyInfo& policy = *inputs.policy;
    w.family("gov_policy_version_info", "gauge",
             "The policy version the engine runs (1), with its name, content hash and back end");
    w.sample("gov_policy_version_info",
             label("policy", policy.name) + "," + label("version", fmt::format("{}", policy.version)) + "," +
                 label("content_sha256", policy.content_sha256) + "," + label("back_end", policy.back_end),
             "1");
  }
  w.family("gov_policy_reloads_total", "counter", "Reloads that swapped in a new policy version");
  w.sample("gov_policy_reloads_total", "", fmt::format("{}", inputs.reloads));
  w.family("gov_policy_reload_failures_total", "counter",
           "Reloads that failed (the engine kept its version), the watcher's included");
  w.sample("gov_policy_reload_failures_total", "", fmt::format("{}", inputs.reload_failures));
  w.family("gov_engine_compactions_total", "counter",
           "Times the engine rebuilt its state from its live tasks to let go of ended ones");
  w.sample("gov_engine_compactions_total", "", fmt::format("{}", inputs.compactions));
  w.family("gov_checks_total", "counter", "Engine::check answers (the hot path) per 'verdict'");
  for (size_t v = 0; v < inputs.checks.size(); ++v) {
    w.sample("gov_checks_total", label("verdict", verdict_name(v)), fmt::format("{}", inputs.checks[v]));
  }
  if (inputs.steps != nullptr) {
    w.family("gov_decisions_total", "counter", "Decisions made by the engine's steps per 'outcome'");
    for (size_t o = 0; o < inputs.steps->decisions().size(); ++o) {
      w.sample("gov_decisions_total", label("outcome", outcome_name(static_cast<Outcome>(o))),
               fmt::format("{}", inputs.steps->decisions()[o]));
    }
    w.family("gov_decision_latency_seconds", "histogram",
             "How long one engine step (submit, finish, cancel, step, tick) took to decide, under the state lock");
    w.histogram("gov_decision_latency_seconds", "", inputs.steps->latency());
  }
  w.family("gov_decision_log_write_failures_total", "counter",
           "Steps whose decision-log lines could not be written to Options::decision_log_path");
  w.sample("gov_decision_log_write_failures_total", "", fmt::format("{}", inputs.decision_log_write_failures));
  w.family("gov_live_tasks", "gauge", "Tasks the engine holds (pending or admitted)");
  w.sample("gov_live_tasks", "", fmt::format("{}", core.live_tasks()));
  return w.take();
}

}  // namespace gov::embed
