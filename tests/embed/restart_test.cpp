// Issue 25, restart with state: an engine stopped mid-trace hands its exported state to a fresh
// engine, which decides the rest of the trace; the concatenated stream must be byte for byte the
// uninterrupted run's, at every cut point, through the C++ API and through the C ABI (state as
// JSON, gov_engine_load_state_json / gov_engine_export_state_json).
#include <catch2/catch.hpp>

#include <gov/engine.hpp>
#include <gov/gov.h>

#include <string>
#include <vector>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::read_text;
using gov::test::repo_path;

/// A trace's events grouped by instant, as `gov simulate` applies them (one step per instant).
struct Instant {
  gov::Time at = 0;
  std::vector<gov::Event> events;
};

std::vector<Instant> instants_of(const std::vector<gov::TimedEvent>& events) {
  std::vector<Instant> out;
  for (const gov::TimedEvent& event : events) {
    if (out.empty() || out.back().at != event.at) out.push_back({event.at, {}});
    out.back().events.push_back(event.event);
  }
  return out;
}

/// Steps `engine` through instants [from, to) and, when `to` is the end, ticks to the end of
/// time; returns the stream.
std::string replay(gov::Engine& engine, const std::vector<Instant>& instants, size_t from, size_t to) {
  std::string stream;
  for (size_t i = from; i < to; ++i) stream += gov::to_json(engine.step(instants[i].at, instants[i].events));
  if (to == instants.size()) stream += gov::to_json(engine.tick(gov::kForever));
  return stream;
}

/// The first line where two streams differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
  size_t line = 1;
  size_t start = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) break;
    if (a[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  const auto line_at = [start](const std::string& s) { return s.substr(start, s.find('\n', start) - start); };
  return "line " + std::to_string(line) + ":\n  uninterrupted: " + line_at(a) + "\n  restarted:     " + line_at(b);
}

struct Case {
  std::string name;
  std::string policy;  // repository-relative
  std::string trace;   // the trace's text
};

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"walkthrough", "policies/examples/workshop-g5.gov",
                 read_text(repo_path("policies/examples/workshop-g5.trace.json"))});
  for (const char* stream : {"cli-walkthrough-g5-12xlarge.due-finish-and-finish",
                             "cli-walkthrough-g5-12xlarge.overlap-recomputed",
                             "cli-walkthrough-g5-12xlarge.overlap-fits-after-preemptions",
                             "cli-walkthrough-g5-12xlarge.overlap-still-skipped",
                             "workshop-kr-g5-8xlarge.due-finish-and-submission"}) {
    const std::string name = stream;
    out.push_back({name, "policies/examples/" + name.substr(0, name.find('.')) + ".gov",
                   read_text(repo_path("tests/corpus/streams/" + name + ".trace.json"))});
  }
  // Two tasks admitted in one instant out of submission order (the higher class first) whose
  // durations end together: their finishes come in admission order, which the state must keep.
  out.push_back({"same-instant admissions", "policies/examples/workshop-g5.gov", R"({"events": [
    {"at": 0, "submit": {"id": "low", "team": "team-a", "priority": "training", "gpus": 1, "duration": 10}},
    {"at": 0, "submit": {"id": "high", "team": "team-a", "priority": "inference", "gpus": 1, "duration": 10}},
    {"at": 20, "submit": {"id": "late", "team": "team-b", "gpus": 1}}
  ]})"});
  // GPU partitions: borrowed, reclaimed, pending per profile, one profile no quota gives, and
  // partitions per pod; the state carries each task's partitions.
  out.push_back({"gpu partitions", "policies/examples/mig-partitions.gov", R"({"events": [
    {"at": 0, "submit": {"id": "nb1", "team": "research", "priority": "notebook", "partitions": {"mig-1g.5gb": 21}}},
    {"at": 10, "submit": {"id": "nb2", "team": "research", "priority": "notebook", "partitions": {"mig-1g.5gb": 4}, "duration": 100}},
    {"at": 10, "submit": {"id": "odd", "team": "research", "partitions": {"mig-2g.10gb": 1}}},
    {"at": 20, "submit": {"id": "ep1", "team": "inference", "priority": "inference", "vcpus": 8, "partitions": {"mig-1g.5gb": 12}, "duration": 50}},
    {"at": 20, "submit": {"id": "s1", "team": "serving", "pods": 2, "per_pod": {"vcpus": 1, "partitions": {"mig-3g.20gb": 2}}}},
    {"at": 30, "submit": {"id": "s2", "team": "serving", "partitions": {"mig-3g.20gb": 1}, "duration": 30}},
    {"at": 40, "finish": "nb1"},
    {"at": 90, "finish": "s1"}
  ]})"});
  // Generated traces: every request shape, finishes, cancels, durations (preemptions and
  // pending tasks come with them), many events per instant.
  for (uint64_t seed : {1, 2, 3}) {
    out.push_back({"rules seed " + std::to_string(seed), "policies/examples/rules.gov",
                   gov::test::generate_rules_trace(600, seed)});
  }
  return out;
}

