// The C ABI (gov/gov.h) over the C++ API: opaque handles that own C++ values plus C views of
// them (structs whose strings point into those values), every entry point behind a catch-all
// that turns exceptions into a status and a thread-local message.
#include "gov/gov.h"

#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gov/engine.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/trace/trace_reader.hpp"

struct gov_engine {
  explicit gov_engine(gov::Engine e) : engine(std::move(e)) {}
  gov::Engine engine;
};

/// A step's decisions and their C views. The views point into `step`, which never changes
/// after construction (so the views stay valid for the object's life).
struct gov_decisions {
  explicit gov_decisions(gov::Step s);
  gov::Step step;
  std::vector<gov_decision> views;
  std::vector<std::vector<gov_warning>> warnings;
  std::vector<std::vector<const char*>> victims;
  // JSON, made on first use (readers may race to it: call_once).
  mutable std::once_flag json_once;
  mutable std::vector<std::string> lines;
  mutable std::string all_lines;
  void make_json() const;
};

struct gov_snapshot {
  explicit gov_snapshot(gov::Snapshot s);
  gov::Snapshot snapshot;
  std::vector<gov_usage_row> usage;
  mutable std::once_flag json_once;
  mutable std::string json;
};

struct gov_prepared_task {
  gov::PreparedTask task;
};

struct gov_load_failures {
  std::vector<gov::LoadFailure> failures;
  std::vector<gov_load_failure> views;
};

struct gov_trace {
  std::vector<gov::TimedEvent> events;
  std::vector<gov_event> views;
  std::vector<std::vector<gov_label>> labels;
  std::vector<std::vector<gov_partition>> partitions;
  std::vector<std::vector<gov_pod_set>> pod_sets;            // per event
  std::vector<std::vector<std::vector<gov_partition>>> pod_set_partitions;  // per event, per pod set
};

