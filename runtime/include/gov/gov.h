/* gov.h — the C ABI of libgov, for controllers in C, Go (cgo), Rust, Python (ctypes), ...
 *
 * The same engine as gov/engine.hpp behind opaque handles. Conventions, for every function:
 *  - Errors: functions returning gov_status return GOV_OK or an error code; the reason is then
 *    in gov_last_error() (thread-local: the last failure on the calling thread). No C++
 *    exception ever crosses this boundary. On error, out-parameters are set to NULL.
 *  - Ownership: a pointer returned through an out-parameter (gov_engine, gov_decisions,
 *    gov_trace, gov_snapshot, char*) belongs to the caller, who frees it with the matching
 *    gov_*_free / gov_engine_close exactly once. Pointers into an object (strings, structs,
 *    arrays) stay valid until that object is freed. Strings are UTF-8, NUL-terminated, never
 *    NULL (empty when absent).
 *  - Thread-safety: a gov_engine may be used from many threads at once (see gov/engine.hpp:
 *    state changes are serialised; queries run in parallel; a reload swaps the policy
 *    atomically). gov_decisions, gov_trace and gov_snapshot objects are immutable: any number
 *    of threads may read one; free it once, after every reader is done.
 *  - Units: times are milliseconds; amounts are base units (gpu, neuron, efa: devices; vcpu:
 *    millicores; memory: MiB). The JSON forms print seconds, vCPUs and GiB, as traces do.
 */
#ifndef GOV_GOV_H
#define GOV_GOV_H

#include <stddef.h>
#include <stdint.h>

#include "gov/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ basics */

typedef enum gov_status {
  GOV_OK = 0,
  GOV_ERROR_INVALID_ARGUMENT = 1, /* a NULL handle, a malformed task or trace, bad options */
  GOV_ERROR_NOT_FOUND = 2,        /* no such file, store, policy, version or task */
  GOV_ERROR_POLICY = 3,           /* the policy has errors (the message has the diagnostics) */
  GOV_ERROR_STORE = 4,            /* the store failed: corrupt, busy, newer schema, ... */
  GOV_ERROR_IO = 5,               /* a file could not be read */
  GOV_ERROR_OUT_OF_MEMORY = 6,    /* the message says what was being done */
  GOV_ERROR_INTERNAL = 7,         /* a bug in gov */
  GOV_ERROR_REENTRANT = 8,        /* called from the engine's own on_step callback: refused */
  GOV_ERROR_LIMIT = 9             /* a documented bound was reached (max_tasks); nothing changed */
} gov_status;

/* The message of the last failed call on this thread ("" when none failed yet). Valid until the
 * next failing call on this thread; copy it to keep it. Never NULL. */
GOV_API const char* gov_last_error(void);
/* "ok", "invalid-argument", "not-found", "policy", "store", "io", "out-of-memory", "internal",
 * "reentrant", "limit" ("unknown" for any other value). */
GOV_API const char* gov_status_name(gov_status status);
/* The library's version ("0.1.0") and the version of this ABI (GOV_ABI_VERSION when they match). */
#define GOV_ABI_VERSION 2 /* 2: gov_task gained pod_sets (and, before, partitions and created_ms) */
GOV_API const char* gov_version(void);
GOV_API int gov_abi_version(void);
/* Frees a string the library returned (gov_engine_explain_json, ...). NULL is ignored. */
GOV_API void gov_string_free(char* text);

/* A time after every duration-based finish: gov_engine_tick(e, GOV_TIME_FOREVER, ...) runs the
 * remaining finishes, as `gov simulate` does after a trace's last event. It is also the last time
 * the engine calls take: a later `at_ms` is GOV_ERROR_INVALID_ARGUMENT. */
#define GOV_TIME_FOREVER (INT64_MAX / 4)
/* An int64 field that is not set (optional amounts, instances, pods, duration). */
#define GOV_UNSET INT64_MIN
/* A borrowing limit that is not set (unlimited). */
#define GOV_UNLIMITED INT64_MAX

