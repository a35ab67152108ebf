// The rule index (compiler/ir/rule_index.hpp): what lowering builds from the guards, and a
// randomized differential test of the indexed evaluation against evaluating every rule, in both
// back ends.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "compiler/driver/driver.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/decisions.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/rule_index.hpp"
#include "compiler/jit/jit.hpp"

namespace gov::test::rule_index {
namespace {

using Rng = std::mt19937_64;

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

const std::vector<std::string> kTeams = {"team-a", "team-b", "team-c", "team-d"};
const std::vector<std::string> kClasses = {"inference", "experimentation", "training", "fine-tuning"};
const std::vector<std::string> kTypes = {"ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.c5.2xlarge"};
const std::vector<std::string> kLabelKeys = {"tier", "project"};
const std::vector<std::string> kLabelValues = {"batch", "interactive", "llm", "vision", ""};

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

// ------------------------------------------------------------------ random policies

size_t below(Rng& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
template <typename T>
const T& pick(Rng& rng, const std::vector<T>& items) {
  return items[below(rng, items.size())];
}
std::string quoted(const std::string& s) { return "\"" + s + "\""; }

/// Two distinct items as a list `[x, y]` (or one).
std::string list_of(Rng& rng, const std::vector<std::string>& items, bool quote) {
  std::string a = pick(rng, items), b = pick(rng, items);
  if (quote) a = quoted(a), b = quoted(b);
  return a == b ? "[" + a + "]" : "[" + a + ", " + b + "]";
}

/// A key test, indexable or not: equalities and `in` on the team, class, instance type, labels
/// and id, disjunctions of one key or of two, negations.
std::string key_test(Rng& rng) {
  const std::string label = "task.labels[" + quoted(pick(rng, kLabelKeys)) + "]";
  switch (below(rng, 14)) {
    case 0: return "task.team == " + pick(rng, kTeams);
    case 1: return "task.team in " + list_of(rng, kTeams, false);
    case 2: return "task.priority == " + pick(rng, kClasses);
    case 3: return "task.priority in " + list_of(rng, kClasses, false);
    case 4: return "task.instance-type == " + pick(rng, kTypes);
    case 5: return "task.instance-type in " + list_of(rng, kTypes, false);
    case 6: return label + " == " + quoted(pick(rng, kLabelValues));
    case 7: return label + " in " + list_of(rng, kLabelValues, true);
    case 8: return "(task.team == " + pick(rng, kTeams) + " or task.team == " + pick(rng, kTeams) + ")";
    case 9: return "(task.team == " + pick(rng, kTeams) + " or task.priority == " + pick(rng, kClasses) + ")";
    case 10: return "task.id == \"job-" + std::to_string(below(rng, 3)) + "\"";
    case 11: return "not (task.team == " + pick(rng, kTeams) + ")";
    case 12: return "task.team != " + pick(rng, kTeams);
    default: return "task.priority >= " + pick(rng, kClasses);
  }
}

std::string body_test(Rng& rng) {
  switch (below(rng, 5)) {
    case 0: return "task.gpus > " + std::to_string(below(rng, 4));
    case 1: return "team.used.gpus >= " + std::to_string(below(rng, 6));
    case 2: return quoted(pick(rng, kLabelKeys)) + " in task.labels";
    case 3: return "cluster.available.gpus < " + std::to_string(below(rng, 8));
    default: return "task.vcpus > " + std::to_string(below(rng, 40));
  }
}

/// A condition: up to three key tests and a body test joined by `and` (in random groups), now
/// and then `or`-ed with another.
std::string condition(Rng& rng, int depth = 0) {
  std::vector<std::string> parts;
  for (size_t n = below(rng, 4); n > 0; --n) parts.push_back(key_test(rng));
  if (parts.empty() || below(rng, 3) != 0) parts.push_back(body_test(rng));
  std::shuffle(parts.begin(), parts.end(), rng);
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) out = (below(rng, 4) == 0 ? "(" + out + ")" : out) + " and " + parts[i];
  if (depth == 0 && below(rng, 8) == 0) out = "(" + out + ") or (" + condition(rng, 1) + ")";
  return out;
}

std::string random_rules(Rng& rng, size_t count) {
  std::string out;
  for (size_t r = 0; r < count; ++r) {
    out += "rule r" + std::to_string(r) + " {\n  when " + condition(rng) + "\n  ";
    out += below(rng, 3) == 0 ? "deny" : "warn";
    out += " \"rule " + std::to_string(r) + " on {task.gpus} GPUs\"\n}\n";
  }
  return out;
}

/// One input, raw: a team of the module, a class weight (or another priority), an instance type
/// or none, label ids among every string, absent and other values, random figures.
void random_input(Rng& rng, const ir::Module& module, ir::RuleInput& input, std::vector<int64_t>& labels) {
  input = {};
  const auto field = [&](ir::TaskField f) -> int64_t& { return input.task[static_cast<size_t>(f)]; };
  field(ir::TaskField::team) = static_cast<int64_t>(below(rng, module.teams.size()));
  field(ir::TaskField::priority) =
      below(rng, 6) == 0 ? static_cast<int64_t>(below(rng, 100)) : pick(rng, module.classes).weight;
  field(ir::TaskField::flavor) = static_cast<int64_t>(below(rng, module.flavors.size() + 1)) - 1;
  field(ir::TaskField::gpus) = static_cast<int64_t>(below(rng, 5));
  field(ir::TaskField::vcpus) = static_cast<int64_t>(below(rng, 50)) * 1000;
  field(ir::TaskField::pods) = 1;
  field(ir::TaskField::id) =
      below(rng, 2) == 0 ? ir::kOtherString : static_cast<int64_t>(below(rng, module.strings.size()));
  for (int64_t& value : input.team) value = static_cast<int64_t>(below(rng, 8));
  for (int64_t& value : input.cluster) value = static_cast<int64_t>(below(rng, 8));
  labels.resize(module.label_keys.size());
  for (int64_t& id : labels) {
    const size_t roll = below(rng, module.strings.size() + 2);
    id = roll == 0 ? ir::kAbsentLabel : roll == 1 ? ir::kOtherString : static_cast<int64_t>(roll - 2);
  }
  input.labels = below(rng, 20) == 0 || labels.empty() ? nullptr : labels.data();
}

/// The two back ends of a module: the interpreter, and the JIT when LLVM is there.
struct BackEnds {
  std::unique_ptr<interp::Interpreter> interp;
  std::unique_ptr<jit::JitEvaluator> jit;
};

BackEnds back_ends(const ir::Module& module) {
  BackEnds out;
  out.interp = std::make_unique<interp::Interpreter>(module);
  auto compiled = jit::compile_and_load(module);
  if (!compiled) FAIL("the JIT failed: " << compiled.error().message);
  out.jit = std::move(*compiled);
  return out;
}

/// Compares, over `inputs` random inputs, the verdicts and decisions of the indexed module in
/// both back ends with the same module's every rule evaluated (the interpreter's reference path,
/// and both back ends on a copy whose index is not built). Returns how many rules the index
/// let the back ends evaluate, and how many every-rule evaluation took.
std::pair<size_t, size_t> compare(const ir::Module& indexed, uint64_t seed, size_t inputs) {
  REQUIRE(indexed.rule_index.built);
  ir::Module every = indexed;
  every.rule_index = {};
  const BackEnds fast = back_ends(indexed);
  const BackEnds slow = back_ends(every);
  const ir::QuotaTable table = ir::quota_table(indexed);
  const ir::FigureSlots slots = ir::figure_slots(every);
  const size_t rules = indexed.rules.size();
  const size_t cells = table.cells.size() * ir::kColumnCount;  // a row per slot (ir::UsageView)
  std::vector<ir::Amount> usage(cells), cohort(indexed.flavors.size() * ir::kColumnCount),
      flavor_usage(cohort.size());
  Rng rng(seed);
  std::vector<int64_t> labels;
  size_t evaluated = 0;
  for (size_t i = 0; i < inputs; ++i) {
    ir::RuleInput input;
    random_input(rng, indexed, input, labels);
    ir::for_each_candidate(indexed.rule_index, input, [&](uint32_t) { ++evaluated; });
    std::vector<uint8_t> reference(rules, 7), interp(rules, 7), jit(rules, 7), jit_every(rules, 7);
    fast.interp->evaluate_every_rule(input, reference);
    fast.interp->evaluate_rules(input, interp);
    fast.jit->evaluate_rules(input, jit);
    slow.jit->evaluate_rules(input, jit_every);
    INFO("seed " << seed << ", input " << i);
    REQUIRE(interp == reference);
    REQUIRE(jit == reference);
    REQUIRE(jit_every == reference);

    // The whole decision, figures from a random usage.
    for (ir::Amount& a : usage) a = static_cast<ir::Amount>(below(rng, 3));
    std::fill(usage.begin(), usage.begin() + ir::kColumnCount, 0);  // the absent cell's row
    for (ir::Amount& a : cohort) a = static_cast<ir::Amount>(below(rng, 6));
    for (ir::Amount& a : flavor_usage) a = static_cast<ir::Amount>(below(rng, 6));
    const ir::DecideInput decide{input.task.data(), input.labels, {usage.data(), cohort.data(), flavor_usage.data()}};
    // The reference: every rule's verdict on the figures of this usage, then conclude.
    std::vector<uint8_t> slow_verdicts(rules, 0);
    if (ir::decide_input_in_range(every, decide)) {
      ir::RuleInput with_figures = input;
      const auto team = static_cast<uint32_t>(input.task[static_cast<size_t>(ir::TaskField::team)]);
      const auto flavor = static_cast<int32_t>(input.task[static_cast<size_t>(ir::TaskField::flavor)]);
      ir::fill_figures(every, table, decide.usage, team, flavor, slots, with_figures);
      slow.interp->evaluate_every_rule(with_figures, slow_verdicts);
    }
    const ir::DecideResult expected = ir::conclude(every, table, decide, slow_verdicts);
    for (const BackEnds* b : {&fast, &slow}) {
      for (const ir::Evaluator* evaluator : {static_cast<const ir::Evaluator*>(b->interp.get()),
                                             static_cast<const ir::Evaluator*>(b->jit.get())}) {
        INFO((b == &fast ? "indexed " : "every rule ") << evaluator->name());
        CHECK(evaluator->decide(decide) == expected);
      }
    }
  }
  return {evaluated, rules * inputs};
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

TEST_CASE("a rule index the rules no longer give is not used: every rule is evaluated", "[rule-index]") {
  // A module whose rules changed after lowering (a tool, a test) keeps an index for other
  // rules: skipping rules on its word would lose verdicts, in the interpreter and the JIT alike.
  auto policy = lowered("rule r0 {\n  when task.team == team-b and task.gpus > 1\n  deny \"r0\"\n}\n");
  ir::Module module = policy->module;
  CHECK(ir::usable_rule_index(module) == &module.rule_index);
  module.rules.push_back(module.rules[0]);
  module.rules[1].name = "r1";
  CHECK(ir::usable_rule_index(module) == nullptr);
  ir::RuleInput input;
  input.task[static_cast<size_t>(ir::TaskField::team)] = 1;
  input.task[static_cast<size_t>(ir::TaskField::gpus)] = 2;
  const BackEnds both = back_ends(module);
  for (const ir::Evaluator* evaluator : {static_cast<const ir::Evaluator*>(both.interp.get()),
                                         static_cast<const ir::Evaluator*>(both.jit.get())}) {
    INFO(evaluator->name());
    std::vector<uint8_t> verdicts(2);
    evaluator->evaluate_rules(input, verdicts);
    CHECK(verdicts == std::vector<uint8_t>{1, 1});
  }
  module.rule_index = ir::index_rules(module);
  CHECK(ir::usable_rule_index(module) == &module.rule_index);
  CHECK(module.rule_index.dimensions[0].buckets[0].rules == std::vector<uint32_t>{0, 1});
}

TEST_CASE("the indexed rules agree with every rule evaluated on random policies in both back ends", "[rule-index]") {
  size_t evaluated = 0, every = 0, modules = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Rng rng(seed);
    const size_t count = seed % 20 == 0 ? 300 + below(rng, 300) : 1 + below(rng, 80);  // the JIT indexes 16 and more
    const std::string rules = random_rules(rng, count);
    const auto policy = lowered(rules);
    INFO(rules);
    const auto [fast, slow] = compare(policy->module, seed, count > 100 ? 100 : 300);
    evaluated += fast, every += slow, ++modules;
  }
  WARN(modules << " random policies: the index evaluated " << evaluated << " rules where every rule is " << every);
  CHECK(evaluated < every);
}

TEST_CASE("the differential check of the rule index catches a rule left out of its bucket", "[rule-index]") {
  // The comparison above has teeth: the candidates of an index missing one rule of a bucket
  // (as an unsound index_rules would build it) disagree with evaluating every rule on some input.
  const auto policy = lowered("rule r0 {\n  when task.team == team-b and task.gpus > 1\n  deny \"r0\"\n}\n"
                              "rule r1 {\n  when task.team == team-b\n  warn \"r1\"\n}\n");
  const ir::Module& module = policy->module;
  ir::RuleIndex unsound = module.rule_index;
  REQUIRE(unsound.dimensions.size() == 1);
  unsound.dimensions[0].buckets[0].rules = {1};
  const interp::Interpreter interpreter(module);
  Rng rng(7);
  bool differs = false;
  std::vector<int64_t> labels;
  for (size_t i = 0; i < 200 && !differs; ++i) {
    ir::RuleInput input;
    random_input(rng, module, input, labels);
    std::vector<uint8_t> reference(2), indexed(2), sound(2);
    interpreter.evaluate_every_rule(input, reference);
    interpreter.evaluate_rules(input, sound);
    CHECK(sound == reference);
    ir::for_each_candidate(unsound, input, [&](uint32_t rule) { indexed[rule] = interpreter.matches(rule, input); });
    differs = reference != indexed;
  }
  CHECK(differs);
}

TEST_CASE("a task of a sliced policy is checked against the rules of its team only", "[rule-index]") {
  // 4 teams × 25 rules, each rule guarded by its team: 100 rules, 25 candidates per task.
  std::string rules;
  for (size_t r = 0; r < 100; ++r) {
    rules += "rule r" + std::to_string(r) + " {\n  when task.team == " + kTeams[r / 25] + " and task.gpus > " +
             std::to_string(r % 5) + "\n  warn \"r\"\n}\n";
  }
  const auto policy = lowered(rules);
  const ir::Module& m = policy->module;
  CHECK(m.rule_index.always.empty());
  Rng rng(3);
  std::vector<int64_t> labels;
  for (size_t i = 0; i < 50; ++i) {
    ir::RuleInput input;
    random_input(rng, m, input, labels);
    size_t candidates = 0;
    ir::for_each_candidate(m.rule_index, input, [&](uint32_t rule) {
      CHECK(rule / 25 == static_cast<uint32_t>(input.task[static_cast<size_t>(ir::TaskField::team)]));
      ++candidates;
    });
    CHECK(candidates == 25);
  }
  compare(m, 3, 200);
}

}  // namespace gov::test::rule_index
