// The task ids a trace reader has seen, with what its checks remember of each (the event that
// submitted it, the one that ended it). One lookup per event: a flat open-addressing table,
// because the node-based map it replaces spent most of a scanned event's time following
// pointers through a million nodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gov::trace {

enum class EventKind : uint8_t;

/// Not thread-safe. Entries never move: pointers to them stay valid while the table lives.
class TaskIds {
 public:
  static constexpr size_t kNotEnded = SIZE_MAX;
  struct Entry {
    std::string id;              // set by insert; never changed after
    size_t submitted = 0;        // event index
    size_t ended = kNotEnded;    // event index of its finish or cancel
    EventKind ended_by{};        // finish or cancel, once ended
  };

  /// The entry of `id`, or nullptr.
  Entry* find(std::string_view id);
  /// Adds `id` and returns its new entry, or nullptr (adding nothing) when it is present. At
  /// most 2^32 - 2 ids.
  Entry* insert(std::string_view id);
  size_t size() const { return size_; }

 private:
  static constexpr size_t kChunkEntries = 4096;

  Entry& entry(size_t index) { return chunks_[index / kChunkEntries][index % kChunkEntries]; }
  void grow();
  /// The slot of `id` (hashing to `hash`) in slots_, or the empty slot where it would go.
  size_t slot_of(std::string_view id, uint64_t hash);
  /// Puts entry `index`, whose id hashes to `hash`, in the first free slot from its own.
  static void place(std::vector<uint64_t>& slots, uint64_t hash, size_t index);

  // A slot is 0 (empty) or the entry's index + 1 in the low 32 bits beside the high 32 bits of
  // its hash, so that a probe rarely touches an entry that is not the one sought.
  std::vector<uint64_t> slots_;
  std::vector<std::unique_ptr<Entry[]>> chunks_;  // entries in insertion order, never moved
  size_t size_ = 0;
};

}  // namespace gov::trace
