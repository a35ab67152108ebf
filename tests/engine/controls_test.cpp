// Kueue's controls in the engine: flavor fungibility (docs/kueue-reference.md §4.4:
// shouldTryNextFlavor under every combination of whenCanBorrow / whenCanPreempt, isPreferred under
// both preferences), an assignment that must still preempt although its flavor was chosen as a fit,
// and explanations under lower-or-newer-equal-priority. The corpus (tests/corpus/flavor-*.gov,
// within-team-policies.gov and the others) shows the controls through whole decisions.
#include <algorithm>
#include <catch2/catch.hpp>

#include "runtime/engine/flavor_assigner.hpp"
#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

ir::Team team_with(ir::WhenCanBorrow borrow, ir::WhenCanPreempt preempt) {
  ir::Team team;
  team.when_can_borrow = borrow;
  team.when_can_preempt = preempt;
  return team;
}

constexpr GranularMode kNoFit{FitMode::no_fit, 0};
constexpr GranularMode kNoCandidates{FitMode::no_candidates, 0};
constexpr GranularMode kPreempt{FitMode::preempt, 0};
constexpr GranularMode kPreemptBorrowing{FitMode::preempt, 1};
constexpr GranularMode kReclaim{FitMode::reclaim, 0};
constexpr GranularMode kFit{FitMode::fit, 0};
constexpr GranularMode kFitBorrowing{FitMode::fit, 1};

}  // namespace

TEST_CASE("Kueue's default fungibility stops only at a fit, even a borrowing one",
          "[engine][fungibility]") {
  const ir::Team team;  // when-can-borrow = borrow, when-can-preempt = try-next-flavor
  CHECK(should_try_next_flavor(kNoFit, team));
  CHECK(should_try_next_flavor(kNoCandidates, team));
  CHECK(should_try_next_flavor(kPreempt, team));
  CHECK(should_try_next_flavor(kReclaim, team));
  CHECK(should_try_next_flavor(kPreemptBorrowing, team));
  CHECK_FALSE(should_try_next_flavor(kFitBorrowing, team));
  CHECK_FALSE(should_try_next_flavor(kFit, team));
}

TEST_CASE("when-can-borrow = try-next-flavor looks past a borrowing fit", "[engine][fungibility]") {
  const ir::Team team =
      team_with(ir::WhenCanBorrow::try_next_flavor, ir::WhenCanPreempt::try_next_flavor);
  CHECK(should_try_next_flavor(kFitBorrowing, team));
  CHECK(should_try_next_flavor(kPreempt, team));
  CHECK_FALSE(should_try_next_flavor(kFit, team));
}

TEST_CASE("when-can-preempt = preempt stops where preemption makes room", "[engine][fungibility]") {
  const ir::Team team = team_with(ir::WhenCanBorrow::borrow, ir::WhenCanPreempt::preempt);
  CHECK_FALSE(should_try_next_flavor(kPreempt, team));
  CHECK_FALSE(should_try_next_flavor(kReclaim, team));
  CHECK_FALSE(should_try_next_flavor(kPreemptBorrowing, team));
  CHECK(should_try_next_flavor(kNoCandidates, team));  // no targets: nothing to stop for
  CHECK(should_try_next_flavor(kNoFit, team));
  // A preemption that also borrows still looks further when borrowing does.
  const ir::Team both = team_with(ir::WhenCanBorrow::try_next_flavor, ir::WhenCanPreempt::preempt);
  CHECK(should_try_next_flavor(kPreemptBorrowing, both));
  CHECK_FALSE(should_try_next_flavor(kPreempt, both));
}

