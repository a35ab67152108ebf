// `gov diff` as a reviewer reads it (issue 23, point 5): a summary line per change before the
// detail, no rows for resources an instance type does not have, the consequences of removals,
// `dont-lend`, `fcfs` and removed deny rules, a quota lowered below what a cluster state holds,
// typed JSON, `--exit-code`, and `gov diff FILE` against the active stored version.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/support/utf8.hpp"
#include "tests/check/json_reader.hpp"
#include "tests/security/security_support.hpp"
#include "tests/support/test_support.hpp"

using gov::test::Json;
using gov::test::run_gov;

namespace {

// Two p5 teams and a third; the rule caps tasks. `after` shrinks team-a and makes it
// `dont-lend`, gives it a p4d quota, sets team-b's lending limit to nothing, removes team-c and
// the rule, and switches to fcfs.
constexpr const char* kBefore = R"(import "aws-ml"

cluster c {
  catalog  = aws-ml
  capacity = { ml.p5.48xlarge: 4, ml.p4d.24xlarge: 2 }
}

policy {
  task-prioritization = task-ranking
  priority high = 90
  priority low  = 10
}

team team-a {
  quota ml.p5.48xlarge { instances = 2 }
}

team team-b {
  quota ml.p5.48xlarge { instances = 1 }
}

team team-c {
  quota ml.p5.48xlarge { instances = 1 }
}

rule no-huge {
  when task.gpus > 16
  deny "at most 16 GPUs per task"
}
)";

constexpr const char* kAfter = R"(import "aws-ml"

cluster c {
  catalog  = aws-ml
  capacity = { ml.p5.48xlarge: 4, ml.p4d.24xlarge: 2 }
}

policy {
  task-prioritization = fcfs
  priority high = 90
  priority low  = 10
}

team team-a {
  quota ml.p5.48xlarge { instances = 1 }
  quota ml.p4d.24xlarge { instances = 1 }
  sharing = dont-lend
}

team team-b {
  quota ml.p5.48xlarge { instances = 1, lending-limit = { instances = 0 } }
}
)";

// team-a holds both of its p5 instances' GPUs.
constexpr const char* kState = R"({"at": 100, "admitted": [
  {"task": {"id": "a1", "team": "team-a", "gpus": 16, "instance_type": "ml.p5.48xlarge"},
   "submitted_at": 10, "admitted_at": 20, "flavor": "ml.p5.48xlarge"}]})";

struct Files {
  gov::test::TempDir dir{"diff-review"};
  std::string before = dir.write("before.gov", kBefore);
  std::string after = dir.write("after.gov", kAfter);
  std::string state = dir.write("state.json", kState);
  std::string args() const { return "diff --files '" + before + "' '" + after + "'"; }
};

Json parse(const std::string& text) { return gov::test::JsonReader(text).document(); }

bool has_warning(const Json& doc, const std::string& kind, const std::string& team = "") {
  const Json& warnings = doc["warnings"];
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (warnings[i]["kind"].str() != kind) continue;
    if (team.empty() || warnings[i]["team"].str() == team) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("gov diff shows no rows for resources the instance type does not have", "[diff]") {
  const Files f;
  auto result = run_gov(f.args());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  // ml.p5.48xlarge has no Neuron devices: its lending limit of `instances = 0` is no news there.
  CHECK(result.out.find("ml.p5.48xlarge gpu lending limit: unlimited → 0") != std::string::npos);
  CHECK(result.out.find("neuron") == std::string::npos);
  // A `dont-lend` team's lending limits are its `sharing` row, not one row per resource.
  CHECK(result.out.find("ml.p4d.24xlarge gpu lending limit") == std::string::npos);
}

TEST_CASE("gov diff opens with one summary line per change before the detail", "[diff]") {
  const Files f;
  auto result = run_gov(f.args());
  INFO(result.out << result.err);
  const std::string& out = result.out;
  const size_t added = out.find("  team `team-a`: quota added: 1 × ml.p4d.24xlarge (8 GPUs, 96 vCPUs, 1152 GiB memory, 4 EFA)\n");
  const size_t shrunk = out.find("  team `team-a`: guaranteed on ml.p5.48xlarge: 2 → 1 instances (-8 GPUs, -192 vCPUs, "
                                 "-2048 GiB memory, -32 EFA)\n");
  const size_t detail = out.find("\nteam team-a\n");
  REQUIRE(added != std::string::npos);
  REQUIRE(shrunk != std::string::npos);
  REQUIRE(detail != std::string::npos);
  CHECK(added < detail);
  CHECK(shrunk < detail);
  CHECK(out.find("  team `team-c` removed\n") < detail);
  CHECK(out.find("  rule `no-huge` removed\n") < detail);
  CHECK(out.find("  policy: task prioritization task-ranking → fcfs\n") < detail);
}

TEST_CASE("gov diff names the consequences a reviewer must see", "[diff]") {
  const Files f;
  auto result = run_gov(f.args() + " --format json");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const Json doc = parse(result.out);
  CHECK(has_warning(doc, "team-removed", "team-c"));
  CHECK(has_warning(doc, "stops-lending", "team-a"));
  CHECK_FALSE(has_warning(doc, "stops-borrowing", "team-a"));  // a `dont-lend` team still borrows
  CHECK(has_warning(doc, "classes-ignored"));
  CHECK(has_warning(doc, "deny-removed"));
  CHECK_FALSE(has_warning(doc, "quota-below-held"));  // no state given
  auto text = run_gov(f.args());
  CHECK(text.out.find("team `team-c` is removed: its pending and admitted tasks end as `invalid`") != std::string::npos);
  CHECK(text.out.find("other teams can no longer borrow its idle quota (up to 16 GPUs on ml.p5.48xlarge)") !=
        std::string::npos);
  CHECK(text.out.find("rule `no-huge` is removed: tasks it denied (when task.gpus > 16) are admitted again") !=
        std::string::npos);
}

TEST_CASE("gov diff --state warns where a lowered quota falls below what is admitted", "[diff]") {
  const Files f;
  auto result = run_gov(f.args() + " --state '" + f.state + "'");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("team `team-a` holds 16 GPUs on ml.p5.48xlarge in the given state, above its new nominal "
                        "quota of 8: nothing is evicted, but 8 GPUs count as borrowed") != std::string::npos);
  // team-b's nominal quota did not move: no warning about it.
  CHECK(result.out.find("team `team-b` holds") == std::string::npos);
  auto bad = run_gov(f.args() + " --state '" + f.dir.write("bad.json", R"({"admited": []})") + "'");
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("did you mean \"admitted\"") != std::string::npos);
}

