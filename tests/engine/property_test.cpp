// Property test: random hand-generated modules and random event streams (more than 10,000
// events in all); after every event the engine's invariants hold, and replaying the same events
// gives identical decisions. A same-instant mode puts durations and event times on one 5-second
// grid, so duration finishes land on instants that also carry events (issue 27). The first run is a self-check run (no caches, no search shortcuts),
// the replay a normal one, so their equality also shows the optimizations change no answer.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "compiler/jit/jit.hpp"
#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

using Rng = std::mt19937_64;

int64_t uniform(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool chance(Rng& rng, int percent) {
  return uniform(rng, 0, 99) < percent;
}

ir::Resources random_limit(Rng& rng, const ir::Resources& nominal) {
  const int kind = static_cast<int>(uniform(rng, 0, 3));
  if (kind == 0) return unlimited();
  ir::Resources out{};
  const int64_t percent = kind == 1 ? 0 : uniform(rng, 10, 200);
  for (size_t i = 0; i < ir::kResourceCount; ++i) out[i] = nominal[i] * percent / 100;
  return out;
}

// GPU partition columns for random_module(rng, true): three profiles of one GPU model.
const std::vector<std::string> kProfiles = {"mig-1g.5gb", "mig-2g.10gb", "mig-3g.20gb"};

// Random partition quotas in every quota of `m` (nominal 0–8 per profile, a random borrowing
// limit, sometimes half lent), the module's columns being kProfiles.
void add_random_partitions(Rng& rng, ir::Module& m) {
  m.partitions = kProfiles;
  for (ir::Team& team : m.teams) {
    for (ir::FlavorQuota& quota : team.quotas) {
      for (size_t k = 0; k < kProfiles.size(); ++k) {
        const size_t i = ir::index(ir::partition_column(k));
        quota.nominal[i] = chance(rng, 70) ? uniform(rng, 0, 8) : 0;
        const int kind = static_cast<int>(uniform(rng, 0, 3));
        quota.borrowing_limit[i] = kind == 0 ? ir::kUnlimited : kind == 1 ? 0 : quota.nominal[i] * uniform(rng, 10, 200) / 100;
        if (chance(rng, 20)) quota.lending_limit[i] = quota.nominal[i] / 2;
      }
    }
  }
}

ir::Module random_module(Rng& rng) {
  ir::Module m;
  m.cluster = "random";
  m.strings = {""};
  const int flavors = static_cast<int>(uniform(rng, 1, 3));
  for (int f = 0; f < flavors; ++f) {
    m.flavors.push_back(
        make_flavor(fmt::format("ml.f{}", f),
                    amounts(uniform(rng, 0, 8), uniform(rng, 0, 1) * 2, uniform(rng, 1, 8) * 4000,
                            uniform(rng, 1, 8) * 16384, uniform(rng, 0, 2)),
                    uniform(rng, 1, 8)));
  }
  const int teams = static_cast<int>(uniform(rng, 2, 5));
  for (int t = 0; t < teams; ++t) {
    std::vector<uint32_t> order(static_cast<size_t>(flavors));
    for (int f = 0; f < flavors; ++f) order[static_cast<size_t>(f)] = static_cast<uint32_t>(f);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(static_cast<size_t>(uniform(rng, 1, flavors)));
    std::vector<ir::FlavorQuota> quotas;
    for (uint32_t f : order) {
      const ir::Resources nominal = instances(m.flavors[f], uniform(rng, 0, 3));
      ir::Resources lending = unlimited();
      if (chance(rng, 20)) {
        for (size_t i = 0; i < ir::kResourceCount; ++i) lending[i] = nominal[i] / 2;
      }
      quotas.push_back(make_quota(f, nominal, random_limit(rng, nominal), lending));
    }
    ir::Team team = make_team(fmt::format("team-{}", t), quotas);
    team.sharing = static_cast<ir::Sharing>(uniform(rng, 0, 9) < 7 ? 0 : uniform(rng, 1, 2));
    team.within_team = static_cast<ir::WithinTeam>(uniform(rng, 0, 2));
    team.reclaim_within_cohort = chance(rng, 80)
                                     ? ir::ReclaimWithinCohort::any
                                     : static_cast<ir::ReclaimWithinCohort>(uniform(rng, 0, 1));
    if (team.reclaim_within_cohort != ir::ReclaimWithinCohort::never && chance(rng, 20)) {
      team.borrow_within_cohort = ir::BorrowWithinCohort::lower_priority;
      if (chance(rng, 50))
        team.borrow_priority_threshold = static_cast<int32_t>(uniform(rng, 0, 60));
    }
    team.queueing = chance(rng, 15) ? ir::Queueing::strict_fifo : ir::Queueing::best_effort_fifo;
    if (chance(rng, 25)) team.when_can_borrow = ir::WhenCanBorrow::try_next_flavor;
    if (chance(rng, 25)) team.when_can_preempt = ir::WhenCanPreempt::preempt;
    if (chance(rng, 25)) team.flavor_preference = ir::FlavorPreference::preemption_over_borrowing;
    team.fair_share_weight_micros = static_cast<int64_t>(uniform(rng, 0, 3)) * model::kWeightScale;
    team.active = chance(rng, 90);
    m.teams.push_back(team);
  }
  const int classes = static_cast<int>(uniform(rng, 0, 3));
  for (int c = 0; c < classes; ++c)
    m.classes.push_back({fmt::format("class-{}", c), static_cast<int32_t>(uniform(rng, 0, 100))});
  m.settings.rank_by_priority = chance(rng, 70);
  m.settings.fair_sharing = chance(rng, 60);
  m.settings.idle_resource_sharing = chance(rng, 30);
  m.settings.default_class = classes > 0 && chance(rng, 30) ? 0 : -1;
  if (chance(rng, 30)) {
    m.settings.fair_share_strategies = {
        chance(rng, 50) ? ir::FairShareStrategy::less_than_or_equal_to_final_share
                        : ir::FairShareStrategy::less_than_initial_share};
  }
  return m;
}

// Same-instant mode: durations and event gaps are multiples of this, so finishes due by duration
// fall on instants that carry events.
constexpr Time kGrid = 5 * kSecond;

gov::Task random_task(Rng& rng, const ir::Module& m, int serial, bool same_instant) {
  const auto& team =
      m.teams[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.teams.size()) - 1))];
  TaskBuilder task(fmt::format("t{}", serial), chance(rng, 2) ? "nobody" : team.name);
  if (!m.classes.empty() && chance(rng, 70)) {
    task.priority(
        m.classes[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.classes.size()) - 1))]
            .name);
  }
  const bool name_type = chance(rng, 50);
  if (name_type)
    task.type(
        m.flavors[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.flavors.size()) - 1))]
            .name);
  if (chance(rng, 25) && (name_type || team.quotas.size() == 1)) {
    task.instances(uniform(rng, 1, 2));
  } else {
    task.gpus(uniform(rng, 0, 4));
    if (chance(rng, 50)) task.vcpu_millis(uniform(rng, 1, 16) * 2000);
    if (chance(rng, 30)) task.memory_mib(uniform(rng, 1, 8) * 16384);
    if (chance(rng, 10)) task.efa(1);
    if (chance(rng, 10)) task.pods(uniform(rng, 1, 3));
  }
  gov::Task spec = task;
  if (!m.partitions.empty() && chance(rng, 40)) {  // GPU partitions, now and then an unknown profile
    const size_t first = static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.partitions.size()) - 1));
    spec.partitions.emplace_back(chance(rng, 3) ? std::string("mig-7g.40gb") : m.partitions[first], uniform(rng, 1, 4));
    if (chance(rng, 30)) spec.partitions.emplace_back(m.partitions[(first + 1) % m.partitions.size()], uniform(rng, 1, 3));
  }
  if (same_instant) {
    if (chance(rng, 80)) spec.duration = uniform(rng, 0, 6) * kGrid;
  } else if (chance(rng, 60)) {
    spec.duration = uniform(rng, 0, 40) * kSecond;
  }
  return spec;
}

