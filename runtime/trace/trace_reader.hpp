// Reads a trace (docs/interfaces.md "Trace file") into events, validated against a policy's IR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/module.hpp"
#include "gov/types.hpp"
#include "runtime/trace/json.hpp"
#include "runtime/trace/trace_file.hpp"

namespace gov::trace {

/// Most bytes of JSON one event may span (docs/limits.md): bounds the memory of reading it.
inline constexpr size_t kMaxEventBytes = size_t{1} << 20;
/// Most tasks one trace may submit (docs/limits.md): the reader remembers every task id and the
/// engine every task, so this bounds the memory of a replay whatever the trace's size.
inline constexpr size_t kMaxTraceTasks = 1'000'000;
/// Most bytes of task ids and labels one trace may hold in total (docs/limits.md): with
/// kMaxTraceTasks, bounds what a replay keeps, even of events that all happen at one time.
inline constexpr size_t kMaxTraceTextBytes = size_t{256} << 20;

/// Most bytes of one label value (docs/limits.md), in a trace and through the C ABI: a value is
/// copied into every decision message that interpolates it, so an unbounded one multiplies.
inline constexpr size_t kMaxLabelValueBytes = size_t{64} << 10;

enum class EventKind : uint8_t { submit, finish, cancel };

/// "submit", "finish", "cancel": the event's key in the trace.
std::string_view event_kind_name(EventKind kind);

/// One event of a trace, checked against the policy: names are known, amounts are in base
/// units (devices, millicores, MiB), times are milliseconds.
struct TraceEvent {
  gov::Time at = 0;
  EventKind kind = EventKind::submit;
  std::string id;         // the task submitted, finished or cancelled
  gov::Task task;  // submit only (task.id == id)
};

/// The events of a trace, or the one error that stops it from being simulated. The error is of
/// kind `invalid` (kind `io` when the file could not be read); its message is one line:
///   in an event: `event 1 (at 5): field "team": unknown team "team-z"; teams are team-a,
///   team-b` (events are counted from 0, as in `.events[1]`; field names are relative to the
///   event's `submit` object: "team", "per_pod.gpus", "labels.project");
///   malformed JSON: `line 3, column 14: expected ',' or '}' after an object member`;
/// and its position is the offending value, key or character.
using TraceResult = support::Expected<std::vector<TraceEvent>>;

/// How a reader decodes each event. Both ways give the same events and the same errors; the
/// second exists to check that (tests/trace/event_scanner_test.cpp, the `trace` fuzz target).
enum class EventDecoding : uint8_t {
  /// Events of the common shape (runtime/trace/event_scanner.hpp) are scanned from the text
  /// and checked there; every other event, and every event with an error, as dom_only.
  scan_common,
  /// Every event is parsed into a JSON DOM (JsonReader::read_value), then decoded from it.
  dom_only,
};

/// Reads a whole trace document and checks every event against `module` (teams, priority
/// classes, instance types) and against the events before it (time never goes backwards,
/// task ids are unique, only submitted tasks finish or are cancelled, and only once).
/// Either every event or exactly one error: nothing of a bad trace is simulated. Never
/// throws; `module` is only read during the call.
TraceResult read_trace(std::string_view text, const ir::Module& module,
                       const JsonLimits& limits = {}, EventDecoding decoding = EventDecoding::scan_common);

/// Reads a trace one event at a time: memory holds one event's JSON plus one small record
/// per task id seen (for the duplicate and unknown-task checks), whatever the number of
/// events. read_trace is built on it. Because the checks run as events are read, a caller
/// that acts on events before the end must be ready for an error after some events (for
/// example trailing garbage); read_trace is the all-or-nothing form.
///
/// `text` and `module` must outlive the reader. Not thread-safe; never throws.
class TraceReader {
 public:
  TraceReader(std::string_view text, const ir::Module& module, const JsonLimits& limits = {});
  /// Reads `file` as it goes (TraceFile::fill): memory holds the event being read and what the
  /// file reads ahead, the rest is dropped behind. A read error stops the reader with an error()
  /// of kind `io` holding the file's message ("read failed after N bytes: ..."). `file` must
  /// outlive the reader and not be used by another reader meanwhile.
  TraceReader(TraceFile& file, const ir::Module& module, const JsonLimits& limits = {});
  ~TraceReader();
  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;

  /// How the events from the next one on are decoded (scan_common unless set).
  void set_decoding(EventDecoding decoding);

  /// Reads the next event into `event` and returns true; returns false at the end of the
  /// trace (the rest of the document has then been checked) or on an error (see error()).
  bool next(TraceEvent& event);
  /// The error that stopped the reader, if any (see TraceResult): kind `io` when its file could
  /// not be read, `invalid` for a problem of the trace.
  const std::optional<support::Error>& error() const;
  /// Whether that error is running out of memory (its message: "out of memory reading the
  /// trace"): a replay reading as it goes reports it as its own (`gov simulate`: where it was).
  bool out_of_memory() const;
  /// How many events were read successfully so far.
  size_t events_read() const;
  /// Offset in the text before which everything has been read.
  size_t bytes_read() const;

  struct State;  // opaque: defined in trace_reader.cpp

 private:
  std::unique_ptr<State> state_;
};

/// Task objects (the `submit` objects of a trace) read from parsed JSON values and checked
/// exactly as a trace's submits are (known team, class and instance type; the request forms;
/// an id not used by an earlier task of the same decoder). For documents that hold tasks
/// outside a trace: `gov eval`'s task and cluster state.
class TaskDecoder {
 public:
  explicit TaskDecoder(const ir::Module& module);
  ~TaskDecoder();
  TaskDecoder(const TaskDecoder&) = delete;
  TaskDecoder& operator=(const TaskDecoder&) = delete;

  /// The task, or an error of kind `invalid` ("field \"gpu\": ...", positioned at the value).
  support::Expected<gov::Task> decode(const JsonValue& value);

 private:
  std::unique_ptr<TraceReader::State> state_;
};

/// A cluster state document, strict at every level (an unknown key is an error with a
/// did-you-mean, as in traces), or an error of kind `invalid` positioned at the offending value:
///   {"at": s, "admitted": [{"task": {...}, "submitted_at": s, "admitted_at": s, "flavor": "...",
///                           "warnings": [{"rule": "...", "message": "..."}]}],
///    "pending": [{"task": {...}, "submitted_at": s, "reason": "waiting-for-quota",
///                 "message": "...", "parked": false, "warnings": [...]}]}
/// Times are seconds; `at` defaults to 0, `submitted_at` and `admitted_at` too; `reason`,
/// `message`, `parked` and `warnings` (gov::PendingTask, gov::AdmittedTask) default to none.
/// Errors name the entry: "admitted[1]: field \"gpu\": ...". Ids are unique across both lists.
support::Expected<gov::ClusterState> read_cluster_state(const JsonValue& value, const ir::Module& module);

/// read_cluster_state's lenient form, for restarts (gov::Engine::load_state_json): an entry that
/// does not read is skipped and reported as a LoadFailure (its list, its index in the document,
/// the message without the "admitted[1]: " prefix); `state` holds the others, and
/// admitted_index / pending_index give each one's index in the document. Only an error of the
/// document's shape (not an object, an unknown top-level key, `at` or a list malformed) is
/// returned as the one error.
struct ClusterStateEntries {
  gov::ClusterState state;
  std::vector<size_t> admitted_index;
  std::vector<size_t> pending_index;
  std::vector<gov::LoadFailure> failures;
};
support::Expected<ClusterStateEntries> read_cluster_state_entries(const JsonValue& value, const ir::Module& module);

}  // namespace gov::trace
