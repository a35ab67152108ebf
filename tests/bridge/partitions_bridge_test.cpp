// GPU partitions through `gov export kueue`, `gov export hyperpod` and `gov import hyperpod`
// (issue 19, point 3): Kueue resources `nvidia.com/mig-<profile>` of the instance type's flavor,
// HyperPod's `AcceleratorPartition {Type, Count}`, and back.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

const char* const kPolicy = "tests/bridge/policies/partitions.gov";

}  // namespace

TEST_CASE("gov export kueue covers each team's partitions in its resource group", "[bridge][mig]") {
  const gov::test::CommandResult r = run_gov(std::string("export kueue ") + kPolicy);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // inference: both profiles after the five base resources, every flavor listing both.
  CHECK(r.out.find("        - vpc.amazonaws.com/efa\n        - nvidia.com/mig-1g.10gb\n        - nvidia.com/mig-1g.5gb\n"
                   "      flavors:\n") != std::string::npos);
  CHECK(r.out.find("            - borrowingLimit: 3\n              name: nvidia.com/mig-1g.10gb\n"
                   "              nominalQuota: 14\n            - borrowingLimit: 0\n"
                   "              name: nvidia.com/mig-1g.5gb\n              nominalQuota: 0\n") != std::string::npos);
  CHECK(r.out.find("            - borrowingLimit: 2\n              name: nvidia.com/mig-1g.5gb\n"
                   "              nominalQuota: 4\n") != std::string::npos);
  CHECK(r.out.find("            - borrowingLimit: 2\n              name: nvidia.com/mig-3g.40gb\n"
                   "              nominalQuota: 4\n") != std::string::npos);
  // platform has no partitions: its resource group is the five base resources.
  const size_t platform = r.out.find("name: hyperpod-ns-platform-clusterqueue");
  REQUIRE(platform != std::string::npos);
  const std::string rest = r.out.substr(platform, r.out.find("kind: LocalQueue", platform) - platform);
  CHECK(rest.find("mig-") == std::string::npos);
}

TEST_CASE("gov export hyperpod writes AcceleratorPartition and gov import hyperpod reads it back", "[bridge][mig]") {
  gov::test::TempDir dir("mig-hyperpod");
  dir.copy_catalog();
  const gov::test::CommandResult exported = run_gov(std::string("export hyperpod ") + kPolicy + " --out " + (dir / "out"));
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  const std::string inference = gov::test::read_text(dir / "out/compute-quota-inference.json");
  CHECK(inference.find("\"InstanceType\": \"ml.p5.48xlarge\",\n        \"Accelerators\": 2,\n        \"AcceleratorPartition\": "
                       "{\n          \"Type\": \"mig-1g.10gb\",\n          \"Count\": 14\n        }") != std::string::npos);
  CHECK(inference.find("\"AbsoluteBorrowLimits\": [\n        {\n          \"InstanceType\": \"ml.p5.48xlarge\",\n"
                       "          \"AcceleratorPartition\": {\n            \"Type\": \"mig-1g.10gb\",\n"
                       "            \"Count\": 3\n") != std::string::npos);
  const gov::test::CommandResult imported =
      run_gov("import hyperpod " + (dir / "out/cluster-scheduler-config.json") + " " +
              (dir / "out/compute-quota-inference.json") + " " + (dir / "out/compute-quota-research.json") + " " +
              (dir / "out/compute-quota-platform.json") +
              " --capacity ml.p5.48xlarge=2,ml.p4d.24xlarge=1,ml.g5.8xlarge=2");
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("  quota ml.p5.48xlarge  { gpus = 2, partitions = { mig-1g.10gb: 14 }, borrow-limit = { "
                          "partitions = { mig-1g.10gb: 3 } } }\n") != std::string::npos);
  dir.write("imported.gov", imported.out);
  const gov::test::CommandResult diff = run_gov(std::string("diff --files ") + kPolicy + " " + (dir / "imported.gov"));
  INFO(diff.out);
  CHECK(diff.exit_code == 0);
  CHECK(diff.out.find("no changes between") == 0);
}

TEST_CASE("gov export hyperpod refuses what AcceleratorPartition cannot say", "[bridge][mig]") {
  gov::test::TempDir dir("mig-hyperpod-lossy");
  dir.copy_catalog();
  const std::string path = dir.write(
      "tests/mig/p.gov",
      "import \"../../policies/catalog/aws-ml.gov\"\n"
      "cluster c { catalog = aws-ml, capacity = { ml.p5.48xlarge: 1, ml.p6-b300.48xlarge: 1 } }\npolicy {}\n"
      "team a {\n  quota ml.p5.48xlarge { partitions = { mig-1g.10gb: 7, mig-3g.40gb: 2 } }\n"
      "  quota ml.p6-b300.48xlarge { partitions = { mig-1g.34gb: 7 } }\n}\n");
  const gov::test::CommandResult r = run_gov("export hyperpod " + path + " --out " + (dir / "out"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("HyperPod's quota entry takes one `AcceleratorPartition`, and this quota gives 2 profiles") !=
        std::string::npos);
  CHECK(r.err.find("`mig-1g.34gb` partitions of `ml.p6-b300.48xlarge`: HyperPod's `AcceleratorPartition` type does not "
                   "accept the profile") != std::string::npos);
  // Kueue takes both.
  CHECK(run_gov("export kueue " + path).exit_code == 0);
}
