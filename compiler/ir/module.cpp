#include "compiler/ir/module.hpp"
#include "compiler/ir/module_names.hpp"

#include "compiler/support/assert.hpp"

namespace gov::ir {

namespace {

template <typename T>
int32_t find_by_name(const std::vector<T>& items, std::string_view name) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace

int32_t Module::team_index(std::string_view name) const { return find_by_name(teams, name); }
int32_t Module::flavor_index(std::string_view name) const { return find_by_name(flavors, name); }
int32_t Module::class_index(std::string_view name) const { return find_by_name(classes, name); }

int32_t Module::priority_of(int32_t class_index) const {
  if (!settings.rank_by_priority) return 0;
  if (class_index >= 0) return classes[static_cast<size_t>(class_index)].weight;
  if (settings.default_class >= 0) return classes[static_cast<size_t>(settings.default_class)].weight;
  return 0;
}

Resources columns_of(const model::Resources& resources) {
  Resources out{};
  for (Resource r : kAllResources) out[index(r)] = resources[index(r)];
  return out;
}

Resources unlimited_columns() {
  Resources out;
  out.fill(kUnlimited);
  return out;
}

std::vector<Resource> Module::charged_columns() const {
  std::vector<Resource> out;
  for (Resource r : kAllResources) {
    if (is_charged(r)) out.push_back(r);
  }
  for (size_t k = 0; k < partitions.size(); ++k) out.push_back(partition_column(k));
  return out;
}

std::string_view Module::column_key(Resource r) const {
  if (!is_partition(r)) return resource_key(r);
  const size_t k = index(r) - kResourceCount;
  GOV_ASSERT(k < partitions.size(), "partition column out of range");
  return partitions[k];
}

std::string Module::column_kubernetes_name(Resource r) const {
  if (!is_partition(r)) return std::string(kubernetes_name(r));
  return model::partition_resource_name(column_key(r));
}

::gov::ResourceAmount Module::public_amount(Resource r, Amount amount) const {
  return {public_resource(r), amount, std::string(partition_of(r))};
}

int32_t Module::partition_index(std::string_view profile) const {
  for (size_t k = 0; k < partitions.size(); ++k) {
    if (partitions[k] == profile) return static_cast<int32_t>(k);
  }
  return -1;
}

ModuleNames::ModuleNames(const Module& module) {
  const auto index = [](Map& map, const auto& named) {
    for (size_t i = 0; i < named.size(); ++i)
      map.emplace(named[i].name, static_cast<int32_t>(i));  // the first of duplicates wins, as in the IR
  };
  index(teams_, module.teams);
  index(flavors_, module.flavors);
  index(classes_, module.classes);
}

}  // namespace gov::ir
