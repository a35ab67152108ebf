// The JSON forms of the public value types. Decisions go through the decision-stream writer of
// gov::trace, so an embedded engine prints byte for byte what `gov simulate` prints.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "compiler/support/json_writer.hpp"
#include "gov/types.hpp"
#include "runtime/embed/labels.hpp"
#include "runtime/trace/decision_writer.hpp"
#include "runtime/trace/json.hpp"
#include "runtime/trace/units.hpp"

namespace gov {

namespace {

/// A resource's key, or a GPU partition profile's (`mig-1g.10gb`; its amounts are counts, which
/// the gpu formatting prints as they are).
std::string_view name_of(Resource resource, const std::string& partition) {
  return partition.empty() ? resource_name(resource) : std::string_view(partition);
}

/// Appends `"key":` after a comma unless it is the object's first member.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  ~ObjectWriter() { out_ += '}'; }
  ObjectWriter(const ObjectWriter&) = delete;
  ObjectWriter& operator=(const ObjectWriter&) = delete;

  std::string& key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, key);
    out_ += ':';
    return out_;
  }
  void string(std::string_view name, std::string_view value) { append_json_string(key(name), value); }
  void integer(std::string_view name, int64_t value) { key(name) += std::to_string(value); }
  void boolean(std::string_view name, bool value) { key(name) += value ? "true" : "false"; }
  void seconds(std::string_view name, Time value) { key(name) += trace::format_seconds(value); }
  void amount(std::string_view name, Resource resource, int64_t value) {
    key(name) += value == kUnlimited ? "null" : trace::format_amount(resource, value);
  }
  void amounts(std::string_view name, const ResourceAmounts& values) {
    std::string& out = key(name);
    ObjectWriter object(out);
    for (const ResourceAmount& a : values) object.amount(name_of(a.resource, a.partition), a.resource, a.amount);
  }
  void strings(std::string_view name, const std::vector<std::string>& values) {
    std::string& out = key(name);
    out += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) out += ',';
      append_json_string(out, values[i]);
    }
    out += ']';
  }

 private:
  std::string& out_;
  bool first_ = true;
};

template <typename T, typename Write>
void append_array(std::string& out, const std::vector<T>& items, Write write) {
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    ObjectWriter object(out);
    write(object, items[i]);
  }
  out += ']';
}

/// A task as a trace's `submit` object (docs/trace-format.md), which the state reader takes back:
/// amounts in file units (vCPUs, GiB), at the top level or, with `pods`, in `per_pod`. A label
/// key given twice is written once (its first value): a JSON object has unique keys.
// The amounts (and partitions) of a task or a pod set, at the top level or per pod.
void write_request(ObjectWriter& t, const std::array<std::optional<int64_t>, kResourceCount>& amounts,
                   const std::vector<std::pair<std::string, int64_t>>& partition_counts, const std::optional<int64_t>& pods) {
  const auto write_amounts = [&](ObjectWriter& out) {
    for (size_t r = 0; r < kResourceCount; ++r) {
      if (!amounts[r]) continue;
      const auto resource = static_cast<Resource>(r);
      out.key(trace::trace_key(resource)) += trace::format_amount(resource, *amounts[r]);
    }
    if (partition_counts.empty()) return;
    ObjectWriter partitions(out.key("partitions"));
    for (const auto& [profile, count] : partition_counts) partitions.integer(profile, count);
  };
  if (pods) {
    t.integer("pods", *pods);
    ObjectWriter per_pod(t.key("per_pod"));
    write_amounts(per_pod);
  } else {
    write_amounts(t);
  }
}

void write_task(ObjectWriter& t, const Task& task) {
  t.string("id", task.id);
  t.string("team", task.team);
  if (task.priority) t.string("priority", *task.priority);
  if (task.instance_type) t.string("instance_type", *task.instance_type);
  if (task.instances) t.integer("instances", *task.instances);
  write_request(t, task.amounts, task.partitions, task.pods);
  if (!task.pod_sets.empty()) {
    append_array(t.key("pod_sets"), task.pod_sets, [](ObjectWriter& p, const PodSet& pod_set) {
      p.string("name", pod_set.name);
      if (pod_set.instance_type) p.string("instance_type", *pod_set.instance_type);
      if (pod_set.instances) {  // whole instances (the trace reader takes them for one pod)
        p.integer("instances", *pod_set.instances);
        if (pod_set.pods != 1) p.integer("pods", pod_set.pods);
        return;
      }
      write_request(p, pod_set.amounts, pod_set.partitions, pod_set.pods);
    });
  }
  if (!task.labels.empty()) {
    ObjectWriter labels(t.key("labels"));
    embed::for_each_first_label(task.labels, [&](const std::string& key, const std::string& value) { labels.string(key, value); });
  }
  if (task.duration) t.seconds("duration", *task.duration);
}

void write_warnings(ObjectWriter& entry, const std::vector<RuleWarning>& warnings) {
  if (warnings.empty()) return;
  append_array(entry.key("warnings"), warnings, [](ObjectWriter& w, const RuleWarning& warning) {
    w.string("rule", warning.rule);
    w.string("message", warning.message);
  });
}

}  // namespace

