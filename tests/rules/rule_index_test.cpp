// The rule index (compiler/ir/rule_index.hpp): what lowering builds from the guards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/driver/driver.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/rule_index.hpp"

namespace gov::test::rule_index {
namespace {

constexpr const char* kHeader = R"(catalog c {
  instance ml.g5.12xlarge { accelerator = nvidia-a10g, gpus = 4, vcpus = 48, memory = 192 GiB }
  instance ml.p4d.24xlarge { accelerator = nvidia-a100, gpus = 8, vcpus = 96, memory = 1152 GiB }
  instance ml.c5.2xlarge  { vcpus = 8, memory = 16 GiB }
}

cluster k {
  catalog  = c
  capacity = { ml.g5.12xlarge: 4, ml.p4d.24xlarge: 2, ml.c5.2xlarge: 4 }
}

policy {
  task-prioritization = task-ranking
  idle-compute        = fair-share
  default-priority    = training

  priority inference       = 90
  priority experimentation = 80
  priority training        = 70
  priority fine-tuning     = 50
}

team team-a {
  quota ml.g5.12xlarge { instances = 2 }
  quota ml.c5.2xlarge  { instances = 2 }
}

team team-b {
  quota ml.g5.12xlarge  { instances = 2 }
  quota ml.p4d.24xlarge { instances = 1 }
}

team team-c {
  quota ml.p4d.24xlarge { instances = 1 }
  quota ml.c5.2xlarge   { instances = 2 }
}

team team-d {
  quota ml.c5.2xlarge { instances = 0 }
}
)";

std::unique_ptr<driver::Policy> lowered(const std::string& rules) {
  driver::Result loaded = driver::load(driver::Source::text("index.gov", kHeader + rules),
                                       driver::Request::up_to(driver::Stage::lower));
  if (!loaded.ok()) FAIL("the policy does not check:\n" << (loaded.error ? loaded.error->message : "") << "\n" << rules);
  return std::move(loaded.policy);
}

std::vector<uint32_t> rules_of(const ir::RuleIndex& index, const std::string& dimension, int64_t value,
                               const ir::Module& module) {
  for (const ir::RuleDimension& d : index.dimensions) {
    if (ir::key_name(module, d.key) != dimension) continue;
    if (const std::vector<uint32_t>* rules = ir::bucket_of(d, value)) return *rules;
  }
  return {};
}

}  // namespace

TEST_CASE("lowering groups the rules by the key tests their guards start with", "[rule-index]") {
  const auto policy = lowered(R"(
rule r0 {
  when task.priority == experimentation and task.gpus > 2
  deny "r0"
}
rule r1 {
  when task.team in [team-a, team-b] and task.gpus > 1
  warn "r1"
}
rule r2 {
  when task.gpus > 8
  deny "r2"
}
rule r3 {
  when task.labels["tier"] == "batch" and task.priority == training
  warn "r3"
}
rule r4 {
  when (task.team == team-a or task.team == team-c) and task.gpus > 0
  warn "r4"
}
rule r5 {
  when task.team == team-a and task.gpus > 0 and task.team == team-b
  deny "r5"
}
rule r6 {
  when task.instance-type == ml.g5.12xlarge or task.gpus > 3
  warn "r6"
}
rule r7 {
  when not (task.team == team-a)
  warn "r7"
}
rule r8 {
  when task.instance-type in [ml.c5.2xlarge] and task.team == team-d
  warn "r8"
}
)");
  const ir::Module& m = policy->module;
  const ir::RuleIndex& index = m.rule_index;
  REQUIRE(index.built);
  CHECK(index.always == std::vector<uint32_t>{2, 6, 7});  // no key test, an `or` of two keys, a negation
  CHECK(index.never == std::vector<uint32_t>{5});         // team-a and team-b at once
  CHECK(rules_of(index, "task.priority", 80, m) == std::vector<uint32_t>{0});
  CHECK(rules_of(index, "task.team", 0, m) == std::vector<uint32_t>{1, 4});
  CHECK(rules_of(index, "task.team", 1, m) == std::vector<uint32_t>{1});
  CHECK(rules_of(index, "task.team", 2, m) == std::vector<uint32_t>{4});
  // A team (1 of 4) beats an instance type (1 of 4: three and none) on a tie: the lower key.
  CHECK(rules_of(index, "task.team", 3, m) == std::vector<uint32_t>{8});
  // A label value (1 of the module's strings) is more selective than a class (1 of 5).
  const int64_t batch = std::find(m.strings.begin(), m.strings.end(), "batch") - m.strings.begin();
  CHECK(rules_of(index, "task.labels[\"tier\"]", batch, m) == std::vector<uint32_t>{3});
  CHECK(index.dimensions.size() == 3);

  const std::string printed = ir::print(m);
  CHECK(printed.find("rule_index always [2, 6, 7]\n") != std::string::npos);
  CHECK(printed.find("  by task.team\n    0 (team-a) [1, 4]\n    1 (team-b) [1]\n") != std::string::npos);
  CHECK(printed.find("  by task.priority\n    80 (experimentation) [0]\n") != std::string::npos);
  CHECK(printed.find("(\"batch\") [3]\n") != std::string::npos);
  CHECK(printed.find("  never [5]\n") != std::string::npos);
}

}  // namespace gov::test::rule_index
