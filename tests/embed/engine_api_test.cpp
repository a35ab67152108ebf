// The C++ embedding API on one thread: opening (file and store, cached native code, errors),
// submit / finish / cancel / step / tick against the HyperPod walkthrough, the latest decision
// per task, explanations, snapshots, traces and the JSON forms.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include <fstream>
#include <limits>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::read_text;
using gov::test::repo_path;

const std::string kWorkshop = "policies/examples/workshop-g5.gov";
const std::string kWalkthroughTrace = "policies/examples/workshop-g5.trace.json";

constexpr auto task = &gov::test::g5_gpu_task;

gov::Task instances(const std::string& id, const std::string& team, int64_t count) {
  gov::Task t;
  t.id = id;
  t.team = team;
  t.instance_type = "ml.g5.8xlarge";
  t.instances = count;
  return t;
}

/// Replays the walkthrough trace through `engine`, one step per instant, as JSON lines.
std::string replay(gov::Engine& engine, const std::string& trace_path) {
  const std::vector<gov::TimedEvent> trace = gov::read_trace(engine, read_text(repo_path(trace_path)));
  std::string out;
  std::vector<gov::Event> batch;
  for (size_t i = 0; i < trace.size();) {
    const gov::Time at = trace[i].at;
    batch.clear();
    for (; i < trace.size() && trace[i].at == at; ++i) batch.push_back(trace[i].event);
    out += gov::to_json(engine.step(at, batch));
  }
  return out + gov::to_json(engine.tick(gov::kForever));
}

}  // namespace

TEST_CASE("an engine compiled from a file replays the walkthrough as gov simulate does", "[embed]") {
  for (auto back_end : {gov::Options::BackEnd::jit, gov::Options::BackEnd::interpreter}) {
    gov::Options options;
    options.back_end = back_end;
    gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
    CHECK(engine.policy().back_end == (back_end == gov::Options::BackEnd::jit ? "jit" : "interp"));
    CHECK(engine.policy().name == "workshop-g5");
    CHECK(engine.version() == 1);
    CHECK(replay(engine, kWalkthroughTrace) == read_text(repo_path("tests/walkthrough/expected.jsonl")));
  }
}

TEST_CASE("submit returns the task's decision and the whole step", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  gov::Step first;
  const gov::Decision a1 = engine.submit(task("a1", "team-a", 3), 0, &first);
  CHECK(a1.outcome == gov::Outcome::admitted);
  CHECK(a1.flavor == "ml.g5.8xlarge");
  CHECK(a1.usage == gov::ResourceAmounts{{gov::Resource::gpu, 3}});
  CHECK(a1.borrowed == gov::ResourceAmounts{{gov::Resource::gpu, 1}});
  CHECK(a1.version == 1);
  CHECK(a1.sequence == 1);
  CHECK(first.sequence == 1);
  REQUIRE(first.decisions.size() == 1);
  CHECK(first.decisions[0] == a1);

  // b1 reclaims: the step holds b1's wait, a1's preemption, b1's admission, a1's waits.
  gov::Step second;
  const gov::Decision b1 = engine.submit(instances("b1", "team-b", 2), 5000, &second);
  CHECK(b1.outcome == gov::Outcome::admitted);  // b1's last decision of the step
  CHECK(b1.sequence == 2);
  REQUIRE(second.decisions.size() == 5);
  CHECK(second.decisions[0].reason == gov::PendingReason::waiting_for_preemption);
  CHECK(second.decisions[0].victims == std::vector<std::string>{"a1"});
  CHECK(second.decisions[1].outcome == gov::Outcome::preempted);
  CHECK(second.decisions[1].kind == gov::PreemptionKind::reclaim);
  CHECK(second.decisions[1].by == "b1");
  const gov::Decision* a1_last = second.find("a1");
  REQUIRE(a1_last != nullptr);
  CHECK(a1_last->short_of == gov::ResourceAmounts{{gov::Resource::gpu, 1}});

  // finish b1: a1 is admitted again in the same step.
  gov::Step third;
  const std::optional<gov::Decision> finished = engine.finish("b1", 90000, &third);
  REQUIRE(finished);
  CHECK(finished->outcome == gov::Outcome::finished);
  REQUIRE(third.find("a1") != nullptr);
  CHECK(third.find("a1")->outcome == gov::Outcome::admitted);

  CHECK_FALSE(engine.finish("b1", 91000));         // no longer admitted: nothing happens
  CHECK_FALSE(engine.finish("nobody", 91000));     // unknown
  const std::optional<gov::Decision> cancelled = engine.cancel("a1", 95000);
  REQUIRE(cancelled);
  CHECK(cancelled->outcome == gov::Outcome::cancelled);
  CHECK(engine.now() == 95000);
}

