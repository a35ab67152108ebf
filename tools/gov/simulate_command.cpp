// `gov simulate`: replay a trace through the engine (gov::Engine, as a controller runs it) and print
// every decision.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
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
#include "tools/gov/kube_inputs.hpp"

namespace gov::cli {
namespace {

/// Writes `text` to stdout as it is. fmt::print formats into a buffer of its own first: a copy
/// that, once memory has run out, throws again from the handler that reports where the replay
/// was (the report then lost its place).
void write_stdout(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }


/// Largest trace file `gov simulate` reads (docs/limits.md).
constexpr size_t kMaxTraceBytes = size_t{1} << 30;
/// Address space held during a replay and given back to report running out of memory.
constexpr size_t kReportReserve = size_t{1} << 20;

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

/// `--workloads DIR|FILE...` (each `--workloads` option, and the positional arguments after the
/// policy): the YAML files, a directory's `.yaml`, `.yml` and `.json` files in name order.
std::optional<std::vector<std::string>> workload_paths(const Args& args, const std::vector<std::string>& extra) {
  std::vector<std::string> given;
  for (const auto& [name, value] : args.options) {
    if (name == "workloads") given.push_back(value);
  }
  given.insert(given.end(), extra.begin(), extra.end());
  std::vector<std::string> out;
  for (const std::string& path : given) {
    if (path.ends_with(".gov")) {
      // `A.gov B.gov --workloads ...` reads as a comparison, which replays a trace only.
      fmt::print(stderr,
                 "error: `{}` is a policy file, but with --workloads the paths after the policy are Kubernetes objects; "
                 "comparing two policies (A.gov B.gov) takes --trace\n",
                 display_path(path));
      return std::nullopt;
    }
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> files;
    for (std::filesystem::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
      const std::string file = it->path().string();
      if (it->is_regular_file(error) && (is_yaml_path(file) || ends_with_extension(file, ".json"))) files.push_back(file);
    }
    if (error) {
      fmt::print(stderr, "error: cannot list `{}`: {}\n", display_path(path), escape_for_terminal(error.message()));
      return std::nullopt;
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      fmt::print(stderr, "error: `{}` holds no .yaml, .yml or .json file\n", display_path(path));
      return std::nullopt;
    }
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

/// Kubernetes objects as submit events (docs/kubernetes.md, "`gov simulate --workloads`"): each at
/// its creationTimestamp, in milliseconds since the earliest one (none: at 0), in that order
/// (ties in file order); a `gov/duration` annotation is the task's duration. nullopt after
/// printing the first error (`status`).
std::optional<std::vector<gov::TimedEvent>> workload_events(const std::vector<std::string>& paths,
                                                           const gov::Engine& engine, const ir::Module& module,
                                                           std::optional<int64_t> default_duration, int& status,
                                                           gov::Time& origin) {
  struct Read {
    std::string path;
    kube::Workload workload;
  };
  std::vector<Read> all;
  size_t objects = 0;
  for (const std::string& path : paths) {
    std::optional<std::vector<kube::Workload>> workloads = read_workload_file(path, status, /*allow_unmanaged=*/true);
    if (!workloads) return std::nullopt;
    if (workloads->empty()) {  // an empty file, `---` alone, a List of no items (a hostile-input finding)
      fmt::print(stderr, "note: {} holds no Kubernetes object\n", display_path(path));
    }
    objects += workloads->size();
    if (objects > trace::kMaxTraceTasks) {
      fmt::print(stderr, "error: {}: more than {} workloads; gov replays at most that many tasks\n", display_path(path),
                 trace::kMaxTraceTasks);
      status = kFailed;
      return std::nullopt;
    }
    for (kube::Workload& w : *workloads) all.push_back({path, std::move(w)});
  }
  int64_t first = 0;
  bool any_time = false;
  for (const Read& r : all) {
    if (!r.workload.created) continue;
    first = any_time ? std::min(first, *r.workload.created) : *r.workload.created;
    any_time = true;
  }
  origin = first;  // time 0 of the replay, for the usage report's dates
  std::vector<kube::Workload*> managed;
  size_t timed = 0;
  for (Read& r : all) {
    if (r.workload.unmanaged) continue;
    managed.push_back(&r.workload);
    if (r.workload.duration) ++timed;
    if (!r.workload.duration) r.workload.duration = default_duration;
  }
  note_qualified_names(qualify_shared_names(managed));
  const auto time_of = [&](const Read& r) { return r.workload.created ? *r.workload.created - first : 0; };
  std::stable_sort(all.begin(), all.end(), [&](const Read& a, const Read& b) { return time_of(a) < time_of(b); });
  const kube::QueueNaming naming = queue_naming(engine);
  trace::TaskDecoder decoder(module);
  // `kubectl get workloads,jobs -A` gives a Job and the Workload Kueue made for it: one job, read
  // as its Workload (Kueue's own pod sets and status), the owner skipped (a Kubernetes engineer's
  // finding: every job counted twice).
  // A cluster gives every object a uid of its own, and Kueue one Workload per job: two objects
  // of one uid, or two Workloads of one owner, are input put together by hand, where folding
  // dropped or doubled a job without a word (a hostile-input trial's finding): refused, naming both.
  std::map<std::string, const Read*> by_uid;
  std::map<std::string, const Read*> workload_of_owner;
  // "error: <r>: <what> <other><why>"
  const auto refuse_pair = [&](const Read& r, std::string_view what, const Read& other, std::string_view why) {
    fmt::print(stderr, "error: {}: {} {}{}\n", escape_for_terminal(workload_where(r.path, r.workload)), escape_for_terminal(what),
               escape_for_terminal(workload_where(other.path, other.workload)), why);
    status = kFailed;
  };
  for (const Read& r : all) {
    if (r.workload.uid.empty()) continue;
    if (const auto [it, first_time] = by_uid.emplace(r.workload.uid, &r); !first_time) {
      refuse_pair(r, fmt::format("uid `{}` is also the uid of", r.workload.uid), *it->second,
                  " (a cluster gives every object a uid of its own)");
      return std::nullopt;
    }
  }
  for (const Read& r : all) {
    if (r.workload.kind != "Workload") continue;
    for (const std::string& uid : r.workload.owner_uids) {
      const auto [it, first_time] = workload_of_owner.emplace(uid, &r);
      if (!first_time && it->second->workload.namespace_name == r.workload.namespace_name) {
        refuse_pair(r, fmt::format("owned by uid `{}`, as is", uid), *it->second,
                    " (Kueue makes one Workload per job: give one of them)");
        return std::nullopt;
      }
    }
  }
  std::vector<gov::TimedEvent> events;
  std::map<std::string, const Read*> replayed;  // by name (its task's id)
  size_t partial = 0;  // workloads that allow partial admission, noted once
  std::string partial_example;
  size_t unmanaged = 0;
  for (const Read& r : all) {
    if (r.workload.unmanaged) {
      ++unmanaged;  // said once below: an `-A` export holds many (kube-system Jobs, Jobs' Pods)
      continue;
    }
    if (r.workload.kind != "Workload" && !r.workload.uid.empty()) {
      // An owner reference holds within a namespace only (Kubernetes' garbage collector reads a
      // cross-namespace one as absent): a Workload elsewhere does not stand for this object (a
      // hostile-input trial's finding: the job moved to another team).
      if (const auto it = workload_of_owner.find(r.workload.uid);
          it != workload_of_owner.end() && it->second->workload.namespace_name == r.workload.namespace_name) {
        fmt::print(stderr, "note: {} is replayed as its Workload `{}`, given too\n",
                   escape_for_terminal(workload_where(r.path, r.workload)), escape_for_terminal(it->second->workload.name));
        continue;
      }
    }
    // A finished or deactivated Workload neither queues nor holds quota: replayed, it would hold
    // its quota for the whole run (a Kubernetes engineer's finding, from `kubectl get workloads -A`).
    if (r.workload.state == kube::WorkloadState::finished || r.workload.state == kube::WorkloadState::inactive) {
      fmt::print(stderr, "note: {} is {}{}: skipped, it holds no quota and does not queue\n",
                 escape_for_terminal(workload_where(r.path, r.workload)), kube::workload_state_name(r.workload.state),
                 r.workload.state_reason.empty() ? "" : fmt::format(" ({})", escape_for_terminal(r.workload.state_reason)));
      continue;
    }
    if (const auto [it, first_time] = replayed.emplace(r.workload.name, &r); !first_time) {
      fmt::print(stderr, "error: {}: given twice, also as {} (Kubernetes names an object by namespace and name)\n",
                 escape_for_terminal(workload_where(r.path, r.workload)),
                 escape_for_terminal(workload_where(it->second->path, it->second->workload)));
      status = kFailed;
      return std::nullopt;
    }
    if (r.workload.partial_admission && partial++ == 0) partial_example = workload_where(r.path, r.workload);
    support::Expected<gov::Task> task = workload_task(r.workload, module, naming, decoder);
    if (!task) {
      fmt::print(stderr, "error: {}{}\n", escape_for_terminal(workload_where(r.path, r.workload)),
                 escape_for_terminal(task.error().message));
      status = kFailed;
      return std::nullopt;
    }
    events.push_back({time_of(r), gov::Event::submit(std::move(task).value())});
  }
  note_partial_admission(partial, partial_example);
  // A real cluster's objects carry no gov/duration (a Kubernetes engineer's finding): without
  // one, an admitted job never finishes, which the summary would not say.
  if (timed == 0 && !default_duration && !events.empty()) {
    fmt::print(stderr, "note: no workload has a `{}` annotation: the admitted ones run to the end of the replay "
                       "(--default-duration SECONDS gives them one)\n", kube::kDurationAnnotation);
  }
  if (unmanaged > 0) {
    fmt::print(stderr, "note: {} {} no `kueue.x-k8s.io/queue-name` label: Kueue does not manage {}, so {} not replayed\n",
               unmanaged, unmanaged == 1 ? "object has" : "objects have", unmanaged == 1 ? "it" : "them",
               unmanaged == 1 ? "it is" : "they are");
  }
  return events;
}

int run_simulate(const Args& args) {
  const bool workloads = args.has("workloads");
  if (workloads && args.has("trace")) {
    fmt::print(stderr, "error: give either --trace or --workloads, not both\n");
    return kUsage;
  }
  // With --db the policy is the store's: a policy file beside it would be ignored, so it is
  // refused (with --workloads the positional arguments are workload paths).
  if (args.has("db") && !workloads && !args.positional.empty()) {
    fmt::print(stderr,
               "error: give a policy FILE or --db (the store's active version), not both: `{}` would be ignored\n",
               display_path(args.positional[0]));
    return kUsage;
  }
  if (args.positional.size() == 2 && args.value("trace")) return run_simulate_comparison(args);
  // A trace with no FILE and no --db replays the default store's active version ($GOV_DB or
  // .gov/policies.db), as `gov log` and `gov show` read it; with --workloads the positional
  // arguments are the policy and the workloads, so the store needs --db there.
  if ((!workloads && args.positional.size() > 1) || (!args.value("trace") && !workloads) ||
      (workloads && args.positional.empty() && !args.has("db"))) {
    fmt::print(stderr, "error: usage: gov simulate [FILE] --trace TRACE.json (FILE, or else --db PATH or $GOV_DB: the store's active version; or A.gov B.gov to compare two policies; or FILE|--db PATH --workloads DIR|FILE... for Kubernetes objects)\n");
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
  // An output that is one of the inputs would replace it (a planner helper lost a trace to
  // `--usage-report T.json` with `--trace T.json`).
  std::vector<std::string> inputs = args.positional;
  if (const std::optional<std::string> trace = args.value("trace")) inputs.push_back(*trace);
  for (const std::optional<std::string>& output : {usage_path, report_path}) {
    if (!output) continue;
    for (const std::string& input : inputs) {
      std::error_code error;
      if (!std::filesystem::equivalent(*output, input, error) || error) continue;
      fmt::print(stderr, "error: `{}` is an input of this run; writing a report there would replace it\n",
                 display_path(*output));
      return kUsage;
    }
  }
  std::optional<gov::Time> until;
  if (!until_option(args, until)) return kUsage;
  std::optional<int64_t> default_duration;  // --workloads: the run time of objects without gov/duration
  if (const std::optional<std::string> text = args.value("default-duration")) {
    if (!workloads) {
      fmt::print(stderr, "error: --default-duration applies to --workloads (a trace gives each task its `duration`)\n");
      return kUsage;
    }
    if (!(default_duration = kube::duration_millis(*text))) {
      fmt::print(stderr, "error: --default-duration takes seconds (at most 3 decimals, at most 10^9), found `{}`\n",
                 escape_for_terminal(*text));
      return kUsage;
    }
  }
  int status = kOk;
  // With --db, every positional argument is a workload path; else the first is the policy.
  const std::optional<std::string> file =
      args.positional.empty() || args.has("db") ? std::nullopt : std::optional<std::string>(args.positional[0]);
  std::vector<std::string> extra(args.positional.begin() + (file ? 1 : 0), args.positional.end());
  std::optional<std::vector<std::string>> paths;
  if (workloads && !(paths = workload_paths(args, extra))) return kUsage;
  std::optional<gov::Engine> engine = open_engine(args, file, status, /*replay=*/true);
  if (!engine) return status;
  const std::shared_ptr<const ir::Module> module = EngineInternals::module(*engine);
  warn_quotas_above_capacity(*engine, "");

  std::optional<std::vector<gov::TimedEvent>> submits;
  gov::Time origin = 0;  // --workloads: the earliest creationTimestamp (ms since 1970)
  if (workloads && !(submits = workload_events(*paths, *engine, *module, default_duration, status, origin))) return status;
  std::optional<trace::TraceFile> trace_file;
  const std::string trace_path = args.value("trace").value_or("");
  if (!workloads) {
    support::Expected<trace::TraceFile> opened = trace::TraceFile::open(trace_path, kMaxTraceBytes);
    if (!opened) {
      fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(trace_path),
                 escape_for_terminal(opened.error().message));
      return kUsage;
    }
    trace_file.emplace(std::move(opened).value());
  }
  trace::JsonLimits limits;
  limits.max_bytes = kMaxTraceBytes;
  // Nothing of a bad trace is simulated: every event is checked first, then read again.
  if (std::optional<support::Error> problem = trace_file ? first_error(*trace_file, *module, limits) : std::nullopt) {
    if (problem->kind == support::ErrorKind::io) {
      fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(trace_path), escape_for_terminal(problem->message));
      return kUsage;
    }
    fmt::print(stderr, "error: {}: {}\n", display_path(trace_path), escape_for_terminal(problem->message));
    return kFailed;
  }
  if (trace_file) trace_file->rewind();

  // The teams' nominal quotas: what they hold above them is what they borrow (trace::HoldingsClock).
  const report::ReportSetup setup = report_setup(*engine, *module);
  trace::SummaryBuilder summary;
  for (const report::QuotaInfo& quota : setup.quotas) summary.set_nominal(quota.team, quota.flavor, quota.resource, quota.nominal);
  const bool recording = usage_path || report_path;
  report::Recorder recorder(setup, /*timeline=*/report_path.has_value());
  recorder.set_usage_origin(origin);
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
      write_stdout(out);
      out.clear();
    }
  };
  std::vector<gov::Event> batch;
  // The usage report counts a task still pending at the end under the instance type it asks for.
  auto note_requests = [&]() {
    if (!usage_path) return;
    for (const gov::Event& e : batch) {
      if (e.kind == gov::Event::Kind::submit && e.task.instance_type) recorder.note_requested(e.task.id, *e.task.instance_type);
    }
  };
  // Running out of memory is reported with where the replay was (a bare std::bad_alloc says
  // nothing); decisions printed before it stay printed. The report must not need memory the
  // replay may have taken to its last byte: the trace's name is rendered now, and a reserve is
  // given back before the report is written.
  size_t events_read = 0;  // events handed to the engine so far (1-based index of the last)
  const std::string shown_trace = display_path(trace_path);
  std::unique_ptr<char[]> report_reserve(new char[kReportReserve]);  // never written: no resident pages
  if (submits) {
    try {
      for (size_t i = 0; i < submits->size();) {
        const gov::Time at = (*submits)[i].at;
        if (until && at > *until) break;
        batch.clear();
        for (; i < submits->size() && (*submits)[i].at == at; ++i, ++events_read) batch.push_back(std::move((*submits)[i].event));
        note_requests();
        emit(engine->step(at, batch));
      }
      drain_finishes(*engine, emit, until);
    } catch (const std::bad_alloc&) {
      report_reserve.reset();
      write_stdout(out);
      out = {};
      fmt::print(stderr, "error: out of memory while replaying the workloads (at workload {})\n", events_read);
      return kFailed;
    }
  }
  // Events at the same time apply together, then the engine runs to a fixed point.
  std::optional<trace::TraceReader> trace_reader;
  if (trace_file) trace_reader.emplace(*trace_file, *module, limits);
  trace::TraceEvent event;
  try {
    for (bool more = trace_reader && trace_reader->next(event); more;) {
      const gov::Time at = event.at;
      if (until && at > *until) break;  // the rest of the trace is after the horizon
      batch.clear();
      for (; more && event.at == at; more = trace_reader->next(event)) {
        batch.push_back(to_event(event));
        ++events_read;
      }
      note_requests();
      emit(engine->step(at, batch));
    }
    if (trace_reader && trace_reader->out_of_memory() && !(until && event.at > *until)) {
      // Memory ran out reading the next event: the replay's own report (below), at that event.
      ++events_read;
      throw std::bad_alloc();
    }
    if (trace_reader && trace_reader->error() && !(until && event.at > *until)) {
      // The first pass read the whole trace, so this is a read failing the second time (or the
      // file changing in between): the decisions so far are out, and the run is not complete.
      write_stdout(out);
      std::fflush(stdout);
      fmt::print(stderr, "error: cannot read `{}` again: {}\n", display_path(trace_path),
                 escape_for_terminal(trace_reader->error()->message));
      return kUsage;
    }
    // Tasks with a duration finish after the last event too.
    if (trace_reader) drain_finishes(*engine, emit, until);
  } catch (const std::bad_alloc&) {
    report_reserve.reset();
    write_stdout(out);
    out = {};
    fmt::print(stderr, "error: out of memory while replaying the trace `{}` (at event {})\n", shown_trace,
               events_read);
    return kFailed;
  }
  if (format == "text") out += "\n" + trace::summary_text(summary.summarize(until));
  // After the decisions (JSON objects or text lines), so the exposition starts at the first
  // `# HELP` line and a reader can split the two.
  if (args.has("metrics")) out += engine->metrics();
  write_stdout(out);
  if (usage_path) {
    const std::vector<report::UsageRow> rows = recorder.usage(until);
    if (recorder.usage_overflowed()) {
      fmt::print(stderr,
                 "error: --usage-report `{}`: not written: it would hold more than {} rows (one per day, team and "
                 "instance type), the most gov writes; end the replay sooner with --until SECONDS\n",
                 escape_for_terminal(*usage_path), report::Recorder::kMaxUsageRows);
      return kFailed;
    }
    const std::string text =
        report::usage_format_of(*usage_path) == "csv" ? report::usage_csv(rows) : report::usage_json(rows);
    if (!write_output("usage report", *usage_path, text)) return kUsage;
  }
  if (report_path && !write_output("report", *report_path, report::html_report(recorder.report(until)))) return kUsage;
  return kOk;
}

}  // namespace

