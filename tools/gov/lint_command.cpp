// `gov lint`: check plus lint warnings, as text or for code review tools.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "compiler/bridge/bridge.hpp"
#include "compiler/diagnostics/formats.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/support/terminal_text.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

/// Copies `from` (located in `sources`) into `into`, re-homing files by path and
/// skipping diagnostics already present.
void merge_into(Diagnostics& into, SourceMap& into_sources, const Diagnostics& from, const SourceMap& sources) {
  auto home = [&](SourceId id) {
    const SourceFile& file = sources.get(id);
    for (SourceId i = 0; i < into_sources.size(); ++i) {
      if (into_sources.get(i).path() == file.path()) return i;
    }
    return into_sources.add(file.path(), file.text());
  };
  for (Diagnostic d : from.items()) {
    d.primary.source = home(d.primary.source);
    for (Note& note : d.notes) {
      if (note.where) note.where->source = home(note.where->source);
    }
    const bool seen = std::any_of(into.items().begin(), into.items().end(), [&](const Diagnostic& other) {
      return other.code == d.code && other.primary.source == d.primary.source &&
             other.primary.span == d.primary.span && other.message == d.message;
    });
    if (!seen) into.report(std::move(d));
  }
}

/// One file linted: its diagnostics with the files they point into (only those: a catalog without
/// one is not kept), and the files its policy reads, to tell whether another file of the run
/// imports it. The policy itself is not kept: a directory of thousands of files is linted in the
/// memory of one.
struct Linted {
  std::filesystem::path entry;                 // resolved; empty when unknown
  std::set<std::filesystem::path> closure;     // every file the policy read, the entry included
  Diagnostics diagnostics;
  SourceMap sources;
};

/// Which of `linted` are linted elsewhere: a file given before under another name, or one that
/// another of them imports, linted through that one and not on its own (a team library that
/// leaves the catalog to its importer warned W0118 on its own, and the documented CI job, which
/// lints every file, failed on the documented layout: a reviewer's finding, session 43). A file
/// importing its importer back (a cycle, E0220) is not counted, so that every file is linted
/// through some entry.
std::vector<bool> linted_elsewhere(const std::vector<Linted>& linted) {
  std::vector<bool> out(linted.size(), false);
  for (size_t i = 0; i < linted.size(); ++i) {
    const Linted& self = linted[i];
    if (self.entry.empty()) continue;
    // One file given twice (`x.gov` and `d/../x.gov`) is linted once: its diagnostics, keyed on
    // the path as given, were reported twice.
    for (size_t j = 0; j < i && !out[i]; ++j) out[i] = self.entry == linted[j].entry;
    for (size_t j = 0; j < linted.size() && !out[i]; ++j) {
      const Linted& other = linted[j];
      out[i] = j != i && self.entry != other.entry && other.closure.count(self.entry) != 0 &&
               self.closure.count(other.entry) == 0;
    }
  }
  return out;
}

/// The resolved path of a policy's file (as given when it cannot be resolved).
std::filesystem::path resolved_path(const driver::Policy& policy, const check::ProgramFile& file) {
  std::error_code error;
  const std::filesystem::path path = policy.checked.program.sources.get(file.source).path();
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, error);
  return error ? path.lexically_normal() : resolved;
}

/// `--target hyperpod|kueue`: what `gov export` for that target would refuse (E0401), as lint
/// warnings (W0150), so that a pull request finds out before deploy day (a new author's finding).
Diagnostics target_warnings(const Args& args, const check::Policy& policy) {
  Diagnostics out;
  const std::optional<std::string> target = args.value("target");
  // A file without a cluster or a cluster policy (a library of teams) is not exported on its own.
  if (!target || !policy.cluster || !policy.settings) return out;
  const bridge::Target which = *target == "hyperpod" ? bridge::Target::hyperpod : bridge::Target::kueue;
  for (const bridge::Dropped& construct : bridge::not_exportable(policy, which)) {
    Diagnostic& d = out.report(make_diagnostic(Code::not_exportable_to_target, construct.where,
                                               fmt::format("`gov export {}` would refuse {}", *target, construct.what),
                                               fmt::format("not exportable to {}", *target)));
    d.help = "change it, or export with `--allow-lossy`, which writes the nearest the target takes or leaves it out (docs/deploy.md)";
  }
  return out;
}

