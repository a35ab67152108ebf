// The decision writers: the docs/interfaces.md stream byte for byte, the text lines, the summary.
#include "runtime/trace/decision_writer.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "compiler/model/quantities.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/trace/units.hpp"

using gov::Decision;
using gov::Outcome;
using gov::PendingReason;
using gov::PreemptionKind;
using gov::ir::Resource;

namespace {

// The decision stream of docs/interfaces.md, exactly as printed there.
const char* const kInterfacesStream =
    R"STREAM({"at":0,"task":"a1","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":3},"borrowed":{"gpu":1},"message":"Quota reserved in ClusterQueue team-a"}
{"at":5,"task":"b1","outcome":"pending","team":"team-b","reason":"waiting-for-preemption","victims":["a1"],"message":"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor ml.g5.8xlarge, 1 more needed. Pending the preemption of 1 workload(s)"}
{"at":5,"task":"a1","outcome":"preempted","team":"team-a","by":"b1","kind":"reclaim","message":"Preempted to accommodate a workload (UID: b1) due to reclamation within the cohort"}
{"at":5,"task":"b1","outcome":"admitted","team":"team-b","flavor":"ml.g5.8xlarge","usage":{"gpu":2,"vcpu":64,"memory_gib":256},"borrowed":{},"message":"Quota reserved in ClusterQueue team-b"}
{"at":5,"task":"a1","outcome":"pending","team":"team-a","reason":"waiting-for-quota","message":"Workload no longer fits after processing another workload"}
{"at":5,"task":"a1","outcome":"pending","team":"team-a","reason":"waiting-for-quota","short":{"gpu":1},"message":"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor ml.g5.8xlarge, 1 more needed"}
{"at":90,"task":"b1","outcome":"finished","team":"team-b"}
{"at":90,"task":"a1","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":3},"borrowed":{"gpu":1},"message":"Quota reserved in ClusterQueue team-a"}
{"at":95,"task":"a1","outcome":"cancelled","team":"team-a"}
)STREAM";

Decision make(gov::Time at, const char* task, Outcome outcome, const char* team) {
  Decision d;
  d.at = at;
  d.task = task;
  d.outcome = outcome;
  d.team = team;
  return d;
}

Decision admitted(gov::Time at, const char* task, const char* team,
                  gov::ResourceAmounts usage, gov::ResourceAmounts borrowed) {
  Decision d = make(at, task, Outcome::admitted, team);
  d.flavor = "ml.g5.8xlarge";
  d.usage = std::move(usage);
  d.borrowed = std::move(borrowed);
  d.message = std::string("Quota reserved in ClusterQueue ") + team;
  return d;
}

Decision pending(gov::Time at, const char* task, const char* team, PendingReason reason,
                 std::string message) {
  Decision d = make(at, task, Outcome::pending, team);
  d.reason = reason;
  d.message = std::move(message);
  return d;
}

Decision preempted(gov::Time at, const char* task, const char* team, const char* by,
                   PreemptionKind kind) {
  Decision d = make(at, task, Outcome::preempted, team);
  d.by = by;
  d.kind = kind;
  d.message = std::string("Preempted to accommodate a workload (UID: ") + by +
              ") due to reclamation within the cohort";
  return d;
}

