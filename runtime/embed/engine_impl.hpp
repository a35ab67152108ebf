// gov::Engine's insides, shared by its translation units: engine.cpp (opening, state changes,
// queries), engine_steps.cpp (numbering and publishing steps), engine_reload.cpp (reloads and
// the watcher). Internal; not installed.
//
// The shape: one gov::engine::Engine (single-threaded, bound to one compiled policy) behind a
// reader-writer lock (state_lock.hpp), swapped for a new one bound to a new policy at a reload.
// A state change needs the state exclusively and a query needs it not to change under it; the
// compiled policy is immutable and shared (std::shared_ptr<const LoadedPolicy>); a reload
// compiles the new one with no lock on the state, then, holding the state exclusively, moves
// the live tasks into a new core (`next.load_state(current.export_state())`) and runs one
// admission pass: every call runs entirely on the version it started with.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gov/engine.hpp"
#include "compiler/driver/driver.hpp"
#include "runtime/embed/decision_log.hpp"
#include "runtime/embed/metrics.hpp"
#include "runtime/embed/state_lock.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/store/store.hpp"

namespace gov::embed {


ErrorCode error_code(support::ErrorKind kind);

[[noreturn]] void throw_load_error(const driver::Error& error);

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

/// One compiled policy version as the engine runs it. Immutable.
struct LoadedPolicy {
  std::unique_ptr<driver::Policy> runnable;
  PolicyInfo info;
  // The module's flavor and rule names, interned in the engine's name table: Admission hands
  // them out as string_views that outlive this version.
  std::vector<std::string_view> flavor_names;
  std::vector<std::string_view> rule_names;
  std::shared_ptr<const NameTable> names;  // what those views point into
};

std::shared_ptr<const LoadedPolicy> loaded(std::unique_ptr<driver::Policy> runnable, int64_t version,
                                           const std::string& source, const std::shared_ptr<NameTable>& names);


/// unordered_map<std::string, T> looked up by std::string_view without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename T>
using StringMap = std::unordered_map<std::string, T, StringHash, std::equal_to<>>;

bool is_live(Outcome outcome);

}  // namespace gov::embed

namespace gov {

struct Engine::Impl {
  explicit Impl(Options opts) : options(std::move(opts)), decision_log(options) {
    back_end = options.back_end == Options::BackEnd::jit ? driver::BackEnd::jit : driver::BackEnd::interpreter;
    engine_options.dialect =
        options.dialect == Options::Dialect::head ? engine::MessageDialect::head : engine::MessageDialect::kueue_v0_9;
  }
  ~Impl() { stop_watching(); }

  /// Shared with the engines fresh() makes and the policies loaded: it outlives them all.
  std::shared_ptr<embed::NameTable> names = std::make_shared<embed::NameTable>();

  // ---------------------------------------------------------------- configuration (immutable)
  Options options;
  driver::BackEnd back_end = driver::BackEnd::jit;
  engine::EngineOptions engine_options;
  bool from_store = false;
  driver::VerifyOptions verify;  // from options.verify_key_path and require_signature
  std::string path;         // the store or the policy file
  std::string policy_name;  // in the store

  // ---------------------------------------------------------------- state (state_mutex)
  mutable embed::StateLock state_mutex;
  std::shared_ptr<const embed::LoadedPolicy> policy;
  std::unique_ptr<engine::Engine> core;  // bound to *policy
  embed::StringMap<Decision> latest;            // the latest decision about each id
  std::deque<std::pair<std::string, uint64_t>> ended;  // ended ids, oldest first, with the step
  uint64_t sequence = 0;
  std::vector<Decision> buffer;  // the decisions of the step being made (publish hands them over)
  std::atomic<int64_t> version{0};

  // ---------------------------------------------------------------- metrics (metrics.hpp)
  embed::CheckCounters checks;        // no lock: counted on the hot path
  embed::StepCounters step_counters;  // state_mutex, like the steps it counts
  std::atomic<uint64_t> reloads{0};
  std::atomic<uint64_t> reload_failures{0};
  mutable std::mutex last_reload_error_mutex;
  std::optional<Error> last_reload_error;  // last_reload_error_mutex
  uint64_t compactions = 0;  // state_mutex: compact_if_due's rebuilds
  embed::DecisionLog decision_log;  // state_mutex; after `options`, which it is made from

