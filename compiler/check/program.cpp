#include "compiler/check/program.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <unordered_map>

#include <fmt/format.h>

#include "compiler/check/limits.hpp"
#include "compiler/check/schema.hpp"

namespace gov::check {
namespace {

namespace fs = std::filesystem;

/// How `root` is shown in a note: relative to the current directory when that is shorter.
std::string shown_root(const std::string& root) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec || root.empty() || root.front() != '/') return root;
  const fs::path relative = fs::path(root).lexically_relative(cwd);
  if (relative.empty() || relative.string().size() >= root.size()) return root;
  return relative.string();
}

/// Follows a policy's imports through a SourceProvider. Files are identified by their logical
/// path (relative to the root); a hash map makes each import O(1), so the number of imports
/// costs linear time, and at most kMaxProgramFiles files are read.
class Loader {
 public:
  Loader(Program& program, const SourceProvider& sources, const SourceProvider* catalogs)
      : program_(program), sources_(sources), catalogs_(catalogs) {}

  void load_entry(const std::string& logical, const std::string& display) {
    SourceRead read = read_file(logical);
    if (!read.ok()) {
      report_unreadable(display, read.error, std::nullopt);
      return;
    }
    add(std::move(*read.file), logical, display, std::nullopt, std::nullopt, 0);
  }

 private:
  SourceRead read_file(const std::string& logical) {
    ++files_read_;
    return sources_.read(logical, kMaxProgramBytes - total_bytes_);
  }

  /// A catalog imported by name: from the catalog directories when there are any, else from
  /// the policy's own files under kCatalogLogicalDir.
  SourceRead read_catalog(const std::string& name, const std::string& logical) {
    if (!catalogs_) return read_file(logical);
    ++files_read_;
    SourceRead read = catalogs_->read(name + ".gov", kMaxProgramBytes - total_bytes_);
    if (read.ok()) read.file->logical_path = logical;
    return read;
  }

  /// Adds a file that was read as `requested` (shown as `display`) and follows its imports,
  /// unless a symbolic link led to a file already loaded.
  void add(SourceText file, const std::string& requested, const std::string& display,
           std::optional<Location> imported_at, std::optional<size_t> importer, size_t depth) {
    if (const auto known = by_logical_.find(file.logical_path); known != by_logical_.end()) {
      by_logical_.emplace(requested, known->second);
      if (imported_at) closes_cycle(known->second, *importer, display, *imported_at);
      return;
    }
    total_bytes_ += file.text.size();
    const SourceId id = program_.sources.add(display, std::move(file.text));
    grammar::ParseResult parsed = parse_file(program_.sources, id);
    program_.diagnostics.append(parsed.diagnostics);
    const size_t index = program_.files.size();
    declarations_.add(parsed.file, program_.diagnostics);
    by_logical_.emplace(requested, index);
    by_logical_.emplace(file.logical_path, index);
    program_.files.push_back({id, std::move(parsed.file), std::move(file.logical_path), imported_at, importer});
    if (!declarations_.exceeded()) follow_imports(index, depth);  // else the policy is refused anyway
  }

  void report_unreadable(const std::string& display, const SourceError& error, std::optional<Location> imported_at) {
    if (!imported_at) {
      program_.read_failed = true;
      program_.read_error = fmt::format("cannot read `{}`: {}", display, error.reason);
      return;
    }
    if (error.outside_root) {
      report_outside_root(display, *imported_at, error.reason);
      return;
    }
    Diagnostic d = make_diagnostic(Code::import_not_found, *imported_at,
                                   fmt::format("cannot import `{}`: {}", display, error.reason), "imported here");
    d.help = is_catalog_name(display) ? "a bare name imports a shipped catalog (`aws-ml`); import a file by its path "
                                        "relative to the importing file (`\"./my-catalog.gov\"`)"
                                      : "import paths are relative to the importing file";
    program_.diagnostics.report(std::move(d));
  }

  void report_outside_root(const std::string& display, const Location& where, const std::string& why) {
    Diagnostic d = make_diagnostic(Code::import_outside_root, where,
                                   fmt::format("import of `{}` leaves the policy's root directory", display),
                                   "outside the root");
    if (!why.empty()) d.notes.push_back({std::nullopt, why});
    d.notes.push_back({std::nullopt, fmt::format("the root directory is `{}`", shown_root(program_.root))});
    d.help = "move the file under the root, or put a `gov.toml` file in a directory that contains both";
    program_.diagnostics.report(std::move(d));
  }

