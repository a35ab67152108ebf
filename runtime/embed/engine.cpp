// gov::Engine: one gov::engine::Engine (single-threaded, bound to one compiled policy) behind a
// reader-writer lock, swapped for a new one bound to a new policy at a reload.
//
// Why this shape: the engine core mutates its state in place, so a state change needs the
// state exclusively, and a query needs it not to change under it — a reader-writer lock gives
// exactly that and no more (queries run in parallel; StateLock prefers writers). The compiled policy is immutable and
// shared (std::shared_ptr<const LoadedPolicy>); a reload compiles the new one with no lock on
// the state at all, then, holding the state exclusively, moves the live tasks into a new core
// bound to it and runs one admission pass: the swap is one critical section, so every call
// runs entirely on the version it started with.
//
// Carrying tasks over needs their specs, which the core keeps only resolved. `specs[i]` is
// the spec of the core's task i: every submit event adds exactly one task to the core, valid
// or not, and a reload loads the live ones in a known order (checked at every reload).
#include "gov/engine.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "compiler/diagnostics/assert.hpp"
#include "runtime/embed/convert.hpp"
#include "runtime/embed/policy_loader.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/store/store.hpp"
#include "runtime/trace/trace_reader.hpp"

namespace gov {

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
Error::~Error() = default;

namespace {

/// One compiled policy version as the engine runs it. Immutable.
struct LoadedPolicy {
  std::unique_ptr<embed::RunnablePolicy> runnable;
  PolicyInfo info;
  // The module's flavor and rule names, interned in the engine's name table: Admission hands
  // them out as string_views that outlive this version.
  std::vector<std::string_view> flavor_names;
  std::vector<std::string_view> rule_names;
};

ErrorCode error_code(embed::LoadError::Kind kind) {
  switch (kind) {
    case embed::LoadError::Kind::io: return ErrorCode::io;
    case embed::LoadError::Kind::policy: return ErrorCode::policy;
    case embed::LoadError::Kind::not_found: return ErrorCode::not_found;
    case embed::LoadError::Kind::store: return ErrorCode::store;
    case embed::LoadError::Kind::signature: return ErrorCode::store;  // a tampered or unsigned store
  }
  return ErrorCode::internal;
}

[[noreturn]] void throw_load_error(const embed::LoadError& error) {
  throw Error(error_code(error.kind), error.message);
}

/// Names handed out by Engine::check, kept for the engine's life (a reload may free the module
/// they came from). Only grows, by the distinct names of the versions loaded; nodes never move.
class NameTable {
 public:
  std::string_view intern(const std::string& name) {
    std::lock_guard lock(mutex_);
    return *names_.insert(name).first;
  }