TEST_CASE("gov diff --format json has typed fields and exact numbers", "[diff]") {
  const Files f;
  auto result = run_gov(f.args() + " --format json");
  INFO(result.out << result.err);
  const Json doc = parse(result.out);
  CHECK(doc["changed"].kind == Json::Kind::boolean);
  CHECK(doc["summary"].size() >= 5);
  bool memory_row = false;
  const Json& changes = doc["changes"];
  for (size_t i = 0; i < changes.size(); ++i) {
    const Json& c = changes[i];
    if (c["property"].str() != "nominal" || c["resource"].str() != "memory_gib") continue;
    if (c["team"].str() != "team-a" || c["instance_type"].str() != "ml.p5.48xlarge") continue;
    memory_row = true;
    CHECK(c["before"].num() == 4096);  // GiB, as a number
    CHECK(c["after"].num() == 2048);
    CHECK(c["delta"].num() == -2048);
  }
  CHECK(memory_row);
}

// A decimal weight is a number like a whole one (one summary line, a delta), and a team moving
// between cohorts is named: both once came out as text, the first twice and the second as `team`.
TEST_CASE("gov diff gives decimal weights as numbers once and names a team that moves cohort", "[diff]") {
  gov::test::TempDir dir("diff-weights");
  dir.copy_catalog();
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                           "policy {\n  priority training = 50\n}\ncohort org {}\ncohort x { parent = org }\ncohort y { parent = org, fair-share-weight = 1 }\n";
  const std::string before = dir.write("before.gov", head + "team a {\n  cohort = x\n  quota ml.g5.8xlarge { instances = 1 }\n"
                                                            "  fair-share-weight = 0.5\n}\n");
  const std::string after = dir.write("after.gov", std::string(head).replace(head.find("weight = 1"), 10, "weight = 2.25") +
                                                       "team a {\n  cohort = y\n  quota ml.g5.8xlarge { instances = 1 }\n"
                                                       "  fair-share-weight = 2\n}\n");
  const auto text = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  const std::string line = "  team `a`: fair-share weight 0.5 → 2\n";
  REQUIRE(text.out.find(line) != std::string::npos);
  CHECK(text.out.find(line, text.out.find(line) + 1) == std::string::npos);  // once
  CHECK(text.out.find("fair-share weight: 0.5 → 2 (+1.5)") != std::string::npos);
  CHECK(text.out.find("cohort `y`: fair-share weight 1 → 2.25") != std::string::npos);
  const Json doc = parse(run_gov("diff --files '" + before + "' '" + after + "' --format json").out);
  bool weight = false, moved = false, cohort_weight = false;
  for (size_t i = 0; i < doc["changes"].size(); ++i) {
    const Json& c = doc["changes"][i];
    if (c["property"].str() == "fair-share-weight") {
      weight = true;
      CHECK(c["before"].literal() == "0.5");
      CHECK(c["after"].literal() == "2");
      CHECK(c["delta"].literal() == "1.5");
    }
    if (c["property"].str() == "weight") {
      cohort_weight = true;
      CHECK(c["cohort"].str() == "y");  // typed, not only in the subject's text
      CHECK(c["delta"].literal() == "1.25");
    }
    if (c["property"].str() == "cohort" && c.has("team")) {
      moved = true;
      CHECK(c["subject"].str() == "team a");
    }
  }
  CHECK(weight);
  CHECK(moved);
  CHECK(cohort_weight);
}