typedef enum gov_resource {
  GOV_GPU = 0,
  GOV_NEURON = 1,
  GOV_VCPU = 2,   /* millicores */
  GOV_MEMORY = 3, /* MiB */
  GOV_EFA = 4,
  GOV_RESOURCE_COUNT = 5
} gov_resource;

/* ------------------------------------------------------------------ tasks and events */

typedef struct gov_label {
  const char* key;
  const char* value;
} gov_label;

/* A count of GPU partitions of one MIG profile (the Kubernetes resource nvidia.com/<profile>). */
typedef struct gov_partition {
  const char* profile; /* "mig-1g.10gb" */
  int64_t count;
} gov_partition;

/* One pod set of a task of several (Kueue's `spec.podSets`: a PyTorchJob's master and worker):
 * `pods` pods, each requesting `instances` or `amounts` and `partitions`, on `instance_type` (NULL:
 * the task's). Initialise with gov_pod_set_init. Kueue assigns each pod set an instance type and
 * admits all of them or none. */
typedef struct gov_pod_set {
  const char* name; /* unique within the task */
  const char* instance_type;
  int64_t instances;                   /* GOV_UNSET, or whole instances per pod */
  int64_t amounts[GOV_RESOURCE_COUNT]; /* per pod: each GOV_UNSET or an amount */
  int64_t pods;                        /* the number of pods, at least 1 */
  const gov_partition* partitions;     /* per pod; NULL / 0: none */
  size_t partition_count;
} gov_pod_set;

GOV_API void gov_pod_set_init(gov_pod_set* pod_set);

/* A task as the controller describes it. Initialise with gov_task_init (every optional field
 * GOV_UNSET / NULL), then set what applies. The engine copies what it needs during the call.
 * Unknown names, negative amounts or a reused id are not call errors: the decision is
 * `invalid`. Only a NULL id or team is GOV_ERROR_INVALID_ARGUMENT. */
typedef struct gov_task {
  const char* id;
  const char* team;
  const char* priority;      /* a priority class, or NULL: the default class */
  const char* instance_type; /* NULL: the team's instance types in declared order */
  int64_t instances;         /* whole instances, or GOV_UNSET */
  int64_t amounts[GOV_RESOURCE_COUNT]; /* base units, each GOV_UNSET or an amount; per pod with pods */
  int64_t pods;        /* GOV_UNSET, or the number of pods (amounts are per pod) */
  int64_t duration_ms; /* GOV_UNSET, or: finishes this long after it was last admitted */
  const gov_label* labels;
  size_t label_count;
  /* GPU partitions per MIG profile (`{"mig-1g.10gb", 1}`), per pod with pods; NULL / 0: none.
   * Decisions name partitions in their JSON forms (gov_decision_json); the amounts arrays hold
   * the five resources. */
  const gov_partition* partitions;
  size_t partition_count;
  /* GOV_UNSET, or its queue-order time (Kueue's creationTimestamp), at or before the time it is
   * submitted and not more than 10^12 ms before time zero (negative is fine: created before the
   * clock's zero): tasks of one priority queue by it. */
  int64_t created_ms;
  /* Its pod sets (at most 8), when it has several: then instances, amounts, pods and partitions
   * stay unset, and instance_type is their default. NULL / 0: the task is one pod set. An
   * admitted decision names each pod set's instance type in its JSON form (`pod_sets`). */
  const gov_pod_set* pod_sets;
  size_t pod_set_count;
} gov_task;

GOV_API void gov_task_init(gov_task* task);

typedef enum gov_event_kind { GOV_EVENT_SUBMIT = 0, GOV_EVENT_FINISH = 1, GOV_EVENT_CANCEL = 2 } gov_event_kind;

/* One event: `task` for a submit, `id` for a finish or cancel (gov_trace_get sets `id` for
 * submits too). `at_ms` is set by gov_trace_get and ignored by gov_engine_step (which applies
 * all its events at one time). */
typedef struct gov_event {
  int64_t at_ms;
  gov_event_kind kind;
  gov_task task;
  const char* id;
} gov_event;

/* ------------------------------------------------------------------ decisions */

typedef enum gov_outcome {
  GOV_ADMITTED = 0,
  GOV_PENDING = 1,
  GOV_PREEMPTED = 2,
  GOV_REJECTED = 3,
  GOV_FINISHED = 4,
  GOV_CANCELLED = 5,
  GOV_INVALID = 6
} gov_outcome;

