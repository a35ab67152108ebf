// `gov simulate`: replay a trace through the engine (gov::Engine, as a controller runs it) and print
// every decision.
#include <cstdio>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
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

gov::Event to_event(trace::TraceEvent& e) {
  switch (e.kind) {
    case trace::EventKind::submit: return gov::Event::submit(std::move(e.task));
    case trace::EventKind::finish: return gov::Event::finish(std::move(e.id));
    case trace::EventKind::cancel: return gov::Event::cancel(std::move(e.id));
  }
  return gov::Event::finish(std::move(e.id));
}

int run_simulate(const Args& args) {
  if (args.positional.size() > 1 || !args.value("trace") || (args.positional.empty() && !args.has("db"))) {
    fmt::print(stderr, "error: usage: gov simulate FILE --trace TRACE.json (or --db PATH for the store's active version)\n");
    return kUsage;
  }
  const std::string format = args.value("format").value_or("jsonl");
  if (format != "jsonl" && format != "text") {
    fmt::print(stderr, "error: unknown format `{}` (expected jsonl or text)\n", escape_for_terminal(format));
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
  std::string out;
  auto emit = [&](const gov::Step& step) {
    for (const gov::Decision& d : step.decisions) {
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
  fmt::print("{}", out);
  return kOk;
}

}  // namespace

Command simulate_command() {
  std::vector<OptionSpec> options = {{"trace", "TRACE", "the trace to replay (JSON, docs/interfaces.md \"Trace file\")"},
                                     {"db", "PATH", "without FILE: the store whose active version (and cached native code) to use"},
                                     {"policy", "NAME", "with --db: the policy (default: the only one)"},
                                     {"format", "FORMAT", "jsonl (one decision per line, default) or text (with a per-team summary)"}};
  for (OptionSpec& o : engine_options()) options.push_back(std::move(o));
  for (OptionSpec& o : verify_options()) options.push_back(std::move(o));
  return {{"simulate", "gov simulate FILE|--db PATH --trace TRACE.json [--engine jit|interp] [--format jsonl|text] [--dialect head|kueue-v0.9] [--verify-key FILE] [--require-signature]",
           "Replay a trace of task events through the engine and print every decision.",
           "Events at the same time apply in file order, then admission cycles run until nothing changes; tasks\n"
           "with a duration finish that long after they were last admitted (also after the last event). A bad\n"
           "trace gives one error naming the event and field, and nothing is simulated.",
           options},
          run_simulate};
}

}  // namespace gov::cli
