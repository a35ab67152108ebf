// Loading a policy: the entry file and everything it imports, parsed, with import errors
// (missing file, cycle, escaping the root) reported at the `import` that caused them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::check {

/// Deepest chain of imports gov follows (docs/limits.md).
inline constexpr size_t kMaxImportDepth = 32;
/// Most bytes a policy may read in total, its imports included.
inline constexpr size_t kMaxProgramBytes = 32u << 20;

struct ProgramFile {
  SourceId source = 0;
  ast::File ast;
  std::string canonical_path;
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

  /// Adds `imported from ...` notes to every diagnostic located in an imported file, so
  /// the reader sees how the file came in.
  void add_import_chains(Diagnostics& out) const;
};

struct LoadOptions {
  /// Imports may not leave this directory. Empty: the current directory when the entry
  /// file is inside it, else the entry file's directory.
  std::string root;
};

/// Reads, parses and follows the imports of `entry_path`. Never throws.
Program load_program(const std::string& entry_path, const LoadOptions& options = {});

/// Parses text that is already in memory as a one-file program (tests, fuzzing, stdin).
Program program_from_text(const std::string& path, std::string text);

}  // namespace gov::check
