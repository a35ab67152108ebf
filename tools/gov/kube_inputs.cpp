// Kubernetes objects as the engine commands' inputs: tasks, a cluster state, submits.
#include "tools/gov/kube_inputs.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/trace/json.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {

bool ends_with_extension(std::string_view path, std::string_view extension) {
  if (path.size() < extension.size()) return false;
  const std::string_view tail = path.substr(path.size() - extension.size());
  return std::equal(tail.begin(), tail.end(), extension.begin(),
                    [](char a, char b) { return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b; });
}

bool is_yaml_path(const std::string& path) {
  // Any case: a directory's `A1.YAML` was skipped without a word (a hostile-input trial's finding).
  return ends_with_extension(path, ".yaml") || ends_with_extension(path, ".yml");
}

kube::QueueNaming queue_naming(const gov::Engine& engine) {
  kube::QueueNaming naming;
  const std::shared_ptr<const driver::Policy> policy = EngineInternals::runnable(engine);
  for (const check::Team& team : policy->checked.result.policy.teams) {
    naming.teams.push_back(team.name);
    for (const check::Team::ClaimedName& queue : team.queues) naming.queues.emplace_back(queue.name, team.name);
    for (const check::Team::ClaimedName& ns : team.namespaces) naming.namespaces.emplace_back(ns.name, team.name);
  }
  return naming;
}

std::optional<std::vector<kube::Workload>> read_workload_file(const std::string& path, int& status, bool allow_unmanaged) {
  std::string error;
  std::optional<std::string> text = read_file(path, kube::YamlLimits{}.max_bytes, error);
  if (!text) {
    fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(path), escape_for_terminal(error));
    status = kUsage;
    return std::nullopt;
  }
  support::Expected<std::vector<kube::Workload>> workloads = kube::read_workloads(*text, {}, allow_unmanaged);
  if (!workloads) {
    fmt::print(stderr, "error: {}: {}\n", located(path, workloads.error()), message_after_location(workloads.error()));
    status = kFailed;
    return std::nullopt;
  }
  return std::move(workloads).value();
}

std::string workload_where(const std::string& path, const kube::Workload& workload) {
  return fmt::format("{}:{}:{}: {}", display_path(path), workload.at.line, workload.at.column, workload.describe());
}

support::Expected<gov::Task> workload_task(const kube::Workload& workload, const ir::Module& module,
                                           const kube::QueueNaming& naming, trace::TaskDecoder& decoder) {
  const auto invalid = [](std::string message) { return support::Error{support::ErrorKind::invalid, std::move(message)}; };
  support::Expected<std::string> team = kube::team_of_queue(workload.queue_name, naming, workload.namespace_name);
  if (!team) return invalid(": " + team.error().message);
  std::vector<std::string> classes;
  for (const ir::PriorityClass& c : module.classes) classes.push_back(c.name);
  std::optional<std::string> priority;
  if (workload.priority_class) {
    priority = kube::class_of_label(*workload.priority_class, classes);
    if (!priority) {
      return invalid(fmt::format(": priority class `{}` is not a class of the policy, with or without `-priority`",
                                 *workload.priority_class));
    }
  }
  // No class label: no class, as a trace task without one (docs/semantics.md §3.1: the policy's
  // `default-priority`, else priority 0, Kueue's for a Workload without a WorkloadPriorityClass).
  // It once took the lowest class here, so one job decided two ways by its input's format (a
  // Kubernetes engineer's finding).
  const std::string json = kube::task_json(workload, team.value(), priority);
  support::Expected<trace::JsonValue> parsed = trace::parse_json(json);
  GOV_ASSERT(parsed.ok(), "task_json writes valid JSON");
  support::Expected<gov::Task> task = decoder.decode(parsed.value());
  if (!task) return invalid(" as a task: " + task.error().message);
  return task;
}

