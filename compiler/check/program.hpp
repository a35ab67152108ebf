// Loading a policy: the entry file and everything it imports, parsed, with import errors
// (missing file, cycle, escaping the root) reported at the `import` that caused them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/check/sources.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::check {

/// Deepest chain of imports gov follows (docs/limits.md).
inline constexpr size_t kMaxImportDepth = 32;
/// Most bytes a policy may read in total, its imports included.
inline constexpr size_t kMaxProgramBytes = 32u << 20;

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

struct LoadOptions {
  /// No file outside this directory is read. Empty: find_policy_root (the nearest ancestor
  /// with a `gov.toml`, else the git work tree's top, else the entry file's directory).
  std::string root;
};

/// Reads, parses and follows the imports of `entry_path` on disk (imports resolve relative to
/// the importing file; no file outside the root is ever opened: see DiskSources). Never throws.
Program load_program(const std::string& entry_path, const LoadOptions& options = {});

/// The same from any provider: the entry is `entry_logical_path` (normalised, relative to the
/// provider's root), shown in diagnostics as `entry_display_path`, imports displayed relative
/// to it. Stored versions are checked this way, from memory.
Program load_program(const SourceProvider& sources, const std::string& entry_logical_path,
                     const std::string& entry_display_path);

/// Parses text that is already in memory as a one-file program (tests, fuzzing, stdin).
Program program_from_text(const std::string& path, std::string text);

}  // namespace gov::check
