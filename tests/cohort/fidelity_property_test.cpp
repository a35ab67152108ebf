// Multi-step fidelity (issue 20): random traces of 2,000 events on every example policy
// (policies/examples), as written (fair sharing) and with classical preemption (`idle-compute =
// fcfs`). After every event the engine's state satisfies Kueue's invariants (usage within nominal
// + borrowing limit, the cohort within its quota, states consistent) and, under classical
// preemption, a preemptor's victims come in Kueue's candidate order (docs/kueue-reference.md §5.4:
// other teams' tasks first, then lower priority, then more recently admitted, ties by id). Each
// trace is then replayed from the state exported at a random instant (Engine::export_state into a
// fresh engine's load_state), which must give the rest of the decision stream byte for byte.
// On trees of cohorts, Kueue's tree invariants are recomputed from the IR after every event
// (tree_violations). Beside each run a self-checking interpreter engine decides the same trace: every decision must
// be the same, and its self-check must pass after every event, which includes fill-back's
// contract (a preemptor's victims make room for it, and it would not fit were any one of them
// given back: the minimal set). Parked tasks come back only as docs/semantics.md §3.2 says:
// a parked task leaves the parked state only in a step with a finish, a cancel or an eviction,
// and gets a new decision only when something it depends on changed (see parked_violations).
// GOV_FIDELITY_ROUNDS=N runs N traces per policy and variant instead of 1 (a longer mode).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/ir/module.hpp"
#include "gov/engine.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "tests/engine/engine_test_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using Rng = std::mt19937_64;
constexpr gov::Time kSecond = 1000;

int64_t uniform(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool chance(Rng& rng, int percent) { return uniform(rng, 0, 99) < percent; }

struct TraceStep {
  gov::Time at = 0;
  std::vector<gov::Event> events;
};

/// Tasks the policy's teams could run: a class or none, an instance type of the team or none,
/// GPUs (or partitions where the policy has them), sometimes vCPUs, a duration now and then.
gov::Task random_task(Rng& rng, const gov::ir::Module& m, int serial) {
  const gov::ir::Team& team = m.teams[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.teams.size()) - 1))];
  gov::Task task;
  task.id = fmt::format("t{}", serial);
  task.team = team.name;
  if (!m.classes.empty() && chance(rng, 75)) {
    task.priority = m.classes[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.classes.size()) - 1))].name;
  }
  if (!team.quotas.empty() && chance(rng, 50)) {
    const auto& q = team.quotas[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(team.quotas.size()) - 1))];
    task.instance_type = m.flavors[q.flavor].name;
  }
  if (!m.partitions.empty() && chance(rng, 50)) {
    task.partitions.emplace_back(m.partitions[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(m.partitions.size()) - 1))],
                                 uniform(rng, 1, 3));
  } else {
    task.set(gov::Resource::gpu, uniform(rng, 1, 6));
  }
  if (chance(rng, 30)) task.set(gov::Resource::vcpu, uniform(rng, 1, 16) * 1000);
  if (chance(rng, 50)) task.duration = uniform(rng, 1, 120) * kSecond;
  return task;
}

std::vector<TraceStep> random_trace(Rng& rng, const gov::ir::Module& m, int event_count) {
  std::vector<TraceStep> steps;
  std::vector<std::string> ids;
  gov::Time at = 0;
  for (int serial = 0; serial < event_count; ++serial) {
    if (steps.empty() || chance(rng, 75)) {
      at += chance(rng, 20) ? 0 : uniform(rng, 1, 30) * kSecond;
      if (steps.empty() || steps.back().at != at) steps.push_back({at, {}});
    }
    std::vector<gov::Event>& events = steps.back().events;
    if (ids.empty() || chance(rng, 60)) {
      events.push_back(gov::Event::submit(random_task(rng, m, serial)));
      ids.push_back(events.back().task.id);
    } else {
      const std::string& id = ids[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(ids.size()) - 1))];
      events.push_back(chance(rng, 75) ? gov::Event::finish(id) : gov::Event::cancel(id));
    }
  }
  return steps;
}

