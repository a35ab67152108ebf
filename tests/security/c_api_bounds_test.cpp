// Security tests of the C ABI's input bounds: a label value longer than 64 KiB is refused with
// a clear error before it can be copied into decision messages.
#include <catch2/catch.hpp>

#include <gov/gov.h>

#include <string>

#include "tests/support/test_support.hpp"

TEST_CASE("C: a label value over 64 KiB is refused with a clear error", "[security][bounds]") {
  gov_engine* engine = nullptr;
  REQUIRE(gov_engine_open_file(gov::test::repo_path("policies/examples/workshop-g5.gov").c_str(), nullptr, &engine) ==
          GOV_OK);
  gov_task task;
  gov_task_init(&task);
  task.id = "t1";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  task.amounts[GOV_GPU] = 1;
  const std::string largest(65536, 'v');
  const std::string too_long(65537, 'v');
  gov_label label{"k", too_long.c_str()};
  task.labels = &label;
  task.label_count = 1;
  gov_decisions* step = nullptr;
  CHECK(gov_engine_submit(engine, 0, &task, &step) == GOV_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(gov_last_error()) == "a label value is longer than 65536 bytes, the most gov accepts");
  label.value = largest.c_str();  // at the bound: accepted
  REQUIRE(gov_engine_submit(engine, 0, &task, &step) == GOV_OK);
  CHECK(gov_decisions_count(step) == 1);
  gov_decisions_free(step);
  gov_engine_close(engine);
}
