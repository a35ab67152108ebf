// `gov eval`: one decision for one task against a cluster state, with its explanation.
#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "compiler/model/quantities.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/trace/decision_writer.hpp"
#include "runtime/trace/json.hpp"
#include "runtime/trace/trace_reader.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {
namespace {

constexpr size_t kMaxInputBytes = 64u << 20;

/// JSON text of a parsed value (numbers keep their exact source text).
std::string to_json(const trace::JsonValue& v) {
  switch (v.kind) {
    case trace::JsonKind::null: return "null";
    case trace::JsonKind::boolean: return v.boolean ? "true" : "false";
    case trace::JsonKind::number: return v.text;
    case trace::JsonKind::string: return json_quote(v.text);
    case trace::JsonKind::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.items.size(); ++i) out += (i ? "," : "") + to_json(v.items[i]);
      return out + "]";
    }
    case trace::JsonKind::object: {
      std::string out = "{";
      for (size_t i = 0; i < v.items.size(); ++i) {
        out += (i ? "," : "") + json_quote(v.keys[i].text) + ":" + to_json(v.items[i]);
      }
      return out + "}";
    }
  }
  return "null";
}

/// Reads task objects (the `submit` objects of a trace) through the trace reader, so
/// that they are validated exactly like trace events. `tasks` are JSON texts.
std::optional<std::vector<engine::TaskSpec>> read_tasks(const std::vector<std::string>& tasks, const ir::Module& module,
                                                       const std::string& what, std::string& error) {
  std::string document = "{\"events\":[";
  for (size_t i = 0; i < tasks.size(); ++i) document += fmt::format("{}{{\"at\":0,\"submit\":{}}}", i ? "," : "", tasks[i]);
  document += "]}";
  trace::TraceResult result = trace::read_trace(document, module);
  if (!result.ok()) {
    const std::string& message = result.error->message;
    const size_t field = message.find("field");
    error = fmt::format("{}{}: {}", what, result.error->event ? fmt::format("[{}]", *result.error->event) : "",
                        field == std::string::npos ? message : message.substr(field));
    return std::nullopt;
  }
  std::vector<engine::TaskSpec> out;
  for (trace::TraceEvent& e : result.events) out.push_back(std::move(e.task));
  return out;
}

std::optional<trace::JsonValue> read_json_file(const std::string& path) {
  std::string error;
  std::optional<std::string> text = read_file(path, kMaxInputBytes, error);
  if (!text) {
    fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(path), escape_for_terminal(error));
    return std::nullopt;
  }
  trace::JsonParseResult parsed = trace::parse_json(*text);
  if (!parsed.ok()) {
    fmt::print(stderr, "error: {}: {}\n", display_path(path), escape_for_terminal(parsed.error->describe()));
    return std::nullopt;
  }
  return std::move(parsed.value);
}

std::optional<engine::Time> seconds_field(const trace::JsonValue& object, std::string_view key, std::string& error) {
  const trace::JsonValue* v = object.find(key);
  if (!v) return engine::Time{0};
  const trace::ExactNumber ms = v->to_units(1000);
  if (ms.status != trace::NumberStatus::ok || ms.value < 0) {
    error = fmt::format("`{}` must be a non-negative number of seconds (at most 3 decimals)", key);
    return std::nullopt;
  }
  return ms.value;
}

/// STATE.json: {"at": s, "admitted": [{"task": {...}, "submitted_at": s, "admitted_at": s, "flavor": "..."}],
/// "pending": [{"task": {...}, "submitted_at": s}]}.
std::optional<engine::ClusterState> read_state(const trace::JsonValue& json, const ir::Module& module, std::string& error) {
  engine::ClusterState state;
  if (json.kind != trace::JsonKind::object) {
    error = "the state must be an object with `at`, `admitted` and `pending`";
    return std::nullopt;
  }
  auto at = seconds_field(json, "at", error);
  if (!at) return std::nullopt;
  state.at = *at;
  for (const char* list : {"admitted", "pending"}) {
    const trace::JsonValue* entries = json.find(list);
    if (!entries) continue;
    std::vector<std::string> texts;
    for (const trace::JsonValue& entry : entries->items) {
      const trace::JsonValue* task = entry.find("task");
      if (!task) {
        error = fmt::format("{}: every entry needs a `task`", list);
        return std::nullopt;
      }
      texts.push_back(to_json(*task));
    }
    auto tasks = read_tasks(texts, module, list, error);
    if (!tasks) return std::nullopt;
    for (size_t i = 0; i < tasks->size(); ++i) {
      const trace::JsonValue& entry = entries->items[i];
      auto submitted = seconds_field(entry, "submitted_at", error);
      if (!submitted) return std::nullopt;
      if (std::string_view(list) == "pending") {
        state.pending.push_back({std::move((*tasks)[i]), *submitted});
        continue;
      }
      auto admitted = seconds_field(entry, "admitted_at", error);
      if (!admitted) return std::nullopt;
      engine::AdmittedTask a{std::move((*tasks)[i]), *submitted, *admitted, std::nullopt};
      if (const trace::JsonValue* flavor = entry.find("flavor")) a.flavor = flavor->text;
      state.admitted.push_back(std::move(a));
    }
  }
  return state;
}