// What a rule change does to tasks: a warn rule turned deny rejects what it warned about, and a
// deny rule's new condition changes which tasks it rejects (both shown to the reviewer).
TEST_CASE("gov diff warns when a rule starts denying or a deny rule's condition changes", "[diff]") {
  gov::test::TempDir dir("diff-rules");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                           "policy {\n  priority training = 50\n}\nteam a {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n";
  const std::string before = dir.write("before.gov", head + "rule big {\n  when task.gpus > 4\n  warn \"big\"\n}\n"
                                                            "rule cap {\n  when task.gpus > 4\n  deny \"cap\"\n}\n");
  const std::string after = dir.write("after.gov", head + "rule big {\n  when task.gpus > 4\n  deny \"big\"\n}\n"
                                                          "rule cap {\n  when task.gpus > 8\n  deny \"cap\"\n}\n"
                                                          "rule new {\n  when task.gpus > 16\n  deny \"new\"\n}\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "' --format json");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const Json doc = parse(result.out);
  CHECK(has_warning(doc, "deny-added"));
  CHECK(has_warning(doc, "deny-condition-changed"));
  // The rule is a typed field of its changes and warnings, not only words in a subject.
  std::vector<std::string> changed_rules, warned_rules;
  for (size_t i = 0; i < doc["changes"].size(); ++i) {
    if (doc["changes"][i]["property"].str() == "rule") changed_rules.push_back(doc["changes"][i]["rule"].str());
  }
  for (size_t i = 0; i < doc["warnings"].size(); ++i) warned_rules.push_back(doc["warnings"][i]["rule"].str());
  CHECK(changed_rules == std::vector<std::string>{"big", "cap", "new"});
  CHECK(warned_rules == std::vector<std::string>{"big", "cap", "new"});
  const auto text = run_gov("diff --files '" + before + "' '" + after + "'");
  CHECK(text.out.find("rule `big` now denies: tasks it warned about (when task.gpus > 4) are rejected") != std::string::npos);
  CHECK(text.out.find("deny rule `cap` changes which tasks it rejects: when task.gpus > 4 → when task.gpus > 8") !=
        std::string::npos);
  CHECK(text.out.find("rule `new` is added: tasks it matches (when task.gpus > 16) are rejected") != std::string::npos);
}

// The markdown is pasted into a pull-request comment inside <details>: a rule message with
// `</details>` closed the section early. HTML is escaped outside the names' code spans.
TEST_CASE("gov diff --format markdown escapes HTML in the author's text", "[diff]") {
  gov::test::TempDir dir("diff-markdown-html");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                           "policy {\n  priority training = 50\n}\nteam a {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n";
  const std::string before = dir.write("before.gov", head + "rule cap {\n  when task.gpus > 4\n  deny \"cap\"\n}\n");
  const std::string after =
      dir.write("after.gov", head + "rule cap {\n  when task.gpus > 8\n  deny \"a | b </details> & `x *now* [x](http://e) _y_\"\n}\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "' --format markdown");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("</details>") == result.out.rfind("</details>"));  // only the section's own
  // Emphasis and links show as written (a reviewer's finding, session 43).
  CHECK(result.out.find("deny \"a \\| b &lt;/details&gt; &amp; \\`x \\*now\\* \\[x\\](http://e) \\_y\\_\"") !=
        std::string::npos);
  CHECK(result.out.find("- rule `cap` changed\n") != std::string::npos);  // names keep their code spans
  CHECK(result.out.find("when task.gpus &gt; 4 → when task.gpus &gt; 8") != std::string::npos);
}

// Under idle-resource-sharing the capacity no team is guaranteed is lent to every team: a smaller
// capacity shrinks that pool, and tasks borrowing it wait, but the diff showed only the capacity.
TEST_CASE("gov diff shows the idle compute pool under idle-resource-sharing and warns when it shrinks", "[diff]") {
  gov::test::TempDir dir("diff-idle-pool");
  const auto policy = [](int capacity) {
    return "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: " + std::to_string(capacity) +
           " }\n}\npolicy {\n  idle-resource-sharing = true\n  priority training = 50\n}\n"
           "team a {\n  quota ml.g5.8xlarge { instances = 3 }\n}\nteam b {\n  quota ml.g5.8xlarge { instances = 3 }\n}\n";
  };
  const std::string before = dir.write("before.gov", policy(8));
  const std::string after = dir.write("after.gov", policy(7));
  const auto text = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("idle compute of `ml.g5.8xlarge` (what no team is guaranteed, lent under idle-resource-sharing): "
                      "gpu 2 → 1, vcpu 64 → 32, memory 256 GiB → 128 GiB, efa 2 → 1") != std::string::npos);
  CHECK(text.out.find("! the idle compute teams may borrow in `ml.g5.8xlarge` shrinks (gpu 2 → 1") != std::string::npos);
  const Json doc = parse(run_gov("diff --files '" + before + "' '" + after + "' --format json").out);
  CHECK(has_warning(doc, "idle-pool-shrinks"));
  bool gpu_row = false;
  for (size_t i = 0; i < doc["changes"].size(); ++i) {
    const Json& c = doc["changes"][i];
    if (c["property"].str() != "idle-pool" || c["resource"].str() != "gpu") continue;
    gpu_row = true;
    CHECK(c["instance_type"].str() == "ml.g5.8xlarge");
    CHECK(c["before"].num() == 2);
    CHECK(c["after"].num() == 1);
  }
  CHECK(gpu_row);
  // A larger pool is shown, without the warning.
  const auto grown = run_gov("diff --files '" + after + "' '" + before + "'");
  CHECK(grown.out.find("gpu 1 → 2") != std::string::npos);
  CHECK(grown.out.find("shrinks") == std::string::npos);
}

// A team that becomes `dont-lend` has its lending limits in its `sharing` row: its partitions'
// lending limit was still a row (unlimited → 0), and in JSON without "unlimited".
TEST_CASE("gov diff folds a dont-lend team's partition lending limits into its sharing row", "[diff]") {
  gov::test::TempDir dir("diff-dont-lend-partitions");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.p4d.24xlarge: 2 }\n}\n"
                           "policy {\n  priority training = 50\n}\n";
  const std::string quota = "  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 8 } }\n";
  const std::string before = dir.write("before.gov", head + "team nlp {\n" + quota + "}\n");
  const std::string after = dir.write("after.gov", head + "team nlp {\n" + quota + "  sharing = dont-lend\n}\n");
  const auto text = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("sharing") != std::string::npos);
  CHECK(text.out.find("lending limit") == std::string::npos);
  // An unlimited partition limit is null with "unlimited" in JSON, as the resources' limits are.
  const std::string limited = dir.write("limited.gov", head + "team nlp {\n  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 8 }, "
                                                              "lending-limit = { partitions = { mig-1g.5gb: 2 } } }\n}\n");
  const Json doc = parse(run_gov("diff --files '" + before + "' '" + limited + "' --format json").out);
  bool row = false;
  for (size_t i = 0; i < doc["changes"].size(); ++i) {
    const Json& c = doc["changes"][i];
    if (c["property"].str() != "lending-limit") continue;
    row = true;
    CHECK(c["unlimited"].str() == "before");
    CHECK(c["after"].num() == 2);
  }
  CHECK(row);
}

