// Trace reading: a JsonReader steps into `events`; each event is decoded and checked alone.
#include "runtime/trace/trace_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <new>
#include <utility>

#include "compiler/ir/module_names.hpp"
#include "compiler/model/partitions.hpp"
#include "compiler/support/utf8.hpp"
#include "runtime/trace/event_scanner.hpp"
#include "runtime/trace/task_ids.hpp"
#include "runtime/trace/units.hpp"

namespace gov::trace {

namespace {

constexpr std::array<std::string_view, 4> kEventKeys = {"at", "submit", "finish", "cancel"};
constexpr std::array<std::string_view, 17> kSubmitKeys = {
    "id",         "team",   "priority", "instance_type", "instances", "gpus",   "vcpus",
    "memory_gib", "neuron", "efa",      "pods",          "per_pod",   "labels", "duration",
    "partitions", "created", "pod_sets"};
// What a submit may request for the whole task, or each of its `pod_sets`.
constexpr std::array<std::string_view, 10> kRequestKeys = {
    "instances", "gpus", "vcpus", "memory_gib", "neuron", "efa", "pods", "per_pod", "partitions", "instance_type"};
constexpr std::array<std::string_view, 11> kPodSetKeys = {
    "name", "instance_type", "instances", "gpus", "vcpus", "memory_gib", "neuron", "efa", "pods", "per_pod", "partitions"};
constexpr std::array<std::string_view, 5> kPerPodKeys = {"gpus", "vcpus", "memory_gib", "neuron",
                                                         "efa"};
constexpr std::array<std::string_view, 6> kPerPodObjectKeys = {"gpus", "vcpus",      "memory_gib",
                                                               "neuron", "efa", "partitions"};
constexpr std::array<std::string_view, 1> kTopKeys = {"events"};
// Most seconds a task's `created` may lie before the trace's start (about 31.7 years): keeps
// every queue-order time far from int64's ends, whatever arithmetic compares them.
constexpr gov::Time kMaxCreatedMillis = -gov::kEarliestCreated;
// Most seconds a time (`at`, `admitted_at`) or a duration may be, 10^12 s (about 31,700
// years): a time plus a duration stays far below the engine's kForever (2^61 ms), at which a finish
// saturates; past it, a finish would fall at the admission whatever the duration.
constexpr gov::Time kMaxMillis = 1'000'000'000'000'000;
constexpr size_t kNamesListed = 10;  // longer lists of names are cut short in messages
constexpr size_t kQuoteLimit = 64;   // longer user strings are cut short in messages

// A user string for a message: JSON-quoted (so one line, valid UTF-8), cut when long.
std::string quoted(std::string_view text) {
  if (text.size() <= kQuoteLimit) return json_quote(text);
  return json_quote(text.substr(0, utf8_boundary_at_or_before(text, kQuoteLimit))) + "...";
}

// What a value is, for "expected X, found Y".
std::string found(const JsonValue& value) {
  switch (value.kind) {
    case JsonKind::null:
      return "null";
    case JsonKind::boolean:
      return value.boolean ? "true" : "false";
    case JsonKind::number:
      return value.text.size() <= kQuoteLimit ? value.text
                                              : value.text.substr(0, kQuoteLimit) + "...";
    case JsonKind::string:
      return "the string " + quoted(value.text);
    case JsonKind::array:
      return "an array";
    case JsonKind::object:
      return "an object";
  }
  return "?";
}

// A number's text below zero ("-0" and "-0.0" are zero).
bool is_negative(std::string_view number) {
  if (number.empty() || number[0] != '-') return false;
  std::string_view mantissa = number.substr(0, number.find_first_of("eE"));
  return mantissa.find_first_of("123456789") != std::string_view::npos;
}
bool is_negative(const JsonValue& number) { return is_negative(std::string_view(number.text)); }

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

// The known key closest to an unknown one, if any is close (a typo or a missing suffix).
template <size_t N>
std::optional<std::string_view> near_match(std::string_view key,
                                           const std::array<std::string_view, N>& known) {
  if (key.size() > kQuoteLimit) return std::nullopt;
  std::optional<std::string_view> best;
  size_t best_distance = std::max<size_t>(1, key.size() / 3) + 1;
  for (std::string_view candidate : known) {
    size_t distance = edit_distance(key, candidate);
    bool prefix = key.size() >= 3 && candidate.starts_with(key);
    if (prefix) distance = std::min<size_t>(distance, 1);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

template <size_t N>
std::string joined_keys(const std::array<std::string_view, N>& keys) {
  std::string out;
  for (size_t i = 0; i < N; ++i) out += fmt::format("{}{}", i == 0 ? "" : ", ", keys[i]);
  return out;
}

// "teams are team-a, team-b" / "the only team is team-a" / "the policy has no teams".
template <typename T>
std::string known_names(const std::vector<T>& items, std::string_view singular,
                        std::string_view plural) {
  if (items.empty()) return fmt::format("the policy has no {}", plural);
  if (items.size() == 1) return fmt::format("the only {} is {}", singular, items[0].name);
  std::string out = fmt::format("{} are ", plural);
  size_t listed = std::min(items.size(), kNamesListed);
  for (size_t i = 0; i < listed; ++i) out += fmt::format("{}{}", i == 0 ? "" : ", ", items[i].name);
  if (listed < items.size()) out += fmt::format(" and {} more", items.size() - listed);
  return out;
}

/// "did you mean \"ml.g5.8xlarge\"?" for a name one edit away from one of `items`, else the list
/// known_names gives: a catalog has 205 instance types, of which a list shows ten.
template <typename T>
std::string names_help(const std::vector<T>& items, std::string_view name, std::string_view singular,
                       std::string_view plural) {
  if (name.size() <= kQuoteLimit) {
    // One edit away only: instance type names differ from each other by one or two characters
    // (`ml.p5.48xlarge`, `ml.g5.8xlarge`), so a wider net suggests another real type.
    std::optional<std::string_view> best;
    size_t best_distance = 2;
    for (const T& item : items) {
      const size_t distance = edit_distance(name, item.name);
      if (distance < best_distance) {
        best = item.name;
        best_distance = distance;
      }
    }
    if (best) return fmt::format("did you mean {}?", quoted(*best));
  }
  return known_names(items, singular, plural);
}

/// The help for an unknown instance type: a catalog type one edit away, else a type of the same
/// family (`ml.p5.96xlarge` → `ml.p5.48xlarge`: another size) that the policy's quotas name, else
/// the types the quotas name, not the catalog's 205.
std::string instance_type_help(const ir::Module& module, std::string_view name) {
  std::vector<const ir::Flavor*> quoted_types;
  for (const ir::Team& team : module.teams) {
    for (const ir::FlavorQuota& quota : team.quotas) {
      const ir::Flavor* flavor = &module.flavors[quota.flavor];
      if (std::find(quoted_types.begin(), quoted_types.end(), flavor) == quoted_types.end()) quoted_types.push_back(flavor);
    }
  }
  if (quoted_types.empty() || name.size() > kQuoteLimit) return names_help(module.flavors, name, "instance type", "instance types");
  for (const ir::Flavor& flavor : module.flavors) {
    if (edit_distance(name, flavor.name) < 2) return fmt::format("did you mean {}?", quoted(flavor.name));
  }
  const auto family = [](std::string_view type) { return type.substr(0, type.rfind('.')); };
  for (const ir::Flavor* flavor : quoted_types) {
    if (name.find('.') != std::string_view::npos && family(name) == family(flavor->name)) {
      return fmt::format("did you mean {}?", quoted(flavor->name));
    }
  }
  std::string out = "the policy's quotas are for ";
  const size_t listed = std::min(quoted_types.size(), kNamesListed);
  for (size_t i = 0; i < listed; ++i) out += fmt::format("{}{}", i == 0 ? "" : ", ", quoted_types[i]->name);
  if (listed < quoted_types.size()) out += fmt::format(" and {} more", quoted_types.size() - listed);
  return out;
}

}  // namespace

std::string_view event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::submit:
      return "submit";
    case EventKind::finish:
      return "finish";
    case EventKind::cancel:
      return "cancel";
  }
  return "?";
}

// ------------------------------------------------------------------ reader state

struct TraceReader::State {
  enum class Phase : uint8_t { start, events, done };

