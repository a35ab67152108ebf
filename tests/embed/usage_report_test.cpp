// Usage reports (issue 22; docs/observability.md): per day, team and instance type, the hours
// add up to the simulation summary's, intervals split at midnight, and `gov simulate
// --usage-report` writes the CSV and JSON forms.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include <map>

#include "compiler/support/json_writer.hpp"
#include "runtime/report/recorder.hpp"
#include "runtime/report/usage_report.hpp"
#include "runtime/trace/decision_writer.hpp"
#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

/// Replays `events` as `gov simulate` does (one step per instant, then every remaining finish),
/// handing every decision to `sink`.
template <typename Sink>
void replay(gov::Engine& engine, const std::vector<gov::TimedEvent>& events, Sink sink) {
  for (size_t i = 0; i < events.size();) {
    const gov::Time at = events[i].at;
    std::vector<gov::Event> batch;
    for (; i < events.size() && events[i].at == at; ++i) batch.push_back(events[i].event);
    for (const gov::Decision& d : engine.step(at, batch).decisions) sink(d);
  }
  for (const gov::Decision& d : engine.tick(gov::kForever).decisions) sink(d);
}

/// The teams' nominal quotas of `engine`'s policy, as `gov simulate` gives them to the reports.
gov::report::ReportSetup setup_of(gov::Engine& engine) {
  gov::report::ReportSetup setup;
  for (const gov::UsageRow& row : engine.snapshot().usage) {
    setup.quotas.push_back({row.team, row.flavor, row.resource, row.nominal, row.borrowing_limit});
  }
  return setup;
}

}  // namespace

