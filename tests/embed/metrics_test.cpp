// The embedded engine's Prometheus metrics (issue 22; docs/observability.md): the exposition
// parses (a parser here and Prometheus' own `promtool check metrics`), Kueue's counters and
// gauges agree with the decision stream of the walkthrough, checks are counted, reloads and
// their failures are counted, and the C ABI gives the same text as the C++ API.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>
#include <gov/gov.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/embed/metrics.hpp"
#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

/// One parsed exposition: every sample by its series (`name{labels as written}`), and the
/// problems found. Checks what the text format (0.0.4) requires of what gov writes: a family is
/// declared (HELP, TYPE) once and before its samples, names and labels are well formed, values
/// are numbers, a histogram's buckets are cumulative, end with `+Inf` and equal its `_count`.
struct Exposition {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;  // family → type
  std::vector<std::string> problems;

  double value(const std::string& series) const {
    auto it = samples.find(series);
    return it == samples.end() ? -1 : it->second;
  }
  bool has(const std::string& series) const { return samples.count(series) > 0; }
  /// Every problem, one per line (empty when none): what a failing CHECK shows.
  std::string problem_text() const {
    std::string out;
    for (const std::string& p : problems) out += p + "\n";
    return out;
  }
};

std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  }
  return name;
}

Exposition parse_exposition(const std::string& text) {
  static const std::regex help(R"re(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)re");
  static const std::regex type(R"re(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))re");
  static const std::regex sample(
      R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+))re");
  Exposition out;
  std::set<std::string> helped;
  std::istringstream lines(text);
  std::string line;
  size_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::smatch m;
    if (line.empty()) continue;
    if (std::regex_match(line, m, help)) {
      if (!helped.insert(m[1]).second) out.problems.push_back("line " + std::to_string(number) + ": second HELP");
      continue;
    }
    if (std::regex_match(line, m, type)) {
      if (!out.types.emplace(m[1], m[2]).second) out.problems.push_back("line " + std::to_string(number) + ": second TYPE");
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      out.problems.push_back("line " + std::to_string(number) + ": not a sample: " + line);
      continue;
    }
    const std::string name = m[1];
    if (out.types.count(family_of(name, out.types)) == 0) {
      out.problems.push_back("line " + std::to_string(number) + ": sample before its TYPE: " + name);
    }
    const std::string value = m[4];
    char* end = nullptr;
    const double v = value == "+Inf" ? HUGE_VAL : std::strtod(value.c_str(), &end);
    if (value != "+Inf" && (end == nullptr || *end != '\0')) {
      out.problems.push_back("line " + std::to_string(number) + ": not a number: " + value);
    }
    const std::string series = name + (m[2].matched ? std::string(m[2]) : std::string());
    if (!out.samples.emplace(series, v).second) out.problems.push_back("line " + std::to_string(number) + ": repeated series");
  }
  // Histograms: cumulative buckets ending at +Inf, equal to _count.
  for (const auto& [family, kind] : out.types) {
    if (kind != "histogram") continue;
    std::map<std::string, std::vector<std::pair<double, double>>> buckets;  // other labels → (le, count)
    static const std::regex le(R"re(^(.*?),?le="([^"]+)"\}$)re");
    for (const auto& [series, v] : out.samples) {
      if (series.rfind(family + "_bucket{", 0) != 0) continue;
      std::smatch m;
      const std::string labels = series.substr(family.size() + std::string("_bucket{").size());
      if (!std::regex_match(labels, m, le)) {
        out.problems.push_back("bucket without le: " + series);
        continue;
      }
      const double bound = std::string(m[2]) == "+Inf" ? HUGE_VAL : std::strtod(std::string(m[2]).c_str(), nullptr);
      buckets[m[1]].emplace_back(bound, v);
    }
    for (auto& [labels, list] : buckets) {
      std::sort(list.begin(), list.end());
      for (size_t i = 1; i < list.size(); ++i) {
        if (list[i].second < list[i - 1].second) out.problems.push_back(family + ": buckets not cumulative");
      }
      if (list.empty() || list.back().first != HUGE_VAL) out.problems.push_back(family + ": no +Inf bucket");
      const std::string count = family + "_count" + (labels.empty() ? std::string() : "{" + labels + "}");
      if (out.value(count) != list.back().second) out.problems.push_back(family + ": +Inf bucket is not _count");
    }
  }
  return out;
}