namespace {

thread_local std::string last_error;

gov_status fail(gov_status status, const char* message) {
  try {
    last_error = message;
  } catch (...) {  // no memory for the message: keep the status
  }
  return status;
}

/// Room every thread's error storage keeps, so that an out-of-memory message fits without an
/// allocation (the moment it is written is the moment allocations fail).
constexpr size_t kErrorReserve = 512;

/// Says what ran out: "out of memory in gov_engine_submit while submitting task `x`". Formatted
/// on the stack into the storage guarded() reserved: no allocation, so the message is there
/// however little memory is left. `detail(buffer, size)` writes what the call was doing.
template <typename Detail>
gov_status out_of_memory(const char* function, Detail&& detail) noexcept {
  char what[kErrorReserve / 2] = "";
  detail(what, sizeof what);
  char text[kErrorReserve];
  std::snprintf(text, sizeof text, what[0] != '\0' ? "out of memory in %s while %s" : "out of memory in %s", function,
                what);
  return fail(GOV_ERROR_OUT_OF_MEMORY, text);
}

/// Runs `body`, turning every exception into a status and a message: nothing crosses into C.
/// `function` is the entry point's name and `detail` (called only on failure) what it was
/// doing, for the out-of-memory message.
template <typename Body, typename Detail>
gov_status guarded(const char* function, Body&& body, Detail&& detail) noexcept {
  // Constructs this thread's error storage now, while memory is there: its first use registers
  // a thread-exit destructor, which allocates, and glibc aborts when that fails. Done in fail()
  // under out-of-memory, it turned "out of memory in gov_engine_submit" into SIGABRT.
  try {
    if (last_error.capacity() < kErrorReserve) last_error.reserve(kErrorReserve);
    body();
    return GOV_OK;
  } catch (const gov::Error& e) {
    if (e.code() == gov::ErrorCode::out_of_memory) return out_of_memory(function, detail);
    return fail(static_cast<gov_status>(static_cast<int>(e.code())), e.what());
  } catch (const std::bad_alloc&) {
    return out_of_memory(function, detail);
  } catch (const std::exception& e) {
    return fail(GOV_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(GOV_ERROR_INTERNAL, "unknown error");
  }
}

template <typename Body>
gov_status guarded(const char* function, Body&& body) noexcept {
  return guarded(function, std::forward<Body>(body), [](char*, size_t) {});
}

[[noreturn]] void invalid(const char* message) {
  throw gov::Error(gov::ErrorCode::invalid_argument, message);
}

template <typename T>
void require(const T* pointer, const char* what) {
  if (pointer == nullptr) invalid(what);
}

std::optional<int64_t> optional_int(int64_t value) {
  if (value == GOV_UNSET) return std::nullopt;
  return value;
}

/// Refuses a label value longer than trace::kMaxLabelValueBytes, as the trace reader does: every
/// message that interpolates it copies it. strnlen reads at most one byte past the bound.
void check_label_value(const char* value) {
  if (::strnlen(value, gov::trace::kMaxLabelValueBytes + 1) > gov::trace::kMaxLabelValueBytes) {
    invalid("a label value is longer than 65536 bytes, the most gov accepts");
  }
}
static_assert(gov::trace::kMaxLabelValueBytes == 65536, "the message above states the bound");

/// The same bound for a submitted task's id and team: decisions print them, and an unknown team's
/// message repeats its name (a 10 MiB team made a 20 MB decision line). Checks, which print no
/// decision, leave them unbounded and unscanned.
void check_name(const char* text, const char* what) {
  if (::strnlen(text, gov::trace::kMaxLabelValueBytes + 1) > gov::trace::kMaxLabelValueBytes) {
    invalid(what);
  }
}

/// C partitions into `out` (cleared first; no allocation when none).
void read_partitions(const gov_partition* partitions, size_t count,
                     std::vector<std::pair<std::string, int64_t>>& out) {
  out.clear();
  if (count > 0 && partitions == nullptr) invalid("the task has partition_count > 0 but partitions is NULL");
  for (size_t i = 0; i < count; ++i) {
    if (partitions[i].profile == nullptr) invalid("a partition's profile is NULL");
    out.emplace_back(partitions[i].profile, partitions[i].count);
  }
}

void read_partitions(const gov_task& c, std::vector<std::pair<std::string, int64_t>>& out) {
  read_partitions(c.partitions, c.partition_count, out);
}

/// A C task's pod sets into `out` (cleared first; no allocation when none). More than the engine
/// takes are read (it answers `invalid`), up to a bound that keeps a bad count from reading far.
void read_pod_sets(const gov_task& c, std::vector<gov::PodSet>& out) {
  out.clear();
  if (c.pod_set_count == 0) return;
  if (c.pod_sets == nullptr) invalid("the task has pod_set_count > 0 but pod_sets is NULL");
  if (c.pod_set_count > 64) invalid("the task has more than 64 pod sets (Kueue allows 8)");
  for (size_t i = 0; i < c.pod_set_count; ++i) {
    const gov_pod_set& p = c.pod_sets[i];
    if (p.name == nullptr) invalid("a pod set's name is NULL");
    gov::PodSet& pod_set = out.emplace_back();
    pod_set.name = p.name;
    if (p.instance_type) pod_set.instance_type = p.instance_type;
    pod_set.instances = optional_int(p.instances);
    for (size_t r = 0; r < GOV_RESOURCE_COUNT; ++r) pod_set.amounts[r] = optional_int(p.amounts[r]);
    pod_set.pods = p.pods;
    read_partitions(p.partitions, p.partition_count, pod_set.partitions);
  }
}

gov::Task task_from_c(const gov_task& c) {
  if (c.id == nullptr) invalid("the task has no id (NULL)");
  if (c.team == nullptr) invalid("the task has no team (NULL)");
  check_name(c.id, "the task's id is longer than 65536 bytes, the most gov accepts");
  check_name(c.team, "the task's team is longer than 65536 bytes, the most gov accepts");
  if (c.label_count > 0 && c.labels == nullptr) invalid("the task has label_count > 0 but labels is NULL");
  gov::Task task;
  task.id = c.id;
  task.team = c.team;
  if (c.priority) task.priority = c.priority;
  if (c.instance_type) task.instance_type = c.instance_type;
  task.instances = optional_int(c.instances);
  for (size_t r = 0; r < GOV_RESOURCE_COUNT; ++r) task.amounts[r] = optional_int(c.amounts[r]);
  task.pods = optional_int(c.pods);
  task.duration = optional_int(c.duration_ms);
  for (size_t i = 0; i < c.label_count; ++i) {
    if (c.labels[i].key == nullptr || c.labels[i].value == nullptr) invalid("a label's key or value is NULL");
    check_label_value(c.labels[i].value);
    task.labels.emplace_back(c.labels[i].key, c.labels[i].value);
  }
  read_partitions(c, task.partitions);
  read_pod_sets(c, task.pod_sets);
  task.created = optional_int(c.created_ms);
  return task;
}

/// The same into per-thread storage reused call after call (no allocation in steady state),
/// for the hot path.
const gov::Task& scratch_task_from_c(const gov_task& c) {
  if (c.id == nullptr) invalid("the task has no id (NULL)");
  if (c.team == nullptr) invalid("the task has no team (NULL)");
  if (c.label_count > 0 && c.labels == nullptr) invalid("the task has label_count > 0 but labels is NULL");
  thread_local gov::Task task;
  task.id.assign(c.id);
  task.team.assign(c.team);
  const auto assign_optional = [](std::optional<std::string>& into, const char* text) {
    if (text == nullptr) {
      into.reset();
    } else if (into) {
      into->assign(text);
    } else {
      into.emplace(text);
    }
  };
  assign_optional(task.priority, c.priority);
  assign_optional(task.instance_type, c.instance_type);
  task.instances = optional_int(c.instances);
  for (size_t r = 0; r < GOV_RESOURCE_COUNT; ++r) task.amounts[r] = optional_int(c.amounts[r]);
  task.pods = optional_int(c.pods);
  task.duration = optional_int(c.duration_ms);
  task.labels.resize(c.label_count);
  for (size_t i = 0; i < c.label_count; ++i) {
    if (c.labels[i].key == nullptr || c.labels[i].value == nullptr) invalid("a label's key or value is NULL");
    check_label_value(c.labels[i].value);
    task.labels[i].first.assign(c.labels[i].key);
    task.labels[i].second.assign(c.labels[i].value);
  }
  read_partitions(c, task.partitions);
  task.created = optional_int(c.created_ms);
  return task;
}

/// The integer a C caller stored in an enum field or argument. C lets it hold any int; reading
/// it as the C++ enum type when it is not one of the enumerators is undefined behaviour
/// (UBSan: "not a valid value for type"), so the C ABI reads the bytes instead.
template <typename Enum>
int raw_enum(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized on the supported targets");
  int out = 0;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

gov::Event event_from_c(const gov_event& c) {
  switch (raw_enum(c.kind)) {
    case GOV_EVENT_SUBMIT: return gov::Event::submit(task_from_c(c.task));
    case GOV_EVENT_FINISH:
      if (c.id == nullptr) invalid("a finish event has no id (NULL)");
      return gov::Event::finish(c.id);
    case GOV_EVENT_CANCEL:
      if (c.id == nullptr) invalid("a cancel event has no id (NULL)");
      return gov::Event::cancel(c.id);
  }
  invalid("unknown event kind");
}

gov_amounts amounts_to_c(const gov::ResourceAmounts& amounts) {
  gov_amounts out{};
  for (const gov::ResourceAmount& a : amounts) {
    if (!a.partition.empty()) continue;  // GPU partitions: in the JSON forms (gov_decision_json)
    const auto r = static_cast<size_t>(a.resource);
    out.value[r] = a.amount;
    out.present |= 1u << r;
  }
  return out;
}

gov_engine* engine_of(gov_engine* e) {
  require(e, "the engine is NULL");
  return e;
}
const gov_engine* engine_of(const gov_engine* e) {
  require(e, "the engine is NULL");
  return e;
}

void hand_out(gov::Step step, gov_decisions** out) {
  if (out != nullptr) *out = new gov_decisions(std::move(step));
}

gov::Options options_from_c(const gov_open_options* c) {
  gov::Options options;
  if (c == nullptr) return options;
  if (c->policy) options.policy = c->policy;
  const int back_end = raw_enum(c->back_end);
  if (back_end != GOV_BACK_END_JIT && back_end != GOV_BACK_END_INTERPRETER) invalid("unknown back end");
  options.back_end = back_end == GOV_BACK_END_JIT ? gov::Options::BackEnd::jit : gov::Options::BackEnd::interpreter;
  const int dialect = raw_enum(c->dialect);
  if (dialect != GOV_DIALECT_HEAD && dialect != GOV_DIALECT_KUEUE_V0_9) invalid("unknown dialect");
  options.dialect = dialect == GOV_DIALECT_HEAD ? gov::Options::Dialect::head : gov::Options::Dialect::kueue_v0_9;
  if (c->verify_key_path) options.verify_key_path = c->verify_key_path;
  options.require_signature = c->require_signature != 0;
  options.max_tasks = c->max_tasks == 0 ? GOV_DEFAULT_MAX_TASKS : c->max_tasks;
  if (c->on_step != nullptr) {
    gov_step_callback callback = c->on_step;
    void* user_data = c->on_step_user_data;
    options.on_step = [callback, user_data](const gov::Step& step) {
      const gov_decisions list(step);
      callback(&list, user_data);
    };
  }
  return options;
}

void admission_to_c(const gov::Admission& a, gov_admission& out) {
  out.verdict = static_cast<gov_verdict>(a.verdict);
  out.flavor = a.flavor.empty() ? "" : a.flavor.data();  // interned std::string: NUL-terminated
  out.borrows = a.borrows ? 1 : 0;
  out.rule = a.rule.empty() ? "" : a.rule.data();
  out.warnings = a.warnings;
  out.priority = a.priority;
  out.version = a.version;
  out.sequence = a.sequence;
}

template <typename Out>
void clear(Out** out) {
  if (out != nullptr) *out = nullptr;
}

char* copy_string(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace

gov_decisions::gov_decisions(gov::Step s) : step(std::move(s)) {
  views.reserve(step.decisions.size());
  warnings.resize(step.decisions.size());
  victims.resize(step.decisions.size());
  for (size_t i = 0; i < step.decisions.size(); ++i) {
    const gov::Decision& d = step.decisions[i];
    for (const gov::RuleWarning& w : d.warnings) warnings[i].push_back({w.rule.c_str(), w.message.c_str()});
    for (const std::string& v : d.victims) victims[i].push_back(v.c_str());
    gov_decision view{};
    view.at_ms = d.at;
    view.version = d.version;
    view.sequence = d.sequence;
    view.task = d.task.c_str();
    view.team = d.team.c_str();
    view.outcome = static_cast<gov_outcome>(d.outcome);
    view.flavor = d.flavor.c_str();
    view.usage = amounts_to_c(d.usage);
    view.borrowed = amounts_to_c(d.borrowed);
    view.warnings = warnings[i].data();
    view.warning_count = warnings[i].size();
    view.reason = d.reason ? static_cast<gov_reason>(static_cast<int>(*d.reason) + 1) : GOV_REASON_NONE;
    view.short_of = amounts_to_c(d.short_of);
    view.maximum = amounts_to_c(d.maximum);
    view.victims = victims[i].data();
    view.victim_count = victims[i].size();
    view.by = d.by.c_str();
    view.kind = d.kind ? static_cast<gov_preemption_kind>(static_cast<int>(*d.kind) + 1) : GOV_PREEMPTION_NONE;
    view.rule = d.rule.c_str();
    view.message = d.message.c_str();
    views.push_back(view);
  }
}

void gov_decisions::make_json() const {
  std::call_once(json_once, [this] {
    lines.reserve(step.decisions.size());
    for (const gov::Decision& d : step.decisions) {
      lines.push_back(gov::to_json(d));
      all_lines += lines.back();
      all_lines += '\n';
    }
  });
}

gov_snapshot::gov_snapshot(gov::Snapshot s) : snapshot(std::move(s)) {
  usage.reserve(snapshot.usage.size());
  for (const gov::UsageRow& row : snapshot.usage) {
    if (!row.partition.empty()) continue;  // GPU partitions: in gov_snapshot_json
    usage.push_back({row.team.c_str(), row.flavor.c_str(), static_cast<gov_resource>(row.resource), row.nominal,
                     row.borrowing_limit, row.used, row.borrowed});
  }
}

// The C enums are the C++ ones, with NONE = 0 before the optional ones.
static_assert(GOV_INVALID == static_cast<int>(gov::Outcome::invalid));
static_assert(GOV_TEAM_INACTIVE == static_cast<int>(gov::PendingReason::team_inactive) + 1);
static_assert(GOV_PREEMPTION_FAIR_SHARING == static_cast<int>(gov::PreemptionKind::fair_sharing) + 1);
static_assert(GOV_ERROR_INTERNAL == static_cast<int>(gov::ErrorCode::internal));
static_assert(GOV_ERROR_REENTRANT == static_cast<int>(gov::ErrorCode::reentrant));
static_assert(GOV_ERROR_LIMIT == static_cast<int>(gov::ErrorCode::limit));
static_assert(GOV_DEFAULT_MAX_TASKS == gov::Options::kDefaultMaxTasks);
static_assert(GOV_EFA == static_cast<int>(gov::Resource::efa));
static_assert(GOV_VERDICT_INVALID == static_cast<int>(gov::Admission::Verdict::invalid) &&
              GOV_VERDICT_PENDING == static_cast<int>(gov::Admission::Verdict::pending));

extern "C" {

// ------------------------------------------------------------------ basics

const char* gov_last_error(void) {
  return last_error.c_str();
}

const char* gov_status_name(gov_status status) {
  switch (raw_enum(status)) {
    case GOV_OK: return "ok";
    case GOV_ERROR_INVALID_ARGUMENT: return "invalid-argument";
    case GOV_ERROR_NOT_FOUND: return "not-found";
    case GOV_ERROR_POLICY: return "policy";
    case GOV_ERROR_STORE: return "store";
    case GOV_ERROR_IO: return "io";
    case GOV_ERROR_OUT_OF_MEMORY: return "out-of-memory";
    case GOV_ERROR_INTERNAL: return "internal";
    case GOV_ERROR_REENTRANT: return "reentrant";
    case GOV_ERROR_LIMIT: return "limit";
  }
  return "unknown";
}

const char* gov_version(void) {
  return GOV_VERSION_STRING;
}

int gov_abi_version(void) {
  return GOV_ABI_VERSION;
}

void gov_string_free(char* text) {
  std::free(text);
}

void gov_pod_set_init(gov_pod_set* pod_set) {
  if (pod_set == nullptr) return;
  *pod_set = gov_pod_set{};
  pod_set->instances = GOV_UNSET;
  for (int64_t& amount : pod_set->amounts) amount = GOV_UNSET;
  pod_set->pods = 1;
}

void gov_task_init(gov_task* task) {
  if (task == nullptr) return;
  *task = gov_task{};
  task->instances = GOV_UNSET;
  for (int64_t& amount : task->amounts) amount = GOV_UNSET;
  task->pods = GOV_UNSET;
  task->duration_ms = GOV_UNSET;
  task->created_ms = GOV_UNSET;
}

// ------------------------------------------------------------------ decisions

size_t gov_decisions_count(const gov_decisions* list) {
  return list ? list->views.size() : 0;
}

const gov_decision* gov_decisions_get(const gov_decisions* list, size_t index) {
  if (list == nullptr || index >= list->views.size()) return nullptr;
  return &list->views[index];
}

const gov_decision* gov_decisions_find(const gov_decisions* list, const char* task) {
  if (list == nullptr || task == nullptr) return nullptr;
  for (size_t i = list->views.size(); i-- > 0;) {
    if (list->step.decisions[i].task == task) return &list->views[i];
  }
  return nullptr;
}

uint64_t gov_decisions_sequence(const gov_decisions* list) {
  return list ? list->step.sequence : 0;
}

int64_t gov_decisions_version(const gov_decisions* list) {
  return list ? list->step.version : 0;
}

const char* gov_decision_json(const gov_decisions* list, size_t index) {
  if (list == nullptr || index >= list->views.size()) return nullptr;
  try {
    list->make_json();
  } catch (...) {
    fail(GOV_ERROR_OUT_OF_MEMORY, "out of memory");
    return nullptr;
  }
  return list->lines[index].c_str();
}

const char* gov_decisions_json(const gov_decisions* list) {
  if (list == nullptr) return "";
  try {
    list->make_json();
  } catch (...) {
    fail(GOV_ERROR_OUT_OF_MEMORY, "out of memory");
    return nullptr;
  }
  return list->all_lines.c_str();
}

void gov_decisions_free(gov_decisions* list) {
  delete list;
}

// ------------------------------------------------------------------ engines

void gov_open_options_init(gov_open_options* options) {
  if (options == nullptr) return;
  *options = gov_open_options{};
  options->back_end = GOV_BACK_END_JIT;
  options->dialect = GOV_DIALECT_HEAD;
  options->max_tasks = GOV_DEFAULT_MAX_TASKS;
}

gov_status gov_engine_open(const char* db_path, const gov_open_options* options, gov_engine** out) {
  clear(out);
  return guarded("gov_engine_open", [&] {
    require(out, "the out-parameter is NULL");
    require(db_path, "the store path is NULL");
    *out = new gov_engine(gov::Engine::open_store(db_path, options_from_c(options)));
  }, [&](char* text, size_t size) { std::snprintf(text, size, "opening the store `%s`", db_path ? db_path : ""); });
}

gov_status gov_engine_open_file(const char* policy_path, const gov_open_options* options, gov_engine** out) {
  clear(out);
  return guarded("gov_engine_open_file", [&] {
    require(out, "the out-parameter is NULL");
    require(policy_path, "the policy path is NULL");
    *out = new gov_engine(gov::Engine::compile_file(policy_path, options_from_c(options)));
  }, [&](char* text, size_t size) { std::snprintf(text, size, "compiling the policy `%s`", policy_path ? policy_path : ""); });
}

void gov_engine_close(gov_engine* engine) {
  // From the engine's own on_step, the step that runs the callback still uses the engine (and
  // the watcher would join itself): refused, as every other call from there is, by doing nothing.
  if (engine != nullptr && gov::EngineInternals::in_own_callback(engine->engine)) return;
  delete engine;
}

gov_status gov_engine_submit(gov_engine* engine, int64_t at_ms, const gov_task* task, gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_submit", [&] {
    require(task, "the task is NULL");
    std::vector<gov::Event> events;
    events.push_back(gov::Event::submit(task_from_c(*task)));
    hand_out(engine_of(engine)->engine.step(at_ms, events), out);
  }, [&](char* text, size_t size) { std::snprintf(text, size, "submitting task `%s`", task && task->id ? task->id : ""); });
}

gov_status gov_engine_finish(gov_engine* engine, int64_t at_ms, const char* id, gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_finish", [&] {
    require(id, "the task id is NULL");
    std::vector<gov::Event> events;
    events.push_back(gov::Event::finish(id));
    hand_out(engine_of(engine)->engine.step(at_ms, events), out);
  }, [&](char* text, size_t size) { std::snprintf(text, size, "finishing task `%s`", id ? id : ""); });
}

gov_status gov_engine_cancel(gov_engine* engine, int64_t at_ms, const char* id, gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_cancel", [&] {
    require(id, "the task id is NULL");
    std::vector<gov::Event> events;
    events.push_back(gov::Event::cancel(id));
    hand_out(engine_of(engine)->engine.step(at_ms, events), out);
  }, [&](char* text, size_t size) { std::snprintf(text, size, "cancelling task `%s`", id ? id : ""); });
}

