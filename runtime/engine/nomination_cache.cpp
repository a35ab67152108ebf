#include "runtime/engine/nomination_cache.hpp"

#include <algorithm>
#include <atomic>

#include "runtime/engine/fair_share.hpp"
#include "runtime/engine/hash_mix.hpp"

namespace gov::engine {

FlavorStamps::FlavorStamps(const ir::Module& module)
    : module_(module),
      every_type_(module.settings.fair_sharing && !module.cohorts.empty()),
      by_borrowing_(module.settings.fair_sharing && module.cohorts.empty()),
      seen_(module.teams.size(), 0),
      borrowed_(by_borrowing_ ? module.teams.size() : 0, Resources{}),
      stamps_(module.flavors.size(), 0),
      local_(module.flavors.size(), 0) {}

void FlavorStamps::update(TaskStore& tasks, const QuotaState& quota) {
  tasks.take_changed_teams(changed_);
  if (by_borrowing_ && tasks.multi_flavor_admitted()) {
    by_borrowing_ = false;
    borrowed_.clear();
  }
  // The local stamps are the flavors' versions: those that changed are read again (all of them
  // at the first update, which may follow changes another consumer took).
  tasks.take_changed_flavors(changed_flavors_);
  if (!synced_) {
    for (uint32_t flavor = 0; flavor < local_.size(); ++flavor) local_[flavor] = tasks.flavor_version(flavor);
    synced_ = true;
  } else {
    for (uint32_t flavor : changed_flavors_) local_[flavor] = tasks.flavor_version(flavor);
  }
  for (uint32_t team : changed_) {
    const uint64_t version = tasks.team_version(team);
    uint64_t increase = version - seen_[team];
    seen_[team] = version;
    if (increase != 0) ++epoch_;  // the local stamps moved too
    if (every_type_) {
      for (uint64_t& stamp : stamps_) stamp += increase;
      continue;
    }
    if (by_borrowing_) {
      const Resources borrowed = borrowed_amounts(quota, team);
      if (borrowed == borrowed_[team]) continue;
      borrowed_[team] = borrowed;
      increase = 1;
    }
    for (const ir::FlavorQuota& flavor_quota : module_.teams[team].quotas) stamps_[flavor_quota.flavor] += increase;
  }
}

void NominationCache::begin_cycle() {
  if (keys_.size() < kMaxEntries) return;
  index_.clear();
  keys_.clear();
  generation_ = new_generation();
}

uint64_t NominationCache::new_generation() {
  static std::atomic<uint64_t> next{1};  // Task::nomination_generation 0 is never one
  return next.fetch_add(1, std::memory_order_relaxed);
}

NominationCache::Key NominationCache::key_of(const ir::Module& module, const Task& task) {
  Key key;
  key.team = task.team;
  key.requested_flavor = task.requested_flavor;
  key.priority = task.priority;
  key.request = task.request;
  key.unavailable_partition = task.unavailable_partition;
  const ir::Team& team = module.teams[static_cast<size_t>(task.team)];
  if (team.within_team == ir::WithinTeam::lower_or_newer_equal_priority)
    key.submitted_at = task.submitted_at;
  return key;
}

uint64_t NominationCache::hash_of(const Key& key) {
  HashMix mix;  // collisions are checked, never trusted
  mix(static_cast<uint32_t>(key.team));
  mix(static_cast<uint32_t>(key.requested_flavor));
  mix(static_cast<uint32_t>(key.priority));
  mix(static_cast<uint64_t>(key.submitted_at));
  for (Amount amount : key.request) mix(static_cast<uint64_t>(amount));
  mix(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key.unavailable_partition)));
  return mix.value();
}

NominationCache::StampSums NominationCache::stamps_of(const ir::Module& module, const Key& key,
                                                      const FlavorStamps& stamps) {
  StampSums sums;
  const auto add = [&](uint32_t flavor) {
    sums.local += stamps.local(flavor);
    sums.all += stamps[flavor] + stamps.local(flavor);
  };
  if (key.requested_flavor >= 0) {
    add(static_cast<uint32_t>(key.requested_flavor));
    return sums;
  }
  for (const ir::FlavorQuota& quota : module.teams[static_cast<size_t>(key.team)].quotas) add(quota.flavor);
  return sums;
}

bool NominationCache::holds(const Nomination& entry, const StampSums& computed_under, const StampSums& now) {
  return entry.flavor_local ? computed_under.local == now.local : computed_under.all == now.all;
}

Nomination* NominationCache::lookup(const ir::Module& module, Task& task,
                                    const FlavorStamps& stamps, bool& valid) {
  return find(module, task, stamps, valid, /*will_fill=*/true);
}

Nomination* NominationCache::peek(const ir::Module& module, Task& task, const FlavorStamps& stamps, bool& valid) {
  return find(module, task, stamps, valid, /*will_fill=*/false);
}

Nomination* NominationCache::find(const ir::Module& module, Task& task, const FlavorStamps& stamps,
                                  bool& valid, bool will_fill) {
  valid = false;
  uint32_t slot = task.nomination_slot;
  if (task.nomination_generation != generation_) {
    const Key key = key_of(module, task);
    const uint64_t hash = hash_of(key);
    if (const auto it = index_.find(hash); it != index_.end()) {
      if (!(keys_[it->second] == key)) return nullptr;  // a colliding shape holds the slot
      slot = it->second;
    } else {
      if (!will_fill || keys_.size() >= kMaxEntries) return nullptr;
      slot = static_cast<uint32_t>(keys_.size());
      index_.emplace(hash, slot);
      keys_.push_back(key);
      if (stamps_.size() < keys_.size()) stamps_.emplace_back();
      if (checked_epoch_.size() < keys_.size()) checked_epoch_.emplace_back();
      if (entries_.size() < keys_.size()) entries_.emplace_back();
      entries_[slot].own_determined = false;  // a slot reused by another shape
      entries_[slot].flavor_local = false;
      stamps_[slot] = stamps_of(module, key, stamps);
      checked_epoch_[slot] = stamps.epoch();
      task.nomination_slot = slot;
      task.nomination_generation = generation_;
      return &entries_[slot];
    }
    task.nomination_slot = slot;
    task.nomination_generation = generation_;
  }
  if (checked_epoch_[slot] != stamps.epoch()) {
    const StampSums now = stamps_of(module, keys_[slot], stamps);
    if (!holds(entries_[slot], stamps_[slot], now)) {
      if (!will_fill) return &entries_[slot];  // left stale: the next lookup finds it so too
      stamps_[slot] = now;  // the caller fills the entry in for these stamps
      checked_epoch_[slot] = stamps.epoch();
      return &entries_[slot];
    }
    checked_epoch_[slot] = stamps.epoch();
  }
  valid = true;
  return &entries_[slot];
}

}  // namespace gov::engine