TEST_CASE("usage report: the hours add up to the simulation summary's", "[embed][usage-report]") {
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/rules.gov"));
  const std::vector<gov::TimedEvent> events = gov::read_trace(engine, gov::test::generate_rules_trace(20'000, 22));
  const gov::report::ReportSetup setup = setup_of(engine);
  gov::report::Recorder recorder(setup);
  gov::trace::SummaryBuilder summary;
  for (const gov::report::QuotaInfo& q : setup.quotas) summary.set_nominal(q.team, q.flavor, q.resource, q.nominal);
  replay(engine, events, [&](const gov::Decision& d) {
    recorder.add(d);
    summary.add(d);
  });
  std::map<std::string, int64_t> gpu, borrowed, preempted, admitted_rows;
  int64_t pending = 0;
  const std::vector<gov::report::UsageRow> rows = recorder.usage();
  for (const gov::report::UsageRow& row : rows) {
    gpu[row.team] += row.used[0];
    borrowed[row.team] += row.borrowed[0];
    preempted[row.team] += row.preempted;
    admitted_rows[row.team] += row.admitted;
    pending += row.pending_at_end;
    CHECK(row.borrowed[0] <= row.used[0]);
  }
  const std::vector<gov::trace::TeamSummary> teams = summary.summarize();
  REQUIRE(teams.size() >= 2);
  int64_t total_gpu = 0;
  for (const gov::trace::TeamSummary& team : teams) {
    INFO(team.team);
    CHECK(gpu[team.team] == team.gpu_millis);
    CHECK(borrowed[team.team] == team.borrowed_gpu_millis);
    CHECK(preempted[team.team] == team.preempted);
    CHECK(admitted_rows[team.team] >= team.admitted);  // rows count re-admissions too
    total_gpu += team.gpu_millis;
  }
  CHECK(total_gpu > 0);
  CHECK(pending == static_cast<int64_t>(engine.snapshot().count(gov::TaskState::pending)));
  // The trace spans more than a day: some rows are on later days.
  CHECK(rows.back().day >= rows.front().day);
}

TEST_CASE("usage report: an interval across midnight is split between the two days", "[embed][usage-report]") {
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"));
  gov::report::Recorder recorder(setup_of(engine));
  gov::Task task = gov::test::g5_gpu_task("night", "team-a", 2);
  task.duration = 2 * 3'600'000;  // 23:00 to 01:00
  gov::Step step;
  engine.submit(task, 23 * 3'600'000, &step);
  for (const gov::Decision& d : step.decisions) recorder.add(d);
  gov::Task waiting = gov::test::g5_gpu_task("waiting", "team-a", 4);  // over the maximum: pending
  engine.submit(waiting, 23 * 3'600'000, &step);
  for (const gov::Decision& d : step.decisions) recorder.add(d);
  for (const gov::Decision& d : engine.tick(gov::kForever).decisions) recorder.add(d);
  const std::vector<gov::report::UsageRow> rows = recorder.usage();
  // Ordered by day, team, instance type; a task pending at the end that never held an
  // instance type is in the last day's row without one.
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].day == 0);
  CHECK(rows[0].used[0] == 2 * 3'600'000);  // 2 GPUs × 1 hour
  CHECK(rows[0].admitted == 1);
  CHECK(rows[1].day == 1);
  CHECK(rows[1].instance_type.empty());
  CHECK(rows[1].pending_at_end == 1);
  CHECK(rows[2].day == 1);
  CHECK(rows[2].used[0] == 2 * 3'600'000);
  CHECK(rows[2].finished == 1);
  CHECK(rows[2].pending_at_end == 0);
  const std::string csv = gov::report::usage_csv(rows);
  CHECK(csv.find("\n1970-01-01,team-a,ml.g5.8xlarge,2,2,0,0,0,0,0,0,0,1,0,0,0\n") != std::string::npos);
  CHECK(csv.find("\n1970-01-02,team-a,,0,0,0,0,0,0,0,0,0,0,0,0,1\n") != std::string::npos);
  CHECK(csv.find("\n1970-01-02,team-a,ml.g5.8xlarge,2,2,0,0,0,0,0,0,0,0,0,1,0\n") != std::string::npos);
  CHECK(gov::report::date_of(20'418) == "2025-11-26");
  CHECK(gov::report::date_of(-1) == "1969-12-31");
}

TEST_CASE("usage report: gov simulate writes the walkthrough's as CSV and JSON", "[embed][usage-report]") {
  gov::test::ScratchDir dir("usage-report");
  const std::string base = gov::test::quoted(GOV_BINARY) +
                           " simulate policies/examples/workshop-g5.gov --trace policies/examples/workshop-g5.trace.json";
  const gov::test::ProgramResult csv_run = gov::test::run_program(base + " --usage-report " + gov::test::quoted(dir / "u.csv"));
  REQUIRE(csv_run.exit_code == 0);
  // The stream is unchanged by the report.
  CHECK(csv_run.out == gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl")));
  // a1: 3 GPUs (1 borrowed) for 5 s and again for 5 s; b1: 2 GPUs, 64 vCPUs for 85 s.
  CHECK(gov::test::read_text(dir / "u.csv") ==
        "date,team,instance_type,gpu_hours,gpu_hours_own,gpu_hours_borrowed,neuron_hours,neuron_hours_own,"
        "neuron_hours_borrowed,vcpu_hours,vcpu_hours_own,vcpu_hours_borrowed,tasks_admitted,tasks_preempted,"
        "tasks_finished,tasks_pending_at_end\n"
        "1970-01-01,team-a,ml.g5.8xlarge,0.008333,0.005556,0.002778,0,0,0,0,0,0,2,1,0,0\n"
        "1970-01-01,team-b,ml.g5.8xlarge,0.047222,0.047222,0,0,0,0,1.511111,1.511111,0,1,0,1,0\n");
  const gov::test::ProgramResult json_run =
      gov::test::run_program(base + " --usage-report " + gov::test::quoted(dir / "u.json"));
  REQUIRE(json_run.exit_code == 0);
  const std::string json = gov::test::read_text(dir / "u.json");
  CHECK(json.rfind(R"({"rows":[{"date":"1970-01-01","day":0,"team":"team-a","instance_type":"ml.g5.8xlarge","gpu_hours":0.008333,)", 0) == 0);
  CHECK(json.find(R"("vcpu_hours":1.511111,"vcpu_hours_own":1.511111,"vcpu_hours_borrowed":0,"tasks_admitted":1,"tasks_preempted":0,"tasks_finished":1,"tasks_pending_at_end":0}]})") != std::string::npos);

  const gov::test::ProgramResult bad = gov::test::run_program(base + " --usage-report " + gov::test::quoted(dir / "u.txt"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("must end in .csv or .json") != std::string::npos);
  CHECK(bad.out.empty());
  const gov::test::ProgramResult unwritable =
      gov::test::run_program(base + " --usage-report " + gov::test::quoted(dir / "missing-dir/u.csv"));
  CHECK(unwritable.exit_code == 2);
  CHECK(unwritable.err.find("cannot write the usage report") != std::string::npos);
}

// An SRE helper's findings (session 40): with `--until` at midnight the tasks pending at the end
// went on a row of the next day, which the horizon does not reach, and under no instance type
// though the task asked for one.
TEST_CASE("usage report: tasks pending at a midnight horizon count on its last day, by their instance type",
          "[embed][usage-report]") {
  gov::test::ScratchDir dir("usage-report-midnight");
  const std::string trace = dir / "t.json";
  gov::test::write_text(trace, R"({"events": [
  {"at": 0, "submit": {"id": "a1", "team": "team-a", "instance_type": "ml.g5.8xlarge", "gpus": 2, "duration": 172800}},
  {"at": 0, "submit": {"id": "b1", "team": "team-b", "instance_type": "ml.g5.8xlarge", "gpus": 2, "duration": 172800}},
  {"at": 3600, "submit": {"id": "a2", "team": "team-a", "instance_type": "ml.g5.8xlarge", "gpus": 1}}
]})");
  const gov::test::ProgramResult run = gov::test::run_program(
      gov::test::quoted(GOV_BINARY) + " simulate policies/examples/workshop-g5.gov --trace " + gov::test::quoted(trace) +
      " --until 86400 --usage-report " + gov::test::quoted(dir / "u.csv"));
  REQUIRE(run.exit_code == 0);
  CHECK(gov::test::read_text(dir / "u.csv") ==
        "date,team,instance_type,gpu_hours,gpu_hours_own,gpu_hours_borrowed,neuron_hours,neuron_hours_own,"
        "neuron_hours_borrowed,vcpu_hours,vcpu_hours_own,vcpu_hours_borrowed,tasks_admitted,tasks_preempted,"
        "tasks_finished,tasks_pending_at_end\n"
        "1970-01-01,team-a,ml.g5.8xlarge,48,48,0,0,0,0,0,0,0,1,0,0,1\n"
        "1970-01-01,team-b,ml.g5.8xlarge,48,48,0,0,0,0,0,0,0,1,0,0,0\n");
}

TEST_CASE("usage report: JsonWriter writes decimals as numbers", "[embed][usage-report]") {
  gov::JsonWriter w(/*indented=*/false);
  w.begin_array();
  w.decimal("0.008333");
  w.decimal("-2");
  w.decimal("12.5");
  w.end_array();
  CHECK(w.finish() == "[0.008333,-2,12.5]\n");
}

// A team borrows what it holds above its nominal quota, at each moment (Kueue's borrowing): the
// task that pushed it over does not go on borrowing once the team is back within its quota. And a
// task holds what each of its pod sets holds, in that pod set's instance type. Before, the task's
// admission-time `borrowed` was charged for its whole run, and all of a task on its first type.
TEST_CASE("usage report: borrowing is the team's above its quota, and pod sets count on their own types",
          "[embed][usage-report]") {
  gov::test::ScratchDir dir("usage-borrowing");
  const std::string policy = dir / "p.gov";
  gov::test::write_text(policy, R"(import "aws-ml"
cluster c {
  catalog  = aws-ml
  capacity = { ml.c5.xlarge: 4, ml.g5.8xlarge: 4 }
}
policy {
  task-prioritization = fcfs
  idle-compute        = fcfs
}
team t1 {
  quota ml.c5.xlarge  { instances = 2 }
  quota ml.g5.8xlarge { instances = 2 }
}
team t2 {
  quota ml.c5.xlarge  { instances = 2 }
  quota ml.g5.8xlarge { instances = 2 }
}
)");
  // x1 (2 GPUs, 60 s) and x2 (1 GPU, 3,600 s): t1 is 1 GPU over its 2 for 60 s only.
  const std::string borrow = dir / "borrow.json";
  gov::test::write_text(borrow, R"({"events": [
  {"at": 0, "submit": {"id": "x1", "team": "t1", "instance_type": "ml.g5.8xlarge", "gpus": 2, "duration": 60}},
  {"at": 0, "submit": {"id": "x2", "team": "t1", "instance_type": "ml.g5.8xlarge", "gpus": 1, "duration": 3600}}]})");
  const std::string simulate = gov::test::quoted(GOV_BINARY) + " simulate " + gov::test::quoted(policy);
  const gov::test::ProgramResult run = gov::test::run_program(simulate + " --trace " + gov::test::quoted(borrow) +
                                                              " --format text --usage-report " + gov::test::quoted(dir / "b.csv"));
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  // 1 GPU × 60 s = 0.016667 GPU-hours borrowed, of 1.033333 held.
  CHECK(gov::test::read_text(dir / "b.csv").find("\n1970-01-01,t1,ml.g5.8xlarge,1.033333,1.016667,0.016667,") !=
        std::string::npos);
  CHECK(run.out.find("1.033               0.017") != std::string::npos);  // the summary agrees

  // A master on a CPU type and three workers of 1 GPU on the GPU type: one row per type.
  const std::string pods = dir / "pods.json";
  gov::test::write_text(pods, R"({"events":[{"at":0,"submit":{"id":"p1","team":"t1","duration":3600,"pod_sets":[
 {"name":"master","instance_type":"ml.c5.xlarge","pods":1,"per_pod":{"vcpus":2}},
 {"name":"worker","instance_type":"ml.g5.8xlarge","pods":3,"per_pod":{"gpus":1,"vcpus":4}}]}}]})");
  const gov::test::ProgramResult pod_run =
      gov::test::run_program(simulate + " --trace " + gov::test::quoted(pods) + " --usage-report " + gov::test::quoted(dir / "p.csv"));
  INFO(pod_run.err);
  REQUIRE(pod_run.exit_code == 0);
  const std::string csv = gov::test::read_text(dir / "p.csv");
  INFO(csv);
  CHECK(csv.find("\n1970-01-01,t1,ml.c5.xlarge,0,0,0,0,0,0,2,2,0,1,0,1,0\n") != std::string::npos);
  CHECK(csv.find("\n1970-01-01,t1,ml.g5.8xlarge,3,2,1,0,0,0,12,12,0,0,0,0,0\n") != std::string::npos);
}