// The docs/interfaces.md walkthrough as Decision values, built by hand.
std::vector<Decision> interfaces_decisions() {
  const std::string short_message =
      "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
      "flavor "
      "ml.g5.8xlarge, 1 more needed";
  std::vector<Decision> out;
  out.push_back(admitted(0, "a1", "team-a", {{Resource::gpu, 3}}, {{Resource::gpu, 1}}));
  out.push_back(pending(5000, "b1", "team-b", PendingReason::waiting_for_preemption,
                        short_message + ". Pending the preemption of 1 workload(s)"));
  out.back().victims = {"a1"};
  out.push_back(preempted(5000, "a1", "team-a", "b1", PreemptionKind::reclaim));
  out.push_back(admitted(5000, "b1", "team-b",
                         {{Resource::gpu, 2}, {Resource::vcpu, 64000}, {Resource::memory, 262144}},
                         {}));
  out.push_back(pending(5000, "a1", "team-a", PendingReason::waiting_for_quota,
                        "Workload no longer fits after processing another workload"));
  out.push_back(pending(5000, "a1", "team-a", PendingReason::waiting_for_quota, short_message));
  out.back().short_of = {{Resource::gpu, 1}};
  out.push_back(make(90000, "b1", Outcome::finished, "team-b"));
  out.push_back(admitted(90000, "a1", "team-a", {{Resource::gpu, 3}}, {{Resource::gpu, 1}}));
  out.push_back(make(95000, "a1", Outcome::cancelled, "team-a"));
  return out;
}

}  // namespace

TEST_CASE("decisions: the docs/interfaces.md example stream round-trips byte for byte", "[trace]") {
  std::string stream;
  for (const Decision& d : interfaces_decisions()) {
    gov::trace::append_decision_json(stream, d);
    stream += '\n';
  }
  CHECK(stream == kInterfacesStream);
}

TEST_CASE("decisions: times and amounts print exactly, integers when whole", "[trace]") {
  CHECK(gov::trace::format_seconds(0) == "0");
  CHECK(gov::trace::format_seconds(90500) == "90.5");
  CHECK(gov::trace::format_seconds(1) == "0.001");
  // The written-out formatter gives model::format_decimal's text, negative and extreme too.
  std::vector<gov::Time> values = {std::numeric_limits<gov::Time>::min(), std::numeric_limits<gov::Time>::max(),
                                   -1, -999, -1000, -1001, 10, 100, 120, 1230, 999999};
  for (gov::Time v = -2500; v <= 2500; v += 7) values.push_back(v);
  for (const gov::Time v : values) {
    INFO(v);
    CHECK(gov::trace::format_seconds(v) == gov::model::format_decimal(v, 1000));
  }
  CHECK(gov::trace::format_seconds(1250) == "1.25");
  CHECK(gov::trace::format_amount(Resource::vcpu, 500) == "0.5");
  CHECK(gov::trace::format_amount(Resource::vcpu, 1) == "0.001");
  CHECK(gov::trace::format_amount(Resource::memory, 512) == "0.5");
  CHECK(gov::trace::format_amount(Resource::memory, 1) == "0.0009765625");
  CHECK(gov::trace::format_amount(Resource::memory, 1536) == "1.5");
  CHECK(gov::trace::format_amount(Resource::gpu, 8) == "8");
  CHECK(gov::model::format_decimal(-1500, 1000) == "-1.5");
  // The stream's writer appends amounts (whole ones without format_decimal): the same text.
  std::vector<int64_t> amounts = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                  -1024, -1000, -1, 0, 1, 999, 1000, 1023, 1024, 1536, 64000, 1 << 20};
  for (int64_t v = -3000; v <= 3000; v += 13) amounts.push_back(v);
  for (const Resource r : {Resource::gpu, Resource::neuron, Resource::vcpu, Resource::memory, Resource::efa}) {
    for (const int64_t v : amounts) {
      INFO(gov::model::resource_key(r) << " " << v);
      std::string out = "x";
      gov::trace::append_amount(out, r, v);
      CHECK(out == "x" + gov::trace::format_amount(r, v));
    }
  }

  Decision d = admitted(90500, "t", "team-a",
                        {{Resource::gpu, 1}, {Resource::vcpu, 500}, {Resource::memory, 512}}, {});
  CHECK(
      gov::trace::decision_json(d) ==
      R"({"at":90.5,"task":"t","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge",)"
      R"("usage":{"gpu":1,"vcpu":0.5,"memory_gib":0.5},"borrowed":{},"message":"Quota reserved in ClusterQueue team-a"})");
}

