#include "runtime/trace/task_ids.hpp"

#include <cassert>
#include <cstddef>
#include <functional>

namespace gov::trace {

namespace {

constexpr uint64_t kIndexMask = 0xFFFF'FFFFULL;
constexpr size_t kFirstSlots = 1024;

uint64_t hash_of(std::string_view id) { return std::hash<std::string_view>{}(id); }
uint64_t tag_of(uint64_t hash) { return hash & ~kIndexMask; }

}  // namespace

size_t TaskIds::slot_of(std::string_view id, uint64_t hash) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const uint64_t slot = slots_[i];
    if (slot == 0 || (tag_of(slot) == tag_of(hash) && entry((slot & kIndexMask) - 1).id == id)) return i;
  }
}

TaskIds::Entry* TaskIds::find(std::string_view id) {
  if (slots_.empty()) return nullptr;
  const uint64_t slot = slots_[slot_of(id, hash_of(id))];
  return slot == 0 ? nullptr : &entry((slot & kIndexMask) - 1);
}

TaskIds::Entry* TaskIds::insert(std::string_view id) {
  assert(size_ + 1 < kIndexMask && "more task ids than a slot can index");
  if ((size_ + 1) * 2 > slots_.size()) grow();  // at most half full: short probes
  const uint64_t hash = hash_of(id);
  const size_t i = slot_of(id, hash);
  if (slots_[i] != 0) return nullptr;
  if (size_ % kChunkEntries == 0) chunks_.push_back(std::make_unique<Entry[]>(kChunkEntries));
  Entry& added = entry(size_);
  added.id = id;
  slots_[i] = tag_of(hash) | (size_ + 1);
  ++size_;
  return &added;
}

void TaskIds::place(std::vector<uint64_t>& slots, uint64_t hash, size_t index) {
  const size_t mask = slots.size() - 1;
  size_t i = hash & mask;
  while (slots[i] != 0) i = (i + 1) & mask;
  slots[i] = tag_of(hash) | (index + 1);
}

void TaskIds::grow() {
  std::vector<uint64_t> slots(slots_.empty() ? kFirstSlots : slots_.size() * 2, 0);
  for (size_t index = 0; index < size_; ++index) place(slots, hash_of(entry(index).id), index);
  slots_ = std::move(slots);
}

}  // namespace gov::trace
