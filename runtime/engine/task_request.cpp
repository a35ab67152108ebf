#include "runtime/engine/task_request.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compiler/model/partitions.hpp"
#include "runtime/engine/messages.hpp"

namespace gov::engine {
namespace {

std::optional<std::string> check_amounts(const gov::Task& spec) {
  bool any_amount = false;
  for (ir::Resource r : ir::kAllResources) {
    const auto& amount = spec.amounts[ir::index(r)];
    if (!amount) continue;
    any_amount = true;
    if (*amount < 0) return fmt::format("negative amount for `{}`", ir::resource_key(r));
  }
  if (spec.instances && any_amount) {
    return std::string("a task requests either `instances` or per-resource amounts, not both");
  }
  if (spec.instances && *spec.instances < 0) return std::string("negative `instances`");
  if (spec.pods && *spec.pods < 1) return std::string("`pods` must be at least 1");
  if (spec.duration && *spec.duration < 0) return std::string("negative `duration`");
  return std::nullopt;
}

// The instance type whole instances are counted in: the named one, else the team's only one.
std::optional<std::string> instance_flavor(const ir::Team& team, int32_t requested,
                                           int32_t& flavor) {
  if (requested >= 0) {
    flavor = requested;
    return std::nullopt;
  }
  if (team.quotas.size() == 1) {
    flavor = static_cast<int32_t>(team.quotas.front().flavor);
    return std::nullopt;
  }
  return fmt::format(
      "task requests whole instances but team `{}` has {} instance types; name one with "
      "`instance_type`",
      team.name, team.quotas.size());
}

std::optional<std::string> scale(const ir::Module& module, Resources& request, int64_t factor) {
  const auto too_large = [&module](size_t i) {
    return fmt::format("requested amount of `{}` is too large", module.column_key(static_cast<ir::Resource>(i)));
  };
  for (ir::Resource r : ir::kAllResources) {  // unrolled: the hot path (check_admission) runs this
    if (__builtin_mul_overflow(request[ir::index(r)], factor, &request[ir::index(r)])) return too_large(ir::index(r));
  }
  for (size_t i = ir::kResourceCount; i < module.column_count(); ++i) {
    if (__builtin_mul_overflow(request[i], factor, &request[i])) return too_large(i);
  }
  return std::nullopt;
}

// The task's GPU partitions into their columns (per pod; scaled with the rest). A name that is
// not a MIG profile makes the task invalid; a profile no quota of the policy gives has no column
// and is kept aside: no flavor has it, so the task waits as no-matching-flavor with Kueue's
// "unavailable in ClusterQueue" (docs/semantics-decisions.md "GPU partitions (MIG)").
std::optional<std::string> add_partitions(const ir::Module& module, const gov::Task& spec, TaskRequest& out) {
  for (const auto& [profile, count] : spec.partitions) {
    if (count < 0) return fmt::format("negative amount for `{}`", profile);
    if (!model::parse_mig_profile(profile))
      return fmt::format("`{}` is not a GPU partition profile (`mig-<slices>g.<memory>gb`, such as `mig-1g.10gb`)",
                         profile);
    const int32_t k = module.partition_index(profile);
    if (k < 0) {
      if (count > 0 && out.unavailable_partition.empty()) out.unavailable_partition = profile;
      continue;
    }
    Amount& amount = out.request[ir::index(ir::partition_column(static_cast<size_t>(k)))];
    if (amount != 0) return fmt::format("GPU partition profile `{}` is given twice", profile);
    amount = count;
  }
  return std::nullopt;
}

template <typename T>
void assign_optional(std::optional<T>& to, const std::optional<T>& from) {
  if (!from) {
    to.reset();
  } else if (to) {
    *to = *from;  // a string keeps its capacity
  } else {
    to.emplace(*from);
  }
}

// A pod set as a task of its own in `one` (the task's team and class; the pod set's instance
// type, else the task's), for resolve_request. `one` is reused: assignments keep its strings'
// capacity, so a warm call allocates nothing (Engine::check of a task of several pod sets).
void pod_set_task(const gov::Task& spec, const gov::PodSet& pod_set, gov::Task& one) {
  one.team.assign(spec.team);
  assign_optional(one.priority, spec.priority);
  assign_optional(one.instance_type, pod_set.instance_type ? pod_set.instance_type : spec.instance_type);
  one.instances = pod_set.instances;
  one.amounts = pod_set.amounts;
  one.pods = pod_set.pods;
  one.partitions.resize(pod_set.partitions.size());
  for (size_t i = 0; i < pod_set.partitions.size(); ++i) {
    one.partitions[i].first.assign(pod_set.partitions[i].first);
    one.partitions[i].second = pod_set.partitions[i].second;
  }
}

/// The pod set under resolution, per thread (see pod_set_task).
gov::Task& pod_set_scratch() {
  thread_local gov::Task one;
  return one;
}

std::optional<std::string> check_pod_sets(const gov::Task& spec) {
  if (spec.pod_sets.size() > gov::kMaxPodSets)
    return fmt::format("a task has at most {} pod sets (Kueue's limit), not {}", gov::kMaxPodSets, spec.pod_sets.size());
  const char* field = spec.instances ? "instances" : spec.pods ? "pods" : !spec.partitions.empty() ? "partitions" : nullptr;
  for (ir::Resource r : ir::kAllResources) {
    if (field == nullptr && spec.amounts[ir::index(r)]) field = ir::resource_key(r).data();
  }
  if (field != nullptr)
    return fmt::format("a task with pod sets gives its requests per pod set, not `{}` for the whole task", field);
  for (size_t i = 0; i < spec.pod_sets.size(); ++i) {
    const std::string& name = spec.pod_sets[i].name;
    if (name.empty()) return fmt::format("pod set {} has no name", i + 1);
    for (size_t j = 0; j < i; ++j) {
      if (spec.pod_sets[j].name == name) return fmt::format("pod set `{}` is given twice", name);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> resolve_pod_sets(const Resolver& resolver, const gov::Task& spec, TaskRequest& out,
                                            std::vector<PodSetRequest>* pod_sets) {
  out.request = {};
  out.team = resolver.names.team(spec.team);
  if (out.team < 0) return fmt::format("unknown team `{}`", spec.team);
  if (auto error = check_pod_sets(spec)) return error;
  if (spec.priority && resolver.names.priority_class(*spec.priority) < 0)
    return fmt::format("unknown priority class `{}`", *spec.priority);
  out.requested_flavor = -1;  // what rules read as the task's instance type: the task-level one
  if (spec.instance_type) {
    out.requested_flavor = resolver.names.flavor(*spec.instance_type);
    if (out.requested_flavor < 0) return fmt::format("unknown instance type `{}`", *spec.instance_type);
  }
  out.instances = 0;
  out.pods = 0;
  out.unavailable_partition = {};
  if (pod_sets != nullptr) pod_sets->resize(spec.pod_sets.size());  // reused: names keep their capacity
  gov::Task& scratch = pod_set_scratch();
  for (size_t i = 0; i < spec.pod_sets.size(); ++i) {
    const gov::PodSet& pod_set = spec.pod_sets[i];
    TaskRequest one;
    pod_set_task(spec, pod_set, scratch);
    if (auto error = resolve_request(resolver, scratch, one))
      return fmt::format("pod set `{}`: {}", pod_set.name, *error);
    out.class_index = one.class_index;
    out.priority = one.priority;
    for (size_t k = 0; k < out.request.size(); ++k) {
      if (__builtin_add_overflow(out.request[k], one.request[k], &out.request[k]))
        return fmt::format("requested amount of `{}` is too large", resolver.module.column_key(static_cast<ir::Resource>(k)));
    }
    if (__builtin_add_overflow(out.instances, one.instances, &out.instances)) return std::string("`instances` is too large");
    if (__builtin_add_overflow(out.pods, one.pods, &out.pods)) return std::string("`pods` is too large");
    if (pod_sets != nullptr) {
      PodSetRequest& request = (*pod_sets)[i];
      request.name.assign(pod_set.name);
      request.requested_flavor = one.requested_flavor;
      request.pods = one.pods;
      request.request = one.request;
      request.has_unavailable_partition = !one.unavailable_partition.empty();
      // `one` views the scratch task's profile: interned now, before the next pod set reuses it.
      request.unavailable_partition = request.has_unavailable_partition && resolver.unavailable != nullptr
                                          ? resolver.unavailable->intern(one.unavailable_partition)
                                          : nullptr;
    }
  }
  return std::nullopt;
}

bool is_single_main(const gov::Task& spec) {
  return spec.pod_sets.size() == 1 && spec.pod_sets[0].name == kPodSetName;
}

std::optional<std::string> resolve_request(const Resolver& resolver, const gov::Task& spec,
                                           TaskRequest& out) {
  if (!spec.pod_sets.empty()) [[unlikely]] {
    if (is_single_main(spec) && !check_pod_sets(spec)) {
      // `out.unavailable_partition` then views the per-thread scratch task: valid until this
      // thread resolves another pod set (the check path tests it at once).
      gov::Task& one = pod_set_scratch();
      pod_set_task(spec, spec.pod_sets[0], one);
      return resolve_request(resolver, one, out);
    }
    return resolve_pod_sets(resolver, spec, out, nullptr);
  }
  const ir::Module& module = resolver.module;
  out.request = {};
  out.team = resolver.names.team(spec.team);
  if (out.team < 0) return fmt::format("unknown team `{}`", spec.team);
  if (spec.priority) {
    out.class_index = resolver.names.priority_class(*spec.priority);
    if (out.class_index < 0) return fmt::format("unknown priority class `{}`", *spec.priority);
  }
  out.priority = resolver.evaluator.priority(out.class_index);
  if (spec.instance_type) {
    out.requested_flavor = resolver.names.flavor(*spec.instance_type);
    if (out.requested_flavor < 0)
      return fmt::format("unknown instance type `{}`", *spec.instance_type);
  }
  if (auto error = check_amounts(spec)) return error;

  if (spec.instances) {
    int32_t flavor = -1;
    const ir::Team& team = module.teams[static_cast<size_t>(out.team)];
    if (auto error = instance_flavor(team, out.requested_flavor, flavor)) return error;
    out.request = module.flavors[static_cast<size_t>(flavor)].per_instance;
    if (auto error = scale(module, out.request, *spec.instances)) return error;
  } else {
    for (ir::Resource r : ir::kAllResources)
      out.request[ir::index(r)] = spec.amounts[ir::index(r)].value_or(0);
  }
  out.pods = spec.pods.value_or(1);
  out.instances = spec.instances.value_or(0);
  if (__builtin_mul_overflow(out.instances, out.pods, &out.instances))
    return std::string("`instances` is too large");
  out.unavailable_partition = {};
  if (!spec.partitions.empty()) {
    if (auto error = add_partitions(module, spec, out)) return error;
  }
  if (auto error = scale(module, out.request, out.pods)) return error;
  return std::nullopt;
}

std::optional<std::string> resolve_task(const Resolver& resolver, const gov::Task& spec, Task& out) {
  out.id = spec.id;
  out.duration = spec.duration;
  TaskRequest request;
  std::optional<std::string> error;
  out.pod_sets.clear();
  gov::Task one;  // a task whose only pod set is `main`: resolved as a task without pod sets
  if (spec.pod_sets.empty()) {
    error = resolve_request(resolver, spec, request);
  } else if (is_single_main(spec) && !check_pod_sets(spec)) {
    pod_set_task(spec, spec.pod_sets[0], one);
    error = resolve_request(resolver, one, request);  // views into `one`, interned below
  } else {
    error = resolve_pod_sets(resolver, spec, request, &out.pod_sets);
  }
  out.team = request.team;
  if (out.team < 0) out.unknown_team = std::make_shared<const std::string>(spec.team);
  out.class_index = request.class_index;
  out.priority = request.priority;
  out.requested_flavor = request.requested_flavor;
  out.instances = request.instances;
  out.pods = request.pods;
  out.request = request.request;
  out.unavailable_partition = nullptr;
  if (!request.unavailable_partition.empty() && resolver.unavailable != nullptr)
    out.unavailable_partition = resolver.unavailable->intern(request.unavailable_partition);
  return error;
}

const std::string* UnavailablePartitions::intern(std::string_view profile) {
  for (const std::string& name : names_) {
    if (name == profile) return &name;
  }
  return &names_.emplace_back(profile);
}

TaskRequest request_of(const Task& task) {
  return {task.team,      task.class_index, task.priority, task.requested_flavor,
          task.instances, task.pods,        task.request,
          task.unavailable_partition != nullptr ? std::string_view(*task.unavailable_partition) : std::string_view()};
}

}  // namespace gov::engine