TEST_CASE("preferences rank modes and borrowing in opposite orders", "[engine][fungibility]") {
  using P = ir::FlavorPreference;
  for (P p : {P::borrowing_over_preemption, P::preemption_over_borrowing}) {
    INFO(ir::flavor_preference_name(p));
    // Under both: anything beats no fit, viable modes beat "no candidates".
    CHECK(is_preferred(kNoCandidates, kNoFit, p));
    CHECK_FALSE(is_preferred(kNoFit, kNoCandidates, p));
    CHECK(is_preferred(kPreemptBorrowing, kNoCandidates, p));
    CHECK(is_preferred(kReclaim, kPreempt, p));   // same borrowing: reclaim over in-team preemption
    CHECK(is_preferred(kFit, kFitBorrowing, p));  // same mode: less borrowing
    CHECK_FALSE(is_preferred(kFit, kFit, p));     // ties keep the first
  }
  CHECK(is_preferred(kFitBorrowing, kPreempt, P::borrowing_over_preemption));
  CHECK_FALSE(is_preferred(kPreempt, kFitBorrowing, P::borrowing_over_preemption));
  CHECK(is_preferred(kPreempt, kFitBorrowing, P::preemption_over_borrowing));
  CHECK_FALSE(is_preferred(kFitBorrowing, kPreempt, P::preemption_over_borrowing));
  // The two-argument form is the default preference.
  CHECK(is_preferred(kFitBorrowing, kPreempt));
}

// Under preemption over borrowing the representative mode of a flavor is its least preferred
// resource mode, so a flavor whose GPUs fit by borrowing and whose vCPUs need preemption is
// chosen like a borrowing fit (Kueue does the same). It must still preempt before admission:
// under both preferences x1 preempts x0 and runs only in the next cycle.
TEST_CASE("a flavor chosen as a borrowing fit still preempts where a resource needs it",
          "[engine][fungibility]") {
  for (ir::FlavorPreference preference : {ir::FlavorPreference::borrowing_over_preemption,
                                          ir::FlavorPreference::preemption_over_borrowing}) {
    INFO(ir::flavor_preference_name(preference));
    ir::Module m;
    m.cluster = "mixed";
    m.strings = {""};
    m.flavors.push_back(make_flavor("f0", amounts(1, 0, 4000), 4));
    ir::Resources no_vcpu_borrowing = unlimited();
    no_vcpu_borrowing[ir::index(ir::Resource::vcpu)] = 0;
    ir::Team x = make_team("x", {make_quota(0, amounts(2, 0, 8000), no_vcpu_borrowing)});
    x.when_can_borrow = ir::WhenCanBorrow::try_next_flavor;
    x.when_can_preempt = ir::WhenCanPreempt::try_next_flavor;
    x.flavor_preference = preference;
    m.teams.push_back(x);
    m.teams.push_back(make_team("y", {make_quota(0, amounts(2, 0, 8000), unlimited())}));
    m.classes = {{"low", 10}, {"high", 90}};
    m.settings.fair_sharing = false;
    Harness h(std::move(m), EngineOptions{.self_check = true});
    h.submit(0, TaskBuilder("x0", "x").vcpu_millis(8000).priority("low"));
    const std::vector<Decision> out =
        h.submit(1, TaskBuilder("x1", "x").gpus(3).vcpu_millis(4000).priority("high"));
    CHECK(ids_with(out, Outcome::preempted) == std::vector<std::string>{"x0"});
    const Decision* last = last_for(out, "x1");
    REQUIRE(last != nullptr);
    CHECK(last->outcome == Outcome::admitted);
    CHECK(h.engine->self_check_failures().empty());
  }
}

TEST_CASE("explain says why an equal-priority task is spared under lower-or-newer-equal-priority",
          "[engine]") {
  ir::Module m = gpu_module({{"a", 2, 0}});
  m.teams[0].within_team = ir::WithinTeam::lower_or_newer_equal_priority;
  Harness h(std::move(m));
  h.submit(0, TaskBuilder("old", "a").gpus(2).priority("mid"));
  h.submit(5, TaskBuilder("new", "a").gpus(1).priority("mid"));
  const std::optional<Explanation> e = h.engine->explain("new");
  REQUIRE(e.has_value());
  REQUIRE(e->candidates.size() == 1);
  CHECK(e->candidates[0].why ==
        "priority 50 equals the task's, and it was not submitted in a later second (Kueue compares creation times in whole "
        "seconds)");
}

}  // namespace gov::engine::test