struct Step {
  Time at = 0;
  std::vector<Event> events;
};

std::vector<Step> random_steps(Rng& rng, const ir::Module& m, int event_count,
                               bool same_instant = false) {
  std::vector<Step> steps;
  std::vector<std::string> ids;
  Time at = 0;
  for (int serial = 0; serial < event_count; ++serial) {
    if (steps.empty() || chance(rng, 70)) {
      if (same_instant) {
        at += chance(rng, 20) ? 0 : uniform(rng, 1, 3) * kGrid;
      } else {
        at += chance(rng, 30) ? 0 : uniform(rng, 1, 20) * kSecond;
      }
      steps.push_back({at, {}});
    }
    std::vector<Event>& events = steps.back().events;
    const int64_t roll = uniform(rng, 0, 99);
    if (ids.empty() || roll < 60) {
      events.push_back(Event::submit(random_task(rng, m, serial, same_instant)));
      ids.push_back(events.back().task.id);
    } else {
      const std::string& id =
          ids[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(ids.size()) - 1))];
      events.push_back(roll < 80 ? Event::finish(id) : Event::cancel(id));
    }
  }
  return steps;
}

void check_quota_invariants(const ir::Module& m, const Snapshot& snapshot) {
  for (const UsageRow& row : snapshot.usage) {
    INFO(row.team << " " << row.flavor << " " << ir::resource_key(row.resource));
    const ir::Amount ceiling =
        row.borrowing_limit == ir::kUnlimited ? ir::kUnlimited : row.nominal + row.borrowing_limit;
    CHECK(row.used <= ceiling);
    CHECK(row.used >= 0);
  }
  for (const CohortRow& row : snapshot.cohort) CHECK(row.used <= row.quota);
  // The cohort never uses more than its total quota: Σ usage <= Σ nominal (+ unreserved capacity).
  for (size_t f = 0; f < m.flavors.size(); ++f) {
    for (ir::Resource r :
         {ir::Resource::gpu, ir::Resource::neuron, ir::Resource::vcpu, ir::Resource::memory}) {
      ir::Amount used_total = 0;
      ir::Amount nominal_total = 0;
      for (const UsageRow& row : snapshot.usage) {
        if (row.flavor != m.flavors[f].name || row.resource != r || !row.partition.empty()) continue;
        used_total += row.used;
        nominal_total += row.nominal;
      }
      ir::Amount total = nominal_total;
      // A tree of cohorts: the cohorts' own quotas are used as well.
      for (const ir::CohortNode& cohort : m.cohorts) {
        for (const ir::FlavorQuota& quota : cohort.quotas) {
          if (quota.flavor == f) total += quota.nominal[ir::index(r)];
        }
      }
      if (m.settings.idle_resource_sharing) {
        total = std::max(nominal_total,
                         m.flavors[f].capacity * m.flavors[f].per_instance[ir::index(r)]);
      }
      CHECK(used_total <= total);
    }
    // Partitions exist only where quotas give them: Σ usage <= Σ nominal per profile.
    for (const std::string& profile : m.partitions) {
      ir::Amount used_total = 0;
      ir::Amount nominal_total = 0;
      for (const UsageRow& row : snapshot.usage) {
        if (row.flavor != m.flavors[f].name || row.partition != profile) continue;
        used_total += row.used;
        nominal_total += row.nominal;
      }
      CHECK(used_total <= nominal_total);
    }
  }
}

