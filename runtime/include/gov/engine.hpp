// gov::Engine: the embedding API for controllers. Open a policy (a store's active version with
// its cached native code, or a source file), feed it task events, read its decisions, and
// reload new policy versions while other threads keep deciding. docs/embedding.md.
//
// Thread-safety (every member function): an Engine may be used from any number of threads at
// once. State changes (submit, finish, cancel, step, tick, reload) are serialised: each is one
// step with its own sequence number, and runs entirely on one policy version. Queries
// (decision, explain, snapshot, policy, now) run in parallel with each other and see the state
// between two steps. The compiled policy is immutable and is swapped atomically by a reload:
// calls in flight finish on the version they started with.
//
// Errors: functions that can fail throw gov::Error (see its codes) and leave the engine as it
// was; task mistakes are not errors but `invalid` or `rejected` decisions. A call from the
// engine's own on_step is Error reentrant; a submit past Options::max_tasks is Error limit.
// Besides gov::Error only std::bad_alloc escapes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gov/export.h"
#include "gov/types.hpp"

namespace gov {

/// How an Engine is opened.
struct Options {
  /// In a store with several policies, which one (empty: the store's only policy).
  std::string policy;
  /// compile_file: the directory the policy's imports must stay under (docs/language.md,
  /// `import`). Empty: the nearest ancestor of the file holding a `gov.toml`, else the
  /// repository top (`.git`), else the file's own directory.
  std::string policy_root;
  /// `jit`: native code (the store's cached object when it matches this machine, else compiled
  /// once); falls back to the interpreter, with PolicyInfo::back_end saying so, where LLVM
  /// cannot be used. `interpreter`: the reference interpreter.
  enum class BackEnd : std::uint8_t { jit, interpreter } back_end = BackEnd::jit;
  /// The wording of messages: Kueue at HEAD, or the Kueue v0.9 of early HyperPod clusters.
  enum class Dialect : std::uint8_t { head, kueue_v0_9 } dialect = Dialect::head;
  /// Called with every step, in sequence order, while the engine's state lock is held (so the
  /// stream it sees is exactly the engine's order). It must be quick and must not call back
  /// into the engine: such a call throws Error reentrant (the engine stays usable); copy what
  /// you need and hand it to another thread.
  /// Exceptions it throws are caught and ignored. Steps of the watcher's reloads arrive only here.
  std::function<void(const Step&)> on_step;
  /// Called (on the watcher's thread) when a reload by the watcher fails; the engine keeps
  /// running on the version it has. Each distinct failure is reported once (the watcher keeps
  /// polling and reports again when the failure changes). It runs outside the state lock: it
  /// may call the engine, except stop_watching() (Error reentrant: it would join its own thread).
  std::function<void(const Error&)> on_reload_error;
  /// How many ended tasks (finished, cancelled, rejected, invalid) decision() still remembers;
  /// the oldest are forgotten first. Live tasks are always remembered.
  std::size_t remembered_ended_tasks = 65536;
  /// Whether decision() answers: every decision of every step is then copied into a map by task
  /// id. A batch replay that never asks (`gov simulate`) turns it off and saves that copy and
  /// the map (about a sixth of the CPU of a long replay); decision() then always answers
  /// nullopt. Metrics and the decision log do not depend on it.
  bool remember_decisions = true;
  /// Whether metrics() counts the steps' decisions: gov_decisions_total, the step latency
  /// histogram and Kueue's admitted, evicted and preempted counters and admission wait
  /// histograms, which take a map update by task id per decision. A batch replay that prints
  /// no metrics (`gov simulate` without --metrics) turns it off and saves about 4% of its CPU;
  /// metrics() then has no samples in those families (and no gov_decisions_total at all).
  bool count_decisions = true;
  /// A store engine: the Ed25519 public key file (`gov keygen`'s PREFIX.pub) that stored
  /// versions must be signed with. Only with it does the store's cached native code run (when
  /// the version's and the object's signatures verify); without it every version is compiled
  /// from its sources. A signature that does not verify with it is refused (ErrorCode::store).
  std::string verify_key_path;
  /// Refuse a version that is not signed by the verify key (and refuse to open without one).
  /// An engine compiled from a file has nothing to verify: it refuses to open with this set.
  bool require_signature = false;
  /// The most live tasks (pending or admitted) the engine holds; each takes about 1.5 KB, so
  /// the default bounds the engine near 1.5 GB. A step whose submits would take the engine past
  /// it is refused as a whole (Error limit, naming the bound) and changes nothing; finishes in
  /// the same step are not counted as making room. 0: the default.
  static constexpr std::size_t kDefaultMaxTasks = 1'000'000;
  std::size_t max_tasks = kDefaultMaxTasks;
  /// The engine keeps a record of every task it has seen until it rebuilds its state from its
  /// live tasks, as a restart does (the decisions go on byte-identically): before a step at a
  /// later time, when the ended tasks it holds outnumber both this and four times the live ones
  /// (gov_engine_compactions_total counts them; docs/embedding.md, "Memory"). A rebuild costs
  /// O(live tasks) under the state lock. 0: never (the records then go only at a reload).
  std::size_t compact_after_ended_tasks = 65536;