/// Replays the walkthrough trace through `engine` as `gov simulate` does: events of one instant
/// in one step, then every remaining finish.
void replay_walkthrough(gov::Engine& engine) {
  const std::string trace = gov::test::read_text(gov::test::repo_path("policies/examples/workshop-g5.trace.json"));
  const std::vector<gov::TimedEvent> events = gov::read_trace(engine, trace);
  for (size_t i = 0; i < events.size();) {
    const gov::Time at = events[i].at;
    std::vector<gov::Event> batch;
    for (; i < events.size() && events[i].at == at; ++i) batch.push_back(events[i].event);
    engine.step(at, batch);
  }
  engine.tick(gov::kForever);
}

gov::Engine walkthrough_engine() {
  return gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"));
}

std::string promtool() {
  for (const char* path : {"/usr/bin/promtool", "/usr/local/bin/promtool"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return {};
}

}  // namespace

TEST_CASE("metrics: an engine that remembers no decisions counts the same and decision() answers nothing",
          "[embed][metrics]") {
  gov::Engine remembering = walkthrough_engine();
  gov::Options options;
  options.remember_decisions = false;
  options.remembered_ended_tasks = 0;  // what the commands set
  gov::Engine forgetting = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), options);
  replay_walkthrough(remembering);
  replay_walkthrough(forgetting);
  REQUIRE(remembering.decision("a1"));
  CHECK_FALSE(forgetting.decision("a1"));
  CHECK_FALSE(forgetting.decision("b1"));
  // Every series but the step latencies (which time the steps) is the same.
  std::map<std::string, double> a = parse_exposition(remembering.metrics()).samples;
  std::map<std::string, double> b = parse_exposition(forgetting.metrics()).samples;
  for (auto* samples : {&a, &b}) {
    std::erase_if(*samples, [](const auto& sample) { return sample.first.starts_with("gov_decision_latency_seconds"); });
  }
  CHECK(b.count(R"(kueue_preempted_workloads_total{preempting_cluster_queue="team-b",reason="InCohortReclamation"})") == 1);
  CHECK(a == b);
}

TEST_CASE("metrics: an engine that counts no decisions leaves the decision series out, and the rest alike",
          "[embed][metrics]") {
  gov::Engine counting = walkthrough_engine();
  gov::Options options;
  options.count_decisions = false;  // what `gov simulate` sets without --metrics
  gov::Engine quiet = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), options);
  replay_walkthrough(counting);
  replay_walkthrough(quiet);
  const Exposition a = parse_exposition(counting.metrics());
  const Exposition b = parse_exposition(quiet.metrics());
  CHECK(b.problem_text().empty());
  // The counted series: present when counting, absent (the families declared, with no samples) when not.
  const auto counted = [](const std::string& series) {
    return series.starts_with("gov_decisions_total") || series.starts_with("gov_decision_latency_seconds") ||
           series.starts_with("kueue_admitted_workloads_total") || series.starts_with("kueue_evicted_workloads_total") ||
           series.starts_with("kueue_preempted_workloads_total") || series.starts_with("kueue_admission_wait_time_seconds");
  };
  CHECK(a.value(R"(gov_decisions_total{outcome="admitted"})") > 0);
  CHECK(a.has(R"(kueue_preempted_workloads_total{preempting_cluster_queue="team-b",reason="InCohortReclamation"})"));
  CHECK_FALSE(b.has(R"(gov_decisions_total{outcome="admitted"})"));
  std::map<std::string, double> rest_a = a.samples;
  for (const auto& [series, value] : b.samples) CHECK_FALSE(counted(series));
  std::erase_if(rest_a, [&](const auto& sample) { return counted(sample.first); });
  CHECK(rest_a == b.samples);  // the state's series (usage, quotas, pending) do not depend on it
}

