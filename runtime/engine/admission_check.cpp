// Engine::check_admission: rules and quota fit for one task against the current state, the
// hot path controllers call per event. Everything it calls is an Evaluator function (native
// code under the JIT) or a table lookup; nothing allocates after a thread's first call.
#include <vector>

#include "runtime/engine/engine.hpp"
#include "runtime/engine/engine_core.hpp"

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

/// Rules, in declared order: the first matching deny rule rejects; others count as warnings.
void apply_rules(const EngineCore& core, const TaskRequest& request, const TaskSpec& spec,
                 AdmissionCheck& out) {
  const ir::Module& module = core.module;
  if (module.rules.empty()) return;
  Scratch& buffers = scratch(module.rules.size(), module.label_keys.size());
  const std::span<uint8_t> verdicts(buffers.verdicts.data(), module.rules.size());
  ir::RuleInput input;
  core.rules.build_input(request, spec.id, spec.labels, core.quota, input,
                         std::span<int64_t>(buffers.label_ids.data(), module.label_keys.size()));
  core.evaluator.evaluate_rules(input, verdicts);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!verdicts[i]) continue;
    if (module.rules[i].action == ir::RuleAction::deny && out.rule < 0) {
      out.rule = static_cast<int32_t>(i);
      out.verdict = AdmissionCheck::Verdict::reject;
    } else {
      ++out.warnings;
    }
  }
}

/// The first of the team's instance types (declared order) where the request fits now.
void fit_quota(const EngineCore& core, const TaskRequest& request, AdmissionCheck& out) {
  const ir::Team& team = core.module.teams[static_cast<size_t>(request.team)];
  out.verdict = AdmissionCheck::Verdict::pending;
  if (!team.active) return;
  const auto team_index = static_cast<uint32_t>(request.team);
  for (const ir::FlavorQuota& quota : team.quotas) {
    if (request.requested_flavor >= 0 && quota.flavor != static_cast<uint32_t>(request.requested_flavor))
      continue;
    const ir::FitResult fit =
        core.evaluator.fit(core.quota.fit_input(team_index, quota.flavor, request.request));
    if (!fit.fits_all()) continue;
    out.verdict = AdmissionCheck::Verdict::admit;
    out.flavor = static_cast<int32_t>(quota.flavor);
    out.borrows = fit.borrows != 0;
    return;
  }
}

}  // namespace

AdmissionCheck check_admission(const EngineCore& core, const TaskSpec& spec) {
  AdmissionCheck out;
  TaskRequest request;
  const bool invalid = resolve_request(core.resolver(), spec, request).has_value();
  out.team = request.team;
  out.priority = request.priority;
  if (invalid) return out;
  apply_rules(core, request, spec, out);
  if (out.verdict == AdmissionCheck::Verdict::reject) return out;
  fit_quota(core, request, out);
  return out;
}

}  // namespace gov::engine
