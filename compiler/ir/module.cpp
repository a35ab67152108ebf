#include "compiler/ir/module.hpp"

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

}  // namespace gov::ir