gov_status gov_engine_step(gov_engine* engine, int64_t at_ms, const gov_event* events, size_t count,
                           gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_step", [&] {
    if (count > 0) require(events, "the events are NULL");
    if (count > GOV_MAX_STEP_EVENTS) {
      throw gov::Error(gov::ErrorCode::invalid_argument,
                       "gov_engine_step: count " + std::to_string(count) + " is over the bound of " +
                           std::to_string(GOV_MAX_STEP_EVENTS) + " events per step (GOV_MAX_STEP_EVENTS)");
    }
    std::vector<gov::Event> converted;
    converted.reserve(count);
    for (size_t i = 0; i < count; ++i) converted.push_back(event_from_c(events[i]));
    hand_out(engine_of(engine)->engine.step(at_ms, converted), out);
  }, [&](char* text, size_t size) { std::snprintf(text, size, "applying a step of %zu events", count); });
}

gov_status gov_engine_tick(gov_engine* engine, int64_t at_ms, gov_decisions** out) {
  clear(out);
  return guarded(
      "gov_engine_tick", [&] { hand_out(engine_of(engine)->engine.tick(at_ms), out); },
      [&](char* text, size_t size) {
        std::snprintf(text, size, "advancing the engine's time to %lld ms", static_cast<long long>(at_ms));
      });
}

