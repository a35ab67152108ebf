// Finding a name in a list in constant time: a policy may have 10,000 teams, rules or instance
// types and name them a million times (docs/limits.md), which a linear search per reference turns
// into minutes; the engine resolves a task's team, class and instance type by name on every
// submission.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gov {

/// The positions of a list of names. Holds copies: the list may move or grow afterwards (the
/// index then describes the list as it was). The first of two equal names wins.
class NameIndex {
 public:
  NameIndex() = default;
  explicit NameIndex(const std::vector<std::string>& names) {
    positions_.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) positions_.emplace(names[i], i);
    size_ = names.size();
  }

  /// Appends `name` to the list (a name already there keeps its first position).
  void add(std::string_view name) {
    positions_.emplace(std::string(name), size_);
    ++size_;
  }

  /// Position of `name` in the list, or nullopt.
  std::optional<size_t> find(std::string_view name) const {
    const auto it = positions_.find(name);
    if (it == positions_.end()) return std::nullopt;
    return it->second;
  }
  bool contains(std::string_view name) const { return find(name).has_value(); }
  /// Length of the list it was built from.
  size_t size() const { return size_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, size_t, Hash, std::equal_to<>> positions_;
  size_t size_ = 0;
};

}  // namespace gov
