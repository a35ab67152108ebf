// Byte tests on eight bytes at once (SIMD within a register), for the scans of text that
// usually find nothing: JSON strings to escape, positions to count. Each test is exact about
// whether any byte of the word qualifies (not which); callers go byte by byte from the first
// word that has one. Byte order does not matter.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace gov::swar {

inline constexpr uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr uint64_t kHighs = 0x8080808080808080ULL;

/// The eight bytes of `text` from `at` (the caller checks that they exist).
inline uint64_t load(std::string_view text, size_t at) {
  uint64_t word;
  std::memcpy(&word, text.data() + at, sizeof word);
  return word;
}
/// Nonzero when some byte of `word` is zero.
inline constexpr uint64_t any_zero(uint64_t word) { return (word - kOnes) & ~word & kHighs; }
/// Nonzero when some byte of `word` equals `byte`.
inline constexpr uint64_t any_equal(uint64_t word, uint8_t byte) { return any_zero(word ^ (kOnes * byte)); }
/// Nonzero when some byte of `word` is below `bound` (exact for bound <= 128).
inline constexpr uint64_t any_below(uint64_t word, uint8_t bound) { return (word - kOnes * bound) & ~word & kHighs; }
/// Nonzero when some byte of `word` is 0x80 or above (not ASCII).
inline constexpr uint64_t any_high(uint64_t word) { return word & kHighs; }

}  // namespace gov::swar