gov_status gov_engine_reload(gov_engine* engine, gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_reload", [&] { hand_out(engine_of(engine)->engine.reload(), out); });
}

gov_status gov_engine_reload_version(gov_engine* engine, int64_t version, gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_reload_version", [&] { hand_out(engine_of(engine)->engine.reload(version), out); });
}

gov_status gov_engine_pin(gov_engine* engine, int64_t version, gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_pin", [&] { hand_out(engine_of(engine)->engine.pin(version), out); });
}

gov_status gov_engine_unpin(gov_engine* engine) {
  return guarded("gov_engine_unpin", [&] { engine_of(engine)->engine.unpin(); });
}

gov_status gov_engine_last_reload_error(const gov_engine* engine, gov_status* code, char** message) {
  clear(message);
  if (code != nullptr) *code = GOV_OK;
  return guarded("gov_engine_last_reload_error", [&] {
    require(code, "the code out-parameter is NULL");
    require(message, "the message out-parameter is NULL");
    const std::optional<gov::Error> error = engine_of(engine)->engine.last_reload_error();
    *message = copy_string(error ? std::string(error->what()) : std::string());
    *code = error ? static_cast<gov_status>(static_cast<int>(error->code())) : GOV_OK;
  });
}

gov_status gov_engine_watch(gov_engine* engine, int64_t interval_ms) {
  return guarded("gov_engine_watch", [&] {
    gov::Engine& e = engine_of(engine)->engine;
    if (interval_ms <= 0) {
      e.stop_watching();
      return;
    }
    e.watch(std::chrono::milliseconds(interval_ms));
  });
}

