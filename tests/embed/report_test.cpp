// The HTML report's data and page (issue 22, point 3; docs/observability.md): what the timeline
// collects from the walkthrough, buckets that widen and keep every resource-second, escaping of
// names in the embedded JSON, and a page that refers to nothing outside itself. The page in a
// real browser: tests/browser/ (ctest `browser.report`).
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include "runtime/report/html_report.hpp"
#include "runtime/report/recorder.hpp"
#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

gov::report::ReportData walkthrough_report() {
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"));
  gov::report::ReportSetup setup;
  setup.policy = "workshop-g5";
  setup.teams = {"team-a", "team-b"};
  for (const gov::UsageRow& row : engine.snapshot().usage) {
    setup.quotas.push_back({row.team, row.flavor, row.resource, row.nominal, row.borrowing_limit});
  }
  setup.capacity.push_back({"ml.g5.8xlarge", gov::Resource::gpu, 4});
  gov::report::Recorder recorder(setup, /*timeline=*/true);
  const std::vector<gov::TimedEvent> events = gov::read_trace(
      engine, gov::test::read_text(gov::test::repo_path("policies/examples/workshop-g5.trace.json")));
  for (size_t i = 0; i < events.size();) {
    const gov::Time at = events[i].at;
    std::vector<gov::Event> batch;
    for (; i < events.size() && events[i].at == at; ++i) batch.push_back(events[i].event);
    for (const gov::Decision& d : engine.step(at, batch).decisions) recorder.add(d);
  }
  for (const gov::Decision& d : engine.tick(gov::kForever).decisions) recorder.add(d);
  return recorder.report();
}

/// Amount × ms of a series of averages: each bucket's average times the part of it that passed
/// (all of it but for the last bucket, which ends at the report's end).
double total(const std::vector<double>& averages, const gov::report::ReportData& data) {
  double sum = 0;
  for (size_t b = 0; b < averages.size(); ++b) {
    const gov::Time start = data.origin + static_cast<gov::Time>(b) * data.width;
    sum += averages[b] * static_cast<double>(std::max<gov::Time>(1, std::min(data.width, data.end - start)));
  }
  return sum;
}

}  // namespace

TEST_CASE("report: the walkthrough's data", "[embed][report]") {
  const gov::report::ReportData data = walkthrough_report();
  CHECK(data.origin == 0);
  CHECK(data.width == 1000);
  CHECK(data.buckets == 96);  // 0 to 95 s
  REQUIRE(data.usage.size() == 2);
  const gov::report::ReportData::Series& a = data.usage[0];
  CHECK(data.teams[a.team] == "team-a");
  CHECK(a.resource == gov::Resource::gpu);
  CHECK(a.nominal == 2);
  CHECK(a.borrowing_limit == 1);
  // a1 held 3 GPUs (1 borrowed) over [0, 5) and [90, 95) seconds.
  CHECK(total(a.own, data) == 2 * 10'000.0);
  CHECK(total(a.borrowed, data) == 1 * 10'000.0);
  CHECK(a.own[0] == 2);
  CHECK(a.borrowed[4] == 1);
  CHECK(a.borrowed[5] == 0);
  // a1 pending from 5 s to 90 s.
  CHECK(total(data.pending[0], data) == 85'000.0);
  CHECK(total(data.pending[1], data) == 0);
  CHECK(data.percentiles[0] == std::array<double, 3>{0, 85, 85});
  CHECK(data.percentiles[1] == std::array<double, 3>{0, 0, 0});
  REQUIRE(data.preemptions.size() == 1);
  CHECK(data.preemptions[0].team == 0);
  CHECK(data.preemptions[0].bucket == 5);
  CHECK(data.preemptions[0].kind == static_cast<size_t>(gov::PreemptionKind::reclaim));
  REQUIRE(data.worst.size() == 1);
  CHECK(data.worst[0].task == "a1");
  CHECK(data.worst[0].wait == 85'000);
  CHECK(data.worst[0].reason == "waiting-for-quota");
  CHECK(data.worst[0].admitted == 90'000);
}

TEST_CASE("report: buckets widen and keep every GPU-second", "[embed][report]") {
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"));
  gov::report::Recorder recorder({}, /*timeline=*/true);
  const auto feed = [&recorder](const gov::Step& step) {
    for (const gov::Decision& d : step.decisions) recorder.add(d);
  };
  // Ten days: a 2-GPU task for the first hour, a 1-GPU task for the last day.
  gov::Task first = gov::test::g5_gpu_task("first", "team-a", 2);
  first.duration = 3'600'000;
  gov::Step step;
  engine.submit(first, 0, &step);
  feed(step);
  gov::Task last = gov::test::g5_gpu_task("last", "team-b", 1);
  last.duration = 86'400'000;
  engine.submit(last, 9 * 86'400'000, &step);
  feed(step);
  feed(engine.tick(gov::kForever));
  const gov::report::ReportData data = recorder.report();
  CHECK(data.buckets <= gov::report::Buckets::kMaxBuckets);
  CHECK(data.width > gov::report::Buckets::kFirstWidth);
  CHECK(data.buckets * static_cast<size_t>(data.width) >= 10 * 86'400'000ull);
  // ... and no more than that: the charts ended about half as late again when the buckets widened
  // without their count being halved.
  CHECK((data.buckets - 1) * static_cast<size_t>(data.width) <= 10 * 86'400'000ull);
  double gpu_ms = 0;
  for (const gov::report::ReportData::Series& s : data.usage) gpu_ms += total(s.own, data) + total(s.borrowed, data);
  CHECK(gpu_ms == Approx(2.0 * 3'600'000 + 1.0 * 86'400'000));
}

TEST_CASE("report: the page refers to nothing outside itself and escapes what it embeds", "[embed][report]") {
  gov::report::ReportData data = walkthrough_report();
  data.worst[0].task = "</script><script>alert(1)</script>";
  data.worst[0].message = "<b>\"quoted\" & 'single'</b>\n\u2028";
  data.policy = "<policy>";
  const std::string page = gov::report::html_report(data);
  for (const char* external : {"http:", "https:", "//cdn", "src=", "href=", "@import", "url(", "fetch(", "XMLHttpRequest"}) {
    INFO(external);
    CHECK(page.find(external) == std::string::npos);
  }
  // One script element of data and one of code, and the planted text stays inside a string.
  CHECK(page.find("</script><script>alert(1)") == std::string::npos);
  CHECK(page.find("\\u003c/script>\\u003cscript>alert(1)\\u003c/script>") != std::string::npos);
  CHECK(page.find("<title>gov simulation report: &lt;policy&gt;</title>") != std::string::npos);
  CHECK(page.rfind("</html>\n") == page.size() - 8);
  const std::string json = gov::report::report_json(data);
  CHECK(json.find('<') == std::string::npos);
  CHECK(json.find('\n') == std::string::npos);
  CHECK(json.find("\\u2028") != std::string::npos);  // the JavaScript line terminator, escaped
}
