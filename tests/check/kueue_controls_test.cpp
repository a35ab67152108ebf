// Kueue's controls in the language (docs/language.md "Kueue's controls"): every control reaches
// the IR with its value, defaults reproduce HyperPod's settings, `gov fmt` round-trips the
// syntax, `gov inspect` shows effective values, `gov diff` reports changes, every new code has a
// golden case, and the reference's examples check and lint clean.
#include <catch2/catch.hpp>

#include <cstdio>
#include <unistd.h>

#include "tests/check/json_reader.hpp"
#include "tests/support/test_support.hpp"

using gov::test::parse_json;
using gov::test::run_gov;

namespace {

const char* const kHeader = R"(import "../../policies/catalog/aws-ml.gov"

cluster controls {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 8, ml.g5.12xlarge: 2 }
}
)";

const char* const kAllControls = R"(
policy {
  idle-compute          = fcfs
  fair-share-preemption = [less-than-initial-share]

  priority inference = 90
  priority training  = 70
}

team research {
  quota ml.g5.8xlarge  { instances = 4, lending-limit = { gpus = 1 } }
  quota ml.g5.12xlarge { instances = 1, lending-limit = { instances = 1, gpus = 2 } }

  preempt-team-tasks    = lower-or-newer-equal-priority
  reclaim-within-cohort = lower-priority
  borrow-within-cohort  = { policy = lower-priority, max-priority-threshold = training }
  queueing              = strict-fifo
  when-can-borrow       = try-next-flavor
  when-can-preempt      = try-next-flavor
  flavor-preference     = preemption-over-borrowing
}

team platform {
  quota ml.g5.8xlarge { instances = 4 }
}
)";

const char* const kDefaults = R"(
policy {
  idle-compute = fcfs

  priority inference = 90
  priority training  = 70
}

team research {
  quota ml.g5.8xlarge  { instances = 4 }
  quota ml.g5.12xlarge { instances = 1 }
}

team platform {
  quota ml.g5.8xlarge { instances = 4 }
}
)";

/// A policy file in a scratch directory of the build tree, next to a copy of the catalog at the
/// path kHeader imports (imports must stay under the policy root); removed on exit.
struct TempPolicy {
  explicit TempPolicy(const std::string& name, const std::string& text) : dir("controls-" + name) {
    dir.copy_catalog();
    path = dir.write("tests/check/" + name + ".gov", text);
  }
  std::string text() const { return gov::test::read_text(path); }
  gov::test::TempDir dir;
  std::string path;  // absolute (`gov` runs in the repository's root)
};

std::string line_starting(const std::string& text, const std::string& prefix) {
  const size_t at = text.find("\n" + prefix);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("a policy without Kueue controls lowers to HyperPod's settings", "[check][controls]") {
  const auto result = run_gov("check --emit=ir policies/examples/workshop-g5.gov");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("fair_share_strategies=[less-than-or-equal-to-final-share,less-than-initial-share]") !=
        std::string::npos);
  for (const std::string team : {"team-a", "team-b"}) {
    const std::string line = line_starting(result.out, "team " + std::to_string(team == "team-a" ? 0 : 1) + " " + team);
    INFO(line);
    // HyperPod's ClusterQueues (seed 004): borrowWithinCohort LowerPriority, whenCanBorrow TryNextFlavor.
    CHECK(line.find("within_team=lower-priority reclaim=any borrow_within_cohort=lower-priority borrow_threshold=none "
                    "queueing=best-effort-fifo when_can_borrow=try-next-flavor when_can_preempt=try-next-flavor "
                    "preference=borrowing-over-preemption") != std::string::npos);
  }
}

