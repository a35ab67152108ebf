// The plain value types of the embedding API: what a controller asks the engine (tasks and
// events) and what it answers (decisions, explanations, snapshots). Copyable, comparable, no
// references into the engine: a value stays valid after reloads and after the engine is gone.
// C++17; no gov-internal headers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gov/export.h"

namespace gov {

/// Milliseconds. Any epoch will do (a trace's start, the Unix epoch); it only has to be the
/// same for every call on one engine.
using Time = std::int64_t;

/// A time after every duration-based finish: `tick(kForever)` runs every remaining finish,
/// exactly as `gov simulate` does after the last event of a trace.
inline constexpr Time kForever = std::numeric_limits<Time>::max() / 4;

/// The earliest queue-order time a task may give (`Task::created`, a state entry's
/// `submitted_at`): 10^12 ms (about 31.7 years) before time zero, so that every time the engine
/// compares stays far from int64's ends. An earlier `created` makes the task `invalid`.
inline constexpr Time kEarliestCreated = -1'000'000'000'000;

/// Resources in their base units: whole devices for gpu, neuron and efa; millicores for vcpu;
/// MiB for memory. (The JSON forms print vCPUs and GiB, as traces do.)
enum class Resource : std::uint8_t { gpu = 0, neuron = 1, vcpu = 2, memory = 3, efa = 4 };
inline constexpr std::size_t kResourceCount = 5;
/// A borrowing limit that is not set: the team may borrow without limit.
inline constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

/// One resource's amount, in base units; or, when `partition` names a GPU partition profile
/// (NVIDIA MIG, `mig-1g.10gb`: the Kubernetes resource `nvidia.com/mig-1g.10gb`), a count of
/// partitions of that profile (`resource` is then Resource::gpu, the device they cut).
struct ResourceAmount {
  Resource resource = Resource::gpu;
  std::int64_t amount = 0;
  std::string partition{};  // empty: `resource`
  friend bool operator==(const ResourceAmount& a, const ResourceAmount& b) {
    return a.resource == b.resource && a.amount == b.amount && a.partition == b.partition;
  }
};
using ResourceAmounts = std::vector<ResourceAmount>;

/// One pod set of a task of several (Kueue's `spec.podSets`): `pods` pods, each requesting the
/// amounts, partitions or whole instances given here. Kueue admits a workload's pod sets all or
/// nothing, each on its own flavor (docs/semantics-decisions.md "Pod sets").
struct PodSet {
  std::string name;                          // `master`, `worker`: unique within the task
  std::optional<std::string> instance_type;  // absent: the task's, else the team's in declared order
  std::optional<std::int64_t> instances;     // whole instances per pod
  std::array<std::optional<std::int64_t>, kResourceCount> amounts{};  // per pod, base units
  std::int64_t pods = 1;
  std::vector<std::pair<std::string, std::int64_t>> partitions;  // per pod, as Task::partitions

  PodSet& set(Resource resource, std::int64_t amount) {
    amounts[static_cast<std::size_t>(resource)] = amount;
    return *this;
  }
};

/// Kueue's limit on pod sets per workload (the Workload CRD's `maxItems` of `spec.podSets`).
inline constexpr std::size_t kMaxPodSets = 8;

/// A task as a controller describes it: names, not indices. Unknown names, negative amounts or
/// a reused id are not errors of the call: the engine answers with an `invalid` decision.
struct Task {
  std::string id;
  std::string team;
  std::optional<std::string> priority;       // a priority class; absent: the default class, else 0
  std::optional<std::string> instance_type;  // absent: the team's instance types in declared order
  /// Whole instances of the instance type (every resource of that many instances).
  std::optional<std::int64_t> instances;
  /// Per-resource amounts in base units (only those given count); per pod when `pods` is set.
  std::array<std::optional<std::int64_t>, kResourceCount> amounts{};
  std::optional<std::int64_t> pods;  // pods × amounts
  /// GPU partitions per MIG profile (`{"mig-1g.10gb", 1}`), per pod when `pods` is set; each
  /// profile once. Beside `instances` or amounts alike.
  std::vector<std::pair<std::string, std::int64_t>> partitions;
  std::vector<std::pair<std::string, std::string>> labels;
  std::optional<Time> duration;  // finishes this long after it was last admitted
  /// Its queue-order time (Kueue's creationTimestamp), at or before the time it is submitted and
  /// not before kEarliestCreated (negative is fine: created before the clock's zero); absent: the
  /// time it is submitted. Tasks of one priority queue by it, then by id.
  std::optional<Time> created;
  /// Its pod sets, when it has several (or one not named `main`): then `instances`, `amounts`,
  /// `pods` and `partitions` stay unset, and `instance_type` is the pod sets' default. Empty: the
  /// task is the one pod set `main` those fields describe.
  std::vector<PodSet> pod_sets;