TEST_CASE("bad tasks are decisions, not errors", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  const gov::Decision unknown = engine.submit(task("x", "team-z", 1), 0);
  CHECK(unknown.outcome == gov::Outcome::invalid);
  CHECK(unknown.message.find("team-z") != std::string::npos);

  CHECK(engine.submit(task("a1", "team-a", 1), 0).outcome == gov::Outcome::admitted);
  const gov::Decision duplicate = engine.submit(task("a1", "team-a", 1), 1);
  CHECK(duplicate.outcome == gov::Outcome::invalid);
  // The live task keeps its record: the duplicate's `invalid` is not a2's latest decision.
  REQUIRE(engine.decision("a1"));
  CHECK(engine.decision("a1")->outcome == gov::Outcome::admitted);
  CHECK(engine.decision("x")->outcome == gov::Outcome::invalid);
  CHECK_FALSE(engine.decision("never"));
}

TEST_CASE("decision, explain and snapshot describe the state between steps", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  engine.submit(task("a1", "team-a", 3), 0);
  engine.submit(instances("b1", "team-b", 2), 5000);
  const std::optional<gov::Decision> a1 = engine.decision("a1");
  REQUIRE(a1);
  CHECK(a1->outcome == gov::Outcome::pending);
  CHECK(a1->reason == gov::PendingReason::waiting_for_quota);
  CHECK(a1->sequence == 2);

  const std::optional<gov::Explanation> why = engine.explain("a1");
  REQUIRE(why);
  CHECK(why->state == gov::TaskState::pending);
  CHECK(why->version == 1);
  REQUIRE_FALSE(why->flavors.empty());
  CHECK(why->flavors[0].flavor == "ml.g5.8xlarge");
  CHECK(why->preempted_by == "b1");
  CHECK_FALSE(engine.explain("nobody"));
  const std::string why_json = gov::to_json(*why);
  CHECK(why_json.find("\"task\":\"a1\"") != std::string::npos);
  CHECK(why_json.find("\"preempted_by\":\"b1\"") != std::string::npos);

  const gov::Snapshot snapshot = engine.snapshot();
  CHECK(snapshot.version == 1);
  CHECK(snapshot.sequence == 2);
  CHECK(snapshot.at == 5000);
  REQUIRE(snapshot.tasks.size() == 2);
  CHECK(snapshot.tasks[0].id == "a1");
  CHECK(snapshot.tasks[0].state == gov::TaskState::pending);
  CHECK(snapshot.tasks[1].id == "b1");
  CHECK(snapshot.tasks[1].state == gov::TaskState::admitted);
  CHECK(snapshot.tasks[1].admitted_at == 5000);
  bool saw_b_gpu = false;
  for (const gov::UsageRow& row : snapshot.usage) {
    if (row.team != "team-b" || row.resource != gov::Resource::gpu) continue;
    saw_b_gpu = true;
    CHECK(row.flavor == "ml.g5.8xlarge");
    CHECK(row.nominal == 2);
    CHECK(row.used == 2);
    CHECK(row.borrowed == 0);
  }
  CHECK(saw_b_gpu);
  const std::string json = gov::to_json(snapshot);
  CHECK(json.find("\"sequence\":2") != std::string::npos);
  CHECK(json.find("{\"team\":\"team-b\",\"flavor\":\"ml.g5.8xlarge\",\"resource\":\"gpu\",\"nominal\":2") !=
        std::string::npos);
}