/// At most this many cut points per trace (evenly spread, always including the first and last
/// instants): each cut replays the whole trace once more.
constexpr size_t kMaxCuts = 24;

std::vector<size_t> cut_points(size_t instants) {
  std::vector<size_t> cuts;
  if (instants <= kMaxCuts) {
    for (size_t i = 0; i <= instants; ++i) cuts.push_back(i);
    return cuts;
  }
  for (size_t k = 0; k <= kMaxCuts; ++k) cuts.push_back(k * instants / kMaxCuts);
  return cuts;
}

}  // namespace

TEST_CASE("restart: a fresh engine loaded with the exported state decides the rest of a trace byte-identically",
          "[embed][restart]") {
  for (const Case& c : cases()) {
    for (auto back_end : {gov::Options::BackEnd::jit, gov::Options::BackEnd::interpreter}) {
      gov::Options options;
      options.back_end = back_end;
      // One uninterrupted run, which exports its state (without changing anything) at each cut.
      gov::Engine whole = gov::Engine::compile_file(repo_path(c.policy), options);
      const std::vector<Instant> instants = instants_of(gov::read_trace(whole, c.trace));
      const std::vector<size_t> cuts = cut_points(instants.size());
      std::vector<std::string> streams_before;  // per cut: the stream up to it
      std::vector<gov::ClusterState> states;    // per cut: the state there
      std::string expected;
      for (size_t i = 0, k = 0; i <= instants.size(); ++i) {
        for (; k < cuts.size() && cuts[k] == i; ++k) {
          streams_before.push_back(expected);
          states.push_back(whole.export_state());
        }
        if (i < instants.size()) expected += gov::to_json(whole.step(instants[i].at, instants[i].events));
      }
      expected += gov::to_json(whole.tick(gov::kForever));
      REQUIRE_FALSE(expected.empty());
      for (size_t k = 0; k < cuts.size(); ++k) {
        INFO(c.name << (back_end == gov::Options::BackEnd::jit ? " (jit)" : " (interp)") << ", cut before instant "
                    << cuts[k] << " of " << instants.size());
        // The first cut restarts on an engine compiled again (a restarted process), the others on
        // a fresh engine of the same compiled version: the state is all that carries either way.
        gov::Engine second = k == 0 ? gov::Engine::compile_file(repo_path(c.policy), options) : whole.fresh();
        const std::vector<gov::LoadFailure> failures = second.load_state(states[k]);
        CHECK(failures.empty());
        const std::string stream = streams_before[k] + replay(second, instants, cuts[k], instants.size());
        INFO(first_difference(expected, stream));
        CHECK(stream == expected);
      }
    }
  }
}