  State(std::string_view text, const ir::Module& m, const JsonLimits& limits)
      : json(text, event_limits(limits)), module(m), names(m) {}
  State(TraceFile& f, const ir::Module& m, const JsonLimits& limits)
      : json(f.text(), event_limits(limits), f), module(m), names(m), file(&f) {}

  static JsonLimits event_limits(JsonLimits limits) {
    limits.max_value_bytes = std::min(limits.max_value_bytes, kMaxEventBytes);
    return limits;
  }

  bool step(TraceEvent& event);
  /// The fast path: the next event scanned (event_scanner.hpp) and checked into `event`, or
  /// false with nothing consumed or remembered, for the DOM path to read it.
  bool read_common(TraceEvent& event);
  bool open();
  bool close();
  bool json_failed();
  bool top_error(const JsonPosition& position, std::string message);
  bool unknown_top_key(const JsonKey& key);

  JsonReader json;
  const ir::Module& module;
  ir::ModuleNames names;  // every submit names a team, and maybe a class and instance types
  Phase phase = Phase::start;
  size_t index = 0;  // of the next event
  gov::Time last_at = 0;
  size_t last_at_index = 0;
  TaskIds tasks;  // every task id so far
  EventDecoding decoding = EventDecoding::scan_common;
  size_t text_bytes = 0;  // task ids and labels of the submits so far
  std::optional<support::Error> error;
  bool out_of_memory = false;  // `error` is running out of memory
  TraceFile* file = nullptr;  // the source of `json`, if it reads a file
};

namespace {

// Decodes and checks one event. Keeps the first error; every check returns false after it.
class EventDecoder {
 public:
  EventDecoder(TraceReader::State& state, size_t index)
      : state_(state), module_(state.module), index_(index) {}

  bool decode(const JsonValue& value, TraceEvent& out);
  /// decode()'s twin for a scanned event: the same checks, giving the same event. False (with
  /// nothing remembered and no error) whenever decode() might say anything else, which it then
  /// says: the DOM path stays the one source of every message.
  bool decode_scanned(const ScannedEvent& in, TraceEvent& out);
  /// A submit object on its own (no event around it).
  bool decode_task(const JsonValue& value, gov::Task& out) {
    TraceEvent event;
    if (!decode_submit(value, event)) return false;
    out = std::move(event.task);
    return true;
  }
  std::optional<support::Error>& error() { return error_; }

 private:
  // Errors.
  bool fail(const JsonPosition& position, std::string what);
  bool field_fail(std::string_view field, const JsonPosition& position, std::string what);
  template <size_t N>
  bool check_keys(const JsonValue& object, const std::array<std::string_view, N>& known,
                  std::string_view path, std::string_view owner);

  // Values.
  bool read_at(const JsonValue& at);
  bool read_seconds(std::string_view field, const JsonValue& value, gov::Time& out);
  bool read_created(const JsonValue& value, gov::Time& out);
  bool read_string(std::string_view field, const JsonValue& value, std::string& out);
  /// Fails when `text` holds a NUL: the C ABI hands ids, names and labels on as C strings,
  /// where "x\u0000A" and "x\u0000B" would both read as "x".
  bool no_nul(std::string_view field, const JsonPosition& position, std::string_view text);
  bool read_count(std::string_view field, const JsonValue& value, int64_t minimum, int64_t& out);
  bool read_amount(std::string_view field, ir::Resource resource, const JsonValue& value,
                   ir::Amount& out);
  bool read_amounts(const JsonValue& object, std::string_view path, gov::Task& task);
  bool read_partitions(const JsonValue& value, const std::string& path, gov::Task& task);
  bool read_labels(const JsonValue& value, std::vector<std::pair<std::string, std::string>>& out);

  // Events.
  bool decode_end(EventKind kind, const JsonValue& value, TraceEvent& out);
  bool decode_submit(const JsonValue& value, TraceEvent& out);
  bool read_identity(const JsonValue& submit, gov::Task& task);
  bool read_names(const JsonValue& submit, gov::Task& task);
  bool read_request(const JsonValue& submit, gov::Task& task);
  bool read_pod_sets(const JsonValue& submit, const JsonValue& pod_sets, gov::Task& task);
  bool check_request_forms(const JsonValue& submit, const gov::Task& task);
  bool check_instances_type(const JsonValue& submit, const gov::Task& task);
  /// A finish or cancel of a known, live task: remembered, and the event filled in.
  void end_task(TaskIds::Entry& task, EventKind kind, TraceEvent& out);
  bool scanned_submit(const ScannedEvent& in, TraceEvent& out);
  bool scanned_request(const ScannedEvent& in, gov::Task& task);