/// Usage within nominal + borrowing limit, the cohort within its quota, every live task listed
/// once in one state. Returns what is wrong (empty when nothing is): one CHECK per event keeps the
/// run fast.
std::string invariant_violations(const gov::Snapshot& s) {
  std::string out;
  for (const gov::UsageRow& row : s.usage) {
    const std::string where = fmt::format("{} {} resource {}{}", row.team, row.flavor, static_cast<int>(row.resource), row.partition);
    if (row.used < 0) out += fmt::format("{}: used {} < 0\n", where, row.used);
    if (row.borrowing_limit != gov::kUnlimited && row.used > row.nominal + row.borrowing_limit) {
      out += fmt::format("{}: used {} > nominal {} + borrowing limit {}\n", where, row.used, row.nominal, row.borrowing_limit);
    }
    if (row.borrowed != std::max<int64_t>(0, row.used - row.nominal)) out += fmt::format("{}: borrowed {}\n", where, row.borrowed);
  }
  for (const gov::CohortRow& row : s.cohort) {
    if (row.used > row.quota) out += fmt::format("cohort {} resource {}: used {} > quota {}\n", row.flavor,
                                                 static_cast<int>(row.resource), row.used, row.quota);
  }
  std::set<std::string> ids;
  for (const gov::TaskRow& row : s.tasks) {
    if (!ids.insert(row.id).second) out += fmt::format("task {} listed twice\n", row.id);
    if (row.admitted_at.has_value() != (row.state == gov::TaskState::admitted)) out += fmt::format("task {} admitted_at\n", row.id);
    if (row.parked && row.state != gov::TaskState::pending) out += fmt::format("task {} parked but not pending\n", row.id);
  }
  return out;
}

