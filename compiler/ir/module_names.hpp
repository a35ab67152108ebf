// A module's team, instance type and class names for O(1) lookups: ir::Module's own lookups
// scan, and the engine (every task it resolves) and the trace reader (every submit) name them
// millions of times, in policies of up to 10,000 of each (docs/limits.md).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "compiler/ir/module.hpp"

namespace gov::ir {

/// Holds views of the module's names: the module must outlive it. Not gov::NameIndex, which
/// owns copies: on the hot path (a check from a task's names) the views' smaller nodes measured
/// 7 ns faster per check (decision-from-spec/jit, 60 ns against 67 ns).
class ModuleNames {
 public:
  explicit ModuleNames(const Module& module);
  /// The index, or -1 for an unknown name (the first of duplicates, as Module::team_index).
  int32_t team(std::string_view name) const { return find(teams_, name); }
  int32_t flavor(std::string_view name) const { return find(flavors_, name); }
  int32_t priority_class(std::string_view name) const { return find(classes_, name); }

 private:
  using Map = std::unordered_map<std::string_view, int32_t>;
  static int32_t find(const Map& map, std::string_view name) {
    const auto it = map.find(name);
    return it == map.end() ? -1 : it->second;
  }
  Map teams_;
  Map flavors_;
  Map classes_;
};

}  // namespace gov::ir
