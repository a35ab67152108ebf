// The generated code's quota tables hold only the declared cells (issue 21): an object grows
// with the quotas, not with teams × the catalog's instance types, and an object of the dense-table
// code generator is recompiled, never run.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/driver/driver.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/decisions.hpp"
#include "compiler/jit/jit.hpp"
#include "runtime/signing/signing.hpp"
#include "runtime/store/store.hpp"
#include "tests/jit/jit_builders.hpp"
#include "tests/security/security_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::driver::CodeOrigin;
using gov::support::ErrorKind;
namespace ir = gov::ir;
namespace jit = gov::jit;
namespace store = gov::store;
namespace signing = gov::signing;

constexpr size_t kCatalog = 205;  // the shipped catalog's instance types (policies/catalog/aws-ml.gov)

/// `teams` teams over a catalog of `flavors` instance types, each team with one quota on one of
/// the first seven types; `distinct`: every team's quota differs (no two cells are alike). A
/// rule reads the team's and the cluster's figures, so gov_decide reads the cells too.
ir::Module module_of(size_t teams, size_t flavors, bool distinct) {
  using namespace gov::test::jit;
  ir::Module module = gov::test::jit::module_of({rule({team(static_cast<int64_t>(ir::TeamStat::available) * ir::kResourceCount),
                                                       cluster(static_cast<int64_t>(ir::ClusterStat::used) * ir::kResourceCount),
                                                       binary(ir::Op::lt, 0, 1)})});
  for (size_t f = 0; f < flavors; ++f) {
    ir::Flavor flavor;
    flavor.name = "ml.f" + std::to_string(f);
    flavor.per_instance[ir::index(ir::Resource::gpu)] = 8;
    flavor.capacity = 100;
    module.flavors.push_back(flavor);
  }
  for (size_t t = 0; t < teams; ++t) {
    ir::Team team;
    team.name = "team-" + std::to_string(t);
    ir::FlavorQuota quota;
    quota.flavor = static_cast<uint32_t>(t % 7);
    quota.nominal[ir::index(ir::Resource::gpu)] = distinct ? static_cast<int64_t>(t) + 1 : 8;
    quota.borrowing_limit[ir::index(ir::Resource::gpu)] = 4;
    team.quotas.push_back(quota);
    module.teams.push_back(team);
  }
  return module;
}

size_t object_size(const ir::Module& module) {
  auto object = jit::compile(module);
  REQUIRE(object.ok());
  return object.value().bytes.size();
}

}  // namespace

// What one more team with one quota may add to the object: its cell (the present flag and four
// rows of five amounts: 168 bytes, when no other team's is alike), five 4-byte entries of the
// team lists (gov.team_first, gov.team_flavors, gov.team_cells, gov.lookup_flavors,
// gov.lookup_cells), its flags byte and its 2-byte preemption policies: 191 bytes; 256 leaves
// room for alignment. The dense form grew by at least a 4-byte slot per instance type of the
// catalog: 820 bytes per team (and 168 per cell before the slots).
TEST_CASE("JIT: an object grows with the declared quotas, not with teams times the catalog", "[jit][sparse]") {
  const size_t small = object_size(module_of(100, kCatalog, /*distinct=*/true));
  const size_t large = object_size(module_of(1000, kCatalog, /*distinct=*/true));
  INFO("100 teams: " << small << " bytes, 1,000 teams: " << large << " bytes");
  REQUIRE(large > small);
  CHECK((large - small) / 900 <= 256);
  CHECK(large - small < 900 * kCatalog * 4);

  // Teams with the same quota share one cell: 23 bytes of list entries and flags per team.
  const size_t shared_small = object_size(module_of(100, kCatalog, /*distinct=*/false));
  const size_t shared_large = object_size(module_of(1000, kCatalog, /*distinct=*/false));
  INFO("the same quota: 100 teams: " << shared_small << " bytes, 1,000 teams: " << shared_large << " bytes");
  CHECK((shared_large - shared_small) / 900 <= 32);

  // A catalog of 205 instance types instead of 10, for 1,000 teams: per instance type only its
  // capacity and its cohort quota (five amounts each, 80 bytes), not a slot per team.
  const size_t few_types = object_size(module_of(1000, 10, /*distinct=*/true));
  INFO("1,000 teams over 10 instance types: " << few_types << " bytes");
  CHECK(large - few_types <= (kCatalog - 10) * 128);
}