  /// The decision log (docs/observability.md): every decision as one JSON line (no newline) —
  /// the decision stream's object with `policy`, `policy_version`, `policy_sha256`, `sequence`
  /// and the task's `labels` appended — in sequence order, while the state lock is held (the
  /// rules of on_step apply: quick, no call back into the engine; exceptions are ignored).
  std::function<void(std::string_view line)> on_decision_log;
  /// The same lines appended to this file (created with mode 0600 when missing), one write and
  /// flush per step. Opening fails with Error io; a failed write is counted
  /// (gov_decision_log_write_failures_total) and the engine goes on.
  std::string decision_log_path;
  /// Label values the log must not show: the values of these keys are written as "***"; the
  /// key "*" masks every value. Keys stay visible.
  std::vector<std::string> decision_log_masked_labels;
  /// Whether log lines carry the task's labels at all.
  bool decision_log_labels = true;
};

class Engine;

/// A task resolved once (names to indices, labels to the ids rules compare) for repeated
/// checks: what a controller keeps per workload (Engine::prepare). Checking it costs no name
/// lookup and no copy of the task. It stays usable across reloads: under another version than
/// the one that prepared it, check() resolves the task again (as check(Task) does; prepare it
/// again to get the fast path back). Copyable; immutable, so any number of threads may share
/// one. A default-constructed one checks as `invalid`.
class GOV_API PreparedTask {
 public:
  PreparedTask();
  ~PreparedTask();
  PreparedTask(const PreparedTask& other);
  PreparedTask& operator=(const PreparedTask& other);
  /// The task as given to prepare() (an empty Task when default-constructed).
  const Task& task() const;
  /// The policy version it was prepared under (0 when default-constructed).
  std::int64_t version() const;

  struct State;  // opaque

 private:
  friend class Engine;
  std::shared_ptr<const State> state_;
};

/// Reads a trace (docs/interfaces.md "Trace file") into events, checked against the engine's
/// current policy (teams, classes and instance types exist, times never go back, ids unique).
/// Throws Error invalid_argument naming the event and field of the first problem. Thread-safe.
GOV_API std::vector<TimedEvent> read_trace(const Engine& engine, std::string_view json);

/// An admission engine running one compiled policy at a time. Move-only; a moved-from Engine
/// may only be destroyed or assigned to. Destroying an Engine stops its watcher; it must not
/// be destroyed while other threads still call it.
class GOV_API Engine {
 public:
  /// Opens the store at `db_path` (read-only) and loads the active version of
  /// `options.policy`: its sources are checked again, and its cached native code is loaded
  /// when Options::verify_key_path is set and the signatures verify (compiled otherwise). Throws Error: not_found (no
  /// store, policy or version), store (the store failed), policy (the stored version no longer
  /// checks with this gov).
  static Engine open_store(const std::string& db_path, Options options = {});
  /// Loads, checks and compiles the policy file at `path` (with its imports). Throws Error:
  /// io (unreadable), policy (errors; the message holds the rendered diagnostics).
  static Engine compile_file(const std::string& path, Options options = {});