gov_status gov_engine_decision(const gov_engine* engine, const char* id, gov_decisions** out) {
  clear(out);
  return guarded("gov_engine_decision", [&] {
    require(out, "the out-parameter is NULL");
    require(id, "the task id is NULL");
    std::optional<gov::Decision> decision = engine_of(engine)->engine.decision(id);
    if (!decision) throw gov::Error(gov::ErrorCode::not_found, std::string("no decision about task `") + id + "`");
    gov::Step step;
    step.sequence = decision->sequence;
    step.version = decision->version;
    step.at = decision->at;
    step.decisions.push_back(std::move(*decision));
    *out = new gov_decisions(std::move(step));
  });
}

gov_status gov_engine_explain_json(const gov_engine* engine, const char* id, char** out) {
  clear(out);
  return guarded("gov_engine_explain_json", [&] {
    require(out, "the out-parameter is NULL");
    require(id, "the task id is NULL");
    std::optional<gov::Explanation> explanation = engine_of(engine)->engine.explain(id);
    if (!explanation) throw gov::Error(gov::ErrorCode::not_found, std::string("no task `") + id + "`");
    *out = copy_string(gov::to_json(*explanation));
  });
}

/// What an out-parameter holds when a check fails: `invalid`, never a zeroed struct, whose verdict
/// 0 is ADMIT (a caller that forgot the status read a failed check as an admission), and "" for
/// the strings, which gov.h says are never NULL.
static gov_admission failed_admission() {
  gov_admission out{};
  out.verdict = GOV_VERDICT_INVALID;
  out.flavor = "";
  out.rule = "";
  return out;
}