TEST_CASE("every Kueue control reaches the IR", "[check][controls]") {
  const TempPolicy policy("all", std::string(kHeader) + kAllControls);
  const auto result = run_gov("check --emit=ir " + policy.path);
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("fair_share_strategies=[less-than-initial-share]") != std::string::npos);
  const std::string research = line_starting(result.out, "team 0 research");
  CHECK(research ==
        "team 0 research sharing=lend-and-borrow within_team=lower-or-newer-equal-priority reclaim=lower-priority "
        "borrow_within_cohort=lower-priority borrow_threshold=70 queueing=strict-fifo when_can_borrow=try-next-flavor "
        "when_can_preempt=try-next-flavor preference=preemption-over-borrowing weight=0");
  // The lending limits: 1 GPU of ml.g5.8xlarge (the rest unlimited); 1 instance of
  // ml.g5.12xlarge with its GPUs overridden to 2.
  const size_t first = result.out.find("lending_limit", result.out.find("team 0 research"));
  CHECK(result.out.substr(first, result.out.find('\n', first) - first) ==
        "lending_limit   gpu=1 neuron=unlimited vcpu_m=unlimited memory_mib=unlimited efa=unlimited");
  const size_t second = result.out.find("lending_limit", first + 1);
  CHECK(result.out.substr(second, result.out.find('\n', second) - second) ==
        "lending_limit   gpu=2 neuron=0 vcpu_m=48000 memory_mib=196608 efa=1");
  const std::string platform = line_starting(result.out, "team 1 platform");
  CHECK(platform.find("reclaim=any borrow_within_cohort=lower-priority") != std::string::npos);
}

TEST_CASE("gov fmt round-trips Kueue's controls", "[check][controls][fmt]") {
  std::string messy = std::string(kHeader) + R"(
policy { idle-compute = fair-share
  fair-share-preemption=[ less-than-or-equal-to-final-share ,less-than-initial-share ] }
team research { quota ml.g5.8xlarge { instances = 4, lending-limit = {gpus=1,vcpus=8} }
  quota ml.g5.12xlarge { instances = 1 }
  borrow-within-cohort={policy=lower-priority}
  when-can-borrow=try-next-flavor, when-can-preempt=preempt
  queueing=strict-fifo }
)";
  const TempPolicy policy("fmt", messy);
  const auto before = run_gov("check --emit=ir " + policy.path);
  REQUIRE(before.exit_code == 0);
  REQUIRE(run_gov("fmt " + policy.path).exit_code == 0);
  const std::string formatted = policy.text();
  CHECK(formatted.find("  fair-share-preemption = [less-than-or-equal-to-final-share, less-than-initial-share]\n") !=
        std::string::npos);
  CHECK(formatted.find("  quota ml.g5.8xlarge  { instances = 4, lending-limit = { gpus = 1, vcpus = 8 } }\n") !=
        std::string::npos);
  CHECK(formatted.find("  borrow-within-cohort = { policy = lower-priority }\n") != std::string::npos);
  CHECK(formatted.find("  when-can-preempt     = preempt\n") != std::string::npos);
  CHECK(run_gov("fmt --check " + policy.path).exit_code == 0);  // idempotent
  const auto after = run_gov("check --emit=ir " + policy.path);
  CHECK(after.out == before.out);  // meaning unchanged
}

TEST_CASE("gov inspect shows the effective value of every control", "[check][controls][cli]") {
  const TempPolicy policy("inspect", std::string(kHeader) + kAllControls);
  const auto result = run_gov("inspect --format json " + policy.path);
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto doc = parse_json(result.out);
  CHECK(doc["fair_share_preemption"].items.size() == 1);
  CHECK(doc["fair_share_preemption"][size_t{0}].str() == "less-than-initial-share");
  const auto& research = doc["teams"]["research"];
  CHECK(research["preempt_team_tasks"].str() == "lower-or-newer-equal-priority");
  CHECK(research["reclaim_within_cohort"].str() == "lower-priority");
  CHECK(research["borrow_within_cohort"]["policy"].str() == "lower-priority");
  CHECK(research["borrow_within_cohort"]["max_priority_threshold"].str() == "training");
  CHECK(research["queueing"].str() == "strict-fifo");
  CHECK(research["when_can_borrow"].str() == "try-next-flavor");
  CHECK(research["when_can_preempt"].str() == "try-next-flavor");
  CHECK(research["flavor_preference"].str() == "preemption-over-borrowing");
  CHECK(research["quotas"]["ml.g5.8xlarge"]["gpu"]["lending_limit"].literal() == "1");
  CHECK_FALSE(research["quotas"]["ml.g5.8xlarge"]["vcpu"].has("lending_limit"));
  CHECK(research["quotas"]["ml.g5.12xlarge"]["vcpu"]["lending_limit"].literal() == "48");
  // Defaults are shown too.
  const auto& platform = doc["teams"]["platform"];
  CHECK(platform["reclaim_within_cohort"].str() == "any");
  CHECK(platform["borrow_within_cohort"]["policy"].str() == "lower-priority");
  CHECK(platform["borrow_within_cohort"]["max_priority_threshold"].kind == gov::test::Json::Kind::null);
  CHECK(platform["queueing"].str() == "best-effort-fifo");
  CHECK(platform["when_can_borrow"].str() == "try-next-flavor");
  CHECK(platform["when_can_preempt"].str() == "try-next-flavor");
  CHECK(platform["flavor_preference"].str() == "borrowing-over-preemption");

  const auto text = run_gov("inspect " + policy.path);
  CHECK(text.out.find("  preemption: reclaim within cohort lower-priority, borrow within cohort lower-priority up to "
                      "training\n") != std::string::npos);
  CHECK(text.out.find("  queueing strict-fifo; flavors: when can borrow try-next-flavor, when can preempt "
                      "try-next-flavor, preference preemption-over-borrowing\n") != std::string::npos);
}