  /// A new engine running the same compiled policy version as this one (shared, not compiled
  /// again), with the same options and no tasks; its reloads follow the same store or file.
  /// Cheap: a fork point for what-if runs (with export_state / load_state) and a clean slate per
  /// test. Throws Error store when a store engine's store cannot be opened again, or was replaced
  /// under this engine (another file, or none, at its path).
  Engine fresh() const;

  Engine(Engine&& other) noexcept;
  Engine& operator=(Engine&& other) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

  /// Submits a task at `at` and runs admission until nothing changes. Returns the task's last
  /// decision of the step (admitted, pending, rejected or invalid); when `step` is given it
  /// receives every decision of the step, including the preemptions the task caused.
  /// An earlier `at` than the engine's time is taken as the engine's time.
  Decision submit(const Task& task, Time at, Step* step = nullptr);
  /// Finishes an admitted task at `at` (its quota is freed and waiting tasks may be admitted);
  /// a pending task is cancelled instead. Returns its `finished` (or `cancelled`) decision, or
  /// nullopt when no live task has that id.
  std::optional<Decision> finish(std::string_view id, Time at, Step* step = nullptr);
  /// Cancels a pending or admitted task. Returns its `cancelled` decision, or nullopt when no
  /// live task has that id.
  std::optional<Decision> cancel(std::string_view id, Time at, Step* step = nullptr);
  /// Every time these calls take (step, tick, submit, finish, cancel) is at most kForever, else
  /// Error invalid_argument (times add durations).
  /// Applies several events at one time, in order, then runs admission until nothing changes:
  /// `gov simulate` applies a trace's events of one instant this way (cycle control: the
  /// events compete together instead of one after the other).
  Step step(Time at, const std::vector<Event>& events);
  /// Advances the engine's time to `at`: duration-based finishes due by then happen, each
  /// instant followed by admission. tick(kForever) runs every remaining finish. (step(at, …)
  /// applies the finishes due at `at` together with its events, before admission.)
  Step tick(Time at);
  /// When the next duration-based finish is due (the earliest task admitted with a duration
  /// that is still running), or nullopt when none is. tick(*next_finish()) runs exactly that
  /// instant, as tick(kForever) would among the others: `gov simulate` drains the finishes
  /// after a trace's last event one instant per Step this way, so that no Step holds them all.
  std::optional<Time> next_finish();

  /// Loads a cluster's state into an engine that has no tasks yet (right after opening it): what
  /// a controller that restarts does. Admitted tasks hold their quota as given (no quota check,
  /// no rules: a real cluster may be over quota), pending tasks queue with their submission
  /// times and compete at the next step (nothing is decided until then; decision() knows none
  /// of them). Returns one LoadFailure per entry that could not be loaded (unknown team, class or
  /// instance type, a reused id, ...); the others load. Throws Error invalid_argument when the
  /// engine already has tasks.
  std::vector<LoadFailure> load_state(const ClusterState& state);
  /// load_state() of a state document (to_json(ClusterState), `gov eval --state`'s format),
  /// read against the running policy. An entry that does not read (unknown team, a bad amount,
  /// an unknown key, ...) or does not load is skipped and reported: one LoadFailure per bad
  /// entry, its index that of the document's list, in list and index order. Throws Error
  /// invalid_argument, loading nothing, when the document is not a state (malformed JSON, not an
  /// object, an unknown top-level key, `admitted` or `pending` not an array; the message says
  /// where) or the engine already has tasks.
  std::vector<LoadFailure> load_state_json(std::string_view json);
  /// The live tasks as they were submitted, with their admission times and flavors, and what a
  /// restart needs to go on exactly as this engine would (each pending task's last pending
  /// reason and message and whether it is parked; the warnings of every task; admitted tasks in
  /// admission order): a state that load_state() of another engine (under this policy or
  /// another) takes back. to_json() of it is the document form.
  ClusterState export_state() const;

