// The simulation report: one self-contained HTML file (inline CSS, SVG drawn by a small inline
// script from the data embedded as JSON; no external URL of any kind, so it opens offline).
#pragma once

#include <string>

#include "runtime/report/timeline.hpp"

namespace gov::report {

/// The report page for `data`: usage against nominal quota and borrowing limit per team and
/// instance type (own and borrowed shaded), pending tasks, the admission-wait histogram with
/// p50/p95/p99, preemptions by kind, cluster utilization per instance type, the worst waits with
/// their reasons; a team filter. Names are escaped for HTML and for the embedded JSON.
std::string html_report(const ReportData& data);

/// The data embedded in the page, as JSON (compiler/support/json_writer.hpp), with every `<`
/// written `\u003c` so that it cannot close the script element that holds it.
std::string report_json(const ReportData& data);

}  // namespace gov::report
