#include "runtime/engine/nomination_cache.hpp"

namespace gov::engine {

void NominationCache::begin(uint64_t epoch, Time now) {
  if (epoch == epoch_ && now == now_) return;
  epoch_ = epoch;
  now_ = now;
  index_.clear();
  keys_.clear();
}

NominationCache::Key NominationCache::key_of(const ir::Module& module, const Task& task) {
  Key key;
  key.team = task.team;
  key.requested_flavor = task.requested_flavor;
  key.priority = task.priority;
  key.request = task.request;
  const ir::Team& team = module.teams[static_cast<size_t>(task.team)];
  if (team.within_team == ir::WithinTeam::lower_or_newer_equal_priority)
    key.submitted_at = task.submitted_at;
  return key;
}

uint64_t NominationCache::hash_of(const Key& key) {
  // splitmix64 over the fields: a hash, so collisions are checked against the stored key.
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  const auto mix = [&h](uint64_t value) {
    h ^= value + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  };
  mix(static_cast<uint32_t>(key.team));
  mix(static_cast<uint32_t>(key.requested_flavor));
  mix(static_cast<uint32_t>(key.priority));
  mix(static_cast<uint64_t>(key.submitted_at));
  for (Amount amount : key.request) mix(static_cast<uint64_t>(amount));
  return h;
}

Nomination* NominationCache::find(const ir::Module& module, const Task& task) {
  const Key key = key_of(module, task);
  const auto it = index_.find(hash_of(key));
  if (it == index_.end() || !(keys_[it->second] == key)) return nullptr;
  return &entries_[it->second];
}

Nomination* NominationCache::insert(const ir::Module& module, const Task& task) {
  if (keys_.size() >= kMaxEntries) return nullptr;
  const Key key = key_of(module, task);
  const auto [it, inserted] = index_.try_emplace(hash_of(key), static_cast<uint32_t>(keys_.size()));
  if (!inserted) return nullptr;  // a colliding shape holds the slot
  keys_.push_back(key);
  if (entries_.size() < keys_.size()) entries_.emplace_back();
  Nomination& entry = entries_[keys_.size() - 1];
  entry.message_ready = false;
  entry.targets.clear();
  return &entry;
}

}  // namespace gov::engine
