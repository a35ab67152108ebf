// The language surface (compiler/check/surface.hpp): every block's table is well formed, its
// choices and the enums agree word for word, the checker assigns through it, and the grammar's
// reserved words and syntax errors come from one list each.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include <tao/pegtl.hpp>

#include "compiler/check/check.hpp"
#include "compiler/check/surface.hpp"
#include "grammar/errors.hpp"
#include "grammar/rules.hpp"
#include "tests/support/test_support.hpp"

namespace check = gov::check;
namespace model = gov::model;
namespace r = gov::grammar::rules;
using check::BlockKind;

namespace {

constexpr BlockKind kBlocks[] = {BlockKind::instance,  BlockKind::cluster, BlockKind::policy,
                                 BlockKind::team,      BlockKind::quota,   BlockKind::submit,
                                 BlockKind::resources, BlockKind::amounts, BlockKind::borrow_amounts,
                                 BlockKind::borrow_within_cohort};

template <typename Target>
void check_table(const check::Table<Target>& table) {
  std::set<std::string_view> keys;
  for (const check::Property<Target>& row : table) {
    INFO("property `" << row.spec.key << "`");
    CHECK(keys.insert(row.spec.key).second);
    CHECK(row.set != nullptr);
    const bool takes_choices = row.spec.kind == check::ValueKind::choice ||
                               row.spec.kind == check::ValueKind::choice_list ||
                               row.spec.kind == check::ValueKind::choice_or_block;
    // A percentage, a block or an amount may also be a word (`borrow-limit = unlimited`,
    // `borrow-limit = { gpus = unlimited }`).
    const bool may_take_choices = row.spec.kind == check::ValueKind::percentage ||
                                  row.spec.kind == check::ValueKind::resources || row.spec.resource.has_value();
    if (!may_take_choices) CHECK(takes_choices == !row.spec.choices.empty());
    std::set<std::string_view> words;
    std::set<int> values;
    for (const check::Choice& c : row.spec.choices) {
      CHECK(words.insert(c.word).second);
      CHECK(values.insert(c.value).second);
      CHECK(row.spec.value_of(c.word) == c.value);
    }
    if (row.spec.resource) CHECK(check::resource_of(row.spec.key) == row.spec.resource);
  }
}

/// The row's choices are exactly the enum's values, each spelled as word_of spells it.
template <typename E>
void check_enum(const check::PropertySpec& spec, std::initializer_list<E> all) {
  INFO("property `" << spec.key << "`");
  CHECK(spec.choices.size() == all.size());
  for (E value : all) {
    const std::optional<int> found = spec.value_of(check::word_of(value));
    REQUIRE(found);
    CHECK(*found == static_cast<int>(value));
  }
}

const check::PropertySpec& team_row(std::string_view key) { return check::find_row(check::team_table(), key)->spec; }
const check::PropertySpec& policy_row(std::string_view key) { return check::find_row(check::policy_table(), key)->spec; }

check::CheckResult checked(const std::string& body) {
  const std::string text = R"(
catalog c {
  instance ml.g5.8xlarge { gpus = 1, vcpus = 32, memory = 128 GiB }
}
cluster k { catalog = c, capacity = { ml.g5.8xlarge: 4 } }
)" + body;
  return check::check(gov::test::program_from_text("surface.gov", text));
}

}  // namespace

TEST_CASE("every block's table has unique keys and setters and well-formed choices", "[check][surface]") {
  check_table(check::instance_table());
  check_table(check::cluster_table());
  check_table(check::policy_table());
  check_table(check::team_table());
  check_table(check::quota_table());
  check_table(check::amounts_table());
  check_table(check::borrow_amounts_table());
  check_table(check::borrow_within_cohort_table());
  check_table(check::submit_table());
  check_table(check::resources_table());
  for (BlockKind block : kBlocks) CHECK_FALSE(check::block_schema(block).empty());
  CHECK(check::block_schema(BlockKind::team).size() == check::team_table().size());
  CHECK(check::block_schema(BlockKind::team).front() == &check::team_table().front().spec);
}

