// The C ABI (gov/gov.h): handles, decisions as structs and as JSON, thread-local errors, NULL
// arguments, snapshots, explanations, traces, the step callback and reloads.
#include <catch2/catch.hpp>

#include <gov/gov.h>

#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::read_text;
using gov::test::repo_path;

const std::string kWorkshop = "policies/examples/workshop-g5.gov";

/// An engine on the workshop policy, closed at the end of the test.
struct Engine {
  Engine() {
    REQUIRE(gov_engine_open_file(repo_path(kWorkshop).c_str(), nullptr, &handle) == GOV_OK);
  }
  ~Engine() { gov_engine_close(handle); }
  gov_engine* handle = nullptr;
};

constexpr auto gpu_task = &gov::test::g5_gpu_c_task;

}  // namespace

TEST_CASE("C: the walkthrough as structs and as the JSON stream", "[embed][c]") {
  Engine engine;
  gov_task a1 = gpu_task("a1", "team-a", 3);
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_submit(engine.handle, 0, &a1, &step) == GOV_OK);
  REQUIRE(gov_decisions_count(step) == 1);
  const gov_decision* d = gov_decisions_get(step, 0);
  CHECK(std::string(d->task) == "a1");
  CHECK(d->outcome == GOV_ADMITTED);
  CHECK(std::string(d->flavor) == "ml.g5.8xlarge");
  CHECK(d->usage.present == (1u << GOV_GPU));
  CHECK(d->usage.value[GOV_GPU] == 3);
  CHECK(d->borrowed.value[GOV_GPU] == 1);
  CHECK(d->reason == GOV_REASON_NONE);
  CHECK(d->kind == GOV_PREEMPTION_NONE);
  CHECK(d->version == 1);
  CHECK(d->sequence == 1);
  CHECK(gov_decisions_sequence(step) == 1);
  CHECK(gov_decisions_get(step, 1) == nullptr);
  std::string stream = gov_decisions_json(step);
  gov_decisions_free(step);

  gov_task b1;
  gov_task_init(&b1);
  b1.id = "b1";
  b1.team = "team-b";
  b1.instance_type = "ml.g5.8xlarge";
  b1.instances = 2;
  REQUIRE(gov_engine_submit(engine.handle, 5000, &b1, &step) == GOV_OK);
  REQUIRE(gov_decisions_count(step) == 5);
  const gov_decision* wait = gov_decisions_get(step, 0);
  CHECK(wait->outcome == GOV_PENDING);
  CHECK(wait->reason == GOV_WAITING_FOR_PREEMPTION);
  REQUIRE(wait->victim_count == 1);
  CHECK(std::string(wait->victims[0]) == "a1");
  const gov_decision* preempted = gov_decisions_get(step, 1);
  CHECK(preempted->outcome == GOV_PREEMPTED);
  CHECK(preempted->kind == GOV_PREEMPTION_RECLAIM);
  CHECK(std::string(preempted->by) == "b1");
  const gov_decision* a1_now = gov_decisions_find(step, "a1");
  REQUIRE(a1_now != nullptr);
  CHECK(a1_now->reason == GOV_WAITING_FOR_QUOTA);
  CHECK(a1_now->short_of.present == (1u << GOV_GPU));
  CHECK(a1_now->short_of.value[GOV_GPU] == 1);
  CHECK(std::string(gov_decision_json(step, 1)).find("\"outcome\":\"preempted\"") != std::string::npos);
  CHECK(gov_decision_json(step, 5) == nullptr);
  stream += gov_decisions_json(step);
  gov_decisions_free(step);

  REQUIRE(gov_engine_finish(engine.handle, 90000, "b1", &step) == GOV_OK);
  stream += gov_decisions_json(step);
  gov_decisions_free(step);
  REQUIRE(gov_engine_cancel(engine.handle, 95000, "a1", nullptr) == GOV_OK);  // out may be NULL
  REQUIRE(gov_engine_decision(engine.handle, "a1", &step) == GOV_OK);
  stream += gov_decisions_json(step);
  gov_decisions_free(step);
  CHECK(stream == read_text(repo_path("tests/walkthrough/expected.jsonl")));
}

