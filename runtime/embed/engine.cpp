// gov::Engine: opening an engine, state changes, queries and prepared tasks. The insides and
// why they are shaped so: engine_impl.hpp.
#include "gov/engine.hpp"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include <fmt/format.h>

#include "runtime/embed/engine_impl.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/trace/trace_reader.hpp"

namespace gov {

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
Error::~Error() = default;

}  // namespace gov

namespace gov::embed {

ErrorCode error_code(support::ErrorKind kind) {
  switch (kind) {
    case support::ErrorKind::io: return ErrorCode::io;
    case support::ErrorKind::policy: return ErrorCode::policy;
    case support::ErrorKind::not_found: return ErrorCode::not_found;
    case support::ErrorKind::invalid: return ErrorCode::invalid_argument;
    case support::ErrorKind::store:
    case support::ErrorKind::busy:
    case support::ErrorKind::conflict:
    case support::ErrorKind::corrupt:
    case support::ErrorKind::newer_schema:
    case support::ErrorKind::read_only:
    case support::ErrorKind::full:
    case support::ErrorKind::signature:  // a tampered or unsigned store
      return ErrorCode::store;
    case support::ErrorKind::invalid_module:  // the JIT's: a load falls back or recompiles first
    case support::ErrorKind::stale_object:
    case support::ErrorKind::corrupt_object:
    case support::ErrorKind::llvm:
      return ErrorCode::internal;
  }
  return ErrorCode::internal;
}

[[noreturn]] void throw_load_error(const driver::Error& error) {
  throw Error(error_code(error.kind), error.message);
}

std::shared_ptr<const LoadedPolicy> loaded(std::unique_ptr<driver::Policy> runnable, int64_t version,
                                           const std::string& source, const std::shared_ptr<NameTable>& names) {
  auto policy = std::make_shared<LoadedPolicy>();
  for (const ir::Flavor& flavor : runnable->module.flavors) policy->flavor_names.push_back(names->intern(flavor.name));
  for (const ir::Rule& rule : runnable->module.rules) policy->rule_names.push_back(names->intern(rule.name));
  policy->names = names;
  policy->info.name = runnable->name;
  policy->info.version = version;
  policy->info.content_sha256 = runnable->content_sha256;
  policy->info.back_end = std::string(runnable->evaluator->name());
  policy->info.cached_code = runnable->code == driver::CodeOrigin::cached;
  policy->info.source = source;
  policy->info.warning = runnable->warning;
  policy->info.code_note = runnable->code_note;
  policy->runnable = std::move(runnable);
  return policy;
}

bool is_live(Outcome outcome) {
  return outcome == Outcome::admitted || outcome == Outcome::pending || outcome == Outcome::preempted;
}

}  // namespace gov::embed

namespace gov {

// ------------------------------------------------------------------ opening

namespace {

/// The store an engine reads its versions from: opened read-only, never created.
store::Store open_store_read_only(const std::string& path) {
  store::OpenOptions options;
  options.create = false;
  options.read_only = true;
  auto db = store::Store::open(path, options);
  if (!db.ok()) {
    throw Error(db.error().kind == store::ErrorKind::not_found ? ErrorCode::not_found : ErrorCode::store,
                fmt::format("store `{}`: {}", store::display_location(path), db.error().message));
  }
  return std::move(db.value());
}

}  // namespace

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
  impl->db = open_store_read_only(db_path);
  support::Expected<std::string> name = driver::resolve_policy_name(*impl->db, impl->options.policy);
  if (!name) embed::throw_load_error(name.error());
  impl->policy_name = *name;
  driver::Result first = driver::load(driver::Source::stored(*impl->db, impl->policy_name, std::nullopt, impl->verify),
                                      driver::Request::running(impl->back_end));
  if (!first.ok()) embed::throw_load_error(*first.error);
  const int64_t number = first.policy->version;
  impl->install(embed::loaded(std::move(first.policy), number, db_path, impl->names));
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
  driver::Result first =
      driver::load(driver::Source::file(path, impl->options.policy_root), driver::Request::running(impl->back_end));
  if (!first.ok()) embed::throw_load_error(*first.error);
  impl->install(embed::loaded(std::move(first.policy), /*version=*/1, path, impl->names));
  return Engine(std::move(impl));
}

Engine Engine::fresh() const {
  std::shared_ptr<const embed::LoadedPolicy> running;
  {
    std::shared_lock lock(impl_->state_mutex);
    running = impl_->policy;
  }
  auto impl = std::make_unique<Impl>(impl_->options);
  impl->names = impl_->names;
  impl->from_store = impl_->from_store;
  impl->verify = impl_->verify;
  impl->path = impl_->path;
  impl->policy_name = impl_->policy_name;
  if (impl->from_store) {  // its own handle: store::Store is single-threaded, reloads use it
    // A store replaced under this engine is not opened again: the copy would run this engine's
    // version under the number another content has there, and reload(n) of that number would
    // do nothing (a controller developer's finding, session 41).
    {
      std::lock_guard reload_lock(impl_->reload_mutex);
      impl_->refuse_replaced_store();
    }
    impl->db = open_store_read_only(impl->path);
  }
  impl->install(std::move(running));
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
  const Event events[] = {Event::submit(task)};
  Step s = impl_->run_step(at, events);
  const Decision* own = s.find(task.id);
  if (own == nullptr) throw Error(ErrorCode::internal, fmt::format("no decision for submitted task `{}`", task.id));
  Decision decision = *own;
  if (step) *step = std::move(s);
  return decision;
}