 private:
  std::mutex mutex_;
  std::unordered_set<std::string> names_;
};

std::shared_ptr<const LoadedPolicy> loaded(std::unique_ptr<embed::RunnablePolicy> runnable, int64_t version,
                                           const std::string& source, NameTable& names) {
  auto policy = std::make_shared<LoadedPolicy>();
  for (const ir::Flavor& flavor : runnable->module.flavors) policy->flavor_names.push_back(names.intern(flavor.name));
  for (const ir::Rule& rule : runnable->module.rules) policy->rule_names.push_back(names.intern(rule.name));
  policy->info.name = runnable->name;
  policy->info.version = version;
  policy->info.content_sha256 = runnable->content_sha256;
  policy->info.back_end = std::string(runnable->evaluator->name());
  policy->info.cached_code = runnable->code == embed::CodeOrigin::cached;
  policy->info.source = source;
  policy->runnable = std::move(runnable);
  return policy;
}

/// The engine's state lock: a reader-writer lock that prefers writers. std::shared_mutex is
/// glibc's default rwlock, which prefers readers: threads asking check() without pause kept a
/// submit waiting for seconds (measured: 6 readers, 14 s worst case). Here a waiting writer
/// stops new readers, so state changes get in between queries. A SharedMutex for
/// std::shared_lock / std::unique_lock.
///
/// Re-entry: a thread that already holds this lock (an on_step callback runs under the step's
/// write lock) and asks for it again gets Error reentrant instead of a deadlock. glibc's rwlock
/// does not reliably refuse it: rdlock under one's own wrlock returned EDEADLK, which was once
/// ignored, and the unlock that followed released the step's write lock (a wedged engine).
/// Each thread keeps the locks it holds, so only a call back into the same engine is refused; a
/// callback may use other engines. Every pthread failure is an error, never ignored.
class StateLock {
 public:
  StateLock() {
    pthread_rwlockattr_t attributes;
    check(pthread_rwlockattr_init(&attributes), "initialise the state lock's attributes");
    const int kind = pthread_rwlockattr_setkind_np(&attributes, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    const int init = kind == 0 ? pthread_rwlock_init(&lock_, &attributes) : kind;
    pthread_rwlockattr_destroy(&attributes);
    check(init, "initialise the state lock");
  }
  ~StateLock() { pthread_rwlock_destroy(&lock_); }
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

  void lock() {
    refuse_reentry();
    check(pthread_rwlock_wrlock(&lock_), "take the engine's state lock");
    held().push_back(this);
  }
  bool try_lock() {
    refuse_reentry();
    const int result = pthread_rwlock_trywrlock(&lock_);
    if (result == EBUSY) return false;
    check(result, "take the engine's state lock");
    held().push_back(this);
    return true;
  }
  void unlock() { release(); }
  void lock_shared() {
    refuse_reentry();
    check(pthread_rwlock_rdlock(&lock_), "take the engine's state lock for reading");
    held().push_back(this);
  }
  bool try_lock_shared() {
    refuse_reentry();
    const int result = pthread_rwlock_tryrdlock(&lock_);
    if (result == EBUSY || result == EAGAIN) return false;
    check(result, "take the engine's state lock for reading");
    held().push_back(this);
    return true;
  }
  void unlock_shared() { release(); }

  /// Whether the calling thread holds this lock (shared or exclusive).
  bool held_by_this_thread() const {
    const std::vector<const StateLock*>& locks = held();
    return std::find(locks.begin(), locks.end(), this) != locks.end();
  }
  /// Throws Error reentrant when the calling thread holds this lock.
  void refuse_reentry() const {
    if (!held_by_this_thread()) return;
    throw Error(ErrorCode::reentrant,
                "the engine was called from its own on_step callback (the thread holds its state lock); "
                "copy the step and act on it after the callback returns");
  }

 private:
  /// The state locks the calling thread holds, innermost last: a handful at most (one per
  /// engine whose callback is running on this thread).
  static std::vector<const StateLock*>& held() {
    thread_local std::vector<const StateLock*> locks;
    return locks;
  }
  void release() {
    std::vector<const StateLock*>& locks = held();
    const auto it = std::find(locks.rbegin(), locks.rend(), this);
    GOV_ASSERT(it != locks.rend(), "state lock released by a thread that does not hold it");
    if (it != locks.rend()) locks.erase(std::next(it).base());
    // Unlocking a lock this thread holds fails only on a broken invariant; the callers are
    // destructors (no exception may leave them), so it is asserted, not thrown.
    [[maybe_unused]] const int result = pthread_rwlock_unlock(&lock_);
    GOV_ASSERT(result == 0, "pthread_rwlock_unlock failed on a held state lock");
  }
  static void check(int result, const char* what) {
    if (result == 0) return;
    if (result == ENOMEM) throw std::bad_alloc();
    throw Error(ErrorCode::internal, fmt::format("cannot {}: {}", what, std::strerror(result)));
  }

  pthread_rwlock_t lock_;
};

/// unordered_map<std::string, T> looked up by std::string_view without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename T>
using StringMap = std::unordered_map<std::string, T, StringHash, std::equal_to<>>;

bool is_terminal(Outcome outcome) { return !embed::is_live(outcome); }

/// An entry of engine::Engine::load_state's error list: "admitted[3]: unknown team `x`".
struct LoadFailure {
  bool admitted = false;
  size_t index = 0;
  std::string message;
};

std::optional<LoadFailure> parse_load_failure(std::string_view line) {
  LoadFailure failure;
  for (std::string_view list : {"admitted[", "pending["}) {
    if (line.substr(0, list.size()) != list) continue;
    failure.admitted = list == "admitted[";
    const size_t close = line.find("]: ", list.size());
    if (close == std::string_view::npos || close == list.size()) return std::nullopt;
    size_t index = 0;
    for (char c : line.substr(list.size(), close - list.size())) {
      if (c < '0' || c > '9') return std::nullopt;
      index = index * 10 + static_cast<size_t>(c - '0');
    }
    failure.index = index;
    failure.message = std::string(line.substr(close + 3));
    return failure;
  }
  return std::nullopt;
}

}  // namespace

struct Engine::Impl {
  explicit Impl(Options opts) : options(std::move(opts)) {
    back_end = options.back_end == Options::BackEnd::jit ? embed::BackEnd::jit : embed::BackEnd::interpreter;
    engine_options.dialect =
        options.dialect == Options::Dialect::head ? engine::MessageDialect::head : engine::MessageDialect::kueue_v0_9;
  }
  ~Impl() { stop_watching(); }