TEST_CASE("C: errors are codes with a thread-local message, NULLs are refused", "[embed][c]") {
  gov_engine* engine = reinterpret_cast<gov_engine*>(0x1);
  CHECK(gov_engine_open("/nonexistent/dir/policies.db", nullptr, &engine) == GOV_ERROR_NOT_FOUND);
  CHECK(engine == nullptr);  // cleared on error
  const std::string message = gov_last_error();
  CHECK(message.find("/nonexistent/dir/policies.db") != std::string::npos);

  // Another thread's failure does not change this thread's message.
  std::thread([] {
    CHECK(std::string(gov_last_error()).empty());
    gov_engine* other = nullptr;
    CHECK(gov_engine_open_file("/nonexistent.gov", nullptr, &other) == GOV_ERROR_IO);
    CHECK(std::string(gov_last_error()).find("nonexistent.gov") != std::string::npos);
  }).join();
  CHECK(gov_last_error() == message);

  CHECK(gov_engine_open(nullptr, nullptr, &engine) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(gov_engine_open("x.db", nullptr, nullptr) == GOV_ERROR_INVALID_ARGUMENT);
  gov_decisions* step = nullptr;
  CHECK(gov_engine_submit(nullptr, 0, nullptr, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(gov_engine_tick(nullptr, 0, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(gov_last_error()) == "the engine is NULL");
  CHECK(gov_engine_version(nullptr) == -1);
  CHECK(gov_decisions_count(nullptr) == 0);
  gov_engine_close(nullptr);
  gov_decisions_free(nullptr);
  gov_string_free(nullptr);
  CHECK(std::string(gov_status_name(GOV_ERROR_POLICY)) == "policy");

  Engine e;
  gov_task no_team = gpu_task("x", nullptr, 1);
  CHECK(gov_engine_submit(e.handle, 0, &no_team, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(gov_last_error()).find("team") != std::string::npos);
  gov_task bad_labels = gpu_task("x", "team-a", 1);
  bad_labels.label_count = 2;
  CHECK(gov_engine_submit(e.handle, 0, &bad_labels, &step) == GOV_ERROR_INVALID_ARGUMENT);
  gov_event event{};
  event.kind = static_cast<gov_event_kind>(7);
  CHECK(gov_engine_step(e.handle, 0, &event, 1, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(gov_engine_decision(e.handle, "nobody", &step) == GOV_ERROR_NOT_FOUND);
  char* json = nullptr;
  CHECK(gov_engine_explain_json(e.handle, "nobody", &json) == GOV_ERROR_NOT_FOUND);
  CHECK(gov_engine_reload_version(e.handle, 3, &step) == GOV_ERROR_INVALID_ARGUMENT);  // a file has no versions
  // Past GOV_TIME_FOREVER a finish time could wrap: a task was admitted and finished at once (a
  // hostile-input trial's finding). GOV_TIME_FOREVER itself is the last time taken.
  gov_task late = gpu_task("late", "team-a", 1);
  late.duration_ms = INT64_MAX;
  CHECK(gov_engine_submit(e.handle, INT64_MAX, &late, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(gov_last_error()).find("is after the last one an engine takes") != std::string::npos);
  CHECK(gov_engine_tick(e.handle, GOV_TIME_FOREVER + 1, &step) == GOV_ERROR_INVALID_ARGUMENT);

  // An unknown team is a decision, not a call error.
  gov_task unknown = gpu_task("x", "team-z", 1);
  REQUIRE(gov_engine_submit(e.handle, 0, &unknown, &step) == GOV_OK);
  CHECK(gov_decisions_get(step, 0)->outcome == GOV_INVALID);
  gov_decisions_free(step);

  // An empty id is refused as the trace reader refuses it (issue 25): the task is invalid, never
  // admitted, since nothing could finish or cancel it.
  gov_task nameless = gpu_task("", "team-a", 1);
  REQUIRE(gov_engine_submit(e.handle, 0, &nameless, &step) == GOV_OK);
  REQUIRE(gov_decisions_count(step) == 1);
  CHECK(gov_decisions_get(step, 0)->outcome == GOV_INVALID);
  CHECK(std::string(gov_decisions_get(step, 0)->message) == "the task has no id (an empty string)");
  gov_decisions_free(step);

  // An id or team longer than 64 KiB is refused, as a label value is: decisions print both.
  const std::string huge(70000, 'x');
  gov_task long_id = gpu_task(huge.c_str(), "team-a", 1);
  CHECK(gov_engine_submit(e.handle, 0, &long_id, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(gov_last_error()).find("the task's id is longer than 65536 bytes") != std::string::npos);
  gov_task long_team = gpu_task("y", huge.c_str(), 1);
  CHECK(gov_engine_submit(e.handle, 0, &long_team, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(gov_last_error()).find("the task's team is longer than 65536 bytes") != std::string::npos);

  // Ids that are not UTF-8 are invalid too: every stream and exported state writes them as U+FFFD,
  // where two of them (here \xff and \xfe) would become one task after a restart.
  for (const char* id : {"\xff", "\xfe"}) {
    gov_task bytes = gpu_task(id, "team-a", 1);
    REQUIRE(gov_engine_submit(e.handle, 0, &bytes, &step) == GOV_OK);
    REQUIRE(gov_decisions_count(step) == 1);
    CHECK(gov_decisions_get(step, 0)->outcome == GOV_INVALID);
    CHECK(std::string(gov_decisions_get(step, 0)->message) == "the task id is not valid UTF-8");
    gov_decisions_free(step);
  }

  gov_engine* broken = nullptr;
  gov::test::ScratchDir dir("c-errors");
  gov::test::write_text(dir / "broken.gov", "team t { quota x { memory = 128 GB } }\n");
  CHECK(gov_engine_open_file((dir / "broken.gov").c_str(), nullptr, &broken) == GOV_ERROR_POLICY);
  CHECK(std::string(gov_last_error()).find("error[") != std::string::npos);
}

TEST_CASE("C: labels, pods, priorities and durations reach the engine", "[embed][c]") {
  gov::test::ScratchDir dir("c-rules");
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(repo_path("policies/examples/rules.gov").c_str(), nullptr, &engine) == GOV_OK);
  gov_task task;
  gov_task_init(&task);
  task.id = "r1";
  task.team = "research";
  task.instance_type = "ml.c5.2xlarge";
  task.priority = "training";
  task.pods = 2;
  task.amounts[GOV_VCPU] = 500;
  task.amounts[GOV_MEMORY] = 2048;
  task.duration_ms = 1500;
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_submit(engine, 0, &task, &step) == GOV_OK);
  CHECK(gov_decisions_get(step, 0)->outcome == GOV_REJECTED);  // no "project" label
  CHECK(std::string(gov_decisions_get(step, 0)->rule) == "require-project");
  gov_decisions_free(step);

  const gov_label labels[] = {{"project", "p1"}, {"cost-center", "cc-7"}};
  task.id = "r2";
  task.labels = labels;
  task.label_count = 2;
  REQUIRE(gov_engine_submit(engine, 0, &task, &step) == GOV_OK);
  const gov_decision* admitted = gov_decisions_get(step, 0);
  REQUIRE(admitted->outcome == GOV_ADMITTED);
  CHECK(admitted->usage.value[GOV_VCPU] == 1000);  // 2 pods × 500 millicores
  CHECK(admitted->usage.value[GOV_MEMORY] == 4096);
  gov_decisions_free(step);
  REQUIRE(gov_engine_tick(engine, 10'000, &step) == GOV_OK);
  REQUIRE(gov_decisions_count(step) == 1);
  CHECK(gov_decisions_get(step, 0)->outcome == GOV_FINISHED);
  CHECK(gov_decisions_get(step, 0)->at_ms == 1500);
  gov_decisions_free(step);
  gov_engine_close(engine);
}

TEST_CASE("C: snapshot, explanation and trace", "[embed][c]") {
  Engine engine;
  gov_task a1 = gpu_task("a1", "team-a", 3);
  gov_task a4 = gpu_task("a4", "team-a", 4);
  REQUIRE(gov_engine_submit(engine.handle, 0, &a1, nullptr) == GOV_OK);
  REQUIRE(gov_engine_submit(engine.handle, 1, &a4, nullptr) == GOV_OK);

  gov_snapshot* snapshot = nullptr;
  REQUIRE(gov_engine_snapshot(engine.handle, &snapshot) == GOV_OK);
  CHECK(gov_snapshot_version(snapshot) == 1);
  CHECK(gov_snapshot_sequence(snapshot) == 2);
  bool saw = false;
  for (size_t i = 0; i < gov_snapshot_usage_count(snapshot); ++i) {
    const gov_usage_row* row = gov_snapshot_usage(snapshot, i);
    if (std::string(row->team) != "team-a" || row->resource != GOV_GPU) continue;
    saw = true;
    CHECK(row->nominal == 2);
    CHECK(row->used == 3);
    CHECK(row->borrowed == 1);
    CHECK(row->borrowing_limit == 1);
  }
  CHECK(saw);
  CHECK(std::string(gov_snapshot_json(snapshot)).find("\"id\":\"a4\"") != std::string::npos);
  gov_snapshot_free(snapshot);

  char* json = nullptr;
  REQUIRE(gov_engine_explain_json(engine.handle, "a4", &json) == GOV_OK);
  CHECK(std::string(json).find("\"reason\":\"exceeds-max-quota\"") != std::string::npos);
  gov_string_free(json);

  const std::string text = read_text(repo_path("policies/examples/workshop-g5.trace.json"));
  gov_trace* trace = nullptr;
  REQUIRE(gov_trace_read(engine.handle, text.data(), text.size(), &trace) == GOV_OK);
  REQUIRE(gov_trace_count(trace) == 4);
  const gov_event* b1 = gov_trace_get(trace, 1);
  CHECK(b1->at_ms == 5000);
  CHECK(b1->kind == GOV_EVENT_SUBMIT);
  CHECK(std::string(b1->task.id) == "b1");
  CHECK(b1->task.instances == 2);
  CHECK(b1->task.amounts[GOV_GPU] == GOV_UNSET);
  CHECK(b1->task.priority == nullptr);
  CHECK(gov_trace_get(trace, 2)->kind == GOV_EVENT_FINISH);
  CHECK(std::string(gov_trace_get(trace, 2)->id) == "b1");
  CHECK(gov_trace_get(trace, 4) == nullptr);
  gov_trace_free(trace);
  const std::string bad = R"({"events":[{"at":0,"submit":{"id":"a","team":"team-a","gpu":1}}]})";
  CHECK(gov_trace_read(engine.handle, bad.data(), bad.size(), &trace) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(gov_last_error()).find("did you mean \"gpus\"") != std::string::npos);
}

TEST_CASE("C: the step callback, store engines and reloads", "[embed][c][store]") {
  gov::test::ScratchDir dir("c-store");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, repo_path(kWorkshop), "workshop-g5");
  struct Seen {
    std::vector<uint64_t> sequences;
    std::vector<std::string> lines;
  } seen;
  gov_open_options options;
  gov_open_options_init(&options);
  options.on_step = [](const gov_decisions* step, void* user) {
    auto* s = static_cast<Seen*>(user);
    s->sequences.push_back(gov_decisions_sequence(step));
    s->lines.push_back(gov_decisions_json(step));
  };
  options.on_step_user_data = &seen;
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open(db.c_str(), &options, &engine) == GOV_OK);
  CHECK(gov_engine_version(engine) == 1);
  gov_task a1 = gpu_task("a1", "team-a", 3);
  REQUIRE(gov_engine_submit(engine, 0, &a1, nullptr) == GOV_OK);
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_reload(engine, &step) == GOV_OK);  // nothing new
  CHECK(gov_decisions_sequence(step) == 0);
  CHECK(gov_decisions_count(step) == 0);
  gov_decisions_free(step);

  CHECK(gov::test::apply_policy_file(db, repo_path("tests/diff/workshop-g5-team-a-3.gov"), "workshop-g5") == 2);
  REQUIRE(gov_engine_reload(engine, &step) == GOV_OK);
  CHECK(gov_engine_version(engine) == 2);
  CHECK(gov_decisions_version(step) == 2);
  CHECK(gov_decisions_sequence(step) == 2);
  gov_decisions_free(step);
  REQUIRE(gov_engine_reload_version(engine, 1, nullptr) == GOV_OK);
  CHECK(gov_engine_version(engine) == 1);
  CHECK(seen.sequences == std::vector<uint64_t>{1, 2, 3});
  CHECK(seen.lines[0].find("\"task\":\"a1\",\"outcome\":\"admitted\"") != std::string::npos);
  // Pinning through the C ABI: a version, then back to following the store.
  REQUIRE(gov_engine_pin(engine, 2, &step) == GOV_OK);
  CHECK(gov_engine_version(engine) == 2);
  gov_decisions_free(step);
  CHECK(gov_engine_pin(engine, 99, &step) != GOV_OK);
  CHECK(gov_engine_version(engine) == 2);
  CHECK(gov_engine_unpin(engine) == GOV_OK);
  CHECK(gov_engine_unpin(nullptr) == GOV_ERROR_INVALID_ARGUMENT);
  gov_engine_close(engine);
}

// An SRE helper's finding: a C (or Go) controller saw only gov_policy_reload_failures_total go
// up; the watcher's thread cannot hand its error to gov_last_error, which is per thread.
TEST_CASE("C: the latest reload's failure can be asked for, the watcher's included", "[embed][c][reload]") {
  gov::test::ScratchDir dir("c-reload-error");
  const std::string path = gov::test::write_workshop_variant(dir, "policy.gov", 2);
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(path.c_str(), nullptr, &engine) == GOV_OK);
  const auto last = [&] {
    gov_status code = GOV_ERROR_INTERNAL;
    char* message = nullptr;
    REQUIRE(gov_engine_last_reload_error(engine, &code, &message) == GOV_OK);
    std::pair<gov_status, std::string> out{code, message};
    gov_string_free(message);
    return out;
  };
  CHECK(last() == std::pair<gov_status, std::string>{GOV_OK, ""});
  gov::test::write_text(path, "team broken {\n");
  CHECK(gov_engine_reload(engine, nullptr) == GOV_ERROR_POLICY);
  CHECK(last().first == GOV_ERROR_POLICY);
  CHECK(last().second == gov_last_error());
  gov::test::write_workshop_variant(dir, "policy.gov", 3);
  REQUIRE(gov_engine_reload(engine, nullptr) == GOV_OK);
  CHECK(last() == std::pair<gov_status, std::string>{GOV_OK, ""});
  // The watcher's failure, on its own thread.
  REQUIRE(gov_engine_watch(engine, 10) == GOV_OK);
  gov::test::write_text(path, "team broken {\n");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (last().first == GOV_OK && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(last().first == GOV_ERROR_POLICY);
  CHECK(last().second.find("team broken") != std::string::npos);
  gov_status code = GOV_OK;
  CHECK(gov_engine_last_reload_error(engine, &code, nullptr) == GOV_ERROR_INVALID_ARGUMENT);
  gov_engine_close(engine);
}

TEST_CASE("C: check answers without changing the engine", "[embed][c][check]") {
  Engine engine;
  gov_task a1 = gpu_task("a1", "team-a", 3);
  gov_admission admission;
  REQUIRE(gov_engine_check(engine.handle, &a1, &admission) == GOV_OK);
  CHECK(admission.verdict == GOV_VERDICT_ADMIT);
  CHECK(std::string(admission.flavor) == "ml.g5.8xlarge");
  CHECK(admission.borrows == 1);
  CHECK(std::string(admission.rule).empty());
  CHECK(admission.version == 1);
  gov_decisions* step = nullptr;
  CHECK(gov_engine_decision(engine.handle, "a1", &step) == GOV_ERROR_NOT_FOUND);
  gov_task unknown = gpu_task("x", "team-z", 1);
  REQUIRE(gov_engine_check(engine.handle, &unknown, &admission) == GOV_OK);
  CHECK(admission.verdict == GOV_VERDICT_INVALID);
  CHECK(std::string(admission.flavor).empty());
  // A failed check leaves `invalid`, never a zeroed admission (verdict 0 is ADMIT), and "" for
  // the strings, which are never NULL.
  admission = gov_admission{};
  admission.verdict = GOV_VERDICT_ADMIT;
  CHECK(gov_engine_check(engine.handle, nullptr, &admission) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(admission.verdict == GOV_VERDICT_INVALID);
  REQUIRE(admission.flavor != nullptr);
  REQUIRE(admission.rule != nullptr);
  CHECK(std::string(admission.flavor).empty());
  CHECK(gov_engine_check(engine.handle, &a1, nullptr) == GOV_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("C: a prepared task checks as its task does", "[embed][c][check]") {
  Engine engine;
  gov_task a1 = gpu_task("a1", "team-a", 3);
  gov_prepared_task* prepared = nullptr;
  REQUIRE(gov_engine_prepare(engine.handle, &a1, &prepared) == GOV_OK);
  gov_admission direct, fast;
  REQUIRE(gov_engine_check(engine.handle, &a1, &direct) == GOV_OK);
  REQUIRE(gov_engine_check_prepared(engine.handle, prepared, &fast) == GOV_OK);
  CHECK(fast.verdict == GOV_VERDICT_ADMIT);
  CHECK(fast.verdict == direct.verdict);
  CHECK(std::string(fast.flavor) == direct.flavor);
  CHECK(fast.borrows == direct.borrows);
  CHECK(gov_engine_check_prepared(engine.handle, nullptr, &fast) == GOV_ERROR_INVALID_ARGUMENT);
  gov_task no_id = gpu_task(nullptr, "team-a", 1);
  gov_prepared_task* none = reinterpret_cast<gov_prepared_task*>(0x1);
  CHECK(gov_engine_prepare(engine.handle, &no_id, &none) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(none == nullptr);
  gov_prepared_task_free(prepared);
  gov_prepared_task_free(nullptr);
}

TEST_CASE("C: a task's created_ms is its queue-order time among tasks submitted in one step", "[embed][c]") {
  // team-a holds 2 GPUs and may borrow 1: of two 2-GPU tasks submitted together, the one created
  // first is admitted (without created_ms, tasks of one instant and priority queue by id: `a`).
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(repo_path(kWorkshop).c_str(), nullptr, &engine) == GOV_OK);
  gov_event events[2];
  for (gov_event& e : events) {
    e = gov_event{};
    e.kind = GOV_EVENT_SUBMIT;
  }
  events[0].task = gov::test::g5_gpu_c_task("a", "team-a", 2);
  events[0].task.created_ms = 5000;
  events[1].task = gov::test::g5_gpu_c_task("b", "team-a", 2);
  events[1].task.created_ms = 1000;
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_step(engine, 10000, events, 2, &step) == GOV_OK);
  std::string admitted;
  for (size_t i = 0; i < gov_decisions_count(step); ++i) {
    const gov_decision* d = gov_decisions_get(step, i);
    if (d->outcome == GOV_ADMITTED) admitted += d->task;
  }
  CHECK(admitted == "b");
  gov_decisions_free(step);
  gov_engine_close(engine);
}

TEST_CASE("C: a task of several pod sets is admitted whole, each pod set named in the JSON", "[embed][c][podsets]") {
  // team-a holds 2 GPUs and may borrow 1: a master and a worker of 1 GPU each fit; with 2
  // workers' GPUs more (4 in all) nothing is admitted, and the message names pod set worker.
  Engine engine;
  gov_pod_set pod_sets[2];
  for (gov_pod_set& p : pod_sets) {
    gov_pod_set_init(&p);
    p.amounts[GOV_GPU] = 1;
  }
  pod_sets[0].name = "master";
  pod_sets[1].name = "worker";
  gov_task task;
  gov_task_init(&task);
  task.id = "job";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  task.pod_sets = pod_sets;
  task.pod_set_count = 2;
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_submit(engine.handle, 0, &task, &step) == GOV_OK);
  const gov_decision* admitted = gov_decisions_get(step, 0);
  REQUIRE(admitted->outcome == GOV_ADMITTED);
  CHECK(admitted->usage.value[GOV_GPU] == 2);
  const char* json = gov_decision_json(step, 0);
  REQUIRE(json != nullptr);
  CHECK(std::string(json).find(R"("pod_sets":[{"name":"master","flavor":"ml.g5.8xlarge","pods":1,"usage":{"gpu":1}},)"
                               R"({"name":"worker","flavor":"ml.g5.8xlarge","pods":1,"usage":{"gpu":1}}])") != std::string::npos);
  gov_decisions_free(step);

  task.id = "big";
  pod_sets[1].pods = 3;
  REQUIRE(gov_engine_submit(engine.handle, 1, &task, &step) == GOV_OK);
  const gov_decision* pending = gov_decisions_get(step, 0);
  REQUIRE(pending->outcome == GOV_PENDING);
  CHECK(std::string(pending->message).rfind("couldn't assign flavors to pod set worker: ", 0) == 0);
  gov_decisions_free(step);

  // A NULL pod set name is refused as an argument error; nine pod sets are an invalid decision.
  pod_sets[0].name = nullptr;
  CHECK(gov_engine_submit(engine.handle, 2, &task, &step) == GOV_ERROR_INVALID_ARGUMENT);
  pod_sets[0].name = "master";
  gov_pod_set nine[9];
  std::vector<std::string> names;
  for (int i = 0; i < 9; ++i) names.push_back("p" + std::to_string(i));
  for (int i = 0; i < 9; ++i) {
    gov_pod_set_init(&nine[i]);
    nine[i].name = names[static_cast<size_t>(i)].c_str();
    nine[i].amounts[GOV_GPU] = 0;
  }
  task.id = "nine";
  task.pod_sets = nine;
  task.pod_set_count = 9;
  REQUIRE(gov_engine_submit(engine.handle, 3, &task, &step) == GOV_OK);
  CHECK(gov_decisions_get(step, 0)->outcome == GOV_INVALID);
  CHECK(std::string(gov_decisions_get(step, 0)->message) == "a task has at most 8 pod sets (Kueue's limit), not 9");
  gov_decisions_free(step);
}

TEST_CASE("C: a trace's pod sets are in the task views", "[embed][c][podsets]") {
  Engine engine;
  const std::string trace = R"({"events": [{"at": 0, "submit": {"id": "j", "team": "team-a", "instance_type": "ml.g5.8xlarge",
    "pod_sets": [{"name": "master", "gpus": 1}, {"name": "worker", "pods": 2, "per_pod": {"gpus": 1}}]}}]})";
  gov_trace* read = nullptr;
  REQUIRE(gov_trace_read(engine.handle, trace.data(), trace.size(), &read) == GOV_OK);
  REQUIRE(gov_trace_count(read) == 1);
  const gov_task& task = gov_trace_get(read, 0)->task;
  REQUIRE(task.pod_set_count == 2);
  CHECK(std::string(task.pod_sets[0].name) == "master");
  CHECK(task.pod_sets[0].amounts[GOV_GPU] == 1);
  CHECK(task.pod_sets[0].pods == 1);
  CHECK(std::string(task.pod_sets[1].name) == "worker");
  CHECK(task.pod_sets[1].pods == 2);
  CHECK(task.pod_sets[1].amounts[GOV_GPU] == 1);
  // The view submits as the trace's task: worker 2 GPUs + master 1 = team-a's maximum of 3.
  gov_decisions* step = nullptr;
  REQUIRE(gov_engine_submit(engine.handle, 0, &task, &step) == GOV_OK);
  CHECK(gov_decisions_get(step, 0)->outcome == GOV_ADMITTED);
  gov_decisions_free(step);
  gov_trace_free(read);
}
