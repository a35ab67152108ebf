// Names of resources.
#include "compiler/model/resources.hpp"

namespace gov::model {

std::string_view resource_key(Resource resource) {
  switch (resource) {
    case Resource::gpu: return "gpu";
    case Resource::neuron: return "neuron";
    case Resource::vcpu: return "vcpu";
    case Resource::memory: return "memory_gib";
    case Resource::efa: return "efa";
  }
  return "?";
}

std::string_view kubernetes_name(Resource resource) {
  switch (resource) {
    case Resource::gpu: return "nvidia.com/gpu";
    case Resource::neuron: return "aws.amazon.com/neurondevice";
    case Resource::vcpu: return "cpu";
    case Resource::memory: return "memory";
    case Resource::efa: return "vpc.amazonaws.com/efa";
  }
  return "?";
}

}  // namespace gov::model