/// Kueue's tree invariants (resource_node.go; docs/kueue-reference.md §2), recomputed here from
/// the IR and the snapshot's team usage as an independent check of the engine's QuotaState: per
/// flavor and column, a node's guaranteed (local) quota is max(0, subtree quota − lending limit)
/// (0 without a lending limit); a cohort's subtree quota is its own quota plus its children's
/// subtree quota less their guaranteed part, its usage its children's usage past their guaranteed
/// part. Then every node (team or cohort) has available() >= 0: a root's usage within its subtree
/// quota, and below it the usage within the subtree quota plus what the borrowing limit lets it take
/// from its parent, and the parent's own the same. The snapshot's cohort rows (the roots' sums)
/// must equal the recomputed roots. Empty for a module without a tree.
std::string tree_violations(const gov::ir::Module& m, const gov::Snapshot& s) {
  if (m.cohorts.empty()) return {};
  using Columns = gov::ir::Resources;
  const size_t teams = m.teams.size(), nodes = teams + m.cohorts.size(), flavors = m.flavors.size();
  const auto cell = [flavors](size_t node, size_t flavor) { return node * flavors + flavor; };
  std::vector<Columns> subtree(nodes * flavors, Columns{}), usage(nodes * flavors, Columns{});
  std::vector<Columns> lending(nodes * flavors, gov::ir::unlimited_columns());
  std::vector<Columns> borrowing(nodes * flavors, gov::ir::unlimited_columns());
  std::vector<int64_t> parent(nodes, -1);  // node index: teams first, then cohorts
  std::vector<size_t> depth(nodes, 0);
  const auto declare = [&](size_t node, const gov::ir::FlavorQuota& q) {
    subtree[cell(node, q.flavor)] = q.nominal;
    lending[cell(node, q.flavor)] = q.lending_limit;
    borrowing[cell(node, q.flavor)] = q.borrowing_limit;
  };
  for (size_t t = 0; t < teams; ++t) {
    parent[t] = m.teams[t].cohort < 0 ? -1 : static_cast<int64_t>(teams) + m.teams[t].cohort;
    for (const gov::ir::FlavorQuota& q : m.teams[t].quotas) declare(t, q);
  }
  for (size_t c = 0; c < m.cohorts.size(); ++c) {
    parent[teams + c] = m.cohorts[c].parent < 0 ? -1 : static_cast<int64_t>(teams) + m.cohorts[c].parent;
    for (const gov::ir::FlavorQuota& q : m.cohorts[c].quotas) declare(teams + c, q);
  }
  for (size_t n = 0; n < nodes; ++n) {
    for (int64_t p = parent[n]; p >= 0 && depth[n] <= nodes; p = parent[static_cast<size_t>(p)]) ++depth[n];
  }
  std::map<std::string, size_t> team_index, flavor_index;
  for (size_t t = 0; t < teams; ++t) team_index[m.teams[t].name] = t;
  for (size_t f = 0; f < flavors; ++f) flavor_index[m.flavors[f].name] = f;
  const auto column = [&m](gov::Resource r, const std::string& partition) {
    if (partition.empty()) return gov::ir::index(r);
    const auto at = std::find(m.partitions.begin(), m.partitions.end(), partition);
    return gov::kResourceCount + static_cast<size_t>(at - m.partitions.begin());
  };
  std::string out;
  for (const gov::UsageRow& row : s.usage) {
    const size_t i = column(row.resource, row.partition);
    if (i >= gov::ir::kColumnCount) {
      out += fmt::format("team {}: unknown partition {}\n", row.team, row.partition);
      continue;
    }
    usage[cell(team_index.at(row.team), flavor_index.at(row.flavor))][i] = row.used;
  }
  const auto guaranteed = [&](size_t k, size_t i) {
    return lending[k][i] == gov::kUnlimited ? 0 : std::max<int64_t>(0, subtree[k][i] - lending[k][i]);
  };
  // Children before parents: deepest first.
  std::vector<size_t> order(nodes);
  for (size_t n = 0; n < nodes; ++n) order[n] = n;
  std::stable_sort(order.begin(), order.end(), [&depth](size_t a, size_t b) { return depth[a] > depth[b]; });
  for (size_t n : order) {
    if (parent[n] < 0) continue;
    for (size_t f = 0; f < flavors; ++f) {
      const size_t k = cell(n, f), into = cell(static_cast<size_t>(parent[n]), f);
      for (size_t i = 0; i < gov::ir::kColumnCount; ++i) {
        subtree[into][i] += subtree[k][i] - guaranteed(k, i);
        usage[into][i] += std::max<int64_t>(0, usage[k][i] - guaranteed(k, i));
      }
    }
  }
  // Kueue's available(node) for one flavor and column, from the root down.
  const auto available = [&](size_t n, size_t f, size_t i) {
    int64_t result = 0;
    std::vector<size_t> path;
    for (int64_t p = static_cast<int64_t>(n); p >= 0; p = parent[static_cast<size_t>(p)]) path.push_back(static_cast<size_t>(p));
    for (size_t j = path.size(); j-- > 0;) {
      const size_t k = cell(path[j], f);
      if (j + 1 == path.size()) {
        result = subtree[k][i] - usage[k][i];
        continue;
      }
      const int64_t g = guaranteed(k, i);
      int64_t from_parent = result;
      if (borrowing[k][i] != gov::kUnlimited) {
        from_parent = std::min(from_parent, subtree[k][i] - g - std::max<int64_t>(0, usage[k][i] - g) + borrowing[k][i]);
      }
      result = std::max<int64_t>(0, g - usage[k][i]) + from_parent;
    }
    return result;
  };
  const auto name = [&](size_t n) { return n < teams ? "team " + m.teams[n].name : "cohort " + m.cohorts[n - teams].name; };
  std::map<std::pair<size_t, size_t>, std::pair<int64_t, int64_t>> roots;  // (flavor, column) -> quota, used
  for (size_t n = 0; n < nodes; ++n) {
    for (size_t f = 0; f < flavors; ++f) {
      for (size_t i = 0; i < gov::ir::kColumnCount; ++i) {
        const size_t k = cell(n, f);
        if (usage[k][i] != 0 && available(n, f, i) < 0) {
          out += fmt::format("{} {} column {}: usage {} past what the tree allows (available {})\n", name(n), m.flavors[f].name, i,
                             usage[k][i], available(n, f, i));
        }
        if (n >= teams && parent[n] < 0) {
          roots[{f, i}].first += subtree[k][i] - guaranteed(k, i);
          roots[{f, i}].second += usage[k][i];
        }
      }
    }
  }
  for (const gov::CohortRow& row : s.cohort) {
    const auto at = roots.find({flavor_index.at(row.flavor), column(row.resource, row.partition)});
    if (at == roots.end()) continue;
    if (at->second != std::pair<int64_t, int64_t>{row.quota, row.used}) {
      out += fmt::format("cohort row {} resource {}{}: quota {} used {}, the roots recomputed: quota {} used {}\n", row.flavor,
                         static_cast<int>(row.resource), row.partition, row.quota, row.used, at->second.first, at->second.second);
    }
  }
  return out;
}

