// The task ids a trace reader has seen, with what its checks remember of each (the event that
// submitted it, the one that ended it): one probe of an IdIndex per event, the entries in chunks
// that never move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/support/id_index.hpp"

namespace gov::trace {

enum class EventKind : uint8_t;

/// Not thread-safe. Entries never move: pointers to them stay valid while the table lives.
class TaskIds {
 public:
  static constexpr size_t kNotEnded = SIZE_MAX;
  struct Entry {
    std::string id;            // set by insert; never changed after
    size_t submitted = 0;      // event index
    size_t ended = kNotEnded;  // event index of its finish or cancel
    EventKind ended_by{};      // finish or cancel, once ended
  };

  /// The entry of `id`, or nullptr.
  Entry* find(std::string_view id);
  /// Adds `id` and returns its new entry, or nullptr (adding nothing) when it is present. At
  /// most 2^32 - 2 ids.
  Entry* insert(std::string_view id);
  size_t size() const { return size_; }

 private:
  static constexpr size_t kChunkEntries = 4096;

  Entry& entry(size_t position) { return chunks_[position / kChunkEntries][position % kChunkEntries]; }
  auto id_at() {
    return [this](uint32_t position) -> std::string_view { return entry(position).id; };
  }

  IdIndex index_;
  std::vector<std::unique_ptr<Entry[]>> chunks_;  // entries in insertion order, never moved
  size_t size_ = 0;
};

}  // namespace gov::trace
