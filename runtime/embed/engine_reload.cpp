// gov::Engine: reloads (a new version swapped in, the live tasks carried over) and the
// watcher thread that polls for them, or on PostgreSQL listens for them (engine_impl.hpp).
#include <fmt/format.h>
#include <system_error>

#include "runtime/embed/engine_impl.hpp"

namespace gov {

void Engine::Impl::refuse_replaced_store() const {
  if (std::optional<std::string> why = db->replaced()) {
    throw Error(ErrorCode::store,
                fmt::format("store `{}` was replaced under this engine ({}): it keeps version {}; restart it to read "
                            "the store now at the path (docs/store.md, \"Backup and restore\")",
                            store::display_location(path), *why, version.load()));
  }
}

std::shared_ptr<const embed::LoadedPolicy> Engine::Impl::load_next(std::optional<int64_t> number) {
  if (from_store) {
    refuse_replaced_store();
    if (!number) {
      auto active = db->active(policy_name);
      if (!active.ok()) {
        throw Error(active.error().kind == store::ErrorKind::not_found ? ErrorCode::not_found : ErrorCode::store,
                    active.error().message);
      }
      number = active.value().number;
    }
    if (*number == version.load()) return nullptr;
    driver::Result next = driver::load(driver::Source::stored(*db, policy_name, number, verify),
                                       driver::Request::running(back_end));
    if (!next.ok()) embed::throw_load_error(*next.error);
    return embed::loaded(std::move(next.policy), *number, path, names);
  }
  if (number) throw Error(ErrorCode::invalid_argument, "an engine compiled from a file has no stored versions to reload");
  driver::Request request = driver::Request::running(back_end);
  {
    std::shared_lock lock(state_mutex);
    request.unless_content_sha256 = policy->info.content_sha256;
  }
  driver::Result next = driver::load(driver::Source::file(path, options.policy_root), request);
  if (!next.ok()) embed::throw_load_error(*next.error);
  if (next.policy->unchanged) return nullptr;
  return embed::loaded(std::move(next.policy), version.load() + 1, path, names);
}

Step Engine::Impl::reload(std::optional<int64_t> number) {
  state_mutex.refuse_reentry();  // before reload_mutex: a watcher's on_step holds both
  std::lock_guard reload_lock(reload_mutex);
  std::shared_ptr<const embed::LoadedPolicy> next;
  try {
    next = load_next(number);
  } catch (const Error& error) {  // counted for gov_policy_reload_failures_total, kept, rethrown
    reload_failures.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(last_reload_error_mutex);
    last_reload_error = error;
    throw;
  } catch (const std::bad_alloc&) {
    reload_failures.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(last_reload_error_mutex);
    last_reload_error = Error(ErrorCode::out_of_memory, "out of memory while reloading");
    throw;
  } catch (const std::exception& e) {
    reload_failures.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(last_reload_error_mutex);
    last_reload_error = Error(ErrorCode::internal, e.what());
    throw;
  }
  {
    std::lock_guard lock(last_reload_error_mutex);
    last_reload_error.reset();
  }
  if (!next) {
    Step nothing;
    nothing.version = version.load();
    return nothing;
  }
  auto next_core = std::make_unique<engine::Engine>(next->runnable->module, *next->runnable->evaluator, engine_options);
  std::unique_ptr<engine::Engine> old_core;
  std::shared_ptr<const embed::LoadedPolicy> old_policy;
  Step step;
  {
    std::unique_lock lock(state_mutex);
    carry_tasks(*next_core, next->info.version);
    const size_t dropped = buffer.size();
    next_core->step(core->now(), {}, buffer);  // the new quotas and rules, at once
    old_core = std::exchange(core, std::move(next_core));
    old_policy = std::exchange(policy, std::move(next));
    version.store(policy->info.version);
    step = publish(dropped);
  }
  reloads.fetch_add(1, std::memory_order_relaxed);
  old_core.reset();  // before its policy, outside the lock: unloading native code takes time
  old_policy.reset();
  return step;
}

void Engine::Impl::carry_tasks(engine::Engine& next, int64_t next_version) {
  ClusterState state = core->export_state();
  // A new version decides every pending task afresh, as before states carried what a restart
  // needs: parked heads compete again under the new quotas, each pending task gets the new
  // version's decision, and (as before) warnings of the old version's rules are not carried.
  for (PendingTask& task : state.pending) {
    task.reason.reset();
    task.message.clear();
    task.parked = false;
    task.warnings.clear();
  }
  for (AdmittedTask& task : state.admitted) task.warnings.clear();
  buffer.clear();
  for (LoadFailure& failure : next.load_state(state)) {
    const bool admitted = failure.list == LoadFailure::List::admitted;
    const Task& task = admitted ? state.admitted.at(failure.index).task : state.pending.at(failure.index).task;
    Decision decision;
    decision.at = core->now();
    decision.task = task.id;
    decision.team = task.team;
    decision.outcome = Outcome::invalid;
    decision.message =
        fmt::format("the task cannot continue under policy version {}: {}", next_version, failure.message);
    buffer.push_back(std::move(decision));
  }
}

namespace {
/// The engine whose watcher the calling thread is, or null.
thread_local const Engine::Impl* watching_engine = nullptr;
}  // namespace

bool Engine::Impl::on_watcher_thread() const { return watching_engine == this; }

void Engine::Impl::watch_loop() {
  watching_engine = this;
  if (feed) {
    listen_loop();
    return;
  }
  std::unique_lock lock(watch_mutex);
  std::string last_failure;  // a failing version is reported once, not at every poll
  while (!watch_stop) {
    watch_wakeup.wait_for(lock, watch_interval, [this] { return watch_stop || watch_retimed; });
    if (watch_stop) break;
    if (std::exchange(watch_retimed, false)) continue;  // wait again, for the new interval
    if (pinned.load()) continue;  // Engine::pin: stay on the pinned version
    lock.unlock();
    try {
      reload(std::nullopt);
      last_failure.clear();
    } catch (const Error& error) {
      report_reload_error(error, last_failure);
    } catch (const std::bad_alloc&) {
      report_reload_error(Error(ErrorCode::out_of_memory, "out of memory while reloading"), last_failure);
    } catch (const std::exception& e) {
      report_reload_error(Error(ErrorCode::internal, e.what()), last_failure);
    }
    lock.lock();
  }
}

void Engine::Impl::listen_loop() {
  std::string last_failure;
  bool look = true;      // at the start: what was applied before the feed listened
  // A change came while pinned, or a reload failed (a server away, a version that does not
  // load): looked at again when the next wait ends, notification or not, until it succeeds.
  bool missed = false;
  for (;;) {
    std::chrono::milliseconds interval;
    {
      std::lock_guard lock(watch_mutex);
      if (watch_stop) break;
      interval = watch_interval;
    }
    if (look && pinned.load()) missed = true;
    if (look && !pinned.load()) {
      missed = false;
      try {
        reload(std::nullopt);
        last_failure.clear();
      } catch (const Error& error) {
        missed = true;
        report_reload_error(error, last_failure);
      } catch (const std::bad_alloc&) {
        missed = true;
        report_reload_error(Error(ErrorCode::out_of_memory, "out of memory while reloading"), last_failure);
      } catch (const std::exception& e) {
        missed = true;
        report_reload_error(Error(ErrorCode::internal, e.what()), last_failure);
      }
    }
    // The interval bounds one wait only: nothing is read when it passes without a notification.
    auto changed = feed->wait(std::max(interval, std::chrono::milliseconds(1000)));
    if (!changed.ok()) {
      report_reload_error(Error(ErrorCode::store, changed.error().message), last_failure);
      look = false;
      continue;
    }
    look = changed.value() || (missed && !pinned.load());
  }
}

void Engine::Impl::report_reload_error(const Error& error, std::string& last_failure) {
  {
    std::lock_guard lock(last_reload_error_mutex);  // also a feed's failure, which is no reload
    last_reload_error = error;
  }
  if (error.what() == last_failure) return;
  last_failure = error.what();
  if (!options.on_reload_error) return;
  try {
    options.on_reload_error(error);
  } catch (...) {  // documented as ignored
  }
}

void Engine::Impl::stop_watching() {
  {
    std::lock_guard lock(watch_mutex);
    watch_stop = true;
  }
  watch_wakeup.notify_all();
  if (feed) feed->interrupt();
  if (watcher.joinable()) watcher.join();
  feed.reset();
}

// ------------------------------------------------------------------ reloads

Step Engine::reload() {
  return impl_->reload(std::nullopt);
}

Step Engine::reload(int64_t version) {
  return impl_->reload(version);
}

Step Engine::pin(int64_t version) {
  // Pinned first, so that a watcher's poll between the load and the flag cannot move off it.
  const bool was_pinned = impl_->pinned.exchange(true);
  try {
    return impl_->reload(version);
  } catch (...) {
    impl_->pinned = was_pinned;
    throw;
  }
}

void Engine::unpin() { impl_->pinned = false; }

bool Engine::pinned() const { return impl_->pinned.load(); }

std::optional<Error> Engine::last_reload_error() const {
  std::lock_guard lock(impl_->last_reload_error_mutex);
  return impl_->last_reload_error;
}

void Engine::watch(std::chrono::milliseconds interval) {
  impl_->state_mutex.refuse_reentry();
  // The watcher's own on_reload_error only retimes it (the thread runs), without the control
  // lock: a stop in progress holds that lock while it joins this very thread.
  std::unique_lock control(impl_->watch_control_mutex, std::defer_lock);
  if (!impl_->on_watcher_thread()) control.lock();
  std::lock_guard lock(impl_->watch_mutex);
  // At most a year: the wait's deadline is taken in nanoseconds from now, and a longer interval
  // (milliseconds::max(), Go's math.MaxInt64) wrapped it into the past, so the watcher polled
  // without pause.
  impl_->watch_interval = std::clamp(interval, std::chrono::milliseconds(1), Impl::kLongestWatchInterval);
  if (impl_->watcher.joinable()) {
    impl_->watch_retimed = true;
    impl_->watch_wakeup.notify_all();
    return;
  }
  impl_->watch_stop = false;
  if (impl_->from_store && !impl_->feed) {  // PostgreSQL: listen instead of polling
    std::lock_guard reload_lock(impl_->reload_mutex);
    auto feed = impl_->db->changes(impl_->policy_name);
    if (!feed.ok()) throw Error(ErrorCode::store, feed.error().message);
    impl_->feed = std::move(feed.value());
  }
  try {
    impl_->watcher = std::thread([impl = impl_.get()] { impl->watch_loop(); });
  } catch (const std::system_error& e) {  // the API throws gov::Error only
    throw Error(ErrorCode::internal, std::string("cannot start the watcher thread: ") + e.what());
  }
}

void Engine::stop_watching() {
  impl_->state_mutex.refuse_reentry();  // joining a watcher that waits for this lock would hang
  // From the watcher's own on_reload_error: the watcher would join itself.
  if (impl_->on_watcher_thread()) {
    throw Error(ErrorCode::reentrant, "stop_watching was called from the engine's own watcher (its on_reload_error "
                                      "callback); stop it after the callback returns");
  }
  std::lock_guard control(impl_->watch_control_mutex);
  impl_->stop_watching();
}

}  // namespace gov