  NameTable names;  // first: it outlives every policy

  // ---------------------------------------------------------------- configuration (immutable)
  Options options;
  embed::BackEnd back_end = embed::BackEnd::jit;
  engine::EngineOptions engine_options;
  bool from_store = false;
  embed::VerifyOptions verify;  // from options.verify_key_path and require_signature
  std::string path;         // the store or the policy file
  std::string policy_name;  // in the store

  // ---------------------------------------------------------------- state (state_mutex)
  mutable StateLock state_mutex;
  std::shared_ptr<const LoadedPolicy> policy;
  std::unique_ptr<engine::Engine> core;  // bound to *policy
  std::vector<engine::TaskSpec> specs;   // specs[i]: the spec of the core's task i
  StringMap<Decision> latest;            // the latest decision about each id
  std::deque<std::pair<std::string, uint64_t>> ended;  // ended ids, oldest first, with the step
  uint64_t sequence = 0;
  std::vector<engine::Decision> buffer;  // reused by every step
  std::atomic<int64_t> version{0};

  // ---------------------------------------------------------------- reloads (reload_mutex)
  std::mutex reload_mutex;
  std::optional<store::Store> db;  // store::Store is single-threaded: only under reload_mutex

  // ---------------------------------------------------------------- watcher (watch_mutex)
  std::mutex watch_mutex;
  std::condition_variable watch_wakeup;
  std::thread watcher;
  std::chrono::milliseconds watch_interval{1000};
  bool watch_stop = false;

  void install(std::shared_ptr<const LoadedPolicy> first) {
    std::unique_lock lock(state_mutex);
    core = std::make_unique<engine::Engine>(first->runnable->module, *first->runnable->evaluator, engine_options);
    version.store(first->info.version);
    policy = std::move(first);
  }

  // ---------------------------------------------------------------- steps

  Step run_step(Time at, std::vector<engine::Event>& events) {
    std::unique_lock lock(state_mutex);
    refuse_past_max_tasks(events);
    for (engine::Event& event : events) {
      if (event.kind == engine::Event::Kind::submit) specs.push_back(event.task);
    }
    buffer.clear();
    core->step(at, events, buffer);
    return publish(/*forced=*/0);
  }

  /// Throws Error limit, before anything changes, when the step's submits would take the live
  /// tasks past Options::max_tasks. Caller holds state_mutex exclusively.
  void refuse_past_max_tasks(const std::vector<engine::Event>& events) const {
    const size_t bound = options.max_tasks == 0 ? Options::kDefaultMaxTasks : options.max_tasks;
    size_t submits = 0;
    const engine::TaskSpec* first = nullptr;
    for (const engine::Event& event : events) {
      if (event.kind != engine::Event::Kind::submit) continue;
      if (first == nullptr) first = &event.task;
      ++submits;
    }
    const size_t live = core->live_tasks();
    if (submits == 0 || (live <= bound && submits <= bound - live)) return;
    throw Error(ErrorCode::limit,
                fmt::format("submit of task `{}` refused: the engine holds {} live tasks (pending or admitted) and "
                            "`max_tasks` is {}{}",
                            first->id, live, bound,
                            submits > 1 ? fmt::format(" (the step submits {} tasks)", submits) : std::string()));
  }