  // ---------------------------------------------------------------- reloads (reload_mutex)
  std::mutex reload_mutex;
  std::optional<store::Store> db;  // store::Store is single-threaded: only under reload_mutex
  /// Throws Error store when another file is at the store's path, or none (under reload_mutex).
  void refuse_replaced_store() const;

  // ---------------------------------------------------------------- watcher (watch_mutex)
  /// Held by Engine::watch and Engine::stop_watching throughout, the join included: a stop joins
  /// the watcher it stopped, and no watch() restarts the thread meanwhile (a controller
  /// developer's finding, session 41: two stoppers and a watch() left both stoppers joining a
  /// restarted watcher forever, or joining one thread twice). Taken before watch_mutex; never by
  /// the watcher itself.
  std::mutex watch_control_mutex;
  /// Whether the calling thread is this engine's watcher (in its on_reload_error callback).
  bool on_watcher_thread() const;
  std::mutex watch_mutex;
  std::condition_variable watch_wakeup;
  std::thread watcher;
  std::chrono::milliseconds watch_interval{1000};
  static constexpr std::chrono::milliseconds kLongestWatchInterval{365LL * 24 * 3600 * 1000};
  bool watch_stop = false;
  bool watch_retimed = false;  // watch() changed the interval: the wait in progress starts again
  std::atomic<bool> pinned{false};  // Engine::pin: the watcher leaves the version alone
  /// PostgreSQL's LISTEN for the watcher instead of polling (store::Store::changes); null for
  /// SQLite. Made by watch() before the thread starts, used by it alone, interrupted by
  /// stop_watching() and dropped after the join.
  std::unique_ptr<store::ChangeFeed> feed;

  void install(std::shared_ptr<const embed::LoadedPolicy> first) {
    std::unique_lock lock(state_mutex);
    core = std::make_unique<engine::Engine>(first->runnable->module, *first->runnable->evaluator, engine_options);
    version.store(first->info.version);
    policy = std::move(first);
  }

  // ---------------------------------------------------------------- steps

  Step run_step(Time at, std::span<const Event> events);

  /// Throws Error limit, before anything changes, when the step's submits would take the live
  /// tasks past Options::max_tasks. Caller holds state_mutex exclusively.
  void refuse_past_max_tasks(std::span<const Event> events) const;

  /// Turns `buffer` into the next step: numbers it, remembers each task's latest decision and
  /// hands it to on_step. The first `forced` decisions replace the latest decision of a live
  /// task (a reload's `invalid`s); otherwise an `invalid` about a live id is a duplicate
  /// submission and leaves the live task's record alone. Caller holds state_mutex exclusively.
  Step publish(size_t forced);

  void remember(const Decision& d, bool forced);

  /// The core keeps a record of every task it has seen (its queues and candidate lists refer
  /// to tasks by index), so a long-running engine grew by about half a kilobyte per task
  /// submitted, and scrapes, snapshots and exports walked them all. When the ended tasks
  /// outnumber both Options::compact_after_ended_tasks and four times the live ones, the core is rebuilt from its
  /// live tasks as a restart does (export_state into a fresh core of the same policy, which
  /// decides on byte-identically: tests/embed/restart_test.cpp): O(live tasks), amortised
  /// over at least as many ended ones. Called before a step at a later time than the core's, as
  /// a restart happens between instants (a state does not carry who was preempted at the
  /// current one). Nothing is rebuilt if any task would not load. Caller holds state_mutex
  /// exclusively.
  void compact_if_due();

  // ---------------------------------------------------------------- reloads

  /// The next policy to run, or nullptr when `number` (absent: the active version, or the
  /// file's current content) is what runs already. Caller holds reload_mutex.
  std::shared_ptr<const embed::LoadedPolicy> load_next(std::optional<int64_t> number);

  Step reload(std::optional<int64_t> number);

  /// Loads the live tasks of `core` into `next` (Engine::export_state: admitted ones in the
  /// order they were admitted, holding their quota as they are; pending ones by their
  /// queue-order times) and puts an `invalid` decision into `buffer` for each task the new version cannot
  /// hold. Caller holds state_mutex exclusively.
  void carry_tasks(engine::Engine& next, int64_t next_version);

  // ---------------------------------------------------------------- watcher

  void watch_loop();
  /// watch_loop on a change feed: reloads when it reports a change (or a reconnect), never on a
  /// timer.
  void listen_loop();

  void report_reload_error(const Error& error, std::string& last_failure);

  void stop_watching();
};

}  // namespace gov