void check_states(const Snapshot& snapshot, size_t submitted) {
  CHECK(snapshot.tasks.size() == submitted);
  std::set<std::string> ids;
  size_t by_state = 0;
  for (size_t s = 0; s < kTaskStateCount; ++s)
    by_state += snapshot.count(static_cast<TaskState>(s));
  CHECK(by_state == snapshot.tasks.size());
  for (const TaskRow& row : snapshot.tasks) {
    CHECK(ids.insert(row.id).second);  // ids are unique here: each task is listed once
    CHECK(row.admitted_at.has_value() == (row.state == TaskState::admitted));
  }
}

bool ends(Outcome outcome) {
  return outcome == Outcome::finished || outcome == Outcome::cancelled ||
         outcome == Outcome::rejected || outcome == Outcome::invalid;
}

/// One instant, one set of events (issue 27): every task a `finish` or `cancel` of the step
/// names that was live before the step, or submitted earlier in it, gets its decision in the
/// step (a live one ends: a finish is never dropped), and at the step's time it comes before
/// the first admission or preemption (no cycle runs between the due finishes and the events).
void check_events_before_cycles(const Step& step, const std::vector<Decision>& decisions,
                                const std::set<std::string>& live) {
  size_t first_cycle = decisions.size();
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    if (d.at == step.at && (d.outcome == Outcome::admitted || d.outcome == Outcome::preempted)) {
      first_cycle = i;
      break;
    }
  }
  std::set<std::string> submitted_here;
  for (const Event& event : step.events) {
    if (event.kind == Event::Kind::submit) {
      submitted_here.insert(event.task.id);
      continue;
    }
    const bool was_live = live.count(event.id) > 0;
    if (!was_live && submitted_here.count(event.id) == 0) continue;
    INFO(fmt::format("at {}: {} of `{}`", step.at,
                     event.kind == Event::Kind::finish ? "finish" : "cancel", event.id));
    size_t at = decisions.size();
    for (size_t i = 0; i < decisions.size(); ++i) {
      if (decisions[i].task == event.id && (!was_live || ends(decisions[i].outcome))) {
        at = i;
        break;
      }
    }
    REQUIRE(at < decisions.size());
    if (decisions[at].at == step.at) CHECK(at < first_cycle);
  }
}

/// Counts the duration finishes at a step's own time in steps with events (same-instant mode).
size_t due_finishes_with_events(const Step& step, const std::vector<Decision>& decisions) {
  std::set<std::string> named;
  for (const Event& event : step.events) {
    if (event.kind != Event::Kind::submit) named.insert(event.id);
  }
  size_t count = 0;
  for (const Decision& d : decisions) {
    count += d.at == step.at && d.outcome == Outcome::finished && named.count(d.task) == 0;
  }
  return count;
}

