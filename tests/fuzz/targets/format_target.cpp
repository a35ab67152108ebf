// Fuzz target `format`: `gov fmt` on whatever parses. Properties: the output parses without
// errors, to the same syntax tree (spans aside) and, through the checker, to the same
// diagnostics and the same IR; formatting it again gives the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/ast/printer.hpp"
#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/format/format.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/lower/lower.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

/// What a policy means to gov: the codes and messages of the checker's diagnostics in order,
/// then the IR of a complete policy. Positions are left out (formatting moves text).
std::string meaning(const gov::check::Program& program) {
  const gov::check::CheckResult checked = gov::check::check(program);
  std::string out;
  for (const gov::Diagnostic& d : checked.diagnostics.items()) {
    out += fmt::format("{} {}\n", gov::code_info(d.code).id, d.message);
  }
  if (checked.ok() && checked.policy.cluster && checked.policy.settings) {
    out += gov::ir::print(gov::lower::lower(checked.policy));
  }
  return out;
}

/// `text` as `gov fmt` reads it: the file alone, parsed.
gov::check::Program parsed(std::string text) {
  gov::driver::Request request = gov::driver::Request::up_to(gov::driver::Stage::parse);
  request.follow_imports = false;
  gov::driver::Result loaded = gov::driver::load(gov::driver::Source::text("fuzz.gov", std::move(text)), request);
  gov::fuzz::require(loaded.ok(), "a text in memory was not read", loaded.ok() ? "" : loaded.error->message);
  return std::move(loaded.policy->checked.program);
}

std::string formatted(const gov::check::Program& program) {
  return gov::format::format(program.files[0].ast, program.sources.get(program.files[0].source));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const gov::check::Program original = parsed(gov::fuzz::text_of(data, size));
  if (original.diagnostics.has_errors()) return 0;
  const std::string once = formatted(original);
  const gov::check::Program reparsed = parsed(once);
  gov::fuzz::require(!reparsed.diagnostics.has_errors(), "the formatted text does not parse",
                     once + "\n---\n" + gov::render_all(reparsed.diagnostics, reparsed.sources));
  const gov::ast::PrintOptions no_spans{/*spans=*/false};
  const std::string tree = gov::ast::print(original.files[0].ast, no_spans);
  const std::string tree_after = gov::ast::print(reparsed.files[0].ast, no_spans);
  gov::fuzz::require(tree == tree_after, "formatting changed the syntax tree",
                     fmt::format("formatted:\n{}\n--- before:\n{}\n--- after:\n{}", once, tree, tree_after));
  const std::string twice = formatted(reparsed);
  gov::fuzz::require(twice == once, "formatting is not idempotent",
                     fmt::format("once:\n{}\n--- twice:\n{}", once, twice));
  const std::string before = meaning(original);
  const std::string after = meaning(reparsed);
  gov::fuzz::require(before == after, "formatting changed what the policy means",
                     fmt::format("formatted:\n{}\n--- before:\n{}\n--- after:\n{}", once, before, after));
  return 0;
}
