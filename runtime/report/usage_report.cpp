// Usage reports: CSV and JSON from a Recorder's rows.
#include "runtime/report/usage_report.hpp"

#include <fmt/format.h>

#include "compiler/model/quantities.hpp"
#include "compiler/support/json_writer.hpp"

namespace gov::report {

namespace {

constexpr int64_t kMillisPerHour = 60 * 60 * 1000;
constexpr int kHourDigits = 6;

/// Resource-time (base units × ms) as hours of the unit people read: device-hours, vCPU-hours.
std::string hours(Resource resource, int64_t base_millis) {
  const int64_t divisor = resource == Resource::vcpu ? kMillisPerHour * 1000 : kMillisPerHour;
  return model::format_decimal(base_millis, divisor, kHourDigits);
}

std::string_view resource_prefix(Resource resource) {
  switch (resource) {
    case Resource::gpu: return "gpu";
    case Resource::neuron: return "neuron";
    case Resource::vcpu: return "vcpu";
    case Resource::memory: return "memory";
    case Resource::efa: return "efa";
  }
  return "?";
}

/// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

std::string date_of(int64_t day) {
  // Howard Hinnant's civil_from_days.
  const int64_t z = day + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return fmt::format("{:04}-{:02}-{:02}", y, m, d);
}

std::string usage_csv(const std::vector<UsageRow>& rows) {
  std::string out = "date,team,instance_type";
  for (Resource r : kReportedResources) {
    const std::string_view p = resource_prefix(r);
    out += fmt::format(",{}_hours,{}_hours_own,{}_hours_borrowed", p, p, p);
  }
  out += ",tasks_admitted,tasks_preempted,tasks_finished,tasks_pending_at_end\n";
  for (const UsageRow& row : rows) {
    out += date_of(row.day);
    out += ',';
    out += csv_field(row.team);
    out += ',';
    out += csv_field(row.instance_type);
    for (size_t i = 0; i < kReportedResources.size(); ++i) {
      const Resource r = kReportedResources[i];
      out += fmt::format(",{},{},{}", hours(r, row.used[i]), hours(r, row.used[i] - row.borrowed[i]),
                         hours(r, row.borrowed[i]));
    }
    out += fmt::format(",{},{},{},{}\n", row.admitted, row.preempted, row.finished, row.pending_at_end);
  }
  return out;
}

std::string usage_json(const std::vector<UsageRow>& rows) {
  JsonWriter w(/*indented=*/false);
  w.begin_object();
  w.key("rows");
  w.begin_array();
  for (const UsageRow& row : rows) {
    w.begin_object();
    w.field("date", date_of(row.day));
    w.field("day", row.day);
    w.field("team", row.team);
    w.key("instance_type");
    if (row.instance_type.empty()) {
      w.null();
    } else {
      w.string(row.instance_type);
    }
    for (size_t i = 0; i < kReportedResources.size(); ++i) {
      const Resource r = kReportedResources[i];
      const std::string_view p = resource_prefix(r);
      w.key(fmt::format("{}_hours", p));
      w.decimal(hours(r, row.used[i]));
      w.key(fmt::format("{}_hours_own", p));
      w.decimal(hours(r, row.used[i] - row.borrowed[i]));
      w.key(fmt::format("{}_hours_borrowed", p));
      w.decimal(hours(r, row.borrowed[i]));
    }
    w.field("tasks_admitted", row.admitted);
    w.field("tasks_preempted", row.preempted);
    w.field("tasks_finished", row.finished);
    w.field("tasks_pending_at_end", row.pending_at_end);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.finish();
}

std::string_view usage_format_of(std::string_view path) {
  const auto ends_with = [path](std::string_view suffix) {
    return path.size() > suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  if (ends_with(".csv")) return "csv";
  if (ends_with(".json")) return "json";
  return {};
}

}  // namespace gov::report
