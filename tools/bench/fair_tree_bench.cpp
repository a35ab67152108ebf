// Fair-sharing preemption in a three-level tree of cohorts (issue 20; docs/performance.md): the
// target search for Kueue's "hierarchical preemption" shape (tests/corpus/kueue-fair-tree-
// hierarchical.gov) scaled k times: root, left and right with 5k GPUs of their own, teams a and b
// in left, c at the root, d and e in right with k each; b, c, d and e hold 5k one-GPU tasks each
// (20k admitted, the tree full), and a's pending task of 5k GPUs preempts 5k of them through the
// walk down the tree. `preemption/fair-flat/k` is the same teams, quotas and tasks in one flat
// cohort (the cohorts' 15k as the cohort's own quota), for comparison.
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "runtime/engine/preemption.hpp"
#include "runtime/engine/engine_core.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/registration.hpp"

namespace gov::bench {
namespace {

constexpr int kScales[] = {1, 10, 100, 1000};

std::string policy_text(int k, bool tree) {
  std::string text = fmt::format(R"(catalog bench {{
  instance ml.g5.8xlarge {{ accelerator = nvidia-a10g, gpus = 1, vcpus = 32, memory = 128 GiB }}
}}

cluster fair-tree {{
  catalog  = bench
  capacity = {{ ml.g5.8xlarge: {} }}
}}

policy {{
  task-prioritization = task-ranking
  idle-compute        = fair-share

  priority p5 = 5
  priority p4 = 4
  priority p3 = 3
  priority p2 = 2
  priority p1 = 1
}}
)",
                                 20 * k);
  if (tree) {
    text += fmt::format(R"(
cohort root {{
  quota ml.g5.8xlarge {{ gpus = {0} }}
}}

cohort left {{
  parent            = root
  fair-share-weight = 2
  quota ml.g5.8xlarge {{ gpus = {0} }}
}}

cohort right {{
  parent = root
  quota ml.g5.8xlarge {{ gpus = {0} }}
}}
)",
                        5 * k);
  } else {
    text += fmt::format("\ncohort all {{\n  quota ml.g5.8xlarge {{ gpus = {} }}\n}}\n", 15 * k);
  }
  const struct {
    const char* name;
    const char* cohort;
    const char* weight;
  } teams[] = {{"a", "left", "2"}, {"b", "left", "1"}, {"c", "root", "1"}, {"d", "right", "1"}, {"e", "right", "0.99"}};
  for (const auto& team : teams) {
    text += fmt::format(R"(
team {} {{
  {}quota ml.g5.8xlarge {{ gpus = {} }}

  borrow-limit          = unlimited
  preempt-team-tasks    = never
  reclaim-within-cohort = {}
  fair-share-weight     = {}
}}
)",
                        team.name, tree ? fmt::format("cohort = {}\n  ", team.cohort) : std::string(), k,
                        team.name[0] == 'a' ? "any" : "never", team.weight);
  }
  return text;
}

struct TreeState {
  std::unique_ptr<Policy> policy;
  std::unique_ptr<engine::EngineCore> core;
  engine::PreemptionRequest request;
  size_t admitted = 0;
};

/// The state for scale `k`, built on first use and kept.
TreeState* state_for(int k, bool tree, std::string& error) {
  static std::map<std::pair<int, bool>, std::unique_ptr<TreeState>> states;
  auto it = states.find({k, tree});
  if (it != states.end()) return it->second.get();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("gov-bench-fair-{}-{}.gov", tree ? "tree" : "flat", k);
  std::ofstream(path) << policy_text(k, tree);
  auto state = std::make_unique<TreeState>();
  state->policy = load_policy(path.string(), error);
  std::filesystem::remove(path);
  if (state->policy == nullptr) return nullptr;
  const ir::Module& module = state->policy->module;
  state->core = std::make_unique<engine::EngineCore>(module, *state->policy->interp, engine::EngineOptions{});
  engine::EngineCore& core = *state->core;
  const auto flavor = static_cast<uint32_t>(module.flavor_index("ml.g5.8xlarge"));
  std::vector<gov::Decision> ignored;
  for (const char* team : {"b", "c", "d", "e"}) {
    for (int i = 0; i < 5 * k; ++i) {
      engine::Task task;
      task.id = fmt::format("{}{}", team, i);
      task.team = module.team_index(team);
      task.class_index = module.class_index(fmt::format("p{}", 1 + i % 5));
      task.priority = module.priority_of(task.class_index);
      task.requested_flavor = static_cast<int32_t>(flavor);
      task.request[ir::index(ir::Resource::gpu)] = 1;
      task.state = gov::TaskState::pending;
      const uint32_t index = core.tasks.add(std::move(task), /*claim_id=*/true);
      engine::admit(core, index, flavor, ignored);
      ignored.clear();
      ++state->admitted;
    }
  }
  engine::Task preemptor;
  preemptor.id = "incoming";
  preemptor.team = module.team_index("a");
  preemptor.requested_flavor = static_cast<int32_t>(flavor);
  preemptor.request[ir::index(ir::Resource::gpu)] = 5 * k;
  preemptor.state = gov::TaskState::pending;
  preemptor.submitted_at = 1;
  const uint32_t index = core.tasks.add(std::move(preemptor), /*claim_id=*/true);
  core.now = 1;
  state->request.preemptor = index;
  state->request.team = static_cast<uint32_t>(module.team_index("a"));
  state->request.parts[0] = {flavor, core.tasks[index].request, engine::resource_bit(ir::Resource::gpu)};
  return states.emplace(std::make_pair(k, tree), std::move(state)).first->second.get();
}

void search(benchmark::State& bench, int k, bool tree) {
  std::string error;
  TreeState* state = state_for(k, tree, error);
  if (state == nullptr) {
    bench.SkipWithError(error.c_str());
    return;
  }
  std::vector<engine::Target> targets;
  engine::find_targets(state->core->search_context(), state->request, targets);
  if (targets.empty()) {
    bench.SkipWithError("the preemptor finds no victims: the tree is not what the benchmark expects");
    return;
  }
  for (auto _ : bench) {
    engine::find_targets(state->core->search_context(), state->request, targets);
    benchmark::DoNotOptimize(targets.data());
  }
  bench.counters["admitted"] = static_cast<double>(state->admitted);
  bench.counters["victims"] = static_cast<double>(targets.size());
}

[[maybe_unused]] const bool registered = [] {
  for (int k : kScales) {
    for (bool tree : {true, false}) {
      repeated(benchmark::RegisterBenchmark(fmt::format("preemption/fair-{}/{}", tree ? "tree" : "flat", k).c_str(),
                                            [k, tree](benchmark::State& s) { search(s, k, tree); })
                   ->Unit(benchmark::kMicrosecond),
               5);
    }
  }
  return true;
}();

}  // namespace
}  // namespace gov::bench
