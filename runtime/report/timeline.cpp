// Timeline: the HTML report's series in widening time buckets, wait histograms, preemptions,
// the worst waits.
#include "runtime/report/timeline.hpp"

#include <algorithm>
#include <limits>

namespace gov::report {

namespace {

constexpr size_t kKinds = 3;  // PreemptionKind

/// An amount of `resource` in display units (devices, vCPUs).
double display_amount(int64_t amount, Resource resource) {
  return resource == Resource::vcpu ? static_cast<double>(amount) / 1000.0 : static_cast<double>(amount);
}

/// p50, p95, p99 by nearest rank (the ⌈q·n⌉-th smallest), seconds; -1 when empty.
std::array<double, 3> percentiles_of(std::vector<uint64_t> waits) {
  std::array<double, 3> out{-1, -1, -1};
  if (waits.empty()) return out;
  const std::array<size_t, 3> per_hundred = {50, 95, 99};
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t rank = (waits.size() * per_hundred[i] + 99) / 100;  // 1-based
    std::nth_element(waits.begin(), waits.begin() + static_cast<std::ptrdiff_t>(rank - 1), waits.end());
    out[i] = static_cast<double>(waits[rank - 1]) / 1000.0;
  }
  return out;
}

bool worse(const WaitRow& a, const WaitRow& b) {
  if (a.wait != b.wait) return a.wait > b.wait;
  return a.task < b.task;
}

/// The heap order of the worst-waits heap: the least bad on top.
bool heap_less(const WaitRow& a, const WaitRow& b) {
  return worse(a, b);
}

}  // namespace

const std::vector<double>& wait_bins() {
  static const std::vector<double> bins = {0,    1,    2,    5,     10,    20,    30,    60,    120,   300,   600,
                                           1200, 1800, 3600, 7200,  14400, 28800, 43200, 86400, 172800, 604800};
  return bins;
}

Timeline::Timeline(ReportSetup setup) : setup_(std::move(setup)) {
  for (const QuotaInfo& quota : setup_.quotas) clock_.set_nominal(quota.team, quota.flavor, quota.resource, quota.nominal);
  for (const std::string& team : setup_.teams) team_index(team);
  for (const QuotaInfo& quota : setup_.quotas) flavor_index(quota.flavor);
  // Every team's quota is charted, also a team that runs nothing: its nominal quota is in the
  // "all teams" lines (which left out idle teams, overstating how full the cluster looked).
  for (const QuotaInfo& quota : setup_.quotas) {
    if (quota.nominal > 0) series_index(team_index(quota.team), flavor_index(quota.flavor));
  }
  for (const CapacityInfo& capacity : setup_.capacity) flavor_index(capacity.flavor);
}

size_t Timeline::team_index(const std::string& name) {
  auto [it, inserted] = team_slots_.try_emplace(name, teams_.size());
  if (inserted) {
    teams_.push_back(name);
    pending_.emplace_back(Buckets::kMaxBuckets, 0.0);
    pending_now_.push_back(0);
    pending_since_.push_back(buckets_.origin);
    waits_.emplace_back();
    preemptions_.emplace_back();
    for (std::vector<double>& kind : preemptions_.back()) kind.assign(Buckets::kMaxBuckets, 0.0);
    worst_per_team_.emplace_back();
  }
  return it->second;
}

size_t Timeline::flavor_index(const std::string& name) {
  auto [it, inserted] = flavor_slots_.try_emplace(name, flavors_.size());
  if (inserted) flavors_.push_back(name);
  return it->second;
}

size_t Timeline::series_index(size_t team, size_t flavor) {
  const uint64_t key = static_cast<uint64_t>(team) << 32 | flavor;
  auto [it, inserted] = series_slots_.try_emplace(key, series_.size());
  if (!inserted) return it->second;
  ReportData::Series series;
  series.team = team;
  series.flavor = flavor;
  series.own.assign(Buckets::kMaxBuckets, 0.0);
  series.borrowed.assign(Buckets::kMaxBuckets, 0.0);
  // The charted resource: the first of GPU, Neuron, vCPU the team has a quota of here.
  bool found = false;
  for (Resource r : {Resource::gpu, Resource::neuron, Resource::vcpu}) {
    for (const QuotaInfo& quota : setup_.quotas) {
      if (found || quota.resource != r || quota.nominal <= 0 || quota.team != teams_[team] ||
          quota.flavor != flavors_[flavor]) {
        continue;
      }
      series.resource = r;
      series.nominal = quota.nominal;
      series.borrowing_limit = quota.borrowing_limit;
      found = true;
    }
  }
  series_.push_back(std::move(series));
  return it->second;
}

