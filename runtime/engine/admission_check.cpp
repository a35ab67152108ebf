// Engine::check_admission: rules and quota fit for one task against the current state, the
// hot path controllers call per event. Everything it calls is an Evaluator function (native
// code under the JIT) or a table lookup; nothing allocates after a thread's first call.
#include "runtime/engine/admission_check.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "runtime/engine/engine.hpp"

namespace gov::engine {
namespace {

/// Per-thread buffers the rules need (verdicts, label ids), grown once to the largest policy
/// the thread has checked.
struct Scratch {
  std::vector<uint8_t> verdicts;
  std::vector<int64_t> label_ids;
};

Scratch& scratch(size_t rules, size_t label_keys) {
  thread_local Scratch buffers;
  if (buffers.verdicts.size() < rules) buffers.verdicts.resize(rules);
  if (buffers.label_ids.size() < label_keys) buffers.label_ids.resize(label_keys);
  return buffers;
}

/// The highest borrowing level of the resources `request` asks of the flavor.
uint8_t borrowing_level(const QuotaState& quota, uint32_t team, uint32_t flavor, const ir::Resources& request) {
  uint8_t level = 0;
  for (ir::Resource r : quota.charged()) {
    if (request[ir::index(r)] != 0) level = std::max(level, quota.borrowing_level(team, flavor, r, request[ir::index(r)]));
  }
  return level;
}

/// decide's rules for a policy with a tree of cohorts: the back ends' compiled figures are the
/// flat cohort's, so the rules read the engine's (AdmissionRules::fill_figures, the tree's
/// `team.available`); the flavor is left to the caller (with_partitions, with_pod_sets), which
/// chooses it by the tree's formulas. Pending unless a deny rule matched.
AdmissionCheck decide_in_tree(const EngineCore& core, int32_t team, int32_t priority, const int64_t* fields,
                              const int64_t* label_ids) {
  AdmissionCheck out;
  out.team = team;
  out.priority = priority;
  out.verdict = AdmissionCheck::Verdict::pending;
  if (core.rule_count == 0) return out;  // nothing reads the figures
  Scratch& buffers = scratch(core.rule_count, 0);
  const auto [deny, others] =
      core.rules.verdicts(fields, label_ids, core.quota, std::span<uint8_t>(buffers.verdicts.data(), core.rule_count));
  out.warnings = others;
  if (deny >= 0) {
    out.verdict = AdmissionCheck::Verdict::reject;
    out.rule = deny;
  }
  return out;
}

}  // namespace

AdmissionCheck check_admission(const EngineCore& core, const gov::Task& spec) {
  if (!spec.pod_sets.empty() && !is_single_main(spec)) [[unlikely]] {
    thread_local PreparedTask prepared;  // reused: a warm check of pod sets allocates nothing
    prepare_into(core, spec, prepared);
    return check_admission(core, prepared);
  }
  TaskRequest request;
  if (resolve_request(core.resolver(), spec, request)) {
    AdmissionCheck out;
    out.team = request.team;
    out.priority = request.priority;
    return out;
  }
  Scratch& buffers = scratch(0, core.module.label_keys.size());
  const std::span<int64_t> label_ids(buffers.label_ids.data(), core.module.label_keys.size());
  core.rules.label_strings(spec.labels, label_ids);
  const std::array<int64_t, ir::kTaskFieldCount> fields =
      core.rules.task_fields(request, core.rules.id_string(spec.id));
  // A tree of cohorts: the back ends compile the flat fit, so the flavor is chosen again by the
  // tree's formulas (with_partitions), as for partitions. A team with resource groups: the fused
  // fit covers one flavor, so each group is fitted apart.
  const bool groups = !core.module.teams[static_cast<size_t>(request.team)].groups.empty();
  if (spec.partitions.empty() && !core.quota.tree() && !groups) [[likely]]
    return decide(core, request.team, request.priority, fields.data(), label_ids.data());
  const AdmissionCheck checked = core.quota.tree()
                                     ? decide_in_tree(core, request.team, request.priority, fields.data(), label_ids.data())
                                     : decide(core, request.team, request.priority, fields.data(), label_ids.data());
  if (!request.unavailable_partition.empty()) return no_flavor(checked);
  if (groups) {
    const PreparedPodSet one{request.requested_flavor, request.request};
    return with_pod_sets(core, checked, std::span<const PreparedPodSet>(&one, 1));
  }
  return with_partitions(core, checked, request.requested_flavor, request.request);
}

AdmissionCheck check_with_partitions(const EngineCore& core, const PreparedTask& task) {
  const AdmissionCheck checked =
      core.quota.tree() ? decide_in_tree(core, task.team, task.priority, task.fields.data(), task.label_ids.data())
                        : decide(core, task.team, task.priority, task.fields.data(), task.label_ids.data());
  if (task.unavailable_partition) return no_flavor(checked);
  if (!task.pod_sets.empty()) return with_pod_sets(core, checked, task.pod_sets);
  if (!core.module.teams[static_cast<size_t>(task.team)].groups.empty()) {
    const PreparedPodSet one{task.requested_flavor, task.request};
    return with_pod_sets(core, checked, std::span<const PreparedPodSet>(&one, 1));
  }
  return with_partitions(core, checked, task.requested_flavor, task.request);
}

AdmissionCheck no_flavor(AdmissionCheck checked) {
  if (checked.verdict != AdmissionCheck::Verdict::admit) return checked;
  checked.verdict = AdmissionCheck::Verdict::pending;
  checked.flavor = -1;
  checked.borrows = false;
  return checked;
}

// ir::conclude's choice of flavor, with the partition columns in the fit: the first of the
// team's instance types where everything fits (with when-can-borrow = try-next-flavor, the first
// that fits without borrowing, else the first borrowing fit unless the team prefers preemption
// over borrowing).
AdmissionCheck with_partitions(const EngineCore& core, AdmissionCheck checked, int32_t requested_flavor,
                               const ir::Resources& request) {
  if (checked.verdict != AdmissionCheck::Verdict::admit && checked.verdict != AdmissionCheck::Verdict::pending)
    return checked;
  AdmissionCheck out = checked;
  out.verdict = AdmissionCheck::Verdict::pending;
  out.flavor = -1;
  out.borrows = false;
  const auto team = static_cast<uint32_t>(checked.team);
  const ir::Team& team_def = core.module.teams[team];
  if (!team_def.active) return out;
  int32_t borrowing_fit = -1;
  uint8_t borrowing_fit_level = 0;
  for (const ir::FlavorQuota& quota : team_def.quotas) {
    if (requested_flavor >= 0 && quota.flavor != static_cast<uint32_t>(requested_flavor)) continue;
    const ir::FitResult fit = core.quota.fit(core.evaluator, team, quota.flavor, request);
    if (!fit.fits_all() || !core.quota.partitions_fit(team, quota.flavor, request, /*allow_borrowing=*/true)) continue;
    const bool borrows =
        fit.borrows != 0 || !core.quota.partitions_fit(team, quota.flavor, request, /*allow_borrowing=*/false);
    if (!borrows || team_def.when_can_borrow == ir::WhenCanBorrow::borrow) {
      out.verdict = AdmissionCheck::Verdict::admit;
      out.flavor = static_cast<int32_t>(quota.flavor);
      out.borrows = borrows;
      return out;
    }
    // The borrowing fit the cycle's flavor assigner would choose: in a tree the lowest borrowing
    // level (QuotaState::borrowing_level), the first of equal ones; in the flat cohort the first.
    const uint8_t level = core.quota.tree() ? borrowing_level(core.quota, team, quota.flavor, request) : 1;
    if (borrowing_fit < 0 || level < borrowing_fit_level) {
      borrowing_fit = static_cast<int32_t>(quota.flavor);
      borrowing_fit_level = level;
    }
  }
  if (borrowing_fit >= 0 && team_def.flavor_preference == ir::FlavorPreference::borrowing_over_preemption) {
    out.verdict = AdmissionCheck::Verdict::admit;
    out.flavor = borrowing_fit;
    out.borrows = true;
  }
  return out;
}

// The flavors one pod set's request (or, with resource groups, its part in one group) may take:
// the team's quotas in order, or the group's flavors; an instance type pins its group.
AdmissionCheck with_pod_sets(const EngineCore& core, AdmissionCheck checked, std::span<const PreparedPodSet> pod_sets) {
  if (checked.verdict != AdmissionCheck::Verdict::admit && checked.verdict != AdmissionCheck::Verdict::pending)
    return checked;
  AdmissionCheck out = checked;
  out.verdict = AdmissionCheck::Verdict::pending;
  out.flavor = -1;
  out.borrows = false;
  const auto team = static_cast<uint32_t>(checked.team);
  const ir::Team& team_def = core.module.teams[team];
  if (!team_def.active) return out;
  std::array<ir::Resources, kMaxSlots> assumed{};  // per flavor taken so far, by position
  std::array<uint32_t, kMaxSlots> assumed_flavor{};
  size_t assumed_count = 0;
  int32_t first = -1;
  bool borrows_any = false;
  uint32_t covered = 0;
  for (const ir::ResourceGroup& group : team_def.groups) covered |= group.covers;
  const size_t group_count = std::max<size_t>(1, team_def.groups.size());
  for (const PreparedPodSet& pod_set : pod_sets) {
    if (!team_def.groups.empty()) {
      bool pinned_somewhere = pod_set.requested_flavor < 0;
      for (const ir::ResourceGroup& group : team_def.groups) {
        pinned_somewhere = pinned_somewhere || std::find(group.flavors.begin(), group.flavors.end(),
                                                         static_cast<uint32_t>(pod_set.requested_flavor)) != group.flavors.end();
      }
      if (!pinned_somewhere) return out;
      for (size_t i = 0; i < ir::kColumnCount; ++i) {
        if (pod_set.request[i] != 0 && (covered >> i & 1u) == 0) return out;  // no group covers it
      }
    }
    for (size_t g = 0; g < group_count; ++g) {
      // Without groups: the team's quotas in order, one implicit group.
      const size_t flavor_count = team_def.groups.empty() ? team_def.quotas.size() : team_def.groups[g].flavors.size();
      const auto flavor_at = [&](size_t j) {
        return team_def.groups.empty() ? team_def.quotas[j].flavor : team_def.groups[g].flavors[j];
      };
      ir::Resources request = pod_set.request;
      if (!team_def.groups.empty()) {
        bool asks = false;
        for (size_t i = 0; i < request.size(); ++i) {
          if (!team_def.groups[g].covers_column(static_cast<ir::Resource>(i))) request[i] = 0;
          asks = asks || request[i] != 0;
        }
        if (!asks) continue;
      }
      bool pinned = false;
      for (size_t j = 0; j < flavor_count; ++j)
        pinned = pinned || (pod_set.requested_flavor >= 0 && flavor_at(j) == static_cast<uint32_t>(pod_set.requested_flavor));
      int32_t chosen = -1, borrowing_fit = -1;
      bool chosen_borrows = false;
      for (size_t j = 0; j < flavor_count; ++j) {
        const uint32_t flavor = flavor_at(j);
        if (pinned && flavor != static_cast<uint32_t>(pod_set.requested_flavor)) continue;
        if (pod_set.requested_flavor >= 0 && team_def.groups.empty() && !pinned) break;
        ir::Resources total = request;
        for (size_t k = 0; k < assumed_count; ++k) {
          if (assumed_flavor[k] != flavor) continue;
          for (size_t i = 0; i < total.size(); ++i) total[i] += assumed[k][i];
        }
        const ir::FitResult fit = core.quota.fit(core.evaluator, team, flavor, total);
        if (!fit.fits_all() || !core.quota.partitions_fit(team, flavor, total, /*allow_borrowing=*/true)) continue;
        const bool borrows =
            fit.borrows != 0 || !core.quota.partitions_fit(team, flavor, total, /*allow_borrowing=*/false);
        if (!borrows || team_def.when_can_borrow == ir::WhenCanBorrow::borrow) {
          chosen = static_cast<int32_t>(flavor);
          chosen_borrows = borrows;
          break;
        }
        if (borrowing_fit < 0) borrowing_fit = static_cast<int32_t>(flavor);
      }
      if (chosen < 0 && borrowing_fit >= 0 && team_def.flavor_preference == ir::FlavorPreference::borrowing_over_preemption) {
        chosen = borrowing_fit;
        chosen_borrows = true;
      }
      if (chosen < 0) return out;
      size_t k = 0;
      while (k < assumed_count && assumed_flavor[k] != static_cast<uint32_t>(chosen)) ++k;
      if (k == assumed_count) assumed_flavor[assumed_count++] = static_cast<uint32_t>(chosen);
      for (size_t i = 0; i < request.size(); ++i) assumed[k][i] += request[i];
      if (first < 0) first = chosen;
      borrows_any = borrows_any || chosen_borrows;
    }
  }
  out.verdict = AdmissionCheck::Verdict::admit;
  // A task asking nothing of any group: its instance type, else the first group's first (idle_flavor).
  if (first < 0 && !team_def.groups.empty()) {
    first = !pod_sets.empty() && pod_sets.front().requested_flavor >= 0 ? pod_sets.front().requested_flavor
                                                                         : static_cast<int32_t>(team_def.groups.front().flavors.front());
  }
  out.flavor = first;
  out.borrows = borrows_any;
  return out;
}

PreparedTask prepare(const EngineCore& core, const gov::Task& spec) {
  PreparedTask out;
  prepare_into(core, spec, out);
  return out;
}

void prepare_into(const EngineCore& core, const gov::Task& spec, PreparedTask& out) {
  TaskRequest request;
  out.policy = nullptr;
  out.unavailable_partition = false;
  if (!spec.pod_sets.empty() && !is_single_main(spec)) {
    thread_local std::vector<PodSetRequest> pod_sets;  // reused: names keep their capacity
    const bool valid = !resolve_pod_sets(core.resolver().without_interning(), spec, request, &pod_sets);
    if (valid) out.policy = &core.module;
    out.pod_sets.resize(valid ? pod_sets.size() : 0);
    for (size_t i = 0; i < out.pod_sets.size(); ++i) {
      out.pod_sets[i] = {pod_sets[i].requested_flavor, pod_sets[i].request};
      out.unavailable_partition = out.unavailable_partition || pod_sets[i].has_unavailable_partition;
    }
  } else {
    out.pod_sets.clear();
    if (!resolve_request(core.resolver(), spec, request)) out.policy = &core.module;
  }
  out.team = request.team;
  out.class_index = request.class_index;
  out.priority = request.priority;
  out.requested_flavor = request.requested_flavor;
  out.instances = request.instances;
  out.pods = request.pods;
  out.request = request.request;
  out.unavailable_partition = out.unavailable_partition || !request.unavailable_partition.empty();
  out.partitions = out.unavailable_partition || requests_partitions(request.request) || !out.pod_sets.empty() ||
                   core.quota.tree() ||
                   (out.policy != nullptr && !core.module.teams[static_cast<size_t>(request.team)].groups.empty());
  out.id_string = core.rules.id_string(spec.id);
  out.fields = core.rules.task_fields(request, out.id_string);
  out.label_ids.resize(core.module.label_keys.size());
  core.rules.label_strings(spec.labels, out.label_ids);
}

}  // namespace gov::engine
