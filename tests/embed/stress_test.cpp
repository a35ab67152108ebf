// The concurrency acceptance test: 8 threads submit, finish and cancel tasks and ask for
// decisions, explanations and snapshots while a ninth applies a new policy version to the
// store and reloads it, again and again. Then:
//   - no step is lost or doubled: the steps' sequence numbers are exactly 1..N;
//   - no torn read: every decision, snapshot and explanation is consistent with exactly one
//     version, the one it records (each version denies a different probe and has a different
//     quota, so a decision made with one version's code and another's tables shows);
//   - the final state and the whole decision stream equal a sequential replay of the same
//     operations, in sequence order, on a fresh engine.
// The normal suite runs it for 1 s with 10 reloads (~3 s with the checks and the replay); `tools/stress` runs the acceptance
// version (10 s, 100 reloads), also under ThreadSanitizer: GOV_STRESS_SECONDS and
// GOV_STRESS_RELOADS set the numbers.
#include <catch2/catch.hpp>

#include <gov/engine.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

constexpr int kWorkers = 8;
constexpr size_t kLivePerWorker = 6;  // beyond it a worker ends tasks: queues stay short

int64_t env_number(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoll(text, nullptr, 10);
}

/// What a version decides: set by its generation, and its team-a maximum measured by itself.
struct VersionFacts {
  int generation = 0;
  int team_a_instances = 0;   // ml.g5.8xlarge has one GPU: also team-a's nominal GPUs
  int64_t probe_gpus = 0;     // probe tasks asking for this many GPUs are denied
  int64_t team_a_maximum = 0;  // what an exceeds-max-quota decision names for team-a
  std::string path;
};

/// Writes the policy of one generation (team-a's quota and the denied probe size vary with it)
/// and measures its team-a maximum on an engine of its own.
VersionFacts write_generation(const gov::test::ScratchDir& dir, int generation) {
  VersionFacts f;
  f.generation = generation;
  f.team_a_instances = 1 + generation % 3;
  f.probe_gpus = 1 + (generation + 1) % 3;
  const std::string rule = fmt::format(R"(
rule probe {{
  when task.labels["probe"] == "yes" and task.gpus == {}
  deny "generation {}"
}}
)",
                                       f.probe_gpus, generation);
  f.path = gov::test::write_workshop_variant(dir, fmt::format("generation-{}.gov", generation), f.team_a_instances,
                                             /*with_team_b=*/true, rule);
  gov::Options options;
  options.back_end = gov::Options::BackEnd::interpreter;
  gov::Engine alone = gov::Engine::compile_file(f.path, options);
  gov::Task huge;
  huge.id = "huge";
  huge.team = "team-a";
  huge.instance_type = "ml.g5.8xlarge";
  huge.set(gov::Resource::gpu, 64);
  const gov::Decision d = alone.submit(huge, 0);
  REQUIRE(d.reason == gov::PendingReason::exceeds_max_quota);
  REQUIRE(d.maximum.size() == 1);
  f.team_a_maximum = d.maximum[0].amount;
  return f;
}

/// One state change, as a worker or the reloader made it.
struct Operation {
  enum class Kind { submit, finish, cancel, tick, reload } kind = Kind::tick;
  uint64_t sequence = 0;
  gov::Time at = 0;
  gov::Task task;      // submit
  std::string id;      // finish, cancel
  int64_t version = 0;  // reload
};

/// Everything one thread saw, checked after the run.
struct Observations {
  std::vector<Operation> operations;
  std::vector<gov::Decision> decisions;  // returned by calls and queries
  std::vector<gov::Snapshot> snapshots;
  std::vector<std::pair<int64_t, std::string>> explanations;  // version, the task's team
  struct Check {
    gov::Admission admission;
    int64_t gpus = 0;
  };
  std::vector<Check> checks;  // probe tasks checked (not submitted)
  size_t queries = 0;
};

