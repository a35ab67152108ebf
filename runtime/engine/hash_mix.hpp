// The engine's one hash of small records (queue classes, nomination keys): splitmix64-style
// mixing of 64-bit fields. A hash, never an identity: every user checks collisions against the
// stored record.
#pragma once

#include <cstdint>

namespace gov::engine {

class HashMix {
 public:
  void operator()(uint64_t value) {
    h_ ^= value + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2);
    h_ = (h_ ^ (h_ >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h_ = (h_ ^ (h_ >> 27)) * 0x94d049bb133111ebULL;
    h_ ^= h_ >> 31;
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x9e3779b97f4a7c15ULL;
};

}  // namespace gov::engine