  TraceReader::State& state_;
  const ir::Module& module_;
  size_t index_;
  std::optional<gov::Time> at_;
  std::optional<support::Error> error_;
};

bool EventDecoder::fail(const JsonPosition& position, std::string what) {
  if (error_) return false;
  std::string prefix = at_ ? fmt::format("event {} (at {}): ", index_, format_seconds(*at_))
                           : fmt::format("event {}: ", index_);
  error_ = support::Error{support::ErrorKind::invalid, prefix + what, position};
  return false;
}

bool EventDecoder::field_fail(std::string_view field, const JsonPosition& position,
                              std::string what) {
  return fail(position, fmt::format("field {}: {}", quoted(field), what));
}

template <size_t N>
bool EventDecoder::check_keys(const JsonValue& object, const std::array<std::string_view, N>& known,
                              std::string_view path, std::string_view owner) {
  for (const JsonKey& key : object.keys) {
    if (std::find(known.begin(), known.end(), key.text) != known.end()) continue;
    std::string field = std::string(path) + key.text;
    std::optional<std::string_view> near = near_match(key.text, known);
    if (near)
      return field_fail(field, key.position,
                        fmt::format("unknown key; did you mean {}?", quoted(*near)));
    return field_fail(field, key.position,
                      fmt::format("unknown key; {} has keys {}", owner, joined_keys(known)));
  }
  return true;
}

// ------------------------------------------------------------------ values

bool EventDecoder::read_seconds(std::string_view field, const JsonValue& value, gov::Time& out) {
  if (value.kind != JsonKind::number) {
    return field_fail(field, value.position,
                      fmt::format("expected a number of seconds, found {}", found(value)));
  }
  if (is_negative(value)) {
    return field_fail(
        field, value.position,
        fmt::format("expected a non-negative number of seconds, found {}", found(value)));
  }
  ExactNumber millis = value.to_units(kMillisPerSecond);
  if (millis.status == NumberStatus::not_exact) {
    return field_fail(field, value.position,
                      fmt::format("{} is more precise than a millisecond", found(value)));
  }
  if (millis.status != NumberStatus::ok || millis.value > kMaxMillis) {
    return field_fail(field, value.position,
                      fmt::format("{} seconds is out of range (at most 10^12 s, about 31,700 years)", found(value)));
  }
  out = millis.value;
  return true;
}

// `created`: seconds like `at`, negative allowed (a task created before the trace starts), never
// after the event's time. Only a trace's submit events have one: a state entry's queue-order time
// is its `submitted_at`.
bool EventDecoder::read_created(const JsonValue& value, gov::Time& out) {
  if (!at_) {
    return field_fail("created", value.position,
                      "only a trace's submit events have a queue-order time; a state entry gives its "
                      "\"submitted_at\"");
  }
  if (value.kind != JsonKind::number) {
    return field_fail("created", value.position,
                      fmt::format("expected a number of seconds, found {}", found(value)));
  }
  const ExactNumber millis = value.to_units(kMillisPerSecond);
  if (millis.status == NumberStatus::not_exact) {
    return field_fail("created", value.position,
                      fmt::format("{} is more precise than a millisecond", found(value)));
  }
  if (millis.status != NumberStatus::ok || millis.value < -kMaxCreatedMillis) {
    return field_fail("created", value.position, fmt::format("{} seconds is out of range", found(value)));
  }
  if (millis.value > *at_) {
    return field_fail("created", value.position,
                      fmt::format("{} is after {}, the event's time; a task is created before it is submitted",
                                  format_seconds(millis.value), format_seconds(*at_)));
  }
  out = millis.value;
  return true;
}

bool EventDecoder::no_nul(std::string_view field, const JsonPosition& position, std::string_view text) {
  if (text.find('\0') == std::string_view::npos) return true;
  return field_fail(field, position,
                    fmt::format("{} contains a NUL character (\\u0000); ids, names and labels are passed on "
                                "as C strings, which end at the first NUL",
                                quoted(text)));
}

bool EventDecoder::read_string(std::string_view field, const JsonValue& value, std::string& out) {
  if (value.kind != JsonKind::string) {
    return field_fail(field, value.position,
                      fmt::format("expected a string, found {}", found(value)));
  }
  if (value.text.empty())
    return field_fail(field, value.position, "expected a name, found an empty string");
  if (!no_nul(field, value.position, value.text)) return false;
  out = value.text;
  return true;
}

bool EventDecoder::read_count(std::string_view field, const JsonValue& value, int64_t minimum,
                              int64_t& out) {
  std::string_view expected = minimum > 0 ? "a positive integer" : "a non-negative integer";
  ExactNumber number = value.to_units(/*factor=*/1);
  if (number.status == NumberStatus::out_of_range) {
    return field_fail(field, value.position, fmt::format("{} is out of range", found(value)));
  }
  if (number.status != NumberStatus::ok || number.value < minimum) {
    return field_fail(field, value.position,
                      fmt::format("expected {}, found {}", expected, found(value)));
  }
  out = number.value;
  return true;
}

bool EventDecoder::read_amount(std::string_view field, ir::Resource resource,
                               const JsonValue& value, ir::Amount& out) {
  int64_t factor = base_units_per_file_unit(resource);
  if (factor == 1) return read_count(field, value, /*minimum=*/0, out);
  std::string_view unit = resource == ir::Resource::vcpu ? "vCPUs" : "GiB";
  std::string_view base = resource == ir::Resource::vcpu ? "millicores" : "MiB";
  if (value.kind != JsonKind::number || is_negative(value)) {
    return field_fail(
        field, value.position,
        fmt::format("expected a non-negative number of {}, found {}", unit, found(value)));
  }
  ExactNumber number = value.to_units(factor);
  if (number.status == NumberStatus::not_exact) {
    return field_fail(field, value.position,
                      fmt::format("{} {} is not a whole number of {}", found(value), unit, base));
  }
  if (number.status != NumberStatus::ok) {
    return field_fail(field, value.position,
                      fmt::format("{} {} is out of range", found(value), unit));
  }
  out = number.value;
  return true;
}

bool EventDecoder::read_amounts(const JsonValue& object, std::string_view path,
                                gov::Task& task) {
  for (ir::Resource resource : ir::kAllResources) {
    const JsonValue* value = object.find(trace_key(resource));
    if (value == nullptr) continue;
    ir::Amount amount = 0;
    if (!read_amount(std::string(path) + std::string(trace_key(resource)), resource, *value,
                     amount))
      return false;
    task.amounts[ir::index(resource)] = amount;
  }
  if (const JsonValue* partitions = object.find("partitions"); partitions != nullptr)
    return read_partitions(*partitions, std::string(path) + "partitions", task);
  return true;
}

// `"partitions": {"mig-1g.10gb": 1}`: counts of GPU partitions per MIG profile. A profile no
// quota of the policy gives is read (the engine answers no-matching-flavor, as Kueue does);
// a name that is not a profile is an error.
bool EventDecoder::read_partitions(const JsonValue& value, const std::string& path, gov::Task& task) {
  if (value.kind != JsonKind::object) {
    return field_fail(path, value.position,
                      fmt::format("expected an object of GPU partition counts (\"mig-1g.10gb\": 1), found {}",
                                  found(value)));
  }
  task.partitions.clear();
  for (size_t i = 0; i < value.keys.size(); ++i) {
    const std::string& profile = value.keys[i].text;
    const std::string field = path + "." + profile;
    if (!model::parse_mig_profile(profile)) {
      const std::string known = module_.partitions.empty() ? std::string("no quota of the policy gives GPU partitions")
                                                           : fmt::format("the policy's quotas give {}",
                                                                         fmt::join(module_.partitions, ", "));
      return field_fail(field, value.keys[i].position,
                        fmt::format("{} is not a MIG profile (`mig-<slices>g.<memory>gb`); {}", quoted(profile), known));
    }
    int64_t count = 0;
    if (!read_count(field, value.items[i], /*minimum=*/0, count)) return false;
    task.partitions.emplace_back(profile, count);
  }
  return true;
}

bool EventDecoder::read_labels(const JsonValue& value, std::vector<std::pair<std::string, std::string>>& out) {
  if (value.kind != JsonKind::object) {
    return field_fail("labels", value.position,
                      fmt::format("expected an object of string labels, found {}", found(value)));
  }
  for (size_t i = 0; i < value.keys.size(); ++i) {
    const JsonValue& label = value.items[i];
    if (label.kind != JsonKind::string) {
      return field_fail("labels." + value.keys[i].text, label.position,
                        fmt::format("expected a string, found {}", found(label)));
    }
    const std::string field = "labels." + value.keys[i].text;
    if (!no_nul(field, value.keys[i].position, value.keys[i].text) || !no_nul(field, label.position, label.text))
      return false;
    if (label.text.size() > kMaxLabelValueBytes) {
      return field_fail(field, label.position,
                        fmt::format("the value is {} bytes; a label value has at most {} bytes", label.text.size(),
                                    kMaxLabelValueBytes));
    }
    out.emplace_back(value.keys[i].text, label.text);
  }
  return true;
}

// ------------------------------------------------------------------ events

bool EventDecoder::decode(const JsonValue& value, TraceEvent& out) {
  if (value.kind != JsonKind::object) {
    return fail(value.position, fmt::format("expected an event object, found {}", found(value)));
  }
  const JsonValue* at = value.find("at");
  if (at != nullptr && !read_at(*at)) return false;
  if (!check_keys(value, kEventKeys, "", "an event")) return false;
  if (at == nullptr)
    return field_fail("at", value.position, "missing; every event has a time in seconds");
  out.at = *at_;
  const JsonKey* action = nullptr;
  for (const JsonKey& key : value.keys) {
    if (key.text == "at") continue;
    if (action != nullptr) {
      return field_fail(key.text, key.position,
                        fmt::format("an event has one action, and this one already has {}",
                                    quoted(action->text)));
    }
    action = &key;
  }
  if (action == nullptr)
    return fail(value.position, "expected one of \"submit\", \"finish\" or \"cancel\"");
  const JsonValue& body = *value.find(action->text);
  if (action->text == "submit") return decode_submit(body, out);
  return decode_end(action->text == "finish" ? EventKind::finish : EventKind::cancel, body, out);
}

bool EventDecoder::read_at(const JsonValue& at) {
  gov::Time millis = 0;
  if (!read_seconds("at", at, millis)) return false;
  at_ = millis;
  if (index_ > 0 && millis < state_.last_at) {
    return field_fail(
        "at", at.position,
        fmt::format("time goes backwards: {} is before {}, the time of event {}",
                    format_seconds(millis), format_seconds(state_.last_at), state_.last_at_index));
  }
  return true;
}

bool EventDecoder::decode_end(EventKind kind, const JsonValue& value, TraceEvent& out) {
  std::string_view field = event_kind_name(kind);
  if (value.kind != JsonKind::string || value.text.empty()) {
    return field_fail(field, value.position,
                      fmt::format("expected a task id, found {}", found(value)));
  }
  if (!no_nul(field, value.position, value.text)) return false;
  TaskIds::Entry* task = state_.tasks.find(value.text);
  if (task == nullptr) {
    return field_fail(
        field, value.position,
        fmt::format("unknown task {}; no earlier event submits it", quoted(value.text)));
  }
  if (task->ended != TaskIds::kNotEnded) {
    return field_fail(
        field, value.position,
        fmt::format("task {} was already {} by event {}", quoted(value.text),
                    task->ended_by == EventKind::finish ? "finished" : "cancelled", task->ended));
  }
  end_task(*task, kind, out);
  return true;
}

void EventDecoder::end_task(TaskIds::Entry& task, EventKind kind, TraceEvent& out) {
  task.ended = index_;
  task.ended_by = kind;
  out.kind = kind;
  out.id = task.id;
}

bool EventDecoder::decode_submit(const JsonValue& value, TraceEvent& out) {
  if (value.kind != JsonKind::object) {
    return field_fail(
        "submit", value.position,
        fmt::format("expected an object describing the task, found {}", found(value)));
  }
  gov::Task task;
  if (!check_keys(value, kSubmitKeys, "", "a submit")) return false;
  if (!read_identity(value, task) || !read_names(value, task)) return false;
  const JsonValue* pod_sets = value.find("pod_sets");
  if (pod_sets != nullptr ? !read_pod_sets(value, *pod_sets, task) : !read_request(value, task)) return false;
  if (const JsonValue* labels = value.find("labels");
      labels != nullptr && !read_labels(*labels, task.labels)) {
    return false;
  }
  if (const JsonValue* duration = value.find("duration"); duration != nullptr) {
    if (!read_seconds("duration", *duration, task.duration.emplace())) return false;
  }
  if (const JsonValue* created = value.find("created"); created != nullptr) {
    if (!read_created(*created, task.created.emplace())) return false;
  }
  if (pod_sets == nullptr && (!check_request_forms(value, task) || !check_instances_type(value, task)))
    return false;
  size_t text_bytes = task.id.size();
  for (const gov::PodSet& pod_set : task.pod_sets) text_bytes += pod_set.name.size();
  for (const auto& [key, label] : task.labels) text_bytes += key.size() + label.size();
  state_.text_bytes += text_bytes;
  if (state_.text_bytes > kMaxTraceTextBytes) {
    return field_fail("id", value.position,
                      fmt::format("this task's id and labels bring the trace's total past {} bytes, the most "
                                  "gov replays",
                                  kMaxTraceTextBytes));
  }
  state_.tasks.insert(task.id)->submitted = index_;  // read_identity found no such id
  out.kind = EventKind::submit;
  out.id = task.id;
  out.task = std::move(task);
  return true;
}

// ------------------------------------------------------------------ scanned events

namespace {

/// read_count's success case on a number's text: a whole number in range, at least `minimum`.
bool scanned_count(std::string_view number, int64_t minimum, std::optional<int64_t>& out) {
  const ExactNumber n = number_units(number, /*factor=*/1);
  if (n.status != NumberStatus::ok || n.value < minimum) return false;
  out = n.value;
  return true;
}

/// read_amount's success case.
bool scanned_amount(ir::Resource resource, std::string_view number, std::optional<int64_t>& out) {
  const int64_t factor = base_units_per_file_unit(resource);
  if (factor == 1) return scanned_count(number, /*minimum=*/0, out);
  if (is_negative(number)) return false;
  const ExactNumber n = number_units(number, factor);
  if (n.status != NumberStatus::ok) return false;
  out = n.value;
  return true;
}

/// read_seconds's success case.
bool scanned_seconds(std::string_view number, gov::Time& out) {
  if (is_negative(number)) return false;
  const ExactNumber millis = number_units(number, kMillisPerSecond);
  if (millis.status != NumberStatus::ok || millis.value > kMaxMillis) return false;  // the DOM path says why
  out = millis.value;
  return true;
}

}  // namespace

bool EventDecoder::decode_scanned(const ScannedEvent& in, TraceEvent& out) {
  gov::Time at = 0;
  if (!scanned_seconds(in.at, at) || (index_ > 0 && at < state_.last_at)) return false;
  out.at = at;
  if (in.kind == EventKind::submit) return scanned_submit(in, out);
  // decode_end's success case.
  TaskIds::Entry* task = state_.tasks.find(in.id);
  if (task == nullptr || task->ended != TaskIds::kNotEnded) return false;
  end_task(*task, in.kind, out);
  return true;
}

// decode_submit's success case, in the same order of reading (a task without pod sets).
bool EventDecoder::scanned_submit(const ScannedEvent& in, TraceEvent& out) {
  if (in.id.empty() || in.team.empty() || state_.tasks.size() >= kMaxTraceTasks) return false;
  const int32_t team = state_.names.team(in.team);
  if (team < 0) return false;
  gov::Task task;
  task.team = in.team;
  if (!in.priority.empty()) {
    if (state_.names.priority_class(in.priority) < 0) return false;
    task.priority.emplace(in.priority);
  }
  if (!in.instance_type.empty()) {
    if (state_.names.flavor(in.instance_type) < 0) return false;
    task.instance_type.emplace(in.instance_type);
  }
  if (!scanned_request(in, task)) return false;
  // read_labels' length check cannot fail here: the scan window is shorter (kScanWindow).
  size_t text_bytes = in.id.size();
  for (size_t i = 0; i < in.label_count; ++i) text_bytes += in.labels[i].first.size() + in.labels[i].second.size();
  if (!in.duration.empty() && !scanned_seconds(in.duration, task.duration.emplace())) return false;
  // check_instances_type's success case.
  if (task.instances && !task.instance_type &&
      module_.teams[static_cast<size_t>(team)].quotas.size() != 1)
    return false;
  if (state_.text_bytes + text_bytes > kMaxTraceTextBytes) return false;
  // The id last: once it is remembered, the event has been read.
  TaskIds::Entry* record = state_.tasks.insert(in.id);
  if (record == nullptr) return false;
  record->submitted = index_;
  state_.text_bytes += text_bytes;
  task.labels.reserve(in.label_count);
  for (size_t i = 0; i < in.label_count; ++i) task.labels.emplace_back(in.labels[i].first, in.labels[i].second);
  task.id = record->id;
  out.kind = EventKind::submit;
  out.id = record->id;
  out.task = std::move(task);
  return true;
}

// read_request's and check_request_forms' success cases: whole `instances`, top-level amounts,
// or `pods` × `per_pod`, one form only, requesting something.
bool EventDecoder::scanned_request(const ScannedEvent& in, gov::Task& task) {
  bool top_amount = false;
  for (ir::Resource resource : ir::kAllResources) {
    const std::string_view amount = in.amounts[ir::index(resource)];
    if (amount.empty()) continue;
    top_amount = true;
    if (!scanned_amount(resource, amount, task.amounts[ir::index(resource)])) return false;
  }
  const bool instances = !in.instances.empty();
  const bool pods = !in.pods.empty();
  if (in.per_pod != pods || (instances && (top_amount || pods)) || (pods && top_amount)) return false;
  if (instances && !scanned_count(in.instances, /*minimum=*/0, task.instances)) return false;
  if (pods) {
    if (!scanned_count(in.pods, /*minimum=*/1, task.pods)) return false;
    for (ir::Resource resource : ir::kAllResources) {
      const std::string_view amount = in.per_pod_amounts[ir::index(resource)];
      if (!amount.empty() && !scanned_amount(resource, amount, task.amounts[ir::index(resource)])) return false;
    }
  }
  const bool any_amount =
      std::any_of(task.amounts.begin(), task.amounts.end(), [](const auto& a) { return a.has_value(); });
  return instances || any_amount;
}

bool EventDecoder::read_identity(const JsonValue& submit, gov::Task& task) {
  const JsonValue* id = submit.find("id");
  if (id == nullptr)
    return field_fail("id", submit.position, "missing; a submit needs \"id\" and \"team\"");
  if (id->kind != JsonKind::string || id->text.empty()) {
    return field_fail("id", id->position, fmt::format("expected a task id, found {}", found(*id)));
  }
  if (!no_nul("id", id->position, id->text)) return false;
  if (const TaskIds::Entry* earlier = state_.tasks.find(id->text); earlier != nullptr) {
    // Only a trace has events (`at_` is an event's time); a state's entries and --workloads'
    // objects are named by the message's prefix (`pending[1]`, Job `a1`).
    return field_fail("id", id->position,
                      at_ ? fmt::format("duplicate task id {}; event {} already submits it", quoted(id->text),
                                        earlier->submitted)
                          : fmt::format("duplicate task id {}: it is given twice", quoted(id->text)));
  }
  if (state_.tasks.size() >= kMaxTraceTasks) {
    return field_fail("id", id->position,
                      fmt::format("task number {} is one too many; gov replays traces of at most {} tasks",
                                  kMaxTraceTasks + 1, kMaxTraceTasks));
  }
  task.id = id->text;
  return true;
}

bool EventDecoder::read_names(const JsonValue& submit, gov::Task& task) {
  const JsonValue* team = submit.find("team");
  if (team == nullptr)
    return field_fail("team", submit.position, "missing; a submit needs \"id\" and \"team\"");
  if (!read_string("team", *team, task.team)) return false;
  if (state_.names.team(task.team) < 0) {
    return field_fail("team", team->position,
                      fmt::format("unknown team {}; {}", quoted(task.team),
                                  known_names(module_.teams, "team", "teams")));
  }
  if (const JsonValue* priority = submit.find("priority"); priority != nullptr) {
    if (!read_string("priority", *priority, task.priority.emplace())) return false;
    if (state_.names.priority_class(*task.priority) < 0) {
      return field_fail(
          "priority", priority->position,
          fmt::format("unknown priority class {}; {}", quoted(*task.priority),
                      known_names(module_.classes, "priority class", "priority classes")));
    }
  }
  if (const JsonValue* type = submit.find("instance_type"); type != nullptr) {
    if (!read_string("instance_type", *type, task.instance_type.emplace())) return false;
    if (state_.names.flavor(*task.instance_type) < 0) {
      return field_fail(
          "instance_type", type->position,
          fmt::format("unknown instance type {}; {}", quoted(*task.instance_type),
                      instance_type_help(module_, *task.instance_type)));
    }
  }
  return true;
}

bool EventDecoder::read_request(const JsonValue& submit, gov::Task& task) {
  if (const JsonValue* instances = submit.find("instances"); instances != nullptr) {
    if (!read_count("instances", *instances, /*minimum=*/0, task.instances.emplace())) return false;
  }
  if (!read_amounts(submit, "", task)) return false;
  if (const JsonValue* pods = submit.find("pods"); pods != nullptr) {
    if (!read_count("pods", *pods, /*minimum=*/1, task.pods.emplace())) return false;
  }
  const JsonValue* per_pod = submit.find("per_pod");
  if (per_pod == nullptr) return true;
  if (per_pod->kind != JsonKind::object) {
    return field_fail(
        "per_pod", per_pod->position,
        fmt::format("expected an object of per-pod amounts, found {}", found(*per_pod)));
  }
  if (!check_keys(*per_pod, kPerPodObjectKeys, "per_pod.", "\"per_pod\"")) return false;
  // Per-pod amounts are read after the top-level ones, which check_request_forms then
  // rejects when both are present; task.amounts ends up holding the per-pod ones.
  for (ir::Resource resource : ir::kAllResources) {
    if (submit.find(trace_key(resource)) != nullptr) return true;
  }
  if (submit.find("partitions") != nullptr) return true;
  return read_amounts(*per_pod, "per_pod.", task);
}

// `"pod_sets": [{"name": "worker", "pods": 3, "per_pod": {...}}, ...]`: each pod set requests as
// a task does (whole `instances`, amounts, or `pods` × `per_pod`, with its own `instance_type`),
// and the task itself requests nothing else.
bool EventDecoder::read_pod_sets(const JsonValue& submit, const JsonValue& pod_sets, gov::Task& task) {
  for (const JsonKey& key : submit.keys) {
    if (key.text == "instance_type") continue;  // the pod sets' default
    if (std::find(kRequestKeys.begin(), kRequestKeys.end(), key.text) != kRequestKeys.end())
      return field_fail(key.text, key.position,
                        fmt::format("a task with \"pod_sets\" requests per pod set; move \"{}\" into its pod sets", key.text));
  }
  if (pod_sets.kind != JsonKind::array || pod_sets.items.empty()) {
    return field_fail("pod_sets", pod_sets.position,
                      fmt::format("expected a non-empty array of pod sets, found {}", found(pod_sets)));
  }
  if (pod_sets.items.size() > gov::kMaxPodSets) {
    return field_fail("pod_sets", pod_sets.position,
                      fmt::format("{} pod sets; a task has at most {} (Kueue's limit)", pod_sets.items.size(),
                                  gov::kMaxPodSets));
  }
  for (const JsonValue& item : pod_sets.items) {
    if (item.kind != JsonKind::object)
      return field_fail("pod_sets", item.position, fmt::format("expected a pod set object, found {}", found(item)));
    if (!check_keys(item, kPodSetKeys, "pod_sets.", "a pod set")) return false;
    gov::PodSet& pod_set = task.pod_sets.emplace_back();
    const JsonValue* name = item.find("name");
    if (name == nullptr) return field_fail("pod_sets", item.position, "a pod set needs a \"name\"");
    if (!read_string("pod_sets.name", *name, pod_set.name)) return false;
    if (pod_set.name.empty() || !no_nul("pod_sets.name", name->position, pod_set.name))
      return field_fail("pod_sets.name", name->position, "expected a pod set name, found the empty string");
    for (size_t i = 0; i + 1 < task.pod_sets.size(); ++i) {
      if (task.pod_sets[i].name == pod_set.name)
        return field_fail("pod_sets.name", name->position, fmt::format("pod set {} is given twice", quoted(pod_set.name)));
    }
    gov::Task one;  // the pod set read as a task, with the task's team for the instance-type check
    one.team = task.team;
    if (const JsonValue* type = item.find("instance_type"); type != nullptr) {
      if (!read_string("pod_sets.instance_type", *type, one.instance_type.emplace())) return false;
      if (state_.names.flavor(*one.instance_type) < 0) {
        return field_fail("pod_sets.instance_type", type->position,
                          fmt::format("unknown instance type {}; {}", quoted(*one.instance_type),
                                      instance_type_help(module_, *one.instance_type)));
      }
    } else {
      one.instance_type = task.instance_type;
    }
    if (!read_request(item, one) || !check_request_forms(item, one) || !check_instances_type(item, one)) return false;
    if (item.find("instance_type") != nullptr) pod_set.instance_type = one.instance_type;
    pod_set.instances = one.instances;
    pod_set.amounts = one.amounts;
    pod_set.pods = one.pods.value_or(1);
    pod_set.partitions = std::move(one.partitions);
  }
  return true;
}

// A task requests whole `instances`, or per-resource amounts, or `pods` × `per_pod`.
bool EventDecoder::check_request_forms(const JsonValue& submit, const gov::Task& task) {
  const JsonValue* per_pod = submit.find("per_pod");
  const JsonValue* pods = submit.find("pods");
  const JsonValue* instances = submit.find("instances");
  const JsonKey* amount = nullptr;  // the first top-level amount, in file order
  for (const JsonKey& key : submit.keys) {
    if (std::find(kPerPodKeys.begin(), kPerPodKeys.end(), key.text) != kPerPodKeys.end()) {
      amount = &key;
      break;
    }
  }
  if (per_pod != nullptr && pods == nullptr) {
    return field_fail("per_pod", per_pod->position,
                      "\"per_pod\" needs \"pods\", the number of pods");
  }
  if (pods != nullptr && per_pod == nullptr) {
    return field_fail("pods", pods->position,
                      "\"pods\" needs \"per_pod\", the resources of one pod");
  }
  if (instances != nullptr && amount != nullptr) {
    return field_fail(
        amount->text, amount->position,
        "a task requests either whole \"instances\" or per-resource amounts, not both");
  }
  if (instances != nullptr && pods != nullptr) {
    return field_fail("pods", pods->position,
                      "a task requests either whole \"instances\" or \"pods\", not both");
  }
  if (pods != nullptr && amount != nullptr) {
    return field_fail(amount->text, amount->position,
                      "with \"pods\", per-resource amounts go inside \"per_pod\"");
  }
  if (const JsonValue* partitions = submit.find("partitions"); pods != nullptr && partitions != nullptr) {
    return field_fail("partitions", partitions->position,
                      "with \"pods\", partitions go inside \"per_pod\"");
  }
  bool any_amount = std::any_of(task.amounts.begin(), task.amounts.end(),
                                [](const auto& a) { return a.has_value(); }) ||
                    !task.partitions.empty();
  if (instances == nullptr && !any_amount) {
    return field_fail("submit", submit.position,
                      "the task requests nothing; give \"instances\", amounts (gpus, vcpus, "
                      "memory_gib, neuron, efa, partitions) "
                      "or \"pods\" with \"per_pod\"");
  }
  return true;
}

// `instances` without `instance_type` means the team's one instance type.
bool EventDecoder::check_instances_type(const JsonValue& submit, const gov::Task& task) {
  if (!task.instances || task.instance_type) return true;
  const ir::Team& team = module_.teams[static_cast<size_t>(state_.names.team(task.team))];
  if (team.quotas.size() == 1) return true;
  const JsonValue& instances = *submit.find("instances");
  if (team.quotas.empty()) {
    return field_fail(
        "instances", instances.position,
        fmt::format("\"instances\" needs \"instance_type\": team {} has no instance types",
                    quoted(task.team)));
  }
  std::string types;
  for (const ir::FlavorQuota& quota : team.quotas) {
    types += fmt::format("{}{}", types.empty() ? "" : ", ", module_.flavors[quota.flavor].name);
  }
  return field_fail(
      "instances", instances.position,
      fmt::format("\"instances\" needs \"instance_type\": team {} has {} instance types ({})",
                  quoted(task.team), team.quotas.size(), types));
}

}  // namespace

// ------------------------------------------------------------------ TraceReader

bool TraceReader::State::top_error(const JsonPosition& position, std::string message) {
  if (!error) error = support::Error{support::ErrorKind::invalid, std::move(message), position};
  return false;
}

bool TraceReader::State::json_failed() {
  if (error) return false;
  if (json.error()) {
    error = json.error();
  } else {
    const JsonPosition at = json.position();
    error = support::Error{support::ErrorKind::invalid,
                           fmt::format("line {}, column {}: malformed JSON", at.line, at.column), at};
  }
  return false;
}

bool TraceReader::State::unknown_top_key(const JsonKey& key) {
  std::optional<std::string_view> near = near_match(key.text, kTopKeys);
  std::string hint =
      near ? fmt::format("did you mean {}?", quoted(*near)) : "a trace has only \"events\"";
  return top_error(key.position, fmt::format("field {}: unknown key at the top level; {}",
                                             quoted(key.text), hint));
}

// Steps into the top-level object and its `events` array.
bool TraceReader::State::open() {
  std::optional<JsonKind> kind = json.peek_kind();
  if (!kind) {
    json.skip_value();  // reports what is there instead of a value
    return json_failed();
  }
  JsonPosition top = json.position();
  if (*kind != JsonKind::object) {
    return top_error(
        top, fmt::format("expected the trace to be an object with an \"events\" array, found {}",
                         json_kind_name(*kind)));
  }
  if (!json.enter_object()) return json_failed();
  for (;;) {
    JsonKey key;
    JsonStep step = json.next_member(key);
    if (step == JsonStep::error) return json_failed();
    if (step == JsonStep::end) return top_error(top, "the trace has no \"events\" array");
    if (key.text != "events") return unknown_top_key(key);
    std::optional<JsonKind> events = json.peek_kind();
    if (events && *events != JsonKind::array) {
      return top_error(json.position(),
                       fmt::format("field \"events\": expected an array of events, found {}",
                                   json_kind_name(*events)));
    }
    if (!events) json.skip_value();
    if (!json.enter_array()) return json_failed();
    phase = Phase::events;
    return true;
  }
}

// After the events array: no other key, nothing after the object.
bool TraceReader::State::close() {
  JsonKey key;
  JsonStep step = json.next_member(key);
  if (step == JsonStep::error) return json_failed();
  if (step == JsonStep::item) return unknown_top_key(key);
  return json.finish() || json_failed();
}

// Bytes of text the fast path looks at for one event: common events are a few hundred bytes.
constexpr size_t kScanWindow = 4096;
// So no scanned label value can pass the limit read_labels checks.
static_assert(kScanWindow < kMaxLabelValueBytes);

bool TraceReader::State::read_common(TraceEvent& event) {
  ScannedEvent scanned;
  if (!scan_common_event(json.lookahead(kScanWindow), scanned) || !json.fits_limits(scanned.length, scanned.depth))
    return false;
  EventDecoder decoder(*this, index);
  if (!decoder.decode_scanned(scanned, event)) {
    event = TraceEvent{};
    return false;
  }
  json.skip_read(scanned.length);
  return true;
}

bool TraceReader::State::step(TraceEvent& event) {
  if (phase == Phase::start && !open()) return false;
  JsonStep element = json.next_element();
  if (element == JsonStep::error) return json_failed();
  if (element == JsonStep::end) {
    phase = Phase::done;
    close();
    return false;
  }
  event = TraceEvent{};
  if (decoding == EventDecoding::scan_common && read_common(event)) {
    last_at = event.at;
    last_at_index = index;
    ++index;
    return true;
  }
  JsonValue value;
  if (!json.read_value(value)) return json_failed();
  EventDecoder decoder(*this, index);
  if (!decoder.decode(value, event)) {
    error = std::move(decoder.error());
    return false;
  }
  last_at = event.at;
  last_at_index = index;
  ++index;
  return true;
}

TraceReader::TraceReader(std::string_view text, const ir::Module& module, const JsonLimits& limits)
    : state_(std::make_unique<State>(text, module, limits)) {}
TraceReader::TraceReader(TraceFile& file, const ir::Module& module, const JsonLimits& limits)
    : state_(std::make_unique<State>(file, module, limits)) {}
TraceReader::~TraceReader() = default;
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;

bool TraceReader::next(TraceEvent& event) {
  if (state_->error || state_->phase == State::Phase::done) return false;
  bool more = false;
  try {
    more = state_->step(event);
  } catch (const std::bad_alloc&) {
    state_->out_of_memory = true;
    state_->top_error(state_->json.position(), "out of memory reading the trace");
  } catch (const std::length_error&) {
    state_->out_of_memory = true;
    state_->top_error(state_->json.position(), "out of memory reading the trace");
  }
  // A read error ends the file's text early; whatever the JSON reader made of that (end of
  // input, a cut value), the real error is the read's.
  if (state_->file != nullptr && state_->file->error()) {
    state_->error = support::Error{support::ErrorKind::io, *state_->file->error()};
    state_->out_of_memory = false;  // the read's error is the one reported
    return false;
  }
  return more;
}

void TraceReader::set_decoding(EventDecoding decoding) { state_->decoding = decoding; }

const std::optional<support::Error>& TraceReader::error() const {
  return state_->error;
}

bool TraceReader::out_of_memory() const {
  return state_->error.has_value() && state_->out_of_memory;
}

size_t TraceReader::events_read() const {
  return state_->index;
}

size_t TraceReader::bytes_read() const {
  return state_->json.offset();
}

TraceResult read_trace(std::string_view text, const ir::Module& module, const JsonLimits& limits,
                       EventDecoding decoding) {
  std::vector<TraceEvent> events;
  TraceReader reader(text, module, limits);
  reader.set_decoding(decoding);
  try {
    TraceEvent event;
    while (reader.next(event)) events.push_back(std::move(event));
  } catch (const std::bad_alloc&) {
    return support::Error{support::ErrorKind::invalid, "out of memory reading the trace"};
  }
  if (reader.error()) return *reader.error();
  return events;
}

// ------------------------------------------------------------------ tasks and states outside traces

TaskDecoder::TaskDecoder(const ir::Module& module)
    : state_(std::make_unique<TraceReader::State>(std::string_view(), module, JsonLimits{})) {}
TaskDecoder::~TaskDecoder() = default;

support::Expected<gov::Task> TaskDecoder::decode(const JsonValue& value) {
  EventDecoder decoder(*state_, state_->index++);
  gov::Task task;
  if (decoder.decode_task(value, task)) return task;
  // The decoder's messages start with "event N: "; a lone task is not an event.
  support::Error error = std::move(*decoder.error());
  const size_t field = error.message.find("field ");
  if (field != std::string::npos) error.message.erase(0, field);
  return error;
}

namespace {

/// Reads one state document. Strict: the first error stops it. Lenient (read_cluster_state_entries):
/// an entry that does not read is recorded as a LoadFailure and skipped; only errors of the
/// document's shape stop it.
class StateDecoder {
 public:
  StateDecoder(const ir::Module& module, ClusterStateEntries* lenient) : module_(module), tasks_(module), lenient_(lenient) {}