  /// The latest decision about the task with this id (also after reloads), or nullopt for an id
  /// never submitted, an ended task forgotten (Options::remembered_ended_tasks), or any id when
  /// Options::remember_decisions is off.
  std::optional<Decision> decision(std::string_view id) const;
  /// Why the task is where it is against the current state: what it needs, what its team has,
  /// what the cohort has idle, which preemption candidates were considered. nullopt for an
  /// unknown id (ended tasks are forgotten at a reload).
  std::optional<Explanation> explain(std::string_view id) const;
  /// The hot path of an admission controller: would `task` be admitted if submitted now, and if
  /// not, why not (see Admission). Changes nothing; runs in parallel with other queries and
  /// allocates nothing in steady state (per-thread scratch space; an `invalid` answer builds its
  /// reason and may allocate). Native code under the JIT. It does not look at the id: the
  /// checks submit makes of it (empty, not UTF-8, a NUL, in use) are submit's alone.
  Admission check(const Task& task) const;
  /// Resolves `task` against the running policy for check(const PreparedTask&). Allocates;
  /// runs in parallel with other queries.
  PreparedTask prepare(const Task& task) const;
  /// check() of a prepared task: the fastest form (no lookups, no allocation) while the policy
  /// that prepared it runs; after a reload the same answer as check(task.task()).
  Admission check(const PreparedTask& task) const;
  /// Usage per team, flavor and resource, the cohort's, and the live tasks, all from one step.
  Snapshot snapshot() const;
  /// The engine's metrics in Prometheus' text exposition format (version 0.0.4), for the host
  /// to serve on its own `/metrics` (the library opens no port): Kueue's ClusterQueue metrics
  /// with Kueue's names and labels (teams are `cluster_queue`s) and gov's own, listed in
  /// docs/observability.md. Counting costs check() one increment of the calling thread's own
  /// counter slot: no lock, no allocation. A scrape holds the state lock shared (it runs in
  /// parallel with queries) and costs O(live tasks + teams × flavors × resources).
  std::string metrics() const;
  /// The policy the engine runs now.
  PolicyInfo policy() const;
  /// PolicyInfo::version, without a lock.
  std::int64_t version() const noexcept;
  /// The engine's time (the latest `at` it has seen).
  Time now() const;

  /// Loads the store's active version (for a file engine: the file again) and, when it differs
  /// from the running one, swaps it in: live tasks carry over (an admitted task stays admitted
  /// even when it no longer fits, as in Kueue a quota change does not evict), then admission
  /// runs once under the new policy, so pending tasks compete for the new quotas. Tasks the new
  /// version cannot hold (their team, class or instance type is gone) end with an `invalid`
  /// decision. The new version is compiled while other threads keep deciding; only the swap
  /// waits for them. Returns the swap's step (sequence 0 when there was nothing new). Throws
  /// Error as open_store / compile_file; the engine then keeps its version.
  Step reload();
  /// The same for a given version of the store (any version, also an older one). Throws Error
  /// invalid_argument for a file engine.
  Step reload(std::int64_t version);

  /// Starts a watcher thread that checks every `interval` whether the store's active version
  /// (or the file's content) changed and reloads when it did; its steps go to Options::on_step,
  /// its failures to Options::on_reload_error. Calling it again changes the interval. The
  /// interval is at least 1 ms and at most a year (a longer one waits a year).
  void watch(std::chrono::milliseconds interval);
  /// Stops the watcher (waits for a reload in progress). Nothing when none runs.
  void stop_watching();
  /// Loads `version` of the store (as reload(version)) and keeps the watcher from moving the
  /// engine off it until unpin(): a watcher would otherwise reload the store's active version at
  /// its next poll, undoing a rollback made on one replica. Explicit reload() and reload(v)
  /// calls still do what they say. Throws as reload(version); a failed pin changes nothing.
  Step pin(std::int64_t version);
  /// Lets the watcher follow the store's active version again (from its next poll).
  void unpin();
  /// Whether the engine is pinned.
  bool pinned() const;
  /// The error of the latest reload (the watcher's, reload(), pin()) when it failed, or nullopt
  /// when it succeeded (or none was made): what Options::on_reload_error was told, for callers
  /// that poll, such as the C ABI's gov_engine_last_reload_error and Go's LastReloadError.
  std::optional<Error> last_reload_error() const;

  struct Impl;  // opaque

 private:
  friend std::vector<TimedEvent> read_trace(const Engine& engine, std::string_view json);
  friend class EngineInternals;  // gov's own tools (not part of the API)
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gov