// Sizes that are not whole GiB were rounded to three decimals each, so the delta did not equal
// the difference of the figures shown.
TEST_CASE("gov diff shows sizes exactly, so that the delta adds up", "[diff]") {
  gov::test::TempDir dir("diff-exact-sizes");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                           "policy {\n  priority training = 50\n}\n";
  const std::string before = dir.write("before.gov", head + "team a {\n  quota ml.g5.8xlarge { gpus = 1, memory = 1000 MiB }\n}\n");
  const std::string after = dir.write("after.gov", head + "team a {\n  quota ml.g5.8xlarge { gpus = 1, memory = 2 GiB }\n}\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("0.9765625 GiB → 2 GiB (+1.0234375 GiB)") != std::string::npos);
}

// A file name is the user's text too: one with backticks ended the heading's code span and put
// `</details>` in the comment as HTML.
TEST_CASE("gov diff --format markdown keeps file names in code spans they cannot end", "[diff]") {
  gov::test::TempDir dir("diff-markdown-names");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                           "policy {\n  priority training = 50\n}\nteam a {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n";
  const std::string before = dir.write("before.gov", head);
  const std::string after = dir.write("y`</details>`/x.gov", head + "team b {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "' --format markdown");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const std::string heading = result.out.substr(0, result.out.find('\n'));
  // A fence longer than the name's backtick runs, padded: the whole name stays in the code span.
  CHECK(heading.find("→ `` ") != std::string::npos);
  CHECK(heading.ends_with("y`</details>`/x.gov ``"));
}

// A team of GPU partitions that stops lending: how much it lent is said, as for whole GPUs.
TEST_CASE("gov diff's stops-lending warning counts GPU partitions", "[diff]") {
  gov::test::TempDir dir("diff-stops-lending-partitions");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.p4d.24xlarge: 2 }\n}\n"
                           "policy {\n  priority training = 50\n}\n";
  const std::string quota = "  quota ml.p4d.24xlarge { partitions = { mig-1g.5gb: 14 }, vcpus = 8 }\n";
  const std::string before = dir.write("before.gov", head + "team serving {\n" + quota + "}\n");
  const std::string after = dir.write("after.gov", head + "team serving {\n" + quota + "  sharing = dont-lend\n}\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(result.out << result.err);
  CHECK(result.out.find("team `serving` stops lending (`dont-lend`): other teams can no longer borrow its idle quota "
                        "(up to 14 `mig-1g.5gb` partitions on ml.p4d.24xlarge)") != std::string::npos);
}

// A quota changing form (whole instances to GPUs) still says how many instances it holds.
TEST_CASE("gov diff gives a quota's instances when it changes from instances to amounts", "[diff]") {
  gov::test::TempDir dir("diff-quota-form");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.p5.48xlarge: 2 }\n}\n"
                           "policy {\n  priority training = 50\n}\n";
  const std::string before = dir.write("before.gov", head + "team a {\n  quota ml.p5.48xlarge { instances = 1 }\n}\n");
  const std::string after = dir.write("after.gov", head + "team a {\n  quota ml.p5.48xlarge { gpus = 4 }\n}\n");
  const auto text = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(text.out << text.err);
  CHECK(text.out.find("  team `a`: guaranteed on ml.p5.48xlarge: 1 → 0.5 instances (-4 GPUs,") != std::string::npos);
}

TEST_CASE("gov diff --exit-code exits 1 when the policies differ and 0 when not", "[diff]") {
  const Files f;
  CHECK(run_gov(f.args() + " --exit-code").exit_code == 1);
  CHECK(run_gov(f.args()).exit_code == 0);
  CHECK(run_gov("diff --files '" + f.before + "' '" + f.before + "' --exit-code").exit_code == 0);
  // A failure is 2 under --exit-code, so that a gate does not read a broken file, or a stored
  // version that was tampered with, as a change (an SRE helper's finding); 1 without it.
  const std::string broken = f.dir.write("broken.gov", "team broken {\n");
  CHECK(run_gov("diff --files '" + f.before + "' '" + broken + "' --exit-code").exit_code == 2);
  CHECK(run_gov("diff --files '" + f.before + "' '" + broken + "'").exit_code == 1);
  const std::string db = " --db '" + (f.dir / "tampered.db") + "'";
  REQUIRE(run_gov("apply '" + f.before + "'" + db).exit_code == 0);
  REQUIRE(run_gov("apply '" + f.after + "' --policy before --skip-tests" + db).exit_code == 0);
  gov::test::exec_sql(f.dir / "tampered.db", "UPDATE source SET text = CAST(CAST(text AS TEXT) || ' ' AS BLOB)");
  const gov::test::CommandResult tampered = run_gov("diff 1 2 --exit-code" + db);
  INFO(tampered.err);
  CHECK(tampered.exit_code == 2);
  CHECK(tampered.err.find("do not match its recorded content hash") != std::string::npos);
}

