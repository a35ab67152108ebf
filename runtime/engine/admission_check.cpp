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

/// Evaluator::decide (one call: rules and fit, native code under the JIT) on a resolved task's
/// fields. Verdicts go to the stack for up to 256 rules, else to a per-thread buffer.
AdmissionCheck decide(const EngineCore& core, int32_t team, int32_t priority,
                      const std::array<int64_t, ir::kTaskFieldCount>& fields,
                      const int64_t* label_ids) {
  AdmissionCheck out;
  out.team = team;
  out.priority = priority;
  const size_t rules = core.module.rules.size();
  uint8_t on_stack[256];
  uint8_t* verdicts = rules <= std::size(on_stack) ? on_stack : scratch(rules, 0).verdicts.data();
  const ir::DecideInput input{fields.data(), label_ids, core.quota.usage_view()};
  ir::DecideResult result;
  if (const ir::Evaluator::DecideFunction native = core.evaluator.decide_function()) {
    native(&input, verdicts, &result);  // the JIT's code, without a virtual call
  } else {
    result = core.evaluator.decide(input, std::span<uint8_t>(verdicts, rules));
  }
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
  return decide(core, request.team, request.priority,
                core.rules.task_fields(request, core.rules.id_string(spec.id)), label_ids.data());
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
  out.fields = core.rules.task_fields(request, out.id_string);
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
  return decide(core, task.team, task.priority, task.fields, task.label_ids.data());
}

}  // namespace gov::engine
