#include "runtime/trace/holdings.hpp"

#include <algorithm>

namespace gov::trace {

namespace {

void add_amounts(ResourceArray& into, const ResourceAmounts& amounts) {
  for (const ResourceAmount& a : amounts) {
    if (a.partition.empty()) into[static_cast<size_t>(a.resource)] += a.amount;
  }
}

}  // namespace

std::vector<Holding> holdings_of(const Decision& decision) {
  std::vector<Holding> out;
  if (decision.pod_sets.empty()) {
    out.push_back({decision.flavor, {}});
    add_amounts(out.back().amounts, decision.usage);
    return out;
  }
  for (const PodSetAdmission& pod_set : decision.pod_sets) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Holding& h) { return h.flavor == pod_set.flavor; });
    if (it == out.end()) it = out.insert(out.end(), Holding{pod_set.flavor, {}});
    add_amounts(it->amounts, pod_set.usage);
  }
  return out;
}

void HoldingsClock::set_nominal(const std::string& team, const std::string& flavor, Resource resource, int64_t amount) {
  slots_[{team, flavor}].nominal[static_cast<size_t>(resource)] = amount;
}

}  // namespace gov::trace
