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
void apply_rules(const EngineCore& core, const TaskRequest& request, int64_t id_string,
                 const int64_t* label_ids, AdmissionCheck& out) {
  const ir::Module& module = core.module;
  if (module.rules.empty()) return;
  Scratch& buffers = scratch(module.rules.size(), 0);
  const std::span<uint8_t> verdicts(buffers.verdicts.data(), module.rules.size());
  ir::RuleInput input;
  core.rules.fill_input(request, id_string, label_ids, core.quota, input);
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

/// Rules, then (unless rejected) the fit, of a resolved task.
AdmissionCheck decide(const EngineCore& core, const TaskRequest& request, int64_t id_string,
                      const int64_t* label_ids) {
  AdmissionCheck out;
  out.team = request.team;
  out.priority = request.priority;
  apply_rules(core, request, id_string, label_ids, out);
  if (out.verdict != AdmissionCheck::Verdict::reject) fit_quota(core, request, out);
  return out;
}

}  // namespace

AdmissionCheck check_admission(const EngineCore& core, const TaskSpec& spec) {
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
  return decide(core, request, core.rules.id_string(spec.id), label_ids.data());
}

PreparedTask prepare(const EngineCore& core, const TaskSpec& spec) {
  PreparedTask out;
  TaskRequest request;
  out.valid = !resolve_request(core.resolver(), spec, request).has_value();
  out.team = request.team;
  out.class_index = request.class_index;
  out.priority = request.priority;
  out.requested_flavor = request.requested_flavor;
  out.instances = request.instances;
  out.pods = request.pods;
  out.request = request.request;
  out.id_string = core.rules.id_string(spec.id);
  out.label_ids.resize(core.module.label_keys.size());
  core.rules.label_strings(spec.labels, out.label_ids);
  return out;
}

AdmissionCheck check_admission(const EngineCore& core, const PreparedTask& task) {
  if (!task.valid || task.label_ids.size() != core.module.label_keys.size()) {
    AdmissionCheck out;
    out.team = task.team;
    out.priority = task.priority;
    return out;
  }
  const TaskRequest request{task.team,      task.class_index, task.priority, task.requested_flavor,
                            task.instances, task.pods,        task.request};
  return decide(core, request, task.id_string, task.label_ids.data());
}

}  // namespace gov::engine
