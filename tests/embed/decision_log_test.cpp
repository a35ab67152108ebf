// The decision log (issue 22, point 5; docs/observability.md): every decision as one JSON line,
// the stream's object stamped with the policy's name, version and content hash, the step and
// the task's labels, masked as configured; through a callback and a file sink.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// Replays the walkthrough (as gov simulate) through an engine opened with `options`.
gov::Engine replay_walkthrough(gov::Options options) {
  gov::Engine engine =
      gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), std::move(options));
  const std::vector<gov::TimedEvent> events = gov::read_trace(
      engine, gov::test::read_text(gov::test::repo_path("policies/examples/workshop-g5.trace.json")));
  for (size_t i = 0; i < events.size();) {
    const gov::Time at = events[i].at;
    std::vector<gov::Event> batch;
    for (; i < events.size() && events[i].at == at; ++i) batch.push_back(events[i].event);
    engine.step(at, batch);
  }
  engine.tick(gov::kForever);
  return engine;
}

}  // namespace

TEST_CASE("decision log: one line per decision, the stream's object stamped with the policy", "[embed][decision-log]") {
  std::vector<std::string> lines;
  gov::Options options;
  options.on_decision_log = [&lines](std::string_view line) { lines.emplace_back(line); };
  gov::Engine engine = replay_walkthrough(std::move(options));
  const std::vector<std::string> stream =
      lines_of(gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl")));
  REQUIRE(lines.size() == stream.size());
  const std::string sha = engine.policy().content_sha256;
  REQUIRE(sha.size() == 64);
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO(lines[i]);
    // The stream's line without its closing brace, then the stamp.
    const std::string object = stream[i].substr(0, stream[i].size() - 1);
    CHECK(lines[i].rfind(object + R"(,"policy":"workshop-g5","policy_version":1,"policy_sha256":")" + sha + R"(","sequence":)",
                         0) == 0);
    const std::string no_labels = R"(,"labels":{}})";
    CHECK(lines[i].size() >= no_labels.size());
    CHECK(lines[i].substr(lines[i].size() - no_labels.size()) == no_labels);
  }
  CHECK(lines[0].find(R"("sequence":1,)") != std::string::npos);
}

TEST_CASE("decision log: label values are masked as configured", "[embed][decision-log]") {
  gov::test::ScratchDir dir("decision-log");
  const std::string path = dir / "decisions.jsonl";
  std::vector<std::string> lines;
  gov::Options options;
  options.on_decision_log = [&lines](std::string_view line) { lines.emplace_back(line); };
  options.decision_log_path = path;
  options.decision_log_masked_labels = {"cost-center"};
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), options);
  gov::Task task = gov::test::g5_gpu_task("t1", "team-a", 1);
  task.labels = {{"project", "llm"}, {"cost-center", "cc-1234"}};
  engine.submit(task, 0);
  engine.finish("t1", 10'000);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find(R"("labels":{"project":"llm","cost-center":"***"}})") != std::string::npos);
  CHECK(lines[0].find("cc-1234") == std::string::npos);
  CHECK(lines[1].find(R"("outcome":"finished")") != std::string::npos);
  CHECK(lines[1].find(R"("labels":{"project":"llm","cost-center":"***"}})") != std::string::npos);
  // The file holds the same lines, and only its owner may read it.
  CHECK(gov::test::read_text(path) == lines[0] + "\n" + lines[1] + "\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  // "*" masks every value; without labels the key is absent.
  std::vector<std::string> all;
  gov::Options mask_all;
  mask_all.on_decision_log = [&all](std::string_view line) { all.emplace_back(line); };
  mask_all.decision_log_masked_labels = {"*"};
  gov::Engine masked = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), mask_all);
  masked.submit(task, 0);
  REQUIRE(all.size() == 1);
  CHECK(all[0].find(R"("labels":{"project":"***","cost-center":"***"}})") != std::string::npos);
  std::vector<std::string> bare;
  gov::Options no_labels;
  no_labels.on_decision_log = [&bare](std::string_view line) { bare.emplace_back(line); };
  no_labels.decision_log_labels = false;
  gov::Engine plain = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), no_labels);
  plain.submit(task, 0);
  REQUIRE(bare.size() == 1);
  CHECK(bare[0].find("labels") == std::string::npos);
  CHECK(bare[0].find("llm") == std::string::npos);
}

TEST_CASE("decision log: a reload's decisions carry the new version and hash, appended to the file",
          "[embed][decision-log]") {
  gov::test::ScratchDir dir("decision-log-reload");
  const std::string policy = gov::test::write_workshop_variant(dir, "policy.gov", 1);
  gov::Options options;
  options.decision_log_path = dir / "log.jsonl";
  gov::Engine engine = gov::Engine::compile_file(policy, options);
  engine.submit(gov::test::g5_gpu_task("big", "team-a", 2), 0);  // pending: team-a has 1 + 50 %
  const std::string first_sha = engine.policy().content_sha256;
  gov::test::write_workshop_variant(dir, "policy.gov", 3);
  const gov::Step step = engine.reload();
  REQUIRE(step.find("big") != nullptr);
  const std::vector<std::string> lines = lines_of(gov::test::read_text(dir / "log.jsonl"));
  REQUIRE(lines.size() >= 2);
  CHECK(lines.front().find(R"("policy_version":1,"policy_sha256":")" + first_sha + "\"") != std::string::npos);
  CHECK(lines.back().find(R"("task":"big","outcome":"admitted")") != std::string::npos);
  CHECK(lines.back().find(R"("policy_version":2,"policy_sha256":")" + engine.policy().content_sha256 + "\"") !=
        std::string::npos);
  CHECK(first_sha != engine.policy().content_sha256);
}