/// What the candidate order reads of a task: its team and priority.
struct Known {
  std::string team;
  int32_t priority = 0;
};

/// Kueue's candidate order (docs/kueue-reference.md §5.4) for the victims of one search, the
/// preempted decisions one preemptor gets in a row: other teams' tasks before the preemptor's
/// own, then lower priority, then more recently admitted, then id. Admissions are followed in
/// decision order, since a task admitted earlier in the step may be a victim later in it. Returns
/// what is out of order.
std::string victim_order_violations(const gov::Step& step, const std::map<std::string, Known>& known,
                                    std::map<std::string, gov::Time>& admitted_at, size_t& groups) {
  std::string out;
  using Key = std::tuple<int, int32_t, gov::Time, std::string>;
  std::string by;
  std::vector<std::pair<std::string, Key>> group;
  const auto close = [&] {
    for (size_t i = 1; i < group.size(); ++i) {
      if (group[i].second < group[i - 1].second) {
        out += fmt::format("preemptor {}: victim {} before {}\n", by, group[i - 1].first, group[i].first);
      }
    }
    groups += group.size() > 1;
    group.clear();
  };
  for (const gov::Decision& d : step.decisions) {
    if (d.outcome != gov::Outcome::preempted || d.by != by) close();
    if (d.outcome == gov::Outcome::admitted) admitted_at[d.task] = d.at;
    if (d.outcome != gov::Outcome::preempted) {
      by.clear();
      continue;
    }
    by = d.by;
    const Known& k = known.at(d.task);
    const auto admitted = admitted_at.find(d.task);
    if (admitted == admitted_at.end()) {
      out += fmt::format("victim {} was never admitted\n", d.task);
      continue;
    }
    group.emplace_back(d.task, Key{k.team == known.at(d.by).team ? 1 : 0, k.priority, -admitted->second, d.task});
  }
  close();
  return out;
}

/// The decisions as the stream prints them, without the engine step numbers (a fresh engine
/// counts its own).
std::vector<std::string> stream_of(const std::vector<gov::Decision>& decisions) {
  std::vector<std::string> out;
  for (gov::Decision d : decisions) {
    d.sequence = 0;
    out.push_back(gov::to_json(d));
  }
  return out;
}

struct Counts {
  size_t events = 0, preemptions = 0, admissions = 0, ordered_groups = 0, replayed = 0, parked_decided = 0;
};

/// What a step changed that a parked task's nomination may depend on: the instance types whose
/// usage changed (a task admitted on, or releasing, a type), the teams whose queue or usage
/// changed, and whether it released anything at all.
struct StepChanges {
  std::set<std::string> types;
  std::set<std::string> teams;
  bool releases = false;  // a finish, a cancel or an eviction: parked tasks come back
  bool time_moved_past_preemption = false;  // a task preempted at an earlier instant is a candidate again

