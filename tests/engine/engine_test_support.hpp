// Helpers for the engine tests: hand-built modules (no compiler involved), task builders and a
// decision-stream formatter in the docs/interfaces.md "Decision stream" shape.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/engine/engine.hpp"

namespace gov::engine::test {

inline constexpr Time kSecond = 1000;

/// Resources in base units: gpu, neuron, vcpu (millicores), memory (MiB), efa.
ir::Resources amounts(ir::Amount gpu, ir::Amount neuron = 0, ir::Amount vcpu = 0,
                      ir::Amount memory = 0, ir::Amount efa = 0);
inline ir::Resources gpus(ir::Amount n) {
  return amounts(n);
}
/// n × a flavor's per-instance resources.
ir::Resources instances(const ir::Flavor& flavor, int64_t n);

ir::Flavor make_flavor(std::string name, ir::Resources per_instance, int64_t capacity);
/// A one-flavor-per-call quota: nominal and borrowing limit (lending limit unlimited unless given).
ir::FlavorQuota make_quota(uint32_t flavor, ir::Resources nominal, ir::Resources borrowing_limit,
                           ir::Resources lending_limit = {ir::kUnlimited, ir::kUnlimited,
                                                          ir::kUnlimited, ir::kUnlimited,
                                                          ir::kUnlimited});
ir::Team make_team(std::string name, std::vector<ir::FlavorQuota> quotas);
/// Every resource unlimited.
ir::Resources unlimited();

/// The HyperPod workshop: 4 × ml.g5.8xlarge (1 GPU, 32 vCPU, 128 GiB, 1 EFA each); team-a and
/// team-b with 2 instances each, lend-and-borrow, borrow limit 50 % (gpu 1, vcpu 32, memory
/// 128 GiB, efa 1), in-team preemption of lower priority, weight 0; fair sharing on, task ranking
/// on; classes inference 90, experimentation 80, training 70, fine-tuning 50.
ir::Module workshop_module();

/// A team of a one-flavor, GPU-only cluster: nominal GPUs and limits (kUnlimited: none).
struct GpuTeam {
  std::string name;
  ir::Amount nominal = 0;
  ir::Amount borrowing_limit = ir::kUnlimited;
  ir::Amount lending_limit = ir::kUnlimited;
  int32_t weight = 1;
};
/// One flavor `gpu` (1 GPU per instance, capacity Σ nominal), the given teams (in-team
/// preemption of lower priority, reclaim any), classes low 10 / mid 50 / high 90; classical
/// (fcfs idle compute) unless `fair_sharing`.
ir::Module gpu_module(const std::vector<GpuTeam>& teams, bool fair_sharing = false);

/// A task specification, fluently.
struct TaskBuilder {
  gov::Task spec;
  TaskBuilder(std::string id, std::string team);
  TaskBuilder& gpus(ir::Amount n);
  TaskBuilder& vcpu_millis(ir::Amount n);
  TaskBuilder& memory_mib(ir::Amount n);
  TaskBuilder& efa(ir::Amount n);
  TaskBuilder& instances(int64_t n);
  TaskBuilder& pods(int64_t n);
  TaskBuilder& type(std::string instance_type);
  TaskBuilder& priority(std::string name);
  TaskBuilder& duration(Time ms);
  TaskBuilder& label(std::string key, std::string value);
  operator gov::Task() const { return spec; }  // NOLINT: builder
};

/// An engine together with the module and interpreter it refers to.
struct Harness {
  explicit Harness(ir::Module m, EngineOptions options = {});
  std::vector<Decision> submit(Time at, gov::Task spec);
  std::vector<Decision> submit_all(Time at, std::vector<gov::Task> specs);
  std::vector<Decision> finish(Time at, std::string id);
  std::vector<Decision> cancel(Time at, std::string id);
  std::vector<Decision> advance(Time at);

  std::unique_ptr<ir::Module> module;
  std::unique_ptr<interp::Interpreter> interpreter;
  std::unique_ptr<Engine> engine;
};

/// One decision as a JSON line of docs/interfaces.md (`at` in seconds, vcpu in cores, memory in
/// GiB).
std::string json_line(const Decision& decision);
std::vector<std::string> json_lines(const std::vector<Decision>& decisions);

/// The ids of the tasks with this outcome, in decision order.
std::vector<std::string> ids_with(const std::vector<Decision>& decisions, Outcome outcome);
/// The last decision about `task`, or nullptr.
const Decision* last_for(const std::vector<Decision>& decisions, const std::string& task);
/// The usage of a team in a flavor and resource, from a snapshot.
ir::Amount used(const Engine& engine, const std::string& team, const std::string& flavor,
                ir::Resource resource);
/// The state of the latest task with this id.
TaskState state_of(const Engine& engine, const std::string& id);

}  // namespace gov::engine::test