TEST_CASE("the quota table every engine and the interpreter build stores each declared cell once", "[jit][sparse]") {
  // 1,000 teams over the shipped catalog's 205 types: a dense grid of cells would be 205,000
  // cells (87 MB); the table holds the 1,000 declared ones, the absent cell and a slot per pair.
  const ir::Module module = module_of(1000, kCatalog, /*distinct=*/true);
  const ir::QuotaTable table = ir::quota_table(module);
  REQUIRE(table.cells.size() == 1001);
  CHECK_FALSE(table.cells[0].present);
  CHECK(table.cells[0].nominal == ir::Resources{});
  size_t present = 0;
  for (uint32_t t = 0; t < 1000; ++t) {
    for (uint32_t f = 0; f < kCatalog; ++f) {
      const ir::QuotaCell& cell = table.cell(t, f);
      if (f != t % 7) {
        CHECK_FALSE(cell.present);
        continue;
      }
      ++present;
      CHECK(cell.present);
      CHECK(cell.nominal[ir::index(ir::Resource::gpu)] == static_cast<int64_t>(t) + 1);
      CHECK(cell.borrowing_limit[ir::index(ir::Resource::gpu)] == 4);
    }
  }
  CHECK(present == 1000);
}

TEST_CASE("JIT: the sparse tables decide as the interpreter where declared order is not catalog order", "[jit][sparse]") {
  // 40 teams of three quotas each (120 cells: the table walk) and the same 20 teams (60 cells:
  // unrolled), declared in descending instance type, with usage that borrows in some.
  for (const size_t teams : {size_t{20}, size_t{40}}) {
    ir::Module module = module_of(teams, 12, /*distinct=*/true);
    for (size_t t = 0; t < teams; ++t) {
      ir::Team& team = module.teams[t];
      team.quotas.clear();
      for (uint32_t f : {static_cast<uint32_t>(11 - t % 3), static_cast<uint32_t>(6 - t % 5), uint32_t{1}}) {
        ir::FlavorQuota quota;
        quota.flavor = f;
        quota.nominal[ir::index(ir::Resource::gpu)] = static_cast<int64_t>(t % 4) * 2 + f;
        quota.borrowing_limit[ir::index(ir::Resource::gpu)] = static_cast<int64_t>(f % 3);
        team.quotas.push_back(quota);
      }
      team.when_can_borrow = t % 2 == 0 ? ir::WhenCanBorrow::try_next_flavor : ir::WhenCanBorrow::borrow;
    }
    auto compiled = jit::compile_and_load(module);
    REQUIRE(compiled.ok());
    const jit::JitEvaluator& native = *compiled.value();
    gov::interp::Interpreter reference(module);
    const ir::QuotaTable table = ir::quota_table(module);
    // A row per quota cell slot (ir::UsageView), the absent cell's row 0 all zeros.
    std::vector<int64_t> usage(table.cells.size() * ir::kColumnCount, 0);
    std::vector<int64_t> cohort(module.flavors.size() * ir::kColumnCount, 0);
    std::vector<int64_t> used(module.flavors.size() * ir::kColumnCount, 0);
    for (size_t i = ir::kColumnCount; i < usage.size(); i += ir::kColumnCount) usage[i] = static_cast<int64_t>(i / ir::kColumnCount % 9);
    for (size_t f = 0; f < module.flavors.size(); ++f) cohort[f * ir::kColumnCount] = static_cast<int64_t>(f * 3 % 11);
    const ir::UsageView view{usage.data(), cohort.data(), used.data()};
    size_t compared = 0;
    for (uint32_t t = 0; t < teams; ++t) {
      for (int64_t flavor = -1; flavor < static_cast<int64_t>(module.flavors.size()); ++flavor) {
        for (int64_t gpus : {0, 1, 3, 7, 20}) {
          std::array<int64_t, ir::kTaskFieldCount> task{};
          task[static_cast<size_t>(ir::TaskField::team)] = t;
          task[static_cast<size_t>(ir::TaskField::flavor)] = flavor;
          task[static_cast<size_t>(ir::TaskField::gpus)] = gpus;
          const ir::DecideInput input{task.data(), nullptr, view};
          INFO("team " << t << ", instance type " << flavor << ", " << gpus << " GPUs, " << teams << " teams");
          CHECK(native.decide(input) == reference.decide(input));
          if (flavor < 0) continue;
          const ir::FitInput fit{t, static_cast<uint32_t>(flavor), task.data() + static_cast<size_t>(ir::TaskField::gpus),
                                 usage.data() + table.slot(t, static_cast<size_t>(flavor)) * ir::kColumnCount,
                                 cohort.data() + static_cast<size_t>(flavor) * ir::kColumnCount};
          CHECK(native.fit(fit) == ir::fit(table, fit));
          ++compared;
        }
      }
    }
    CHECK(compared == teams * module.flavors.size() * 5);
  }
}

TEST_CASE("JIT: a module with two quotas of a team for one instance type is refused", "[jit][sparse]") {
  ir::Module module = module_of(2, 3, /*distinct=*/true);
  module.teams[1].quotas.push_back(module.teams[1].quotas.front());
  auto compiled = jit::compile(module);
  REQUIRE_FALSE(compiled.ok());
  CHECK(compiled.error().kind == ErrorKind::invalid_module);
  CHECK(compiled.error().message == "team `team-1`: two quotas for instance type `ml.f1`");
  module.teams[1].quotas.back().flavor = 3;
  compiled = jit::compile(module);
  REQUIRE_FALSE(compiled.ok());
  CHECK(compiled.error().message == "team `team-1`: a quota for instance type #3 of a module with 3");
}