  void follow_imports(size_t index, size_t depth) {
    // Copy what we need: loading more files grows program_.files.
    struct Request {
      std::string raw;
      Location where;
    };
    std::vector<Request> imports;
    const ProgramFile& file = program_.files[index];
    for (const ast::Declaration& d : file.ast.declarations) {
      if (const auto* import = std::get_if<ast::Import>(&d)) {
        imports.push_back({import->path.plain(), Location{file.source, import->span}});
      }
    }
    const std::string logical_dir = logical_directory(program_.files[index].logical_path);
    const fs::path display_dir = fs::path(program_.sources.get(program_.files[index].source).path()).parent_path();
    for (const Request& request : imports) {
      if (files_exhausted_) return;
      const bool catalog = is_catalog_name(request.raw);
      const std::string display =
          catalog ? request.raw : (display_dir / request.raw).lexically_normal().string();
      if (!request.raw.empty() && request.raw.front() == '/') {
        report_outside_root(display, request.where, "an import path is relative to the importing file, never absolute");
        continue;
      }
      // `lib.gov/` names a directory (open(2) refuses a file so named): reading `lib.gov` then
      // named its imports `lib.gov/teams.gov`, files that do not exist.
      if (!request.raw.empty() && request.raw.back() == '/') {
        Diagnostic d = make_diagnostic(Code::import_not_found, request.where,
                                       fmt::format("cannot import `{}`: a path ending in `/` names a directory",
                                                   request.raw),
                                       "imported here");
        d.help = "import a policy file, such as `\"teams.gov\"`";
        program_.diagnostics.report(std::move(d));
        continue;
      }
      // A control character in a path: the store keeps no such file name (`gov apply` refused a
      // file `gov check` passed), and a terminal or a CI log would act on it.
      if (const auto control = std::find_if(request.raw.begin(), request.raw.end(),
                                            [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
          control != request.raw.end()) {
        Diagnostic d = make_diagnostic(
            Code::import_not_found, request.where,
            fmt::format("cannot import this path: it holds the control character U+{:04X}", static_cast<unsigned char>(*control)),
            "imported here");
        d.help = "name the file with printable characters (a policy's files are stored under these names)";
        program_.diagnostics.report(std::move(d));
        continue;
      }
      const std::optional<std::string> logical =
          catalog ? std::optional<std::string>(fmt::format("{}/{}.gov", kCatalogLogicalDir, request.raw))
                  : normalise_logical_path(logical_dir.empty() ? request.raw : logical_dir + "/" + request.raw);
      if (!logical) {
        report_outside_root(display, request.where, "");
        continue;
      }
      if (const auto known = by_logical_.find(*logical); known != by_logical_.end()) {
        closes_cycle(known->second, index, display, request.where);
        continue;
      }
      if (failed_.count(*logical)) {  // reported once per import, read once
        report_unreadable(display, failed_.at(*logical), request.where);
        continue;
      }
      if (depth + 1 > kMaxImportDepth) {
        program_.diagnostics.report(make_diagnostic(
            Code::import_too_deep, request.where,
            fmt::format("imports are nested more than {} deep", kMaxImportDepth), "one import too many"));
        continue;
      }
      if (files_read_ >= kMaxProgramFiles) {
        program_.diagnostics.report(make_diagnostic(
            Code::too_many, request.where, fmt::format("a policy reads at most {} files", kMaxProgramFiles),
            "one file too many"));
        files_exhausted_ = true;  // one error, not one per remaining import
        return;
      }
      SourceRead read = catalog ? read_catalog(request.raw, *logical) : read_file(*logical);
      if (!read.ok()) {
        report_unreadable(display, read.error, request.where);
        failed_.emplace(*logical, std::move(read.error));
        continue;
      }
      // A catalog read from its directory is shown by where it is on disk.
      const std::string shown = read.file->origin.empty() ? display : shown_root(read.file->origin);
      add(std::move(*read.file), *logical, shown, request.where, index, depth + 1);
    }
  }

  /// Reports an import cycle when `target` is `importer` or one of its importers.
  bool closes_cycle(size_t target, size_t importer, const std::string& display, const Location& where) {
    for (std::optional<size_t> at = importer; at; at = program_.files[*at].importer) {
      if (*at != target) continue;
      // The cycle as a path: the file that closes it, back up through its importers.
      std::vector<std::string> chain = {display};
      for (std::optional<size_t> link = importer; link; link = program_.files[*link].importer) {
        chain.push_back(program_.sources.get(program_.files[*link].source).path());
        if (link == at) break;
      }
      std::reverse(chain.begin(), chain.end());
      Diagnostic d = make_diagnostic(Code::import_cycle, where,
                                     fmt::format("import cycle: `{}`", fmt::join(chain, "` → `")),
                                     "this import closes the cycle");
      d.help = "move what the files share into a file that imports neither";
      program_.diagnostics.report(std::move(d));
      return true;
    }
    return false;
  }

  Program& program_;
  const SourceProvider& sources_;
  const SourceProvider* catalogs_;
  std::unordered_map<std::string, size_t> by_logical_;   // requested and resolved paths
  std::unordered_map<std::string, SourceError> failed_;  // paths that could not be read
  size_t total_bytes_ = 0;
  size_t files_read_ = 0;
  bool files_exhausted_ = false;
  DeclarationCounter declarations_;
};

}  // namespace

bool is_catalog_name(std::string_view path) {
  if (path.empty() || path.front() < 'a' || path.front() > 'z') return false;
  return std::all_of(path.begin(), path.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

Program read_program(const SourceProvider& sources, const std::string& entry_logical_path,
                     const std::string& entry_display_path, const SourceProvider* catalogs) {
  Program program;
  program.root = sources.root_description();
  Loader(program, sources, catalogs).load_entry(entry_logical_path, entry_display_path);
  return program;
}

void Program::add_import_chains(Diagnostics& out) const {
  for (Diagnostic& d : out.items()) {
    for (const ProgramFile& file : files) {
      if (file.source != d.primary.source) continue;
      // Walk up from this file: each file's `imported_at` is the import that brought it in.
      const ProgramFile* current = &file;
      while (current->imported_at) {
        d.notes.push_back({current->imported_at, fmt::format("`{}` is imported here", sources.get(current->source).path())});
        current = &files[*current->importer];
      }
      break;
    }
  }
}

}  // namespace gov::check
