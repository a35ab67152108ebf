// Resource groups through `gov export` and `gov import` (issue 20): Kueue's resourceGroups written
// per group and read back as `resource-groups`; HyperPod refuses them (golden 270).
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

TEST_CASE("gov export kueue writes each resource group with its covered resources and flavors", "[bridge][groups]") {
  const gov::test::CommandResult r = run_gov("export kueue tests/bridge/policies/resource-groups.gov --naming plain");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The compute group: vCPUs and memory of its two types, in the group's order; the accelerators
  // group: GPUs and the partitions that go with them.
  const size_t compute = r.out.find("    - coveredResources:\n        - cpu\n        - memory\n      flavors:\n        - name: ml.m5.2xlarge\n");
  CHECK(compute != std::string::npos);
  const size_t accelerators = r.out.find("    - coveredResources:\n        - nvidia.com/gpu\n        - nvidia.com/mig-1g.5gb\n      flavors:\n        - name: ml.p4d.24xlarge\n");
  CHECK(accelerators != std::string::npos);
  CHECK(compute < accelerators);
  // A team without groups keeps its one group of every resource.
  CHECK(r.out.find("    - coveredResources:\n        - nvidia.com/gpu\n        - aws.amazon.com/neurondevice\n        - cpu\n") != std::string::npos);
}

TEST_CASE("gov import kueue reads several resource groups back as resource-groups", "[bridge][groups]") {
  gov::test::TempDir dir("import-kueue-groups");
  dir.copy_catalog();
  const gov::test::CommandResult exported = run_gov("export kueue tests/bridge/policies/resource-groups.gov");
  REQUIRE(exported.exit_code == 0);
  dir.write("kueue.yaml", exported.out);
  const gov::test::CommandResult imported = run_gov("import kueue " + (dir / "kueue.yaml"));
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("  resource-groups = {\n"
                          "    vcpus-memory: { covers = [vcpus, memory], flavors = [ml.m5.2xlarge, ml.c5.2xlarge] }\n"
                          "    gpus:         { covers = [gpus], flavors = [ml.p4d.24xlarge] }\n"
                          "  }\n") != std::string::npos);
  dir.write("imported.gov", imported.out);
  CHECK(run_gov("fmt --check " + (dir / "imported.gov")).exit_code == 0);
  // What the engine runs is the same: the two policies' IR agree team by team.
  const gov::test::CommandResult before = run_gov("check --emit=ir tests/bridge/policies/resource-groups.gov");
  const gov::test::CommandResult after = run_gov("check --emit=ir " + (dir / "imported.gov"));
  REQUIRE(before.exit_code == 0);
  REQUIRE(after.exit_code == 0);
  const auto groups_of = [](const std::string& ir) {
    std::string out;
    for (size_t at = ir.find("  group "); at != std::string::npos; at = ir.find("  group ", at + 1))
      out += ir.substr(at, ir.find('\n', at) - at + 1);
    return out;
  };
  CHECK(groups_of(before.out) == groups_of(after.out));
  CHECK(!groups_of(before.out).empty());
}

// The quota a team's groups do not cover is no quota: a cohort's subtree in gov inspect counts a
// team's resources of a type only where its group covers them (the engine caps a borrower so;
// the subtree once took the owner's uncovered 96 vCPUs of a p4d quota given in GPUs).
TEST_CASE("gov inspect's cohort subtree counts only the resources a team's groups cover", "[bridge][groups]") {
  gov::test::TempDir dir("inspect-groups-subtree");
  dir.write("gov.toml", "");
  const std::string file = dir.write("tree.gov", R"(import "aws-ml"
cluster c {
  catalog  = aws-ml
  capacity = { ml.p4d.24xlarge: 2, ml.c5.2xlarge: 4 }
}
policy {
  priority training = 50
}
cohort org {}
cohort product { parent = org }
team owner {
  cohort = product
  quota ml.p4d.24xlarge { gpus = 8 }
  quota ml.c5.2xlarge { vcpus = 8 }
  resource-groups = {
    gpu: { covers = [gpus], flavors = [ml.p4d.24xlarge] }
    cpu: { covers = [vcpus, memory], flavors = [ml.c5.2xlarge] }
  }
}
team borrower {
  cohort = product
  quota ml.p4d.24xlarge { gpus = 1 }
  borrow-limit = 10000%
}
)");
  const gov::test::CommandResult r = run_gov("inspect " + file);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // product's p4d subtree: gpus 8 + 1, vCPUs and memory the borrower's alone (12, 144 GiB).
  const size_t product = r.out.find("    cohort product:");
  REQUIRE(product != std::string::npos);
  CHECK(r.out.find("        vcpu                            0             none           none         12\n", product) !=
        std::string::npos);
  CHECK(r.out.find("        memory                      0 GiB             none           none    144 GiB\n", product) !=
        std::string::npos);
  CHECK(r.out.find("1296 GiB") == std::string::npos);
}