typedef enum gov_reason {
  GOV_REASON_NONE = 0,
  GOV_WAITING_FOR_QUOTA = 1,
  GOV_EXCEEDS_MAX_QUOTA = 2,
  GOV_WAITING_FOR_PREEMPTION = 3,
  GOV_NO_MATCHING_FLAVOR = 4,
  GOV_TEAM_INACTIVE = 5
} gov_reason;

typedef enum gov_preemption_kind {
  GOV_PREEMPTION_NONE = 0,
  GOV_PREEMPTION_IN_TEAM = 1,
  GOV_PREEMPTION_RECLAIM = 2,
  GOV_PREEMPTION_FAIR_SHARING = 3
} gov_preemption_kind;

/* Amounts of some resources: value[r] is meaningful when bit r of `present` is set. */
typedef struct gov_amounts {
  int64_t value[GOV_RESOURCE_COUNT];
  uint32_t present;
} gov_amounts;

typedef struct gov_warning {
  const char* rule;
  const char* message;
} gov_warning;

/* One decision: a line of the decision stream (docs/interfaces.md) with the policy version it was
 * made under and the engine step that made it. Fields that do not apply to `outcome` are
 * empty, zero or NONE. */
typedef struct gov_decision {
  int64_t at_ms;
  int64_t version;
  uint64_t sequence;
  const char* task;
  const char* team;
  gov_outcome outcome;
  /* admitted */
  const char* flavor;
  gov_amounts usage;
  gov_amounts borrowed;
  const gov_warning* warnings;
  size_t warning_count;
  /* pending */
  gov_reason reason;
  gov_amounts short_of;
  gov_amounts maximum;
  const char* const* victims;
  size_t victim_count;
  /* preempted */
  const char* by;
  gov_preemption_kind kind;
  /* rejected */
  const char* rule;
  /* all but finished and cancelled */
  const char* message;
} gov_decision;

/* An immutable list of decisions: one engine step (or one task's latest decision). */
typedef struct gov_decisions gov_decisions;

GOV_API size_t gov_decisions_count(const gov_decisions* list);
/* The index-th decision (NULL when out of range). */
GOV_API const gov_decision* gov_decisions_get(const gov_decisions* list, size_t index);
/* The last decision about `task` in the list, or NULL. */
GOV_API const gov_decision* gov_decisions_find(const gov_decisions* list, const char* task);
/* The step's sequence number (0: nothing happened) and policy version. */
GOV_API uint64_t gov_decisions_sequence(const gov_decisions* list);
GOV_API int64_t gov_decisions_version(const gov_decisions* list);
/* The index-th decision as one line of `gov simulate --format jsonl` (no newline), or NULL when
 * out of range. Owned by the list. */
GOV_API const char* gov_decision_json(const gov_decisions* list, size_t index);
/* Every decision of the list, one JSON line each, each ending with "\n" ("" for none). Owned by
 * the list. */
GOV_API const char* gov_decisions_json(const gov_decisions* list);
GOV_API void gov_decisions_free(gov_decisions* list);

/* ------------------------------------------------------------------ engines */

typedef struct gov_engine gov_engine;

/* Called with every step of the engine, in order, while its state lock is held: it must be
 * quick and must not call into the engine (such a call returns GOV_ERROR_REENTRANT and changes
 * nothing). `step` is borrowed for the call only. */
typedef void (*gov_step_callback)(const gov_decisions* step, void* user_data);

typedef enum gov_back_end { GOV_BACK_END_JIT = 0, GOV_BACK_END_INTERPRETER = 1 } gov_back_end;
typedef enum gov_dialect { GOV_DIALECT_HEAD = 0, GOV_DIALECT_KUEUE_V0_9 = 1 } gov_dialect;