  support::Expected<gov::ClusterState> read(const JsonValue& value) {
    gov::ClusterState state;
    if (!expect_object(value, "", "the state") || !known_keys(value, kStateKeys, "", "the state") ||
        !seconds(value, "at", "", state.at) || !read_list(value, "admitted", state) ||
        !read_list(value, "pending", state)) {
      return std::move(error_);
    }
    // No `at`: the state is as of its latest entry, so that a controller may leave out what it
    // does not know (the engine refuses an entry whose times pass `at`).
    if (value.find("at") == nullptr) {
      for (const gov::AdmittedTask& entry : state.admitted) state.at = std::max({state.at, entry.submitted_at, entry.admitted_at});
      for (const gov::PendingTask& entry : state.pending) state.at = std::max(state.at, entry.submitted_at);
    }
    return state;
  }

 private:
  static constexpr std::array<std::string_view, 3> kStateKeys = {"at", "admitted", "pending"};
  static constexpr std::array<std::string_view, 7> kAdmittedKeys = {"task", "submitted_at", "admitted_at", "flavor",
                                                                    "pod_set_flavors", "group_flavors", "warnings"};
  static constexpr std::array<std::string_view, 6> kPendingKeys = {"task",    "submitted_at", "reason",
                                                                   "message", "parked",       "warnings"};
  static constexpr std::array<std::string_view, 2> kWarningKeys = {"rule", "message"};

