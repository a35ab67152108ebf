// Many versions: 100,000 (GOV_STORE_VERSIONS=1000000 for a million) loaded in one batch; log
// pages, show, active, audit, objects, rollback and apply then do the same work as on a store
// of 50 versions (SQLite's own step counters, not clocks: no timing is asserted).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "runtime/store/store.hpp"
#include "tests/store/store_fixture.hpp"

namespace gov::store {
namespace {

int64_t big_store_versions() {
  const char* configured = std::getenv("GOV_STORE_VERSIONS");
  return configured != nullptr ? std::atoll(configured) : 100'000;
}

// Policy "big" with `versions` versions (one changing file and one shared import each, an
// object on every 1000th) and policy "other" with one; all in one transaction.
void build(const std::string& path, int64_t versions) {
  Store store = test::open_or_fail(path);
  REQUIRE(store.apply(test::apply_request("other", test::marked_files("other"), "other")));
  auto loaded = store.batch([versions](Store& inside) -> Result<void> {
    ApplyRequest request = test::apply_request("big", {{"big.gov", ""}, {"lib.gov", "// shared\n"}});
    for (int64_t i = 1; i <= versions; ++i) {
      request.files[0].text = fmt::format("// version {}\n", i);
      request.message = fmt::format("m{}", i);
      request.object.reset();
      if (i % 1000 == 1) request.object = CompiledObject{"obj", Bytes(100, static_cast<uint8_t>(i))};
      auto applied = inside.apply(request);
      if (!applied) return applied.error();
    }
    return {};
  });
  REQUIRE(loaded);
}

// What `gov log`, `gov show`, an engine start and `gov apply` do, checked for the right answers;
// returns the work SQLite did for them.
WorkCounters typical_use(Store& store, int64_t versions) {
  store.take_work_counters();
  auto first_page = store.log("big", 20);
  REQUIRE(first_page);
  REQUIRE(first_page->size() == 20);
  CHECK(first_page->front().number == versions);
  CHECK(first_page->front().active);
  CHECK(first_page->back().number == versions - 19);
  auto next_page = store.log("big", 20, first_page->back().number);
  REQUIRE(next_page);
  CHECK(next_page->front().number == versions - 20);
  auto last_page = store.log("big", 20, 3);
  REQUIRE(last_page);
  REQUIRE(last_page->size() == 2);
  CHECK(last_page->back().number == 1);

  int64_t middle_number = versions / 2;
  auto middle = store.show("big", middle_number);
  REQUIRE(middle);
  CHECK(middle->info.message == fmt::format("m{}", middle_number));
  CHECK(middle->files[0].text == fmt::format("// version {}\n", middle_number));
  CHECK(middle->files[1].text == "// shared\n");
  CHECK(middle->info.parent == middle_number - 1);
  CHECK(store.show("big")->info.number == versions);
  CHECK(store.active("big")->number == versions);
  CHECK(store.active("other")->number == 1);
  CHECK(**store.get_object("big", 1, "obj") == Bytes(100, 1));

  auto audit = store.audit("big", 5);
  REQUIRE(audit);
  CHECK(audit->front().version == versions);
  auto other_audit = store.audit("other", 5);  // one entry among many
  REQUIRE(other_audit);
  CHECK(other_audit->size() == 1);
  CHECK(store.audit("", 5)->size() == 5);

  auto back = store.rollback({"big", 1, "tester", "back to the start", std::nullopt});
  REQUIRE(back);
  CHECK(back->version == versions + 1);
  CHECK(store.show("big")->files[0].text == "// version 1\n");
  CHECK(**store.get_object("big", versions + 1, "obj") == Bytes(100, 1));
  auto applied = store.apply(test::apply_request("big", test::marked_files("next"), "next"));
  REQUIRE(applied);
  CHECK(applied->version == versions + 2);
  return store.take_work_counters();
}

TEST_CASE("store scale: reads and writes cost the same with 50 or 100,000 versions", "[store][scale]") {
  test::TempDir dir;
  int64_t many = big_store_versions();
  build(dir.path("small.db"), 50);
  build(dir.path("big.db"), many);

  Store small = test::open_or_fail(dir.path("small.db"));
  Store big = test::open_or_fail(dir.path("big.db"));
  WorkCounters small_work = typical_use(small, 50);
  WorkCounters big_work = typical_use(big, many);
  INFO(fmt::format("VM steps: {} with 50 versions, {} with {}", small_work.vm_steps, big_work.vm_steps, many));
  CHECK(big_work.vm_steps <= small_work.vm_steps + small_work.vm_steps / 10);
  CHECK(big_work.full_scan_steps == 0);
  CHECK(big_work.sorts == 0);
  CHECK(big_work.automatic_indexes == 0);

  auto policies = big.policies();
  REQUIRE(policies);
  REQUIRE(policies->size() == 2);
  CHECK(policies->front().latest == many + 2);
  CHECK(big.take_work_counters().full_scan_steps <= 2);  // the policy table, not the versions
}

}  // namespace
}  // namespace gov::store
