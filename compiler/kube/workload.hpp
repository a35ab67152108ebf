// Kubernetes objects as workloads: Jobs, PyTorchJobs, HyperPodPyTorchJobs, RayJobs, RayClusters,
// Kueue Workloads and Pods, each read as the named pod sets Kueue admits (docs/kubernetes.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/kube/yaml.hpp"
#include "compiler/model/resources.hpp"
#include "compiler/support/expected.hpp"
#include "gov/types.hpp"

namespace gov::kube {

/// Kueue's limit on pod sets per workload (the Workload CRD's `maxItems` of `spec.podSets`),
/// the engine's too.
using gov::kMaxPodSets;

/// One pod set: `count` pods, each requesting `per_pod` (base units, Kubernetes' effective
/// request of the pod template: containers, init containers and sidecars, overhead).
struct PodSet {
  std::string name;  // Kueue's: `main`, `master`, `worker`, `head`, a replica spec's or group's name
  int64_t count = 1;
  model::Resources per_pod{};
  /// GPU partitions per pod: `nvidia.com/mig-<profile>` requests, by profile (`mig-1g.10gb`).
  std::map<std::string, int64_t> partitions;
  /// From `nodeSelector` or required node affinity on `node.kubernetes.io/instance-type`.
  std::optional<std::string> instance_type;
  support::TextPosition at;  // the pod template
};

/// One resource of an admitted pod set and the flavor (ResourceFlavor) Kueue assigned it: an entry of
/// `status.admission.podSetAssignments[].flavors`.
struct AssignedFlavor {
  std::optional<model::Resource> resource;  // nullopt for a partition
  std::string partition;                    // `mig-1g.10gb` for `nvidia.com/mig-1g.10gb`, else empty
  std::string resource_name;                // as written: `cpu`, `nvidia.com/gpu`
  std::string flavor;
  support::TextPosition at;
};

/// Where a Kueue Workload is in its cluster, from its `status` (docs/kubernetes.md, "The cluster
/// as it is"). Objects of other kinds are `pending`: they are what a user submits.
enum class WorkloadState : uint8_t {
  pending,   // waiting in its queue
  admitted,  // holds quota: `QuotaReserved` is True (or `status.admission` without that condition)
  evicting,  // holds quota (as `admitted`) but `Evicted` is True: its pods are stopping
  finished,  // `Finished` is True
  evicted,   // `Evicted` is True, it holds no quota and `Requeued` is False (not queued yet)
  inactive,  // `spec.active: false`: deactivated, never admitted until reactivated
};

/// "pending", "admitted", "being evicted", "finished", "evicted", "inactive".
std::string_view workload_state_name(WorkloadState state);

/// The annotation gov reads a workload's run time from (`gov simulate --workloads`): seconds as in
/// a trace's `duration` (`"600"`, `"90.5"`).
inline constexpr std::string_view kDurationAnnotation = "gov/duration";

/// The annotation of a Job that lets Kueue admit as few as that many of its pods (partial
/// admission), which gov does not model.
inline constexpr std::string_view kMinParallelismAnnotation = "kueue.x-k8s.io/job-min-parallelism";

struct Workload {
  std::string kind;  // `Job`, `PyTorchJob`, ...
  std::string name;
  std::string namespace_name;  // empty when the object has none
  std::string uid;             // `metadata.uid`, when given
  /// The uids of its `metadata.ownerReferences` (a Workload's: the Job it was made for).
  std::vector<std::string> owner_uids;
  /// Read with `allow_unmanaged`: no queue label, so Kueue does not manage it; nothing past the
  /// metadata was read.
  bool unmanaged = false;
  /// The LocalQueue: the `kueue.x-k8s.io/queue-name` label (`spec.queueName` of a Workload).
  std::string queue_name;
  /// The `kueue.x-k8s.io/priority-class` label (`spec.priorityClassName` of a Workload).
  std::optional<std::string> priority_class;
  std::vector<PodSet> pod_sets;  // Kueue's order
  support::TextPosition at;
  /// `metadata.creationTimestamp` (milliseconds since the Unix epoch), when given: Kueue's
  /// queue-order time.
  std::optional<int64_t> created;
  /// The `gov/duration` annotation (milliseconds), when given.
  std::optional<int64_t> duration;
  /// It lets Kueue admit fewer pods than it asks for (a pod set's `minCount` below its count, a
  /// Job's kMinParallelismAnnotation below its parallelism): Kueue's partial admission, which gov
  /// does not model (it admits the whole count or nothing); the commands say so in a note.
  bool partial_admission = false;

