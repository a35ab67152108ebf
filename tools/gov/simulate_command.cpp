// `gov simulate`: replay a trace through the engine (gov::Engine, as a controller runs it) and print
// every decision.
#include <cstdio>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "compiler/diagnostics/atomic_write.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/model/arithmetic.hpp"
#include "runtime/report/html_report.hpp"
#include "runtime/report/recorder.hpp"
#include "runtime/report/usage_report.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/trace/decision_writer.hpp"
#include "runtime/trace/trace_file.hpp"
#include "runtime/trace/trace_reader.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {
namespace {

/// Largest trace file `gov simulate` reads (docs/limits.md).
constexpr size_t kMaxTraceBytes = size_t{1} << 30;

/// The trace's first error, read as a stream: memory holds one event at a time (plus one
/// record per task id), and the file's text is dropped as the reader moves on.
std::optional<support::Error> first_error(trace::TraceFile& file, const ir::Module& module,
                                          const trace::JsonLimits& limits) {
  trace::TraceReader reader(file, module, limits);
  trace::TraceEvent event;
  while (reader.next(event)) {
  }
  return reader.error();
}

/// What the HTML report knows besides the stream: the policy's teams, quotas (the engine's
/// snapshot before the replay) and capacity per instance type.
report::ReportSetup report_setup(const gov::Engine& engine, const ir::Module& module) {
  report::ReportSetup setup;
  setup.policy = engine.policy().name;
  for (const ir::Team& team : module.teams) setup.teams.push_back(team.name);
  for (const gov::UsageRow& row : engine.snapshot().usage) {
    setup.quotas.push_back({row.team, row.flavor, row.resource, row.nominal, row.borrowing_limit});
  }
  for (const ir::Flavor& flavor : module.flavors) {
    for (gov::Resource r : report::kReportedResources) {
      const int64_t per_instance = flavor.per_instance[static_cast<size_t>(r)];
      if (flavor.capacity > 0 && per_instance > 0) {
        setup.capacity.push_back({flavor.name, r, model::checked_mul(flavor.capacity, per_instance)});
      }
    }
  }
  return setup;
}

/// Writes `text` to `path` atomically; false after printing the error.
bool write_output(const std::string& what, const std::string& path, const std::string& text) {
  std::string error;
  if (write_file_atomically(path, text, error)) return true;
  std::fflush(stdout);
  fmt::print(stderr, "error: cannot write the {} `{}`: {}\n", what, display_path(path), escape_for_terminal(error));
  return false;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

gov::Event to_event(trace::TraceEvent& e) {
  switch (e.kind) {
    case trace::EventKind::submit: return gov::Event::submit(std::move(e.task));
    case trace::EventKind::finish: return gov::Event::finish(std::move(e.id));
    case trace::EventKind::cancel: return gov::Event::cancel(std::move(e.id));
  }
  return gov::Event::finish(std::move(e.id));
}

}  // namespace

/// `gov simulate A.gov B.gov --trace T`: tools/gov/simulate_compare.cpp.
int run_simulate_comparison(const Args& args);

namespace {

int run_simulate(const Args& args) {
  if (args.positional.size() == 2 && args.value("trace")) return run_simulate_comparison(args);
  if (args.positional.size() > 1 || !args.value("trace") || (args.positional.empty() && !args.has("db"))) {
    fmt::print(stderr, "error: usage: gov simulate FILE --trace TRACE.json (or --db PATH for the store's active version; or A.gov B.gov to compare two policies)\n");
    return kUsage;
  }
  const std::string format = args.value("format").value_or("jsonl");
  if (format != "jsonl" && format != "text") {
    fmt::print(stderr, "error: unknown format `{}` (expected jsonl or text)\n", escape_for_terminal(format));
    return kUsage;
  }
  const std::optional<std::string> usage_path = args.value("usage-report");
  if (usage_path && report::usage_format_of(*usage_path).empty()) {
    fmt::print(stderr, "error: usage report `{}`: the file name must end in .csv or .json\n",
               display_path(*usage_path));
    return kUsage;
  }
  const std::optional<std::string> report_path = args.value("report");
  if (report_path && !ends_with(*report_path, ".html")) {
    fmt::print(stderr, "error: report `{}`: the file name must end in .html\n", display_path(*report_path));
    return kUsage;
  }
  int status = kOk;
  const std::optional<std::string> file =
      args.positional.empty() ? std::nullopt : std::optional<std::string>(args.positional[0]);
  std::optional<gov::Engine> engine = open_engine(args, file, status);
  if (!engine) return status;
  const std::shared_ptr<const ir::Module> module = EngineInternals::module(*engine);

  const std::string trace_path = *args.value("trace");
  support::Expected<trace::TraceFile> trace_file = trace::TraceFile::open(trace_path, kMaxTraceBytes);
  if (!trace_file) {
    fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(trace_path),
               escape_for_terminal(trace_file.error().message));
    return kUsage;
  }
  trace::JsonLimits limits;
  limits.max_bytes = kMaxTraceBytes;
  // Nothing of a bad trace is simulated: every event is checked first, then read again.
  if (std::optional<support::Error> problem = first_error(*trace_file, *module, limits)) {
    if (problem->kind == support::ErrorKind::io) {
      fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(trace_path), escape_for_terminal(problem->message));
      return kUsage;
    }
    fmt::print(stderr, "error: {}: {}\n", display_path(trace_path), escape_for_terminal(problem->message));
    return kFailed;
  }
  trace_file->rewind();

