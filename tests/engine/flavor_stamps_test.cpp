// FlavorStamps under fair sharing in a flat cohort (issue 21): a type's stamp moves when a team
// with a quota there borrows more or less, not with every change of its admitted tasks, and a
// parked head is still nominated again when a team it could take victims from borrows more in
// another type. Until a task charged in two types is admitted: then the stamps follow the teams'
// versions again.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/engine/nomination_cache.hpp"
#include "runtime/engine/quota_state.hpp"
#include "runtime/engine/task_store.hpp"
#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

constexpr uint32_t kA = 0;  // ml.a: GPUs
constexpr uint32_t kB = 1;  // ml.b: memory only
constexpr uint32_t kC = 2;  // ml.c: one GPU of team z

constexpr uint32_t kP = 0;
constexpr uint32_t kQ = 1;
constexpr uint32_t kY = 2;
constexpr uint32_t kL = 3;
constexpr uint32_t kZ = 4;

constexpr ir::Amount kGiB = 1024;  // MiB

/// Fair sharing in one flat cohort. ml.a: p holds 2 GPUs, q 4, y none (it borrows); ml.b: l
/// holds 1,000 GiB of memory, y none; ml.c: z holds 1 GPU. So the cohort lends 7 GPUs and
/// 1,000 GiB: y borrowing 2 GPUs has a share of 285.7, 400 GiB of memory one of 400.
ir::Module stamps_module() {
  ir::Module m;
  m.cluster = "stamps";
  m.strings = {""};
  m.flavors.push_back(make_flavor("ml.a", amounts(1, 0, 0, 8 * kGiB), 6));
  m.flavors.push_back(make_flavor("ml.b", amounts(0, 0, 0, 100 * kGiB), 10));
  m.flavors.push_back(make_flavor("ml.c", gpus(1), 1));
  const auto team = [&m](std::string name, std::vector<ir::FlavorQuota> quotas) {
    ir::Team t = make_team(std::move(name), std::move(quotas));
    t.within_team = ir::WithinTeam::lower_priority;
    t.fair_share_weight_micros = model::kWeightScale;
    m.teams.push_back(t);
  };
  team("p", {make_quota(kA, gpus(2), unlimited())});
  team("q", {make_quota(kA, gpus(4), unlimited())});
  team("y", {make_quota(kA, gpus(0), unlimited()), make_quota(kB, amounts(0), unlimited())});
  team("l", {make_quota(kB, amounts(0, 0, 0, 1000 * kGiB), unlimited())});
  team("z", {make_quota(kC, gpus(1), unlimited())});
  m.classes = {{"normal", 50}};
  m.settings.fair_sharing = true;
  return m;
}

std::vector<Decision> replay(bool self_check) {
  EngineOptions options;
  options.self_check = self_check;
  Harness h(stamps_module(), options);
  std::vector<Decision> all;
  const auto keep = [&all](std::vector<Decision> d) { all.insert(all.end(), d.begin(), d.end()); };
  keep(h.submit_all(0, {TaskBuilder("p0", "p").type("ml.a").gpus(2), TaskBuilder("q1", "q").type("ml.a").gpus(2),
                        TaskBuilder("y1", "y").type("ml.a").gpus(2), TaskBuilder("z1", "z").type("ml.c").gpus(1)}));
  // ml.a is full. p1 would borrow 2 GPUs (share 285.7); y's share is 285.7 too, so neither
  // strategy lets p1 take y1: it waits, parked.
  keep(h.submit(1 * kSecond, TaskBuilder("p1", "p").type("ml.a").gpus(2)));
  // y borrows 400 GiB of memory in ml.b: its share is 400 now, in ml.a too. An admission
  // brings no parked head back.
  keep(h.submit(2 * kSecond, TaskBuilder("y2", "y").type("ml.b").memory_mib(400 * kGiB)));
  // A finish in ml.c, of a team with no quota in ml.a and within its nominal, brings p1 back:
  // nominated again, it takes y1.
  keep(h.finish(3 * kSecond, "z1"));
  for (const std::string& failure : h.engine->self_check_failures()) FAIL(failure);
  return all;
}

/// Adds an admitted task to the store and its usage to the quota, charged in one flavor or, with
/// `second`, in two.
uint32_t admit(TaskStore& tasks, QuotaState& quota, uint32_t team, uint32_t flavor, const Resources& amounts,
               const ChargePart* second = nullptr) {
  Task task;
  task.id = "t" + std::to_string(tasks.size());
  task.team = static_cast<int32_t>(team);
  task.flavor = static_cast<int32_t>(flavor);
  task.request = amounts;
  task.state = TaskState::admitted;
  task.admitted_at = static_cast<Time>(tasks.size());
  if (second != nullptr) task.charge = {ChargePart{flavor, amounts}, *second};
  const uint32_t index = tasks.add(std::move(task), true);
  tasks.insert_admitted(index);
  for_each_charge(tasks[index], [&](uint32_t f, const Resources& a) { quota.add(team, f, a); });
  return index;
}

}  // namespace