int run_lint(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov lint` needs at least one FILE\n");
    return kUsage;
  }
  const std::string format = args.value("format").value_or("text");
  if (format != "text" && format != "json" && format != "sarif" && format != "github") {
    fmt::print(stderr, "error: unknown format `{}` (expected text, json, sarif or github)\n", escape_for_terminal(format));
    return kUsage;
  }
  if (const std::optional<std::string> target = args.value("target"); target && *target != "hyperpod" && *target != "kueue") {
    fmt::print(stderr, "error: unknown target `{}` (expected hyperpod or kueue)\n", escape_for_terminal(*target));
    return kUsage;
  }
  std::vector<std::string> allowed;
  for (const auto& [name, value] : args.options) {
    if (name != "allow") continue;
    const std::optional<CodeInfo> code = find_code(value);
    if (!code) {
      fmt::print(stderr, "error: `--allow {}`: no such diagnostic; run `gov explain` for the names\n", escape_for_terminal(value));
      return kUsage;
    }
    if (code->severity == Severity::error) {
      fmt::print(stderr, "error: `--allow {}`: {} is an error; only warnings can be allowed\n", value, code->id);
      return kUsage;
    }
    allowed.push_back(value);
  }
  // Every format describes the files as one report: diagnostics are moved into one SourceMap,
  // each distinct diagnostic once (a library imported by two entry files is reported once; the
  // text format printed it once per file, a reviewer's finding, session 43).
  SourceMap merged_sources;
  Diagnostics merged;
  int io_status = kOk;
  const std::optional<std::vector<std::string>> files = policy_files(args.positional, io_status);
  if (!files) return io_status;
  std::vector<Linted> linted;
  for (const std::string& path : *files) {
    std::unique_ptr<driver::Policy> policy = load_policy(
        driver::Source::file(path, root_option(args)), driver::Request::up_to(driver::Stage::check, /*require_cluster=*/false), io_status);
    if (!policy) continue;
    const CheckedPolicy* checked = &policy->checked;
    Diagnostics all = checked->diagnostics();
    if (checked->ok()) {
      all.append(check::lint(checked->result.policy, checked->program, allowed, target_warnings(args, checked->result.policy)));
    }
    all.sort();
    Linted& one = linted.emplace_back();
    const std::vector<check::ProgramFile>& program_files = checked->program.files;
    if (!program_files.empty()) one.entry = resolved_path(*policy, program_files.front());
    for (const check::ProgramFile& file : program_files) one.closure.insert(resolved_path(*policy, file));
    merge_into(one.diagnostics, one.sources, all, checked->program.sources);
  }
  const std::vector<bool> elsewhere = linted_elsewhere(linted);
  for (size_t i = 0; i < linted.size(); ++i) {
    if (!elsewhere[i]) merge_into(merged, merged_sources, linted[i].diagnostics, linted[i].sources);
  }
  const size_t errors = merged.count(Severity::error), warnings = merged.count(Severity::warning);
  if (format == "text") {
    DiagnosticPrinter printer;
    printer.add(merged, merged_sources);
    fmt::print(stderr, "{}", printer.text());
  }
  if (format == "github") fmt::print("{}", render_github(merged, merged_sources));
  if (format == "json") fmt::print("{}", render_json(merged, merged_sources));
  if (format == "sarif") fmt::print("{}", render_sarif(merged, merged_sources, GOV_VERSION_STRING));
  if (io_status != kOk) return kUsage;
  if (errors) return kFailed;
  return warnings && args.has("deny-warnings") ? kFailed : kOk;
}

}  // namespace

Command lint_command() {
  return {{"lint", "gov lint FILE|DIR... [--format text|json|sarif|github] [--target hyperpod|kueue] [--deny-warnings] [--allow NAME]...",
           "Check policy files and report lint warnings, for people and for pull-request tools.",
           "Formats: `text` (stderr, like `gov check`), `json`, `sarif` (SARIF 2.1.0 for code scanning; one document\n"
           "for all files), "
           "`github` (workflow annotations `::warning file=...,line=...`). A warning is silenced by\n"
           "`# gov:allow(NAME)` on the line above it or at its end, or by `--allow NAME`.\n"
           "`--target hyperpod|kueue` also warns (W0150) about what `gov export` for that target would refuse.\n"
           "Exit status: 0 clean or warnings only, 1 errors (or warnings with --deny-warnings), 2 usage or I/O.",
           {{"format", "FORMAT", "text (default), json, sarif or github"},
            {"target", "TARGET", "hyperpod or kueue: warn about what that export would refuse (W0150)"},
            root_option_spec(),
            {"deny-warnings", "", "exit 1 when there are warnings"},
            {"allow", "NAME", "silence a warning by name or code (repeatable)"}}},
          run_lint};
}

}  // namespace gov::cli
