#include "compiler/check/program.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "compiler/check/limits.hpp"
#include "grammar/parse.hpp"

namespace gov::check {
namespace {

namespace fs = std::filesystem;


bool is_within(const fs::path& root, const fs::path& path) {
  auto r = root.begin();
  auto p = path.begin();
  for (; r != root.end(); ++r, ++p) {
    if (r->empty()) continue;
    if (p == path.end() || *r != *p) return false;
  }
  return true;
}

class Loader {
 public:
  Loader(Program& program, fs::path root) : program_(program), root_(std::move(root)) {}

  /// Loads `display_path` (as the user sees it) unless already loaded; returns its index.
  std::optional<size_t> load(const std::string& display_path, std::optional<Location> imported_at,
                             std::optional<size_t> importer, size_t depth) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(fs::absolute(display_path, ec), ec);
    for (size_t i = 0; i < program_.files.size(); ++i) {
      if (program_.files[i].canonical_path == canonical.string()) return i;
    }
    std::string error;
    std::optional<std::string> text = read_text_file(display_path, kMaxProgramBytes - total_bytes_, error);
    if (!text) {
      if (!imported_at) {
        program_.read_failed = true;
        program_.read_error = fmt::format("cannot read `{}`: {}", display_path, error);
      } else {
        Diagnostic d = make_diagnostic(Code::import_not_found, *imported_at,
                                       fmt::format("cannot import `{}`: {}", display_path, error), "imported here");
        d.help = "import paths are relative to the importing file";
        program_.diagnostics.report(std::move(d));
      }
      return std::nullopt;
    }
    total_bytes_ += text->size();
    const SourceId id = program_.sources.add(display_path, std::move(*text));
    grammar::ParseResult parsed = grammar::parse(program_.sources, id);
    program_.diagnostics.append(parsed.diagnostics);
    const size_t index = program_.files.size();
    declarations_.add(parsed.file, program_.diagnostics);
    program_.files.push_back({id, std::move(parsed.file), canonical.string(), imported_at, importer});
    if (!declarations_.exceeded()) follow_imports(index, depth);  // else the policy is refused anyway
    return index;
  }

 private:
  void follow_imports(size_t index, size_t depth) {
    // Copy what we need: loading more files grows program_.files.
    std::vector<std::pair<std::string, Location>> imports;
    const ProgramFile& file = program_.files[index];
    const fs::path directory = fs::path(program_.sources.get(file.source).path()).parent_path();
    for (const ast::Declaration& d : file.ast.declarations) {
      if (const auto* import = std::get_if<ast::Import>(&d)) {
        imports.emplace_back((directory / import->path.plain()).lexically_normal().string(),
                             Location{file.source, import->span});
      }
    }
    for (const auto& [path, where] : imports) {
      if (!check_import(index, path, where, depth)) continue;
      load(path, where, index, depth + 1);
    }
  }

  bool check_import(size_t importer, const std::string& path, const Location& where, size_t depth) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (!is_within(root_, canonical)) {
      Diagnostic d = make_diagnostic(Code::import_outside_root, where,
                                     fmt::format("import of `{}` leaves the policy's root directory", path),
                                     "outside the root");
      std::error_code cwd_error;
      const fs::path shown = fs::relative(root_, fs::current_path(cwd_error), cwd_error);
      d.notes.push_back({std::nullopt, fmt::format("the root directory is `{}`",
                                                   cwd_error || shown.empty() ? root_.string() : shown.string())});
      d.help = "move the file under the root, or run gov from a directory that contains both";
      program_.diagnostics.report(std::move(d));
      return false;
    }
    // A cycle: the file is the importer itself or one of its importers.
    for (std::optional<size_t> at = importer; at; at = program_.files[*at].importer) {
      if (program_.files[*at].canonical_path != canonical.string()) continue;
      // The cycle as a path: the file that closes it, back up through its importers.
      std::vector<std::string> chain = {path};
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
      return false;
    }
    if (depth + 1 > kMaxImportDepth) {
      program_.diagnostics.report(make_diagnostic(
          Code::import_too_deep, where, fmt::format("imports are nested more than {} deep", kMaxImportDepth),
          "one import too many"));
      return false;
    }
    return true;
  }

  Program& program_;
  fs::path root_;
  size_t total_bytes_ = 0;
  DeclarationCounter declarations_;
};

fs::path default_root(const std::string& entry_path) {
  std::error_code ec;
  const fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  const fs::path entry = fs::weakly_canonical(fs::absolute(entry_path, ec), ec);
  if (is_within(cwd, entry)) return cwd;
  return entry.parent_path();
}

}  // namespace

Program load_program(const std::string& entry_path, const LoadOptions& options) {
  Program program;
  std::error_code ec;
  const fs::path root = options.root.empty() ? default_root(entry_path)
                                             : fs::weakly_canonical(fs::absolute(options.root, ec), ec);
  Loader loader(program, root);
  loader.load(entry_path, std::nullopt, std::nullopt, 0);
  return program;
}

Program program_from_text(const std::string& path, std::string text) {
  Program program;
  const SourceId id = program.sources.add(path, std::move(text));
  grammar::ParseResult parsed = grammar::parse(program.sources, id);
  program.diagnostics.append(parsed.diagnostics);
  DeclarationCounter().add(parsed.file, program.diagnostics);
  program.files.push_back({id, std::move(parsed.file), path, std::nullopt, std::nullopt});
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