TEST_CASE("metrics: a preemption counts for its team when the preemptor ends later in the same step",
          "[embed][metrics]") {
  gov::Options options;
  options.remembered_ended_tasks = 0;  // what the commands set: no ended task is kept for decision()
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), options);
  const auto task = [](std::string id, std::string team, int64_t gpus, std::string priority,
                       std::optional<gov::Time> duration) {
    gov::Task t;
    t.id = std::move(id);
    t.team = std::move(team);
    t.priority = std::move(priority);
    t.amounts[static_cast<size_t>(gov::Resource::gpu)] = gpus;
    t.duration = duration;
    return gov::Event::submit(std::move(t));
  };
  // team-b holds its two GPUs, so team-a cannot borrow; team-a holds a fine-tuning task and an
  // inference task that ends at 5 s.
  engine.step(0, {task("b1", "team-b", 1, "training", std::nullopt), task("b2", "team-b", 1, "training", std::nullopt),
                  task("a-low", "team-a", 1, "fine-tuning", std::nullopt), task("a-mid", "team-a", 1, "inference", 5'000)});
  // p needs 2 GPUs and may preempt only a-low (a-mid outranks it), which is not enough: it waits.
  CHECK(engine.step(1'000, {task("p", "team-a", 2, "experimentation", 1'000)}).decisions.front().outcome ==
        gov::Outcome::pending);
  // One step: a-mid ends at 5 s, p preempts a-low and is admitted, and p ends at 6 s.
  const gov::Step step = engine.tick(100'000);
  std::vector<std::string> seen;
  for (const gov::Decision& d : step.decisions) seen.push_back(d.task + " " + std::string(gov::outcome_name(d.outcome)));
  CHECK(std::find(seen.begin(), seen.end(), "a-low preempted") != seen.end());
  CHECK(std::find(seen.begin(), seen.end(), "p finished") != seen.end());
  const Exposition e = parse_exposition(engine.metrics());
  CHECK(e.value(R"(kueue_preempted_workloads_total{preempting_cluster_queue="team-a",reason="InClusterQueue"})") == 1);
}

TEST_CASE("metrics: the walkthrough's exposition parses and counts what the stream says", "[embed][metrics]") {
  gov::Engine engine = walkthrough_engine();
  replay_walkthrough(engine);
  const Exposition e = parse_exposition(engine.metrics());
  CHECK(e.problem_text() == "");

  // tests/walkthrough/expected.jsonl: a1 admitted at 0, preempted by b1 (reclaim) at 5, admitted
  // again at 90 (waited 85 s since its requeue); b1 admitted at 5 in the step that submitted it.
  CHECK(e.value(R"(kueue_admitted_workloads_total{cluster_queue="team-a"})") == 2);
  CHECK(e.value(R"(kueue_admitted_workloads_total{cluster_queue="team-b"})") == 1);
  CHECK(e.value(R"(kueue_evicted_workloads_total{cluster_queue="team-a",reason="Preempted"})") == 1);
  CHECK(e.value(R"(kueue_preempted_workloads_total{preempting_cluster_queue="team-b",reason="InCohortReclamation"})") == 1);
  CHECK_FALSE(e.has(R"(kueue_preempted_workloads_total{preempting_cluster_queue="team-a",reason="InCohortReclamation"})"));
  CHECK(e.value(R"(kueue_admission_wait_time_seconds_count{cluster_queue="team-a"})") == 2);
  CHECK(e.value(R"(kueue_admission_wait_time_seconds_sum{cluster_queue="team-a"})") == 85);
  CHECK(e.value(R"(kueue_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="80"})") == 1);
  CHECK(e.value(R"(kueue_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="160"})") == 2);
  CHECK(e.value(R"(kueue_admission_wait_time_seconds_sum{cluster_queue="team-b"})") == 0);
  CHECK(e.value(R"(gov_decisions_total{outcome="admitted"})") == 3);
  CHECK(e.value(R"(gov_decisions_total{outcome="pending"})") == 3);
  CHECK(e.value(R"(gov_decisions_total{outcome="preempted"})") == 1);
  CHECK(e.value(R"(gov_decisions_total{outcome="finished"})") == 1);
  CHECK(e.value(R"(gov_decisions_total{outcome="cancelled"})") == 1);
  CHECK(e.value("gov_decision_latency_seconds_count") >= 1);
  // Nothing is left: every gauge of tasks is 0.
  CHECK(e.value(R"(kueue_pending_workloads{cluster_queue="team-a",status="active"})") == 0);
  CHECK(e.value(R"(kueue_pending_workloads{cluster_queue="team-b",status="inadmissible"})") == 0);
  CHECK(e.value(R"(kueue_admitted_active_workloads{cluster_queue="team-a"})") == 0);
  CHECK(e.value("gov_live_tasks") == 0);
  // Quotas in Kueue's units: 2 instances of ml.g5.8xlarge = 2 GPUs, 64 CPU cores, 256 GiB; a
  // 50 % borrowing limit is 1 GPU; no lending limit (no series).
  const std::string gpu = R"({cohort="ml-cluster",cluster_queue="team-a",flavor="ml.g5.8xlarge",resource="nvidia.com/gpu"})";
  const std::string cpu = R"({cohort="ml-cluster",cluster_queue="team-a",flavor="ml.g5.8xlarge",resource="cpu"})";
  const std::string memory = R"({cohort="ml-cluster",cluster_queue="team-a",flavor="ml.g5.8xlarge",resource="memory"})";
  CHECK(e.value("kueue_cluster_queue_nominal_quota" + gpu) == 2);
  CHECK(e.value("kueue_cluster_queue_nominal_quota" + cpu) == 64);
  CHECK(e.value("kueue_cluster_queue_nominal_quota" + memory) == 256.0 * 1024 * 1024 * 1024);
  CHECK(e.value("kueue_cluster_queue_borrowing_limit" + gpu) == 1);
  CHECK_FALSE(e.has("kueue_cluster_queue_lending_limit" + gpu));
  CHECK(e.value("kueue_cluster_queue_resource_usage" + gpu) == 0);
  CHECK(e.value(R"(kueue_cluster_queue_weighted_share{cluster_queue="team-a"})") == 0);
  const gov::PolicyInfo info = engine.policy();
  CHECK(e.value(R"(gov_policy_version_info{policy="workshop-g5",version="1",content_sha256=")" + info.content_sha256 +
                R"(",back_end=")" + info.back_end + R"("})") == 1);
}