TEST_CASE("gov diff FILE compares the active stored version with a working file", "[diff][store]") {
  const Files f;
  const std::string db = " --db '" + (f.dir / "store.db") + "'";
  REQUIRE(run_gov("apply '" + f.before + "'" + db + " -m first").exit_code == 0);
  auto plan = run_gov("diff '" + f.after + "'" + db + " --exit-code --state '" + f.state + "'");
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 1);
  CHECK(plan.out.find("changes from before v1 to ") != std::string::npos);
  CHECK(plan.out.find("team `team-c` removed") != std::string::npos);
  CHECK(plan.out.find("team `team-a` holds 16 GPUs") != std::string::npos);
  auto same = run_gov("diff '" + f.before + "'" + db + " --exit-code");
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("no changes") != std::string::npos);
}

TEST_CASE("gov diff FILE plans the apply of FILE in a store of several policies", "[diff][store]") {
  // `gov apply FILE` writes the policy named after the file; `gov diff FILE` compares with that
  // one without --policy, and asks for --policy only when the store has no policy of that name.
  const Files f;
  const std::string db = " --db '" + (f.dir / "store.db") + "'";
  REQUIRE(run_gov("apply '" + f.before + "'" + db + " -m first").exit_code == 0);  // policy `before`
  REQUIRE(run_gov("apply '" + f.after + "'" + db + " -m other").exit_code == 0);   // policy `after`
  auto planned = run_gov("diff '" + f.before + "'" + db + " --exit-code");
  INFO(planned.out << planned.err);
  CHECK(planned.exit_code == 0);
  CHECK(planned.out.find("no changes") != std::string::npos);
  const std::string renamed = f.dir.write("renamed.gov", kAfter);
  auto unnamed = run_gov("diff '" + renamed + "'" + db);
  INFO(unnamed.out << unnamed.err);
  CHECK(unnamed.exit_code != 0);
  CHECK(unnamed.err.find("several policies") != std::string::npos);
  auto chosen = run_gov("diff '" + renamed + "'" + db + " --policy before --exit-code");
  CHECK(chosen.exit_code == 1);  // after's text against before's active version
}

TEST_CASE("gov diff compares queues and namespaces as sets and warns when one changes teams", "[diff]") {
  // team-a reorders its queues (no change) and gives namespace `research` to team-b, which also
  // claims `vision`.
  const auto policy = [](std::string_view team_a_claims, std::string_view team_b_claims) {
    return fmt::format(R"(import "aws-ml"

cluster c {{
  catalog  = aws-ml
  capacity = {{ ml.p5.48xlarge: 4 }}
}}

policy {{
  task-prioritization = task-ranking
  priority high = 90
}}

team team-a {{
  quota ml.p5.48xlarge {{ instances = 2 }}
  {}
}}

team team-b {{
  quota ml.p5.48xlarge {{ instances = 1 }}
  {}
}}
)",
                       team_a_claims, team_b_claims);
  };
  gov::test::TempDir dir{"diff-claims"};
  const std::string before =
      dir.write("before.gov", policy("queues = [\"ml-research\", \"ml-batch\"]\n  namespaces = [\"research\"]", ""));
  const std::string reordered =
      dir.write("reordered.gov", policy("queues = [\"ml-batch\", \"ml-research\"]\n  namespaces = [\"research\"]", ""));
  const std::string after = dir.write(
      "after.gov", policy("queues = [\"ml-batch\", \"ml-research\"]", "namespaces = [\"vision\", \"research\"]"));

  const auto same = run_gov("diff --files '" + before + "' '" + reordered + "' --exit-code");
  INFO(same.out << same.err);
  CHECK(same.exit_code == 0);

  const auto text = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("  team `team-a`: namespaces research → (none)\n") != std::string::npos);
  CHECK(text.out.find("  team `team-b`: namespaces (none) → research, vision\n") != std::string::npos);
  CHECK(text.out.find("queues") == std::string::npos);  // reordered only
  CHECK(text.out.find("namespace `research` moves from team `team-a` to team `team-b`: gov reads its workloads as "
                      "`team-b`'s") != std::string::npos);

  const Json doc = parse(run_gov("diff --files '" + before + "' '" + after + "' --format json").out);
  CHECK(has_warning(doc, "namespace-moves", "team-b"));
  CHECK_FALSE(has_warning(doc, "queue-moves"));
}