TEST_CASE("the settings' choices are the enums' words, every value once", "[check][surface]") {
  check_enum(policy_row("task-prioritization"), {check::Prioritization::fcfs, check::Prioritization::task_ranking});
  check_enum(policy_row("idle-compute"), {check::IdleCompute::fcfs, check::IdleCompute::fair_share});
  check_enum(policy_row("fair-share-preemption"),
             {model::FairShareStrategy::less_than_or_equal_to_final_share, model::FairShareStrategy::less_than_initial_share});
  check_enum(team_row("sharing"), {model::Sharing::lend_and_borrow, model::Sharing::lend, model::Sharing::dont_lend});
  check_enum(team_row("preempt-team-tasks"), {model::WithinTeam::never, model::WithinTeam::lower_priority,
                                              model::WithinTeam::lower_or_newer_equal_priority});
  check_enum(team_row("reclaim-within-cohort"), {model::ReclaimWithinCohort::never, model::ReclaimWithinCohort::lower_priority,
                                                 model::ReclaimWithinCohort::any});
  check_enum(team_row("borrow-within-cohort"), {model::BorrowWithinCohort::never, model::BorrowWithinCohort::lower_priority});
  check_enum(check::find_row(check::borrow_within_cohort_table(), "policy")->spec,
             {model::BorrowWithinCohort::never, model::BorrowWithinCohort::lower_priority});
  check_enum(team_row("queueing"), {model::Queueing::best_effort_fifo, model::Queueing::strict_fifo});
  check_enum(team_row("when-can-borrow"), {model::WhenCanBorrow::borrow, model::WhenCanBorrow::try_next_flavor});
  check_enum(team_row("when-can-preempt"), {model::WhenCanPreempt::preempt, model::WhenCanPreempt::try_next_flavor});
  check_enum(team_row("flavor-preference"), {model::FlavorPreference::borrowing_over_preemption,
                                             model::FlavorPreference::preemption_over_borrowing});
  CHECK(check::word_of(check::Prioritization::task_ranking) == "task-ranking");
  CHECK(check::word_of(check::IdleCompute::fair_share) == "fair-share");
}

TEST_CASE("resource words name each resource once", "[check][surface]") {
  std::set<std::string_view> words;
  for (model::Resource resource : model::kAllResources) {
    const std::string_view word = check::resource_word(resource);
    CHECK(words.insert(word).second);
    CHECK(check::resource_of(word) == resource);
  }
  CHECK_FALSE(check::resource_of("instances"));
}