TEST_CASE("decisions: warnings, max, rejected and invalid lines, with escaping", "[trace]") {
  Decision warned = admitted(0, "w", "team-a", {{Resource::gpu, 1}}, {});
  warned.warnings = {{"big-job", "over \"8\" GPUs"}, {"night", "after hours"}};
  CHECK(
      gov::trace::decision_json(warned) ==
      R"({"at":0,"task":"w","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":1},)"
      R"("borrowed":{},"warnings":[{"rule":"big-job","message":"over \"8\" GPUs"},{"rule":"night",)"
      R"("message":"after hours"}],"message":"Quota reserved in ClusterQueue team-a"})");

  Decision too_big = pending(1000, "x", "team-a", PendingReason::exceeds_max_quota, "too big");
  too_big.maximum = {{Resource::gpu, 3}};
  CHECK(
      gov::trace::decision_json(too_big) ==
      R"({"at":1,"task":"x","outcome":"pending","team":"team-a","reason":"exceeds-max-quota","max":{"gpu":3},)"
      R"("message":"too big"})");

  Decision rejected = make(2000, "r", Outcome::rejected, "team-b");
  rejected.rule = "no-big-jobs";
  rejected.message = "line\nbreak \xFF";
  CHECK(
      gov::trace::decision_json(rejected) ==
      R"({"at":2,"task":"r","outcome":"rejected","team":"team-b","rule":"no-big-jobs","message":"line\nbreak )"
      "\xEF\xBF\xBD\"}");

  Decision invalid = make(1, "t", Outcome::invalid, "team-z");
  invalid.message = "unknown team `team-z`";
  CHECK(
      gov::trace::decision_json(invalid) ==
      R"({"at":0.001,"task":"t","outcome":"invalid","team":"team-z","message":"unknown team `team-z`"})");
}

TEST_CASE("decisions: one readable line per decision", "[trace]") {
  std::vector<std::string> lines;
  for (const Decision& d : interfaces_decisions()) lines.push_back(gov::trace::decision_text(d));
  const std::string short_message =
      "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
      "flavor "
      "ml.g5.8xlarge, 1 more needed";
  std::vector<std::string> expected = {
      "   0s  a1  team-a  admitted on ml.g5.8xlarge  gpu 3  borrowing gpu 1",
      "   5s  b1  team-b  pending (waiting-for-preemption; victims a1)  " + short_message +
          ". Pending the preemption of 1 workload(s)",
      "   5s  a1  team-a  preempted by b1 (reclaim)  Preempted to accommodate a workload (UID: b1) "
      "due to "
      "reclamation within the cohort",
      "   5s  b1  team-b  admitted on ml.g5.8xlarge  gpu 2, vcpu 64, memory 256 GiB",
      "   5s  a1  team-a  pending (waiting-for-quota)  Workload no longer fits after processing "
      "another workload",
      "   5s  a1  team-a  pending (waiting-for-quota; short gpu 1)  " + short_message,
      "  90s  b1  team-b  finished",
      "  90s  a1  team-a  admitted on ml.g5.8xlarge  gpu 3  borrowing gpu 1",
      "  95s  a1  team-a  cancelled",
  };
  CHECK(lines == expected);

  Decision odd = make(123456, "new\nline", Outcome::rejected, "team-a");
  odd.rule = "r";
  odd.message = "tab\there";
  CHECK(gov::trace::decision_text(odd) ==
        "123.456s  new\\nline  team-a  rejected by rule r  tab\\there");
  Decision invalid = make(0, "t", Outcome::invalid, "team-z");
  invalid.message = "unknown team";
  CHECK(gov::trace::decision_text(invalid) == "   0s  t  team-z  invalid  unknown team");
  // What a terminal would act on or hide is escaped too: a right-to-left override in a task id
  // or a rule's message, a zero-width space, a C1 control; other text stays as it is.
  Decision hidden = make(0, "a\u202e1", Outcome::rejected, "team-a");
  hidden.rule = "r";
  hidden.message = "bad\u202etxt\u200b\xc2\x9b \u00e9t\u00e9";  // U+009B: a C1 control
  CHECK(gov::trace::decision_text(hidden) ==
        "   0s  a\\u{202e}1  team-a  rejected by rule r  bad\\u{202e}txt\\u{200b}\\u{9b} \u00e9t\u00e9");
}