// A task that names no instance type tries its team's quotas in their declared order, and the
// first deny that matches names a rejection: swapping either moves tasks or changes what they
// are told, and the diff said "no changes" (exit 0 under --exit-code).
TEST_CASE("gov diff reports a team's quota order and the rules' order", "[diff]") {
  gov::test::TempDir dir("diff-orders");
  const auto policy = [](std::string_view quotas, std::string_view rules) {
    return fmt::format(R"(import "aws-ml"
cluster c {{
  catalog  = aws-ml
  capacity = {{ ml.p5.48xlarge: 1, ml.g5.12xlarge: 1 }}
}}
policy {{
  priority training = 50
}}
team a {{
  {}
}}
{}
)",
                       quotas, rules);
  };
  const std::string p5_first = "quota ml.p5.48xlarge { instances = 1 }\n  quota ml.g5.12xlarge { instances = 1 }";
  const std::string g5_first = "quota ml.g5.12xlarge { instances = 1 }\n  quota ml.p5.48xlarge { instances = 1 }";
  const std::string cap_first = "rule cap { when task.gpus > 4 deny \"cap\" }\nrule all { when task.gpus > 16 deny \"all\" }";
  const std::string all_first = "rule all { when task.gpus > 16 deny \"all\" }\nrule cap { when task.gpus > 4 deny \"cap\" }";
  const std::string before = dir.write("before.gov", policy(p5_first, cap_first));
  const std::string quotas = dir.write("quotas.gov", policy(g5_first, cap_first));
  const std::string rules = dir.write("rules.gov", policy(p5_first, all_first));

  const auto quota_diff = run_gov("diff --files '" + before + "' '" + quotas + "' --exit-code");
  INFO(quota_diff.out << quota_diff.err);
  CHECK(quota_diff.exit_code == 1);
  CHECK(quota_diff.out.find("team `a`: a task without an instance type tries ml.g5.12xlarge, ml.p5.48xlarge (was "
                            "ml.p5.48xlarge, ml.g5.12xlarge)") != std::string::npos);
  const Json quota_doc = parse(run_gov("diff --files '" + before + "' '" + quotas + "' --format json").out);
  REQUIRE(quota_doc["changes"].size() == 1);
  CHECK(quota_doc["changes"][0]["property"].str() == "quota-order");
  CHECK(quota_doc["changes"][0]["after"][0].str() == "ml.g5.12xlarge");

  const auto rule_diff = run_gov("diff --files '" + before + "' '" + rules + "' --exit-code");
  INFO(rule_diff.out << rule_diff.err);
  CHECK(rule_diff.exit_code == 1);
  CHECK(rule_diff.out.find("rules are tried in the order all, cap (was cap, all)") != std::string::npos);
  CHECK(rule_diff.out.find("rule `") == std::string::npos);  // no rule itself changed
}

// A catalog change alone: `instances = 2` stays 2 instances on each side, each in its own
// catalog's shape, and the redefinition has a line of its own. The old count was the old amounts
// over the new shape ("2.4 → 2 instances").
TEST_CASE("gov diff counts each side's instances in its own catalog", "[diff]") {
  gov::test::TempDir dir("diff-catalog");
  const auto catalog = [](std::string_view memory) {
    return fmt::format("catalog k {{\n  instance ml.g5.12xlarge {{ accelerator = nvidia-a10g, gpus = 4, vcpus = 48, "
                       "memory = {}, efa = 1 }}\n}}\n",
                       memory);
  };
  const std::string policy = "import \"./cat.gov\"\ncluster c {\n  catalog = k\n  capacity = { ml.g5.12xlarge: 4 }\n}\n"
                             "policy {}\nteam a {\n  quota ml.g5.12xlarge { instances = 2 }\n}\n";
  dir.write("one/gov.toml", "");
  dir.write("two/gov.toml", "");
  dir.write("one/cat.gov", catalog("192 GiB"));
  dir.write("two/cat.gov", catalog("160 GiB"));
  const std::string before = dir.write("one/p.gov", policy), after = dir.write("two/p.gov", policy);
  const auto result = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("cluster: instance type ml.g5.12xlarge redefined: 4 GPUs, 48 vCPUs, 160 GiB memory, 1 EFA per "
                        "instance (was 4 GPUs, 48 vCPUs, 192 GiB memory, 1 EFA)") != std::string::npos);
  CHECK(result.out.find("team `a`: guaranteed on ml.g5.12xlarge: 2 → 2 instances (-64 GiB memory)") != std::string::npos);
}

// docs/diagnostics.md, "Hostile file names and text": a file name with a line break wrote a
// GitHub workflow command on a line of its own in the text output.
TEST_CASE("gov diff's text output escapes file names", "[diff]") {
  gov::test::TempDir dir("diff-hostile-name");
  const std::string body = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                           "policy {}\nteam a {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n";
  const std::string before = dir.write("old.gov", body);
  const std::string after = dir.write("x\n::error file=README.md,line=1::INJECTED.gov", body);
  const auto result = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("\n::error") == std::string::npos);
  CHECK(result.out.find("x\\n::error file=README.md,line=1::INJECTED.gov") != std::string::npos);
}

