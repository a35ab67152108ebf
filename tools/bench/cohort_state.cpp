#include "tools/bench/cohort_state.hpp"

#include <fmt/format.h>

namespace gov::bench {
namespace {

/// The resolved form of one of gen-bench's admitted tasks (a team, a class, one instance type,
/// whole devices only); anything else is refused rather than half-resolved.
bool to_task(const ir::Module& module, const gov::Task& spec, engine::Task& task,
             std::string& error) {
  task.id = spec.id;
  task.team = module.team_index(spec.team);
  task.class_index = spec.priority ? module.class_index(*spec.priority) : -1;
  task.priority = module.priority_of(task.class_index);
  task.requested_flavor = spec.instance_type ? module.flavor_index(*spec.instance_type) : -1;
  for (ir::Resource r : ir::kAllResources) task.request[ir::index(r)] = spec.amounts[ir::index(r)].value_or(0);
  if (task.team < 0 || task.requested_flavor < 0 || spec.instances || spec.pods) {
    error = fmt::format("task `{}` is not a plain per-resource task of a known team and type", spec.id);
    return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<Cohort> make_cohort(size_t count, bool use_jit, std::string& error) {
  const std::string name = fmt::format("admitted-{}", count);
  const Policy* policy = cached_policy(input_path(name + ".gov"), error);
  if (policy == nullptr) return nullptr;
  if (use_jit && !policy->jit) {
    error = "JIT unavailable: " + policy->jit_error;
    return nullptr;
  }
  Trace trace;
  if (!read_trace_file(input_path(name + ".trace.json"), policy->module, trace, error)) return nullptr;

  auto cohort = std::make_unique<Cohort>();
  cohort->policy = policy;
  cohort->core = std::make_unique<engine::EngineCore>(policy->module, policy->evaluator(use_jit),
                                                      engine::EngineOptions{});
  engine::EngineCore& core = *cohort->core;
  std::vector<gov::Decision> ignored;
  for (const Instant& instant : trace.instants) {
    for (const gov::Event& event : instant.events) {
      engine::Task task;
      if (event.kind != gov::Event::Kind::submit || !to_task(policy->module, event.task, task, error))
        return nullptr;
      task.state = gov::TaskState::pending;
      const auto flavor = static_cast<uint32_t>(task.requested_flavor);
      const uint32_t index = core.tasks.add(std::move(task), /*claim_id=*/true);
      engine::admit(core, index, flavor, ignored);
      ignored.clear();
      ++cohort->admitted;
    }
  }
  // The preemptor: team-0001 lends its whole quota to team-0002, and now wants some of it back.
  const int32_t flavor = policy->module.flavor_index("ml.g5.8xlarge");
  const int32_t team = policy->module.team_index("team-0001");
  if (flavor < 0 || team < 0) {
    error = name + ".gov has no team-0001 or no ml.g5.8xlarge";
    return nullptr;
  }
  engine::Task preemptor;
  preemptor.id = "preemptor";
  preemptor.team = team;
  preemptor.class_index = policy->module.class_index("training");
  preemptor.priority = policy->module.priority_of(preemptor.class_index);
  preemptor.requested_flavor = flavor;
  const ir::Amount nominal =
      core.quota.nominal(static_cast<uint32_t>(team), static_cast<uint32_t>(flavor), ir::Resource::gpu);
  preemptor.request[ir::index(ir::Resource::gpu)] = std::min<ir::Amount>(8, nominal);
  preemptor.state = gov::TaskState::pending;
  preemptor.submitted_at = 1;
  cohort->preemptor = core.tasks.add(std::move(preemptor), /*claim_id=*/true);
  cohort->flavor = static_cast<uint32_t>(flavor);
  core.now = 1;
  return cohort;
}

}  // namespace gov::bench