  void add(const StepChanges& other) {
    types.insert(other.types.begin(), other.types.end());
    teams.insert(other.teams.begin(), other.teams.end());
    releases = releases || other.releases;
    time_moved_past_preemption = time_moved_past_preemption || other.time_moved_past_preemption;
  }
};

/// The instance types an admitted decision holds.
std::set<std::string> held_types(const gov::Decision& d) {
  std::set<std::string> out;
  if (!d.flavor.empty()) out.insert(d.flavor);
  for (const gov::PodSetAdmission& p : d.pod_sets) out.insert(p.flavor);
  return out;
}

StepChanges changes_of(const gov::Step& step, const std::map<std::string, Known>& known,
                       std::map<std::string, std::set<std::string>>& holding) {
  StepChanges out;
  for (const gov::Decision& d : step.decisions) {
    switch (d.outcome) {
      case gov::Outcome::admitted:
        holding[d.task] = held_types(d);
        out.types.insert(holding[d.task].begin(), holding[d.task].end());
        out.teams.insert(d.team);
        break;
      case gov::Outcome::preempted:
      case gov::Outcome::finished:
      case gov::Outcome::cancelled:
        out.releases = true;
        out.teams.insert(known.at(d.task).team);
        if (const auto held = holding.find(d.task); held != holding.end()) {
          out.types.insert(held->second.begin(), held->second.end());
          holding.erase(held);
        }
        break;
      default:
        break;
    }
  }
  return out;
}

/// The instance types a task may be admitted on: its own, else its team's quotas' (a team with
/// resource groups: all of them, since a pinned type pins one group only).
std::set<std::string> usable_types(const gov::Task& task, const gov::ir::Module& m) {
  const int32_t team = m.team_index(task.team);
  std::set<std::string> out;
  if (team < 0) return out;
  const gov::ir::Team& t = m.teams[static_cast<size_t>(team)];
  if (task.instance_type && t.groups.empty()) return {*task.instance_type};
  for (const auto& q : t.quotas) out.insert(m.flavors[q.flavor].name);
  return out;
}

/// docs/semantics.md §3.2 for the tasks parked when the step began (`parked_before`, each with
/// what changed since its last decision, this step included): one leaves the parked state (still
/// pending, not parked after) only in a step that released something, and gets a pending or
/// admitted decision only when, since its last decision, a type it may use changed, its own team's
/// queue or usage changed, or time moved on from an instant with a preemption (a task preempted
/// then is a candidate again). Under fair sharing a team's share depends on its usage in every
/// type, so there any usage change counts.
std::string parked_violations(const gov::Step& step, const StepChanges& changes,
                              const std::map<std::string, StepChanges>& parked_before, const gov::Snapshot& after,
                              bool fair_sharing, const std::map<std::string, std::set<std::string>>& usable,
                              const std::map<std::string, Known>& known, size_t& decided) {
  std::string out;
  for (const gov::TaskRow& row : after.tasks) {
    if (!parked_before.contains(row.id) || row.state != gov::TaskState::pending || row.parked) continue;
    if (!changes.releases) out += fmt::format("parked task {} came back in a step that released nothing\n", row.id);
  }
  for (const gov::Decision& d : step.decisions) {
    const auto parked = parked_before.find(d.task);
    if (parked == parked_before.end()) continue;
    if (d.outcome != gov::Outcome::pending && d.outcome != gov::Outcome::admitted) continue;
    ++decided;
    // What changed since the task's last decision: it is decided again only when it comes back,
    // so a change some steps ago shows in the decision that follows the next release.
    const StepChanges& since = parked->second;
    bool reason = since.time_moved_past_preemption || since.teams.contains(known.at(d.task).team);
    if (fair_sharing) reason = reason || !since.types.empty();
    for (const std::string& type : usable.at(d.task)) reason = reason || since.types.contains(type);
    if (!reason) out += fmt::format("parked task {} got a new decision ({}) though nothing it depends on changed\n", d.task,
                                    d.message);
  }
  return out;
}