typedef struct gov_open_options {
  const char* policy; /* in a store with several policies, which one (NULL: the only one) */
  gov_back_end back_end;
  gov_dialect dialect;
  gov_step_callback on_step; /* NULL: none */
  void* on_step_user_data;
  /* The Ed25519 public key file stored versions are signed with (NULL: none); see
   * gov::Options::verify_key_path. */
  const char* verify_key_path;
  int require_signature; /* non-zero: refuse versions not signed by the verify key */
  /* The most live (pending or admitted) tasks; a submit past it returns GOV_ERROR_LIMIT and
   * changes nothing. gov_open_options_init sets GOV_DEFAULT_MAX_TASKS; 0 means the same. */
  size_t max_tasks;
} gov_open_options;

#define GOV_DEFAULT_MAX_TASKS 1000000

GOV_API void gov_open_options_init(gov_open_options* options);

/* Opens the store at `db_path` (read-only) and loads the active version of the policy, with its
 * cached native code when `verify_key_path` is set and its signatures verify (compiled
 * otherwise). `options` may be NULL. Errors: NOT_FOUND, STORE, POLICY. */
GOV_API gov_status gov_engine_open(const char* db_path, const gov_open_options* options, gov_engine** out);
/* Loads, checks and compiles a policy file. Errors: IO, POLICY. */
GOV_API gov_status gov_engine_open_file(const char* policy_path, const gov_open_options* options, gov_engine** out);
/* Stops the engine's watcher and frees it. No other thread may use it any more. NULL is ignored.
 * Called from the engine's own on_step callback it does nothing (the step running the callback
 * still uses the engine): close it after the callback returns. */
GOV_API void gov_engine_close(gov_engine* engine);

/* State changes. Each runs one step at `at_ms` and, when `out` is not NULL, returns every
 * decision of the step (free it with gov_decisions_free). A finish or cancel of an id that is
 * not live (unknown, or already ended) changes no task, as in a trace, and is no error: the step
 * still runs at `at_ms` (finishes due by then happen) and takes its sequence number; its
 * decisions hold none for `id`. */
GOV_API gov_status gov_engine_submit(gov_engine* engine, int64_t at_ms, const gov_task* task, gov_decisions** out);
GOV_API gov_status gov_engine_finish(gov_engine* engine, int64_t at_ms, const char* id, gov_decisions** out);
GOV_API gov_status gov_engine_cancel(gov_engine* engine, int64_t at_ms, const char* id, gov_decisions** out);
/* Several events at one time, in order, then admission until nothing changes. `count` is at
 * most GOV_MAX_STEP_EVENTS (a trace's bound on tasks); more is GOV_ERROR_INVALID_ARGUMENT. */
#define GOV_MAX_STEP_EVENTS 1000000
GOV_API gov_status gov_engine_step(gov_engine* engine, int64_t at_ms, const gov_event* events, size_t count,
                                   gov_decisions** out);
/* Advances time: duration-based finishes due by `at_ms` happen. */
GOV_API gov_status gov_engine_tick(gov_engine* engine, int64_t at_ms, gov_decisions** out);

/* Loads the store's active version (a file engine: the file again) and swaps it in when it is
 * new; live tasks carry over (see gov/engine.hpp). `out` gets the swap's step (sequence 0 when
 * nothing was new). gov_engine_reload_version loads a given version of the store. */
GOV_API gov_status gov_engine_reload(gov_engine* engine, gov_decisions** out);
GOV_API gov_status gov_engine_reload_version(gov_engine* engine, int64_t version, gov_decisions** out);
/* Starts (or re-times) a watcher thread that reloads when the active version changes; its steps
 * go to the on_step callback. interval_ms <= 0 stops it; more than a year waits a year. */
GOV_API gov_status gov_engine_watch(gov_engine* engine, int64_t interval_ms);
/* Loads `version` of the store and keeps the watcher from moving off it until gov_engine_unpin
 * (a rollback on one replica, say); `out` gets the load's step. See gov::Engine::pin. */
GOV_API gov_status gov_engine_pin(gov_engine* engine, int64_t version, gov_decisions** out);
GOV_API gov_status gov_engine_unpin(gov_engine* engine);
/* Why the latest reload failed (the watcher's, gov_engine_reload, gov_engine_pin): `*code` gets
 * its status and `*message` its message (free with gov_string_free); GOV_OK and "" when the
 * latest reload succeeded or none was made. The watcher's thread cannot hand its failures to
 * gov_last_error (it is per thread): poll this, as gov_policy_reload_failures_total says when. */
