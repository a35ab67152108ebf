// Byte tests on eight bytes at once (SIMD within a register), for the scans of text that
// usually find nothing: JSON strings to escape, positions to count. Each test is exact about
// whether any byte of the word qualifies; first_flagged says which comes first.
#pragma once

#include <bit>
#include <cstddef>
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

/// Which byte of a word loaded from text (load) comes first among those a nonzero result of
/// the tests above, or of several of them ORed, flags. A test may also flag bytes after a byte
/// that qualifies (its borrow runs on), never one before it: so the lowest flag is exact, and
/// on a little-endian machine the lowest byte is the first in the text.
inline size_t first_flagged(uint64_t flags) {
  static_assert(std::endian::native == std::endian::little, "words are loaded little-endian");
  return static_cast<size_t>(__builtin_ctzll(flags)) / 8;
}

}  // namespace gov::swar
