// The engine's one hash of small records (queue classes, nomination keys): each 64-bit field is
// folded in with one rotate, xor and multiply (FxHash's step), and value() finishes with
// splitmix64's avalanche, so that fields differing in any bit spread over the whole word. A hash,
// never an identity: every user checks collisions against the stored record. (A full splitmix
// round per field cost ~12 instructions on a dependency chain; records hash 10-20 fields.)
#pragma once

#include <bit>
#include <cstdint>

namespace gov::engine {

class HashMix {
 public:
  void operator()(uint64_t value) { h_ = (std::rotl(h_, 5) ^ value) * 0x517cc1b727220a95ULL; }
  uint64_t value() const {
    uint64_t h = h_;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
  }

 private:
  uint64_t h_ = 0x9e3779b97f4a7c15ULL;
};

}  // namespace gov::engine