TEST_CASE("decisions: the summary of the docs/interfaces.md walkthrough", "[trace]") {
  gov::trace::SummaryBuilder builder;
  builder.set_nominal("team-a", "ml.g5.8xlarge", Resource::gpu, 2);  // the workshop's quotas
  builder.set_nominal("team-b", "ml.g5.8xlarge", Resource::gpu, 2);
  for (const Decision& d : interfaces_decisions()) builder.add(d);
  CHECK(builder.live_tasks() == 0);
  std::vector<gov::trace::TeamSummary> teams = builder.summarize();
  REQUIRE(teams.size() == 2);
  const auto& a = teams[0];
  CHECK(a.team == "team-a");
  CHECK(a.admitted == 1);
  CHECK(a.mean_wait == 0);
  CHECK(a.p95_wait == 0);
  CHECK(a.gpu_millis == 3 * 5000 + 3 * 5000);  // [0, 5) and [90, 95)
  CHECK(a.borrowed_gpu_millis == 1 * 5000 + 1 * 5000);
  CHECK(a.preempted == 1);
  CHECK(a.preemptions_caused == 0);
  const auto& b = teams[1];
  CHECK(b.team == "team-b");
  CHECK(b.gpu_millis == 2 * 85000);  // [5, 90)
  CHECK(b.borrowed_gpu_millis == 0);
  CHECK(b.preempted == 0);
  CHECK(b.preemptions_caused == 1);
  CHECK(gov::trace::summary_text(teams) ==
        "team    submitted  admitted  rejected  pending  oldest pending  mean wait  p95 wait  GPU-hours  borrowed GPU-hours  "
        "preempted  preemptions caused\n"
        "team-a          1         1         0        0               -         0s        0s      0.008               0.003  "
        "        1                   0\n"
        "team-b          1         1         0        0               -         0s        0s      0.047               0.000  "
        "        0                   1\n");
}

