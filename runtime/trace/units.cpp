// Exact decimal formatting: integer arithmetic only, so what is printed reads back exactly.
#include "runtime/trace/units.hpp"

#include "compiler/model/quantities.hpp"

namespace gov::trace {

int64_t base_units_per_file_unit(ir::Resource resource) {
  switch (resource) {
    case ir::Resource::gpu:
      return 1;
    case ir::Resource::neuron:
      return 1;
    case ir::Resource::vcpu:
      return 1000;
    case ir::Resource::memory:
      return 1024;
    case ir::Resource::efa:
      return 1;
  }
  return 1;
}

std::string format_seconds(gov::Time millis) {
  return model::format_decimal(millis, kMillisPerSecond);
}

std::string format_amount(ir::Resource resource, ir::Amount amount) {
  return model::format_amount(resource, amount, model::decimal_notation());
}

std::string_view trace_key(ir::Resource resource) {
  switch (resource) {
    case ir::Resource::gpu:
      return "gpus";
    case ir::Resource::neuron:
      return "neuron";
    case ir::Resource::vcpu:
      return "vcpus";
    case ir::Resource::memory:
      return "memory_gib";
    case ir::Resource::efa:
      return "efa";
  }
  return "?";
}

}  // namespace gov::trace