  /// The amount of one resource (base units); `set` for readable construction.
  Task& set(Resource resource, std::int64_t amount) {
    amounts[static_cast<std::size_t>(resource)] = amount;
    return *this;
  }
};

/// Something that happens to a task, for Engine::step (several events at one time).
struct Event {
  enum class Kind : std::uint8_t { submit, finish, cancel };
  Kind kind = Kind::submit;
  Task task;       // submit
  std::string id;  // finish, cancel

  static Event submit(Task task) { return Event{Kind::submit, std::move(task), {}}; }
  static Event finish(std::string id) { return Event{Kind::finish, {}, std::move(id)}; }
  static Event cancel(std::string id) { return Event{Kind::cancel, {}, std::move(id)}; }
};

/// An event with its time, as read from a trace (read_trace).
struct TimedEvent {
  Time at = 0;
  Event event;
};

enum class Outcome : std::uint8_t { admitted, pending, preempted, rejected, finished, cancelled, invalid };
enum class PendingReason : std::uint8_t {
  waiting_for_quota,
  exceeds_max_quota,
  waiting_for_preemption,
  no_matching_flavor,
  team_inactive,
};
enum class PreemptionKind : std::uint8_t { in_team, reclaim, fair_sharing };
/// Where a task is in its life.
enum class TaskState : std::uint8_t { pending, admitted, finished, cancelled, rejected, invalid };

struct RuleWarning {
  std::string rule;
  std::string message;
  friend bool operator==(const RuleWarning& a, const RuleWarning& b) {
    return a.rule == b.rule && a.message == b.message;
  }
};

/// Where one pod set of an admitted task of several pod sets runs, and what it holds.
struct PodSetAdmission {
  std::string name;
  std::string flavor;
  std::int64_t pods = 0;
  ResourceAmounts usage;
  friend bool operator==(const PodSetAdmission& a, const PodSetAdmission& b) {
    return a.name == b.name && a.flavor == b.flavor && a.pods == b.pods && a.usage == b.usage;
  }
};

/// One decision about one task: a line of the decision stream (docs/interfaces.md), plus the policy
/// version it was made under and the step that made it. Which fields are meaningful depends on
/// `outcome`; the others are empty.
struct Decision {
  Time at = 0;
  std::string task;
  std::string team;
  Outcome outcome = Outcome::pending;
  // admitted
  std::string flavor;
  ResourceAmounts usage;     // what the task holds, per charged resource it requested
  ResourceAmounts borrowed;  // how much it raised its team's borrowing (nonzero entries only)
  std::vector<RuleWarning> warnings;
  /// A task of several pod sets: each pod set's flavor and usage (then `flavor` is the first
  /// pod set's and `usage` the task's total). Empty for a task of one pod set.
  std::vector<PodSetAdmission> pod_sets;
  // pending
  std::optional<PendingReason> reason;
  ResourceAmounts short_of;          // waiting-for-quota: the missing amounts, when computed
  ResourceAmounts maximum;           // exceeds-max-quota: the most the team could ever hold
  std::vector<std::string> victims;  // waiting-for-preemption
  // preempted
  std::string by;
  std::optional<PreemptionKind> kind;
  // rejected
  std::string rule;
  // every outcome but finished and cancelled
  std::string message;