  /// Turns `buffer` into the next step: numbers it, remembers each task's latest decision and
  /// hands it to on_step. The first `forced` decisions replace the latest decision of a live
  /// task (a reload's `invalid`s); otherwise an `invalid` about a live id is a duplicate
  /// submission and leaves the live task's record alone. Caller holds state_mutex exclusively.
  Step publish(size_t forced) {
    Step step;
    step.sequence = ++sequence;
    step.version = policy->info.version;
    step.at = core->now();
    step.decisions.reserve(buffer.size());
    for (size_t i = 0; i < buffer.size(); ++i) {
      step.decisions.push_back(embed::from_engine(std::move(buffer[i]), step.version, step.sequence));
      remember(step.decisions.back(), i < forced);
    }
    buffer.clear();
    if (options.on_step) {
      try {
        options.on_step(step);
      } catch (...) {  // a listener's failure is not the engine's: documented as ignored
      }
    }
    return step;
  }

  void remember(const Decision& d, bool forced) {
    auto it = latest.find(d.task);
    if (it == latest.end()) {
      it = latest.emplace(d.task, d).first;
    } else {
      if (d.outcome == Outcome::invalid && !forced && embed::is_live(it->second.outcome)) return;
      it->second = d;
    }
    if (!is_terminal(d.outcome)) return;
    ended.emplace_back(d.task, d.sequence);
    while (ended.size() > options.remembered_ended_tasks) {
      auto& [id, seq] = ended.front();
      auto old = latest.find(id);
      if (old != latest.end() && is_terminal(old->second.outcome) && old->second.sequence == seq) latest.erase(old);
      ended.pop_front();
    }
  }

  // ---------------------------------------------------------------- reloads

  /// The next policy to run, or nullptr when `number` (absent: the active version, or the
  /// file's current content) is what runs already. Caller holds reload_mutex.
  std::shared_ptr<const LoadedPolicy> load_next(std::optional<int64_t> number) {
    if (from_store) {
      if (!number) {
        auto active = db->active(policy_name);
        if (!active.ok()) {
          throw Error(active.error().kind == store::ErrorKind::not_found ? ErrorCode::not_found : ErrorCode::store,
                      active.error().message);
        }
        number = active.value().number;
      }
      if (*number == version.load()) return nullptr;
      embed::LoadResult next = embed::load_store_version(*db, policy_name, number, back_end, verify);
      if (!next.ok()) throw_load_error(*next.error);
      return loaded(std::move(next.policy), *number, path, names);
    }
    if (number) throw Error(ErrorCode::invalid_argument, "an engine compiled from a file has no stored versions to reload");
    embed::CheckedPolicy checked = embed::check_file(path, /*require_cluster=*/true);
    std::string sha;
    {
      std::shared_lock lock(state_mutex);
      sha = policy->info.content_sha256;
    }
    if (!checked.program.read_failed && checked.ok() && embed::content_sha256(checked) == sha) return nullptr;
    embed::LoadResult next = embed::runnable_from(std::move(checked), path, back_end);
    if (!next.ok()) throw_load_error(*next.error);
    return loaded(std::move(next.policy), version.load() + 1, path, names);
  }

  Step reload(std::optional<int64_t> number) {
    state_mutex.refuse_reentry();  // before reload_mutex: a watcher's on_step holds both
    std::lock_guard reload_lock(reload_mutex);
    std::shared_ptr<const LoadedPolicy> next = load_next(number);
    if (!next) {
      Step nothing;
      nothing.version = version.load();
      return nothing;
    }
    auto next_core = std::make_unique<engine::Engine>(next->runnable->module, *next->runnable->evaluator, engine_options);
    std::unique_ptr<engine::Engine> old_core;
    std::shared_ptr<const LoadedPolicy> old_policy;
    Step step;
    {
      std::unique_lock lock(state_mutex);
      std::vector<engine::TaskSpec> next_specs = carry_tasks(*next_core, next->info.version);
      const size_t dropped = buffer.size();
      next_core->step(core->now(), {}, buffer);  // the new quotas and rules, at once
      old_core = std::exchange(core, std::move(next_core));
      old_policy = std::exchange(policy, std::move(next));
      specs = std::move(next_specs);
      version.store(policy->info.version);
      step = publish(dropped);
    }
    old_core.reset();  // before its policy, outside the lock: unloading native code takes time
    old_policy.reset();
    return step;
  }

