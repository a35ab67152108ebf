// The trace reader's fast path: one event of the common shape scanned from the raw text, without
// a JSON DOM. Syntax only; the trace reader checks the scanned values as it checks a DOM event.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

#include "compiler/ir/module.hpp"
#include "runtime/trace/trace_reader.hpp"

namespace gov::trace {

/// Most labels a scanned submit holds; a task with more takes the DOM path.
inline constexpr size_t kMaxScannedLabels = 16;

/// One event as written, every value a view into the scanned text (valid while that text is).
/// Strings are plain: printable ASCII with no escapes, so their text is their value. Numbers are
/// the text of a JSON number (RFC 8259's grammar). An empty view is a field that is absent: the
/// scanner never accepts an empty id, team, priority or instance type (the DOM path reports it).
struct ScannedEvent {
  size_t length = 0;  // bytes from the event's '{' through its '}'
  size_t depth = 0;   // levels of nesting, the event object's own included (labels: 3)
  std::string_view at;
  EventKind kind = EventKind::submit;
  std::string_view id;  // the task submitted, finished or cancelled

  // A submit's other fields.
  std::string_view team;
  std::string_view priority;
  std::string_view instance_type;
  std::string_view instances;
  std::string_view pods;
  std::string_view duration;
  std::array<std::string_view, ir::kResourceCount> amounts{};  // indexed by ir::index(resource)
  bool per_pod = false;                                        // `per_pod` is present
  std::array<std::string_view, ir::kResourceCount> per_pod_amounts{};
  std::array<std::pair<std::string_view, std::string_view>, kMaxScannedLabels> labels{};
  size_t label_count = 0;  // labels[0, label_count) in the order written
};

/// Scans the event object at the start of `text` (the reader is past any whitespace before it)
/// into `out` and returns true when it has the common shape:
///   {"at": n, "submit": {...}} or {"at": n, "finish"|"cancel": "id"}, keys in any order, each
///   once; the submit's keys among id, team, priority, instance_type, instances, gpus, vcpus,
///   memory_gib, neuron, efa, pods, per_pod (amounts only), labels (string values) and duration,
///   each value of the JSON type that key takes; plain strings (above); no line break inside;
///   the whole object within `text`.
/// False says nothing about the event except that the DOM path must read it: it is the path
/// for every other shape (`created`, `pod_sets`, `partitions`, escapes, non-ASCII text) and
/// for every error, whose message that path gives. Reads only `text`; never throws.
bool scan_common_event(std::string_view text, ScannedEvent& out);

}  // namespace gov::trace
