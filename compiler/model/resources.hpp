// Resources and amounts: the units every stage counts in, from the checker to the engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "gov/types.hpp"

namespace gov::model {

// The resource vocabulary is the public API's (gov/types.hpp): one enum from the trace to the
// embedding API, so no layer converts between two copies of it.
using Resource = ::gov::Resource;
using ::gov::kResourceCount;
inline constexpr std::array<Resource, kResourceCount> kAllResources = {Resource::gpu, Resource::neuron, Resource::vcpu,
                                                                        Resource::memory, Resource::efa};

/// Amounts are exact integers in each resource's base unit: whole devices for gpu, neuron
/// and efa; millicores for vcpu; MiB for memory.
using Amount = int64_t;
using Resources = std::array<Amount, kResourceCount>;
/// A lending limit that is not set: the team lends all of its idle quota.
inline constexpr Amount kUnlimited = ::gov::kUnlimited;
static_assert(std::is_same_v<Amount, decltype(::gov::ResourceAmount::amount)>);

/// Base units in the units people write: 1 vCPU is 1,000 millicores, 1 GiB is 1,024 MiB.
inline constexpr Amount kMillicoresPerVcpu = 1000;
inline constexpr Amount kMebibytesPerGibibyte = 1024;
inline constexpr Amount kMebibytesPerTebibyte = 1024 * 1024;

/// `gpu`, `neuron`, `vcpu`, `memory_gib`, `efa`: keys of the decision stream and JSON.
std::string_view resource_key(Resource resource);
/// `gpu`, `neuron`, `vcpu`, `memory`, `efa`: the name in text meant for people, whose amounts
/// carry their unit (`memory 2 GiB`).
std::string_view display_name(Resource resource);
/// `nvidia.com/gpu`, `aws.amazon.com/neurondevice`, `cpu`, `memory`, `vpc.amazonaws.com/efa`.
std::string_view kubernetes_name(Resource resource);
/// EFA is in the quotas but never charged at admission (docs/semantics.md §2).
inline constexpr bool is_charged(Resource resource) { return resource != Resource::efa; }
inline constexpr size_t index(Resource resource) { return static_cast<size_t>(resource); }

}  // namespace gov::model