  /// Loads the live tasks of `core` into `next` (admitted ones in the order they were admitted,
  /// holding their quota as they are; pending ones in the order they came). Puts an `invalid`
  /// decision into `buffer` for each task the new version cannot hold, and returns the specs of
  /// `next`'s tasks. Caller holds state_mutex exclusively.
  std::vector<engine::TaskSpec> carry_tasks(engine::Engine& next, int64_t next_version) {
    const engine::Snapshot snapshot = core->snapshot();
    if (snapshot.tasks.size() != specs.size()) {
      throw Error(ErrorCode::internal, fmt::format("the engine holds {} tasks but {} were submitted", snapshot.tasks.size(),
                                                   specs.size()));
    }
    std::vector<size_t> admitted;
    std::vector<size_t> pending;
    for (size_t i = 0; i < snapshot.tasks.size(); ++i) {
      const engine::TaskRow& row = snapshot.tasks[i];
      if (row.id != specs[i].id) throw Error(ErrorCode::internal, "the engine's tasks and their specs are out of step");
      if (row.state == engine::TaskState::admitted) admitted.push_back(i);
      if (row.state == engine::TaskState::pending) pending.push_back(i);
    }
    std::stable_sort(admitted.begin(), admitted.end(), [&](size_t a, size_t b) {
      return *snapshot.tasks[a].admitted_at < *snapshot.tasks[b].admitted_at;
    });
    engine::ClusterState state;
    state.at = core->now();
    for (size_t i : admitted) {
      const engine::TaskRow& row = snapshot.tasks[i];
      state.admitted.push_back({specs[i], row.submitted_at, *row.admitted_at, row.flavor});
    }
    for (size_t i : pending) state.pending.push_back({specs[i], snapshot.tasks[i].submitted_at});

    std::vector<bool> failed_admitted(admitted.size()), failed_pending(pending.size());
    buffer.clear();
    for (const std::string& line : next.load_state(state)) {
      std::optional<LoadFailure> failure = parse_load_failure(line);
      const size_t limit = failure && failure->admitted ? admitted.size() : pending.size();
      if (!failure || failure->index >= limit) throw Error(ErrorCode::internal, "unexpected load error: " + line);
      (failure->admitted ? failed_admitted : failed_pending)[failure->index] = true;
      const engine::TaskRow& row = snapshot.tasks[(failure->admitted ? admitted : pending)[failure->index]];
      engine::Decision decision;
      decision.at = core->now();
      decision.task = row.id;
      decision.team = row.team;
      decision.outcome = engine::Outcome::invalid;
      decision.message = fmt::format("the task cannot continue under policy version {}: {}", next_version, failure->message);
      buffer.push_back(std::move(decision));
    }
    std::vector<engine::TaskSpec> next_specs;
    for (size_t k = 0; k < admitted.size(); ++k)
      if (!failed_admitted[k]) next_specs.push_back(specs[admitted[k]]);
    for (size_t k = 0; k < pending.size(); ++k)
      if (!failed_pending[k]) next_specs.push_back(specs[pending[k]]);
    return next_specs;
  }

  // ---------------------------------------------------------------- watcher