  /// The policy version the decision was made under (a store version; for an engine compiled
  /// from a file, 1 for the first compilation and one more for every reload that changed it).
  std::int64_t version = 0;
  /// The engine step that made it: steps are numbered 1, 2, ... in the order they happened.
  std::uint64_t sequence = 0;

  friend bool operator==(const Decision& a, const Decision& b) {
    return a.at == b.at && a.task == b.task && a.team == b.team && a.outcome == b.outcome && a.flavor == b.flavor &&
           a.usage == b.usage && a.borrowed == b.borrowed && a.warnings == b.warnings && a.pod_sets == b.pod_sets &&
           a.reason == b.reason &&
           a.short_of == b.short_of && a.maximum == b.maximum && a.victims == b.victims && a.by == b.by &&
           a.kind == b.kind && a.rule == b.rule && a.message == b.message && a.version == b.version &&
           a.sequence == b.sequence;
  }
  friend bool operator!=(const Decision& a, const Decision& b) { return !(a == b); }
};

/// What one state change did: every decision it made, in order, all under one policy version.
struct Step {
  std::uint64_t sequence = 0;  // 0: nothing happened (a reload that found no new version)
  std::int64_t version = 0;
  Time at = 0;  // the engine's time after the step
  std::vector<Decision> decisions;