gov_status gov_engine_check(const gov_engine* engine, const gov_task* task, gov_admission* out) {
  if (out != nullptr) *out = failed_admission();
  return guarded("gov_engine_check", [&] {
    require(out, "the out-parameter is NULL");
    require(task, "the task is NULL");
    admission_to_c(engine_of(engine)->engine.check(scratch_task_from_c(*task)), *out);
  });
}

gov_status gov_engine_prepare(const gov_engine* engine, const gov_task* task, gov_prepared_task** out) {
  clear(out);
  return guarded("gov_engine_prepare", [&] {
    require(out, "the out-parameter is NULL");
    require(task, "the task is NULL");
    *out = new gov_prepared_task{engine_of(engine)->engine.prepare(task_from_c(*task))};
  });
}

gov_status gov_engine_check_prepared(const gov_engine* engine, const gov_prepared_task* task, gov_admission* out) {
  if (out != nullptr) *out = failed_admission();
  return guarded("gov_engine_check_prepared", [&] {
    require(out, "the out-parameter is NULL");
    require(task, "the prepared task is NULL");
    admission_to_c(engine_of(engine)->engine.check(task->task), *out);
  });
}

void gov_prepared_task_free(gov_prepared_task* task) {
  delete task;
}

int64_t gov_engine_version(const gov_engine* engine) {
  return engine ? engine->engine.version() : -1;
}

