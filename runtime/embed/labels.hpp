// A task's labels as every reader of them takes them: each key once, at its first value.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace gov::embed {

/// Calls `visit(key, value)` for each key of `labels` once, with its first value, in order: what
/// the rules read of a key given twice through the API (a trace cannot give one twice), and so
/// what the exported state and the decision log write. Linear in the labels: a task may carry
/// any number of them.
template <typename Visit>
void for_each_first_label(const std::vector<std::pair<std::string, std::string>>& labels, Visit&& visit) {
  if (labels.size() <= 8) {  // the common case: a few labels, compared without a set
    for (size_t i = 0; i < labels.size(); ++i) {
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = labels[j].first == labels[i].first;
      if (!seen) visit(labels[i].first, labels[i].second);
    }
    return;
  }
  std::unordered_set<std::string_view> seen;
  seen.reserve(labels.size());
  for (const auto& [key, value] : labels) {
    if (seen.insert(key).second) visit(key, value);
  }
}

}  // namespace gov::embed