TEST_CASE("tick runs duration-based finishes", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  gov::Task t = task("a1", "team-a", 1);
  t.duration = 600;
  engine.submit(t, 0);
  CHECK(engine.tick(599).decisions.empty());
  const gov::Step step = engine.tick(10'000);
  REQUIRE(step.decisions.size() == 1);
  CHECK(step.decisions[0].outcome == gov::Outcome::finished);
  CHECK(step.decisions[0].at == 600);  // stamped with its own instant
}

TEST_CASE("next_finish gives each due instant and draining by it decides as tick(kForever)", "[embed]") {
  // Two engines with the same tasks: one drains instant by instant, the other at once.
  auto load = [](gov::Engine& engine) {
    std::vector<gov::Event> events;
    int64_t duration = 300;
    for (const char* id : {"a1", "a2", "a3", "a4"}) {
      gov::Task t = task(id, "team-a", 1);
      t.duration = duration;
      duration += 150;
      events.push_back(gov::Event::submit(t));
    }
    for (const char* id : {"b1", "b2", "b3"}) {
      gov::Task t = task(id, "team-b", 1);
      t.duration = 400;  // b1 and b2 finish in the same instant
      events.push_back(gov::Event::submit(t));
    }
    engine.step(0, events);
    engine.cancel("a1", 10);  // admitted, then cancelled: its timer finishes nothing
  };
  gov::Engine stepped = gov::Engine::compile_file(repo_path(kWorkshop));
  gov::Engine at_once = gov::Engine::compile_file(repo_path(kWorkshop));
  load(stepped);
  load(at_once);
  std::string drained;
  size_t instants = 0;
  gov::Time last = 0;
  while (const std::optional<gov::Time> due = stepped.next_finish()) {
    const gov::Step step = stepped.tick(*due);
    REQUIRE(*due > last);
    last = *due;
    ++instants;
    // The instant finishes something: a1's stale timer at 300 is never given.
    REQUIRE_FALSE(step.decisions.empty());
    CHECK(step.decisions.front().outcome == gov::Outcome::finished);
    CHECK(step.decisions.front().at == *due);
    CHECK(*due != 300);
    for (const gov::Decision& d : step.decisions) drained += gov::to_json(d) + "\n";
  }
  for (const gov::Decision& d : stepped.tick(gov::kForever).decisions) drained += gov::to_json(d) + "\n";
  std::string whole;
  for (const gov::Decision& d : at_once.tick(gov::kForever).decisions) whole += gov::to_json(d) + "\n";
  CHECK(instants >= 4);
  CHECK(drained == whole);
  CHECK_FALSE(stepped.next_finish());
}

TEST_CASE("an engine opened from a store loads the active version's cached native code", "[embed][store]") {
  gov::test::ScratchDir dir("embed-store");
  const std::string db = dir / "policies.db";
  // Cached native code runs only when it is signed by the key the engine verifies with.
  const gov::signing::KeyPair keys = gov::test::write_test_key_pair(dir / "signing");
  CHECK(gov::test::apply_policy_file(db, repo_path(kWorkshop), "workshop-g5", &keys.secret) == 1);
  gov::Options options;
  options.verify_key_path = dir / "signing.pub";
  gov::Engine engine = gov::Engine::open_store(db, options);
  const gov::PolicyInfo info = engine.policy();
  CHECK(info.name == "workshop-g5");
  CHECK(info.version == 1);
  CHECK(info.back_end == "jit");
  CHECK(info.cached_code);
  CHECK(info.source == db);
  CHECK(info.content_sha256.size() == 64);
  CHECK(replay(engine, kWalkthroughTrace) == read_text(repo_path("tests/walkthrough/expected.jsonl")));
}

TEST_CASE("opening fails with a code and a clear message", "[embed]") {
  gov::test::ScratchDir dir("embed-errors");
  auto code_of = [](auto&& open) {
    try {
      open();
    } catch (const gov::Error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).size() > 0);
      return e.code();
    }
    FAIL("no error");
    return gov::ErrorCode::internal;
  };
  CHECK(code_of([&] { gov::Engine::open_store(dir / "missing.db"); }) == gov::ErrorCode::not_found);
  CHECK(code_of([&] { gov::Engine::compile_file(dir / "missing.gov"); }) == gov::ErrorCode::io);

  gov::test::write_text(dir / "broken.gov", "team t { quota x { memory = 128 GB } }\n");
  try {
    gov::Engine::compile_file(dir / "broken.gov");
    FAIL("a policy with errors compiled");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::policy);
    CHECK(std::string(e.what()).find("error[") != std::string::npos);  // the rendered diagnostics
  }

  gov::test::write_text(dir / "garbage.db", std::string(4096, 'x'));
  CHECK(code_of([&] { gov::Engine::open_store(dir / "garbage.db"); }) == gov::ErrorCode::store);

  // A store with two policies needs a name; an unknown name is not found.
  const std::string db = dir / "two.db";
  gov::test::apply_policy_file(db, repo_path(kWorkshop), "one");
  gov::test::apply_policy_file(db, repo_path(kWorkshop), "two");
  CHECK(code_of([&] { gov::Engine::open_store(db); }) == gov::ErrorCode::not_found);
  CHECK(code_of([&] {
          gov::Options options;
          options.policy = "three";
          gov::Engine::open_store(db, options);
        }) == gov::ErrorCode::not_found);
  gov::Options options;
  options.policy = "two";
  CHECK(gov::Engine::open_store(db, options).policy().name == "two");
}