TEST_CASE("metrics: gauges follow the live state and a zero-weight borrower's share is Kueue's maximum",
          "[embed][metrics]") {
  gov::Engine engine = walkthrough_engine();
  engine.submit(gov::test::g5_gpu_task("a1", "team-a", 3), 0);  // borrows 1 GPU, weight 0
  engine.submit(gov::test::g5_gpu_task("a2", "team-a", 1), 1);  // no room: pending
  const Exposition e = parse_exposition(engine.metrics());
  CHECK(e.problem_text() == "");
  const std::string gpu = R"({cohort="ml-cluster",cluster_queue="team-a",flavor="ml.g5.8xlarge",resource="nvidia.com/gpu"})";
  CHECK(e.value("kueue_cluster_queue_resource_usage" + gpu) == 3);
  CHECK(e.value(R"(kueue_admitted_active_workloads{cluster_queue="team-a"})") == 1);
  CHECK(e.value(R"(kueue_pending_workloads{cluster_queue="team-a",status="active"})") +
            e.value(R"(kueue_pending_workloads{cluster_queue="team-a",status="inadmissible"})") ==
        1);
  CHECK(e.value(R"(kueue_cluster_queue_weighted_share{cluster_queue="team-a"})") == 9223372036854775807.0);
  CHECK(e.value("gov_live_tasks") == 2);
}

