// Recorder: usage intervals from a decision stream, split at day boundaries.
#include "runtime/report/recorder.hpp"

#include <algorithm>

#include "compiler/model/arithmetic.hpp"
#include "compiler/support/assert.hpp"

namespace gov::report {

namespace {

constexpr Time kDay = 24 * 60 * 60 * 1000;

/// floor(at / kDay), also for times before 0.
int64_t day_of(Time at) {
  return at >= 0 ? at / kDay : -((-at + kDay - 1) / kDay);
}

std::array<int64_t, kReportedResources.size()> reported(const ResourceAmounts& amounts) {
  std::array<int64_t, kReportedResources.size()> out{};
  for (const ResourceAmount& a : amounts) {
    for (size_t i = 0; i < kReportedResources.size(); ++i) {
      if (a.resource == kReportedResources[i]) out[i] = model::checked_add(out[i], a.amount);
    }
  }
  return out;
}

}  // namespace

UsageRow& Recorder::row(std::map<Key, UsageRow>& rows, int64_t day, const std::string& team,
                        const std::string& flavor) {
  auto [it, inserted] = rows.try_emplace(Key{day, team, flavor});
  if (inserted) {
    it->second.day = day;
    it->second.team = team;
    it->second.instance_type = flavor;
  }
  return it->second;
}

int64_t Recorder::day_at(Time at) const { return day_of(model::checked_add(origin_, at)); }

void Recorder::charge(std::map<Key, UsageRow>& rows, const Live& task, Time from, Time to) const {
  for (int64_t day = day_at(from); from < to; ++day) {
    const Time day_end = model::checked_sub(model::checked_mul(day + 1, kDay), origin_);
    const Time until = std::min(to, day_end);
    const Time held = until - from;
    UsageRow& r = row(rows, day, task.team, task.flavor);
    for (size_t i = 0; i < kReportedResources.size(); ++i) {
      r.used[i] = model::checked_add(r.used[i], model::checked_mul(task.used[i], held));
      r.borrowed[i] = model::checked_add(r.borrowed[i], model::checked_mul(task.borrowed[i], held));
    }
    from = until;
  }
}

void Recorder::release(Live& task, Time at) {
  if (!task.held_since) return;
  if (at > *task.held_since) charge(rows_, task, *task.held_since, at);
  task.held_since.reset();
}

Recorder::Recorder(ReportSetup setup, bool timeline)
    : timeline_(timeline ? std::make_unique<Timeline>(std::move(setup)) : nullptr) {}
Recorder::~Recorder() = default;
Recorder::Recorder(Recorder&&) noexcept = default;
Recorder& Recorder::operator=(Recorder&&) noexcept = default;

ReportData Recorder::report(std::optional<Time> end) {
  GOV_ASSERT(timeline_ != nullptr, "report() of a recorder made without a timeline");
  if (timeline_ == nullptr) return {};
  return timeline_->finish(end.value_or(last_));
}

void Recorder::add(const Decision& decision) {
  if (timeline_) timeline_->add(decision);
  last_ = std::max(last_, decision.at);
  auto [it, inserted] = live_.try_emplace(decision.task);
  Live& task = it->second;
  if (inserted) task.team = decision.team;
  switch (decision.outcome) {
    case Outcome::admitted:
      release(task, decision.at);  // an admission while admitted (not expected) restarts the interval
      task.flavor = decision.flavor;
      task.held_since = decision.at;
      task.used = reported(decision.usage);
      task.borrowed = reported(decision.borrowed);
      ++row(rows_, day_at(decision.at), task.team, task.flavor).admitted;
      return;
    case Outcome::pending:
      return;
    case Outcome::preempted:
      release(task, decision.at);
      ++row(rows_, day_at(decision.at), task.team, task.flavor).preempted;
      return;
    case Outcome::finished:
      release(task, decision.at);
      ++row(rows_, day_at(decision.at), task.team, task.flavor).finished;
      live_.erase(it);
      return;
    case Outcome::invalid:  // traces have unique ids: a task that never ran, or one a reload ended
    case Outcome::rejected:
    case Outcome::cancelled:
      release(task, decision.at);
      live_.erase(it);
      return;
  }
}

std::vector<UsageRow> Recorder::usage(std::optional<Time> end) const {
  const Time until = end.value_or(last_);
  std::map<Key, UsageRow> rows = rows_;
  const int64_t last_day = day_at(until);
  for (const auto& [id, task] : live_) {
    if (task.held_since) {
      if (until > *task.held_since) charge(rows, task, *task.held_since, until);
      continue;
    }
    ++row(rows, last_day, task.team, task.flavor).pending_at_end;
  }
  std::vector<UsageRow> out;
  out.reserve(rows.size());
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace gov::report