/// Runs the steps, checking invariants after each; returns every decision. Adds the number of
/// duration finishes that met events at their instant to `*met` when given.
std::vector<Decision> run_checked(const ir::Module& m, const std::vector<Step>& steps,
                                  bool self_check, size_t* met = nullptr,
                                  const ir::Evaluator* evaluator = nullptr) {
  EngineOptions options;
  options.self_check = self_check;
  Harness h(m, options);
  if (evaluator != nullptr) h.engine = std::make_unique<Engine>(*h.module, *evaluator, options);
  std::vector<Decision> all;
  size_t submitted = 0;
  std::set<std::string> live;  // admitted or pending after the steps so far
  for (const Step& step : steps) {
    const std::vector<Decision> decisions = h.engine->step(step.at, step.events);
    check_events_before_cycles(step, decisions, live);
    if (met != nullptr && !step.events.empty()) *met += due_finishes_with_events(step, decisions);
    for (const Decision& d : decisions) {
      if (ends(d.outcome)) {
        live.erase(d.task);
      } else {
        live.insert(d.task);
      }
    }
    for (const Event& event : step.events) {
      if (event.kind != Event::Kind::submit) continue;
      ++submitted;
      // Every submitted task gets a decision at its submission time.
      const bool decided = std::any_of(decisions.begin(), decisions.end(), [&](const Decision& d) {
        return d.task == event.task.id && d.at == step.at;
      });
      CHECK(decided);
    }
    for (const Decision& d : decisions) CHECK(d.at <= step.at);
    if (self_check) {
      check_quota_invariants(m, h.engine->snapshot());
      check_states(h.engine->snapshot(), submitted);
      INFO(fmt::format("{}", fmt::join(h.engine->self_check_failures(), "\n")));
      REQUIRE(h.engine->self_check_failures().empty());
    }
    all.insert(all.end(), decisions.begin(), decisions.end());
  }
  return all;
}

/// The first decision where two streams differ, with the one before it, as JSON lines.
std::string first_difference(const std::vector<Decision>& a, const std::vector<Decision>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  if (i == a.size() && i == b.size()) return "the streams are equal";
  const auto line = [](const std::vector<Decision>& d, size_t at) {
    return at < d.size() ? json_line(d[at]) : std::string("(end)");
  };
  std::string about;
  if (i < a.size()) {
    for (const Decision& d : a) if (d.task == a[i].task) about += "\n  a: " + json_line(d);
    for (const Decision& d : b) if (d.task == a[i].task) about += "\n  b: " + json_line(d);
  }
  return fmt::format("decision {} differs\n  before: {}\n  first:  {}\n  second: {}{}", i,
                     i > 0 ? line(a, i - 1) : std::string("-"), line(a, i), line(b, i), about);
}

/// The steps' decisions by the self-checking interpreter engine, checked equal, decision by
/// decision, to the optimised engine's and the JIT engine's.
std::vector<Decision> decide_in_every_engine(const ir::Module& m, const std::vector<Step>& steps) {
  std::vector<Decision> reference = run_checked(m, steps, /*self_check=*/true);
  const std::vector<Decision> fast = run_checked(m, steps, /*self_check=*/false);
  INFO(first_difference(reference, fast));
  REQUIRE(reference.size() == fast.size());
  CHECK(reference == fast);
  auto jit = jit::compile_and_load(m);
  REQUIRE(jit.ok());
  const std::vector<Decision> native = run_checked(m, steps, /*self_check=*/false, nullptr, jit->get());
  INFO(first_difference(reference, native));
  REQUIRE(reference.size() == native.size());
  CHECK(reference == native);
  return reference;
}

}  // namespace

TEST_CASE("random modules and events keep every invariant and replay identically",
          "[engine][property]") {
  Rng rng(20240917);
  int total_events = 0;
  int preemptions = 0;
  int admissions = 0;
  for (int round = 0; round < 24; ++round) {
    const ir::Module m = random_module(rng);
    const std::vector<Step> steps = random_steps(rng, m, 450);
    for (const Step& step : steps) total_events += static_cast<int>(step.events.size());
    INFO("round " << round);
    const std::vector<Decision> first = run_checked(m, steps, /*self_check=*/true);
    const std::vector<Decision> second = run_checked(m, steps, /*self_check=*/false);
    REQUIRE(first.size() == second.size());
    CHECK(first == second);
    for (const Decision& d : first) {
      preemptions += d.outcome == Outcome::preempted;
      admissions += d.outcome == Outcome::admitted;
    }
  }
  CHECK(total_events >= 10000);
  CHECK(preemptions > 100);  // the streams exercise preemption, not just admission
  CHECK(admissions > 1000);
}

