#include "runtime/embed/checked_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"

namespace gov::embed {

// What the loader reads, the store holds, and the other way round.
static_assert(check::kMaxProgramFiles == store::kMaxFilesPerVersion);
static_assert(check::kMaxLogicalPathBytes == store::kMaxFilePathBytes);

namespace fs = std::filesystem;

Diagnostics CheckedPolicy::diagnostics() const {
  Diagnostics all = program.diagnostics;
  program.add_import_chains(all);
  all.append(result.diagnostics);
  all.sort();
  return all;
}

CheckedPolicy check_file(const std::string& path, bool require_cluster, const check::LoadOptions& options) {
  CheckedPolicy checked;
  checked.program = check::load_program(path, options);
  if (checked.program.read_failed) return checked;
  // Syntax errors drop declarations; checking what is left would report their absence
  // as more errors. Fix the syntax first, as the user must anyway.
  if (!checked.program.diagnostics.has_errors()) checked.result = check::check(checked.program, {require_cluster});
  return checked;
}

std::optional<CheckedPolicy> check_stored_version(const store::Version& version, std::string& error) {
  const int64_t number = version.info.number;
  if (version.files.empty()) {
    error = fmt::format("version {} has no files", number);
    return std::nullopt;
  }
  if (version.files.size() > check::kMaxProgramFiles) {
    error = fmt::format("version {} has {} files; a policy has at most {}", number, version.files.size(),
                        check::kMaxProgramFiles);
    return std::nullopt;
  }
  // The store is a file anyone with write access can edit: recompute what apply recorded.
  if (const std::string actual = store::content_hash(version.files); actual != version.info.content_sha256) {
    error = fmt::format(
        "version {}'s stored files do not match its recorded content hash (recorded {}, found {}): the store "
        "was changed outside gov",
        number, version.info.content_sha256.substr(0, 12), actual.substr(0, 12));
    return std::nullopt;
  }
  check::MemorySources sources;
  for (const store::PolicyFile& file : version.files) {
    if (check::normalise_logical_path(file.path) != file.path) {
      error = fmt::format("version {} has a stored file path that is not a plain relative path: {:?}", number,
                          file.path);
      return std::nullopt;
    }
    sources.add(file.path, file.text);
  }
  CheckedPolicy checked;
  const std::string& entry = version.files.front().path;
  checked.program = check::load_program(sources, entry, entry);
  if (!checked.program.read_failed && !checked.program.diagnostics.has_errors()) {
    checked.result = check::check(checked.program, {/*require_cluster=*/true});
  }
  if (checked.program.read_failed) {
    error = fmt::format("version {} no longer loads: {}", number, checked.program.read_error);
    return std::nullopt;
  }
  if (!checked.ok()) {
    DiagnosticPrinter printer;
    printer.add(checked.diagnostics(), checked.program.sources);
    error = fmt::format("version {} no longer checks with this gov:\n{}", number, printer.text());
    return std::nullopt;
  }
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

}  // namespace gov::embed