TEST_CASE("a parked head is nominated again when a team it could take victims from borrows more in another type",
          "[engine][stamps]") {
  const std::vector<Decision> reference = replay(/*self_check=*/true);
  const std::vector<Decision> fast = replay(/*self_check=*/false);
  CHECK(json_lines(fast) == json_lines(reference));
  const auto preempted = std::find_if(fast.begin(), fast.end(), [](const Decision& d) {
    return d.task == "y1" && d.outcome == Outcome::preempted;
  });
  REQUIRE(preempted != fast.end());
  CHECK(preempted->at == 3 * kSecond);
  CHECK(preempted->by == "p1");
  CHECK(ids_with(fast, Outcome::admitted).back() == "p1");
}

TEST_CASE("usage and admitted lists and their versions live at the quota cells the teams declare", "[engine][stamps]") {
  // The engine's tables are per quota cell slot (ir::QuotaTable::slot), not teams × instance
  // types: 6 declared cells here, 15 pairs.
  const ir::Module m = stamps_module();
  QuotaState quota(m);
  TaskStore tasks(m.teams.size(), m.flavors.size(), quota.table().slots, std::vector<bool>(m.teams.size(), false));
  REQUIRE(quota.table().cells.size() == 7);
  const uint32_t y_in_b = quota.table().slot(kY, kB);
  REQUIRE(y_in_b != 0);
  CHECK(quota.table().slot(kY, kC) == 0);
  const uint64_t version = tasks.cell_version(kY, kB);
  const uint32_t task = admit(tasks, quota, kY, kB, amounts(0, 0, 0, 40 * kGiB));
  CHECK(tasks.admitted(kY, kB) == std::vector<uint32_t>{task});
  CHECK(tasks.cell_version(kY, kB) != version);
  CHECK(quota.usage(kY, kB, ir::Resource::memory) == 40 * kGiB);
  // The generated code and the interpreter read the row of the cell's slot.
  const ir::UsageView view = quota.usage_view();
  CHECK(view.usage[y_in_b * ir::kColumnCount + ir::index(ir::Resource::memory)] == 40 * kGiB);
  // Where the team declares nothing: no list, no version, no usage, and the shared row stays 0.
  for (uint32_t f : {kC}) {
    CHECK(tasks.admitted(kY, f).empty());
    CHECK(tasks.cell_version(kY, f) == 0);
    CHECK(quota.usage(kY, f) == Resources{});
  }
  // Taking a team's (zero) usage away where it has no quota, as the bounds do, changes nothing.
  quota.subtract(kY, kC, quota.usage(kY, kC));
  for (size_t i = 0; i < ir::kColumnCount; ++i) CHECK(view.usage[i] == 0);
}

TEST_CASE("fair-sharing stamps follow borrowed amounts until a task charged in two types is admitted",
          "[engine][stamps]") {
  const ir::Module m = stamps_module();
  QuotaState quota(m);
  TaskStore tasks(m.teams.size(), m.flavors.size(), std::vector<bool>(m.teams.size(), false));
  FlavorStamps stamps(m);
  stamps.update(tasks, quota);
  const uint64_t a = stamps[kA];
  const uint64_t local_a = stamps.local(kA);
  const uint64_t epoch = stamps.epoch();

  // q within its nominal: ml.a's usage moved (its local stamp), no team's share did.
  admit(tasks, quota, kQ, kA, gpus(2));
  stamps.update(tasks, quota);
  CHECK(stamps[kA] == a);
  CHECK(stamps.local(kA) != local_a);
  CHECK(stamps.epoch() != epoch);

  // y borrows memory in ml.b: every type y has a quota in moves, ml.c does not.
  const uint64_t c = stamps[kC];
  admit(tasks, quota, kY, kB, amounts(0, 0, 0, 400 * kGiB));
  stamps.update(tasks, quota);
  CHECK(stamps[kA] != a);
  CHECK(stamps[kC] == c);

  // A task of y charged in ml.a and ml.b: from now on the stamps follow team versions, so q
  // admitting within its nominal moves ml.a's stamp.
  const ChargePart in_b{kB, amounts(0, 0, 0, 10 * kGiB)};
  admit(tasks, quota, kY, kA, gpus(1), &in_b);
  stamps.update(tasks, quota);
  const uint64_t a_after = stamps[kA];
  admit(tasks, quota, kQ, kA, gpus(1));
  stamps.update(tasks, quota);
  CHECK(stamps[kA] != a_after);
}

}  // namespace gov::engine::test