GOV_API gov_status gov_engine_last_reload_error(const gov_engine* engine, gov_status* code, char** message);

/* Queries. */
/* The latest decision about `id` as a one-entry list. Errors: NOT_FOUND for an unknown id. */
GOV_API gov_status gov_engine_decision(const gov_engine* engine, const char* id, gov_decisions** out);
/* Why `id` is where it is, as JSON (free with gov_string_free). Errors: NOT_FOUND. */
GOV_API gov_status gov_engine_explain_json(const gov_engine* engine, const char* id, char** out);
/* The hot path of an admission controller: would `task` be admitted if submitted now, and if
 * not, why not. Changes nothing, runs in parallel with other queries, allocates nothing in
 * steady state for a valid task (an INVALID answer builds its reason and may allocate). It does not
 * look at the id: a task gov_engine_submit would call invalid for its id alone is answered on its
 * team and amounts. Pending tasks are not simulated: ADMIT means "fits now". */
typedef enum gov_verdict {
  GOV_VERDICT_ADMIT = 0,   /* fits now in `flavor` (borrowing when `borrows`) */
  GOV_VERDICT_REJECT = 1,  /* the deny rule `rule` matches */
  GOV_VERDICT_PENDING = 2, /* does not fit now, or its team is inactive */
  GOV_VERDICT_INVALID = 3  /* unknown team, class or instance type, or bad amounts */
} gov_verdict;

typedef struct gov_admission {
  gov_verdict verdict;
  const char* flavor; /* ADMIT: the instance type, else ""; valid until the engine is closed */
  int borrows;        /* ADMIT: 1 when it borrows from other teams */
  const char* rule;   /* REJECT: the first matching deny rule, else ""; valid as `flavor` */
  uint32_t warnings;  /* matching warn rules (and deny rules after the first) */
  int32_t priority;   /* the task's effective priority */
  int64_t version;    /* the policy version it was computed under */
  uint64_t sequence;  /* the last step of the state it was computed against */
} gov_admission;

/* On an error `out` holds GOV_VERDICT_INVALID with "" for its strings (never ADMIT). */
GOV_API gov_status gov_engine_check(const gov_engine* engine, const gov_task* task, gov_admission* out);

/* A task resolved once for repeated checks (what a controller keeps per workload): checking
 * it costs no name lookup and no copy. It stays usable after a reload (it is then resolved again
 * at each check, as gov_engine_check does; prepare it again for the fast path). Immutable:
 * threads may share one. Free with gov_prepared_task_free. */
typedef struct gov_prepared_task gov_prepared_task;
GOV_API gov_status gov_engine_prepare(const gov_engine* engine, const gov_task* task, gov_prepared_task** out);
GOV_API gov_status gov_engine_check_prepared(const gov_engine* engine, const gov_prepared_task* task,
                                             gov_admission* out);
GOV_API void gov_prepared_task_free(gov_prepared_task* task);

/* The running policy version, or -1 for a NULL engine. Lock-free. */
GOV_API int64_t gov_engine_version(const gov_engine* engine);

/* The engine's metrics in Prometheus' text exposition format (version 0.0.4), NUL-terminated
 * (free with gov_string_free): Kueue's ClusterQueue metrics and gov's own
 * (docs/observability.md). The host serves it on its own /metrics; the library opens no port.
 * Runs in parallel with other queries. */
GOV_API gov_status gov_engine_metrics(const gov_engine* engine, char** out);

/* A snapshot: usage per team, flavor and resource, from one step. */
typedef struct gov_usage_row {
  const char* team;
  const char* flavor;
  gov_resource resource;
  int64_t nominal;
  int64_t borrowing_limit; /* GOV_UNLIMITED when unlimited */
  int64_t used;
  int64_t borrowed;
} gov_usage_row;

typedef struct gov_snapshot gov_snapshot;