TEST_CASE("decisions: summary arithmetic on a small stream", "[trace]") {
  gov::trace::SummaryBuilder builder;
  builder.set_nominal("team-x", "ml.g5.8xlarge", Resource::gpu, 1);
  builder.set_nominal("team-y", "ml.g5.8xlarge", Resource::gpu, 2);
  auto waiting = [](gov::Time at, const char* task, const char* team) {
    return pending(at, task, team, PendingReason::waiting_for_quota, "waiting");
  };
  builder.add(waiting(0, "x1", "team-x"));
  builder.add(waiting(0, "x2", "team-x"));
  builder.add(waiting(0, "x6", "team-x"));
  builder.add(admitted(5000, "x3", "team-y", {{Resource::gpu, 4}}, {{Resource::gpu, 2}}));
  builder.add(admitted(5001, "x6", "team-x", {{Resource::vcpu, 1000}}, {}));
  builder.add(make(6000, "x6", Outcome::finished, "team-x"));
  builder.add(admitted(10000, "x1", "team-x", {{Resource::gpu, 2}}, {{Resource::gpu, 1}}));
  builder.add(waiting(30000, "x2", "team-x"));
  builder.add(preempted(30000, "x3", "team-y", "x2", PreemptionKind::fair_sharing));
  builder.add(admitted(30000, "x2", "team-x", {{Resource::gpu, 1}}, {}));
  builder.add(waiting(30000, "x3", "team-y"));
  Decision rejected = make(35000, "x4", Outcome::rejected, "team-y");
  rejected.rule = "no-big";
  builder.add(rejected);
  builder.add(make(35000, "x5", Outcome::invalid, "team-y"));
  builder.add(make(40000, "x1", Outcome::finished, "team-x"));

  CHECK(builder.live_tasks() == 2);  // x2 running, x3 waiting; the others are forgotten
  CHECK(builder.last_time() == 40000);
  std::vector<gov::trace::TeamSummary> teams = builder.summarize(/*end=*/60000);
  REQUIRE(teams.size() == 2);
  const auto& x = teams[0];
  CHECK(x.team == "team-x");
  CHECK(x.admitted == 3);
  CHECK(x.mean_wait == 15000);                   // (10000 + 30000 + 5001) / 3, rounded
  CHECK(x.p95_wait == 30000);                    // nearest rank: the 3rd of 3
  CHECK(x.gpu_millis == 2 * 30000 + 1 * 30000);  // x1 [10, 40), x2 [30, 60)
  // Above team-x's 1 GPU: 1 of x1's 2 over [10, 30), 2 of the 3 held with x2 over [30, 40), none
  // after x1 finishes (x2's 1 GPU is within the quota, though x2 was admitted while borrowing).
  CHECK(x.borrowed_gpu_millis == 1 * 20000 + 2 * 10000);
  CHECK(x.preempted == 0);
  CHECK(x.preemptions_caused == 1);
  CHECK(x.submitted == 3);
  CHECK(x.rejected == 0);
  CHECK(x.pending == 0);
  const auto& y = teams[1];
  CHECK(y.submitted == 3);  // x3, x4 (rejected) and x5 (invalid)
  CHECK(y.rejected == 1);
  CHECK(y.pending == 1);  // x3, preempted and waiting again
  CHECK(y.admitted == 1);
  CHECK(y.mean_wait == 0);
  CHECK(y.gpu_millis == 4 * 25000);  // x3 [5, 30)
  CHECK(y.borrowed_gpu_millis == 2 * 25000);
  CHECK(y.preempted == 1);
  CHECK(y.preemptions_caused == 0);

  CHECK(builder.summarize()[0].gpu_millis ==
        2 * 30000 + 1 * 10000);  // default end: the last decision, 40 s
  CHECK(gov::trace::summary_text(teams) ==
        "team    submitted  admitted  rejected  pending  oldest pending  mean wait  p95 wait  GPU-hours  borrowed GPU-hours  "
        "preempted  preemptions caused\n"
        "team-x          3         3         0        0               -        15s       30s      0.025               0.011  "
        "        0                   1\n"
        "team-y          3         1         1        1             55s         0s        0s      0.028               0.014  "
        "        1                   0\n");
  CHECK(gov::trace::summary_text({}) ==
        "team  submitted  admitted  rejected  pending  oldest pending  mean wait  p95 wait  GPU-hours  borrowed GPU-hours  "
        "preempted  preemptions caused\n");
  gov::trace::TeamSummary idle;
  idle.team = "team-z";
  CHECK(gov::trace::summary_text({idle}).ends_with(
      "\nteam-z          0         0         0        0               -          -         -      0.000               0.000  "
      "        0                   0\n"));
}

