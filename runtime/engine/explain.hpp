// Explanations for `gov eval`: why a task is pending, why it was preempted, what would let it
// run — the task's needs, its team's quota figures in the flavors tried, what the cohort has
// idle, and which preemption candidates were considered and why each was or was not chosen.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/decision.hpp"

namespace gov::engine {

// The explanation types are the public ones (gov::Explanation, gov::FlavorExplanation,
// gov::ResourceFigures, gov::CandidateExplanation in gov/types.hpp); the engine leaves
// Explanation::version at 0 (the embedding layer knows the policy version).

}  // namespace gov::engine