TEST_CASE("decision log: a file that cannot be opened is an io error at open", "[embed][decision-log]") {
  gov::Options options;
  options.decision_log_path = "/nonexistent-dir/decisions.jsonl";
  try {
    gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), options);
    FAIL("an engine opened with an unwritable decision log");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::io);
    CHECK(std::string(e.what()).find("decision log `/nonexistent-dir/decisions.jsonl`: cannot open it") == 0);
  }
}

// A label key given twice through the API: the rules read its second value while the exported
// state kept the first and the decision log wrote the key twice (JSON with a duplicate key). Every
// reader now takes the first value, as docs/embedding.md says the export does.
TEST_CASE("a label key given twice reads, exports and logs its first value", "[embed][decision-log]") {
  gov::test::TempDir dir("repeated-label");
  dir.copy_catalog();
  const std::string policy = dir.write("policies/examples/labels.gov", R"(import "../catalog/aws-ml.gov"
cluster c {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 4 }
}
policy {
  priority training = 50
}
team a {
  quota ml.g5.8xlarge { instances = 4 }
}
rule need-cost-center {
  when task.labels["cost-center"] == ""
  deny "cost center {task.labels["cost-center"]} is empty"
}
rule show {
  when "cost-center" in task.labels
  warn "cost center <{task.labels["cost-center"]}>"
}
)");
  std::vector<std::string> lines;
  gov::Options options;
  options.on_decision_log = [&lines](std::string_view line) { lines.emplace_back(line); };
  gov::Engine engine = gov::Engine::compile_file(policy, std::move(options));
  const auto task = [](const std::string& id, const std::string& first, const std::string& second) {
    gov::Task t = gov::test::g5_gpu_task(id, "a", 1);
    t.labels = {{"cost-center", first}, {"project", "llm"}, {"cost-center", second}};
    return t;
  };
  const gov::Decision empty_first = engine.submit(task("x", "", "cc1"), 0);
  CHECK(empty_first.outcome == gov::Outcome::rejected);
  const gov::Decision set_first = engine.submit(task("y", "cc1", ""), 0);
  REQUIRE(set_first.outcome == gov::Outcome::admitted);
  REQUIRE(set_first.warnings.size() == 1);
  CHECK(set_first.warnings[0].message == "cost center <cc1>");  // not "<cc1>" and "" run together
  const std::string state = gov::to_json(engine.export_state());
  CHECK(state.find(R"("labels":{"cost-center":"cc1","project":"llm"})") != std::string::npos);
  REQUIRE(!lines.empty());
  CHECK(lines.back().find(R"("labels":{"cost-center":"cc1","project":"llm"})") != std::string::npos);
  // The restarted engine decides the same from the exported state.
  gov::Engine restarted = engine.fresh();
  CHECK(restarted.load_state_json(state).empty());
  CHECK(gov::to_json(restarted.export_state()) == state);
}

// An SRE helper's finding: on a full disk a step's write left part of a line in the file, and
// the next step's lines were appended to it, so an auditor's JSON-lines reader failed on the
// file. The volume is a small tmpfs mounted for the test (root only; skipped else).
TEST_CASE("decision log: a write that fails on a full disk leaves no torn line", "[embed][decision-log]") {
  gov::test::ScratchDir dir("decision-log-full");
  const std::string volume = dir / "volume";
  gov::test::SmallVolume small(volume, "64k");
  if (!small.mounted()) {
    WARN("skipped: mounting a small tmpfs needs root");
    return;
  }
  gov::Options options;
  options.decision_log_path = volume + "/log.jsonl";
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"), options);
  small.fill(/*keep_free=*/4096);  // one page: the next step's block (over 4 KiB) is written in part
  const auto step_of = [&](const std::string& prefix, gov::Time at) {
    std::vector<gov::Event> batch;
    for (int i = 0; i < 40; ++i)
      batch.push_back(gov::Event::submit(gov::test::g5_gpu_task(prefix + std::to_string(i), "team-a", 1)));
    engine.step(at, batch);
  };
  step_of("lost", 1);
  CHECK(engine.metrics().find("gov_decision_log_write_failures_total 1\n") != std::string::npos);
  CHECK(std::filesystem::file_size(volume + "/log.jsonl") == 0);  // the part written was cut off
  small.unfill();
  step_of("kept", 2);
  const std::vector<std::string> lines = lines_of(gov::test::read_text(volume + "/log.jsonl"));
  CHECK(lines.size() == 40);
  for (const std::string& line : lines) {
    INFO(line);
    CHECK(line.rfind(R"({"at":0.002,"task":"kept)", 0) == 0);
    CHECK(line.back() == '}');
    CHECK(line.find("}{") == std::string::npos);
  }
}