void run_trace(gov::Engine& engine, const std::vector<TraceStep>& steps, bool classical, Rng& rng, Counts& counts) {
  const std::shared_ptr<const gov::ir::Module> m = gov::EngineInternals::module(engine);
  gov::engine::EngineOptions checking;
  checking.self_check = true;
  gov::engine::test::Harness checker(*m, checking);  // the interpreter, recomputing everything
  std::map<std::string, Known> known;
  std::map<std::string, gov::Time> admitted_at;
  std::map<std::string, std::set<std::string>> usable, holding;
  std::set<std::string> parked;
  std::map<std::string, StepChanges> since_decision;  // per task, what changed since its last decision
  gov::Time last_preemption_at = -1;
  const size_t cut = static_cast<size_t>(uniform(rng, 1, static_cast<int64_t>(steps.size()) - 1));
  std::optional<gov::ClusterState> state;
  std::vector<gov::Decision> after_cut;
  for (size_t i = 0; i < steps.size(); ++i) {
    for (const gov::Event& e : steps[i].events) {
      if (e.kind != gov::Event::Kind::submit) continue;
      const int32_t klass = e.task.priority ? m->class_index(*e.task.priority) : -1;
      known[e.task.id] = {e.task.team, m->priority_of(klass)};
      usable[e.task.id] = usable_types(e.task, *m);
    }
    const gov::Step step = engine.step(steps[i].at, steps[i].events);
    const std::vector<gov::Decision> reference = checker.engine->step(steps[i].at, steps[i].events);
    counts.events += steps[i].events.size();
    INFO("step " << i << " at " << steps[i].at << " ms");
    INFO(fmt::format("{}", fmt::join(checker.engine->self_check_failures(), "\n")));
    REQUIRE(checker.engine->self_check_failures().empty());
    REQUIRE(stream_of(reference) == stream_of(step.decisions));
    const gov::Snapshot snapshot = engine.snapshot();
    std::string wrong = invariant_violations(snapshot) + tree_violations(*m, snapshot);
    StepChanges changes = changes_of(step, known, holding);
    changes.time_moved_past_preemption = last_preemption_at >= 0 && last_preemption_at < steps[i].at;
    for (auto& [id, since] : since_decision) since.add(changes);
    std::map<std::string, StepChanges> parked_before;
    for (const std::string& id : parked) parked_before[id] = since_decision[id];
    wrong += parked_violations(step, changes, parked_before, snapshot, m->settings.fair_sharing, usable, known,
                               counts.parked_decided);
    // A task's decision says what held when it was made, which may be before later changes of
    // the same step: its changes start again from this step's.
    for (const gov::Decision& d : step.decisions) since_decision[d.task] = changes;
    parked.clear();
    for (const gov::TaskRow& row : snapshot.tasks) {
      if (row.parked) parked.insert(row.id);
    }
    for (const gov::Decision& d : step.decisions) {
      if (d.outcome == gov::Outcome::preempted) last_preemption_at = d.at;
    }
    // Victim order is the classical search's (fair sharing orders targets by share).
    const std::string order = victim_order_violations(step, known, admitted_at, counts.ordered_groups);
    if (classical) wrong += order;
    INFO(wrong);
    CHECK(wrong.empty());
    for (const gov::Decision& d : step.decisions) {
      counts.preemptions += d.outcome == gov::Outcome::preempted;
      counts.admissions += d.outcome == gov::Outcome::admitted;
    }
    if (i == cut) state = engine.export_state();
    if (i > cut) after_cut.insert(after_cut.end(), step.decisions.begin(), step.decisions.end());
  }
  // The rest of the stream, from the state at the cut, in a fresh engine of the same policy.
  REQUIRE(state.has_value());
  gov::Engine replay = engine.fresh();
  const std::vector<gov::LoadFailure> failures = replay.load_state(*state);
  REQUIRE(failures.empty());
  std::vector<gov::Decision> replayed;
  for (size_t i = cut + 1; i < steps.size(); ++i) {
    const gov::Step step = replay.step(steps[i].at, steps[i].events);
    replayed.insert(replayed.end(), step.decisions.begin(), step.decisions.end());
  }
  const std::vector<std::string> expected = stream_of(after_cut), actual = stream_of(replayed);
  size_t first = 0;
  while (first < expected.size() && first < actual.size() && expected[first] == actual[first]) ++first;
  INFO("replay from the state after step " << cut << " (t = " << steps[cut].at << " ms): first difference at decision "
                                           << first << "\n  expected: " << (first < expected.size() ? expected[first] : "(end)")
                                           << "\n  replayed: " << (first < actual.size() ? actual[first] : "(end)"));
  CHECK(expected == actual);
  ++counts.replayed;
}

}  // namespace

