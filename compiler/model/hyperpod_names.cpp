#include "compiler/model/hyperpod_names.hpp"

#include <utility>

namespace gov::model {
namespace {

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

std::string kebab_case(std::string_view word) {
  std::string out;
  for (size_t i = 0; i < word.size(); ++i) {
    const char c = word[i];
    if (c == '_' || c == ' ' || c == '-') {
      if (!out.empty() && out.back() != '-') out += '-';
      continue;
    }
    // A new word starts at a capital after a lower-case letter or digit (`LendAnd`), or at the
    // last capital of a run followed by a lower-case letter (`VCpu` → `v-cpu`, `GiB` stays).
    const bool after_lower = i > 0 && is_lower_or_digit(word[i - 1]);
    const bool ends_capitals = i > 0 && is_upper(word[i - 1]) && i + 1 < word.size() && word[i + 1] >= 'a' &&
                               word[i + 1] <= 'z' && i + 2 < word.size();
    if (is_upper(c) && (after_lower || ends_capitals) && !out.empty() && out.back() != '-') out += '-';
    out += is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

std::optional<std::string_view> gov_word_for_hyperpod_name(std::string_view word) {
  // ComputeQuotaResources, ResourceSharingConfig, ComputeQuotaTarget and the scheduler config's
  // members (docs/language.md, "From the HyperPod API").
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"count", "instances"},
      {"instance-count", "instances"},
      {"accelerators", "gpus"},
      {"v-cpu", "vcpus"},
      {"v-cpus", "vcpus"},
      {"vcpu", "vcpus"},
      {"memory-in-gib", "memory"},
      {"memory-in-gi-b", "memory"},
      {"strategy", "sharing"},
      {"resource-sharing-config", "sharing"},
      {"absolute-borrow-limits", "borrow-limit"},
      {"activation-state", "active"},
      {"priority-classes", "priority"},
  };
  const std::string kebab = kebab_case(word);
  for (const auto& [hyperpod, gov] : kNames) {
    if (kebab == hyperpod) return gov;
  }
  return std::nullopt;
}

std::optional<std::string> hyperpod_queue_team(std::string_view queue) {
  constexpr std::string_view kPrefix = "hyperpod-ns-", kSuffix = "-localqueue";
  if (queue.size() <= kPrefix.size() + kSuffix.size() || !queue.starts_with(kPrefix) || !queue.ends_with(kSuffix)) {
    return std::nullopt;
  }
  return std::string(queue.substr(kPrefix.size(), queue.size() - kPrefix.size() - kSuffix.size()));
}

}  // namespace gov::model
