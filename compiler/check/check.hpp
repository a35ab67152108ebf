// Entry point of gov::check: a loaded program -> a checked policy and its diagnostics.
#pragma once

#include <string>
#include <vector>

#include "compiler/check/policy.hpp"
#include "compiler/check/program.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::check {

struct CheckOptions {
  /// Inspect, simulate, apply and compile need a complete policy: exactly one `cluster`
  /// and one `policy`. Plain `gov check` of a catalog or a rules file does not.
  bool require_cluster = false;
};

struct CheckResult {
  Policy policy;
  Diagnostics diagnostics;  // errors of this stage only (the program's parse errors stay there)
  bool ok() const { return !diagnostics.has_errors(); }
};

/// Resolves names across the program's files, checks types, units and HyperPod's limits,
/// and resolves quotas. Reports every independent problem once. When the program's parse
/// reported shape errors (schema.hpp), what it finds inside their declarations is held back.
CheckResult check(const Program& program, const CheckOptions& options = {});

/// Lint warnings for a checked policy (codes W01xx). Warnings silenced by name with
/// `# gov:allow(name)` on the line before (or at the end of) the reported line, or by
/// `allowed` (the command line's --allow), are dropped.
/// `from_elsewhere`: warnings found outside the checker (`gov lint --target`'s, from the export),
/// filtered by `allowed` and the allow comments as the lint's own are.
Diagnostics lint(const Policy& policy, const Program& program, const std::vector<std::string>& allowed = {},
                 const Diagnostics& from_elsewhere = {});

}  // namespace gov::check
