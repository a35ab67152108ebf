// How an Engine is configured.
#pragma once

#include "runtime/engine/messages.hpp"

namespace gov::engine {

struct EngineOptions {
  /// The wording of pending and preemption messages (docs/kueue-reference.md §10).
  MessageDialect dialect = MessageDialect::head;
  /// Verify the engine's invariants after every admission cycle (usage within nominal +
  /// borrowing limit, cohort within its quota, reclaim victims only from teams over nominal,
  /// at most one preemption per task per event time) and record violations in
  /// Engine::self_check_failures(). It also recomputes every nomination and search without
  /// caches or shortcuts, so comparing its decisions with a normal run tests those. Slower; for
  /// tests and debugging.
  bool self_check = false;
};

}  // namespace gov::engine