  /// An admitted entry's `flavor` is an instance type its team has a quota in: dropped, as the
  /// engine drops it, the task's usage would be missing from the state the answer is about (a
  /// what-if analyst's finding, session 43: a one-letter typo turned "preempts an 8-GPU task"
  /// into "admitted", with a warning only).
  bool known_flavor(const std::string& team_name, const JsonValue& flavor, std::string_view where) {
    const auto type = std::find_if(module_.flavors.begin(), module_.flavors.end(),
                                   [&](const ir::Flavor& f) { return f.name == flavor.text; });
    if (type == module_.flavors.end()) {
      return fail(where, flavor.position,
                  fmt::format("field \"flavor\": unknown instance type {}; {}", quoted(flavor.text),
                              instance_type_help(module_, flavor.text)));
    }
    const auto team = std::find_if(module_.teams.begin(), module_.teams.end(),
                                   [&](const ir::Team& t) { return t.name == team_name; });
    if (team == module_.teams.end()) return true;  // the task's own error
    const auto index = static_cast<uint32_t>(type - module_.flavors.begin());
    std::vector<std::string_view> quoted_types;
    for (const ir::FlavorQuota& quota : team->quotas) {
      if (quota.flavor == index) return true;
      quoted_types.push_back(module_.flavors[quota.flavor].name);
    }
    return fail(where, flavor.position,
                fmt::format("field \"flavor\": team {} has no quota for {}, so no task of it can be admitted there; its "
                            "instance types are {}",
                            quoted(team_name), quoted(flavor.text), fmt::join(quoted_types, ", ")));
  }