  // A Kueue Workload's status (other kinds: pending, nothing else set).
  WorkloadState state = WorkloadState::pending;
  /// admitted: when it reserved quota (the `QuotaReserved` condition's `lastTransitionTime`, else
  /// `Admitted`'s), milliseconds since the epoch; nullopt when neither condition says.
  std::optional<int64_t> admitted_at;
  /// admitted: the flavor (ResourceFlavor) of each pod set, in pod set order, from
  /// `status.admission.podSetAssignments` (empty string: none assigned).
  std::vector<std::string> flavors;
  /// admitted: each pod set's resources and their flavors, in pod set order. A ClusterQueue with
  /// several resource groups gives one pod set several flavors (cpu from one, memory from
  /// another); `flavors` holds the first, and kube_inputs checks the rest against the team.
  std::vector<std::vector<AssignedFlavor>> assigned_flavors;
  /// evicting, finished, evicted, inactive: the condition's reason (`Succeeded`, `Preempted`, ...), if any.
  std::string state_reason;

  /// "PyTorchJob `train`", for messages.
  std::string describe() const;
};

/// `object` (one Kubernetes object, see kubernetes_objects) as a workload. Errors (kind
/// `invalid`, positioned) name the object and the field: an unknown kind, a missing queue label,
/// a quantity that is not one or does not fit its unit, a resource gov does not know (it would
/// affect admission), a pod set with zero pods, more than kMaxPodSets pod sets.
/// `allow_unmanaged`: an object other than a Workload without a `kueue.x-k8s.io/queue-name` label
/// is no error but a Workload with `unmanaged` set and only its kind, name, namespace, uids and
/// position read (`gov simulate --workloads` skips it: an `-A` export holds such objects).
support::Expected<Workload> read_workload(const Node& object, bool allow_unmanaged = false);

/// Milliseconds of a duration in seconds as `gov/duration` and `--default-duration` take it (a
/// trace's `duration`: at most 3 decimals, at most 10^9 s, such as `600` or `90.5`); nullopt for
/// anything else.
std::optional<int64_t> duration_millis(std::string_view text);

/// Milliseconds since the Unix epoch of an RFC 3339 time as Kubernetes writes one
/// (`2026-11-20T10:00:00Z`, `2026-11-20T10:00:00.123456Z`, `2026-11-20T11:00:00+01:00`); nullopt
/// for anything else, or a year outside 1970..9999. Fractions below a millisecond are dropped.
std::optional<int64_t> parse_timestamp(std::string_view text);

/// Every workload in a YAML text (multi-document, Lists included), in order.
support::Expected<std::vector<Workload>> read_workloads(std::string_view text, const YamlLimits& limits = {},
                                                        bool allow_unmanaged = false);

/// How a policy's teams name their LocalQueues: its teams, the queues a team declares with
/// `queues = [...]` and the namespaces with `namespaces = [...]` (for clusters that do not name
/// queues as HyperPod does).
struct QueueNaming {
  std::vector<std::string> teams;  // declared order
  std::vector<std::pair<std::string, std::string>> queues;      // (queue, team), declared order
  std::vector<std::pair<std::string, std::string>> namespaces;  // (namespace, team), declared order
};

/// The team of a workload's LocalQueue (docs/kubernetes.md, "Teams and classes"):
/// `hyperpod-ns-<team>-localqueue` (HyperPod's naming) is `<team>`; any other name is the team
/// that declares it in `queues`, else the team that declares the workload's namespace in
/// `namespaces`, else the team of that name (`gov export kueue --naming plain`). A queue that maps
/// to no team of the policy is an error (kind `invalid`, no position) naming the queue and the
/// known ones, with a did-you-mean.
support::Expected<std::string> team_of_queue(std::string_view queue_name, const QueueNaming& naming,
                                             std::string_view namespace_name = {});

/// The priority class a `kueue.x-k8s.io/priority-class` value names among `classes`: the class
/// of that name, else `<class>-priority` (HyperPod's naming); nullopt when neither exists.
std::optional<std::string> class_of_label(std::string_view value, const std::vector<std::string>& classes);

/// One pod set of `workload` as a task object of a trace (docs/trace-format.md: `id`, `team`,
/// `priority`, `instance_type`, `pods`, `per_pod`, and `duration` when the workload has one), for
/// gov's task readers. Amounts are written
/// exactly (vcpus with at most 3 decimals, memory_gib with at most 10).
std::string task_json(const Workload& workload, const PodSet& pod_set, std::string_view team,
                      const std::optional<std::string>& priority);
/// The whole workload as a task object of a trace: its one pod set `main` as task_json above,
/// else every pod set under `pod_sets` (names, instance types, `pods`, `per_pod`).
std::string task_json(const Workload& workload, std::string_view team, const std::optional<std::string>& priority);

}  // namespace gov::kube