// The core keeps a record of every task it has seen; a long-running engine rebuilds it from
// its live tasks once ended ones pile up (Options::compact_after_ended_tasks). The rebuilt
// engine must decide on as the one that kept everything: the stream, the snapshot after every
// step and the exported state are compared with an engine that never compacts.
TEST_CASE("compaction: an engine that rebuilds its state from the live tasks decides as one that keeps every task",
          "[embed][restart][compaction]") {
  size_t compactions = 0;
  for (const Case& c : cases()) {
    gov::Options keeping;
    keeping.compact_after_ended_tasks = 0;  // never
    gov::Options compacting;
    compacting.compact_after_ended_tasks = 4;  // after a few ended tasks, and four times the live ones
    gov::Engine reference = gov::Engine::compile_file(repo_path(c.policy), keeping);
    gov::Engine engine = gov::Engine::compile_file(repo_path(c.policy), compacting);
    const std::vector<Instant> instants = instants_of(gov::read_trace(reference, c.trace));
    for (size_t i = 0; i < instants.size(); ++i) {
      INFO(c.name << ", instant " << i << " of " << instants.size());
      const std::string expected = gov::to_json(reference.step(instants[i].at, instants[i].events));
      REQUIRE(gov::to_json(engine.step(instants[i].at, instants[i].events)) == expected);
      REQUIRE(engine.snapshot() == reference.snapshot());
      const std::string state = gov::to_json(engine.export_state()), reference_state = gov::to_json(reference.export_state());
      size_t differ = 0;
      while (differ < std::min(state.size(), reference_state.size()) && state[differ] == reference_state[differ]) ++differ;
      INFO("kept everything: " << reference_state.substr(differ > 300 ? differ - 300 : 0, 600) << "\ncompacted:       "
                               << state.substr(differ > 300 ? differ - 300 : 0, 600));
      REQUIRE(state == reference_state);
    }
    CHECK(gov::to_json(engine.tick(gov::kForever)) == gov::to_json(reference.tick(gov::kForever)));
    const std::string metrics = engine.metrics();
    const size_t at = metrics.find("\ngov_engine_compactions_total ");
    REQUIRE(at != std::string::npos);
    compactions += std::stoul(metrics.substr(at + std::string_view("\ngov_engine_compactions_total ").size()));
    CHECK(reference.metrics().find("\ngov_engine_compactions_total 0\n") != std::string::npos);
  }
  CHECK(compactions > 10);  // 25 on these traces
}

namespace {

/// The C ABI's side: an engine handle closed at the end of its scope.
struct CEngine {
  explicit CEngine(const std::string& policy, gov_back_end back_end = GOV_BACK_END_JIT) {
    gov_open_options options;
    gov_open_options_init(&options);
    options.back_end = back_end;
    REQUIRE(gov_engine_open_file(repo_path(policy).c_str(), &options, &handle) == GOV_OK);
  }
  ~CEngine() { gov_engine_close(handle); }
  CEngine(const CEngine&) = delete;
  CEngine& operator=(const CEngine&) = delete;
  gov_engine* handle = nullptr;
};

/// A trace read through the C ABI, grouped by instant (indices into the trace).
struct CTrace {
  CTrace(gov_engine* engine, const std::string& text) {
    REQUIRE(gov_trace_read(engine, text.data(), text.size(), &trace) == GOV_OK);
    for (size_t i = 0; i < gov_trace_count(trace); ++i) {
      const gov_event* event = gov_trace_get(trace, i);
      if (starts.empty() || gov_trace_get(trace, starts.back())->at_ms != event->at_ms) starts.push_back(i);
    }
  }
  ~CTrace() { gov_trace_free(trace); }
  CTrace(const CTrace&) = delete;
  CTrace& operator=(const CTrace&) = delete;
  size_t instants() const { return starts.size(); }
  gov_trace* trace = nullptr;
  std::vector<size_t> starts;  // the first event of each instant
};

std::string take_json(gov_decisions* step) {
  std::string out = gov_decisions_json(step);
  gov_decisions_free(step);
  return out;
}

/// gov_engine_step of one instant of `trace`.
std::string c_step(gov_engine* engine, const CTrace& trace, size_t instant) {
  const size_t first = trace.starts[instant];
  const size_t end = instant + 1 < trace.instants() ? trace.starts[instant + 1] : gov_trace_count(trace.trace);
  std::vector<gov_event> events;
  for (size_t e = first; e < end; ++e) events.push_back(*gov_trace_get(trace.trace, e));
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_step(engine, events.front().at_ms, events.data(), events.size(), &step) == GOV_OK);
  return take_json(step);
}

/// The remaining duration finishes, as `gov simulate` runs them after the last event.
std::string c_finish(gov_engine* engine) {
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_tick(engine, GOV_TIME_FOREVER, &step) == GOV_OK);
  return take_json(step);
}