  bool fail(std::string_view where, const JsonPosition& position, std::string what) {
    error_ = support::Error{support::ErrorKind::invalid,
                            where.empty() ? std::move(what) : fmt::format("{}: {}", where, what), position};
    return false;
  }

  bool expect_object(const JsonValue& value, std::string_view where, std::string_view what) {
    if (value.kind == JsonKind::object) return true;
    return fail(where, value.position, fmt::format("{} must be an object, found {}", what, found(value)));
  }

  template <size_t N>
  bool known_keys(const JsonValue& object, const std::array<std::string_view, N>& known, std::string_view where,
                  std::string_view owner) {
    for (const JsonKey& key : object.keys) {
      if (std::find(known.begin(), known.end(), key.text) != known.end()) continue;
      if (std::optional<std::string_view> near = near_match(key.text, known))
        return fail(where, key.position, fmt::format("unknown key {}; did you mean {}?", quoted(key.text), quoted(*near)));
      return fail(where, key.position,
                  fmt::format("unknown key {}; {} has keys {}", quoted(key.text), owner, joined_keys(known)));
    }
    return true;
  }

  bool seconds(const JsonValue& object, std::string_view key, std::string_view where, gov::Time& out) {
    const JsonValue* v = object.find(key);
    if (v == nullptr) return true;
    const ExactNumber ms = v->kind == JsonKind::number ? v->to_units(kMillisPerSecond) : ExactNumber{};
    if (v->kind != JsonKind::number || is_negative(*v) || ms.status != NumberStatus::ok || ms.value > kMaxMillis) {
      return fail(where, v->position,
                  fmt::format("field {}: expected a non-negative number of seconds (at most 3 decimals and 10^12 s), found {}",
                              quoted(key), found(*v)));
    }
    out = ms.value;
    return true;
  }