std::string to_json(const ClusterState& state) {
  std::string out;
  {
    ObjectWriter object(out);
    object.seconds("at", state.at);
    append_array(object.key("admitted"), state.admitted, [](ObjectWriter& a, const AdmittedTask& entry) {
      {
        ObjectWriter task(a.key("task"));
        write_task(task, entry.task);
      }
      a.seconds("submitted_at", entry.submitted_at);
      a.seconds("admitted_at", entry.admitted_at);
      if (entry.flavor) a.string("flavor", *entry.flavor);
      if (!entry.pod_set_flavors.empty()) {
        std::string& list = a.key("pod_set_flavors");
        list += '[';
        for (size_t i = 0; i < entry.pod_set_flavors.size(); ++i) {
          if (i > 0) list += ',';
          list += json_quote(entry.pod_set_flavors[i]);
        }
        list += ']';
      }
      if (!entry.group_flavors.empty()) {
        std::string& list = a.key("group_flavors");
        list += '[';
        for (size_t i = 0; i < entry.group_flavors.size(); ++i) {
          if (i > 0) list += ',';
          list += json_quote(entry.group_flavors[i]);
        }
        list += ']';
      }
      write_warnings(a, entry.warnings);
    });
    append_array(object.key("pending"), state.pending, [](ObjectWriter& p, const PendingTask& entry) {
      {
        ObjectWriter task(p.key("task"));
        write_task(task, entry.task);
      }
      p.seconds("submitted_at", entry.submitted_at);
      if (entry.reason) p.string("reason", reason_name(*entry.reason));
      if (entry.reason || !entry.message.empty()) p.string("message", entry.message);
      if (entry.parked) p.boolean("parked", true);
      write_warnings(p, entry.warnings);
    });
  }
  return out;
}

std::string to_json(const Decision& decision) {
  return trace::decision_json(decision);
}

std::string to_json(const Step& step) {
  std::string out;
  for (const Decision& d : step.decisions) {
    trace::append_decision_json(out, d);
    out += '\n';
  }
  return out;
}

std::string to_json(const Explanation& e) {
  std::string out;
  {
    ObjectWriter object(out);
    object.integer("version", e.version);
    object.string("task", e.task);
    object.string("team", e.team);
    object.string("state", task_state_name(e.state));
    object.integer("priority", e.priority);
    if (!e.priority_class.empty()) object.string("priority_class", e.priority_class);
    object.amounts("requested", e.requested);
    if (!e.flavor.empty()) object.string("flavor", e.flavor);
    append_array(object.key("flavors"), e.flavors, [](ObjectWriter& f, const FlavorExplanation& flavor) {
      f.string("flavor", flavor.flavor);
      f.string("verdict", flavor.verdict);
      append_array(f.key("resources"), flavor.resources, [](ObjectWriter& r, const ResourceFigures& figures) {
        r.string("resource", name_of(figures.resource, figures.partition));
        r.amount("requested", figures.resource, figures.requested);
        r.amount("guaranteed", figures.resource, figures.guaranteed);
        r.amount("borrowing_limit", figures.resource, figures.borrowing_limit);
        r.amount("in_use", figures.resource, figures.in_use);
        r.amount("available", figures.resource, figures.available);
        r.amount("borrowable", figures.resource, figures.borrowable);
        r.amount("maximum", figures.resource, figures.maximum);
        r.amount("cohort_idle", figures.resource, figures.cohort_idle);
      });
    });
    append_array(object.key("candidates"), e.candidates, [](ObjectWriter& c, const CandidateExplanation& candidate) {
      c.string("task", candidate.task);
      c.string("team", candidate.team);
      c.integer("priority", candidate.priority);
      c.seconds("admitted_at", candidate.admitted_at);
      c.boolean("chosen", candidate.chosen);
      c.string("why", candidate.why);
    });
    if (e.reason) object.string("reason", reason_name(*e.reason));
    if (!e.message.empty()) object.string("message", e.message);
    if (!e.preempted_by.empty()) object.string("preempted_by", e.preempted_by);
    if (e.preempted_kind) object.string("preempted_kind", preemption_kind_name(*e.preempted_kind));
    object.strings("notes", e.notes);
  }
  return out;
}

std::string to_json(const Snapshot& s) {
  std::string out;
  {
    ObjectWriter object(out);
    object.integer("version", s.version);
    object.integer("sequence", static_cast<int64_t>(s.sequence));
    object.seconds("at", s.at);
    append_array(object.key("usage"), s.usage, [](ObjectWriter& u, const UsageRow& row) {
      u.string("team", row.team);
      u.string("flavor", row.flavor);
      u.string("resource", name_of(row.resource, row.partition));
      u.amount("nominal", row.resource, row.nominal);
      u.amount("borrowing_limit", row.resource, row.borrowing_limit);
      u.amount("used", row.resource, row.used);
      u.amount("borrowed", row.resource, row.borrowed);
    });
    append_array(object.key("cohort"), s.cohort, [](ObjectWriter& c, const CohortRow& row) {
      c.string("flavor", row.flavor);
      c.string("resource", name_of(row.resource, row.partition));
      c.amount("quota", row.resource, row.quota);
      c.amount("used", row.resource, row.used);
    });
    append_array(object.key("tasks"), s.tasks, [](ObjectWriter& t, const TaskRow& row) {
      t.string("id", row.id);
      t.string("team", row.team);
      t.string("state", task_state_name(row.state));
      if (!row.flavor.empty()) t.string("flavor", row.flavor);
      t.seconds("submitted_at", row.submitted_at);
      if (row.admitted_at) t.seconds("admitted_at", *row.admitted_at);
    });
  }
  return out;
}

}  // namespace gov
