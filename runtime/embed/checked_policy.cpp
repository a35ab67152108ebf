#include "runtime/embed/checked_policy.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"

namespace gov::embed {

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

namespace {

bool write_file(const fs::path& path, const std::string& text) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) return false;
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  return std::fclose(out) == 0 && written;
}

}  // namespace

std::optional<CheckedPolicy> rebuild_version(const store::Version& version) {
  if (version.files.empty()) return std::nullopt;
  // One directory per call: engines of one process may rebuild the same version at once.
  static std::atomic<uint64_t> calls{0};
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec) /
                       fmt::format("gov-version-{}-{}-{}", ::getpid(), version.info.number, calls.fetch_add(1));
  fs::remove_all(dir, ec);
  bool written = true;
  for (const store::PolicyFile& file : version.files) {
    const fs::path target = dir / fs::path(file.path).lexically_normal().relative_path();
    fs::create_directories(target.parent_path(), ec);
    written = written && write_file(target, file.text);
  }
  std::optional<CheckedPolicy> checked;
  if (written) {
    const fs::path entry = dir / fs::path(version.files.front().path).lexically_normal().relative_path();
    checked = check_file(entry.string(), /*require_cluster=*/true, {dir.string()});
  }
  fs::remove_all(dir, ec);
  if (!checked || checked->program.read_failed || !checked->ok()) return std::nullopt;
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