/// Instants [from, end) of `trace`, then the remaining finishes.
std::string c_replay_rest(gov_engine* engine, const CTrace& trace, size_t from) {
  std::string stream;
  for (size_t i = from; i < trace.instants(); ++i) stream += c_step(engine, trace, i);
  return stream + c_finish(engine);
}

}  // namespace

TEST_CASE("restart: the C ABI exports the state as JSON and a new engine loads it and goes on byte-identically",
          "[embed][restart][c]") {
  for (const Case& c : cases()) {
    // One uninterrupted run, which exports its state as JSON at each cut.
    CEngine whole(c.policy);
    const CTrace trace(whole.handle, c.trace);
    const std::vector<size_t> cuts = cut_points(trace.instants());
    std::vector<std::string> streams_before;
    std::vector<std::string> states;
    std::string expected;
    for (size_t i = 0, k = 0; i <= trace.instants(); ++i) {
      for (; k < cuts.size() && cuts[k] == i; ++k) {
        streams_before.push_back(expected);
        char* json = nullptr;
        REQUIRE(gov_engine_export_state_json(whole.handle, &json) == GOV_OK);
        states.emplace_back(json);
        gov_string_free(json);
      }
      if (i < trace.instants()) expected += c_step(whole.handle, trace, i);
    }
    expected += c_finish(whole.handle);
    for (size_t k = 0; k < cuts.size(); ++k) {
      INFO(c.name << ", cut before instant " << cuts[k] << " of " << trace.instants() << ", state " << states[k]);
      // A new process's engine, opened and compiled again: native code at the first cut, the
      // interpreter at the others (it compiles faster; the back ends decide alike).
      CEngine second(c.policy, k == 0 ? GOV_BACK_END_JIT : GOV_BACK_END_INTERPRETER);
      gov_load_failures* failures = nullptr;
      REQUIRE(gov_engine_load_state_json(second.handle, states[k].data(), states[k].size(), &failures) == GOV_OK);
      CHECK(gov_load_failures_count(failures) == 0);
      gov_load_failures_free(failures);
      const std::string stream = streams_before[k] + c_replay_rest(second.handle, trace, cuts[k]);
      INFO(first_difference(expected, stream));
      CHECK(stream == expected);
    }
  }
}

TEST_CASE("restart: a state's bad entries are skipped and reported one by one with their list and index",
          "[embed][restart][c]") {
  CEngine engine("policies/examples/workshop-g5.gov");
  const std::string state = R"({"at": 30,
    "admitted": [
      {"task": {"id": "a1", "team": "team-a", "gpus": 2}, "submitted_at": 1, "admitted_at": 2},
      {"task": {"id": "x1", "team": "team-x", "gpus": 1}},
      {"task": {"id": "a2", "team": "team-a", "gpus": 1}, "flavor": "ml.p5.48xlarge"}
    ],
    "pending": [
      {"task": {"id": "a1", "team": "team-a", "gpus": 1}},
      {"task": {"id": "b1", "team": "team-b", "gpus": 4}, "submitted_at": 3, "reason": "waiting-for-quota",
       "message": "waits", "parked": true},
      {"task": {"id": "b2", "team": "team-b", "gpus": 1}, "reson": "waiting-for-quota"},
      {"task": {"id": "b3", "team": "team-b", "gpus": 1}, "reason": "sleeping"}
    ]})";
  gov_load_failures* failures = nullptr;
  REQUIRE(gov_engine_load_state_json(engine.handle, state.data(), state.size(), &failures) == GOV_OK);
  struct Expected {
    gov_state_list list;
    size_t index;
    std::string message_part;
  };
  const std::vector<Expected> expected = {
      {GOV_STATE_ADMITTED, 1, "unknown team \"team-x\""},
      {GOV_STATE_ADMITTED, 2, "team `team-a` has no quota for the task's instance type"},
      {GOV_STATE_PENDING, 0, "duplicate task id \"a1\": it is given twice"},
      {GOV_STATE_PENDING, 2, "unknown key \"reson\"; did you mean \"reason\"?"},
      {GOV_STATE_PENDING, 3, "expected a pending reason"},
  };
  REQUIRE(gov_load_failures_count(failures) == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const gov_load_failure* failure = gov_load_failures_get(failures, i);
    REQUIRE(failure != nullptr);
    INFO(failure->message);
    CHECK(failure->list == expected[i].list);
    CHECK(failure->index == expected[i].index);
    CHECK(std::string(failure->message).find(expected[i].message_part) != std::string::npos);
    CHECK(std::string(failure->message).rfind("admitted[", 0) == std::string::npos);  // no prefix: list and index say it
  }
  CHECK(gov_load_failures_get(failures, expected.size()) == nullptr);
  gov_load_failures_free(failures);

  // The good entries loaded: a1 holds 2 GPUs, b1 waits parked with its last decision.
  char* json = nullptr;
  REQUIRE(gov_engine_export_state_json(engine.handle, &json) == GOV_OK);
  const std::string exported = json;
  gov_string_free(json);
  CHECK(exported ==
        R"({"at":30,"admitted":[{"task":{"id":"a1","team":"team-a","gpus":2},"submitted_at":1,"admitted_at":2,)"
        R"("flavor":"ml.g5.8xlarge"}],"pending":[{"task":{"id":"b1","team":"team-b","gpus":4},"submitted_at":3,)"
        R"("reason":"waiting-for-quota","message":"waits","parked":true}]})");

  // Loading into an engine that has tasks is refused as a whole.
  CHECK(gov_engine_load_state_json(engine.handle, state.data(), state.size(), &failures) ==
        GOV_ERROR_INVALID_ARGUMENT);
  CHECK(failures == nullptr);
  CHECK(std::string(gov_last_error()).find("no tasks yet") != std::string::npos);
}

