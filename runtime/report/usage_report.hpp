// Usage reports as HyperPod's console has them (per day, team and instance type: accelerator-
// and vCPU-hours from the team's own quota and borrowed, tasks admitted, preempted, finished and
// still pending), written as CSV or JSON from a Recorder's rows.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/report/recorder.hpp"

namespace gov::report {

/// The date of a day number (days since 1970-01-01, proleptic Gregorian): `2026-11-26`.
std::string date_of(int64_t day);

/// The report as CSV (RFC 4180: a header line, then one line per row, fields with a comma, a
/// quote or a line break quoted). Hours have 6 decimals (rounded half to even); vCPU-hours are
/// vCPU × hours. Ends with a newline.
std::string usage_csv(const std::vector<UsageRow>& rows);
/// The report as one JSON document: {"rows": [{"date", "day", "team", "instance_type" (null
/// when none), "gpu_hours", "gpu_hours_own", "gpu_hours_borrowed", the same for neuron and vcpu,
/// "tasks_admitted", "tasks_preempted", "tasks_finished", "tasks_pending_at_end"}, ...]}.
std::string usage_json(const std::vector<UsageRow>& rows);

/// The format of a usage report from its file name: `csv` for `*.csv`, `json` for `*.json`, else
/// empty.
std::string_view usage_format_of(std::string_view path);

}  // namespace gov::report