// A warn rule that now denies with another condition: the warning said it rejects "tasks it
// warned about (when > 4)" where it warned about > 8.
TEST_CASE("gov diff names both conditions when a warn rule starts denying with another", "[diff]") {
  gov::test::TempDir dir("diff-warn-deny");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                           "policy {}\nteam a {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n";
  const std::string before = dir.write("before.gov", head + "rule big { when task.gpus > 8 warn \"big\" }\n");
  const std::string after = dir.write("after.gov", head + "rule big { when task.gpus > 4 deny \"big\" }\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(result.out << result.err);
  CHECK(result.out.find("rule `big` now denies: tasks it matches (when task.gpus > 4) are rejected; it warned when "
                        "task.gpus > 8") != std::string::npos);
}

// JSON for tools: an absent setting is null, not the text output's "(none)", and queues and
// namespaces are arrays of names, not one joined string.
TEST_CASE("gov diff --format json writes absent settings as null and names as arrays", "[diff]") {
  gov::test::TempDir dir("diff-json-none");
  const auto policy = [](std::string_view settings, std::string_view claims) {
    return fmt::format("import \"aws-ml\"\ncluster c {{\n  catalog = aws-ml\n  capacity = {{ ml.g5.8xlarge: 4 }}\n}}\n"
                       "policy {{\n  priority low = 10\n  {}\n}}\nteam a {{\n  quota ml.g5.8xlarge {{ instances = 1 }}\n  {}\n}}\n",
                       settings, claims);
  };
  const std::string before =
      dir.write("before.gov", policy("default-priority = low", "queues = [\"qa\", \"shared-q\"]\n  namespaces = [\"ns-a\"]"));
  const std::string after = dir.write("after.gov", policy("", "queues = [\"qa\"]"));
  const auto result = run_gov("diff --files '" + before + "' '" + after + "' --format json");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("\"(none)\"") == std::string::npos);  // the summary lines keep their words
  const Json doc = parse(result.out);
  std::map<std::string, const Json*> by_property;
  for (size_t i = 0; i < doc["changes"].size(); ++i) by_property[doc["changes"][i]["property"].str()] = &doc["changes"][i];
  REQUIRE(by_property.count("default-priority") == 1);
  CHECK((*by_property["default-priority"])["after"].kind == Json::Kind::null);
  REQUIRE(by_property.count("queues") == 1);
  CHECK((*by_property["queues"])["before"].size() == 2);
  CHECK((*by_property["queues"])["before"][1].str() == "shared-q");
  CHECK((*by_property["queues"])["after"].size() == 1);
  REQUIRE(by_property.count("namespaces") == 1);
  CHECK((*by_property["namespaces"])["after"].kind == Json::Kind::array);
  CHECK((*by_property["namespaces"])["after"].size() == 0);
}

// A new author's finding: removing a lending limit listed eight changed fields and no
// consequence. The quota now lends more of its GPUs: `lends-more`, with how many.
TEST_CASE("gov diff says when a quota lends more of its accelerators", "[diff]") {
  gov::test::TempDir dir("diff-lends-more");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.p5.48xlarge: 4 }\n}\n"
                           "policy {\n  idle-compute = fcfs\n  priority training = 50\n}\n"
                           "team product {\n  quota ml.p5.48xlarge { instances = 2 }\n}\n";
  const std::string before = dir.write(
      "before.gov", head + "team research {\n  quota ml.p5.48xlarge { instances = 2, lending-limit = { instances = 1 } }\n}\n");
  const std::string after = dir.write("after.gov", head + "team research {\n  quota ml.p5.48xlarge { instances = 2 }\n}\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(result.out << result.err);
  CHECK(result.out.find("team `research` may now lend 16 GPUs on ml.p5.48xlarge (8 GPUs before): other teams can borrow "
                        "them while idle, and the team gets them back by preempting their tasks") != std::string::npos);
  const auto back = run_gov("diff --files '" + after + "' '" + before + "'");
  CHECK(back.out.find("may now lend") == std::string::npos);
}

TEST_CASE("gov diff shows an added team's settings, warns when it is added inactive, and types partition rows", "[diff]") {
  // A reviewer's findings (session 43): a team added showed its quotas only, so an inactive,
  // `dont-lend` team in another cohort looked like any other; and the JSON rows of two MIG
  // profiles of one quota had the same typed fields.
  gov::test::TempDir dir("diff-added-team");
  dir.copy_catalog();
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.p5.48xlarge: 2 }\n}\n"
                           "policy {\n  priority training = 50\n}\ncohort org {}\ncohort eng { parent = org }\n"
                           "team a {\n  cohort = org\n  quota ml.p5.48xlarge { partitions = { mig-1g.10gb: 14, mig-3g.40gb: 2 } }\n}\n";
  const std::string before = dir.write("before.gov", head);
  std::string changed = head;
  changed.replace(changed.find("mig-1g.10gb: 14, mig-3g.40gb: 2"), 31, "mig-1g.10gb: 7, mig-3g.40gb: 1");
  const std::string after = dir.write(
      "after.gov", changed + "team vip {\n  cohort = eng\n  quota ml.p5.48xlarge { instances = 1 }\n  sharing = dont-lend\n"
                             "  queueing = strict-fifo\n  active = false\n  namespaces = [\"vip-ns\"]\n}\n");
  const auto text = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  for (const char* line : {"  team `vip` added\n", "  team `vip`: sharing dont-lend\n", "  team `vip`: active no\n",
                           "  team `vip`: queueing strict-fifo\n", "  team `vip`: namespaces vip-ns\n",
                           "  team `vip`: cohort eng\n", "  ! team `vip` is added inactive: it will admit nothing\n"}) {
    CHECK(text.out.find(line) != std::string::npos);
  }
  // Settings it leaves at what a team declared without them has are not rows.
  CHECK(text.out.find("team `vip`: borrow limit") == std::string::npos);
  CHECK(text.out.find("team `vip`: preempt team tasks") == std::string::npos);
  // No consequence of a team that stops lending: it never lent.
  CHECK(text.out.find("stops lending") == std::string::npos);
  const Json doc = parse(run_gov("diff --files '" + before + "' '" + after + "' --format json").out);
  CHECK(has_warning(doc, "team-inactive", "vip"));
  std::map<std::string, std::string> nominal_by_profile;
  bool sharing = false;
  for (size_t i = 0; i < doc["changes"].size(); ++i) {
    const Json& c = doc["changes"][i];
    if (c.has("profile") && c["property"].str() == "nominal") {
      nominal_by_profile[c["profile"].str()] = c["before"].literal() + " -> " + c["after"].literal();
      CHECK(c["instance_type"].str() == "ml.p5.48xlarge");
    }
    if (c.has("team") && c["team"].str() == "vip" && c["property"].str() == "sharing") {
      sharing = true;
      CHECK(c["before"].kind == Json::Kind::null);
      CHECK(c["after"].str() == "dont-lend");
    }
  }
  CHECK(nominal_by_profile == std::map<std::string, std::string>{{"mig-1g.10gb", "14 -> 7"}, {"mig-3g.40gb", "2 -> 1"}});
  CHECK(sharing);
}

