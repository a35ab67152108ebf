// `gov simulate A.gov B.gov --trace T`: the what-if comparison. One trace replayed against two
// policies (each through gov::Engine, as `gov simulate` replays one), then per team the
// difference in waits, GPU-hours, borrowed hours and preemptions, and the tasks whose outcome
// changed (runtime/report/comparison.hpp), as text, JSON or an HTML page.
#include <cstdio>
#include <new>

#include <fmt/format.h>

#include "compiler/diagnostics/atomic_write.hpp"
#include "compiler/support/terminal_text.hpp"
#include "runtime/report/comparison.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {

namespace {

/// Largest trace file a comparison reads (as `gov simulate`; docs/limits.md). It is read into
/// memory once and replayed twice.
constexpr size_t kMaxTraceBytes = size_t{1} << 30;

/// Replays `events` through `engine` as `gov simulate` does: the events of one instant in one
/// step, then every remaining finish.
void replay(gov::Engine& engine, const std::vector<gov::TimedEvent>& events, report::RunOutcomes& run,
            std::optional<gov::Time> until) {
  std::vector<gov::Event> batch;
  for (size_t i = 0; i < events.size();) {
    const gov::Time at = events[i].at;
    if (until && at > *until) break;  // after the horizon (--until)
    batch.clear();
    for (; i < events.size() && events[i].at == at; ++i) batch.push_back(events[i].event);
    for (const gov::Decision& d : engine.step(at, batch).decisions) run.add(d);
  }
  drain_finishes(
      engine,
      [&](const gov::Step& step) {
        for (const gov::Decision& d : step.decisions) run.add(d);
      },
      until);
  run.finish(until);
}

bool read_file(const std::string& path, std::string& text, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = "cannot open it";
    return false;
  }
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
    text.append(buffer, n);
    if (text.size() > kMaxTraceBytes) {
      std::fclose(f);
      error = fmt::format("it is larger than {} bytes", kMaxTraceBytes);
      return false;
    }
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) error = "a read failed";
  return !failed;
}

}  // namespace

int run_simulate_comparison(const Args& args) {
  if (args.has("db") || args.has("metrics") || args.value("usage-report")) {
    fmt::print(stderr, "error: a comparison (two policy files) takes --trace, --format text|json and --report; "
                       "not --db, --metrics or --usage-report\n");
    return kUsage;
  }
  const std::string format = args.value("format").value_or("text");
  if (format != "text" && format != "json") {
    fmt::print(stderr, "error: unknown format `{}` for a comparison (expected text or json)\n", escape_for_terminal(format));
    return kUsage;
  }
  const std::optional<std::string> report_path = args.value("report");
  if (report_path && (report_path->size() <= 5 || report_path->substr(report_path->size() - 5) != ".html")) {
    fmt::print(stderr, "error: report `{}`: the file name must end in .html\n", display_path(*report_path));
    return kUsage;
  }
  std::optional<gov::Time> until;
  if (!until_option(args, until)) return kUsage;
  const std::string trace_path = *args.value("trace");
  std::string text;
  std::string error;
  if (!read_file(trace_path, text, error)) {
    fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(trace_path), error);
    return kUsage;
  }
  std::array<report::RunOutcomes, 2> runs;
  for (size_t i = 0; i < 2; ++i) {
    int status = kOk;
    std::optional<gov::Engine> engine = open_engine(args, args.positional[i], status, /*replay=*/true);
    if (!engine) return status;
    warn_quotas_above_capacity(*engine, display_path(args.positional[i]));
    report::ReportSetup setup;  // the nominal quotas: what a team holds above them it borrows
    for (const gov::UsageRow& row : engine->snapshot().usage) {
      setup.quotas.push_back({row.team, row.flavor, row.resource, row.nominal, row.borrowing_limit});
    }
    runs[i] = report::RunOutcomes(std::move(setup));
    std::vector<gov::TimedEvent> events;
    try {
      events = gov::read_trace(*engine, text);
    } catch (const gov::Error& e) {
      fmt::print(stderr, "error: {} (against `{}`): {}\n", display_path(trace_path), display_path(args.positional[i]),
                 escape_for_terminal(e.what()));
      return kFailed;
    }
    try {
      replay(*engine, events, runs[i], until);
    } catch (const std::bad_alloc&) {
      fmt::print(stderr, "error: out of memory while replaying the trace `{}` against `{}`\n", display_path(trace_path),
                 display_path(args.positional[i]));
      return kFailed;
    }
  }
  const report::Comparison comparison = report::compare(runs[0], runs[1], args.positional[0], args.positional[1]);
  fmt::print("{}", format == "json" ? report::comparison_json(comparison) : report::comparison_text(comparison));
  if (report_path) {
    std::string write_error;
    if (!write_file_atomically(*report_path, report::comparison_html(comparison), write_error)) {
      std::fflush(stdout);
      fmt::print(stderr, "error: cannot write the report `{}`: {}\n", display_path(*report_path),
                 escape_for_terminal(write_error));
      return kUsage;
    }
  }
  return kOk;
}

}  // namespace gov::cli
