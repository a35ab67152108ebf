// Mean and 95th percentile of waiting times in bounded memory (for the decision summary).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "gov/types.hpp"

namespace gov::trace {

/// Collects waits (milliseconds). Exact while it holds at most kExactLimit waits; past
/// that it folds them into a log-linear histogram (at most a few thousand buckets), and
/// the p95 is then within 1/256 of the true value. The mean is always exact.
/// A value type; not thread-safe.
class WaitStats {
 public:
  static constexpr size_t kExactLimit = 16384;

  /// Adds one wait; negative waits count as 0.
  void add(gov::Time wait);
  size_t count() const { return count_; }
  /// The mean, rounded half up to a millisecond; nullopt when empty.
  std::optional<gov::Time> mean() const;
  /// The 95th percentile by nearest rank (the ⌈0.95·n⌉-th smallest); nullopt when empty.
  std::optional<gov::Time> p95() const;

 private:
  void add_to_histogram(gov::Time wait);

  size_t count_ = 0;
  uint64_t sum_ = 0;                        // waits are non-negative milliseconds
  std::vector<gov::Time> exact_;         // while count_ ≤ kExactLimit
  std::map<uint32_t, uint64_t> histogram_;  // afterwards: bucket → count
};

}  // namespace gov::trace