TEST_CASE("decisions: the summary counts Neuron-device-hours when a team uses Trainium", "[trace]") {
  gov::trace::SummaryBuilder builder;
  builder.set_nominal("team-trn", "ml.g5.8xlarge", Resource::neuron, 12);  // 4 of its 16 above it
  builder.add(admitted(0, "t1", "team-trn", {{Resource::neuron, 16}}, {{Resource::neuron, 4}}));
  builder.add(make(1800000, "t1", Outcome::finished, "team-trn"));  // half an hour
  builder.add(admitted(0, "g1", "team-gpu", {{Resource::gpu, 8}}, {}));
  const std::vector<gov::trace::TeamSummary> teams = builder.summarize(/*end=*/3600000);
  REQUIRE(teams.size() == 2);
  CHECK(teams[0].neuron_millis == 16 * 1800000);
  CHECK(teams[0].borrowed_neuron_millis == 4 * 1800000);
  CHECK(teams[0].gpu_millis == 0);
  CHECK(teams[1].gpu_millis == 8 * 3600000);
  const std::string text = gov::trace::summary_text(teams);
  CHECK(text.find("GPU-hours  borrowed GPU-hours  Neuron-hours  borrowed Neuron-hours  preempted") != std::string::npos);
  CHECK(text.find("      8.000                  2.000") != std::string::npos);  // team-trn's Neuron columns
  // Without Neuron use, no Neuron columns.
  CHECK(gov::trace::summary_text({teams[1]}).find("Neuron") == std::string::npos);
}

TEST_CASE("decisions: waits in human units", "[trace]") {
  using gov::trace::duration_text;
  CHECK(duration_text(0) == "0s");
  CHECK(duration_text(1500) == "1.5s");
  CHECK(duration_text(45000) == "45s");
  CHECK(duration_text(125000) == "2m 05s");
  CHECK(duration_text((9 * 60 + 20) * 60000) == "9h 20m");
  CHECK(duration_text(((3 * 24 + 4) * 60 + 59) * 60000) == "3d 4h");
}

TEST_CASE("decisions: wait statistics, exact and then bounded", "[trace]") {
  gov::trace::WaitStats empty;
  CHECK_FALSE(empty.mean());
  CHECK_FALSE(empty.p95());

  gov::trace::WaitStats small;
  for (int i = 100; i >= 1; --i) small.add(i);
  CHECK(small.mean() == 51);  // 50.5 rounds half up
  CHECK(small.p95() == 95);

  gov::trace::WaitStats single;
  single.add(-5);  // clamps to 0
  CHECK(single.p95() == 0);

  gov::trace::WaitStats many;
  const int64_t n = static_cast<int64_t>(gov::trace::WaitStats::kExactLimit) * 3;
  for (int64_t i = 1; i <= n; ++i) many.add(i * 1000 + 7);
  CHECK(many.count() == static_cast<size_t>(n));
  CHECK(many.mean() == (n + 1) * 500 + 7);  // the mean stays exact
  int64_t exact_p95 = ((n * 95 + 99) / 100) * 1000 + 7;
  int64_t approx = *many.p95();
  CHECK(std::abs(approx - exact_p95) <= exact_p95 / 256);
}

TEST_CASE("decisions: the text line names a pod set once however many flavors its groups took", "[trace]") {
  Decision pod_sets = admitted(0, "j", "team-a", {{Resource::gpu, 6}, {Resource::vcpu, 2000}}, {});
  pod_sets.pod_sets = {{"master", "ml.c5.xlarge", 1, {{Resource::vcpu, 2000}}},
                       {"worker", "ml.g5.8xlarge", 2, {{Resource::gpu, 6}}}};
  CHECK(gov::trace::decision_text(pod_sets) ==
        "   0s  j  team-a  admitted: master on ml.c5.xlarge (1 pod), worker on ml.g5.8xlarge (2 pods)  gpu 6, vcpu 2");

  Decision grouped = admitted(0, "g", "team-a", {{Resource::vcpu, 2000}, {Resource::memory, 2048}}, {});
  grouped.pod_sets = {{"main", "ml.c5.2xlarge", 1, {{Resource::vcpu, 2000}}},
                      {"main", "ml.c5.xlarge", 1, {{Resource::memory, 2048}}}};
  CHECK(gov::trace::decision_text(grouped) ==
        "   0s  g  team-a  admitted: main on ml.c5.2xlarge for vcpu, ml.c5.xlarge for memory (1 pod)  vcpu 2, memory 2 GiB");
}
