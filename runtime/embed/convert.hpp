// Conversions between the embedding API's public value types (gov/types.hpp) and the engine's
// internal ones. Pure functions; no state.
#pragma once

#include <cstdint>

#include "gov/types.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/engine/explain.hpp"

namespace gov::embed {

engine::TaskSpec to_engine(const Task& task);
engine::TaskSpec to_engine(Task&& task);
Task from_engine(const engine::TaskSpec& spec);

/// Moves an engine decision into a public one made under `version` by step `sequence`.
Decision from_engine(engine::Decision&& decision, int64_t version, uint64_t sequence);
/// The engine form of a public decision (for the stream writer).
engine::Decision to_engine(const Decision& decision);

Explanation from_engine(engine::Explanation&& explanation, int64_t version);
UsageRow from_engine(const engine::UsageRow& row);
CohortRow from_engine(const engine::CohortRow& row);
TaskRow from_engine(const engine::TaskRow& row);

inline Resource from_engine(ir::Resource r) { return static_cast<Resource>(r); }
inline ir::Resource to_engine(Resource r) { return static_cast<ir::Resource>(r); }

inline bool is_live(Outcome outcome) {
  return outcome == Outcome::admitted || outcome == Outcome::pending || outcome == Outcome::preempted;
}

}  // namespace gov::embed