  void watch_loop() {
    std::unique_lock lock(watch_mutex);
    std::string last_failure;  // a failing version is reported once, not at every poll
    while (!watch_stop) {
      watch_wakeup.wait_for(lock, watch_interval, [this] { return watch_stop; });
      if (watch_stop) break;
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

  void report_reload_error(const Error& error, std::string& last_failure) {
    if (error.what() == last_failure) return;
    last_failure = error.what();
    if (!options.on_reload_error) return;
    try {
      options.on_reload_error(error);
    } catch (...) {  // documented as ignored
    }
  }

  void stop_watching() {
    {
      std::lock_guard lock(watch_mutex);
      watch_stop = true;
    }
    watch_wakeup.notify_all();
    if (watcher.joinable()) watcher.join();
  }
};

// ------------------------------------------------------------------ opening

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

Engine Engine::open_store(const std::string& db_path, Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->from_store = true;
  impl->path = db_path;
  impl->verify.require_signature = impl->options.require_signature;
  if (!impl->options.verify_key_path.empty()) {
    auto key = signing::load_public_key(impl->options.verify_key_path);
    if (!key.ok()) {
      throw Error(key.error().kind == store::ErrorKind::io ? ErrorCode::io : ErrorCode::invalid_argument,
                  key.error().message);
    }
    impl->verify.key = key.value();
  }
  store::OpenOptions open_options;
  open_options.create = false;
  open_options.read_only = true;
  auto db = store::Store::open(db_path, open_options);
  if (!db.ok()) {
    throw Error(db.error().kind == store::ErrorKind::not_found ? ErrorCode::not_found : ErrorCode::store,
                fmt::format("store `{}`: {}", db_path, db.error().message));
  }
  impl->db = std::move(db.value());
  embed::LoadError error;
  std::optional<std::string> name = embed::resolve_policy_name(*impl->db, impl->options.policy, error);
  if (!name) throw_load_error(error);
  impl->policy_name = *name;
  embed::LoadResult first =
      embed::load_store_version(*impl->db, impl->policy_name, std::nullopt, impl->back_end, impl->verify);
  if (!first.ok()) throw_load_error(*first.error);
  const int64_t number = first.policy->version;
  impl->install(loaded(std::move(first.policy), number, db_path, impl->names));
  return Engine(std::move(impl));
}

Engine Engine::compile_file(const std::string& path, Options options) {
  if (options.require_signature) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("policy file `{}`: signatures are checked on stored versions; a file engine cannot "
                            "require one (open a store signed with `gov apply --sign-key`)",
                            path));
  }
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->path = path;
  embed::LoadResult first = embed::load_file(path, impl->back_end);
  if (!first.ok()) throw_load_error(*first.error);
  impl->install(loaded(std::move(first.policy), /*version=*/1, path, impl->names));
  return Engine(std::move(impl));
}

// ------------------------------------------------------------------ state changes

namespace {

std::optional<Decision> with_outcome(const Step& step, std::string_view id, Outcome outcome) {
  const Decision* d = step.find(id);
  if (d == nullptr || d->outcome != outcome) return std::nullopt;
  return *d;
}

}  // namespace

Decision Engine::submit(const Task& task, Time at, Step* step) {
  std::vector<engine::Event> events;
  events.push_back(engine::Event::submit(embed::to_engine(task)));
  Step s = impl_->run_step(at, events);
  const Decision* own = s.find(task.id);
  if (own == nullptr) throw Error(ErrorCode::internal, fmt::format("no decision for submitted task `{}`", task.id));
  Decision decision = *own;
  if (step) *step = std::move(s);
  return decision;
}

std::optional<Decision> Engine::finish(std::string_view id, Time at, Step* step) {
  std::vector<engine::Event> events;
  events.push_back(engine::Event::finish(std::string(id)));
  Step s = impl_->run_step(at, events);
  std::optional<Decision> decision = with_outcome(s, id, Outcome::finished);
  if (!decision) decision = with_outcome(s, id, Outcome::cancelled);  // it was pending
  if (step) *step = std::move(s);
  return decision;
}

std::optional<Decision> Engine::cancel(std::string_view id, Time at, Step* step) {
  std::vector<engine::Event> events;
  events.push_back(engine::Event::cancel(std::string(id)));
  Step s = impl_->run_step(at, events);
  std::optional<Decision> decision = with_outcome(s, id, Outcome::cancelled);
  if (step) *step = std::move(s);
  return decision;
}

Step Engine::step(Time at, const std::vector<Event>& events) {
  std::vector<engine::Event> converted;
  converted.reserve(events.size());
  for (const Event& e : events) {
    switch (e.kind) {
      case Event::Kind::submit: converted.push_back(engine::Event::submit(embed::to_engine(e.task))); break;
      case Event::Kind::finish: converted.push_back(engine::Event::finish(e.id)); break;
      case Event::Kind::cancel: converted.push_back(engine::Event::cancel(e.id)); break;
    }
  }
  return impl_->run_step(at, converted);
}

Step Engine::tick(Time at) {
  std::vector<engine::Event> none;
  return impl_->run_step(at, none);
}

// ------------------------------------------------------------------ queries

std::optional<Decision> Engine::decision(std::string_view id) const {
  std::shared_lock lock(impl_->state_mutex);
  auto it = impl_->latest.find(id);
  if (it == impl_->latest.end()) return std::nullopt;
  return it->second;
}

std::optional<Explanation> Engine::explain(std::string_view id) const {
  std::shared_lock lock(impl_->state_mutex);
  std::optional<engine::Explanation> explanation = impl_->core->explain(id);
  if (!explanation) return std::nullopt;
  return embed::from_engine(std::move(*explanation), impl_->policy->info.version);
}

namespace {

/// `task` as the engine's spec, in per-thread storage reused call after call: assigning
/// strings and vectors reuses their capacity, so a steady stream of checks allocates nothing.
const engine::TaskSpec& scratch_spec(const Task& task) {
  thread_local engine::TaskSpec spec;
  spec.id = task.id;
  spec.team = task.team;
  spec.priority = task.priority;
  spec.instance_type = task.instance_type;
  spec.instances = task.instances;
  spec.amounts = task.amounts;
  spec.pods = task.pods;
  spec.labels = task.labels;
  spec.duration = task.duration;
  return spec;
}

Admission::Verdict verdict_of(engine::AdmissionCheck::Verdict verdict) {
  switch (verdict) {
    case engine::AdmissionCheck::Verdict::admit: return Admission::Verdict::admit;
    case engine::AdmissionCheck::Verdict::reject: return Admission::Verdict::reject;
    case engine::AdmissionCheck::Verdict::pending: return Admission::Verdict::pending;
    case engine::AdmissionCheck::Verdict::invalid: return Admission::Verdict::invalid;
  }
  return Admission::Verdict::invalid;
}

/// The public form of a check's result under `policy` against the state after step `sequence`.
Admission admission_of(const engine::AdmissionCheck& result, const LoadedPolicy& policy, uint64_t sequence) {
  Admission out;
  out.verdict = verdict_of(result.verdict);
  if (result.flavor >= 0) out.flavor = policy.flavor_names[static_cast<size_t>(result.flavor)];
  out.borrows = result.borrows;
  if (result.rule >= 0) out.rule = policy.rule_names[static_cast<size_t>(result.rule)];
  out.warnings = result.warnings;
  out.priority = result.priority;
  out.version = policy.info.version;
  out.sequence = sequence;
  return out;
}

}  // namespace

Admission Engine::check(const Task& task) const {
  const engine::TaskSpec& spec = scratch_spec(task);
  std::shared_lock lock(impl_->state_mutex);
  return admission_of(impl_->core->check_admission(spec), *impl_->policy, impl_->sequence);
}

// ------------------------------------------------------------------ prepared tasks

struct PreparedTask::State {
  Task task;
  int64_t version = 0;
  /// The policy it was prepared under; weak, so a prepared task does not keep an old version's
  /// code alive. Compared by owner (the control block stays while this refers to it, so no other
  /// policy can have its address).
  std::weak_ptr<const LoadedPolicy> policy;
  engine::PreparedTask prepared;
};

PreparedTask::PreparedTask() = default;
PreparedTask::~PreparedTask() = default;
PreparedTask::PreparedTask(const PreparedTask&) = default;
PreparedTask& PreparedTask::operator=(const PreparedTask&) = default;

const Task& PreparedTask::task() const {
  static const Task empty;
  return state_ ? state_->task : empty;
}

int64_t PreparedTask::version() const {
  return state_ ? state_->version : 0;
}

PreparedTask Engine::prepare(const Task& task) const {
  auto state = std::make_shared<PreparedTask::State>();
  state->task = task;
  const engine::TaskSpec spec = embed::to_engine(task);
  {
    std::shared_lock lock(impl_->state_mutex);
    state->prepared = impl_->core->prepare(spec);
    state->version = impl_->policy->info.version;
    state->policy = impl_->policy;
  }
  PreparedTask out;
  out.state_ = std::move(state);
  return out;
}

Admission Engine::check(const PreparedTask& task) const {
  if (!task.state_) {
    std::shared_lock lock(impl_->state_mutex);
    Admission invalid;
    invalid.version = impl_->policy->info.version;
    invalid.sequence = impl_->sequence;
    return invalid;
  }
  const PreparedTask::State& state = *task.state_;
  {
    std::shared_lock lock(impl_->state_mutex);
    const std::shared_ptr<const LoadedPolicy>& running = impl_->policy;
    const bool same_policy = !state.policy.owner_before(running) && !running.owner_before(state.policy);
    if (same_policy) return admission_of(impl_->core->check_admission(state.prepared), *running, impl_->sequence);
  }
  return check(state.task);  // prepared under another version: resolve again
}

Snapshot Engine::snapshot() const {
  std::shared_lock lock(impl_->state_mutex);
  const engine::Snapshot state = impl_->core->snapshot();
  Snapshot out;
  out.version = impl_->policy->info.version;
  out.sequence = impl_->sequence;
  out.at = state.at;
  for (const engine::UsageRow& row : state.usage) out.usage.push_back(embed::from_engine(row));
  for (const engine::CohortRow& row : state.cohort) out.cohort.push_back(embed::from_engine(row));
  for (const engine::TaskRow& row : state.tasks) {
    if (row.state == engine::TaskState::pending || row.state == engine::TaskState::admitted)
      out.tasks.push_back(embed::from_engine(row));
  }
  return out;
}

PolicyInfo Engine::policy() const {
  std::shared_lock lock(impl_->state_mutex);
  return impl_->policy->info;
}

int64_t Engine::version() const noexcept {
  return impl_->version.load();
}

Time Engine::now() const {
  std::shared_lock lock(impl_->state_mutex);
  return impl_->core->now();
}

// ------------------------------------------------------------------ reloads

Step Engine::reload() {
  return impl_->reload(std::nullopt);
}

Step Engine::reload(int64_t version) {
  return impl_->reload(version);
}

void Engine::watch(std::chrono::milliseconds interval) {
  impl_->state_mutex.refuse_reentry();
  std::lock_guard lock(impl_->watch_mutex);
  impl_->watch_interval = std::max(interval, std::chrono::milliseconds(1));
  if (impl_->watcher.joinable()) {
    impl_->watch_wakeup.notify_all();
    return;
  }
  impl_->watch_stop = false;
  try {
    impl_->watcher = std::thread([impl = impl_.get()] { impl->watch_loop(); });
  } catch (const std::system_error& e) {  // the API throws gov::Error only
    throw Error(ErrorCode::internal, std::string("cannot start the watcher thread: ") + e.what());
  }
}

void Engine::stop_watching() {
  impl_->state_mutex.refuse_reentry();  // joining a watcher that waits for this lock would hang
  impl_->stop_watching();
}

// ------------------------------------------------------------------ traces

std::vector<TimedEvent> read_trace(const Engine& engine, std::string_view json) {
  std::shared_ptr<const LoadedPolicy> policy;
  {
    std::shared_lock lock(engine.impl_->state_mutex);
    policy = engine.impl_->policy;
  }
  trace::JsonLimits limits;
  limits.max_bytes = size_t{1} << 30;
  trace::TraceResult result = trace::read_trace(json, policy->runnable->module, limits);
  if (!result.ok()) throw Error(ErrorCode::invalid_argument, result.error->message);
  std::vector<TimedEvent> events;
  events.reserve(result.events.size());
  for (trace::TraceEvent& e : result.events) {
    switch (e.kind) {
      case trace::EventKind::submit: events.push_back({e.at, Event::submit(embed::from_engine(e.task))}); break;
      case trace::EventKind::finish: events.push_back({e.at, Event::finish(std::move(e.id))}); break;
      case trace::EventKind::cancel: events.push_back({e.at, Event::cancel(std::move(e.id))}); break;
    }
  }
  return events;
}

}  // namespace gov