Command simulate_command() {
  std::vector<OptionSpec> options = {{"trace", "TRACE", "the trace to replay (JSON, docs/interfaces.md \"Trace file\")"},
                                     {"default-duration", "SECONDS", "with --workloads: how long an object without a `gov/duration` annotation runs once admitted (default: to the end of the replay)"},
                                     {"workloads", "DIR|FILE", "instead of a trace: Kubernetes objects (YAML; a directory's .yaml, .yml and .json files), each submitted at its creationTimestamp (docs/kubernetes.md); repeatable, and more paths may follow the policy"},
                                     {"db", "PATH|URL", "without FILE: the store (an SQLite file or a postgresql:// URL) whose active version (and cached native code) to use"},
                                     {"policy", "NAME", "with --db: the policy (default: the only one)"},
                                     {"format", "FORMAT", "jsonl (one decision per line, default) or text (with a per-team summary)"},
                                     {"report", "FILE.html", "also write the simulation report: one self-contained HTML page with charts (docs/observability.md)"},
                                     {"usage-report", "FILE", "also write the usage report per day, team and instance type (FILE.csv or FILE.json, docs/observability.md)"},
                                     {"metrics", "", "after the decisions, print the engine's Prometheus metrics (text exposition format, docs/observability.md)"},
                                     {"until", "SECONDS", "the horizon: events after it are not replayed, finishes after it do not happen, and usage (GPU-hours, reports) counts until it; also for a comparison"}};
  for (OptionSpec& o : engine_options()) options.push_back(std::move(o));
  for (OptionSpec& o : verify_options()) options.push_back(std::move(o));
  return {{"simulate", "gov simulate FILE|--db PATH|A.gov B.gov --trace TRACE.json|--workloads DIR|FILE... [--engine jit|interp] [--format jsonl|text] [--dialect head|kueue-v0.9] [--metrics] [--report FILE.html] [--usage-report FILE.csv|FILE.json] [--verify-key FILE] [--require-signature]",
           "Replay a trace of task events through the engine and print every decision.",
           "Events at the same time apply in file order, then admission cycles run until nothing changes; tasks\n"
           "with a duration finish that long after they were last admitted (also after the last event). A bad\n"
           "trace gives one error naming the event and field, and nothing is simulated.\n"
           "With two policy files A.gov B.gov, the trace is replayed against each and the difference is printed\n"
           "(what-if): per team the waits, GPU-hours, borrowed GPU-hours and preemptions, and the tasks whose\n"
           "outcome changed (--format text, the default, or json; --report FILE.html for a page).\n"
           "With --workloads DIR|FILE... instead of --trace, Kubernetes objects (Jobs, PyTorchJobs, Workloads, ...) are\n"
           "the submits: each at its creationTimestamp (seconds since the earliest), team and class from its Kueue\n"
           "labels, duration from its `gov/duration` annotation, its pod sets admitted all or nothing.",
           options},
          run_simulate};
}

}  // namespace gov::cli
