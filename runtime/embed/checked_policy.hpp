// A policy's source files loaded and checked, ready to lower: what the `gov` commands and the
// embedding runtime share. Reports problems as data (diagnostics, messages), never on stderr.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "runtime/store/store.hpp"

namespace gov::embed {

/// A loaded and checked program. A plain value (movable); not thread-safe to mutate.
struct CheckedPolicy {
  check::Program program;
  check::CheckResult result;
  /// Parse and check diagnostics together, sorted.
  Diagnostics diagnostics() const;
  bool ok() const { return !program.diagnostics.has_errors() && result.ok(); }
};

/// Loads `path` with its imports and checks it (checking is skipped when the files have syntax
/// errors: their absence would only cascade). `program.read_failed` tells whether the entry
/// file could not be read at all (then `program.read_error` says why). Never throws.
CheckedPolicy check_file(const std::string& path, bool require_cluster, const check::LoadOptions& options = {});

/// Checks a stored version from its stored source files, in memory: nothing is written and
/// nothing else is read. Refuses (nullopt, `error` saying why in one line) a version whose
/// files do not hash to its recorded content hash, whose stored paths are not plain relative
/// paths (`../x`, `/x`, NUL: the store was written outside gov), that has no files or more
/// than check::kMaxProgramFiles, or that no longer checks with this gov (then `error` ends
/// with the rendered diagnostics). Thread-safe.
std::optional<CheckedPolicy> check_stored_version(const store::Version& version, std::string& error);

/// Renders diagnostics of several programs, keeping each distinct diagnostic once (a catalog
/// imported by several files is reported once), then a summary line.
class DiagnosticPrinter {
 public:
  void add(const Diagnostics& diagnostics, const SourceMap& sources);
  /// The rendered text, ending with "N errors, M warnings" when there is anything.
  std::string text() const;
  size_t errors() const { return errors_; }
  size_t warnings() const { return warnings_; }

 private:
  std::vector<std::string> rendered_;
  size_t errors_ = 0;
  size_t warnings_ = 0;
};

}  // namespace gov::embed