GOV_API gov_status gov_engine_snapshot(const gov_engine* engine, gov_snapshot** out);
GOV_API int64_t gov_snapshot_version(const gov_snapshot* snapshot);
GOV_API uint64_t gov_snapshot_sequence(const gov_snapshot* snapshot);
GOV_API size_t gov_snapshot_usage_count(const gov_snapshot* snapshot);
GOV_API const gov_usage_row* gov_snapshot_usage(const gov_snapshot* snapshot, size_t index);
/* The whole snapshot (usage, cohort, live tasks) as JSON. Owned by the snapshot. */
GOV_API const char* gov_snapshot_json(const gov_snapshot* snapshot);
GOV_API void gov_snapshot_free(gov_snapshot* snapshot);

/* ------------------------------------------------------------------ cluster state (restarts) */

/* A controller that restarts hands a fresh engine the cluster's state, and the engine decides on
 * exactly as the one that stopped would have (docs/embedding.md "Restart with state"). The state
 * is a JSON document, the one `gov eval --state` reads:
 *   {"at": s,
 *    "admitted": [{"task": {...}, "submitted_at": s, "admitted_at": s, "flavor": "ml.g5.8xlarge",
 *                  "warnings": [{"rule": "...", "message": "..."}]}],
 *    "pending": [{"task": {...}, "submitted_at": s, "reason": "waiting-for-quota",
 *                 "message": "...", "parked": false, "warnings": [...]}]}
 * A task of several pod sets may add "pod_set_flavors": [...] (one instance type per pod set), a
 * task of a team with resource groups "group_flavors": [...] (one per group it asks something of,
 * pod set by pod set; docs/semantics-decisions.md "Resource groups"). gov_engine_export_state_json
 * writes both where they apply.
 * Tasks are a trace's submit objects (docs/trace-format.md), times are seconds. A controller may
 * write it from its own records (only `task` is required) or keep what
 * gov_engine_export_state_json returned. */

typedef enum gov_state_list { GOV_STATE_ADMITTED = 0, GOV_STATE_PENDING = 1 } gov_state_list;

/* One entry of a state that was not loaded (it is skipped; the others load). */
typedef struct gov_load_failure {
  gov_state_list list;
  size_t index;        /* in the document's `admitted` or `pending` array */
  const char* message; /* e.g. "field \"team\": unknown team \"x\"; ..." or "task id `a` appears twice" */
} gov_load_failure;

/* An immutable list of load failures, in list and index order. */
typedef struct gov_load_failures gov_load_failures;

/* Loads a state document into an engine that has no tasks yet (right after opening it). Each
 * entry that does not read or load is skipped and listed in *out (an empty list when every entry
 * loaded; free it with gov_load_failures_free; `out` may be NULL). Errors: INVALID_ARGUMENT when
 * the document is not a state (malformed JSON, an unknown top-level key, a list that is not an
 * array; nothing is loaded and the message says where) or the engine already has tasks. `json`
 * need not be NUL-terminated. */
GOV_API gov_status gov_engine_load_state_json(gov_engine* engine, const char* json, size_t length,
                                              gov_load_failures** out);
GOV_API size_t gov_load_failures_count(const gov_load_failures* list);
/* The index-th failure (NULL when out of range). */
GOV_API const gov_load_failure* gov_load_failures_get(const gov_load_failures* list, size_t index);
GOV_API void gov_load_failures_free(gov_load_failures* list);

/* The engine's live tasks as a state document (free with gov_string_free): what
 * gov_engine_load_state_json of a fresh engine takes back to go on byte for byte as this one. */
GOV_API gov_status gov_engine_export_state_json(const gov_engine* engine, char** out);

/* ------------------------------------------------------------------ traces */

/* A trace (docs/interfaces.md "Trace file") read and checked against the engine's current policy. */
typedef struct gov_trace gov_trace;

/* `json` need not be NUL-terminated. Errors: INVALID_ARGUMENT naming the event and field. */
GOV_API gov_status gov_trace_read(const gov_engine* engine, const char* json, size_t length, gov_trace** out);
GOV_API size_t gov_trace_count(const gov_trace* trace);
GOV_API const gov_event* gov_trace_get(const gov_trace* trace, size_t index);
GOV_API void gov_trace_free(gov_trace* trace);

#ifdef __cplusplus
}
#endif

#endif /* GOV_GOV_H */