gov_status gov_engine_metrics(const gov_engine* engine, char** out) {
  clear(out);
  return guarded("gov_engine_metrics", [&] {
    require(out, "the out-parameter is NULL");
    *out = copy_string(engine_of(engine)->engine.metrics());
  });
}

gov_status gov_engine_snapshot(const gov_engine* engine, gov_snapshot** out) {
  clear(out);
  return guarded("gov_engine_snapshot", [&] {
    require(out, "the out-parameter is NULL");
    *out = new gov_snapshot(engine_of(engine)->engine.snapshot());
  });
}

int64_t gov_snapshot_version(const gov_snapshot* snapshot) {
  return snapshot ? snapshot->snapshot.version : 0;
}

uint64_t gov_snapshot_sequence(const gov_snapshot* snapshot) {
  return snapshot ? snapshot->snapshot.sequence : 0;
}

size_t gov_snapshot_usage_count(const gov_snapshot* snapshot) {
  return snapshot ? snapshot->usage.size() : 0;
}

const gov_usage_row* gov_snapshot_usage(const gov_snapshot* snapshot, size_t index) {
  if (snapshot == nullptr || index >= snapshot->usage.size()) return nullptr;
  return &snapshot->usage[index];
}

const char* gov_snapshot_json(const gov_snapshot* snapshot) {
  if (snapshot == nullptr) return "";
  try {
    std::call_once(snapshot->json_once, [snapshot] { snapshot->json = gov::to_json(snapshot->snapshot); });
  } catch (...) {
    fail(GOV_ERROR_OUT_OF_MEMORY, "out of memory");
    return nullptr;
  }
  return snapshot->json.c_str();
}

void gov_snapshot_free(gov_snapshot* snapshot) {
  delete snapshot;
}

// ------------------------------------------------------------------ cluster state

gov_status gov_engine_load_state_json(gov_engine* engine, const char* json, size_t length, gov_load_failures** out) {
  clear(out);
  return guarded("gov_engine_load_state_json", [&] {
    if (length > 0) require(json, "the state text is NULL");
    auto list = std::make_unique<gov_load_failures>();
    list->failures = engine_of(engine)->engine.load_state_json(std::string_view(json ? json : "", length));
    list->views.reserve(list->failures.size());
    for (const gov::LoadFailure& failure : list->failures) {
      const gov_state_list which =
          failure.list == gov::LoadFailure::List::admitted ? GOV_STATE_ADMITTED : GOV_STATE_PENDING;
      list->views.push_back({which, failure.index, failure.message.c_str()});
    }
    if (out != nullptr) *out = list.release();
  }, [&](char* text, size_t size) { std::snprintf(text, size, "loading a state of %zu bytes", length); });
}

size_t gov_load_failures_count(const gov_load_failures* list) {
  return list ? list->views.size() : 0;
}

