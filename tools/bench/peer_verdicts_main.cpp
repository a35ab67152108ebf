// gov-peer-verdicts: which of the workshop rules match each task of workshop-tasks.json, by the
// JIT and by the interpreter (they must agree), as JSON for the peers' check
// (tools/bench/peers/peers.mjs fails the run when Cedar or CEL answers differently):
//   {"engine":"gov","rules":["cap-experimentation",...],"verdicts":[5,0,...]}
// verdicts[i] has bit r set when rule r (declared order) matches task i.
#include <fmt/format.h>

#include <string>

#include "tools/bench/bench_support.hpp"
#include "tools/bench/workshop_tasks.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: gov-peer-verdicts POLICY.gov TASKS.json\n");
    return 2;
  }
  std::string error;
  const auto policy = gov::bench::load_policy(argv[1], error);
  const auto tasks = policy ? gov::bench::read_rule_tasks(argv[2], policy->module, error) : nullptr;
  if (!tasks) {
    fmt::print(stderr, "gov-peer-verdicts: {}\n", error);
    return 2;
  }
  if (!policy->jit) {
    fmt::print(stderr, "gov-peer-verdicts: JIT unavailable: {}\n", policy->jit_error);
    return 2;
  }
  const size_t rule_count = policy->module.rules.size();
  std::vector<uint8_t> jit(rule_count);
  std::vector<uint8_t> interp(rule_count);
  std::string out = R"({"engine":"gov","rules":[)";
  for (size_t r = 0; r < rule_count; ++r) out += fmt::format("{}\"{}\"", r ? "," : "", policy->module.rules[r].name);
  out += R"(],"verdicts":[)";
  for (size_t i = 0; i < tasks->inputs.size(); ++i) {
    policy->jit->evaluate_rules(tasks->inputs[i], jit);
    policy->interp->evaluate_rules(tasks->inputs[i], interp);
    if (jit != interp) {
      fmt::print(stderr, "gov-peer-verdicts: JIT and interpreter disagree on task {}\n", tasks->ids[i]);
      return 1;
    }
    out += fmt::format("{}{}", i ? "," : "", gov::bench::verdict_mask(jit));
  }
  out += "]}\n";
  fmt::print("{}", out);
  return 0;
}