namespace {

// The column an assigned resource counts in, or nullopt for one the policy does not have.
std::optional<ir::Resource> assigned_column(const kube::AssignedFlavor& entry, const ir::Module& module) {
  if (entry.resource) return *entry.resource;
  for (size_t k = 0; k < module.partitions.size(); ++k) {
    if (module.partitions[k] == entry.partition) return ir::partition_column(k);
  }
  return std::nullopt;
}

// Where a Workload's assignment disagrees with its team, for messages: `FILE:LINE:COLUMN: Workload x`.
std::string assignment_where(const std::string& path, const kube::Workload& w, const kube::AssignedFlavor& entry) {
  return escape_for_terminal(fmt::format("{}:{}:{}: {}", display_path(path), entry.at.line, entry.at.column, w.describe()));
}

// An admitted Workload's flavors as the engine takes them (AdmittedTask::group_flavors for a team
// with resource groups: one per pod set and group the pod set asks something of, in that order),
// or an error naming the entry that does not fit the team: two flavors in one group, or, for a
// team without groups, two flavors in one pod set (a gov task then holds one instance type).
std::optional<std::string> assigned_group_flavors(const std::string& path, const kube::Workload& w,
                                                  const ir::Team& team, const ir::Module& module,
                                                  std::vector<std::string>& out) {
  for (const std::vector<kube::AssignedFlavor>& assigned : w.assigned_flavors) {
    if (team.groups.empty()) {
      for (const kube::AssignedFlavor& entry : assigned) {
        if (entry.flavor == assigned.front().flavor) continue;
        return fmt::format("{}: `{}` has flavor `{}` and `{}` has `{}`; team `{}` has no resource groups, so a task of it "
                           "holds one instance type per pod set",
                           assignment_where(path, w, entry), assigned.front().resource_name, assigned.front().flavor,
                           entry.resource_name, entry.flavor, team.name);
      }
      continue;
    }
    for (const ir::ResourceGroup& group : team.groups) {
      const kube::AssignedFlavor* first = nullptr;
      for (const kube::AssignedFlavor& entry : assigned) {
        const std::optional<ir::Resource> column = assigned_column(entry, module);
        if (!column || !group.covers_column(*column)) continue;
        if (!first) {
          first = &entry;
        } else if (entry.flavor != first->flavor) {
          return fmt::format("{}: `{}` has flavor `{}` and `{}` has `{}`, but team `{}` takes both from one resource group",
                             assignment_where(path, w, entry), first->resource_name, first->flavor, entry.resource_name,
                             entry.flavor, team.name);
        }
      }
      if (first) out.push_back(first->flavor);
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> qualify_shared_names(const std::vector<kube::Workload*>& workloads) {
  std::map<std::string, std::set<std::string>> namespaces_of;  // copies: the names change below
  for (const kube::Workload* w : workloads) namespaces_of[w->name].insert(w->namespace_name);
  std::vector<std::string> qualified;
  std::set<std::string> seen;
  for (kube::Workload* w : workloads) {
    const auto it = namespaces_of.find(w->name);
    if (it == namespaces_of.end() || it->second.size() < 2) continue;
    if (seen.insert(w->name).second) qualified.push_back(w->name);
    w->name = fmt::format("{}/{}", w->namespace_name, w->name);
  }
  return qualified;
}

void note_qualified_names(const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::string listed;
  for (size_t i = 0; i < names.size() && i < 5; ++i) listed += fmt::format("{}`{}`", i == 0 ? "" : ", ", names[i]);
  if (names.size() > 5) listed += fmt::format(" and {} more", names.size() - 5);
  fmt::print(stderr, "note: {} {} {} used in several namespaces: {} tasks are named `namespace/name`\n",
             names.size() == 1 ? "the name" : "the names", escape_for_terminal(listed), names.size() == 1 ? "is" : "are",
             names.size() == 1 ? "its" : "their");
}

void note_partial_admission(size_t count, const std::string& example) {
  if (count == 0) return;
  fmt::print(stderr,
             "note: {}{} {} Kueue admit fewer pods than {} (`minCount`, `{}`): gov does not model partial admission, "
             "it admits the whole count or nothing (docs/kubernetes.md)\n",
             count == 1 ? "" : fmt::format("{} workloads, such as ", count), escape_for_terminal(example),
             count == 1 ? "lets" : "let", count == 1 ? "it asks for" : "they ask for", kube::kMinParallelismAnnotation);
}

std::optional<gov::ClusterState> read_workloads_state(const std::string& path, const ir::Module& module,
                                                      const kube::QueueNaming& naming, int& status,
                                                      std::optional<int64_t>* origin) {
  std::optional<std::vector<kube::Workload>> workloads = read_workload_file(path, status);
  if (!workloads) return std::nullopt;
  std::vector<kube::Workload*> named;
  for (kube::Workload& w : *workloads) named.push_back(&w);
  note_qualified_names(qualify_shared_names(named));
  status = kFailed;
  // The earliest and latest times the Workloads give: the state's start (0) and its time.
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (const kube::Workload& w : *workloads) {
    if (w.kind != "Workload") {
      fmt::print(stderr,
                 "error: {}: a state holds Kueue Workloads (`kubectl get workloads -A -o yaml`), and this is not one\n",
                 escape_for_terminal(workload_where(path, w)));
      return std::nullopt;
    }
    if (w.state != kube::WorkloadState::pending && w.state != kube::WorkloadState::admitted) continue;
    for (const std::optional<int64_t>& t : {w.created, w.admitted_at}) {
      if (!t) continue;
      first = std::min(first, *t);
      last = std::max(last, *t);
    }
  }
  if (first > last) first = last = 0;
  if (origin != nullptr) *origin = first;
  gov::ClusterState state;
  state.at = last - first;
  trace::TaskDecoder decoder(module);
  size_t partial = 0;
  std::string partial_example;
  for (const kube::Workload& w : *workloads) {
    if (w.partial_admission && partial++ == 0) partial_example = workload_where(path, w);
  }
  note_partial_admission(partial, partial_example);
  for (const kube::Workload& w : *workloads) {
    const std::string where = escape_for_terminal(workload_where(path, w));
    if (w.state == kube::WorkloadState::evicting) {
      // Kueue takes such a Workload first as a preemption target and evicts nothing else for the
      // quota it still holds; read as admitted, gov chose another victim (a Kueue auditor's
      // finding). Read as released, the answer is the one once its pods have stopped.
      fmt::print(stderr, "note: {} is being evicted{}: it holds its quota until its pods stop, and is read as having "
                         "released it (the decisions below are those once it has)\n", where,
                 w.state_reason.empty() ? "" : fmt::format(" ({})", escape_for_terminal(w.state_reason)));
      continue;
    }
    if (w.state != kube::WorkloadState::pending && w.state != kube::WorkloadState::admitted) {
      fmt::print(stderr, "note: {} is {}{}: skipped, it holds no quota and does not queue\n", where,
                 kube::workload_state_name(w.state),
                 w.state_reason.empty() ? "" : fmt::format(" ({})", escape_for_terminal(w.state_reason)));
      continue;
    }
    support::Expected<gov::Task> task = workload_task(w, module, naming, decoder);
    if (!task) {
      fmt::print(stderr, "error: {}{}\n", where, escape_for_terminal(task.error().message));
      return std::nullopt;
    }
    const gov::Time created = w.created.value_or(first) - first;
    if (w.state == kube::WorkloadState::pending) {
      state.pending.push_back({std::move(task).value(), created});
      continue;
    }
    gov::AdmittedTask admitted{std::move(task).value(), created, w.admitted_at.value_or(first + created) - first,
                               std::nullopt};
    const int32_t team_index = module.team_index(admitted.task.team);
    GOV_ASSERT(team_index >= 0, "workload_task names a team of the policy");
    const ir::Team& team = module.teams[static_cast<size_t>(team_index)];
    if (auto error = assigned_group_flavors(path, w, team, module, admitted.group_flavors)) {
      fmt::print(stderr, "error: {}\n", *error);
      return std::nullopt;
    }
    if (!team.groups.empty()) {
      // The flavors are the groups' (group_flavors), checked by the engine against the team.
    } else if (!admitted.task.pod_sets.empty()) {
      // Each pod set's flavor from `status.admission.podSetAssignments` (an unassigned one: its
      // instance type or its team's first, as for a task of one pod set).
      bool all = w.flavors.size() == admitted.task.pod_sets.size();
      for (size_t i = 0; all && i < w.flavors.size(); ++i) all = !w.flavors[i].empty();
      if (all) admitted.pod_set_flavors = w.flavors;
    } else if (!w.flavors.empty() && !w.flavors.front().empty()) {
      admitted.flavor = w.flavors.front();
    }
    state.admitted.push_back(std::move(admitted));
  }
  // ClusterState lists admitted tasks in admission order, pending ones in queue order.
  std::stable_sort(state.admitted.begin(), state.admitted.end(),
                   [](const gov::AdmittedTask& a, const gov::AdmittedTask& b) { return a.admitted_at < b.admitted_at; });
  std::stable_sort(state.pending.begin(), state.pending.end(),
                   [](const gov::PendingTask& a, const gov::PendingTask& b) { return a.submitted_at < b.submitted_at; });
  status = kOk;
  return state;
}

}  // namespace gov::cli
