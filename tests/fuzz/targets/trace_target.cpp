// Fuzz target `trace`: the trace reader on arbitrary bytes, then the engine on every trace
// that reads, as `gov simulate` runs it. Properties: no crash, hang or exhausted memory; the
// streaming reader and read_trace agree, and so do the scanned and DOM decodings of events; on each of three policies (fair sharing, classical
// preemption, Kueue's controls) the engine's self-check finds no broken invariant and decides exactly as the
// normal engine does; every decision renders as JSON and text.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/lower/lower.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/trace/decision_writer.hpp"
#include "runtime/trace/trace_reader.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

// Team names, classes, types and labels the seed traces use; make_policy fills the `{...}`.
constexpr const char* kPolicy = R"gov(
catalog fuzz {
  instance ml.g5.8xlarge   { accelerator = nvidia-a10g, gpus = 1, accelerator-memory = 22888 MiB, vcpus = 32, memory = 128 GiB, efa = 1 }
  instance ml.g5.12xlarge  { accelerator = nvidia-a10g, gpus = 4, accelerator-memory = 22888 MiB, vcpus = 48, memory = 192 GiB, efa = 1 }
  instance ml.trn1.2xlarge { accelerator = trainium, neuron = 1, accelerator-memory = 32 GiB, vcpus = 8, memory = 32 GiB }
  instance ml.c5.2xlarge   { vcpus = 8, memory = 16 GiB }
}

cluster fuzz {
  catalog  = fuzz
  capacity = { ml.g5.8xlarge: 6, ml.g5.12xlarge: 2, ml.trn1.2xlarge: 2, ml.c5.2xlarge: 4 }
}

policy {
  task-prioritization = task-ranking
  idle-compute        = {idle}
  priority inference  = 90
  priority training   = 70
  priority batch      = 10
  default-priority    = training
}

team team-a {
  quota ml.g5.8xlarge  { instances = 2 }
  quota ml.g5.12xlarge { instances = 1, borrow-limit = { gpus = 2 } }
  quota ml.c5.2xlarge  { vcpus = 8 }
  borrow-limit       = 100%
  fair-share-weight  = 2
  {controls-a}
}

team team-b {
  quota ml.g5.8xlarge   { gpus = 2{lending-b} }
  quota ml.trn1.2xlarge { instances = 1 }
  sharing            = lend
  preempt-team-tasks = never
  fair-share-weight  = 1
  {controls-b}
}

team team-c {
  quota ml.g5.8xlarge { instances = 1 }
  sharing            = dont-lend
  preempt-team-tasks = lower-priority
}

rule too-big {
  when task.gpus > 6
  deny "at most 6 GPUs, {task.gpus} requested"
}

rule needs-project {
  when task.team == team-c and not ("project" in task.labels)
  deny "team-c tasks need a project"
}

rule borrowing {
  when team.used.gpus + task.gpus > team.nominal.gpus
  warn "{task.id} of {task.team} borrows ({task.labels["project"]})"
}
)gov";

struct Policy {
  std::unique_ptr<gov::check::Program> program;
  gov::ir::Module module;
};

/// Replaces the one `{key}` of `text` by `value`.
void fill(std::string& text, std::string_view key, std::string_view value) {
  text.replace(text.find(key), key.size(), value);
}

/// The policy with idle compute `idle`, and Kueue's controls (lending limits, reclaim and
/// borrow within the cohort, strict FIFO, flavor fungibility) when `controls`.
Policy make_policy(std::string_view idle, bool controls) {
  std::string text = kPolicy;
  fill(text, "{idle}", idle);
  fill(text, "{controls-a}",
       controls ? "reclaim-within-cohort = lower-priority\n"
                  "  borrow-within-cohort  = { policy = lower-priority, max-priority-threshold = training }\n"
                  "  when-can-borrow       = try-next-flavor\n"
                  "  flavor-preference     = preemption-over-borrowing"
                : "");
  fill(text, "{lending-b}", controls ? ", lending-limit = { gpus = 1 }" : "");
  fill(text, "{controls-b}", controls ? "queueing = strict-fifo\n  when-can-preempt = preempt" : "");
  gov::driver::Result loaded = gov::driver::load(gov::driver::Source::text("fuzz.gov", std::move(text)),
                                                 gov::driver::Request::up_to(gov::driver::Stage::lower));
  if (!loaded.ok()) gov::fuzz::fail("the trace target's policy does not check", loaded.error->message);
  Policy policy;
  policy.program = std::make_unique<gov::check::Program>(std::move(loaded.policy->checked.program));
  policy.module = std::move(loaded.policy->module);
  return policy;
}

const std::vector<Policy>& policies() {
  static const std::vector<Policy> all = [] {
    std::vector<Policy> made;
    made.push_back(make_policy("fair-share", /*controls=*/false));
    made.push_back(make_policy("fcfs", /*controls=*/false));
    made.push_back(make_policy("fcfs", /*controls=*/true));
    return made;
  }();
  return all;
}