TEST_CASE("the checker assigns every setting through the tables", "[check][surface]") {
  const check::CheckResult result = checked(R"(
policy {
  task-prioritization = fcfs
  idle-compute        = fcfs
  priority low = 10
  default-priority    = low
}
team a {
  quota ml.g5.8xlarge { instances = 2 }
  sharing               = lend
  borrow-limit          = 20%
  preempt-team-tasks    = never
  reclaim-within-cohort = lower-priority
  borrow-within-cohort  = { policy = lower-priority, max-priority-threshold = low }
  queueing              = strict-fifo
  when-can-borrow       = try-next-flavor
  when-can-preempt      = try-next-flavor
  flavor-preference     = preemption-over-borrowing
  fair-share-weight     = 3
  active                = false
}
)");
  INFO((result.diagnostics.items().empty() ? std::string() : result.diagnostics.items().front().message));
  REQUIRE(result.ok());
  const check::Policy& p = result.policy;
  REQUIRE(p.settings);
  CHECK(p.settings->prioritization == check::Prioritization::fcfs);
  CHECK(p.settings->idle_compute == check::IdleCompute::fcfs);
  CHECK(p.settings->default_class == 0);
  REQUIRE(p.teams.size() == 1);
  const check::Team& t = p.teams[0];
  CHECK(t.sharing == model::Sharing::lend);
  CHECK(t.borrow_limit_percent == 20);
  CHECK(t.preempt_team_tasks == model::WithinTeam::never);
  CHECK(t.reclaim_within_cohort == model::ReclaimWithinCohort::lower_priority);
  CHECK(t.reclaim_within_cohort_at.has_value());
  CHECK(t.borrow_within_cohort == model::BorrowWithinCohort::lower_priority);
  CHECK(t.borrow_priority_threshold == 0);
  CHECK(t.queueing == model::Queueing::strict_fifo);
  CHECK(t.when_can_borrow == model::WhenCanBorrow::try_next_flavor);
  CHECK(t.when_can_preempt == model::WhenCanPreempt::try_next_flavor);
  CHECK(t.flavor_preference == model::FlavorPreference::preemption_over_borrowing);
  CHECK(t.flavor_preference_at.has_value());
  CHECK(t.fungibility_at.has_value());
  CHECK(t.fair_share_weight_micros == 3 * model::kWeightScale);
  CHECK_FALSE(t.active);
  REQUIRE(t.quotas.size() == 1);
  CHECK(t.quotas[0].instances == 2);
}

// A migration helper's finding: Kueue's "cap only the GPUs" (a borrowingLimit on the GPUs, none
// on CPU and memory) had no gov form. A quota's `borrow-limit = { ... }` takes `unlimited` per
// resource; a lending limit does not (a resource it leaves out is already unlimited).
TEST_CASE("a quota's borrow limit may be unlimited for single resources", "[check][surface]") {
  const check::CheckResult result = checked(R"(
policy { priority low = 10 }
team a {
  quota ml.g5.8xlarge { instances = 2, borrow-limit = { gpus = 1, vcpus = unlimited, memory = unlimited } }
}
)");
  INFO((result.diagnostics.items().empty() ? std::string() : result.diagnostics.items().front().message));
  REQUIRE(result.ok());
  const check::Quota& q = result.policy.teams.at(0).quotas.at(0);
  CHECK(q.borrowing_limit[model::index(model::Resource::gpu)] == 1);
  CHECK(q.borrowing_limit[model::index(model::Resource::vcpu)] == model::kUnlimited);
  CHECK(q.borrowing_limit[model::index(model::Resource::memory)] == model::kUnlimited);
  CHECK(q.borrowing_limit[model::index(model::Resource::efa)] == 0);  // the team's 50 % of none
  CHECK(q.borrow_limit_given[model::index(model::Resource::vcpu)]);
  CHECK_FALSE(q.borrow_limit_unlimited);
  const std::string typo =
      gov::test::rendered(gov::test::parse_text("team a {\n  quota t { borrow-limit = { gpus = unlimted } }\n}\n"));
  CHECK(typo.find("error[E0043]: `unlimted` is not a choice for `gpus`") != std::string::npos);
  CHECK(typo.find("did you mean `unlimited`?") != std::string::npos);
  const std::string lending =
      gov::test::rendered(gov::test::parse_text("team a {\n  quota t { lending-limit = { gpus = unlimited } }\n}\n"));
  CHECK(lending.find("error[E0042]: `gpus` takes a whole number, found the name `unlimited`") != std::string::npos);
  CHECK(lending.find("a resource a `lending-limit` leaves out is lent without limit") != std::string::npos);
}