template <typename F>
void Timeline::each_series(F f) {
  for (ReportData::Series& s : series_) {
    f(s.own);
    f(s.borrowed);
  }
  for (std::vector<double>& p : pending_) f(p);
  for (auto& kinds : preemptions_) {
    for (std::vector<double>& k : kinds) f(k);
  }
}

void Timeline::cover(Time at) {
  if (!buckets_.started) {
    buckets_.started = true;
    buckets_.origin = at >= 0 ? at / Buckets::kFirstWidth * Buckets::kFirstWidth : at;
    std::fill(pending_since_.begin(), pending_since_.end(), buckets_.origin);
  }
  at = std::max(at, buckets_.origin);
  while ((at - buckets_.origin) / buckets_.width >= static_cast<Time>(Buckets::kMaxBuckets)) {
    each_series([](std::vector<double>& s) {
      for (size_t i = 0; i < s.size() / 2; ++i) s[i] = s[2 * i] + s[2 * i + 1];
      std::fill(s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end(), 0.0);
    });
    buckets_.width *= 2;
    buckets_.count = (buckets_.count + 1) / 2;  // the buckets in use, merged in pairs (the charts ended late)
  }
  buckets_.count = std::max(buckets_.count, static_cast<size_t>((at - buckets_.origin) / buckets_.width) + 1);
}

void Timeline::charge(std::vector<double>& series, double amount, Time from, Time to) {
  if (amount == 0) return;
  from = std::max(from, buckets_.origin);
  while (from < to) {
    const auto bucket = static_cast<size_t>((from - buckets_.origin) / buckets_.width);
    if (bucket >= series.size()) return;  // beyond what was covered (not expected)
    const Time bucket_end = buckets_.origin + static_cast<Time>(bucket + 1) * buckets_.width;
    const Time until = std::min(to, bucket_end);
    series[bucket] += amount * static_cast<double>(until - from);
    from = until;
  }
}

void Timeline::set_pending(size_t team, int delta, Time at) {
  charge(pending_[team], static_cast<double>(pending_now_[team]), pending_since_[team], at);
  pending_now_[team] += delta;
  pending_since_[team] = at;
}

void Timeline::charge_usage(const std::string& team, const std::string& flavor, Time from, Time to,
                            const trace::ResourceArray& held, const trace::ResourceArray& borrowed) {
  ReportData::Series& series = series_[series_index(team_index(team), flavor_index(flavor))];
  const auto r = static_cast<size_t>(series.resource);
  charge(series.own, display_amount(held[r] - borrowed[r], series.resource), from, to);
  charge(series.borrowed, display_amount(borrowed[r], series.resource), from, to);
}

void Timeline::release(Live& task, Time at) {
  for (trace::Holding& h : task.holding) {
    for (int64_t& amount : h.amounts) amount = -amount;
    clock_.change(teams_[task.team], h.flavor, h.amounts, at,
                  [&](const std::string& team, const std::string& flavor, Time from, Time to,
                      const trace::ResourceArray& held, const trace::ResourceArray& borrowed) {
                    charge_usage(team, flavor, from, to, held, borrowed);
                  });
  }
  task.holding.clear();
}

void Timeline::keep_worst(WaitRow row) {
  if (row.wait <= 0) return;
  std::vector<WaitRow>& team = worst_per_team_[team_slots_.at(row.team)];
  if (team.size() < kWorstPerTeam || worse(row, team.back())) {
    team.push_back(row);
    std::sort(team.begin(), team.end(), worse);
    if (team.size() > kWorstPerTeam) team.pop_back();
  }
  if (worst_.size() < kWorstOverall) {
    worst_.push_back(std::move(row));
    std::push_heap(worst_.begin(), worst_.end(), heap_less);
  } else if (worse(row, worst_.front())) {
    std::pop_heap(worst_.begin(), worst_.end(), heap_less);
    worst_.back() = std::move(row);
    std::push_heap(worst_.begin(), worst_.end(), heap_less);
  }
}

