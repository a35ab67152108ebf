// Finding one of millions of string ids (task ids in a trace or an engine) in one short probe:
// open addressing over 8-byte slots that hold 32 bits of the id's hash beside the position of
// whatever carries the id. The ids themselves stay with their owner, which the index reads back
// through `id_at(position)`: no node, no copy of an id, no division per lookup. The node-based
// std::unordered_map this replaces cost a cache miss per node and 70-odd bytes per id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "compiler/support/assert.hpp"

namespace gov {

/// Positions are below 2^32 - 1. `IdAt` is any callable `std::string_view(uint32_t position)`
/// giving the id at a position the index holds; it must give the same id for as long as the
/// index holds that position. Not thread-safe for writes; finds may run concurrently.
class IdIndex {
 public:
  static constexpr int64_t kAbsent = -1;

  /// The position of `id`, or kAbsent.
  template <typename IdAt>
  int64_t find(std::string_view id, IdAt&& id_at) const {
    if (slots_.empty()) return kAbsent;
    const uint64_t slot = slots_[slot_of(id, hash_of(id), id_at)];
    return slot == 0 ? kAbsent : static_cast<int64_t>(position_of(slot));
  }

  /// Adds `id` at `position` and returns `position`; when `id` is there already, changes
  /// nothing and returns the position it has.
  template <typename IdAt>
  uint32_t insert(std::string_view id, uint32_t position, IdAt&& id_at) {
    return place(id, position, id_at, /*replace=*/false);
  }
  /// Makes `id` map to `position`, whether it was there or not.
  template <typename IdAt>
  void assign(std::string_view id, uint32_t position, IdAt&& id_at) {
    place(id, position, id_at, /*replace=*/true);
  }

  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kPositionMask = 0xFFFF'FFFFULL;
  static constexpr size_t kFirstSlots = 1024;

  static uint64_t hash_of(std::string_view id) { return std::hash<std::string_view>{}(id); }
  static uint64_t tag_of(uint64_t hash) { return hash & ~kPositionMask; }
  static uint32_t position_of(uint64_t slot) { return static_cast<uint32_t>((slot & kPositionMask) - 1); }
  static uint64_t slot_value(uint64_t hash, uint32_t position) { return tag_of(hash) | (uint64_t{position} + 1); }

  /// The slot holding `id`, or the empty slot where it would go.
  template <typename IdAt>
  size_t slot_of(std::string_view id, uint64_t hash, IdAt& id_at) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == 0 || (tag_of(slot) == tag_of(hash) && id_at(position_of(slot)) == id)) return i;
    }
  }

  template <typename IdAt>
  uint32_t place(std::string_view id, uint32_t position, IdAt& id_at, bool replace) {
    GOV_ASSERT(position < kPositionMask - 1, "an id index holds positions below 2^32 - 1");
    if ((size_ + 1) * 2 > slots_.size()) grow(id_at);  // at most half full: short probes
    const uint64_t hash = hash_of(id);
    uint64_t& slot = slots_[slot_of(id, hash, id_at)];
    if (slot != 0 && !replace) return position_of(slot);
    if (slot == 0) ++size_;
    slot = slot_value(hash, position);
    return position;
  }

  template <typename IdAt>
  void grow(IdAt& id_at) {
    std::vector<uint64_t> slots(slots_.empty() ? kFirstSlots : slots_.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (const uint64_t old : slots_) {
      if (old == 0) continue;
      const uint32_t position = position_of(old);
      const uint64_t hash = hash_of(id_at(position));
      size_t i = hash & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = slot_value(hash, position);
    }
    slots_ = std::move(slots);
  }

  std::vector<uint64_t> slots_;  // 0: empty
  size_t size_ = 0;
};

}  // namespace gov