/// A probe task: denied by the versions whose probe size is `gpus`.
gov::Task probe_task(int64_t gpus) {
  gov::Task probe;
  probe.id = "check";
  probe.team = "team-b";
  probe.instance_type = "ml.g5.8xlarge";
  probe.labels.emplace_back("probe", "yes");
  probe.set(gov::Resource::gpu, gpus);
  return probe;
}

class Worker {
 public:
  Worker(gov::Engine& engine, int index, std::atomic<int64_t>& clock, const std::vector<gov::PreparedTask>& shared_probes)
      : engine_(engine),
        index_(index),
        clock_(clock),
        shared_probes_(shared_probes),
        random_(static_cast<uint64_t>(index) * 7919 + 1) {}

  void run(const std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_relaxed)) one_operation();
  }

  Observations observations;

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }
  gov::Time now() { return clock_.fetch_add(7) + static_cast<gov::Time>(pick(5)); }

  void one_operation() {
    const size_t choice = pick(100);
    if (live_.size() > kLivePerWorker) return end(pick(2) ? Operation::Kind::finish : Operation::Kind::cancel);
    if (choice < 35 || live_.empty()) return submit();
    if (choice < 55) return end(Operation::Kind::finish);
    if (choice < 62) return end(Operation::Kind::cancel);
    if (choice < 65) return tick();
    return query();
  }

  void record(Operation op, const gov::Step& step) {
    op.sequence = step.sequence;
    for (const gov::Decision& d : step.decisions) observations.decisions.push_back(d);
    observations.operations.push_back(std::move(op));
  }

  void submit() {
    Operation op;
    op.kind = Operation::Kind::submit;
    op.at = now();
    op.task.id = fmt::format("w{}-{}", index_, next_++);
    op.task.team = pick(2) ? "team-a" : "team-b";
    op.task.instance_type = "ml.g5.8xlarge";
    const size_t shape = pick(10);
    const bool huge = shape == 0;   // more than any version's maximum: exceeds-max-quota
    const bool probe = shape <= 3 && !huge;  // denied by the versions whose probe size matches
    op.task.set(gov::Resource::gpu, huge ? 64 : static_cast<int64_t>(1 + pick(3)));
    if (probe) op.task.labels.emplace_back("probe", "yes");
    if (pick(2)) op.task.priority = pick(2) ? "high" : "low";
    if (pick(3) == 0) op.task.duration = static_cast<gov::Time>(20 + pick(200));
    gov::Step step;
    const gov::Decision own = engine_.submit(op.task, op.at, &step);
    if (own.sequence != step.sequence || own.version != step.version) failures_.push_back("submit's decision is not its step's");
    if (huge && own.outcome == gov::Outcome::pending) {  // cancel at once: it would wait forever
      record(std::move(op), step);
      end_task(Operation::Kind::cancel, fmt::format("w{}-{}", index_, next_ - 1));
      return;
    }
    if (own.outcome == gov::Outcome::admitted || own.outcome == gov::Outcome::pending) live_.push_back(op.task.id);
    record(std::move(op), step);
  }

  void end(Operation::Kind kind) {
    const size_t k = pick(live_.size());
    const std::string id = live_[k];
    live_.erase(live_.begin() + static_cast<long>(k));
    end_task(kind, id);
  }

  void end_task(Operation::Kind kind, const std::string& id) {
    Operation op;
    op.kind = kind;
    op.at = now();
    op.id = id;
    gov::Step step;
    const bool ended = kind == Operation::Kind::finish ? engine_.finish(id, op.at, &step).has_value()
                                                       : engine_.cancel(id, op.at, &step).has_value();
    record(std::move(op), step);
    if (ended) return;
    // Not admitted (only admitted tasks finish), or ended already by its duration: keep it
    // while it still waits, to cancel or finish it later.
    const std::optional<gov::Decision> latest = engine_.decision(id);
    if (latest && latest->outcome != gov::Outcome::finished && latest->outcome != gov::Outcome::cancelled &&
        latest->outcome != gov::Outcome::invalid)
      live_.push_back(id);
  }

  void tick() {
    Operation op;
    op.kind = Operation::Kind::tick;
    op.at = now();
    record(std::move(op), engine_.tick(op.at));
  }

  void query() {
    ++observations.queries;
    const std::string id = live_.empty() ? "none" : live_[pick(live_.size())];
    switch (pick(4)) {
      case 3: {
        // A probe checked as a task, as a task prepared by this thread, or as one prepared once
        // and shared by every worker (under older versions they are resolved again).
        const auto gpus = static_cast<int64_t>(1 + pick(3));
        const gov::Task probe = probe_task(gpus);
        switch (pick(3)) {
          case 0: observations.checks.push_back({engine_.check(probe), gpus}); return;
          case 1: observations.checks.push_back({engine_.check(engine_.prepare(probe)), gpus}); return;
          default: observations.checks.push_back({engine_.check(shared_probes_[gpus - 1]), gpus}); return;
        }
      }
      case 0:
        if (auto d = engine_.decision(id)) observations.decisions.push_back(*d);
        return;
      case 1:
        if (auto e = engine_.explain(id)) observations.explanations.emplace_back(e->version, e->team);
        return;
      default:
        if (pick(4) == 0) observations.snapshots.push_back(engine_.snapshot());
        return;
    }
  }

 public:
  std::vector<std::string> failures_;

 private:
  gov::Engine& engine_;
  int index_;
  std::atomic<int64_t>& clock_;
  const std::vector<gov::PreparedTask>& shared_probes_;  // for 1, 2 and 3 GPUs
  std::mt19937_64 random_;
  uint64_t next_ = 0;
  std::vector<std::string> live_;
};