void Timeline::add(const Decision& d) {
  cover(d.at);
  const size_t team = team_index(d.team);
  auto [it, inserted] = live_.try_emplace(d.task);
  Live& task = it->second;
  if (inserted) {
    task.team = team;
    task.waiting_since = d.at;
  }
  switch (d.outcome) {
    case Outcome::admitted: {
      release(task, d.at);
      if (task.pending) {
        task.pending = false;
        set_pending(task.team, -1, d.at);
      }
      const Time wait = std::max<Time>(0, d.at - task.waiting_since);
      waits_[task.team].push_back(static_cast<uint64_t>(wait));
      keep_worst({wait, d.task, teams_[task.team], task.waiting_since, d.at, task.reason, task.message});
      task.reason.clear();
      task.message.clear();
      task.holding = trace::holdings_of(d);
      for (const trace::Holding& h : task.holding) {
        series_index(task.team, flavor_index(h.flavor));  // charted from now on, even while nothing is charged
        clock_.change(teams_[task.team], h.flavor, h.amounts, d.at,
                      [&](const std::string& who, const std::string& where, Time from, Time to,
                          const trace::ResourceArray& held, const trace::ResourceArray& borrowed) {
                        charge_usage(who, where, from, to, held, borrowed);
                      });
      }
      return;
    }
    case Outcome::pending:
      if (!task.pending) {
        task.pending = true;
        set_pending(task.team, +1, d.at);
      }
      task.reason = d.reason ? std::string(reason_name(*d.reason)) : std::string();
      task.message = d.message;
      return;
    case Outcome::preempted: {
      release(task, d.at);
      task.waiting_since = d.at;  // requeued: the wait starts again
      if (d.kind) {
        const size_t bucket = static_cast<size_t>((d.at - buckets_.origin) / buckets_.width);
        std::vector<double>& kind = preemptions_[task.team][static_cast<size_t>(*d.kind)];
        if (bucket < kind.size()) kind[bucket] += 1;
      }
      return;
    }
    case Outcome::rejected:
    case Outcome::finished:
    case Outcome::cancelled:
    case Outcome::invalid:
      release(task, d.at);
      if (task.pending) set_pending(task.team, -1, d.at);
      live_.erase(it);
      return;
  }
}

ReportData Timeline::finish(Time end) {
  cover(end);
  for (auto& [id, task] : live_) {
    release(task, end);
    if (task.pending) {
      keep_worst({std::max<Time>(0, end - task.waiting_since), id, teams_[task.team], task.waiting_since, std::nullopt,
                  task.reason, task.message});
    }
  }
  for (size_t t = 0; t < teams_.size(); ++t) set_pending(t, 0, end);

  ReportData out;
  out.policy = setup_.policy;
  out.origin = buckets_.origin;
  out.width = buckets_.width;
  out.buckets = buckets_.count;
  out.end = end;
  out.teams = teams_;
  out.flavors = flavors_;
  // Sums of amount × ms to averages per bucket; the last bucket is as wide as it got.
  const auto average = [&](std::vector<double> sums) {
    sums.resize(buckets_.count);
    for (size_t b = 0; b < sums.size(); ++b) {
      const Time start = buckets_.origin + static_cast<Time>(b) * buckets_.width;
      const Time width = std::max<Time>(1, std::min(buckets_.width, end - start));
      sums[b] /= static_cast<double>(width);
    }
    return sums;
  };
  for (ReportData::Series& s : series_) {
    ReportData::Series series = s;
    series.own = average(s.own);
    series.borrowed = average(s.borrowed);
    out.usage.push_back(std::move(series));
  }
  for (const std::vector<double>& p : pending_) out.pending.push_back(average(p));
  const std::vector<double>& bins = wait_bins();
  for (const std::vector<uint64_t>& waits : waits_) {
    std::vector<uint64_t> histogram(bins.size() + 1, 0);
    for (uint64_t ms : waits) {
      const double seconds = static_cast<double>(ms) / 1000.0;
      const auto bin = static_cast<size_t>(std::lower_bound(bins.begin(), bins.end(), seconds) - bins.begin());
      ++histogram[bin];
    }
    out.waits.push_back(std::move(histogram));
    out.percentiles.push_back(percentiles_of(waits));
  }
  std::vector<uint64_t> all;
  for (const std::vector<uint64_t>& waits : waits_) all.insert(all.end(), waits.begin(), waits.end());
  out.percentiles_all = percentiles_of(std::move(all));
  for (size_t t = 0; t < preemptions_.size(); ++t) {
    for (size_t k = 0; k < kKinds; ++k) {
      for (size_t b = 0; b < buckets_.count; ++b) {
        const double n = preemptions_[t][k][b];
        if (n > 0) out.preemptions.push_back({t, b, k, static_cast<uint64_t>(n)});
      }
    }
  }
  for (const CapacityInfo& c : setup_.capacity) {
    out.capacity.push_back({flavor_slots_.at(c.flavor), c.resource, c.capacity});
  }
  std::vector<WaitRow> worst = worst_;
  for (const std::vector<WaitRow>& team : worst_per_team_) worst.insert(worst.end(), team.begin(), team.end());
  std::sort(worst.begin(), worst.end(), worse);
  worst.erase(std::unique(worst.begin(), worst.end(),
                          [](const WaitRow& a, const WaitRow& b) {
                            return a.task == b.task && a.submitted == b.submitted && a.wait == b.wait;
                          }),
              worst.end());
  out.worst = std::move(worst);
  return out;
}

}  // namespace gov::report