std::optional<Decision> Engine::finish(std::string_view id, Time at, Step* step) {
  const Event events[] = {Event::finish(std::string(id))};
  Step s = impl_->run_step(at, events);
  std::optional<Decision> decision = with_outcome(s, id, Outcome::finished);
  if (!decision) decision = with_outcome(s, id, Outcome::cancelled);  // it was pending
  if (step) *step = std::move(s);
  return decision;
}

std::optional<Decision> Engine::cancel(std::string_view id, Time at, Step* step) {
  const Event events[] = {Event::cancel(std::string(id))};
  Step s = impl_->run_step(at, events);
  std::optional<Decision> decision = with_outcome(s, id, Outcome::cancelled);
  if (step) *step = std::move(s);
  return decision;
}

Step Engine::step(Time at, const std::vector<Event>& events) {
  return impl_->run_step(at, events);
}

Step Engine::tick(Time at) {
  return impl_->run_step(at, {});
}

std::vector<LoadFailure> Engine::load_state(const ClusterState& state) {
  std::unique_lock lock(impl_->state_mutex);
  if (impl_->core->task_count() > 0) {
    throw Error(ErrorCode::invalid_argument,
                "a cluster state can only be loaded into an engine that has no tasks yet (load it right after opening)");
  }
  // The bound on live tasks holds for loaded ones as for submitted ones.
  const size_t bound = impl_->options.max_tasks == 0 ? Options::kDefaultMaxTasks : impl_->options.max_tasks;
  if (state.admitted.size() > bound || state.pending.size() > bound - state.admitted.size()) {
    throw Error(ErrorCode::limit,
                fmt::format("the state holds {} tasks and `max_tasks` is {}: nothing loaded",
                            state.admitted.size() + state.pending.size(), bound));
  }
  std::vector<LoadFailure> failures = impl_->core->load_state(state);
  for (const AdmittedTask& task : state.admitted) impl_->decision_log.remember(task.task);
  for (const PendingTask& task : state.pending) impl_->decision_log.remember(task.task);
  // The pending tasks that loaded have waited since their submission (kueue_admission_wait_time_seconds).
  std::vector<bool> failed(state.pending.size(), false);
  for (const LoadFailure& failure : failures) {
    if (failure.list == LoadFailure::List::pending && failure.index < failed.size()) failed[failure.index] = true;
  }
  for (size_t i = 0; i < state.pending.size(); ++i) {
    if (!failed[i] && impl_->options.count_decisions) impl_->step_counters.loaded_pending(state.pending[i].task.id, state.pending[i].submitted_at);
  }
  return failures;
}

std::vector<LoadFailure> Engine::load_state_json(std::string_view json) {
  std::shared_ptr<const embed::LoadedPolicy> policy;
  {
    std::shared_lock lock(impl_->state_mutex);
    policy = impl_->policy;
  }
  trace::JsonLimits limits;
  limits.max_bytes = size_t{1} << 30;  // as read_trace: a state holds up to max_tasks tasks
  support::Expected<trace::JsonValue> document = trace::parse_json(json, limits);
  if (!document) throw Error(ErrorCode::invalid_argument, "the state is not JSON: " + document.error().message);
  support::Expected<trace::ClusterStateEntries> read =
      trace::read_cluster_state_entries(*document, policy->runnable->module);
  if (!read) throw Error(ErrorCode::invalid_argument, "the state: " + read.error().message);
  // A reload between reading and loading would leave entries read against another version:
  // load_state() resolves every task again against the version it runs, so that only moves a
  // failure from one place to the other.
  std::vector<LoadFailure> failures = std::move(read->failures);
  for (LoadFailure& failure : load_state(read->state)) {
    const std::vector<size_t>& index =
        failure.list == LoadFailure::List::admitted ? read->admitted_index : read->pending_index;
    failure.index = index.at(failure.index);
    failures.push_back(std::move(failure));
  }
  std::sort(failures.begin(), failures.end(), [](const LoadFailure& a, const LoadFailure& b) {
    return a.list != b.list ? a.list < b.list : a.index < b.index;
  });
  return failures;
}

ClusterState Engine::export_state() const {
  std::shared_lock lock(impl_->state_mutex);
  return impl_->core->export_state();
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
  std::optional<Explanation> explanation = impl_->core->explain(id);
  if (explanation) explanation->version = impl_->policy->info.version;
  return explanation;
}