  trace::SummaryBuilder summary;
  const bool recording = usage_path || report_path;
  report::Recorder recorder(report_path ? report_setup(*engine, *module) : report::ReportSetup{},
                            /*timeline=*/report_path.has_value());
  std::string out;
  auto emit = [&](const gov::Step& step) {
    for (const gov::Decision& d : step.decisions) {
      if (recording) recorder.add(d);
      if (format == "jsonl") {
        trace::append_decision_json(out, d);
        out += '\n';
      } else {
        out += trace::decision_text(d);
        out += '\n';
        summary.add(d);
      }
    }
    if (out.size() > (1 << 16)) {
      fmt::print("{}", out);
      out.clear();
    }
  };
  // Events at the same time apply together, then the engine runs to a fixed point.
  trace::TraceReader reader(*trace_file, *module, limits);
  trace::TraceEvent event;
  std::vector<gov::Event> batch;
  // Running out of memory is reported with where the replay was (a bare std::bad_alloc says
  // nothing); decisions printed before it stay printed.
  size_t events_read = 0;  // events handed to the engine so far (1-based index of the last)
  try {
    for (bool more = reader.next(event); more;) {
      const gov::Time at = event.at;
      batch.clear();
      for (; more && event.at == at; more = reader.next(event)) {
        batch.push_back(to_event(event));
        ++events_read;
      }
      emit(engine->step(at, batch));
    }
    if (reader.error()) {
      // The first pass read the whole trace, so this is a read failing the second time (or the
      // file changing in between): the decisions so far are out, and the run is not complete.
      fmt::print("{}", out);
      std::fflush(stdout);
      fmt::print(stderr, "error: cannot read `{}` again: {}\n", display_path(trace_path),
                 escape_for_terminal(reader.error()->message));
      return kUsage;
    }
    // Tasks with a duration finish after the last event too.
    emit(engine->tick(gov::kForever));
  } catch (const std::bad_alloc&) {
    fmt::print("{}", out);
    out = {};
    fmt::print(stderr, "error: out of memory while replaying the trace `{}` (at event {})\n", display_path(trace_path),
               events_read);
    return kFailed;
  }
  if (format == "text") out += "\n" + trace::summary_text(summary.summarize());
  // After the decisions (JSON objects or text lines), so the exposition starts at the first
  // `# HELP` line and a reader can split the two.
  if (args.has("metrics")) out += engine->metrics();
  fmt::print("{}", out);
  if (usage_path) {
    const std::vector<report::UsageRow> rows = recorder.usage();
    const std::string text =
        report::usage_format_of(*usage_path) == "csv" ? report::usage_csv(rows) : report::usage_json(rows);
    if (!write_output("usage report", *usage_path, text)) return kUsage;
  }
  if (report_path && !write_output("report", *report_path, report::html_report(recorder.report()))) return kUsage;
  return kOk;
}

}  // namespace

Command simulate_command() {
  std::vector<OptionSpec> options = {{"trace", "TRACE", "the trace to replay (JSON, docs/interfaces.md \"Trace file\")"},
                                     {"db", "PATH|URL", "without FILE: the store (an SQLite file or a postgresql:// URL) whose active version (and cached native code) to use"},
                                     {"policy", "NAME", "with --db: the policy (default: the only one)"},
                                     {"format", "FORMAT", "jsonl (one decision per line, default) or text (with a per-team summary)"},
                                     {"report", "FILE.html", "also write the simulation report: one self-contained HTML page with charts (docs/observability.md)"},
                                     {"usage-report", "FILE", "also write the usage report per day, team and instance type (FILE.csv or FILE.json, docs/observability.md)"},
                                     {"metrics", "", "after the decisions, print the engine's Prometheus metrics (text exposition format, docs/observability.md)"}};
  for (OptionSpec& o : engine_options()) options.push_back(std::move(o));
  for (OptionSpec& o : verify_options()) options.push_back(std::move(o));
  return {{"simulate", "gov simulate FILE|--db PATH|A.gov B.gov --trace TRACE.json [--engine jit|interp] [--format jsonl|text] [--dialect head|kueue-v0.9] [--metrics] [--report FILE.html] [--usage-report FILE.csv|FILE.json] [--verify-key FILE] [--require-signature]",
           "Replay a trace of task events through the engine and print every decision.",
           "Events at the same time apply in file order, then admission cycles run until nothing changes; tasks\n"
           "with a duration finish that long after they were last admitted (also after the last event). A bad\n"
           "trace gives one error naming the event and field, and nothing is simulated.\n"
           "With two policy files A.gov B.gov, the trace is replayed against each and the difference is printed\n"
           "(what-if): per team the waits, GPU-hours, borrowed GPU-hours and preemptions, and the tasks whose\n"
           "outcome changed (--format text, the default, or json; --report FILE.html for a page).",
           options},
          run_simulate};
}

}  // namespace gov::cli