TEST_CASE("read_trace checks a trace against the engine's policy", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  const auto events = gov::read_trace(engine, read_text(repo_path(kWalkthroughTrace)));
  REQUIRE(events.size() == 4);
  CHECK(events[1].at == 5000);
  CHECK(events[1].event.kind == gov::Event::Kind::submit);
  CHECK(events[1].event.task.instances == 2);
  CHECK(events[2].event.kind == gov::Event::Kind::finish);
  CHECK(events[2].event.id == "b1");
  try {
    gov::read_trace(engine, R"({"events":[{"at":0,"submit":{"id":"a","team":"team-z","gpus":1}}]})");
    FAIL("a trace naming an unknown team was read");
  } catch (const gov::Error& e) {
    CHECK(e.code() == gov::ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("unknown team") != std::string::npos);
  }
}

TEST_CASE("ended tasks are remembered up to a bound, live ones always", "[embed]") {
  gov::Options options;
  options.remembered_ended_tasks = 2;
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
  engine.submit(task("live", "team-a", 1), 0);
  for (int i = 0; i < 5; ++i) {
    const std::string id = "t" + std::to_string(i);
    engine.submit(task(id, "team-b", 1), i);
    engine.finish(id, i);
  }
  CHECK_FALSE(engine.decision("t0"));
  CHECK_FALSE(engine.decision("t2"));
  REQUIRE(engine.decision("t3"));
  CHECK(engine.decision("t3")->outcome == gov::Outcome::finished);
  REQUIRE(engine.decision("t4"));
  REQUIRE(engine.decision("live"));
  CHECK(engine.decision("live")->outcome == gov::Outcome::admitted);
}

TEST_CASE("on_step sees every step in order, and a throwing listener does not break the engine", "[embed]") {
  std::vector<uint64_t> sequences;
  gov::Options options;
  options.on_step = [&](const gov::Step& step) {
    sequences.push_back(step.sequence);
    throw std::runtime_error("listener failure");
  };
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop), options);
  engine.submit(task("a1", "team-a", 1), 0);
  engine.tick(10);
  engine.finish("a1", 20);
  CHECK(sequences == std::vector<uint64_t>{1, 2, 3});
  CHECK(engine.decision("a1")->outcome == gov::Outcome::finished);
}

TEST_CASE("a moved engine keeps working", "[embed]") {
  gov::Engine first = gov::Engine::compile_file(repo_path(kWorkshop));
  first.submit(task("a1", "team-a", 1), 0);
  gov::Engine second = std::move(first);
  CHECK(second.decision("a1")->outcome == gov::Outcome::admitted);
  CHECK(second.submit(task("a2", "team-a", 1), 1).outcome == gov::Outcome::admitted);
}