namespace {

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
Admission admission_of(const engine::AdmissionCheck& result, const embed::LoadedPolicy& policy, uint64_t sequence) {
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
  std::shared_lock lock(impl_->state_mutex);
  Admission admission = admission_of(impl_->core->check_admission(task), *impl_->policy, impl_->sequence);
  impl_->checks.count(admission.verdict);
  return admission;
}

// ------------------------------------------------------------------ prepared tasks

struct PreparedTask::State {
  Task task;
  int64_t version = 0;
  /// The policy it was prepared under; weak, so a prepared task does not keep an old version's
  /// code alive. Compared by owner (the control block stays while this refers to it, so no other
  /// policy can have its address).
  std::weak_ptr<const embed::LoadedPolicy> policy;
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
  {
    std::shared_lock lock(impl_->state_mutex);
    state->prepared = impl_->core->prepare(task);
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
    impl_->checks.count(invalid.verdict);
    return invalid;
  }
  const PreparedTask::State& state = *task.state_;
  {
    std::shared_lock lock(impl_->state_mutex);
    const std::shared_ptr<const embed::LoadedPolicy>& running = impl_->policy;
    const bool same_policy = !state.policy.owner_before(running) && !running.owner_before(state.policy);
    if (same_policy) {
      const Admission admission = admission_of(impl_->core->check_admission(state.prepared), *running, impl_->sequence);
      impl_->checks.count(admission.verdict);
      return admission;
    }
  }
  return check(state.task);  // prepared under another version: resolve again
}

Snapshot Engine::snapshot() const {
  std::shared_lock lock(impl_->state_mutex);
  Snapshot out = impl_->core->snapshot(/*with_ended_tasks=*/false);
  // In submission order, ties by id: the core lists its records, whose order a reload or a
  // compaction (admitted tasks loaded first) changes.
  std::stable_sort(out.tasks.begin(), out.tasks.end(), [](const TaskRow& a, const TaskRow& b) {
    return a.submitted_at != b.submitted_at ? a.submitted_at < b.submitted_at : a.id < b.id;
  });
  out.version = impl_->policy->info.version;
  out.sequence = impl_->sequence;
  return out;
}

std::string Engine::metrics() const {
  embed::MetricsInputs inputs;
  inputs.checks = impl_->checks.totals();
  inputs.reloads = impl_->reloads.load(std::memory_order_relaxed);
  inputs.reload_failures = impl_->reload_failures.load(std::memory_order_relaxed);
  std::shared_lock lock(impl_->state_mutex);
  inputs.compactions = impl_->compactions;
  inputs.decision_log_write_failures = impl_->decision_log.write_failures();
  inputs.policy = &impl_->policy->info;
  inputs.steps = impl_->options.count_decisions ? &impl_->step_counters : nullptr;
  return embed::write_metrics(*impl_->core, inputs);
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

std::optional<Time> Engine::next_finish() {
  std::unique_lock lock(impl_->state_mutex);  // drops stale timers
  return impl_->core->next_finish();
}

// ------------------------------------------------------------------ traces

std::shared_ptr<const driver::Policy> EngineInternals::runnable(const Engine& engine) {
  std::shared_ptr<const embed::LoadedPolicy> policy;
  {
    std::shared_lock lock(engine.impl_->state_mutex);
    policy = engine.impl_->policy;
  }
  const driver::Policy* runnable = policy->runnable.get();
  return std::shared_ptr<const driver::Policy>(std::move(policy), runnable);
}

bool EngineInternals::in_own_callback(const Engine& engine) {
  if (engine.impl_->state_mutex.held_by_this_thread()) return true;
  std::lock_guard lock(engine.impl_->watch_mutex);  // never held while a callback runs
  return engine.impl_->watcher.get_id() == std::this_thread::get_id();
}

std::shared_ptr<const ir::Module> EngineInternals::module(const Engine& engine) {
  std::shared_ptr<const embed::LoadedPolicy> policy;
  {
    std::shared_lock lock(engine.impl_->state_mutex);
    policy = engine.impl_->policy;
  }
  const ir::Module* module = &policy->runnable->module;
  return std::shared_ptr<const ir::Module>(std::move(policy), module);
}

std::vector<TimedEvent> read_trace(const Engine& engine, std::string_view json) {
  std::shared_ptr<const embed::LoadedPolicy> policy;
  {
    std::shared_lock lock(engine.impl_->state_mutex);
    policy = engine.impl_->policy;
  }
  trace::JsonLimits limits;
  limits.max_bytes = size_t{1} << 30;
  trace::TraceResult result = trace::read_trace(json, policy->runnable->module, limits);
  if (!result.ok()) throw Error(ErrorCode::invalid_argument, result.error().message);
  std::vector<TimedEvent> events;
  events.reserve(result->size());
  for (trace::TraceEvent& e : *result) {
    switch (e.kind) {
      case trace::EventKind::submit: events.push_back({e.at, Event::submit(std::move(e.task))}); break;
      case trace::EventKind::finish: events.push_back({e.at, Event::finish(std::move(e.id))}); break;
      case trace::EventKind::cancel: events.push_back({e.at, Event::cancel(std::move(e.id))}); break;
    }
  }
  return events;
}

}  // namespace gov
