// Runs both back ends on the same inputs, and shrinks any disagreement to a small rule.
#include "compiler/jit/fuzz/differential.hpp"

#include <fmt/format.h>

#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/rule_index.hpp"

namespace gov::jit::fuzz {
namespace {

/// Whether a fresh back end for `candidate.module` still disagrees with the interpreter on
/// its rule for its input (updating both verdicts).
bool still_fails(Mismatch& candidate, const BackEnd& back_end) {
  // Shrinking changes the rules: an index built for the old ones would be refused (or wrong).
  if (candidate.module.rule_index.built) candidate.module.rule_index = ir::index_rules(candidate.module);
  const std::unique_ptr<ir::Evaluator> tested = back_end(candidate.module);
  if (!tested) return false;
  const ir::RuleInput input = candidate.input.view();
  std::vector<uint8_t> jit_verdicts(candidate.module.rules.size());
  std::vector<uint8_t> interp_verdicts(candidate.module.rules.size());
  tested->evaluate_rules(input, jit_verdicts);
  interp::Interpreter(candidate.module).evaluate_every_rule(input, interp_verdicts);
  candidate.jit = jit_verdicts[candidate.rule];
  candidate.interp = interp_verdicts[candidate.rule];
  return candidate.jit != candidate.interp;
}

ir::Rule& only_rule(Mismatch& m) {
  return m.module.rules[0];
}

/// The shortest prefix of the condition that still fails (its last register becomes the verdict).
bool shorten(Mismatch& m, const BackEnd& back_end) {
  for (uint32_t length = 1; length < only_rule(m).condition_length; ++length) {
    Mismatch candidate = m;
    only_rule(candidate).code.resize(length);
    only_rule(candidate).condition_length = length;
    if (still_fails(candidate, back_end)) {
      m = std::move(candidate);
      return true;
    }
  }
  return false;
}

/// Replaces one instruction at a time by the constant the interpreter computes for it.
bool constant_fold(Mismatch& m, const BackEnd& back_end) {
  bool changed = false;
  const std::vector<int64_t> values = interp::Interpreter(m.module).registers(0, m.input.view());
  for (size_t i = 0; i + 1 < only_rule(m).condition_length; ++i) {
    if (only_rule(m).code[i].op == ir::Op::constant) continue;
    Mismatch candidate = m;
    only_rule(candidate).code[i] =
        ir::Instr{ir::Op::constant, only_rule(m).code[i].type, -1, -1, values[i]};
    if (still_fails(candidate, back_end)) {
      m = std::move(candidate);
      changed = true;
    }
  }
  return changed;
}

/// Drops instructions the verdict does not read, renumbering the rest.
bool drop_dead(Mismatch& m, const BackEnd& back_end) {
  std::vector<ir::Instr>& code = only_rule(m).code;
  if (code.empty()) return false;
  std::vector<bool> live(code.size(), false);
  live.back() = true;
  for (size_t i = code.size(); i-- > 0;) {
    if (!live[i]) continue;
    if (code[i].a >= 0) live[static_cast<size_t>(code[i].a)] = true;
    if (code[i].b >= 0) live[static_cast<size_t>(code[i].b)] = true;
  }
  std::vector<int32_t> renumbered(code.size(), -1);
  std::vector<ir::Instr> kept;
  for (size_t i = 0; i < code.size(); ++i) {
    if (!live[i]) continue;
    ir::Instr in = code[i];
    if (in.a >= 0) in.a = renumbered[static_cast<size_t>(in.a)];
    if (in.b >= 0) in.b = renumbered[static_cast<size_t>(in.b)];
    renumbered[i] = static_cast<int32_t>(kept.size());
    kept.push_back(in);
  }
  if (kept.size() == code.size()) return false;
  Mismatch candidate = m;
  only_rule(candidate).code = kept;
  only_rule(candidate).condition_length = static_cast<uint32_t>(kept.size());
  if (!still_fails(candidate, back_end)) return false;
  m = std::move(candidate);
  return true;
}

std::string input_text(const InputCase& input) {
  std::string out;
  const auto entries = [&out](std::string_view name, const auto& array) {
    for (size_t i = 0; i < array.size(); ++i) {
      if (array[i] != 0) out += fmt::format("  {}[{}] = {}\n", name, i, array[i]);
    }
  };
  entries("task", input.fields.task);
  entries("team", input.fields.team);
  entries("cluster", input.fields.cluster);
  if (!input.has_labels) return out + "  labels = null\n";
  return out + fmt::format("  labels = [{}]\n", fmt::join(input.labels, ", "));
}

std::string fit_text(const ir::FitResult& fit) {
  return fmt::format("{{fits {:04b}, borrows {:04b}, exceeds {:04b}, has_quota {}}}", fit.fits,
                     fit.borrows, fit.exceeds, fit.has_quota);
}

/// Buffers reused across inputs (the comparisons run millions of times per test).
struct Scratch {
  std::vector<int64_t> jit_values;
  std::vector<int64_t> interp_values;
};

/// The first rule whose message values differ, as a Mismatch.
std::optional<Mismatch> message_mismatch(const ir::Module& module, const ir::Evaluator& jit,
                                         const ir::Evaluator& interpreter, const InputCase& input,
                                         Scratch& scratch) {
  const ir::RuleInput view = input.view();
  std::vector<int64_t>& jit_values = scratch.jit_values;
  std::vector<int64_t>& interp_values = scratch.interp_values;
  for (size_t r = 0; r < module.rules.size(); ++r) {
    const size_t parts = module.rules[r].message.size();
    jit_values.assign(parts, 0);
    interp_values.assign(parts, 0);
    jit.message_values(r, view, jit_values);
    interpreter.message_values(r, view, interp_values);
    if (jit_values == interp_values) continue;
    Mismatch m{module, r, input, 0, 0, Check::message, ""};
    m.answers = fmt::format("message values of rule {}: jit [{}], interp [{}]", r,
                            fmt::join(jit_values, ", "), fmt::join(interp_values, ", "));
    return m;
  }
  return std::nullopt;
}

/// Priority, fit and may-preempt of the input's DecisionCase.
std::optional<Mismatch> decision_mismatch(const ir::Module& module, const ir::Evaluator& jit,
                                          const ir::Evaluator& interpreter, const InputCase& input) {
  const DecisionCase& d = input.decision;
  const auto mismatch = [&](Check check, std::string answers) {
    return Mismatch{module, 0, input, 0, 0, check, std::move(answers)};
  };
  if (jit.priority(d.class_index) != interpreter.priority(d.class_index)) {
    return mismatch(Check::priority,
                    fmt::format("priority of class {}: jit {}, interp {}", d.class_index,
                                jit.priority(d.class_index), interpreter.priority(d.class_index)));
  }
  const ir::FitResult jit_fit = jit.fit(d.fit_input());
  const ir::FitResult interp_fit = interpreter.fit(d.fit_input());
  if (jit_fit != interp_fit) {
    return mismatch(Check::fit, fmt::format("fit: jit {}, interp {}", fit_text(jit_fit),
                                            fit_text(interp_fit)));
  }
  if (jit.may_preempt(d.pair) != interpreter.may_preempt(d.pair)) {
    return mismatch(Check::may_preempt, fmt::format("may_preempt: jit {}, interp {}",
                                                    jit.may_preempt(d.pair),
                                                    interpreter.may_preempt(d.pair)));
  }
  const int64_t* labels = input.has_labels ? input.labels.data() : nullptr;
  const ir::DecideResult a = jit.decide(d.decide_input(labels));
  const ir::DecideResult b = interpreter.decide(d.decide_input(labels));
  if (a != b) {
    return mismatch(Check::decide,
                    fmt::format("decide: jit {{deny {}, warnings {}, flavor {}, borrows {}}}, "
                                "interp {{deny {}, warnings {}, flavor {}, borrows {}}}",
                                a.deny_rule, a.warnings, a.flavor, a.borrows, b.deny_rule,
                                b.warnings, b.flavor, b.borrows));
  }
  return std::nullopt;
}

std::string decision_text(const ir::Module& module, const DecisionCase& d) {
  std::string out = fmt::format(
      "  fit: team {} flavor {} request [{}] usage [{}] cohort usage [{}]\n", d.team, d.flavor,
      fmt::join(d.request, ", "), fmt::join(d.usage, ", "), fmt::join(d.cohort_usage, ", "));
  const ir::QuotaTable table = ir::quota_table(module);
  if (d.team < table.team_count && d.flavor < table.flavor_count) {
    const ir::QuotaCell& cell = table.cell(d.team, d.flavor);
    out += fmt::format(
        "  cell: present {} nominal [{}] borrowing limit [{}] lendable [{}] local [{}] "
        "cohort quota [{}]\n",
        cell.present, fmt::join(cell.nominal, ", "), fmt::join(cell.borrowing_limit, ", "),
        fmt::join(cell.lendable, ", "), fmt::join(cell.local, ", "),
        fmt::join(table.cohort_quota[d.flavor], ", "));
  }
  out += fmt::format("  class index {}\n", d.class_index);
  out += fmt::format("  decide: task [{}] usage [{}] cohort [{}] flavor usage [{}]\n",
                     fmt::join(d.task, ", "), fmt::join(d.usage_table, ", "),
                     fmt::join(d.cohort_table, ", "), fmt::join(d.flavor_table, ", "));
  const ir::PreemptionPair& p = d.pair;
  return out + fmt::format(
                   "  may_preempt: preemptor team {} priority {} submitted {}; candidate team {} "
                   "priority {} submitted {}\n",
                   p.preemptor_team, p.preemptor_priority, p.preemptor_submitted, p.candidate_team,
                   p.candidate_priority, p.candidate_submitted);
}

}  // namespace

std::optional<Mismatch> first_mismatch(const ir::Module& module, const ir::Evaluator& jit,
                                       std::span<const InputCase> inputs) {
  const interp::Interpreter interpreter(module);
  std::vector<uint8_t> jit_verdicts(module.rules.size());
  std::vector<uint8_t> interp_verdicts(module.rules.size());
  Scratch scratch;
  for (const InputCase& input : inputs) {
    const ir::RuleInput view = input.view();
    jit.evaluate_rules(view, jit_verdicts);
    // The reference evaluates every rule: the JIT's rule index must leave out only rules that
    // cannot match.
    interpreter.evaluate_every_rule(view, interp_verdicts);
    for (size_t r = 0; r < module.rules.size(); ++r) {
      if (jit_verdicts[r] != interp_verdicts[r])
        return Mismatch{module, r, input, jit_verdicts[r], interp_verdicts[r], Check::verdict, ""};
    }
    if (auto found = message_mismatch(module, jit, interpreter, input, scratch)) return found;
    if (auto found = decision_mismatch(module, jit, interpreter, input)) return found;
  }
  return std::nullopt;
}

BackEnd jit_back_end(const Options& options) {
  return [options](const ir::Module& module) -> std::unique_ptr<ir::Evaluator> {
    Result<std::unique_ptr<JitEvaluator>> jit = compile_and_load(module, options);
    if (!jit.ok()) return nullptr;
    return std::move(jit).value();
  };
}

Mismatch shrink(Mismatch mismatch, const BackEnd& back_end) {
  if (mismatch.check != Check::verdict) return mismatch;
  Mismatch alone = mismatch;
  ir::Rule rule = mismatch.module.rules[mismatch.rule];
  rule.code.resize(rule.condition_length);
  rule.message.clear();
  alone.module.rules = {rule};
  alone.rule = 0;
  // A disagreement that needs the other rules stays whole: it is a cross-rule bug.
  if (!still_fails(alone, back_end)) return mismatch;
  for (bool changed = true; changed;) {
    changed = shorten(alone, back_end);
    changed = constant_fold(alone, back_end) || changed;
    changed = drop_dead(alone, back_end) || changed;
  }
  return alone;
}

std::string describe(const Mismatch& m) {
  if (m.check != Check::verdict) {
    std::string out = "JIT and interpreter disagree on " + m.answers + "\n";
    out += ir::print(m.module);
    out += "input (entries not listed are 0):\n" + input_text(m.input);
    return out + decision_text(m.module, m.input.decision);
  }
  const ir::Rule& rule = m.module.rules[m.rule];
  std::string out = fmt::format("JIT and interpreter disagree on rule {} `{}`: jit {}, interp {}\n",
                                m.rule, rule.name, m.jit, m.interp);
  out += ir::print(m.module);
  out += "input (entries not listed are 0):\n" + input_text(m.input);
  const std::vector<int64_t> registers =
      interp::Interpreter(m.module).registers(m.rule, m.input.view());
  out += "interpreter registers:\n";
  for (size_t i = 0; i < rule.condition_length; ++i)
    out += fmt::format("  %{} = {}\n", i, registers[i]);
  return out;
}

TrialOutcome run_trial(uint64_t seed, const GeneratorOptions& options, size_t inputs,
                       const Options& jit_options) {
  std::mt19937_64 rng(seed);
  TrialOutcome outcome;
  const ir::Module module = random_module(rng, options);
  outcome.rules = module.rules.size();
  Result<std::unique_ptr<JitEvaluator>> jit = compile_and_load(module, jit_options);
  if (!jit.ok()) {
    outcome.error = jit.error();
    return outcome;
  }
  const InputGenerator generator(module);
  std::vector<InputCase> cases;
  cases.reserve(inputs);
  for (size_t i = 0; i < inputs; ++i) cases.push_back(generator.next(rng));
  outcome.verdicts = inputs * module.rules.size();
  outcome.decisions = inputs * (module.rules.size() + 4);
  if (std::optional<Mismatch> found = first_mismatch(module, *jit.value(), cases))
    outcome.mismatch = shrink(*found, jit_back_end(jit_options));
  return outcome;
}

}  // namespace gov::jit::fuzz