TEST_CASE("restart: an entry whose times are impossible at the state's time is skipped and reported",
          "[embed][restart][c]") {
  // An embedding helper's finding: a task submitted after `at` was admitted at a time before its
  // submission, and an admission before its submission was kept as it was.
  CEngine engine("policies/examples/workshop-g5.gov");
  const std::string state = R"({"at": 10,
    "admitted": [
      {"task": {"id": "a1", "team": "team-a", "gpus": 1}, "submitted_at": 50, "admitted_at": 20},
      {"task": {"id": "a2", "team": "team-a", "gpus": 1}, "submitted_at": 5, "admitted_at": 4},
      {"task": {"id": "a3", "team": "team-a", "gpus": 1}, "submitted_at": 5, "admitted_at": 10.5},
      {"task": {"id": "a4", "team": "team-a", "gpus": 1}, "submitted_at": 5, "admitted_at": 10}
    ],
    "pending": [
      {"task": {"id": "b1", "team": "team-b", "gpus": 1}, "submitted_at": 5000},
      {"task": {"id": "b2", "team": "team-b", "gpus": 1}, "submitted_at": 10}
    ]})";
  gov_load_failures* failures = nullptr;
  REQUIRE(gov_engine_load_state_json(engine.handle, state.data(), state.size(), &failures) == GOV_OK);
  const std::vector<std::pair<size_t, std::string>> admitted_failures = {
      {0, "`submitted_at` 50 s is after the state's time `at` 10 s"},
      {1, "`admitted_at` 4 s is before `submitted_at` 5 s"},
      {2, "`admitted_at` 10.5 s is after the state's time `at` 10 s"}};
  REQUIRE(gov_load_failures_count(failures) == 4);
  for (size_t i = 0; i < admitted_failures.size(); ++i) {
    const gov_load_failure* failure = gov_load_failures_get(failures, i);
    CHECK(failure->list == GOV_STATE_ADMITTED);
    CHECK(failure->index == admitted_failures[i].first);
    CHECK(std::string(failure->message) == admitted_failures[i].second);
  }
  const gov_load_failure* pending = gov_load_failures_get(failures, 3);
  CHECK(pending->list == GOV_STATE_PENDING);
  CHECK(pending->index == 0);
  CHECK(std::string(pending->message) == "`submitted_at` 5000 s is after the state's time `at` 10 s");
  gov_load_failures_free(failures);

  // A document without `at` is as of its latest entry, so nothing in it is from the future.
  CEngine lenient("policies/examples/workshop-g5.gov");
  const std::string without_at = R"({"admitted": [{"task": {"id": "a1", "team": "team-a", "gpus": 1}, "submitted_at": 5,
    "admitted_at": 90}], "pending": [{"task": {"id": "b1", "team": "team-b", "gpus": 1}, "submitted_at": 120}]})";
  REQUIRE(gov_engine_load_state_json(lenient.handle, without_at.data(), without_at.size(), &failures) == GOV_OK);
  CHECK(gov_load_failures_count(failures) == 0);
  gov_load_failures_free(failures);
  char* json = nullptr;
  REQUIRE(gov_engine_export_state_json(lenient.handle, &json) == GOV_OK);
  CHECK(std::string(json).rfind(R"({"at":120,)", 0) == 0);
  gov_string_free(json);
}