std::string amount_text(ir::Resource r, ir::Amount a) {
  model::AmountFormat format = model::language_notation(model::kMebibytesPerGibibyte);
  format.unlimited_word = true;
  return model::format_amount(r, a, format);
}

std::string explanation_text(const engine::Explanation& e) {
  std::string out = fmt::format("task {} of team {}: {}, priority {}{}\n", e.task, e.team, engine::task_state_name(e.state),
                                e.priority, e.priority_class.empty() ? "" : fmt::format(" ({})", e.priority_class));
  std::vector<std::string> requested;
  for (const auto& [r, a] : e.requested) requested.push_back(fmt::format("{} {}", ir::resource_key(r), amount_text(r, a)));
  out += fmt::format("  needs: {}\n", fmt::join(requested, ", "));
  for (const engine::FlavorExplanation& f : e.flavors) {
    out += fmt::format("  {}: {}\n", f.flavor, f.verdict);
    out += fmt::format("    {:<12} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>11}\n", "resource", "requested", "guaranteed",
                       "borrow max", "in use", "available", "maximum", "cohort idle");
    for (const engine::ResourceFigures& r : f.resources) {
      out += fmt::format("    {:<12} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>11}\n", ir::resource_key(r.resource),
                         amount_text(r.resource, r.requested), amount_text(r.resource, r.guaranteed),
                         amount_text(r.resource, r.borrowing_limit), amount_text(r.resource, r.in_use),
                         amount_text(r.resource, r.available), amount_text(r.resource, r.maximum),
                         amount_text(r.resource, r.cohort_idle));
    }
  }
  if (!e.candidates.empty()) {
    out += "  preemption candidates:\n";
    for (const engine::CandidateExplanation& c : e.candidates) {
      out += fmt::format("    {} {} (team {}, priority {}): {}\n", c.chosen ? "*" : "-", c.task, c.team, c.priority, c.why);
    }
  }
  if (!e.message.empty()) out += fmt::format("  message: {}\n", e.message);
  for (const std::string& note : e.notes) out += fmt::format("  note: {}\n", note);
  return out;
}

int run_eval(const Args& args) {
  if (args.positional.size() != 1 || !args.value("task")) {
    fmt::print(stderr, "error: usage: gov eval FILE --task TASK.json [--state STATE.json]\n");
    return kUsage;
  }
  std::optional<engine::EngineOptions> options = engine_options_from(args);
  if (!options) return kUsage;
  int status = kOk;
  std::unique_ptr<RunnablePolicy> policy = load_runnable(args.positional[0], args, status);
  if (!policy) return status;

  std::optional<trace::JsonValue> task_json = read_json_file(*args.value("task"));
  if (!task_json) return kUsage;
  std::string error;
  auto task = read_tasks({to_json(*task_json)}, policy->module, "task", error);
  if (!task) {
    fmt::print(stderr, "error: {}: {}\n", display_path(*args.value("task")), escape_for_terminal(error));
    return kFailed;
  }
  engine::Engine engine(policy->module, *policy->evaluator, *options);
  engine::Time at = 0;
  if (const auto state_path = args.value("state")) {
    std::optional<trace::JsonValue> state_json = read_json_file(*state_path);
    if (!state_json) return kUsage;
    auto state = read_state(*state_json, policy->module, error);
    if (!state) {
      fmt::print(stderr, "error: {}: {}\n", display_path(*state_path), escape_for_terminal(error));
      return kFailed;
    }
    for (const std::string& problem : engine.load_state(*state)) fmt::print(stderr, "warning: {}: {}\n", display_path(*state_path), escape_for_terminal(problem));
    at = state->at;
  }
  const std::string id = task->front().id;
  const engine::Event event = engine::Event::submit(std::move(task->front()));
  for (const engine::Decision& d : engine.step(at, std::span(&event, 1))) {
    if (d.task == id) fmt::print("{}\n", trace::decision_json(d));
  }
  if (auto explanation = engine.explain(id)) fmt::print("\n{}", explanation_text(*explanation));
  return kOk;
}

}  // namespace

Command eval_command() {
  std::vector<OptionSpec> options = {{"task", "TASK.json", "the task, as a trace's `submit` object"},
                                     {"state", "STATE.json", "the cluster state: {\"at\", \"admitted\": [...], \"pending\": [...]}"}};
  for (OptionSpec& o : engine_options()) options.push_back(std::move(o));
  return {{"eval", "gov eval FILE --task TASK.json [--state STATE.json] [--engine interp]",
           "Decide one task against a cluster state and explain the decision.",
           "Prints the task's decision (a decision-stream line) and an explanation: what it needs, what its team\n"
           "has guaranteed, in use and borrowable in each instance type tried, what the cohort has idle, and which\n"
           "preemption candidates were considered and why. STATE.json lists admitted tasks ({\"task\": {...},\n"
           "\"submitted_at\": s, \"admitted_at\": s, \"flavor\": \"...\"}) and pending ones ({\"task\": {...},\n"
           "\"submitted_at\": s}); task objects are the `submit` objects of a trace.",
           options},
          run_eval};
}

}  // namespace gov::cli
