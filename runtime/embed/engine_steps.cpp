// gov::Engine: running a step on the core, numbering it, remembering each task's latest
// decision and handing the step to on_step (engine_impl.hpp).
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "runtime/embed/engine_impl.hpp"

namespace gov {

Step Engine::Impl::run_step(Time at, std::span<const Event> events) {
  // Durations are added to the time: past kForever a finish time could wrap, and a task was
  // admitted and finished in one instant (a hostile-input trial's finding, through the C API).
  if (at > kForever) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the time {} ms is after the last one an engine takes ({} ms, kForever)", at, kForever));
  }
  std::unique_lock lock(state_mutex);
  refuse_past_max_tasks(events);
  if (at > core->now()) compact_if_due();  // between instants, as a restart is
  if (decision_log.enabled()) {
    for (const Event& event : events) {
      if (event.kind == Event::Kind::submit) decision_log.remember(event.task);
    }
  }
  buffer.clear();
  // The step's latency is one of the counted series: timed only when decisions are counted.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = options.count_decisions ? Clock::now() : Clock::time_point{};
  core->step(at, events, buffer);
  if (options.count_decisions) step_counters.observe_latency(std::chrono::duration<double>(Clock::now() - started).count());
  return publish(/*forced=*/0);
}

void Engine::Impl::refuse_past_max_tasks(std::span<const Event> events) const {
  const size_t bound = options.max_tasks == 0 ? Options::kDefaultMaxTasks : options.max_tasks;
  size_t submits = 0;
  const Task* first = nullptr;
  for (const Event& event : events) {
    if (event.kind != Event::Kind::submit) continue;
    if (first == nullptr) first = &event.task;
    ++submits;
  }
  const size_t live = core->live_tasks();
  if (submits == 0 || (live <= bound && submits <= bound - live)) return;
  throw Error(ErrorCode::limit,
              fmt::format("submit of task `{}` refused: the engine holds {} live task{} (pending or admitted) and "
                          "`max_tasks` is {}{}",
                          first->id, live, live == 1 ? "" : "s", bound,
                          submits > 1 ? fmt::format(" (the step submits {} tasks)", submits) : std::string()));
}

namespace {
/// The most decisions publish() reserves room for in the core's next buffer.
constexpr size_t kBufferReserve = 1024;
}  // namespace

Step Engine::Impl::publish(size_t forced) {
  Step step;
  step.sequence = ++sequence;
  step.version = policy->info.version;
  step.at = core->now();
  // The core's decisions are handed over whole: a Decision is large, and moving each one out
  // (and destroying what it left) cost as much as formatting it as JSON in a long replay.
  // The buffer keeps its room (up to a bound), as it did when it was reused: growing it one
  // decision at a time would move every decision again.
  const size_t room = std::min(buffer.capacity(), kBufferReserve);
  step.decisions.swap(buffer);
  buffer.reserve(room);
  for (size_t i = 0; i < step.decisions.size(); ++i) {
    Decision& decision = step.decisions[i];
    decision.version = step.version;
    decision.sequence = step.sequence;
    if (options.remember_decisions) remember(decision, i < forced);
  }
  // The counters ask about the state after the step (the core's, whatever `latest` keeps).
  if (options.count_decisions) step_counters.record(
      step,
      [this](std::string_view id) -> std::string_view {
        const std::optional<engine::Engine::TaskOfId> task = core->task_of_id(id);
        if (!task || task->team < 0) return {};
        return core->module().teams[static_cast<size_t>(task->team)].name;
      },
      [this](std::string_view id) {
        const std::optional<engine::Engine::TaskOfId> task = core->task_of_id(id);
        return task && task->live;
      });
  decision_log.write(step, policy->info);
  if (options.on_step) {
    try {
      options.on_step(step);
    } catch (...) {  // a listener's failure is not the engine's: documented as ignored
    }
  }
  return step;
}

void Engine::Impl::remember(const Decision& d, bool forced) {
  auto it = latest.find(d.task);
  if (it == latest.end()) {
    it = latest.emplace(d.task, d).first;
  } else {
    if (d.outcome == Outcome::invalid && !forced && embed::is_live(it->second.outcome)) return;
    it->second = d;
  }
  if (embed::is_live(d.outcome)) return;
  ended.emplace_back(d.task, d.sequence);
  while (ended.size() > options.remembered_ended_tasks) {
    auto& [id, seq] = ended.front();
    auto old = latest.find(id);
    if (old != latest.end() && !embed::is_live(old->second.outcome) && old->second.sequence == seq) latest.erase(old);
    ended.pop_front();
  }
}

void Engine::Impl::compact_if_due() {
  if (options.compact_after_ended_tasks == 0) return;
  const size_t live = core->live_tasks();
  const size_t ended_tasks = core->task_count() - live;
  if (ended_tasks <= options.compact_after_ended_tasks || ended_tasks <= 4 * live) return;
  // A scan to resume would be lost with the old core: the rebuilt one must decide as it would.
  if (core->holds_scan_progress()) return;
  auto next = std::make_unique<engine::Engine>(policy->runnable->module, *policy->runnable->evaluator, engine_options);
  if (!next->load_state(core->export_state()).empty()) return;  // never lose a task: keep the old core
  core = std::move(next);
  ++compactions;
}

}  // namespace gov