TEST_CASE("check answers the hot-path question without changing the engine", "[embed][check]") {
  gov::test::ScratchDir dir("embed-check");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, repo_path(kWorkshop), "p");
  gov::Engine engine = gov::Engine::open_store(db);
  const gov::Admission fits = engine.check(task("a1", "team-a", 3));
  CHECK(fits.verdict == gov::Admission::Verdict::admit);
  CHECK(fits.flavor == "ml.g5.8xlarge");
  CHECK(fits.borrows);
  CHECK(fits.version == 1);
  CHECK(fits.sequence == 0);
  CHECK_FALSE(engine.decision("a1"));  // nothing was submitted
  CHECK(engine.snapshot().tasks.empty());

  CHECK(engine.check(task("x", "team-z", 1)).verdict == gov::Admission::Verdict::invalid);
  CHECK(engine.check(task("a4", "team-a", 4)).verdict == gov::Admission::Verdict::pending);  // over the maximum
  engine.submit(task("a1", "team-a", 3), 0);
  const gov::Admission b1 = engine.check(instances("b1", "team-b", 2));
  CHECK(b1.verdict == gov::Admission::Verdict::pending);  // only by reclaiming a1's borrowed GPU
  CHECK(b1.sequence == 1);
  CHECK(engine.submit(instances("b1", "team-b", 2), 1).outcome == gov::Outcome::admitted);  // step() preempts

  // Names stay valid after the version they came from is gone.
  const std::string_view flavor = engine.check(task("b2", "team-b", 1)).flavor;
  gov::test::apply_policy_file(db, repo_path("tests/diff/workshop-g5-team-a-3.gov"), "p");
  engine.reload();
  CHECK(flavor == "ml.g5.8xlarge");
  CHECK(engine.check(task("b2", "team-b", 1)).version == 2);

  gov::Engine rules = gov::Engine::compile_file(repo_path("policies/examples/rules.gov"));
  gov::Task unlabelled;
  unlabelled.id = "r1";
  unlabelled.team = "research";
  unlabelled.instance_type = "ml.c5.2xlarge";
  unlabelled.set(gov::Resource::vcpu, 1000);
  const gov::Admission denied = rules.check(unlabelled);
  CHECK(denied.verdict == gov::Admission::Verdict::reject);
  CHECK(denied.rule == "require-project");
  CHECK(rules.submit(unlabelled, 0).rule == "require-project");  // as submit decides
}

TEST_CASE("a prepared task checks as its task does, also after a reload and on another engine", "[embed][check]") {
  gov::test::ScratchDir dir("embed-prepared");
  const std::string db = dir / "policies.db";
  gov::test::apply_policy_file(db, repo_path(kWorkshop), "p");
  gov::Engine engine = gov::Engine::open_store(db);
  const gov::Task a3 = task("a3", "team-a", 3);
  const gov::PreparedTask prepared = engine.prepare(a3);
  CHECK(prepared.version() == 1);
  CHECK(prepared.task().id == "a3");
  const auto same = [](const gov::Admission& x, const gov::Admission& y) {
    return x.verdict == y.verdict && x.flavor == y.flavor && x.borrows == y.borrows && x.rule == y.rule &&
           x.priority == y.priority && x.version == y.version && x.sequence == y.sequence;
  };
  CHECK(engine.check(prepared).verdict == gov::Admission::Verdict::admit);
  CHECK(same(engine.check(prepared), engine.check(a3)));
  engine.submit(task("b1", "team-b", 2), 0);  // team-b takes its own quota: a3 can no longer borrow
  CHECK(engine.check(prepared).verdict == gov::Admission::Verdict::pending);
  CHECK(same(engine.check(prepared), engine.check(a3)));

  // Version 2 (team-a at 3 instances): resolved again, the same answer as the plain check.
  gov::test::apply_policy_file(db, repo_path("tests/diff/workshop-g5-team-a-3.gov"), "p");
  engine.reload();
  CHECK(prepared.version() == 1);
  CHECK(engine.check(prepared).version == 2);
  CHECK(engine.check(prepared).verdict == gov::Admission::Verdict::admit);
  CHECK(same(engine.check(prepared), engine.check(a3)));
  CHECK(same(engine.check(engine.prepare(a3)), engine.check(a3)));

  // Another engine (another policy): never the first engine's indices.
  gov::Engine rules = gov::Engine::compile_file(repo_path("policies/examples/rules.gov"));
  CHECK(rules.check(prepared).verdict == gov::Admission::Verdict::invalid);  // no team-a there
  CHECK(same(rules.check(prepared), rules.check(a3)));
  CHECK(engine.check(gov::PreparedTask()).verdict == gov::Admission::Verdict::invalid);
  CHECK(gov::PreparedTask().task().id.empty());
}