TEST_CASE("metrics: checks are counted by verdict, from several threads", "[embed][metrics]") {
  gov::Engine engine = walkthrough_engine();
  gov::Task unknown = gov::test::g5_gpu_task("x", "no-such-team", 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&engine, &unknown] {
      for (int i = 0; i < 250; ++i) {
        engine.check(gov::test::g5_gpu_task("c", "team-a", 1));  // admit
        engine.check(gov::test::g5_gpu_task("c", "team-a", 4));  // over the maximum: pending
        engine.check(unknown);                                    // invalid
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const gov::PreparedTask prepared = engine.prepare(gov::test::g5_gpu_task("p", "team-a", 2));
  engine.check(prepared);
  engine.check(gov::PreparedTask{});  // a default one checks as invalid
  const Exposition e = parse_exposition(engine.metrics());
  CHECK(e.problem_text() == "");
  CHECK(e.value(R"(gov_checks_total{verdict="admit"})") == 1001);
  CHECK(e.value(R"(gov_checks_total{verdict="pending"})") == 1000);
  CHECK(e.value(R"(gov_checks_total{verdict="invalid"})") == 1001);
  CHECK(e.value(R"(gov_checks_total{verdict="reject"})") == 0);
  // A check decides nothing.
  CHECK(e.value(R"(gov_decisions_total{outcome="admitted"})") == 0);
}

TEST_CASE("metrics: threads past the owned slots are counted too", "[embed][metrics]") {
  // CheckCounters gives the first 64 threads of the process a slot each; later ones share one.
  gov::Engine engine = walkthrough_engine();
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 40; ++t) threads.emplace_back([&engine] { engine.check(gov::test::g5_gpu_task("c", "team-a", 1)); });
    for (std::thread& t : threads) t.join();
  }
  const Exposition e = parse_exposition(engine.metrics());
  CHECK(e.value(R"(gov_checks_total{verdict="admit"})") == 120);
}

TEST_CASE("metrics: reloads and failed reloads are counted", "[embed][metrics]") {
  gov::test::ScratchDir dir("metrics-reload");
  const std::string path = gov::test::write_workshop_variant(dir, "policy.gov", 2);
  gov::Engine engine = gov::Engine::compile_file(path);
  CHECK(engine.reload().sequence == 0);  // nothing new: not a reload
  gov::test::write_workshop_variant(dir, "policy.gov", 3);
  engine.reload();
  gov::test::write_text(path, "team broken {\n");
  CHECK_THROWS_AS(engine.reload(), gov::Error);
  const Exposition e = parse_exposition(engine.metrics());
  CHECK(e.problem_text() == "");
  CHECK(e.value("gov_policy_reloads_total") == 1);
  CHECK(e.value("gov_policy_reload_failures_total") == 1);
  CHECK(e.has(R"(gov_policy_version_info{policy="policy",version="2",content_sha256=")" +
              engine.policy().content_sha256 + R"(",back_end=")" + engine.policy().back_end + R"("})"));
}

