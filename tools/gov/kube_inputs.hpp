// Kubernetes objects as the engine commands' inputs (docs/kubernetes.md): a Job as `gov eval`'s
// task, `kubectl get workloads -A -o yaml` as a cluster state, manifests as `gov simulate`'s
// submits. Each object becomes the task object of a trace and is decoded by trace::TaskDecoder,
// so it is checked exactly as the equivalent JSON task.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/module.hpp"
#include "compiler/kube/workload.hpp"
#include "gov/engine.hpp"
#include "runtime/trace/trace_reader.hpp"

namespace gov::cli {

/// Whether `path` ends in `extension` (lower case, with its dot), in any case: `.YAML` too.
bool ends_with_extension(std::string_view path, std::string_view extension);
/// A path ending in `.yaml` or `.yml`, in any case: a Kubernetes object, not gov's JSON.
bool is_yaml_path(const std::string& path);

/// How the policy `engine` runs names its teams' LocalQueues (its teams and their `queues`).
kube::QueueNaming queue_naming(const gov::Engine& engine);

/// The workloads of a YAML file (read_workloads), or nullopt after printing why not (`status`:
/// 2 when the file cannot be read, else 1).
/// `allow_unmanaged`: objects Kueue does not manage (no queue label) come back marked `unmanaged`
/// instead of an error (kube::read_workload).
std::optional<std::vector<kube::Workload>> read_workload_file(const std::string& path, int& status,
                                                              bool allow_unmanaged = false);

/// "FILE:LINE:COL: Kind `name`": where a workload's errors point.
std::string workload_where(const std::string& path, const kube::Workload& workload);

/// A workload as a task of `module`: team from its queue (kube::team_of_queue), class from its
/// label (absent: no class, as a trace task without one), its pod sets (one named `main`: the task's `pods` ×
/// `per_pod`; else `pod_sets`), and its duration annotation. Decoded by `decoder`, which refuses
/// an id it decoded before. An error for an unknown queue or class, or what the task decoder
/// refuses, whose message continues workload_where's ("…: Job `a1`" + ": queue `x` maps to no
/// team …", or " as a task: …").
support::Expected<gov::Task> workload_task(const kube::Workload& workload, const ir::Module& module,
                                           const kube::QueueNaming& naming, trace::TaskDecoder& decoder);

/// Kubernetes names an object by namespace and name, a trace its task by an id: objects of one
/// name in several namespaces (every team's Job `train`) take `namespace/name` as their name, so as
/// their task's id. Returns the names qualified, in first-seen order, for one note. The same name
/// twice in one namespace is left as it is: the same object given twice, which the task decoder
/// refuses.
std::vector<std::string> qualify_shared_names(const std::vector<kube::Workload*>& workloads);
/// One note on stderr naming what qualify_shared_names qualified (none: nothing).
void note_qualified_names(const std::vector<std::string>& names);

/// One note on stderr when `count` workloads allow Kueue's partial admission, which gov does not
/// model; `example` is one of them (workload_where). Nothing when `count` is 0.
void note_partial_admission(size_t count, const std::string& example);

/// A cluster state from `kubectl get workloads -A -o yaml` (Kueue Workloads, v1beta1 or v1beta2):
/// admitted Workloads hold their flavors from their reservation time, pending ones queue from
/// their creation time, finished, evicted and inactive ones are skipped with a note on stderr.
/// Times are milliseconds since the earliest time in the file; the state's time is the latest.
/// nullopt after printing the first error (`status` 2: unreadable, 1: invalid). `origin`, when
/// given, is set to that earliest time (milliseconds since 1970), for other objects' times.
std::optional<gov::ClusterState> read_workloads_state(const std::string& path, const ir::Module& module,
                                                      const kube::QueueNaming& naming, int& status,
                                                      std::optional<int64_t>* origin = nullptr);

}  // namespace gov::cli