TEST_CASE("gov diff words a cut that keeps the instance count and a quota that only borrows", "[diff]") {
  // A reviewer's findings (session 43): `1 → 1 instances (-1 GPU)` read as no change, and a quota
  // of nothing guaranteed (borrowing only) was `nothing`.
  gov::test::TempDir dir("diff-wording");
  const std::string head = "import \"aws-ml\"\ncluster c {\n  catalog = aws-ml\n  capacity = { ml.g6.12xlarge: 2, "
                           "ml.g5.8xlarge: 2 }\n}\npolicy {}\n";
  const std::string before = dir.write("before.gov", head + "team t {\n  quota ml.g6.12xlarge { gpus = 2, vcpus = 48 }\n}\n");
  const std::string after =
      dir.write("after.gov", head + "team t {\n  quota ml.g6.12xlarge { gpus = 1, vcpus = 48 }\n}\n"
                                    "team u {\n  quota ml.g5.8xlarge { instances = 0, borrow-limit = { instances = 2 } }\n}\n");
  const auto result = run_gov("diff --files '" + before + "' '" + after + "'");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("  team `t`: guaranteed on ml.g6.12xlarge: -1 GPU\n") != std::string::npos);
  CHECK(result.out.find("  team `u`: quota added: ml.g5.8xlarge: nothing guaranteed\n") != std::string::npos);
}

TEST_CASE("gov diff --files takes /dev/null for the policy a pull request adds or deletes", "[diff]") {
  // A reviewer's finding (session 43): the CI diff job failed on the pull request that adds the
  // policy file (`cannot read /dev/null`).
  Files f;
  const auto added = run_gov("diff --files /dev/null '" + f.before + "' --format json");
  INFO(added.out << added.err);
  REQUIRE(added.exit_code == 0);
  const Json doc = parse(added.out);
  size_t teams = 0;
  for (size_t i = 0; i < doc["changes"].size(); ++i) {
    const Json& c = doc["changes"][i];
    if (c["property"].str() == "team") {
      ++teams;
      CHECK(c["after"].str() == "added");
    }
  }
  CHECK(teams == 3);
  const auto removed = run_gov("diff --files '" + f.after + "' /dev/null");
  INFO(removed.out << removed.err);
  REQUIRE(removed.exit_code == 0);
  CHECK(removed.out.find("team `team-a` removed\n") != std::string::npos);
  CHECK(removed.out.find("team `team-b` removed\n") != std::string::npos);
  CHECK(run_gov("diff --files /dev/null '" + f.after + "' --exit-code").exit_code == 1);  // they differ
  CHECK(run_gov("diff --files /dev/null /dev/null").exit_code == 2);
  CHECK(run_gov("diff --files /dev/null '" + f.after + "' --state '" + f.state + "'").exit_code == 2);
}

TEST_CASE("gov diff --format json types the facts of its warnings", "[diff]") {
  // A reviewer's finding (session 43): "team-a loses 8 guaranteed GPUs (nvidia-h100) on
  // ml.p5.48xlarge" had its type, resource and amounts only in the message.
  const Files f;
  const Json doc = parse(run_gov(f.args() + " --state '" + f.state + "' --format json").out);
  bool fall = false, below = false;
  for (size_t i = 0; i < doc["warnings"].size(); ++i) {
    const Json& w = doc["warnings"][i];
    if (w["kind"].str() == "guaranteed-gpus-fall" && w["team"].str() == "team-a") {
      fall = true;
      CHECK(w["instance_type"].str() == "ml.p5.48xlarge");
      CHECK(w["resource"].str() == "gpu");
      CHECK(w["before"].literal() == "16");  // 2 p5 instances → 1
      CHECK(w["after"].literal() == "8");
    }
    if (w["kind"].str() == "quota-below-held") {
      below = true;
      CHECK(w["instance_type"].str() == "ml.p5.48xlarge");
      CHECK(w["before"].literal() == "16");  // what team-a holds
      CHECK(w["after"].literal() == "8");    // its nominal quota now
    }
  }
  CHECK(fall);
  CHECK(below);
}