const gov_load_failure* gov_load_failures_get(const gov_load_failures* list, size_t index) {
  if (list == nullptr || index >= list->views.size()) return nullptr;
  return &list->views[index];
}

void gov_load_failures_free(gov_load_failures* list) {
  delete list;
}

gov_status gov_engine_export_state_json(const gov_engine* engine, char** out) {
  clear(out);
  return guarded("gov_engine_export_state_json", [&] {
    require(out, "the out-parameter is NULL");
    *out = copy_string(gov::to_json(engine_of(engine)->engine.export_state()));
  }, [](char* text, size_t size) { std::snprintf(text, size, "exporting the state"); });
}

// ------------------------------------------------------------------ traces

gov_status gov_trace_read(const gov_engine* engine, const char* json, size_t length, gov_trace** out) {
  clear(out);
  return guarded("gov_trace_read", [&] {
    require(out, "the out-parameter is NULL");
    if (length > 0) require(json, "the trace text is NULL");
    auto trace = std::make_unique<gov_trace>();
    trace->events = gov::read_trace(engine_of(engine)->engine, std::string_view(json ? json : "", length));
    trace->views.reserve(trace->events.size());
    trace->labels.resize(trace->events.size());
    trace->partitions.resize(trace->events.size());
    trace->pod_sets.resize(trace->events.size());
    trace->pod_set_partitions.resize(trace->events.size());
    for (size_t i = 0; i < trace->events.size(); ++i) {
      const gov::TimedEvent& e = trace->events[i];
      gov_event view{};
      view.at_ms = e.at;
      view.kind = static_cast<gov_event_kind>(e.event.kind);
      gov_task_init(&view.task);
      view.id = e.event.kind == gov::Event::Kind::submit ? e.event.task.id.c_str() : e.event.id.c_str();
      if (e.event.kind == gov::Event::Kind::submit) {
        const gov::Task& t = e.event.task;
        view.task.id = t.id.c_str();
        view.task.team = t.team.c_str();
        view.task.priority = t.priority ? t.priority->c_str() : nullptr;
        view.task.instance_type = t.instance_type ? t.instance_type->c_str() : nullptr;
        view.task.instances = t.instances.value_or(GOV_UNSET);
        for (size_t r = 0; r < GOV_RESOURCE_COUNT; ++r) view.task.amounts[r] = t.amounts[r].value_or(GOV_UNSET);
        view.task.pods = t.pods.value_or(GOV_UNSET);
        view.task.duration_ms = t.duration.value_or(GOV_UNSET);
        view.task.created_ms = t.created.value_or(GOV_UNSET);
        for (const auto& [key, value] : t.labels) trace->labels[i].push_back({key.c_str(), value.c_str()});
        view.task.labels = trace->labels[i].data();
        view.task.label_count = trace->labels[i].size();
        for (const auto& [profile, count] : t.partitions) trace->partitions[i].push_back({profile.c_str(), count});
        view.task.partitions = trace->partitions[i].data();
        view.task.partition_count = trace->partitions[i].size();
        trace->pod_set_partitions[i].resize(t.pod_sets.size());
        for (size_t k = 0; k < t.pod_sets.size(); ++k) {
          const gov::PodSet& p = t.pod_sets[k];
          for (const auto& [profile, count] : p.partitions) trace->pod_set_partitions[i][k].push_back({profile.c_str(), count});
          gov_pod_set set;
          gov_pod_set_init(&set);
          set.name = p.name.c_str();
          set.instance_type = p.instance_type ? p.instance_type->c_str() : nullptr;
          set.instances = p.instances.value_or(GOV_UNSET);
          for (size_t r = 0; r < GOV_RESOURCE_COUNT; ++r) set.amounts[r] = p.amounts[r].value_or(GOV_UNSET);
          set.pods = p.pods;
          set.partitions = trace->pod_set_partitions[i][k].data();
          set.partition_count = trace->pod_set_partitions[i][k].size();
          trace->pod_sets[i].push_back(set);
        }
        view.task.pod_sets = trace->pod_sets[i].data();
        view.task.pod_set_count = trace->pod_sets[i].size();
      }
      trace->views.push_back(view);
    }
    *out = trace.release();
  }, [&](char* text, size_t size) { std::snprintf(text, size, "reading a trace of %zu bytes", length); });
}

size_t gov_trace_count(const gov_trace* trace) {
  return trace ? trace->views.size() : 0;
}

const gov_event* gov_trace_get(const gov_trace* trace, size_t index) {
  if (trace == nullptr || index >= trace->views.size()) return nullptr;
  return &trace->views[index];
}

void gov_trace_free(gov_trace* trace) {
  delete trace;
}

}  // extern "C"
