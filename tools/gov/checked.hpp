// Loading and checking a policy for the commands that need a checked one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"

namespace gov::cli {

struct CheckedPolicy {
  check::Program program;
  check::CheckResult result;
  /// Parse and check diagnostics together, sorted.
  Diagnostics diagnostics() const;
  bool ok() const { return !program.diagnostics.has_errors() && result.ok(); }
};

/// Loads `path` with its imports and checks it. Returns nullopt (after printing the
/// reason) when the file cannot be read.
std::optional<CheckedPolicy> load_checked(const std::string& path, bool require_cluster,
                                          const check::LoadOptions& options = {});

/// Renders diagnostics of several programs, printing each distinct diagnostic once
/// (a catalog imported by several files is reported once), then a summary line.
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

}  // namespace gov::cli