TEST_CASE("same-instant duration finishes and trace events keep every invariant",
          "[engine][property][security][sem-instant]") {
  Rng rng(20261125);
  int total_events = 0;
  size_t met = 0;
  for (int round = 0; round < 24; ++round) {
    const ir::Module m = random_module(rng);
    const std::vector<Step> steps = random_steps(rng, m, 450, /*same_instant=*/true);
    for (const Step& step : steps) total_events += static_cast<int>(step.events.size());
    INFO("round " << round);
    const std::vector<Decision> first = run_checked(m, steps, /*self_check=*/true, &met);
    const std::vector<Decision> second = run_checked(m, steps, /*self_check=*/false);
    REQUIRE(first.size() == second.size());
    CHECK(first == second);
  }
  CHECK(total_events >= 10000);
  WARN(met << " duration finishes met trace events at their instant");
  CHECK(met > 400);  // the mode does what it is for
}

}  // namespace gov::engine::test

namespace gov::engine::test {

TEST_CASE("random modules with GPU partitions keep every invariant and decide alike in both back ends",
          "[engine][property][mig]") {
  Rng rng(20261126);
  int partition_admissions = 0;
  int partition_preemptions = 0;
  for (int round = 0; round < 10; ++round) {
    ir::Module m = random_module(rng);
    add_random_partitions(rng, m);
    const std::vector<Step> steps = random_steps(rng, m, 400);
    INFO("round " << round);
    const std::vector<Decision> reference = decide_in_every_engine(m, steps);
    std::set<std::string> with_partitions;
    for (const Step& step : steps) {
      for (const Event& event : step.events) {
        if (event.kind == Event::Kind::submit && !event.task.partitions.empty()) with_partitions.insert(event.task.id);
      }
    }
    for (const Decision& d : reference) {
      if (with_partitions.count(d.task) == 0) continue;
      partition_admissions += d.outcome == Outcome::admitted;
      partition_preemptions += d.outcome == Outcome::preempted;
    }
  }
  // The streams exercise partitions, not just the five resources.
  CHECK(partition_admissions > 100);
  CHECK(partition_preemptions > 10);
}

}  // namespace gov::engine::test

namespace gov::engine::test {
namespace {

/// The task's request as pod sets: a task of one pod set keeps its request in one pod set named
/// `only`; otherwise 2 or 3 pod sets split it, each maybe on its own instance type.
gov::Task with_pod_sets(Rng& rng, const ir::Module& m, gov::Task task, bool one) {
  if (one) {
    gov::PodSet pod_set;
    pod_set.name = "only";
    pod_set.instances = task.instances;
    pod_set.amounts = task.amounts;
    pod_set.pods = task.pods.value_or(1);
    pod_set.partitions = task.partitions;
    task.instances.reset();
    task.amounts = {};
    task.pods.reset();
    task.partitions.clear();
    task.pod_sets.push_back(std::move(pod_set));
    return task;
  }
  const int count = static_cast<int>(uniform(rng, 2, 3));
  task.instances.reset();
  task.amounts = {};
  task.pods.reset();
  task.partitions.clear();
  for (int i = 0; i < count; ++i) {
    gov::PodSet pod_set;
    pod_set.name = i == 0 ? "master" : fmt::format("worker-{}", i);
    pod_set.pods = uniform(rng, 1, 3);
    if (chance(rng, 70)) pod_set.set(gov::Resource::gpu, uniform(rng, 0, 2));
    if (chance(rng, 50)) pod_set.set(gov::Resource::vcpu, uniform(rng, 1, 8) * 1000);
    if (chance(rng, 30)) pod_set.set(gov::Resource::memory, uniform(rng, 1, 4) * 16384);
    if (chance(rng, 30))
      pod_set.instance_type = m.flavors[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.flavors.size()) - 1))].name;
    task.pod_sets.push_back(std::move(pod_set));
  }
  if (chance(rng, 3)) task.pod_sets.push_back(task.pod_sets.front());  // a name given twice: invalid
  return task;
}

/// `steps` with some submitted tasks rewritten as tasks of pod sets (`one`: every task becomes
/// one pod set `only`, which must decide as the task did).
std::vector<Step> pod_set_steps(Rng& rng, const ir::Module& m, std::vector<Step> steps, bool one) {
  for (Step& step : steps) {
    for (Event& event : step.events) {
      if (event.kind != Event::Kind::submit) continue;
      if (one || chance(rng, 40)) event.task = with_pod_sets(rng, m, std::move(event.task), one);
    }
  }
  return steps;
}

/// A decision of a task of the one pod set `only` as the same task without pod sets decides it.
Decision as_main(Decision d) {
  d.pod_sets.clear();
  for (size_t at = d.message.find("pod set only: "); at != std::string::npos; at = d.message.find("pod set only: ", at))
    d.message.replace(at + 8, 4, "main");
  if (d.message.rfind("pod set `only`: ", 0) == 0) d.message.erase(0, 16);  // an invalid task's reason
  return d;
}

}  // namespace