TEST_CASE("example policies keep Kueue's invariants over 2000 random events and replay from an exported state",
          "[cohort][property][fidelity]") {
  const char* rounds_env = std::getenv("GOV_FIDELITY_ROUNDS");
  const int rounds = rounds_env ? std::max(1, std::atoi(rounds_env)) : 1;
  Rng rng(20261126);
  Counts counts;
  gov::test::TempDir dir("fidelity");
  dir.copy_catalog();
  // The example policies, and corpus policies with what they lack: trees of cohorts (borrowing
  // and lending limits at every level, explicit cohort quotas, weights at two levels) and
  // resource groups.
  std::vector<std::string> paths = gov::test::files_under("policies/examples", ".gov");
  for (const char* corpus : {"cohort-tree.gov", "cohort-tree-quota.gov", "cohort-tree-preemption.gov",
                             "cohort-tree-fair-share.gov", "kueue-fair-tree-hierarchical.gov",
                             "kueue-hierarchical-lending.gov", "resource-groups.gov"}) {
    paths.push_back(gov::test::repo_path(std::string("tests/corpus/") + corpus));
  }
  for (const std::string& path : paths) {
    const std::string text = gov::test::read_text(path);
    const std::string name = std::filesystem::path(path).filename().string();
    // Where the copy with classical preemption goes: beside a catalog at the same relative place.
    const std::string copy_dir = path.find("tests/corpus/") != std::string::npos ? "tests/corpus/" : "policies/examples/";
    // The same policy with classical preemption (`idle-compute = fcfs`), where the candidate
    // order is Kueue's CandidatesOrdering.
    std::string classical_text = text;
    const size_t at = classical_text.find("idle-compute");
    REQUIRE(at != std::string::npos);
    const size_t end = classical_text.find('\n', at);
    classical_text.replace(at, end - at, "idle-compute = fcfs");
    const std::string classical_path = dir.write(copy_dir + name, classical_text);
    for (bool classical : {false, true}) {
      // A corpus policy runs as written (each chose its preemption); an example both ways.
      if (classical && copy_dir == "tests/corpus/") continue;
      INFO(name << (classical ? " (idle-compute = fcfs)" : " (as written)"));
      gov::Engine engine = gov::Engine::compile_file(classical ? classical_path : path);
      for (int round = 0; round < rounds; ++round) {
        INFO("round " << round);
        gov::Engine run = engine.fresh();
        const std::vector<TraceStep> steps = random_trace(rng, *gov::EngineInternals::module(run), 2000);
        run_trace(run, steps, classical, rng, counts);
      }
    }
  }
  WARN(counts.events << " events, " << counts.admissions << " admissions, " << counts.preemptions << " preemptions, "
                     << counts.ordered_groups << " searches with several victims, " << counts.replayed
                     << " replays from an exported state, " << counts.parked_decided << " new decisions of parked tasks");
  CHECK(counts.events >= 2000 * 20);
  CHECK(counts.preemptions > 100);  // the traces exercise preemption, not just admission
  CHECK(counts.parked_decided > 100);  // and parking
}
