#include "tools/gov/checked.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"

namespace gov::cli {

Diagnostics CheckedPolicy::diagnostics() const {
  Diagnostics all = program.diagnostics;
  program.add_import_chains(all);
  all.append(result.diagnostics);
  all.sort();
  return all;
}

std::optional<CheckedPolicy> load_checked(const std::string& path, bool require_cluster,
                                          const check::LoadOptions& options) {
  CheckedPolicy checked;
  checked.program = check::load_program(path, options);
  if (checked.program.read_failed) {
    fmt::print(stderr, "error: {}\n", checked.program.read_error);
    return std::nullopt;
  }
  // Syntax errors drop declarations; checking what is left would report their absence
  // as more errors. Fix the syntax first, as the user must anyway.
  if (!checked.program.diagnostics.has_errors()) checked.result = check::check(checked.program, {require_cluster});
  return checked;
}

void DiagnosticPrinter::add(const Diagnostics& diagnostics, const SourceMap& sources) {
  for (const Diagnostic& d : diagnostics.items()) {
    std::string text = render(d, sources);
    if (std::find(rendered_.begin(), rendered_.end(), text) != rendered_.end()) continue;
    rendered_.push_back(std::move(text));
    if (d.severity == Severity::error) ++errors_;
    if (d.severity == Severity::warning) ++warnings_;
  }
}

std::string DiagnosticPrinter::text() const {
  std::string out;
  for (const std::string& r : rendered_) out += r + "\n";
  std::vector<std::string> parts;
  if (errors_) parts.push_back(fmt::format("{} error{}", errors_, errors_ == 1 ? "" : "s"));
  if (warnings_) parts.push_back(fmt::format("{} warning{}", warnings_, warnings_ == 1 ? "" : "s"));
  if (!parts.empty()) out += fmt::format("{}\n", fmt::join(parts, ", "));
  return out;
}

}  // namespace gov::cli