TEST_CASE("random tasks of several pod sets keep every invariant and decide alike in both back ends",
          "[engine][property][podsets]") {
  Rng rng(20261127);
  int multi_admissions = 0;
  int multi_flavor_admissions = 0;
  int multi_preempted = 0;
  int multi_preemptors = 0;
  for (int round = 0; round < 10; ++round) {
    ir::Module m = random_module(rng);
    const std::vector<Step> steps = pod_set_steps(rng, m, random_steps(rng, m, 400), /*one=*/false);
    INFO("round " << round);
    const std::vector<Decision> reference = decide_in_every_engine(m, steps);
    std::set<std::string> multi;
    for (const Step& step : steps) {
      for (const Event& event : step.events) {
        if (event.kind == Event::Kind::submit && event.task.pod_sets.size() > 1) multi.insert(event.task.id);
      }
    }
    for (const Decision& d : reference) {
      if (d.outcome == Outcome::admitted && !d.pod_sets.empty()) {
        ++multi_admissions;
        CHECK(d.pod_sets.front().flavor == d.flavor);
        bool several = false;
        for (const PodSetAdmission& p : d.pod_sets) several = several || p.flavor != d.flavor;
        multi_flavor_admissions += several;
      }
      if (multi.count(d.task) == 0) continue;
      multi_preempted += d.outcome == Outcome::preempted;
      multi_preemptors += d.outcome == Outcome::pending && d.reason == PendingReason::waiting_for_preemption;
    }
  }
  // The streams exercise pod sets: admissions on several types, preemptions of and by them.
  CHECK(multi_admissions > 100);
  CHECK(multi_flavor_admissions > 20);
  CHECK(multi_preempted > 10);
  CHECK(multi_preemptors > 10);
}

TEST_CASE("a task of one pod set decides as the same task without pod sets", "[engine][property][podsets]") {
  Rng rng(20261128);
  for (int round = 0; round < 6; ++round) {
    ir::Module m = random_module(rng);
    const std::vector<Step> plain = random_steps(rng, m, 300);
    const std::vector<Step> one = pod_set_steps(rng, m, plain, /*one=*/true);
    INFO("round " << round);
    const std::vector<Decision> expected = run_checked(m, plain, /*self_check=*/true);
    std::vector<Decision> actual = run_checked(m, one, /*self_check=*/true);
    for (Decision& d : actual) d = as_main(std::move(d));
    INFO(first_difference(expected, actual));
    REQUIRE(expected.size() == actual.size());
    CHECK(expected == actual);
  }
}

}  // namespace gov::engine::test

namespace gov::engine::test {
namespace {

/// Gives some teams of `m` resource groups as the lowering would (docs/semantics-decisions.md
/// "Resource groups"): the charged resources split into 2 or 3 groups (partitions with gpus),
/// each with some of the team's quota flavors in a random order, the quotas' uncovered columns 0.
/// `one`: every team with quotas gets a single group covering everything, its quotas in order.
void add_random_groups(Rng& rng, ir::Module& m, bool one) {
  constexpr std::array<ir::Resource, 4> kCharged = {ir::Resource::gpu, ir::Resource::neuron, ir::Resource::vcpu,
                                                    ir::Resource::memory};
  const auto covers_of = [&m](ir::Resource r) {
    uint32_t mask = 1u << ir::index(r);
    if (r == ir::Resource::gpu) {
      for (size_t k = 0; k < m.partitions.size(); ++k) mask |= 1u << ir::index(ir::partition_column(k));
    }
    return mask;
  };
  for (ir::Team& team : m.teams) {
    if (team.quotas.empty()) continue;
    if (one) {
      ir::ResourceGroup& group = team.groups.emplace_back();
      for (ir::Resource r : kCharged) group.covers |= covers_of(r);
      for (const ir::FlavorQuota& quota : team.quotas) group.flavors.push_back(quota.flavor);
      continue;
    }
    if (team.quotas.size() < 2 || chance(rng, 40)) continue;
    const size_t count = std::min<size_t>(team.quotas.size(), static_cast<size_t>(uniform(rng, 2, 3)));
    team.groups.resize(count);
    for (size_t i = 0; i < kCharged.size(); ++i) {  // each group covers one resource at least
      const size_t g = i < count ? i : static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(count) - 1));
      team.groups[g].covers |= covers_of(kCharged[i]);
    }
    std::vector<uint32_t> flavors;
    for (const ir::FlavorQuota& quota : team.quotas) flavors.push_back(quota.flavor);
    std::shuffle(flavors.begin(), flavors.end(), rng);
    for (size_t i = 0; i < flavors.size(); ++i) {
      const size_t g = i < count ? i : static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(count) - 1));
      team.groups[g].flavors.push_back(flavors[i]);
    }
    for (const ir::ResourceGroup& group : team.groups) {
      for (ir::FlavorQuota& quota : team.quotas) {
        if (std::find(group.flavors.begin(), group.flavors.end(), quota.flavor) == group.flavors.end()) continue;
        for (size_t c = 0; c < ir::kColumnCount; ++c) {
          if ((group.covers >> c & 1u) != 0) continue;
          quota.nominal[c] = 0;
          quota.borrowing_limit[c] = 0;
        }
      }
    }
  }
}

