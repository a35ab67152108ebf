// Fuzz target `check`: the whole front end on arbitrary bytes, as `gov check`, `gov lint`
// and `gov check --emit=ir` run it: parse, check, lint, and for a complete policy lower to
// IR, print it and evaluate every rule with the interpreter. Properties: no crash, hang or
// exhausted memory; every diagnostic points inside the file and renders.
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/lower/lower.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

void check_locations(const gov::Diagnostics& diagnostics, const gov::SourceMap& sources) {
  for (const gov::Diagnostic& d : diagnostics.items()) {
    gov::fuzz::require(d.primary.source < sources.size(), "a diagnostic names an unknown file");
    const size_t size = sources.get(d.primary.source).text().size();
    const gov::Span span = d.primary.span;
    gov::fuzz::require(span.begin <= span.end && span.end <= size,
                       "a diagnostic's span lies outside the file",
                       fmt::format("{} {}..{} in {} bytes", d.message, span.begin, span.end, size));
  }
}

/// Evaluates every rule (verdicts and every register) on an all-zero input and on one with
/// every field -1: the interpreter must read only what the module defines.
void evaluate(const gov::ir::Module& module) {
  const gov::interp::Interpreter interpreter(module);
  std::vector<int64_t> labels(module.label_keys.size(), gov::ir::kAbsentLabel);
  for (int64_t fill : {int64_t{0}, int64_t{-1}}) {
    gov::ir::RuleInput input;
    input.task.fill(fill);
    input.team.fill(fill);
    input.cluster.fill(fill);
    input.labels = labels.data();
    std::vector<uint8_t> verdicts(module.rules.size());
    interpreter.evaluate_rules(input, verdicts);
    for (size_t r = 0; r < module.rules.size(); ++r) (void)interpreter.registers(r, input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As `gov check`: through the driver, a file that does not parse is not checked.
  const gov::driver::Result loaded =
      gov::driver::load(gov::driver::Source::text("fuzz.gov", gov::fuzz::text_of(data, size)),
                        gov::driver::Request::up_to(gov::driver::Stage::check, /*require_cluster=*/false));
  gov::fuzz::require(loaded.ok(), "a text in memory was not read", loaded.ok() ? "" : loaded.error->message);
  const gov::check::Program& program = loaded.policy->checked.program;
  check_locations(program.diagnostics, program.sources);
  if (program.diagnostics.has_errors()) return 0;
  const gov::check::CheckResult& checked = loaded.policy->checked.result;
  check_locations(checked.diagnostics, program.sources);
  (void)gov::render_all(checked.diagnostics, program.sources);
  if (!checked.ok()) return 0;
  const gov::Diagnostics warnings = gov::check::lint(checked.policy, program);
  check_locations(warnings, program.sources);
  (void)gov::render_all(warnings, program.sources);
  // What CheckOptions::require_cluster demands before anything lowers.
  if (!checked.policy.cluster || !checked.policy.settings) return 0;
  const gov::ir::Module module = gov::lower::lower(checked.policy);
  (void)gov::ir::print(module);
  evaluate(module);
  return 0;
}