// As before the tables: an unknown word is reported (E0043) and the setting keeps its default,
// even after an earlier valid value, so that later checks see what a missing property gives.
TEST_CASE("an unknown choice is reported and stores the default", "[check][surface]") {
  const gov::test::Parsed parsed = gov::test::parse_text("team a {\n  sharing = lendd\n}\n");
  CHECK(gov::test::rendered(parsed).find("error[E0043]: `lendd` is not a choice for `sharing`") != std::string::npos);
  const check::Program program = gov::test::program_from_text(
      "surface.gov", "team a {\n  sharing = lend\n  sharing = lendd\n  borrow-limit = 10%\n}\n");
  CHECK_FALSE(program.diagnostics.items().empty());  // the schema check ran while parsing
  const check::CheckResult after = check::check(program);
  REQUIRE(after.policy.teams.size() == 1);
  CHECK(after.policy.teams[0].sharing == model::Sharing::lend_and_borrow);
  CHECK(after.policy.teams[0].borrow_limit_percent == 10);
}

TEST_CASE("reserved words and declaration keywords are one list each", "[grammar][surface]") {
  namespace pegtl = tao::pegtl;
  const auto whole = [](auto rule, std::string_view word) {
    pegtl::memory_input in(word.data(), word.size(), "word");
    try {
      return pegtl::parse<pegtl::seq<decltype(rule), pegtl::eof>>(in);
    } catch (const pegtl::parse_error&) {
      return false;
    }
  };
  CHECK(r::reserved_word::words.size() == 25);
  for (std::string_view word : r::reserved_word::words) {
    INFO(word);
    CHECK(whole(r::reserved_word{}, word));
    CHECK_FALSE(whole(r::name{}, word));
    CHECK(whole(r::key{}, word));
  }
  for (std::string_view word : r::declaration_keyword::words) {
    INFO(word);
    CHECK(std::find(r::reserved_word::words.begin(), r::reserved_word::words.end(), word) !=
          r::reserved_word::words.end());
  }
  CHECK(r::keyword_text<r::kw_team> == "team");
  // docs/language.md lists them as the grammar does.
  std::string doc = gov::test::read_text(gov::test::repo_path("docs/language.md"));
  const std::string lead = "Reserved words cannot be used as names: `";
  const size_t begin = doc.find(lead);
  REQUIRE(begin != std::string::npos);
  std::string listed = doc.substr(begin + lead.size(), doc.find('`', begin + lead.size()) - begin - lead.size());
  std::replace(listed.begin(), listed.end(), '\n', ' ');
  std::string expected;
  for (std::string_view word : r::reserved_word::words) expected += (expected.empty() ? "" : " ") + std::string(word);
  CHECK(listed == expected);
  // A reserved word where a name goes: the message names it from the same list.
  const gov::test::Parsed parsed = gov::test::parse_text("team quota {\n}\n");
  CHECK(gov::test::rendered(parsed).find("`quota` is a reserved word and cannot be used as a name") != std::string::npos);
  // What starts a declaration, spelled from rules::declaration_keyword.
  const gov::test::Parsed stray = gov::test::parse_text("qqqqqqqq\n");
  CHECK(gov::test::rendered(stray).find("help: declarations start with `import`, `catalog`, `cluster`, `policy`, "
                                        "`cohort`, `team`, `rule` or `test`") != std::string::npos);
}

TEST_CASE("syntax errors are typed", "[grammar][surface]") {
  using gov::grammar::SyntaxErrorKind;
  using gov::grammar::syntax_error;
  STATIC_REQUIRE(syntax_error<r::equals>->kind == SyntaxErrorKind::token);
  STATIC_REQUIRE(syntax_error<r::team_close>->kind == SyntaxErrorKind::block_close);
  STATIC_REQUIRE(syntax_error<r::nest<r::expr>>->kind == SyntaxErrorKind::expression);
  STATIC_REQUIRE(syntax_error<r::decl_name>->kind == SyntaxErrorKind::name);
  STATIC_REQUIRE(!syntax_error<r::kw_team>.has_value());
  CHECK(syntax_error<r::equals>->text == "expected `=`");
  const gov::test::Parsed parsed = gov::test::parse_text("team a {\n  sharing lend\n}\n");
  CHECK(gov::test::rendered(parsed).find("error[E0032]: expected `=`, found `lend`") != std::string::npos);
}