  /// The last decision about `task` in this step, or nullptr.
  const Decision* find(std::string_view task) const {
    for (auto it = decisions.rbegin(); it != decisions.rend(); ++it)
      if (it->task == task) return &*it;
    return nullptr;
  }
};

/// One team's quota and usage of one resource in one flavor (base units).
struct UsageRow {
  std::string team;
  std::string flavor;
  Resource resource = Resource::gpu;
  std::string partition{};  // a GPU partition profile (then `resource` is gpu), or empty
  std::int64_t nominal = 0;
  std::int64_t borrowing_limit = 0;  // kUnlimited when unlimited
  std::int64_t used = 0;
  std::int64_t borrowed = 0;  // max(0, used − nominal)
  friend bool operator==(const UsageRow& a, const UsageRow& b) {
    return a.team == b.team && a.flavor == b.flavor && a.resource == b.resource && a.partition == b.partition &&
           a.nominal == b.nominal &&
           a.borrowing_limit == b.borrowing_limit && a.used == b.used && a.borrowed == b.borrowed;
  }
};

/// The cohort's quota and usage of one resource in one flavor (base units).
struct CohortRow {
  std::string flavor;
  Resource resource = Resource::gpu;
  std::string partition{};  // a GPU partition profile (then `resource` is gpu), or empty
  std::int64_t quota = 0;  // what the teams lend (plus unreserved capacity with idle sharing)
  std::int64_t used = 0;   // what teams use beyond what they keep for themselves
  friend bool operator==(const CohortRow& a, const CohortRow& b) {
    return a.flavor == b.flavor && a.resource == b.resource && a.partition == b.partition && a.quota == b.quota &&
           a.used == b.used;
  }
};

/// A task the engine holds: pending or admitted (and, in Snapshot::tasks of a snapshot that
/// includes them, ended).
struct TaskRow {
  std::string id;
  std::string team;
  TaskState state = TaskState::pending;  // pending or admitted
  std::string flavor;                    // while admitted
  Time submitted_at = 0;
  std::optional<Time> admitted_at;  // while admitted
  bool parked = false;              // pending and waiting for a change in the cohort
  friend bool operator==(const TaskRow& a, const TaskRow& b) {
    return a.id == b.id && a.team == b.team && a.state == b.state && a.flavor == b.flavor &&
           a.submitted_at == b.submitted_at && a.admitted_at == b.admitted_at && a.parked == b.parked;
  }
};

/// The engine's state after one step, under one policy version. Rows in declaration order
/// (teams, flavors, resources); tasks in the order the engine holds them.
struct Snapshot {
  std::int64_t version = 0;
  std::uint64_t sequence = 0;  // the last step it reflects
  Time at = 0;
  std::vector<UsageRow> usage;    // every team × flavor it has a quota for × charged resource
  std::vector<CohortRow> cohort;  // every flavor × charged resource
  std::vector<TaskRow> tasks;     // pending and admitted tasks by submitted_at (the queue-order time), then id
  friend bool operator==(const Snapshot& a, const Snapshot& b) {
    return a.version == b.version && a.sequence == b.sequence && a.at == b.at && a.usage == b.usage &&
           a.cohort == b.cohort && a.tasks == b.tasks;
  }
  /// How many of `tasks` are in `state`.
  std::size_t count(TaskState state) const {
    std::size_t n = 0;
    for (const TaskRow& row : tasks) n += row.state == state ? 1 : 0;
    return n;
  }
};

/// A task that holds quota in a cluster's state (ClusterState).
struct AdmittedTask {
  Task task;
  Time submitted_at = 0;
  Time admitted_at = 0;
  /// The instance type it runs on; absent: the task's instance type, else its team's first.
  std::optional<std::string> flavor;
  /// A task of several pod sets: the instance type of each, in pod set order (then `flavor` is
  /// unused). Empty: every pod set on `flavor`.
  std::vector<std::string> pod_set_flavors = {};
  /// A task of a team with resource groups: the instance type of each (pod set, group) it asks
  /// something of, pod set by pod set, each pod set's groups in their order (then `flavor` and
  /// `pod_set_flavors` are unused). Empty: each group's first flavor, or `flavor` where the group
  /// lists it.
  std::vector<std::string> group_flavors = {};
  /// The `warn` rules that matched at its submission (rules run once, then): every later
  /// admission carries them, as in the engine that exported it.
  std::vector<RuleWarning> warnings = {};
};

/// A task that waits in a cluster's state: it competes at the next step, in queue order by its
/// submission time.
struct PendingTask {
  Task task;
  Time submitted_at = 0;
  /// Its last pending decision's reason and message (absent: none given yet): the engine emits
  /// a new pending decision only when they change, so a restart does not repeat it.
  std::optional<PendingReason> reason = std::nullopt;
  std::string message = {};
  /// A best-effort FIFO head that could not be admitted and waits for a change in the cohort
  /// (Snapshot's TaskRow::parked); not a head again until then.
  bool parked = false;
  /// As AdmittedTask::warnings.
  std::vector<RuleWarning> warnings = {};
};

/// The tasks a cluster runs and queues at one time: what a controller that restarts hands a
/// fresh engine (Engine::load_state), what a reload carries from one policy version to the next
/// (Engine::export_state), and `gov eval --state`.
struct ClusterState {
  Time at = 0;  // the engine's time after loading; no entry may be submitted or admitted after it
  std::vector<AdmittedTask> admitted;  // in admission order
  std::vector<PendingTask> pending;    // by submitted_at (the queue-order time), then id
};

/// One entry of a ClusterState that could not be loaded (it is skipped; the others load).
struct LoadFailure {
  enum class List : std::uint8_t { admitted, pending };
  List list = List::admitted;
  std::size_t index = 0;  // into ClusterState::admitted or ::pending
  std::string message;    // e.g. "unknown team `x`"
  friend bool operator==(const LoadFailure& a, const LoadFailure& b) {
    return a.list == b.list && a.index == b.index && a.message == b.message;
  }
};

/// One resource of one flavor as a task's team sees it (base units).
struct ResourceFigures {
  Resource resource = Resource::gpu;
  std::string partition{};  // a GPU partition profile (then `resource` is gpu), or empty
  std::int64_t requested = 0;
  std::int64_t guaranteed = 0;       // the team's nominal quota
  std::int64_t borrowing_limit = 0;  // kUnlimited when the team may borrow without limit
  std::int64_t in_use = 0;           // what the team's admitted tasks hold
  std::int64_t available = 0;        // what the team can take now
  std::int64_t borrowable = 0;       // the part of `available` beyond the team's own unused quota
  std::int64_t maximum = 0;          // the most the team could ever hold
  std::int64_t cohort_idle = 0;      // quota lent to the cohort and unused by anyone
};

struct FlavorExplanation {
  std::string flavor;
  /// `fits`, `fits by borrowing`, `needs preemption in the team`, `needs reclaim from other
  /// teams`, `needs preemption, but no task may be preempted for it`, `does not fit`, or `admitted`.
  std::string verdict;
  std::vector<ResourceFigures> resources;
};

struct CandidateExplanation {
  std::string task;
  std::string team;
  std::int32_t priority = 0;
  Time admitted_at = 0;
  bool chosen = false;
  std::string why;
};

/// Why a task is where it is, against the engine's current state (`gov eval`'s explanation).
struct Explanation {
  std::int64_t version = 0;  // the policy version it was computed under
  std::string task;
  std::string team;
  TaskState state = TaskState::pending;
  std::int32_t priority = 0;
  std::string priority_class;  // empty when none applies
  ResourceAmounts requested;   // every resource requested (EFA included; it is never charged)
  std::string flavor;          // the flavor it holds, when admitted
  std::vector<FlavorExplanation> flavors;        // pending: the flavors tried; admitted: its flavor
  std::vector<CandidateExplanation> candidates;  // pending and needing preemption
  std::optional<PendingReason> reason;           // of the last pending decision
  std::string message;
  std::string preempted_by;  // the task that last preempted it, if any
  std::optional<PreemptionKind> preempted_kind;
  std::vector<std::string> notes;  // what would let it run, in words
};

/// What submitting a task now would lead to (Engine::check), computed without changing the
/// engine: the rules, then the quota fit in the team's instance types in declared order.
/// Pending tasks are not simulated (in a real cycle a task ahead in the queue may take the
/// room first), so `admit` means "fits now", not "will be admitted".
struct Admission {
  enum class Verdict : std::uint8_t {
    admit,    // fits now in `flavor` (borrowing when `borrows`)
    reject,   // the deny rule `rule` matches
    pending,  // does not fit now (it would wait or need preemption), or its team is inactive
    invalid,  // unknown team, class or instance type, or bad amounts (the id is not looked at)
  };
  Verdict verdict = Verdict::invalid;
  std::string_view flavor;  // admit: the instance type; valid as long as the engine lives
  bool borrows = false;
  std::string_view rule;       // reject: the first matching deny rule; valid as the flavor
  std::uint32_t warnings = 0;  // matching warn rules (and deny rules after the first)
  std::int32_t priority = 0;   // the task's effective priority
  std::int64_t version = 0;    // the policy version it was computed under
  std::uint64_t sequence = 0;  // the last step of the state it was computed against
};

/// Which compiled policy an engine runs.
struct PolicyInfo {
  std::string name;            // the store's policy name, or the file's stem
  std::int64_t version = 0;    // see Decision::version
  std::string content_sha256;  // of the source files
  std::string back_end;        // "jit" or "interp"
  bool cached_code = false;    // native code loaded from the store's cache (no codegen)
  std::string source;          // the store or file path it came from
  std::string warning;         // why the JIT was asked for and not used (else empty)
  std::string code_note;       // store engines: why native code was compiled, not loaded from the cache
};

/// The error codes of the C++ API; the C ABI returns the same numbers (gov_status).
enum class ErrorCode : int {
  invalid_argument = 1,  // a malformed argument (bad options, a trace that does not parse, ...)
  not_found = 2,         // no such file, store, policy or version
  policy = 3,            // the policy has errors; the message holds the rendered diagnostics
  store = 4,             // the store failed (corrupt, busy, unreadable, newer schema, ...)
  io = 5,                // a file could not be read
  out_of_memory = 6,
  internal = 7,  // a bug in gov: please report it
  reentrant = 8,  // called from the engine's own on_step callback (its state lock is held)
  limit = 9,      // a documented bound was reached (Options::max_tasks live tasks)
};

/// The one exception type the C++ API throws (besides std::bad_alloc). Errors of tasks are not
/// exceptions: they are `invalid` or `rejected` decisions. what() is one line, or for
/// ErrorCode::policy the rendered diagnostics.
class GOV_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ~Error() override;
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// The names below are those of the decision stream: "admitted", "waiting-for-quota",
// "reclaim", "pending", "gpu" / "neuron" / "vcpu" / "memory_gib" / "efa". Pure and inline;
// the strings are static.

inline std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::admitted: return "admitted";
    case Outcome::pending: return "pending";
    case Outcome::preempted: return "preempted";
    case Outcome::rejected: return "rejected";
    case Outcome::finished: return "finished";
    case Outcome::cancelled: return "cancelled";
    case Outcome::invalid: return "invalid";
  }
  return "?";
}

