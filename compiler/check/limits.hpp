// Bounds on how much one policy may declare (docs/limits.md), counted over all of its files
// while they load, so that an oversized policy is refused before it is checked.
#pragma once

#include <array>
#include <cstddef>

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostic.hpp"

namespace gov::check {

/// Most teams of one policy (Kueue ClusterQueues in the cohort).
inline constexpr size_t kMaxTeams = 10'000;
/// Most cohorts of one policy (a tree of cohorts: Kueue Cohorts; the engine walks a task's path
/// to the root, and preemption a level's subtrees, per decision).
inline constexpr size_t kMaxCohorts = 1'000;
/// Most rules of one policy (each is evaluated for every task).
inline constexpr size_t kMaxRules = 10'000;
/// Most tests of one policy.
inline constexpr size_t kMaxTests = 10'000;
/// Most instance types over all of a policy's catalogs.
inline constexpr size_t kMaxInstanceTypes = 10'000;
/// Most instance types all catalogs hold together once `extends` copied their bases' types.
inline constexpr size_t kMaxResolvedInstanceTypes = 100'000;

/// Counts declarations file by file and reports E0006 `too-many` once per kind, at the first
/// declaration past its limit.
class DeclarationCounter {
 public:
  void add(const ast::File& file, Diagnostics& diagnostics);
  /// A limit was passed: the policy will not check, so there is no point reading more files.
  bool exceeded() const { return exceeded_; }

 private:
  enum Kind { kTeams, kRules, kTests, kInstanceTypes, kCohorts, kKinds };
  void count(Kind kind, Span span, SourceId source, Diagnostics& diagnostics);

  std::array<size_t, kKinds> counts_{};
  bool exceeded_ = false;
};

}  // namespace gov::check
