// Exact conversions between the engine's base units and the units traces and decisions print.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/ir/module.hpp"
#include "gov/types.hpp"

namespace gov::trace {

/// Milliseconds per second: `at` and `duration` are seconds in files, milliseconds inside.
inline constexpr int64_t kMillisPerSecond = 1000;

/// How many base units one file unit is: 1 for gpu, neuron and efa (devices), 1000 for
/// vcpu (file: vCPUs, base: millicores), 1024 for memory (file: GiB, base: MiB).
int64_t base_units_per_file_unit(ir::Resource resource);

/// Milliseconds as seconds: "5", "90.5", "0.001" (model::format_decimal's text).
std::string format_seconds(gov::Time millis);
/// format_seconds appended to `out`, without allocating.
void append_seconds(std::string& out, gov::Time millis);
/// The most bytes write_seconds writes: a sign, 16 digits, a point and three decimals.
inline constexpr size_t kMaxSecondsText = 21;
/// append_seconds written at `out` (room for kMaxSecondsText bytes); returns the end.
char* write_seconds(char* out, gov::Time millis);
/// A base-unit amount in file units: 64000 millicores → "64", 512 MiB → "0.5" (exact; the
/// decimal notation of model::format_amount).
std::string format_amount(ir::Resource resource, ir::Amount amount);
/// A base-unit amount as a whole, non-negative number of file units, when it is one (the
/// common case): format_amount's text is then its digits.
std::optional<uint64_t> whole_file_units(ir::Resource resource, ir::Amount amount);
/// format_amount appended to `out`; a whole number of file units without allocating.
void append_amount(std::string& out, ir::Resource resource, ir::Amount amount);
/// The key of a resource's amount in a trace's task object: "gpus", "neuron", "vcpus",
/// "memory_gib", "efa".
std::string_view trace_key(ir::Resource resource);

}  // namespace gov::trace