TEST_CASE("restart: a document that is not a state is refused as a whole, naming where", "[embed][restart][c]") {
  struct Bad {
    std::string json;
    std::string message_part;
  };
  const std::vector<Bad> cases = {
      {"{\"admitted\": [", "the state is not JSON: line 1, column 15"},
      {"[]", "the state must be an object"},
      {"{\"admited\": []}", "unknown key \"admited\"; did you mean \"admitted\"?"},
      {"{\"pending\": {}}", "field \"pending\": expected an array of entries"},
      {"{\"at\": -1}", "field \"at\": expected a non-negative number of seconds"},
      {"", "the state is not JSON"},
  };
  for (const Bad& bad : cases) {
    INFO(bad.json);
    CEngine engine("policies/examples/workshop-g5.gov");
    gov_load_failures* failures = reinterpret_cast<gov_load_failures*>(0x1);
    CHECK(gov_engine_load_state_json(engine.handle, bad.json.data(), bad.json.size(), &failures) ==
          GOV_ERROR_INVALID_ARGUMENT);
    CHECK(failures == nullptr);
    INFO(gov_last_error());
    CHECK(std::string(gov_last_error()).find(bad.message_part) != std::string::npos);
    char* json = nullptr;
    REQUIRE(gov_engine_export_state_json(engine.handle, &json) == GOV_OK);
    CHECK(std::string(json) == R"({"at":0,"admitted":[],"pending":[]})");  // nothing loaded
    gov_string_free(json);
  }
  // NULL text with a length, NULL engine.
  CHECK(gov_engine_load_state_json(nullptr, "{}", 2, nullptr) == GOV_ERROR_INVALID_ARGUMENT);
  CEngine engine("policies/examples/workshop-g5.gov");
  CHECK(gov_engine_load_state_json(engine.handle, nullptr, 3, nullptr) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(gov_engine_load_state_json(engine.handle, "{}", 2, nullptr) == GOV_OK);  // out may be NULL
  CHECK(gov_engine_export_state_json(engine.handle, nullptr) == GOV_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("restart: a state with more tasks than max_tasks is refused as a whole", "[embed][restart][c]") {
  gov_open_options options;
  gov_open_options_init(&options);
  options.max_tasks = 2;
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(repo_path("policies/examples/workshop-g5.gov").c_str(), &options, &engine) == GOV_OK);
  const std::string state = R"({"admitted": [{"task": {"id": "a1", "team": "team-a", "gpus": 1}}],
    "pending": [{"task": {"id": "a2", "team": "team-a", "gpus": 1}}, {"task": {"id": "a3", "team": "team-a", "gpus": 1}}]})";
  CHECK(gov_engine_load_state_json(engine, state.data(), state.size(), nullptr) == GOV_ERROR_LIMIT);
  CHECK(std::string(gov_last_error()) == "the state holds 3 tasks and `max_tasks` is 2: nothing loaded");
  char* json = nullptr;
  REQUIRE(gov_engine_export_state_json(engine, &json) == GOV_OK);
  CHECK(std::string(json) == R"({"at":0,"admitted":[],"pending":[]})");
  gov_string_free(json);
  const std::string two = R"({"pending": [{"task": {"id": "a2", "team": "team-a", "gpus": 1}},
    {"task": {"id": "a3", "team": "team-a", "gpus": 1}}]})";
  CHECK(gov_engine_load_state_json(engine, two.data(), two.size(), nullptr) == GOV_OK);  // at the bound: loads
  gov_engine_close(engine);
}