TEST_CASE("metrics: a pending task loaded from a cluster state waits since its submission", "[embed][metrics]") {
  gov::Engine engine = walkthrough_engine();
  gov::ClusterState state;
  state.at = 20'000;
  state.admitted.push_back({gov::test::g5_gpu_task("big", "team-a", 3), 0, 0, std::nullopt});
  state.pending.push_back({gov::test::g5_gpu_task("small", "team-a", 1), 5'000});
  REQUIRE(engine.load_state(state).empty());
  engine.finish("big", 30'000);  // `small` is admitted in this step: it waited 25 s
  const Exposition e = parse_exposition(engine.metrics());
  CHECK(e.problem_text() == "");
  CHECK(e.value(R"(kueue_admission_wait_time_seconds_count{cluster_queue="team-a"})") == 1);
  CHECK(e.value(R"(kueue_admission_wait_time_seconds_sum{cluster_queue="team-a"})") == 25);
}

TEST_CASE("metrics: label values are escaped as the text format says", "[embed][metrics]") {
  CHECK(gov::embed::escape_label_value("plain") == "plain");
  CHECK(gov::embed::escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
}

TEST_CASE("metrics: the C ABI gives the C++ API's text", "[embed][metrics]") {
  gov_engine* engine = nullptr;
  const std::string path = gov::test::repo_path("policies/examples/workshop-g5.gov");
  REQUIRE(gov_engine_open_file(path.c_str(), nullptr, &engine) == GOV_OK);
  gov_task task = gov::test::g5_gpu_c_task("a1", "team-a", 1);
  REQUIRE(gov_engine_submit(engine, 0, &task, nullptr) == GOV_OK);
  char* text = nullptr;
  REQUIRE(gov_engine_metrics(engine, &text) == GOV_OK);
  REQUIRE(text != nullptr);
  const Exposition e = parse_exposition(text);
  CHECK(e.problem_text() == "");
  CHECK(e.value(R"(kueue_admitted_workloads_total{cluster_queue="team-a"})") == 1);
  gov_string_free(text);
  CHECK(gov_engine_metrics(engine, nullptr) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(gov_engine_metrics(nullptr, &text) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(text == nullptr);
  gov_engine_close(engine);
}

TEST_CASE("metrics: promtool accepts gov simulate's metrics and rejects a broken exposition", "[embed][metrics]") {
  const std::string tool = promtool();
  INFO("tools/deps installs Debian's `prometheus` package, which has promtool");
  REQUIRE_FALSE(tool.empty());
  gov::test::ScratchDir dir("metrics-promtool");
  // The walkthrough through the command: decisions (JSON lines) first, the exposition from the
  // first `# HELP` line on.
  const gov::test::ProgramResult run = gov::test::run_program(
      gov::test::quoted(GOV_BINARY) + " simulate policies/examples/workshop-g5.gov --trace "
      "policies/examples/workshop-g5.trace.json --metrics");
  REQUIRE(run.exit_code == 0);
  const size_t start = run.out.find("# HELP ");
  REQUIRE(start != std::string::npos);
  const std::string decisions = run.out.substr(0, start);
  CHECK(decisions == gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl")));
  const std::string exposition = run.out.substr(start);
  CHECK(parse_exposition(exposition).problem_text() == "");
  // With --metrics the replay counts its decisions (without, it does not: Options::count_decisions).
  CHECK(parse_exposition(exposition).value(R"(gov_decisions_total{outcome="admitted"})") > 0);
  CHECK(parse_exposition(exposition).value(R"(kueue_admitted_workloads_total{cluster_queue="team-a"})") > 0);
  gov::test::write_text(dir / "good.prom", exposition);
  const gov::test::ProgramResult good = gov::test::run_program(tool + " check metrics < " + gov::test::quoted(dir / "good.prom"));
  INFO(good.out << good.err);
  CHECK(good.exit_code == 0);

  // The same text with one sample broken (an unterminated label value) and with a family
  // declared twice: promtool and the parser here both refuse them.
  std::string broken = exposition;
  const size_t label = broken.find("cluster_queue=\"team-a\"");
  REQUIRE(label != std::string::npos);
  broken.erase(label + std::string("cluster_queue=\"team-a").size(), 1);
  gov::test::write_text(dir / "broken.prom", broken);
  const gov::test::ProgramResult bad = gov::test::run_program(tool + " check metrics < " + gov::test::quoted(dir / "broken.prom"));
  CHECK(bad.exit_code != 0);
  CHECK_FALSE(parse_exposition(broken).problems.empty());
  const std::string twice = exposition + "# HELP gov_live_tasks again\n# TYPE gov_live_tasks gauge\ngov_live_tasks 0\n";
  gov::test::write_text(dir / "twice.prom", twice);
  const gov::test::ProgramResult again = gov::test::run_program(tool + " check metrics < " + gov::test::quoted(dir / "twice.prom"));
  CHECK(again.exit_code != 0);
  CHECK_FALSE(parse_exposition(twice).problems.empty());
}