  /// An entry's `submitted_at`: its queue-order time, which may be negative as a trace's
  /// `created` may (a task created before the clock's zero), down to the same bound.
  bool queue_time(const JsonValue& object, std::string_view where, gov::Time& out) {
    const JsonValue* v = object.find("submitted_at");
    if (v == nullptr) return true;
    const ExactNumber ms = v->kind == JsonKind::number ? v->to_units(kMillisPerSecond) : ExactNumber{};
    if (v->kind != JsonKind::number || ms.status != NumberStatus::ok || ms.value < -kMaxCreatedMillis) {
      return fail(where, v->position,
                  fmt::format("field \"submitted_at\": expected a number of seconds (at most 3 decimals, not before "
                              "-1000000000), found {}",
                              found(*v)));
    }
    out = ms.value;
    return true;
  }

  bool string_field(const JsonValue& object, std::string_view key, std::string_view where, std::string_view what,
                    std::string& out) {
    const JsonValue* v = object.find(key);
    if (v == nullptr) return true;
    if (v->kind != JsonKind::string)
      return fail(where, v->position, fmt::format("field {}: expected {}, found {}", quoted(key), what, found(*v)));
    out = v->text;
    return true;
  }

  bool warnings(const JsonValue& entry, std::string_view where, std::vector<gov::RuleWarning>& out) {
    const JsonValue* list = entry.find("warnings");
    if (list == nullptr) return true;
    if (list->kind != JsonKind::array)
      return fail(where, list->position,
                  fmt::format("field \"warnings\": expected an array of {{\"rule\", \"message\"}} objects, found {}",
                              found(*list)));
    for (size_t i = 0; i < list->items.size(); ++i) {
      const JsonValue& item = list->items[i];
      const std::string at = fmt::format("{}: warnings[{}]", where, i);
      gov::RuleWarning warning;
      if (!expect_object(item, at, "a warning") || !known_keys(item, kWarningKeys, at, "a warning") ||
          !string_field(item, "rule", at, "a rule name", warning.rule) ||
          !string_field(item, "message", at, "a message", warning.message)) {
        return false;
      }
      out.push_back(std::move(warning));
    }
    return true;
  }

