// `gov eval`: one decision for one task against a cluster state, with its explanation.
#include <algorithm>

#include <fmt/format.h>

#include "compiler/kube/workload.hpp"
#include "compiler/model/quantities.hpp"
#include "compiler/support/terminal_text.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/trace/decision_writer.hpp"
#include "runtime/trace/json.hpp"
#include "runtime/trace/trace_reader.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"
#include "tools/gov/kube_inputs.hpp"

namespace gov::cli {
namespace {

std::string amount_text(ir::Resource r, ir::Amount a) {
  model::AmountFormat format = model::language_notation(model::kMebibytesPerGibibyte);
  format.unlimited_word = true;
  return model::format_amount(r, a, format);
}

std::string explanation_text(const gov::Explanation& e) {
  // Names are escaped here, line breaks included (the whole text is escaped line by line after):
  // a name with a line break would otherwise break the explanation's layout.
  std::string out = fmt::format("task {} of team {}: {}, priority {}{}\n", escape_for_terminal(e.task),
                                escape_for_terminal(e.team), gov::task_state_name(e.state),
                                e.priority, e.priority_class.empty() ? "" : fmt::format(" ({})", e.priority_class));
  std::vector<std::string> requested;
  for (const auto& [r, a, partition] : e.requested) {
    requested.push_back(partition.empty() ? fmt::format("{} {}", model::display_name(r), amount_text(r, a))
                                          : fmt::format("{} {}", partition, a));
  }
  // A task that requests nothing charged fits anywhere (a what-if analyst's finding, session 43:
  // `needs: ` and a table without rows).
  out += requested.empty() ? std::string("  needs: nothing charged (no accelerators, vCPUs or memory)\n")
                           : fmt::format("  needs: {}\n", fmt::join(requested, ", "));
  for (const gov::FlavorExplanation& f : e.flavors) {
    out += fmt::format("  {}: {}\n", f.flavor, f.verdict);
    if (f.resources.empty()) continue;
    out += fmt::format("    {:<12} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>11}\n", "resource", "requested", "guaranteed",
                       "borrow max", "in use", "available", "maximum", "cohort idle");
    for (const gov::ResourceFigures& r : f.resources) {
      out += fmt::format("    {:<12} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>11}\n",
                         r.partition.empty() ? model::display_name(r.resource) : std::string_view(r.partition),
                         amount_text(r.resource, r.requested), amount_text(r.resource, r.guaranteed),
                         amount_text(r.resource, r.borrowing_limit), amount_text(r.resource, r.in_use),
                         amount_text(r.resource, r.available), amount_text(r.resource, r.maximum),
                         amount_text(r.resource, r.cohort_idle));
    }
  }
  if (!e.candidates.empty()) {
    // Every task considered, chosen (`*`) or spared (`-`) and why.
    const bool any_chosen = std::any_of(e.candidates.begin(), e.candidates.end(), [](const auto& c) { return c.chosen; });
    out += any_chosen ? "  preemption candidates (* chosen):\n" : "  tasks considered for preemption (none may be preempted):\n";
    for (const gov::CandidateExplanation& c : e.candidates) {
      out += fmt::format("    {} {} (team {}, priority {}): {}\n", c.chosen ? "*" : "-", escape_for_terminal(c.task),
                         escape_for_terminal(c.team), c.priority, c.why);
    }
  }
  if (!e.message.empty()) out += fmt::format("  message: {}\n", e.message);
  for (const std::string& note : e.notes) out += fmt::format("  note: {}\n", note);
  return out;
}

/// A Kubernetes object (Job, PyTorchJob, ...; docs/kubernetes.md) as the task: one workload
/// (workload_task). nullopt after printing the error; `status` is then the exit status.
std::optional<gov::Task> kubernetes_task(const std::string& path, const gov::Engine& engine, const ir::Module& module,
                                         int& status, std::optional<int64_t>& created) {
  std::optional<std::vector<kube::Workload>> workloads = read_workload_file(path, status);
  if (!workloads) return std::nullopt;
  status = kFailed;
  if (workloads->size() != 1) {
    fmt::print(stderr, "error: {}: holds {} workloads; `--task` takes one\n", display_path(path), workloads->size());
    return std::nullopt;
  }
  const kube::Workload& workload = workloads->front();
  created = workload.created;
  if (workload.partial_admission) note_partial_admission(1, workload_where(path, workload));
  trace::TaskDecoder decoder(module);
  support::Expected<gov::Task> task = workload_task(workload, module, queue_naming(engine), decoder);
  if (!task) {
    fmt::print(stderr, "error: {}{}\n", escape_for_terminal(workload_where(path, workload)),
               escape_for_terminal(task.error().message));
    return std::nullopt;
  }
  return std::move(task).value();
}

int run_eval(const Args& args) {
  if (args.positional.size() != 1 || !args.value("task")) {
    fmt::print(stderr, "error: usage: gov eval FILE --task TASK.json|JOB.yaml [--state STATE.json|WORKLOADS.yaml]\n");
    return kUsage;
  }
  int status = kOk;
  std::optional<gov::Engine> engine = open_engine(args, args.positional[0], status);
  if (!engine) return status;
  const std::shared_ptr<const ir::Module> module = EngineInternals::module(*engine);

  std::optional<gov::Task> task;
  std::optional<int64_t> created;  // a Kubernetes object's creationTimestamp, ms since 1970
  if (is_yaml_path(*args.value("task"))) {
    task = kubernetes_task(*args.value("task"), *engine, *module, status, created);
    if (!task) return status;
  } else {
    std::optional<trace::JsonValue> task_json = read_json_file(*args.value("task"));
    if (!task_json) return kUsage;
    if (kubernetes_json(*args.value("task"), *task_json)) return kFailed;
    support::Expected<gov::Task> decoded = trace::TaskDecoder(*module).decode(*task_json);
    if (!decoded) {
      fmt::print(stderr, "error: {}: task: {}\n", located(*args.value("task"), decoded.error()),
                 message_after_location(decoded.error()));
      return kFailed;
    }
    task = std::move(decoded).value();
  }
  gov::Time at = 0;
  if (const auto state_path = args.value("state")) {
    std::optional<int64_t> origin;
    std::optional<gov::Time> state_at = load_state_file(*engine, *state_path, status, &origin);
    if (!state_at) return status;
    at = *state_at;
    // Against Workloads, a Kubernetes task queues by its own creationTimestamp, as theirs do: at
    // the state's time it tied with the newest pending Workload and went first by its name. One
    // created after the state is evaluated when it is created.
    if (created && origin) {
      task->created = *created - *origin;
      at = std::max(at, *task->created);
    }
  }
  const std::string id = task->id;
  // A task of the state with the same id would make the submit `invalid` and the explanation
  // the state's task, not this one.
  if (args.value("state") && engine->explain(id)) {
    fmt::print(stderr, "error: `{}`: task id `{}` is already a task of the state `{}`; give the task to evaluate an id of its own\n",
               *args.value("task"), escape_for_terminal(id), *args.value("state"));
    return kFailed;
  }
  const gov::Step step = engine->step(at, {gov::Event::submit(std::move(*task))});
  // The task's decisions, and those of the tasks it preempted: an admission that needed victims
  // says whom it took.
  std::vector<const gov::Decision*> others;
  for (const gov::Decision& d : step.decisions) {
    if (d.task == id || (d.outcome == gov::Outcome::preempted && d.by == id)) {
      fmt::print("{}\n", trace::decision_json(d));
    } else if (d.outcome == gov::Outcome::admitted || d.outcome == gov::Outcome::preempted) {
      others.push_back(&d);
    }
  }
  if (auto explanation = engine->explain(id)) fmt::print("\n{}", escape_lines_for_terminal(explanation_text(*explanation)));
  // The state's own tasks decided at the same instant (a pending one admitted, one preempted for
  // another) change what is in use above: said, not left to be guessed (a what-if analyst's
  // finding, session 43).
  if (!others.empty()) {
    fmt::print("\nthe state's tasks at this instant, before or beside this one:\n");
    for (const gov::Decision* d : others) fmt::print("  {}\n", escape_for_terminal(trace::decision_text(*d)));
  }
  return kOk;
}

}  // namespace

Command eval_command() {
  std::vector<OptionSpec> options = {{"task", "TASK.json|JOB.yaml", "the task, as a trace's `submit` object, or a Kubernetes object"},
                                     {"state", "STATE.json|WORKLOADS.yaml", "the cluster state: {\"at\", \"admitted\": [...], \"pending\": [...]}, or `kubectl get workloads -A -o yaml`"}};
  for (OptionSpec& o : engine_options()) options.push_back(std::move(o));
  return {{"eval", "gov eval FILE --task TASK.json|JOB.yaml [--state STATE.json|WORKLOADS.yaml] [--engine interp]",
           "Decide one task against a cluster state and explain the decision.",
           "Prints the task's decisions (decision-stream lines, with those of the tasks it preempted) and an\n"
           "explanation: what it needs, what its team\n"
           "has guaranteed, in use and borrowable in each instance type tried, what the cohort has idle, and which\n"
           "preemption candidates were considered and why, then the state's own tasks admitted or preempted at the\n"
           "same instant. STATE.json lists admitted tasks ({\"task\": {...},\n"
           "\"submitted_at\": s, \"admitted_at\": s, \"flavor\": \"...\"}) and pending ones ({\"task\": {...},\n"
           "\"submitted_at\": s}); task objects are the `submit` objects of a trace. A `--task` ending in `.yaml` or\n"
           "`.yml` is a Kubernetes object (Job, PyTorchJob, HyperPodPyTorchJob, RayJob, RayCluster, Workload, Pod; see\n"
           "docs/kubernetes.md): team from its `kueue.x-k8s.io/queue-name` label, class from `kueue.x-k8s.io/priority-class`,\n"
           "its pod sets (a PyTorchJob's `master` and `worker`) each assigned an instance type, all or nothing. A `--state` ending in `.yaml` or\n"
           "`.yml` is `kubectl get workloads -A -o yaml`: admitted Workloads hold their flavors, pending ones queue from\n"
           "their creationTimestamp, finished, evicted and inactive ones are skipped with a note.",
           options},
          run_eval};
}

}  // namespace gov::cli