// ---- a cached object of the previous code generator ------------------------------------------

namespace {

const char* const kWorkshop = "policies/examples/workshop-g5.gov";

/// What `gov apply policies/examples/workshop-g5.gov` stored as the object before the sparse
/// tables (code generator version 7, 4f00230 on main, this machine's CPU): the serialised
/// ObjectCode, whose code reads a slot per team × instance type.
std::vector<uint8_t> dense_table_object() {
  std::ifstream file(gov::test::repo_path("tests/jit/data/workshop-codegen7.govobj"), std::ios::binary);
  REQUIRE(file);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("JIT: an object of the dense-table code generator is stale and recompiled", "[jit][sparse]") {
  gov::driver::Result loaded = gov::driver::load(gov::driver::Source::file(gov::test::repo_path(kWorkshop)),
                                                 gov::driver::Request::up_to(gov::driver::Stage::lower));
  REQUIRE(loaded.ok());
  const ir::Module& module = loaded.policy->module;
  // The serialised form did not change: the object reads, and its key says what it was built for.
  auto old = jit::ObjectCode::deserialize(dense_table_object());
  REQUIRE(old.ok());
  auto key = jit::key_for(module, old.value().options);
  REQUIRE(key.ok());
  CHECK(key.value() != old.value().key);
  // The loader refuses it by its key (every code generator's key names its version) ...
  auto refused = jit::load(module, old.value());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == ErrorKind::stale_object);
  CHECK(refused.error().message.find("code generator") != std::string::npos);
  // ... and the driver compiles the module instead of running it.
  CodeOrigin origin = CodeOrigin::interpreter;
  std::string warning;
  auto evaluator = gov::driver::make_evaluator(module, gov::driver::BackEnd::jit, &old.value(), origin, warning);
  REQUIRE(evaluator);
  CHECK(origin == CodeOrigin::compiled);
  CHECK(warning.empty());

  // A store written by that gov, its versions and objects signed: the object is looked up by
  // this gov's key, so it is not found and the version is compiled; planted under this key it
  // is refused by the loader and compiled too. Never run.
  gov::test::Scratch dir("stale-object");
  const std::string db_path = dir / "p.db";
  auto keys = signing::generate_key_pair();
  REQUIRE(keys.ok());
  {
    auto opened = store::Store::open(db_path);
    REQUIRE(opened.ok());
    store::ApplyRequest request;
    request.policy = "p";
    request.author = "test";
    std::string apply_warning;
    // Applied without the JIT's object (as the old gov would have), then its object added.
    auto interpreted = gov::driver::load(gov::driver::Source::file(gov::test::repo_path(kWorkshop)));
    REQUIRE(interpreted.ok());
    request.files = gov::driver::store_files(interpreted.policy->checked);
    request.signature = signing::sign_version(keys.value().secret, "p", store::content_hash(request.files), request.files);
    auto applied = opened.value().apply(request);
    REQUIRE(applied.ok());
    const std::string content = store::content_hash(request.files);
    const std::vector<uint8_t> bytes = dense_table_object();
    const std::string old_key = jit::to_hex(old.value().key);
    REQUIRE(opened.value()
                .put_object("p", 1, {old_key, bytes, signing::sign_object(keys.value().secret, "p", content, old_key, bytes)})
                .ok());
  }
  gov::driver::VerifyOptions verify;
  verify.key = keys.value().public_key;
  verify.require_signature = true;
  const auto load_stored = [&] {
    store::OpenOptions options;
    options.create = false;
    options.read_only = true;
    auto opened = store::Store::open(db_path, options);
    REQUIRE(opened.ok());
    return gov::driver::load(gov::driver::Source::stored(opened.value(), "p", std::nullopt, verify),
                             gov::driver::Request::running(gov::driver::BackEnd::jit));
  };
  const auto not_found = load_stored();
  REQUIRE(not_found.ok());
  CHECK(not_found.policy->code == CodeOrigin::compiled);
  CHECK(not_found.policy->code_note == "no cached object for this machine");
  {
    auto opened = store::Store::open(db_path);
    REQUIRE(opened.ok());
    const std::string content = store::content_hash(gov::driver::store_files(not_found.policy->checked));
    const std::vector<uint8_t> bytes = dense_table_object();
    const std::string new_key = jit::to_hex(jit::key_for(not_found.policy->module).value());
    REQUIRE(opened.value()
                .put_object("p", 1, {new_key, bytes, signing::sign_object(keys.value().secret, "p", content, new_key, bytes)})
                .ok());
  }
  const auto planted = load_stored();
  REQUIRE(planted.ok());
  CHECK(planted.policy->code == CodeOrigin::compiled);
  CHECK(planted.policy->code_note == "the cached object was refused by the loader");
}
