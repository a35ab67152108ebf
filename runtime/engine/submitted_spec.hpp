// The task as it was submitted, kept while it is live for Engine::export_state (what another
// policy version is handed), in a compact byte form: a gov::Task is about 500 bytes before its
// strings and labels, and an engine holding 100,000 admitted tasks kept one per task
// (docs/benchmarks.md: the engine holding 100,000 tasks stays under 100 MB resident).
#pragma once

#include <string>
#include <string_view>

#include "gov/types.hpp"

namespace gov::engine {

/// Every field of `task`, in a private byte form (varints, present-flags): never stored, never
/// read by another process.
std::string encode_submitted(const gov::Task& task);
/// The task encode_submitted was given, field for field. `bytes` must come from it.
gov::Task decode_submitted(std::string_view bytes);

}  // namespace gov::engine
