// Kubernetes objects as the engine commands' inputs: tasks.
#include "tools/gov/kube_inputs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/trace/json.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {

bool is_yaml_path(const std::string& path) {
  return path.ends_with(".yaml") || path.ends_with(".yml");
}

kube::QueueNaming queue_naming(const gov::Engine& engine) {
  kube::QueueNaming naming;
  const std::shared_ptr<const driver::Policy> policy = EngineInternals::runnable(engine);
  for (const check::Team& team : policy->checked.result.policy.teams) {
    naming.teams.push_back(team.name);
    for (const check::Team::Queue& queue : team.queues) naming.queues.emplace_back(queue.name, team.name);
  }
  return naming;
}

std::optional<std::vector<kube::Workload>> read_workload_file(const std::string& path, int& status) {
  std::string error;
  std::optional<std::string> text = read_file(path, kube::YamlLimits{}.max_bytes, error);
  if (!text) {
    fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(path), escape_for_terminal(error));
    status = kUsage;
    return std::nullopt;
  }
  support::Expected<std::vector<kube::Workload>> workloads = kube::read_workloads(*text);
  if (!workloads) {
    fmt::print(stderr, "error: {}: {}\n", located(path, workloads.error()), escape_for_terminal(workloads.error().message));
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
  if (workload.pod_sets.size() > 1) {
    std::vector<std::string> names;
    for (const kube::PodSet& set : workload.pod_sets) names.push_back(set.name);
    return invalid(fmt::format(" has {} pod sets ({}); gov's engine decides tasks of one pod set until it has pod sets "
                               "(issue 18)",
                               names.size(), fmt::join(names, ", ")));
  }
  support::Expected<std::string> team = kube::team_of_queue(workload.queue_name, naming);
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
  } else if (!module.classes.empty()) {
    // No class: the lowest, as HyperPod gives it (the first declared among equals).
    const auto lowest = std::min_element(module.classes.begin(), module.classes.end(),
                                         [](const ir::PriorityClass& a, const ir::PriorityClass& b) { return a.weight < b.weight; });
    priority = lowest->name;
  }
  const std::string json = kube::task_json(workload, workload.pod_sets.front(), team.value(), priority);
  support::Expected<trace::JsonValue> parsed = trace::parse_json(json);
  GOV_ASSERT(parsed.ok(), "task_json writes valid JSON");
  support::Expected<gov::Task> task = decoder.decode(parsed.value());
  if (!task) return invalid(" as a task: " + task.error().message);
  return task;
}

}  // namespace gov::cli
