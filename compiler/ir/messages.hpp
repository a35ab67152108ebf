// A matched rule's message as text: what the engine writes in a decision, whichever back end
// evaluated the rule (Evaluator::message_values gives the values, this file renders them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/ir/module.hpp"

namespace gov::ir {

/// Most bytes of a rendered rule message (docs/limits.md). Label values are interpolated, so
/// without a bound a message of 227 `{task.labels["k"]}` and a 1 MiB label made a 238 MB
/// decision line.
inline constexpr size_t kMaxMessageBytes = size_t{64} << 10;
/// Ends a message cut at kMaxMessageBytes (counted in the bound).
inline constexpr std::string_view kTruncatedMarker = "\u2026 [truncated]";

/// A rule's message for a matched task: text, values by type (`values[p]` for value part p,
/// as Evaluator::message_values gives them: priorities by class name when one has that
/// weight, teams and flavors by name, sizes as `128 GiB`, millicores as `0.5`), labels from
/// `labels` (absent ones as ""). At most kMaxMessageBytes: a longer message is cut at a UTF-8
/// boundary and ends with kTruncatedMarker; memory never holds more than the bound.
std::string render_message(const Module& module, size_t rule, std::span<const int64_t> values,
                           const std::vector<std::pair<std::string, std::string>>& labels,
                           std::string_view task_id);

/// A value as text, by type (also used by the engine's explanations).
std::string value_text(const Module& module, ValueType type, int64_t value);

}  // namespace gov::ir