  bool reason(const JsonValue& entry, std::string_view where, std::optional<gov::PendingReason>& out) {
    const JsonValue* v = entry.find("reason");
    if (v == nullptr) return true;
    constexpr std::array<gov::PendingReason, 5> kReasons = {
        gov::PendingReason::waiting_for_quota, gov::PendingReason::exceeds_max_quota,
        gov::PendingReason::waiting_for_preemption, gov::PendingReason::no_matching_flavor,
        gov::PendingReason::team_inactive};
    if (v->kind == JsonKind::string) {
      for (gov::PendingReason r : kReasons) {
        if (gov::reason_name(r) == v->text) {
          out = r;
          return true;
        }
      }
    }
    return fail(where, v->position,
                fmt::format("field \"reason\": expected a pending reason (waiting-for-quota, exceeds-max-quota, "
                            "waiting-for-preemption, no-matching-flavor, team-inactive), found {}",
                            found(*v)));
  }

  /// One entry into `state`; false with error_ set when it does not read.
  bool read_entry(const JsonValue& entry, bool admitted, const std::string& where, gov::ClusterState& state) {
    if (!expect_object(entry, where, "an entry")) return false;
    if (admitted ? !known_keys(entry, kAdmittedKeys, where, "an admitted entry")
                 : !known_keys(entry, kPendingKeys, where, "a pending entry")) {
      return false;
    }
    const JsonValue* task_value = entry.find("task");
    if (task_value == nullptr) return fail(where, entry.position, "field \"task\": missing; every entry needs a `task`");
    support::Expected<gov::Task> task = tasks_.decode(*task_value);
    if (!task) return fail(where, task.error().position.value_or(task_value->position), task.error().message);
    gov::Time submitted_at = 0;
    if (!queue_time(entry, where, submitted_at)) return false;
    std::vector<gov::RuleWarning> matched;
    if (!warnings(entry, where, matched)) return false;
    if (!admitted) {
      gov::PendingTask out{std::move(*task), submitted_at};
      out.warnings = std::move(matched);
      if (!reason(entry, where, out.reason) ||
          !string_field(entry, "message", where, "the last pending message", out.message)) {
        return false;
      }
      if (const JsonValue* parked = entry.find("parked")) {
        if (parked->kind != JsonKind::boolean)
          return fail(where, parked->position, fmt::format("field \"parked\": expected true or false, found {}", found(*parked)));
        out.parked = parked->boolean;
      }
      state.pending.push_back(std::move(out));
      return true;
    }
    gov::AdmittedTask out{std::move(*task), submitted_at, 0, std::nullopt};
    out.warnings = std::move(matched);
    if (!seconds(entry, "admitted_at", where, out.admitted_at)) return false;
    // Strict (gov eval --state): an entry the engine would skip is an error with its place. The
    // lenient reader leaves these to Engine::load_state, whose LoadFailures say the same.
    if (lenient_ == nullptr && out.admitted_at < submitted_at) {
      const JsonValue* at = entry.find("admitted_at");
      return fail(where, at != nullptr ? at->position : entry.position,
                  fmt::format("field \"admitted_at\": {} is before the task's submitted_at {}: a task is admitted after it "
                              "is submitted",
                              format_seconds(out.admitted_at), format_seconds(submitted_at)));
    }
    if (const JsonValue* flavor = entry.find("flavor")) {
      if (flavor->kind != JsonKind::string)
        return fail(where, flavor->position,
                    fmt::format("field \"flavor\": expected an instance type name, found {}", found(*flavor)));
      out.flavor = flavor->text;
      if (lenient_ == nullptr && !known_flavor(out.task.team, *flavor, where)) return false;
      // A task that names its instance type runs there: an entry admitted elsewhere contradicts
      // itself (a what-if analyst's nit, session 43: it was charged on `flavor` without a word).
      if (out.task.instance_type && out.task.pod_sets.empty() && *out.task.instance_type != flavor->text) {
        return fail(where, flavor->position,
                    fmt::format("field \"flavor\": {}, where the task asks for {}: a task runs on the instance type it "
                                "names",
                                quoted(flavor->text), quoted(*out.task.instance_type)));
      }
    }
    if (const JsonValue* flavors = entry.find("pod_set_flavors")) {
      if (flavors->kind != JsonKind::array)
        return fail(where, flavors->position,
                    fmt::format("field \"pod_set_flavors\": expected an array of instance type names, found {}", found(*flavors)));
      for (const JsonValue& flavor : flavors->items) {
        if (flavor.kind != JsonKind::string)
          return fail(where, flavor.position,
                      fmt::format("field \"pod_set_flavors\": expected an instance type name, found {}", found(flavor)));
        out.pod_set_flavors.push_back(flavor.text);
      }
      if (out.pod_set_flavors.size() != out.task.pod_sets.size())
        return fail(where, flavors->position,
                    fmt::format("field \"pod_set_flavors\": {} instance types for {} pod sets", out.pod_set_flavors.size(),
                                out.task.pod_sets.size()));
    }
    if (const JsonValue* flavors = entry.find("group_flavors")) {  // checked against the team by the engine
      if (flavors->kind != JsonKind::array)
        return fail(where, flavors->position,
                    fmt::format("field \"group_flavors\": expected an array of instance type names, found {}", found(*flavors)));
      for (const JsonValue& flavor : flavors->items) {
        if (flavor.kind != JsonKind::string)
          return fail(where, flavor.position,
                      fmt::format("field \"group_flavors\": expected an instance type name, found {}", found(flavor)));
        out.group_flavors.push_back(flavor.text);
      }
    }
    state.admitted.push_back(std::move(out));
    return true;
  }

  bool read_list(const JsonValue& state_value, std::string_view list, gov::ClusterState& state) {
    const JsonValue* entries = state_value.find(list);
    if (entries == nullptr) return true;
    if (entries->kind != JsonKind::array)
      return fail("", entries->position,
                  fmt::format("field {}: expected an array of entries, found {}", quoted(list), found(*entries)));
    const bool admitted = list == "admitted";
    for (size_t i = 0; i < entries->items.size(); ++i) {
      if (read_entry(entries->items[i], admitted, fmt::format("{}[{}]", list, i), state)) {
        if (lenient_ != nullptr) (admitted ? lenient_->admitted_index : lenient_->pending_index).push_back(i);
        continue;
      }
      if (lenient_ == nullptr) return false;
      // The entry's own message, without the "admitted[1]: " the list and index already say.
      std::string message = std::move(error_.message);
      const std::string prefix = fmt::format("{}[{}]: ", list, i);
      if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
      lenient_->failures.push_back(
          {admitted ? gov::LoadFailure::List::admitted : gov::LoadFailure::List::pending, i, std::move(message)});
      error_ = {};
    }
    return true;
  }

  const ir::Module& module_;
  TaskDecoder tasks_;
  ClusterStateEntries* lenient_ = nullptr;
  support::Error error_;
};

}  // namespace

support::Expected<gov::ClusterState> read_cluster_state(const JsonValue& value, const ir::Module& module) {
  return StateDecoder(module, nullptr).read(value);
}

support::Expected<ClusterStateEntries> read_cluster_state_entries(const JsonValue& value, const ir::Module& module) {
  ClusterStateEntries entries;
  support::Expected<gov::ClusterState> state = StateDecoder(module, &entries).read(value);
  if (!state) return state.error();
  entries.state = std::move(*state);
  return entries;
}

}  // namespace gov::trace
