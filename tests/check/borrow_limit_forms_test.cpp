// A quota's `borrow-limit = { ... }` (HyperPod's AbsoluteBorrowLimits) takes the forms of
// `lending-limit`: `instances = N`, amounts, or both (issue 19).
#include <string>

#include <catch2/catch.hpp>

#include "compiler/driver/driver.hpp"
#include "tests/support/test_support.hpp"

namespace {

/// The checked policy of one team `t` with `quota` for ml.g5.12xlarge (4 GPUs, 48 vCPUs, 192 GiB, 1 EFA).
std::unique_ptr<gov::driver::Policy> checked(const std::string& quota) {
  gov::check::MemorySources files;
  files.add("p.gov", R"(catalog c {
  instance ml.g5.12xlarge { accelerator = nvidia-a10g, gpus = 4, vcpus = 48, memory = 192 GiB, efa = 1 }
}

cluster k {
  catalog  = c
  capacity = { ml.g5.12xlarge: 4 }
}

policy {
  task-prioritization = fcfs
  idle-compute        = fcfs
}

team t {
  borrow-limit = 25%
  )" + quota + R"(
}
)");
  auto loaded = gov::driver::load(gov::driver::Source::memory(std::move(files), "p.gov"),
                                  gov::driver::Request::up_to(gov::driver::Stage::check));
  return std::move(loaded.policy);
}

using gov::model::index;
using gov::model::Resource;

}  // namespace

TEST_CASE("a quota's borrow-limit takes instances like lending-limit", "[catalog][borrow-limit]") {
  const auto policy = checked("quota ml.g5.12xlarge { instances = 2, borrow-limit = { instances = 1 } }");
  REQUIRE(policy);
  REQUIRE(policy->checked.ok());
  const gov::check::Quota& quota = policy->checked.result.policy.teams.at(0).quotas.at(0);
  CHECK(quota.borrowing_limit[index(Resource::gpu)] == 4);
  CHECK(quota.borrowing_limit[index(Resource::vcpu)] == 48'000);
  CHECK(quota.borrowing_limit[index(Resource::memory)] == 192 * 1024);
  CHECK(quota.borrowing_limit[index(Resource::efa)] == 1);
}

TEST_CASE("a quota's borrow-limit amounts override its instances and the rest keep the percentage", "[catalog][borrow-limit]") {
  const auto policy = checked("quota ml.g5.12xlarge { instances = 2, borrow-limit = { instances = 1, gpus = 2 } }");
  REQUIRE(policy);
  REQUIRE(policy->checked.ok());
  const gov::check::Quota& quota = policy->checked.result.policy.teams.at(0).quotas.at(0);
  CHECK(quota.borrowing_limit[index(Resource::gpu)] == 2);
  CHECK(quota.borrowing_limit[index(Resource::vcpu)] == 48'000);

  const auto amounts_only = checked("quota ml.g5.12xlarge { instances = 2, borrow-limit = { gpus = 1 } }");
  REQUIRE(amounts_only);
  REQUIRE(amounts_only->checked.ok());
  const gov::check::Quota& partial = amounts_only->checked.result.policy.teams.at(0).quotas.at(0);
  CHECK(partial.borrowing_limit[index(Resource::gpu)] == 1);
  CHECK(partial.borrowing_limit[index(Resource::vcpu)] == 24'000);  // 25 % of 96 vCPUs
}
