#include "runtime/trace/task_ids.hpp"

namespace gov::trace {

TaskIds::Entry* TaskIds::find(std::string_view id) {
  const int64_t position = index_.find(id, id_at());
  return position == IdIndex::kAbsent ? nullptr : &entry(static_cast<size_t>(position));
}

TaskIds::Entry* TaskIds::insert(std::string_view id) {
  // The entry is made first (the index reads ids back through it), and is only counted when the
  // id turns out to be new; otherwise the next insert reuses it.
  if (size_ % kChunkEntries == 0 && size_ / kChunkEntries == chunks_.size())
    chunks_.push_back(std::make_unique<Entry[]>(kChunkEntries));
  Entry& added = entry(size_);
  added.id = id;
  if (index_.insert(id, static_cast<uint32_t>(size_), id_at()) != size_) return nullptr;
  ++size_;
  return &added;
}

}  // namespace gov::trace