TEST_CASE("fresh() runs the same compiled version with no tasks and outlives its source", "[embed]") {
  std::optional<gov::Engine> source(gov::Engine::compile_file(repo_path(kWorkshop)));
  source->submit(task("a1", "team-a", 3), 0);
  gov::Engine fresh = source->fresh();
  CHECK(fresh.version() == source->version());
  CHECK(fresh.policy().content_sha256 == source->policy().content_sha256);
  CHECK(fresh.snapshot().tasks.empty());
  CHECK_FALSE(fresh.decision("a1"));
  // The same task fits again in the fresh engine: the two do not share state.
  CHECK(fresh.submit(task("a1", "team-a", 3), 0).outcome == gov::Outcome::admitted);
  CHECK(source->snapshot().tasks.size() == 1);
  // Admission's names stay valid after the engine it was forked from is gone.
  source.reset();
  const gov::Admission admission = fresh.check(task("b1", "team-b", 1));
  CHECK(admission.verdict == gov::Admission::Verdict::admit);
  CHECK(admission.flavor == "ml.g5.8xlarge");
}

TEST_CASE("export_state and load_state restart an engine with its admitted and pending tasks", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  engine.submit(task("a1", "team-a", 2), 0);
  engine.submit(task("b1", "team-b", 2), 1);
  engine.submit(task("b2", "team-b", 1), 2);  // pending: the cluster's 4 GPUs are taken
  const gov::ClusterState state = engine.export_state();
  REQUIRE(state.admitted.size() == 2);
  REQUIRE(state.pending.size() == 1);
  CHECK(state.pending[0].task.id == "b2");

  gov::Engine restarted = engine.fresh();
  CHECK(restarted.load_state(state).empty());
  CHECK(restarted.snapshot().usage == engine.snapshot().usage);
  // The restarted engine decides on: a1 finishing lets b2 in, as in the original.
  const std::optional<gov::Decision> done = restarted.finish("a1", 10);
  REQUIRE(done);
  CHECK(restarted.decision("b2")->outcome == gov::Outcome::admitted);
  // Loading into an engine that has tasks is refused as a whole.
  CHECK_THROWS_AS(restarted.load_state(state), gov::Error);
}

// A NUL in an id or a label reached the exported state, whose reader refuses it (as the trace
// reader does): a restart dropped the admitted task (a controller helper's finding).
TEST_CASE("submit refuses a task id or label with a NUL, as the state reader would", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  gov::Task nul_id = task(std::string("job\0a", 5), "team-a", 1);
  const gov::Decision id = engine.submit(nul_id, 0);
  CHECK(id.outcome == gov::Outcome::invalid);
  CHECK(id.message == "the task id contains a NUL character");
  gov::Task nul_label = task("job", "team-a", 1);
  nul_label.labels.push_back({std::string("k\0z", 3), "v"});
  const gov::Decision label = engine.submit(nul_label, 0);
  CHECK(label.outcome == gov::Outcome::invalid);
  CHECK(label.message == "a label key or value contains a NUL character");
  // What the engine holds always loads back.
  CHECK(engine.fresh().load_state_json(gov::to_json(engine.export_state())).empty());
}

// Admitted entries hold their quota without a check: amounts near INT64_MAX summed into a
// team's usage wrapped it negative, and another team's task was admitted with no preemption
// (a hostile-input helper's finding). An entry that would take a sum past 2^60 is refused.
TEST_CASE("load_state refuses admitted entries whose amounts would overflow the usage", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  gov::ClusterState state;
  for (const char* id : {"a1", "a2", "a3"}) {
    gov::AdmittedTask& entry = state.admitted.emplace_back();
    entry.task = task(id, "team-a", int64_t{1} << 59);
  }
  const std::vector<gov::LoadFailure> failures = engine.load_state(state);
  REQUIRE(failures.size() == 1);  // two of 2^59 make 2^60, the most; the third is refused
  CHECK(failures[0].index == 2);
  CHECK(failures[0].message.find("would hold more than 2^60 of `gpu`") != std::string::npos);
  // The usage is what the two loaded entries hold, not a wrapped sum: team-b's task waits for
  // a preemption instead of being admitted into a cluster that reads as free.
  const gov::Step step = engine.step(10, {gov::Event::submit(task("b1", "team-b", 2))});
  bool preempted = false;
  for (const gov::Decision& d : step.decisions) preempted = preempted || d.outcome == gov::Outcome::preempted;
  CHECK(preempted);
}