TEST_CASE("gov diff reports changes to the controls", "[check][controls][diff]") {
  const TempPolicy before("diff-before", std::string(kHeader) + kDefaults);
  const TempPolicy after("diff-after", std::string(kHeader) + kAllControls);
  const auto result = run_gov("diff --files " + before.path + " " + after.path);
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  for (const char* line : {
           "fair-share preemption: [less-than-or-equal-to-final-share, less-than-initial-share] → "
           "[less-than-initial-share]",
           "preempt team tasks: lower-priority → lower-or-newer-equal-priority",
           "reclaim within cohort: any → lower-priority",
           "max priority threshold: (none) → training",
           "queueing: best-effort-fifo → strict-fifo",
           "flavor preference: borrowing-over-preemption → preemption-over-borrowing",
           "ml.g5.8xlarge gpu lending limit: unlimited → 1",
       }) {
    INFO(line);
    CHECK(result.out.find(line) != std::string::npos);
  }
  // Set to their defaults: no change.
  CHECK(result.out.find("when can preempt") == std::string::npos);
  CHECK(result.out.find("when can borrow") == std::string::npos);
  CHECK(result.out.find("borrow within cohort:") == std::string::npos);
  CHECK(result.out.find("team platform") == std::string::npos);    // nothing of platform changed
}

TEST_CASE("every Kueue-control code has a golden case", "[check][controls][golden]") {
  std::string all;
  for (const std::string& path : gov::test::files_under("tests/diagnostics", ".expected")) {
    all += gov::test::read_text(path);
  }
  for (const char* code : {"E0309", "E0310", "E0311", "E0312", "E0313", "W0112", "W0113", "W0114", "W0115"}) {
    INFO("code " << code);
    CHECK(all.find(std::string("[") + code + "]") != std::string::npos);
  }
}

TEST_CASE("the language reference's examples of Kueue's controls check and lint clean", "[check][controls][docs]") {
  const std::string doc = gov::test::read_text(gov::test::repo_path("docs/language.md"));
  const size_t section = doc.find("### Kueue's controls");
  REQUIRE(section != std::string::npos);
  const size_t end = doc.find("\n### ", section + 1);
  int examples = 0;
  for (size_t open = doc.find("```gov\n", section); open < end; open = doc.find("```gov\n", open + 1)) {
    const size_t close = doc.find("```", open + 7);
    const std::string example = doc.substr(open + 7, close - open - 7);
    const TempPolicy policy("docs-" + std::to_string(examples++), std::string(kHeader) + example);
    const auto result = run_gov("lint --deny-warnings " + policy.path);
    INFO(example << result.err);
    CHECK(result.exit_code == 0);
  }
  CHECK(examples >= 2);
}

TEST_CASE("a team that never reclaims does not default to preempting while borrowing", "[check][controls]") {
  // HyperPod's default borrowWithinCohort LowerPriority would break Kueue's CEL rule (E0311)
  // next to reclaimWithinCohort Never, so such a team defaults to never.
  const TempPolicy policy("never-reclaims", std::string(kHeader) + R"(
policy {
  idle-compute = fcfs
}

team keeper {
  quota ml.g5.8xlarge { instances = 4 }

  reclaim-within-cohort = never
}
)");
  const auto result = run_gov("check --emit=ir " + policy.path);
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(line_starting(result.out, "team 0 keeper").find("reclaim=never borrow_within_cohort=never ") != std::string::npos);
}