/// Tasks of teams with groups take resources of several groups: more vCPUs and memory, fewer
/// instance types named (an instance type pins one group only).
std::vector<Step> group_steps(Rng& rng, std::vector<Step> steps) {
  for (Step& step : steps) {
    for (Event& event : step.events) {
      if (event.kind != Event::Kind::submit || !chance(rng, 50)) continue;
      gov::Task& task = event.task;
      if (task.instances || !task.pod_sets.empty()) continue;
      task.amounts[static_cast<size_t>(gov::Resource::vcpu)] = uniform(rng, 1, 8) * 1000;
      task.amounts[static_cast<size_t>(gov::Resource::memory)] = uniform(rng, 1, 4) * 16384;
      if (chance(rng, 50)) task.instance_type.reset();
    }
  }
  return steps;
}

}  // namespace

TEST_CASE("random modules with resource groups keep every invariant and decide alike in both back ends",
          "[engine][property][groups]") {
  Rng rng(20261129);
  int grouped_admissions = 0;
  int split_admissions = 0;  // on two instance types at once
  int grouped_preempted = 0;
  int grouped_preemptors = 0;
  for (int round = 0; round < 16; ++round) {
    ir::Module m = random_module(rng);
    if (chance(rng, 30)) add_random_partitions(rng, m);
    add_random_groups(rng, m, /*one=*/false);
    std::vector<Step> steps = group_steps(rng, random_steps(rng, m, 400));
    if (chance(rng, 30)) steps = pod_set_steps(rng, m, std::move(steps), /*one=*/false);
    INFO("round " << round);
    const std::vector<Decision> reference = decide_in_every_engine(m, steps);
    std::set<std::string> grouped_teams;
    for (const ir::Team& team : m.teams) {
      if (!team.groups.empty()) grouped_teams.insert(team.name);
    }
    for (const Decision& d : reference) {
      if (grouped_teams.count(d.team) == 0) continue;
      if (d.outcome == Outcome::admitted) {
        ++grouped_admissions;
        bool several = false;
        for (const PodSetAdmission& p : d.pod_sets) several = several || p.flavor != d.flavor;
        split_admissions += several;
        if (!d.pod_sets.empty()) CHECK(d.pod_sets.front().flavor == d.flavor);
      }
      grouped_preempted += d.outcome == Outcome::preempted;
      grouped_preemptors += d.outcome == Outcome::pending && d.reason == PendingReason::waiting_for_preemption;
    }
  }
  // The streams exercise groups: admissions across instance types, preemptions of and by them.
  WARN(grouped_admissions << " admissions, " << split_admissions << " on several types, " << grouped_preempted
                          << " preempted, " << grouped_preemptors << " preemptors in teams with groups");
  CHECK(grouped_admissions > 100);
  CHECK(split_admissions > 20);
  CHECK(grouped_preempted > 5);
  CHECK(grouped_preemptors > 5);
}

TEST_CASE("a team with one resource group covering everything decides as the team without groups",
          "[engine][property][groups]") {
  Rng rng(20261130);
  for (int round = 0; round < 6; ++round) {
    const ir::Module plain = random_module(rng);
    ir::Module grouped = plain;
    add_random_groups(rng, grouped, /*one=*/true);
    const std::vector<Step> steps = random_steps(rng, plain, 300);
    INFO("round " << round);
    const std::vector<Decision> expected = run_checked(plain, steps, /*self_check=*/true);
    std::vector<Decision> actual = run_checked(grouped, steps, /*self_check=*/true);
    for (Decision& d : actual) d.pod_sets.clear();  // the one group's entry, `main` on `flavor`
    INFO(first_difference(expected, actual));
    REQUIRE(expected.size() == actual.size());
    CHECK(expected == actual);
  }
}