// A controller whose clock starts when it does sees Workloads created before its zero. Such a
// task's state entry has a negative `submitted_at`, which the state reader refused: the restarted
// engine dropped the admitted task and then admitted past the team's quota.
TEST_CASE("a task created before the clock's zero survives a restart through the state JSON", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  gov::Task early = task("wl-1", "team-a", 3);
  early.created = -5000;
  REQUIRE(engine.submit(early, 0).outcome == gov::Outcome::admitted);
  gov::Task late = task("wl-0", "team-b", 1);
  late.created = -1500;  // queued before 0, after wl-1
  REQUIRE(engine.submit(late, 0).outcome == gov::Outcome::admitted);
  const std::string json = gov::to_json(engine.export_state());
  CHECK(json.find(R"("submitted_at":-5)") != std::string::npos);
  CHECK(json.find(R"("submitted_at":-1.5)") != std::string::npos);
  gov::Engine restarted = engine.fresh();
  const std::vector<gov::LoadFailure> failures = restarted.load_state_json(json);
  for (const gov::LoadFailure& f : failures) INFO(f.message);
  CHECK(failures.empty());
  CHECK(restarted.snapshot().usage == engine.snapshot().usage);
  CHECK(gov::to_json(restarted.export_state()) == json);
  // team-a holds its 2 GPUs and borrows 1 of team-b's: another 3 must wait, as in the original.
  CHECK(restarted.submit(task("wl-2", "team-a", 3), 1000).outcome == engine.submit(task("wl-2", "team-a", 3), 1000).outcome);
  CHECK(restarted.decision("wl-2")->outcome == gov::Outcome::pending);

  // The bound: 10^9 s before zero, for a submitted task and for a state entry alike.
  gov::Task ancient = task("old", "team-a", 1);
  ancient.created = gov::kEarliestCreated - 1;
  const gov::Decision refused = engine.fresh().submit(ancient, 0);
  CHECK(refused.outcome == gov::Outcome::invalid);
  CHECK(refused.message.find("more than 10^9 seconds before time zero") != std::string::npos);
  std::string too_early = json;
  const std::string field = R"("submitted_at":-5)";
  too_early.replace(too_early.find(field), field.size(), R"("submitted_at":-1000000001)");
  const std::vector<gov::LoadFailure> bounded = engine.fresh().load_state_json(too_early);
  REQUIRE(bounded.size() == 1);
  CHECK(bounded[0].message.find("not before -1000000000") != std::string::npos);
}

// A duration near int64's end overflowed the finish time (undefined behaviour) and finished after
// kForever, so tick(kForever) did not end the task as its contract says.
TEST_CASE("tick(kForever) finishes a task of any duration", "[embed]") {
  gov::Engine engine = gov::Engine::compile_file(repo_path(kWorkshop));
  gov::Task endless = task("endless", "team-a", 1);
  endless.duration = std::numeric_limits<gov::Time>::max();
  REQUIRE(engine.submit(endless, 7).outcome == gov::Outcome::admitted);
  CHECK(engine.next_finish() == gov::kForever);
  const gov::Step last = engine.tick(gov::kForever);
  REQUIRE(last.decisions.size() == 1);
  CHECK(last.decisions[0].outcome == gov::Outcome::finished);
}

namespace {

/// team-a's task `id` of a master of 1 GPU and `workers` workers of 1 GPU (workshop-g5: team-a
/// holds 2 GPUs and may borrow 1).
gov::Task pod_set_task(const std::string& id, int64_t workers) {
  gov::Task out;
  out.id = id;
  out.team = "team-a";
  out.instance_type = "ml.g5.8xlarge";
  gov::PodSet master;
  master.name = "master";
  master.set(gov::Resource::gpu, 1);
  gov::PodSet worker;
  worker.name = "worker";
  worker.pods = workers;
  worker.set(gov::Resource::gpu, 1);
  out.pod_sets = {master, worker};
  return out;
}

}  // namespace

