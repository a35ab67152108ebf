#include "runtime/engine/messages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "compiler/model/partitions.hpp"
#include "compiler/model/quantities.hpp"
#include "runtime/engine/hash_mix.hpp"

namespace gov::engine {
namespace {

std::string_view flavor_name(const ir::Module& module, uint32_t flavor) {
  return module.flavors[flavor].name;
}

std::string resource_name(const ir::Module& module, const FlavorReason& reason) {
  if (reason.unavailable_partition != nullptr) return model::partition_resource_name(*reason.unavailable_partition);
  return module.column_kubernetes_name(reason.resource);
}

std::string head_reason(const ir::Module& module, const FlavorReason& reason) {
  const std::string r = resource_name(module, reason);
  const std::string_view f = flavor_name(module, reason.flavor);
  switch (reason.kind) {
    case FlavorReason::Kind::exceeds_max_capacity:
      return fmt::format(
          "insufficient quota for {} in flavor {}, previously considered podsets requests ({}) + "
          "current podset "
          "request ({}) > maximum capacity ({})",
          r, f, quantity_text(reason.resource, reason.assumed), quantity_text(reason.resource, reason.request),
          quantity_text(reason.resource, reason.max_capacity));
    case FlavorReason::Kind::insufficient_unused:
      return fmt::format("insufficient unused quota for {} in flavor {}, {} more needed", r, f,
                         quantity_text(reason.resource, reason.lack));
    case FlavorReason::Kind::flavor_mismatch:
      return fmt::format("flavor {} doesn't match node affinity", f);
    case FlavorReason::Kind::resource_unavailable:
      return fmt::format("resource {} unavailable in ClusterQueue", r);
  }
  return {};
}

// v0.8/v0.9.0 checked the borrowing limit first and had no maximum-capacity text
// (docs/kueue-reference.md §4 "Reason strings by version", §10).
std::string v0_9_reason(const ir::Module& module, const FlavorReason& reason) {
  const std::string r = resource_name(module, reason);
  const std::string_view f = flavor_name(module, reason.flavor);
  switch (reason.kind) {
    case FlavorReason::Kind::exceeds_max_capacity:
    case FlavorReason::Kind::insufficient_unused:
      if (reason.beyond_borrowing_limit)
        return fmt::format("borrowing limit for {} in flavor {} exceeded", r, f);
      return fmt::format("insufficient unused quota in cohort for {} in flavor {}, {} more needed",
                         r, f, quantity_text(reason.resource, reason.lack));
    case FlavorReason::Kind::flavor_mismatch:
    case FlavorReason::Kind::resource_unavailable:
      return head_reason(module, reason);
  }
  return {};
}

}  // namespace

std::string quantity_text(ir::Resource resource, Amount amount) {
  if (ir::is_partition(resource)) return fmt::format("{}", amount);  // a count of partitions
  return model::format_amount(resource, amount, model::kubernetes_notation());
}

std::string reason_text(const ir::Module& module, MessageDialect dialect,
                        const FlavorReason& reason) {
  switch (dialect) {
    case MessageDialect::head:
      return head_reason(module, reason);
    case MessageDialect::kueue_v0_9:
      return v0_9_reason(module, reason);
  }
  return {};
}

const std::string& ReasonTexts::text(const FlavorReason& reason) {
  FlavorReason key = reason;
  key.pod_set = 0;
  HashMix mix;  // collisions are checked, never trusted
  mix(static_cast<uint64_t>(key.kind) | static_cast<uint64_t>(key.resource) << 8 |
      static_cast<uint64_t>(key.beyond_borrowing_limit) << 16 | static_cast<uint64_t>(key.flavor) << 32);
  for (Amount amount : {key.request, key.assumed, key.max_capacity, key.lack}) mix(static_cast<uint64_t>(amount));
  mix(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key.unavailable_partition)));
  if (slots_.empty()) slots_.resize(kSlots);
  Slot& slot = slots_[mix.value() & (kSlots - 1)];
  if (!slot.used || !(slot.reason == key)) {
    slot.reason = key;
    slot.text = reason_text(module_, dialect_, key);
    slot.used = true;
  }
  return slot.text;
}

void render_assignment_message(ReasonTexts& cache, std::span<const FlavorReason> reasons, std::string& out,
                               std::span<const std::string_view> pod_sets) {
  thread_local std::vector<std::string> texts;  // reused: no allocation once warm
  out.clear();
  const size_t groups = pod_sets.empty() ? 1 : pod_sets.size();
  for (size_t group = 0; group < groups; ++group) {
    size_t count = 0;
    for (const FlavorReason& reason : reasons) {
      if (!pod_sets.empty() && reason.pod_set != group) continue;
      if (count == texts.size()) texts.emplace_back();
      texts[count++].assign(cache.text(reason));  // copied: a later reason may take the slot
    }
    if (count == 0 && !pod_sets.empty()) continue;
    std::sort(texts.begin(), texts.begin() + static_cast<std::ptrdiff_t>(count));
    if (!out.empty()) out.append("; ");
    out.append("couldn't assign flavors to pod set ");
    out.append(pod_sets.empty() ? kPodSetName : pod_sets[group]);
    out.append(": ");
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) out.append(", ");
      out.append(texts[i]);
    }
  }
}

std::string admitted_message(std::string_view team) {
  return fmt::format("Quota reserved in ClusterQueue {}", team);
}

std::string inactive_team_message(std::string_view team) {
  return fmt::format("ClusterQueue {} is inactive", team);
}

std::string pending_preemption_message(std::string_view assignment_message, size_t victims) {
  return fmt::format("{}. Pending the preemption of {} workload(s)", assignment_message, victims);
}

std::string preempted_message(MessageDialect dialect, std::string_view preemptor,
                              PreemptionKind kind, bool while_borrowing) {
  std::string_view reason;
  switch (kind) {
    case PreemptionKind::in_team:
      reason = "prioritization in the ClusterQueue";
      break;
    case PreemptionKind::reclaim:
      reason = while_borrowing ? "reclamation within the cohort while borrowing"
                               : "reclamation within the cohort";
      break;
    case PreemptionKind::fair_sharing:
      reason = dialect == MessageDialect::head ? "Fair Sharing within the cohort"
                                               : "fair sharing within the cohort";
      break;
  }
  return fmt::format("Preempted to accommodate a workload (UID: {}) due to {}", preemptor, reason);
}

std::string cohort_path(const ir::Module& module, uint32_t team) {
  const int32_t first = module.teams[team].cohort;
  if (first < 0) return {};
  std::vector<std::string_view> parts = {module.teams[team].name};
  // Parents are checked to form no cycle (E0343); the bound keeps a module built otherwise finite.
  for (int32_t c = first; c >= 0 && parts.size() <= module.cohorts.size(); c = module.cohorts[static_cast<size_t>(c)].parent)
    parts.push_back(module.cohorts[static_cast<size_t>(c)].name);
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    out += '/';
    out += *it;
  }
  return out;
}

std::string preemption_paths(const ir::Module& module, uint32_t preemptor_team, uint32_t victim_team) {
  return fmt::format("; preemptor path: {}; preemptee path: {}", cohort_path(module, preemptor_team),
                     cohort_path(module, victim_team));
}

}  // namespace gov::engine
