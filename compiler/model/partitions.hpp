// GPU partitions (NVIDIA MIG profiles): what a profile's name says about its size, the bound on
// distinct profiles per policy, and which profiles HyperPod's API accepts (docs/semantics-decisions.md,
// "GPU partitions (MIG)").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gov::model {

/// A GPU is cut into seven compute slices; a profile takes 1–7 of them.
inline constexpr int64_t kSlicesPerGpu = 7;
/// The whole GPUs `slices` compute slices are cut from, rounded up: a GPU that holds any
/// partition is no whole GPU (idle-resource sharing lends none of them).
inline constexpr int64_t gpus_holding_slices(int64_t slices) {
  return slices / kSlicesPerGpu + (slices % kSlicesPerGpu != 0 ? 1 : 0);
}
/// The most distinct profiles one policy's quotas may use: the engine keeps one column per
/// profile beside the five base resources, and a set of columns in one byte (docs/limits.md).
inline constexpr size_t kPartitionColumns = 8;

/// The size a profile's name states: `mig-3g.40gb` is 3 compute slices and 40 GB of memory.
struct ProfileSize {
  int32_t slices = 0;
  int64_t memory_gb = 0;
};

/// `mig-<slices>g.<memory>gb` with slices 1–7 and memory 1–99,999 (no leading zeros) → its size;
/// nullopt for any other text.
std::optional<ProfileSize> parse_mig_profile(std::string_view profile);

/// Whether HyperPod's `MIGProfileType` enum (the values of `AcceleratorPartition.Type`) has the
/// profile: the B300 and RTX PRO 6000 profiles are not in it (../shared/data/mig-profiles.tsv,
/// `in_api_enum`).
bool in_hyperpod_partition_enum(std::string_view profile);

/// The Kubernetes (and Kueue) resource name of a profile: `nvidia.com/mig-1g.10gb`.
std::string partition_resource_name(std::string_view profile);

}  // namespace gov::model
