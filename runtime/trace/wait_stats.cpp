// WaitStats: exact samples while few, a log-linear histogram (HDR-style) once many.
#include "runtime/trace/wait_stats.hpp"

#include <algorithm>
#include <bit>

namespace gov::trace {

namespace {

// Buckets: values below 256 are exact; above, a value keeps its top 8 bits: bucket
// (shift << 8) | (value >> shift) with value >> shift in [128, 255]. Monotonic in value.
constexpr int kMantissaBits = 8;

uint32_t bucket_of(uint64_t value) {
  int shift = std::max(0, static_cast<int>(std::bit_width(value)) - kMantissaBits);
  return static_cast<uint32_t>(shift) << kMantissaBits | static_cast<uint32_t>(value >> shift);
}

// The middle of a bucket's range of values.
gov::Time bucket_value(uint32_t bucket) {
  uint32_t shift = bucket >> kMantissaBits;
  uint64_t low = static_cast<uint64_t>(bucket & ((1u << kMantissaBits) - 1)) << shift;
  uint64_t width = uint64_t{1} << shift;
  return static_cast<gov::Time>(low + (width - 1) / 2);
}

// The 1-based nearest rank of the 95th percentile of n values: ⌈0.95·n⌉.
size_t p95_rank(size_t n) {
  return (n * 95 + 99) / 100;
}

}  // namespace

void WaitStats::add(gov::Time wait) {
  wait = std::max<gov::Time>(wait, 0);
  ++count_;
  sum_ += static_cast<uint64_t>(wait);
  if (histogram_.empty() && exact_.size() < kExactLimit) {
    exact_.push_back(wait);
    return;
  }
  if (!exact_.empty()) {  // the limit is reached: fold what is kept into the histogram
    for (gov::Time kept : exact_) add_to_histogram(kept);
    exact_.clear();
    exact_.shrink_to_fit();
  }
  add_to_histogram(wait);
}

void WaitStats::add_to_histogram(gov::Time wait) {
  ++histogram_[bucket_of(static_cast<uint64_t>(wait))];
}

std::optional<gov::Time> WaitStats::mean() const {
  if (count_ == 0) return std::nullopt;
  uint64_t n = count_;
  return static_cast<gov::Time>(sum_ / n + (sum_ % n * 2 >= n ? 1 : 0));
}

std::optional<gov::Time> WaitStats::p95() const {
  if (count_ == 0) return std::nullopt;
  size_t rank = p95_rank(count_);
  if (histogram_.empty()) {
    std::vector<gov::Time> sorted = exact_;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(rank - 1),
                     sorted.end());
    return sorted[rank - 1];
  }
  uint64_t seen = 0;
  for (const auto& [bucket, count] : histogram_) {
    seen += count;
    if (seen >= rank) return bucket_value(bucket);
  }
  return bucket_value(histogram_.rbegin()->first);
}

}  // namespace gov::trace
