// Engine::check_admission: rules and quota fit for one task against the current state, the
// hot path controllers call per event. Everything it calls is an Evaluator function (native
// code under the JIT) or a table lookup; nothing allocates after a thread's first call.
#include <array>
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

/// Evaluator::decide (one call: rules and fit, native code under the JIT) on a resolved task.
AdmissionCheck decide(const EngineCore& core, const TaskRequest& request, int64_t id_string,
                      const int64_t* label_ids) {
  AdmissionCheck out;
  out.team = request.team;
  out.priority = request.priority;
  const std::array<int64_t, ir::kTaskFieldCount> fields = core.rules.task_fields(request, id_string);
  Scratch& buffers = scratch(core.module.rules.size(), 0);
  const ir::DecideResult result = core.evaluator.decide(
      {fields.data(), label_ids, core.quota.usage_view()},
      std::span<uint8_t>(buffers.verdicts.data(), core.module.rules.size()));
  out.warnings = result.warnings;
  if (result.deny_rule >= 0) {
    out.verdict = AdmissionCheck::Verdict::reject;
    out.rule = result.deny_rule;
  } else if (result.flavor >= 0) {
    out.verdict = AdmissionCheck::Verdict::admit;
    out.flavor = result.flavor;
    out.borrows = result.borrows != 0;
  } else {
    out.verdict = AdmissionCheck::Verdict::pending;
  }
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