gov::Event to_event(const gov::trace::TraceEvent& e) {
  switch (e.kind) {
    case gov::trace::EventKind::submit: return gov::Event::submit(e.task);
    case gov::trace::EventKind::finish: return gov::Event::finish(e.id);
    case gov::trace::EventKind::cancel: return gov::Event::cancel(e.id);
  }
  return gov::Event::finish(e.id);
}

/// `gov simulate`'s loop: events at one time apply together, then tasks with a duration
/// finish after the last event. Returns every decision as JSON and text lines.
std::string simulate(const Policy& policy, const std::vector<gov::trace::TraceEvent>& events, bool self_check,
                     std::vector<std::string>& failures) {
  const gov::interp::Interpreter interpreter(policy.module);
  gov::engine::EngineOptions options;
  options.self_check = self_check;
  gov::engine::Engine engine(policy.module, interpreter, options);
  std::vector<gov::Decision> decisions;
  std::vector<gov::Event> batch;
  for (size_t i = 0; i < events.size();) {
    const gov::Time at = events[i].at;
    batch.clear();
    for (; i < events.size() && events[i].at == at; ++i) batch.push_back(to_event(events[i]));
    engine.step(at, batch, decisions);
  }
  engine.step(std::numeric_limits<gov::Time>::max() / 4, {}, decisions);
  std::string out;
  for (const gov::Decision& d : decisions) {
    gov::trace::append_decision_json(out, d);
    out += '\n';
    out += gov::trace::decision_text(d);
    out += '\n';
  }
  (void)engine.snapshot();
  failures = engine.self_check_failures();
  return out;
}

/// Reads `text` with the streaming reader and checks it agrees with read_trace.
void check_streaming(std::string_view text, const Policy& policy, const gov::trace::TraceResult& whole) {
  gov::trace::TraceReader reader(text, policy.module);
  gov::trace::TraceEvent event;
  size_t count = 0;
  while (reader.next(event)) ++count;
  gov::fuzz::require(reader.error().has_value() == !whole.ok(), "TraceReader and read_trace disagree on an error");
  if (whole.ok()) gov::fuzz::require(count == whole->size(), "TraceReader and read_trace read different counts");
  if (!whole.ok()) {
    gov::fuzz::require(reader.error()->message == whole.error().message, "TraceReader and read_trace report different errors",
                       reader.error()->message + "\n" + whole.error().message);
  }
}

/// Whether two readings hold the same events, field by field.
bool same_events(const std::vector<gov::trace::TraceEvent>& a, const std::vector<gov::trace::TraceEvent>& b) {
  const auto same_task = [](const gov::Task& x, const gov::Task& y) {
    bool same = x.id == y.id && x.team == y.team && x.priority == y.priority && x.instance_type == y.instance_type &&
                x.instances == y.instances && x.amounts == y.amounts && x.pods == y.pods && x.partitions == y.partitions &&
                x.labels == y.labels && x.duration == y.duration && x.created == y.created &&
                x.pod_sets.size() == y.pod_sets.size();
    for (size_t i = 0; same && i < x.pod_sets.size(); ++i) same = x.pod_sets[i].name == y.pod_sets[i].name;
    return same;
  };
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].at != b[i].at || a[i].kind != b[i].kind || a[i].id != b[i].id || !same_task(a[i].task, b[i].task))
      return false;
  }
  return true;
}

/// The fast path (events of the common shape scanned from the text) against the DOM path alone.
void check_decodings(std::string_view text, const Policy& policy, const gov::trace::TraceResult& scanned) {
  const gov::trace::TraceResult dom =
      gov::trace::read_trace(text, policy.module, {}, gov::trace::EventDecoding::dom_only);
  gov::fuzz::require(dom.ok() == scanned.ok(), "the scanned and the DOM decodings disagree on an error");
  if (!dom.ok()) {
    const auto& a = dom.error().position;
    const auto& b = scanned.error().position;
    const bool same_place = a.has_value() == b.has_value() &&
                            (!a || (a->offset == b->offset && a->line == b->line && a->column == b->column));
    gov::fuzz::require(dom.error().message == scanned.error().message && same_place,
                       "the scanned and the DOM decodings report different errors",
                       scanned.error().message + "\n" + dom.error().message);
    return;
  }
  gov::fuzz::require(same_events(*dom, *scanned), "the scanned and the DOM decodings read different events");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const Policy& policy : policies()) {
    const gov::trace::TraceResult read = gov::trace::read_trace(text, policy.module);
    check_streaming(text, policy, read);
    check_decodings(text, policy, read);
    if (!read.ok()) {
      gov::fuzz::require(!read.error().message.empty(), "a trace error without a message");
      continue;
    }
    std::vector<std::string> failures;
    const std::string plain = simulate(policy, *read, /*self_check=*/false, failures);
    const std::string checked = simulate(policy, *read, /*self_check=*/true, failures);
    if (!failures.empty()) gov::fuzz::fail("the engine's self-check found a broken invariant", fmt::format("{}", fmt::join(failures, "\n")));
    gov::fuzz::require(plain == checked, "the self-checking engine decides differently",
                       "plain:\n" + plain + "--- self-checked:\n" + checked);
  }
  return 0;
}