TEST_CASE("check of a task of several pod sets answers as its submission decides", "[embed][podsets]") {
  gov::Engine engine = gov::Engine::compile_file(gov::test::repo_path("policies/examples/workshop-g5.gov"));
  // 1 + 2 GPUs fit by borrowing one; 1 + 3 exceed the team's maximum.
  const gov::Admission fits = engine.check(pod_set_task("fits", 2));
  CHECK(fits.verdict == gov::Admission::Verdict::admit);
  CHECK(fits.flavor == "ml.g5.8xlarge");
  CHECK(fits.borrows);
  CHECK(engine.check(pod_set_task("big", 3)).verdict == gov::Admission::Verdict::pending);
  CHECK(engine.submit(pod_set_task("fits", 2), 0).outcome == gov::Outcome::admitted);
  CHECK(engine.submit(pod_set_task("big", 3), 1).outcome == gov::Outcome::pending);
  // With 3 GPUs held, a master and one worker no longer fit: the check says so.
  CHECK(engine.check(pod_set_task("more", 1)).verdict == gov::Admission::Verdict::pending);
  // A pod set name given twice is invalid, as its submission is.
  gov::Task twice = pod_set_task("twice", 1);
  twice.pod_sets[1].name = "master";
  CHECK(engine.check(twice).verdict == gov::Admission::Verdict::invalid);
}

TEST_CASE("a restart keeps where each pod set of an admitted task runs", "[embed][podsets][restart]") {
  // A team with quota on two instance types: the master on the CPU type, the worker on the GPU
  // type. After a restart from the exported state, the CPU type is still held: a task needing it
  // all waits, exactly as in the engine that never stopped.
  gov::test::TempDir dir("restart-pod-sets");
  const std::string policy = dir.write("p.gov", R"(import "aws-ml"
cluster c {
  catalog  = aws-ml
  capacity = { ml.c5.xlarge: 1, ml.g5.8xlarge: 1 }
}
policy {
  priority work = 50
}
team t {
  quota ml.c5.xlarge { instances = 1 }
  quota ml.g5.8xlarge { instances = 1 }
  borrow-limit = 0%
}
)");
  gov::Engine engine = gov::Engine::compile_file(policy);
  gov::Task job;
  job.id = "job";
  job.team = "t";
  gov::PodSet master;
  master.name = "master";
  master.instance_type = "ml.c5.xlarge";
  master.set(gov::Resource::vcpu, 4000);
  gov::PodSet worker;
  worker.name = "worker";
  worker.instance_type = "ml.g5.8xlarge";
  worker.set(gov::Resource::gpu, 1);
  job.pod_sets = {master, worker};
  // The check places each pod set (on its first pod set's type), not the task's totals, which
  // would fit the GPU type alone.
  const gov::Admission checked = engine.check(job);
  CHECK(checked.verdict == gov::Admission::Verdict::admit);
  CHECK(checked.flavor == "ml.c5.xlarge");
  REQUIRE(engine.submit(job, 0).outcome == gov::Outcome::admitted);

  const gov::ClusterState state = engine.export_state();
  REQUIRE(state.admitted.size() == 1);
  CHECK(state.admitted[0].pod_set_flavors == std::vector<std::string>{"ml.c5.xlarge", "ml.g5.8xlarge"});
  const std::string json = gov::to_json(state);
  CHECK(json.find(R"("pod_set_flavors":["ml.c5.xlarge","ml.g5.8xlarge"])") != std::string::npos);
  gov::Engine restarted = engine.fresh();
  CHECK(restarted.load_state_json(json).empty());
  CHECK(restarted.snapshot().usage == engine.snapshot().usage);

  gov::Task cpu;
  cpu.id = "cpu";
  cpu.team = "t";
  cpu.instance_type = "ml.c5.xlarge";
  cpu.set(gov::Resource::vcpu, 4000);
  const gov::Decision before = engine.submit(cpu, 10);
  const gov::Decision after = restarted.submit(cpu, 10);
  CHECK(before.outcome == gov::Outcome::pending);
  CHECK(after.outcome == before.outcome);  // (their step numbers differ: the restarted engine's count anew)
  CHECK(after.reason == before.reason);
  CHECK(after.message == before.message);
  CHECK(after.short_of == before.short_of);
  // Finishing the job frees both types in both engines.
  const std::optional<gov::Decision> finished = restarted.finish("job", 20);
  REQUIRE(finished.has_value());
  CHECK(finished->outcome == gov::Outcome::finished);
  CHECK(restarted.decision("cpu")->outcome == gov::Outcome::admitted);
}
