// Deterministic task generation for the benchmarks, over a real policy's IR.
#include "tools/bench/workload.hpp"

#include <random>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/lower/lower.hpp"

namespace gov::bench {
namespace {

using Rng = std::mt19937_64;

int64_t uniform(Rng& rng, int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(rng);
}

size_t stat(ir::TeamStat s, ir::Resource r) {
  return static_cast<size_t>(s) * ir::kResourceCount + ir::index(r);
}
size_t stat(ir::ClusterStat s, ir::Resource r) {
  return static_cast<size_t>(s) * ir::kResourceCount + ir::index(r);
}
size_t field(ir::TaskField f) {
  return static_cast<size_t>(f);
}

void make_task(Rng& rng, const ir::Module& module, ir::RuleInput& input) {
  const int64_t gpus = uniform(rng, 0, 4);
  input.task[field(ir::TaskField::team)] =
      uniform(rng, 0, static_cast<int64_t>(module.teams.size()) - 1);
  input.task[field(ir::TaskField::priority)] =
      module.classes.empty() ? 0
                             : module
                                   .classes[static_cast<size_t>(uniform(
                                       rng, 0, static_cast<int64_t>(module.classes.size()) - 1))]
                                   .weight;
  input.task[field(ir::TaskField::flavor)] =
      uniform(rng, -1, static_cast<int64_t>(module.flavors.size()) - 1);
  input.task[field(ir::TaskField::gpus)] = gpus;
  input.task[field(ir::TaskField::vcpus)] = uniform(rng, 1, 32) * 1000;
  input.task[field(ir::TaskField::memory)] = uniform(rng, 1, 256) * 1024;
  input.task[field(ir::TaskField::instances)] = uniform(rng, 0, 2);
  input.task[field(ir::TaskField::pods)] = uniform(rng, 1, 24);
  input.task[field(ir::TaskField::id)] = ir::kOtherString;
}

void make_state(Rng& rng, ir::RuleInput& input) {
  const int64_t capacity = 4;
  const int64_t used = uniform(rng, 0, capacity);
  input.cluster[stat(ir::ClusterStat::capacity, ir::Resource::gpu)] = capacity;
  input.cluster[stat(ir::ClusterStat::used, ir::Resource::gpu)] = used;
  input.cluster[stat(ir::ClusterStat::available, ir::Resource::gpu)] = capacity - used;
  const int64_t team_used = uniform(rng, 0, 3);
  input.team[stat(ir::TeamStat::nominal, ir::Resource::gpu)] = 2;
  input.team[stat(ir::TeamStat::used, ir::Resource::gpu)] = team_used;
  input.team[stat(ir::TeamStat::borrowed, ir::Resource::gpu)] = team_used > 2 ? team_used - 2 : 0;
  input.team[stat(ir::TeamStat::borrowing_limit, ir::Resource::gpu)] = 1;
  input.team[stat(ir::TeamStat::available, ir::Resource::gpu)] = 3 - team_used;
}

/// Most tasks carry their labels; some miss one or leave it empty.
int64_t make_label(Rng& rng) {
  const int64_t roll = uniform(rng, 0, 9);
  if (roll == 0) return ir::kAbsentLabel;
  if (roll == 1) return 0;  // present but empty
  return ir::kOtherString;
}

/// A task as a controller would submit it: a team and class of the module, whole instances
/// or a GPU / vCPU / memory request, usually the labels the rules ask for.
gov::Task make_spec(Rng& rng, const ir::Module& module, size_t serial) {
  gov::Task spec;
  spec.id = "task-" + std::to_string(serial);
  spec.team = module.teams[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(module.teams.size()) - 1))].name;
  if (!module.classes.empty() && uniform(rng, 0, 4) != 0) {
    spec.priority =
        module.classes[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(module.classes.size()) - 1))].name;
  }
  if (uniform(rng, 0, 3) == 0) {
    spec.instances = 1;
  } else {
    spec.amounts[ir::index(ir::Resource::gpu)] = uniform(rng, 0, 1);
    spec.amounts[ir::index(ir::Resource::vcpu)] = uniform(rng, 1, 16) * 1000;
    spec.amounts[ir::index(ir::Resource::memory)] = uniform(rng, 1, 64) * 1024;
  }
  if (uniform(rng, 0, 9) != 0) spec.labels.emplace_back("project", "llm");
  if (uniform(rng, 0, 9) != 0) spec.labels.emplace_back("cost-center", "cc-42");
  return spec;
}

}  // namespace

std::unique_ptr<Workload> make_workload(const std::string& path, const std::string& root,
                                        uint64_t seed, size_t count, std::string* error) {
  driver::Result loaded = driver::load(driver::Source::file(path, root), driver::Request::up_to(driver::Stage::lower));
  if (!loaded.ok()) {
    *error = loaded.error->kind == driver::ErrorKind::io ? "cannot load " + path + ": " + loaded.error->message
                                                           : path + " does not check";
    return nullptr;
  }
  auto workload = std::make_unique<Workload>();
  workload->module = std::move(loaded.policy->module);
  const size_t keys = workload->module.label_keys.size();
  Rng rng(seed);
  workload->label_ids.resize(count * keys);
  workload->inputs.resize(count);
  for (size_t i = 0; i < count; ++i) {
    make_task(rng, workload->module, workload->inputs[i]);
    make_state(rng, workload->inputs[i]);
    for (size_t k = 0; k < keys; ++k) workload->label_ids[i * keys + k] = make_label(rng);
    workload->inputs[i].labels = keys == 0 ? nullptr : &workload->label_ids[i * keys];
  }
  for (size_t i = 0; i < count; ++i) workload->tasks.push_back(make_spec(rng, workload->module, i));
  return workload;
}

}  // namespace gov::bench
