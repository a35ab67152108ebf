// The engine's state lock (a writer-preferring reader-writer lock that refuses re-entry).
#pragma once

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/support/assert.hpp"
#include "gov/types.hpp"

namespace gov::embed {

/// The engine's state lock: a reader-writer lock that prefers writers. std::shared_mutex is
/// glibc's default rwlock, which prefers readers: threads asking check() without pause kept a
/// submit waiting for seconds (measured: 6 readers, 14 s worst case). Here a waiting writer
/// stops new readers, so state changes get in between queries. A SharedMutex for
/// std::shared_lock / std::unique_lock.
///
/// Re-entry: a thread that already holds this lock (an on_step callback runs under the step's
/// write lock) and asks for it again gets Error reentrant instead of a deadlock. glibc's rwlock
/// does not reliably refuse it: rdlock under one's own wrlock returned EDEADLK, which was once
/// ignored, and the unlock that followed released the step's write lock (a wedged engine).
/// Each thread keeps the locks it holds, so only a call back into the same engine is refused; a
/// callback may use other engines. Every pthread failure is an error, never ignored.
class StateLock {
 public:
  StateLock() {
    pthread_rwlockattr_t attributes;
    check(pthread_rwlockattr_init(&attributes), "initialise the state lock's attributes");
    const int kind = pthread_rwlockattr_setkind_np(&attributes, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    const int init = kind == 0 ? pthread_rwlock_init(&lock_, &attributes) : kind;
    pthread_rwlockattr_destroy(&attributes);
    check(init, "initialise the state lock");
  }
  ~StateLock() { pthread_rwlock_destroy(&lock_); }
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

  void lock() {
    refuse_reentry();
    check(pthread_rwlock_wrlock(&lock_), "take the engine's state lock");
    held().push_back(this);
  }
  bool try_lock() {
    refuse_reentry();
    const int result = pthread_rwlock_trywrlock(&lock_);
    if (result == EBUSY) return false;
    check(result, "take the engine's state lock");
    held().push_back(this);
    return true;
  }
  void unlock() { release(); }
  void lock_shared() {
    refuse_reentry();
    check(pthread_rwlock_rdlock(&lock_), "take the engine's state lock for reading");
    held().push_back(this);
  }
  bool try_lock_shared() {
    refuse_reentry();
    const int result = pthread_rwlock_tryrdlock(&lock_);
    if (result == EBUSY || result == EAGAIN) return false;
    check(result, "take the engine's state lock for reading");
    held().push_back(this);
    return true;
  }
  void unlock_shared() { release(); }

  /// Whether the calling thread holds this lock (shared or exclusive).
  bool held_by_this_thread() const {
    const std::vector<const StateLock*>& locks = held();
    return std::find(locks.begin(), locks.end(), this) != locks.end();
  }
  /// Throws Error reentrant when the calling thread holds this lock.
  void refuse_reentry() const {
    if (!held_by_this_thread()) return;
    throw Error(ErrorCode::reentrant,
                "the engine was called from its own on_step or on_decision_log callback (the thread holds its "
                "state lock); copy what the callback was given and act on it after the callback returns");
  }

 private:
  /// The state locks the calling thread holds, innermost last: a handful at most (one per
  /// engine whose callback is running on this thread).
  static std::vector<const StateLock*>& held() {
    thread_local std::vector<const StateLock*> locks;
    return locks;
  }
  void release() {
    std::vector<const StateLock*>& locks = held();
    const auto it = std::find(locks.rbegin(), locks.rend(), this);
    GOV_ASSERT(it != locks.rend(), "state lock released by a thread that does not hold it");
    if (it != locks.rend()) locks.erase(std::next(it).base());
    // Unlocking a lock this thread holds fails only on a broken invariant; the callers are
    // destructors (no exception may leave them), so it is asserted, not thrown.
    [[maybe_unused]] const int result = pthread_rwlock_unlock(&lock_);
    GOV_ASSERT(result == 0, "pthread_rwlock_unlock failed on a held state lock");
  }
  static void check(int result, const char* what) {
    if (result == 0) return;
    if (result == ENOMEM) throw std::bad_alloc();
    throw Error(ErrorCode::internal, fmt::format("cannot {}: {}", what, std::strerror(result)));
  }

  pthread_rwlock_t lock_;
};

}  // namespace gov::embed
