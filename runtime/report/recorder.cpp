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

}  // namespace

UsageRow* Recorder::row(std::map<Key, UsageRow>& rows, int64_t day, const std::string& team,
                        const std::string& flavor) const {
  Key key{day, team, flavor};
  if (rows.size() >= kMaxUsageRows) {
    const auto found = rows.find(key);
    if (found != rows.end()) return &found->second;
    overflowed_ = true;
    return nullptr;
  }
  auto [it, inserted] = rows.try_emplace(std::move(key));
  if (inserted) {
    it->second.day = day;
    it->second.team = team;
    it->second.instance_type = flavor;
  }
  return &it->second;
}

int64_t Recorder::day_at(Time at) const { return day_of(model::checked_add(origin_, at)); }

void Recorder::charge(std::map<Key, UsageRow>& rows, const std::string& team, const std::string& flavor, Time from,
                      Time to, const trace::ResourceArray& held, const trace::ResourceArray& borrowed) const {
  for (int64_t day = day_at(from); from < to; ++day) {
    const Time day_end = model::checked_sub(model::checked_mul(day + 1, kDay), origin_);
    const Time until = std::min(to, day_end);
    const Time span = until - from;
    UsageRow* r = row(rows, day, team, flavor);
    if (r == nullptr) return;  // the report overflowed: its days past here are not kept
    for (size_t i = 0; i < kReportedResources.size(); ++i) {
      const auto resource = static_cast<size_t>(kReportedResources[i]);
      r->used[i] = model::checked_add(r->used[i], model::checked_mul(held[resource], span));
      r->borrowed[i] = model::checked_add(r->borrowed[i], model::checked_mul(borrowed[resource], span));
    }
    from = until;
  }
}

void Recorder::release(Live& task, Time at) {
  for (trace::Holding& h : task.holding) {
    for (int64_t& amount : h.amounts) amount = -amount;
    clock_.change(task.team, h.flavor, h.amounts, at,
                  [&](const std::string& team, const std::string& flavor, Time from, Time to,
                      const trace::ResourceArray& held, const trace::ResourceArray& borrowed) {
                    charge(rows_, team, flavor, from, to, held, borrowed);
                  });
  }
  task.holding.clear();
}

Recorder::Recorder(ReportSetup setup, bool timeline) {
  for (const QuotaInfo& quota : setup.quotas) clock_.set_nominal(quota.team, quota.flavor, quota.resource, quota.nominal);
  if (timeline) timeline_ = std::make_unique<Timeline>(std::move(setup));
}
Recorder::~Recorder() = default;
Recorder::Recorder(Recorder&&) noexcept = default;
Recorder& Recorder::operator=(Recorder&&) noexcept = default;

ReportData Recorder::report(std::optional<Time> end) {
  GOV_ASSERT(timeline_ != nullptr, "report() of a recorder made without a timeline");
  if (timeline_ == nullptr) return {};
  ReportData data = timeline_->finish(end.value_or(last_));
  data.epoch = origin_;
  return data;
}

void Recorder::add(const Decision& decision) {
  if (timeline_) timeline_->add(decision);
  last_ = std::max(last_, decision.at);
  auto [it, inserted] = live_.try_emplace(decision.task);
  Live& task = it->second;
  if (task.team.empty()) task.team = decision.team;  // new, or only its requested type noted
  switch (decision.outcome) {
    case Outcome::admitted:
      release(task, decision.at);  // an admission while admitted (not expected) restarts the interval
      task.flavor = decision.flavor;
      task.holding = trace::holdings_of(decision);
      for (const trace::Holding& h : task.holding) {
        clock_.change(task.team, h.flavor, h.amounts, decision.at,
                      [&](const std::string& team, const std::string& flavor, Time from, Time to,
                          const trace::ResourceArray& held, const trace::ResourceArray& borrowed) {
                        charge(rows_, team, flavor, from, to, held, borrowed);
                      });
      }
      if (UsageRow* r = row(rows_, day_at(decision.at), task.team, task.flavor)) ++r->admitted;
      return;
    case Outcome::pending:
      return;
    case Outcome::preempted:
      release(task, decision.at);
      if (UsageRow* r = row(rows_, day_at(decision.at), task.team, task.flavor)) ++r->preempted;
      return;
    case Outcome::finished:
      release(task, decision.at);
      if (UsageRow* r = row(rows_, day_at(decision.at), task.team, task.flavor)) ++r->finished;
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
  // The tasks pending at a horizon given at midnight count on the day it ends, the one holding its
  // last millisecond (an SRE helper's finding: `--until 86400` added a row for 1970-01-02).
  const int64_t last_day = end && *end > 0 ? day_at(*end - 1) : day_at(until);
  clock_.charge_until(until, [&](const std::string& team, const std::string& flavor, Time from, Time to,
                                 const trace::ResourceArray& held, const trace::ResourceArray& borrowed) {
    charge(rows, team, flavor, from, to, held, borrowed);
  });
  for (const auto& [id, task] : live_) {
    if (!task.holding.empty()) continue;
    if (UsageRow* r = row(rows, last_day, task.team, task.flavor)) ++r->pending_at_end;
  }
  std::vector<UsageRow> out;
  out.reserve(rows.size());
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace gov::report