inline std::string_view reason_name(PendingReason reason) {
  switch (reason) {
    case PendingReason::waiting_for_quota: return "waiting-for-quota";
    case PendingReason::exceeds_max_quota: return "exceeds-max-quota";
    case PendingReason::waiting_for_preemption: return "waiting-for-preemption";
    case PendingReason::no_matching_flavor: return "no-matching-flavor";
    case PendingReason::team_inactive: return "team-inactive";
  }
  return "?";
}

inline std::string_view preemption_kind_name(PreemptionKind kind) {
  switch (kind) {
    case PreemptionKind::in_team: return "in-team";
    case PreemptionKind::reclaim: return "reclaim";
    case PreemptionKind::fair_sharing: return "fair-sharing";
  }
  return "?";
}

inline std::string_view task_state_name(TaskState state) {
  switch (state) {
    case TaskState::pending: return "pending";
    case TaskState::admitted: return "admitted";
    case TaskState::finished: return "finished";
    case TaskState::cancelled: return "cancelled";
    case TaskState::rejected: return "rejected";
    case TaskState::invalid: return "invalid";
  }
  return "?";
}

inline std::string_view resource_name(Resource resource) {
  switch (resource) {
    case Resource::gpu: return "gpu";
    case Resource::neuron: return "neuron";
    case Resource::vcpu: return "vcpu";
    case Resource::memory: return "memory_gib";
    case Resource::efa: return "efa";
  }
  return "?";
}

// The functions below are pure: thread-safe, they keep nothing, and they throw nothing but
// std::bad_alloc.

/// One decision as one line of docs/interfaces.md's decision stream (no newline): exactly what
/// `gov simulate --format jsonl` prints, so streams can be compared byte for byte. The version
/// and sequence are not part of it.
GOV_API std::string to_json(const Decision& decision);
/// Every decision of a step, one line each, each ending with a newline.
GOV_API std::string to_json(const Step& step);
/// An explanation or a snapshot as one JSON object (amounts in the stream's units: devices,
/// vCPUs, GiB; unlimited limits as null). docs/embedding.md shows the shapes.
GOV_API std::string to_json(const Explanation& explanation);
GOV_API std::string to_json(const Snapshot& snapshot);
/// A cluster state as the document `gov eval --state` and Engine::load_state_json read
/// (docs/embedding.md "Restart with state"): tasks as a trace's submit objects, times in
/// seconds. A task the trace format cannot express (`instances` with `pods`, or no request at
/// all) is written as it is and fails to load as that entry.
GOV_API std::string to_json(const ClusterState& state);

}  // namespace gov