/// Checks one decision against the facts of the version it records.
std::string inconsistency(const gov::Decision& d, const std::map<int64_t, VersionFacts>& versions) {
  auto it = versions.find(d.version);
  if (it == versions.end()) return fmt::format("{}: unknown version {}", d.task, d.version);
  const VersionFacts& f = it->second;
  if (d.outcome == gov::Outcome::rejected) {
    if (d.message != fmt::format("generation {}", f.generation))
      return fmt::format("{}: rejected by `{}` under version {} (generation {})", d.task, d.message, d.version, f.generation);
  }
  if (d.reason == gov::PendingReason::exceeds_max_quota && d.team == "team-a") {
    if (d.maximum != gov::ResourceAmounts{{gov::Resource::gpu, f.team_a_maximum}})
      return fmt::format("{}: a maximum that is not version {}'s ({} GPUs)", d.task, d.version, f.team_a_maximum);
  }
  return {};
}

}  // namespace

TEST_CASE("8 threads decide while a ninth applies and reloads new versions", "[embed][stress]") {
  const int64_t seconds = env_number("GOV_STRESS_SECONDS", 1);
  const int64_t reloads = env_number("GOV_STRESS_RELOADS", 10);
  gov::test::ScratchDir dir("stress");
  const std::string db = dir / "policies.db";

  std::vector<VersionFacts> generations;
  for (int g = 0; g <= reloads; ++g) generations.push_back(write_generation(dir, g));
  std::map<int64_t, VersionFacts> versions;  // by store version; written by the reloader before each reload
  std::mutex versions_mutex;
  versions[gov::test::apply_policy_file(db, generations[0].path, "stress")] = generations[0];

  std::vector<gov::Step> stream;  // every step, in order (on_step runs under the state lock)
  gov::Options options;
  options.on_step = [&](const gov::Step& step) { stream.push_back(step); };
  gov::Engine engine = gov::Engine::open_store(db, options);
  const int64_t first_version = engine.version();

  std::atomic<int64_t> clock{0};
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  const std::vector<gov::PreparedTask> shared_probes = {engine.prepare(probe_task(1)), engine.prepare(probe_task(2)),
                                                        engine.prepare(probe_task(3))};
  for (int i = 0; i < kWorkers; ++i) workers.push_back(std::make_unique<Worker>(engine, i, clock, shared_probes));
  for (auto& w : workers) threads.emplace_back([&stop, worker = w.get()] { worker->run(stop); });

  // The ninth thread: apply generation g, reload, spread evenly over the run.
  std::vector<Operation> reload_operations;
  std::vector<std::string> reload_failures;
  const auto start = std::chrono::steady_clock::now();
  std::thread reloader([&] {
    for (size_t g = 1; g < generations.size(); ++g) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(seconds * 1000 * static_cast<int64_t>(g) / (reloads + 1)));
      std::string error;
      const std::optional<int64_t> version = gov::test::try_apply_policy_file(db, generations[g].path, "stress", error);
      if (!version) {
        reload_failures.push_back(error);
        break;
      }
      {
        std::lock_guard lock(versions_mutex);
        versions[*version] = generations[g];
      }
      gov::Step step;
      try {
        step = engine.reload();
      } catch (const gov::Error& e) {
        reload_failures.push_back(e.what());
        break;
      }
      if (step.version != *version || step.sequence == 0)
        reload_failures.push_back(fmt::format("reload to {} gave version {}", *version, step.version));
      Operation op;
      op.kind = Operation::Kind::reload;
      op.sequence = step.sequence;
      op.version = step.version;
      reload_operations.push_back(op);
    }
    std::this_thread::sleep_until(start + std::chrono::seconds(seconds));
    stop.store(true);
  });
  reloader.join();
  for (std::thread& t : threads) t.join();
  const double concurrent_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(fmt::format("{}", fmt::join(reload_failures, "; ")));
  REQUIRE(reload_failures.empty());
  REQUIRE(engine.version() == versions.rbegin()->first);

  // Every state change, in the order the engine made them.
  std::vector<Operation> operations = reload_operations;
  size_t decisions_seen = 0, queries = 0, snapshots = 0;
  for (auto& w : workers) {
    INFO(fmt::format("{}", fmt::join(w->failures_, "; ")));
    CHECK(w->failures_.empty());
    for (Operation& op : w->observations.operations) operations.push_back(std::move(op));
    queries += w->observations.queries;
  }
  std::sort(operations.begin(), operations.end(), [](const Operation& a, const Operation& b) { return a.sequence < b.sequence; });
  REQUIRE(operations.size() == stream.size());
  for (size_t i = 0; i < operations.size(); ++i) {
    REQUIRE(operations[i].sequence == i + 1);  // no step lost, none doubled
    REQUIRE(stream[i].sequence == i + 1);
  }
  WARN(fmt::format("{:.1f} s (at least {} s) of 8 threads: {} steps, {} reloads, {} queries, {} decisions",
                   concurrent_seconds, seconds, operations.size(), reloads, queries,
                   [&] {
                     size_t n = 0;
                     for (const gov::Step& s : stream) n += s.decisions.size();
                     return n;
                   }()));

  // No torn read: every decision, snapshot and explanation against its own version.
  std::vector<std::string> problems;
  int64_t version_now = first_version;
  for (const gov::Step& step : stream) {
    if (step.version < version_now) problems.push_back(fmt::format("step {} went back to version {}", step.sequence, step.version));
    version_now = step.version;
    for (const gov::Decision& d : step.decisions) {
      if (d.version != step.version || d.sequence != step.sequence) problems.push_back(d.task + ": not its step's version");
      if (auto why = inconsistency(d, versions); !why.empty()) problems.push_back(why);
      ++decisions_seen;
    }
  }
  for (auto& w : workers) {
    for (const gov::Decision& d : w->observations.decisions) {
      if (auto why = inconsistency(d, versions); !why.empty()) problems.push_back("returned " + why);
      const gov::Step& step = stream[d.sequence - 1];
      if (d.version != step.version) problems.push_back(d.task + ": a returned decision with another version than its step");
    }
    for (const gov::Snapshot& s : w->observations.snapshots) {
      ++snapshots;
      if (s.sequence > 0 && s.version != stream[s.sequence - 1].version)
        problems.push_back(fmt::format("snapshot at step {} has version {}", s.sequence, s.version));
      for (const gov::UsageRow& row : s.usage) {
        if (row.team == "team-a" && row.resource == gov::Resource::gpu && row.nominal != versions.at(s.version).team_a_instances)
          problems.push_back(fmt::format("snapshot of version {} shows team-a's nominal {}", s.version, row.nominal));
      }
    }
    for (const Observations::Check& c : w->observations.checks) {
      auto it = versions.find(c.admission.version);
      if (it == versions.end()) {
        problems.push_back(fmt::format("check under unknown version {}", c.admission.version));
        continue;
      }
      const bool denied = c.gpus == it->second.probe_gpus;
      if (denied != (c.admission.verdict == gov::Admission::Verdict::reject) || (denied && c.admission.rule != "probe"))
        problems.push_back(fmt::format("check of a {}-GPU probe under version {} (denies {}): verdict {}", c.gpus,
                                       c.admission.version, it->second.probe_gpus, static_cast<int>(c.admission.verdict)));
      if (c.admission.sequence > 0 && stream[c.admission.sequence - 1].version != c.admission.version)
        problems.push_back("a check whose version is not its state's");
    }
    for (const auto& [version, team] : w->observations.explanations) {
      if (!versions.count(version)) problems.push_back(fmt::format("explanation with unknown version {}", version));
    }
  }
  INFO(fmt::format("{}", fmt::join(problems.begin(), problems.begin() + std::min<size_t>(problems.size(), 10), "\n")));
  CHECK(problems.empty());
  CHECK(decisions_seen > 0);

  // The same operations, one at a time, on a fresh engine give the same stream and state. Each
  // replayed step is compared as it comes (keeping both streams would double the memory).
  size_t replayed = 0, differing = 0;
  std::string first_difference;
  std::optional<uint64_t> offset;  // the replay's extra first step (its initial reload)
  gov::Options replay_options;
  replay_options.on_step = [&](const gov::Step& step) {
    if (!offset) return;
    const size_t i = replayed++;
    if (i >= stream.size()) {
      ++differing;
      return;
    }
    std::vector<gov::Decision> actual = step.decisions;
    for (gov::Decision& d : actual) d.sequence -= *offset;
    if (actual == stream[i].decisions && step.version == stream[i].version) return;
    if (differing++ == 0)
      first_difference = fmt::format("step {}:\n{}replayed:\n{}", stream[i].sequence, gov::to_json(stream[i]), gov::to_json(step));
  };
  gov::Engine replay = gov::Engine::open_store(db, replay_options);
  offset = replay.reload(first_version).sequence;
  for (const Operation& op : operations) {
    switch (op.kind) {
      case Operation::Kind::submit: replay.submit(op.task, op.at); break;
      case Operation::Kind::finish: replay.finish(op.id, op.at); break;
      case Operation::Kind::cancel: replay.cancel(op.id, op.at); break;
      case Operation::Kind::tick: replay.tick(op.at); break;
      case Operation::Kind::reload: replay.reload(op.version); break;
    }
  }
  CHECK(replayed == stream.size());
  INFO("first difference at " << first_difference);
  CHECK(differing == 0);
  gov::Snapshot concurrent = engine.snapshot(), sequential = replay.snapshot();
  concurrent.sequence = sequential.sequence = 0;
  CHECK(concurrent == sequential);
  CHECK(gov::to_json(concurrent) == gov::to_json(sequential));
  CHECK(snapshots + queries > 0);
}