// Seed 20261130's second module (4 teams on one instance type, fair sharing): at one instant a
// preemptor of team-2 reserves its request, and team-3's head, whose targets overlapped its
// victims, is searched again and reclaims from team-2, which borrows only through that
// reservation. Kueue's updateAssignmentIfNeeded searches the snapshot after the earlier
// preemptor's AddUsage, so the victim is right; the self-check compared it with the usage at the
// cycle's start and reported it.
TEST_CASE("a search recomputed mid-cycle is checked against the usage it saw", "[engine][property]") {
  Rng rng(20261130);
  ir::Module m = random_module(rng);
  ir::Module grouped = m;
  add_random_groups(rng, grouped, /*one=*/true);
  (void)random_steps(rng, m, 300);
  m = random_module(rng);
  grouped = m;
  add_random_groups(rng, grouped, /*one=*/true);
  const std::vector<Step> steps = random_steps(rng, m, 300);
  const std::vector<Decision> decisions = run_checked(m, steps, /*self_check=*/true);
  // The instant of the finding: t136 of team-2 is reclaimed by t143 of team-3.
  const bool reclaimed = std::any_of(decisions.begin(), decisions.end(), [](const Decision& d) {
    return d.task == "t136" && d.outcome == Outcome::preempted && d.by == "t143";
  });
  CHECK(reclaimed);
}

namespace {

/// Puts the teams of `m` in a random tree of cohorts (docs/semantics.md §2, "Cohort trees"): 2 to
/// 6 cohorts, one or two roots, each cohort under an earlier one; some cohorts with quotas of
/// their own, non-roots with random borrowing and lending limits; weights 0, 0.5, 1 or 2 for
/// cohorts and teams; every team in a random cohort. As the checker requires of a tree: no
/// idle-resource sharing, no flat cohort quota.
void add_random_tree(Rng& rng, ir::Module& m) {
  const int count = static_cast<int>(uniform(rng, 2, 6));
  const auto weight = [&rng] { return static_cast<int64_t>(uniform(rng, 0, 4)) * model::kWeightScale / 2; };
  for (int c = 0; c < count; ++c) {
    ir::CohortNode& cohort = m.cohorts.emplace_back();
    cohort.name = fmt::format("cohort-{}", c);
    cohort.parent = c == 0 || (c == 1 && chance(rng, 20)) ? -1 : static_cast<int32_t>(uniform(rng, 0, c - 1));
    cohort.fair_share_weight_micros = chance(rng, 30) ? model::kWeightScale : weight();
    for (uint32_t f = 0; f < m.flavors.size(); ++f) {
      if (!chance(rng, 40)) continue;
      const ir::Resources nominal = instances(m.flavors[f], uniform(rng, 1, 3));
      ir::Resources borrowing = unlimited();
      ir::Resources lending = unlimited();
      if (cohort.parent >= 0 && chance(rng, 30)) borrowing = random_limit(rng, nominal);
      if (cohort.parent >= 0 && chance(rng, 20)) {
        for (size_t i = 0; i < ir::kResourceCount; ++i) lending[i] = nominal[i] / 2;
      }
      cohort.quotas.push_back(make_quota(f, nominal, borrowing, lending));
    }
  }
  for (ir::Team& team : m.teams) {
    team.cohort = static_cast<int32_t>(uniform(rng, 0, count - 1));
    team.fair_share_weight_micros = weight();
  }
  m.settings.idle_resource_sharing = false;
  m.cohort_quotas.clear();
}

}  // namespace

TEST_CASE("random trees of cohorts under fair sharing keep every invariant and decide alike in both back ends",
          "[engine][property][hier][fairtree]") {
  Rng rng(20261201);
  int tree_preemptions = 0;  // fair-sharing preemptions across cohorts
  int preemptions = 0;
  for (int round = 0; round < 40; ++round) {
    ir::Module m = random_module(rng);
    if (chance(rng, 20)) add_random_partitions(rng, m);
    add_random_tree(rng, m);
    m.settings.fair_sharing = chance(rng, 85);
    std::vector<Step> steps = random_steps(rng, m, 350);
    if (chance(rng, 20)) steps = pod_set_steps(rng, m, std::move(steps), /*one=*/false);
    INFO("round " << round);
    const std::vector<Decision> reference = decide_in_every_engine(m, steps);
    std::map<std::string, int32_t> cohort_of;
    for (const ir::Team& team : m.teams) cohort_of[team.name] = team.cohort;
    std::map<std::string, std::string> team_of;
    for (const Decision& d : reference) team_of[d.task] = d.team;
    for (const Decision& d : reference) {
      if (d.outcome != Outcome::preempted || !m.settings.fair_sharing) continue;
      ++preemptions;
      tree_preemptions += d.kind == PreemptionKind::fair_sharing && cohort_of[team_of[d.by]] != cohort_of[d.team];
    }
  }
  // The streams exercise the tree search: preemptions by shares compared above the team level.
  WARN(preemptions << " preemptions under fair sharing, " << tree_preemptions << " by shares across cohorts");
  CHECK(preemptions > 150);
  CHECK(tree_preemptions > 30);
}

}  // namespace gov::engine::test
