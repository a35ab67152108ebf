// A policy's files: the entry file and everything it imports, parsed, with import errors
// (missing file, cycle, escaping the root) reported at the `import` that caused them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/check/sources.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::check {

/// Deepest chain of imports gov follows (docs/limits.md).
inline constexpr size_t kMaxImportDepth = 32;
/// Most bytes a policy may read in total, its imports included.
inline constexpr size_t kMaxProgramBytes = 32u << 20;

/// Where a shipped catalog imported by name is recorded among a policy's files (and in a stored
/// version): `@catalog/<name>.gov`, so a stored version carries the catalog it was checked with.
inline constexpr std::string_view kCatalogLogicalDir = "@catalog";

/// Whether an import path names a shipped catalog (`import "aws-ml"`) rather than a file: a
/// name of lower-case letters, digits and hyphens starting with a letter, with no `/` and no
/// `.` (docs/language.md, "import").
bool is_catalog_name(std::string_view path);

struct ProgramFile {
  SourceId source = 0;
  ast::File ast;
  /// The file's path relative to the policy root, normalised, symlinks resolved: what
  /// identifies it and what the store records.
  std::string logical_path;
  /// Where this file was imported from (nullopt for the entry file).
  std::optional<Location> imported_at;
  std::optional<size_t> importer;  // index into Program::files
};

/// A policy's files in load order (the entry file first), with every diagnostic found
/// while reading and parsing them.
struct Program {
  SourceMap sources;
  std::vector<ProgramFile> files;
  Diagnostics diagnostics;
  bool read_failed = false;  // the entry file itself could not be read (exit status 2)
  std::string read_error;
  std::string root;  // the root as shown to the user (a real path, or "the stored version")

  /// Adds `imported from ...` notes to every diagnostic located in an imported file, so
  /// the reader sees how the file came in.
  void add_import_chains(Diagnostics& out) const;
};

/// Reads the entry `entry_logical_path` (normalised, relative to the provider's root) and
/// follows its imports, parsing each file: the import walk of driver::load, which is how a
/// policy is loaded (from disk, memory or a store). The entry is shown in diagnostics as
/// `entry_display_path`, imports displayed relative to it. An import of a catalog by name reads
/// `<name>.gov` from `catalogs` when given (a policy on disk), else `@catalog/<name>.gov` from
/// `sources` (a stored version, files in memory). Never throws.
Program read_program(const SourceProvider& sources, const std::string& entry_logical_path,
                     const std::string& entry_display_path, const SourceProvider* catalogs = nullptr);

}  // namespace gov::check