// A what-if analyst's finding (session 43): a valid one-event trace whose task runs for 10^12 s
// wrote a 703 MB usage report (a row per day for 31,700 years).
TEST_CASE("usage report: one past its most rows is refused, not written", "[embed][usage-report]") {
  gov::test::ScratchDir dir("usage-report-rows");
  const std::string trace = dir / "t.json";
  gov::test::write_text(trace, R"({"events": [{"at": 0, "submit": {"id": "z", "team": "team-a",
      "gpus": 1, "duration": 1000000000000}}]})");
  const gov::test::ProgramResult run = gov::test::run_program(
      gov::test::quoted(GOV_BINARY) + " simulate policies/examples/workshop-g5.gov --trace " + gov::test::quoted(trace) +
      " --usage-report " + gov::test::quoted(dir / "u.csv"));
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("not written: it would hold more than 1000000 rows") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "u.csv"));
  // The same replay to a horizon a report can hold is written.
  const gov::test::ProgramResult until = gov::test::run_program(
      gov::test::quoted(GOV_BINARY) + " simulate policies/examples/workshop-g5.gov --trace " + gov::test::quoted(trace) +
      " --until 864000 --usage-report " + gov::test::quoted(dir / "u.csv"));
  CHECK(until.exit_code == 0);
  const std::string csv = gov::test::read_text(dir / "u.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 11);  // the header and ten days
}
