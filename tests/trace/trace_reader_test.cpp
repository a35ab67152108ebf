// Reading traces against a hand-built workshop policy: the docs/interfaces.md example, and one
// exact error per kind of bad trace.
#include "runtime/trace/trace_reader.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "compiler/ir/module.hpp"

using gov::ir::Resource;
using gov::trace::EventKind;
using gov::trace::TraceEvent;

namespace {

// workshop-g5.gov by hand: 4 × ml.g5.8xlarge, team-a and team-b with 2 instances each.
gov::ir::Module workshop_module() {
  gov::ir::Module module;
  module.cluster = "ml-cluster";
  gov::ir::Flavor g5;
  g5.name = "ml.g5.8xlarge";
  g5.per_instance = {1, 0, 32000, 131072, 1};
  g5.capacity = 4;
  module.flavors.push_back(g5);
  module.classes = {
      {"inference", 90}, {"experimentation", 80}, {"training", 70}, {"fine-tuning", 50}};
  for (const char* name : {"team-a", "team-b"}) {
    gov::ir::Team team;
    team.name = name;
    gov::ir::FlavorQuota quota;
    quota.flavor = 0;
    quota.nominal = {2, 0, 64000, 262144, 2};
    quota.borrowing_limit = {1, 0, 32000, 131072, 1};
    team.quotas.push_back(quota);
    module.teams.push_back(team);
  }
  module.strings = {""};
  return module;
}

// The workshop plus ml.g5.12xlarge and team-c, which has quotas on both types.
gov::ir::Module two_type_module() {
  gov::ir::Module module = workshop_module();
  gov::ir::Flavor g5_12;
  g5_12.name = "ml.g5.12xlarge";
  g5_12.per_instance = {4, 0, 48000, 196608, 1};
  g5_12.capacity = 1;
  module.flavors.push_back(g5_12);
  gov::ir::Team team;
  team.name = "team-c";
  team.quotas.resize(2);
  team.quotas[0].flavor = 0;
  team.quotas[1].flavor = 1;
  module.teams.push_back(team);
  return module;
}

const char* const kInterfacesTrace = R"({
  "events": [
    {"at": 0,  "submit": {"id": "a1", "team": "team-a", "instance_type": "ml.g5.8xlarge",
                          "gpus": 3, "duration": 600}},
    {"at": 5,  "submit": {"id": "b1", "team": "team-b", "instance_type": "ml.g5.8xlarge",
                          "priority": "experimentation", "instances": 2, "labels": {"project": "llm"}}},
    {"at": 90, "finish": "b1"},
    {"at": 95, "cancel": "a1"}
  ]
}
)";

// A trace whose events are `events` (JSON objects, comma-separated).
std::string trace(const std::string& events) {
  return "{\"events\": [" + events + "]}";
}

// A one-event trace submitting at 0 a task with these extra submit members.
std::string submit(const std::string& members) {
  return trace(R"({"at": 0, "submit": {"id": "t1", "team": "team-a", )" + members + "}}");
}

std::string error_of(const std::string& text, const gov::ir::Module& module = workshop_module()) {
  gov::trace::TraceResult result = gov::trace::read_trace(text, module);
  INFO(text);
  REQUIRE_FALSE(result.ok());  // nothing of a bad trace is handed on: an error has no events
  CHECK(result.error().kind == gov::support::ErrorKind::invalid);
  return result.error().message;
}

std::vector<TraceEvent> events_of(const std::string& text,
                                  const gov::ir::Module& module = workshop_module()) {
  gov::trace::TraceResult result = gov::trace::read_trace(text, module);
  INFO(text << "\n-> " << (result.ok() ? "ok" : result.error().message));
  REQUIRE(result.ok());
  return std::move(result).value();
}

gov::Task submitted(const std::string& members) {
  std::vector<TraceEvent> events = events_of(submit(members));
  REQUIRE(events.size() == 1);
  return events[0].task;
}

}  // namespace

TEST_CASE("trace: the docs/interfaces.md example reads against the workshop policy", "[trace]") {
  std::vector<TraceEvent> events = events_of(kInterfacesTrace);
  REQUIRE(events.size() == 4);

  const TraceEvent& a1 = events[0];
  CHECK(a1.at == 0);
  CHECK(a1.kind == EventKind::submit);
  CHECK(a1.id == "a1");
  CHECK(a1.task.id == "a1");
  CHECK(a1.task.team == "team-a");
  CHECK(a1.task.instance_type == "ml.g5.8xlarge");
  CHECK_FALSE(a1.task.priority);
  CHECK_FALSE(a1.task.instances);
  CHECK(a1.task.amounts[gov::ir::index(Resource::gpu)] == 3);
  CHECK_FALSE(a1.task.amounts[gov::ir::index(Resource::vcpu)]);
  CHECK_FALSE(a1.task.pods);
  CHECK(a1.task.duration == 600'000);

  const TraceEvent& b1 = events[1];
  CHECK(b1.at == 5000);
  CHECK(b1.task.priority == "experimentation");
  CHECK(b1.task.instances == 2);
  CHECK(b1.task.labels == std::vector<std::pair<std::string, std::string>>{{"project", "llm"}});
  CHECK_FALSE(b1.task.duration);

  CHECK(events[2].at == 90'000);
  CHECK(events[2].kind == EventKind::finish);
  CHECK(events[2].id == "b1");
  CHECK(events[3].at == 95'000);
  CHECK(events[3].kind == EventKind::cancel);
  CHECK(events[3].id == "a1");
}

TEST_CASE("trace: amounts in base units, exact decimals, pods and the one-type default",
          "[trace]") {
  auto task = submitted(R"("gpus": 2, "vcpus": 0.5, "memory_gib": 1.5, "neuron": 0, "efa": 1)");
  CHECK(task.amounts[gov::ir::index(Resource::gpu)] == 2);
  CHECK(task.amounts[gov::ir::index(Resource::vcpu)] == 500);     // millicores
  CHECK(task.amounts[gov::ir::index(Resource::memory)] == 1536);  // MiB
  CHECK(task.amounts[gov::ir::index(Resource::neuron)] == 0);
  CHECK(task.amounts[gov::ir::index(Resource::efa)] == 1);

  auto pods = submitted(R"("pods": 4, "per_pod": {"gpus": 1, "vcpus": 8})");
  CHECK(pods.pods == 4);
  CHECK(pods.amounts[gov::ir::index(Resource::gpu)] == 1);
  CHECK(pods.amounts[gov::ir::index(Resource::vcpu)] == 8000);

  auto instances = submitted(R"("instances": 1)");  // team-a has one instance type
  CHECK(instances.instances == 1);
  CHECK_FALSE(instances.instance_type);

  std::vector<TraceEvent> decimal =
      events_of(trace(R"({"at": 1.25, "submit": {"id": "x", "team": "team-b", "gpus": 1,
      "duration": 0.001}}, {"at": 1.250, "finish": "x"})"));
  CHECK(decimal[0].at == 1250);
  CHECK(decimal[0].task.duration == 1);
  CHECK(decimal[1].at == 1250);
  CHECK(events_of(trace("")).empty());
}

TEST_CASE("trace: the reader hands out one event at a time", "[trace]") {
  gov::ir::Module module = workshop_module();
  std::string text = kInterfacesTrace;
  gov::trace::TraceReader reader(text, module);
  TraceEvent event;
  std::vector<std::string> ids;
  while (reader.next(event))
    ids.push_back(std::string(gov::trace::event_kind_name(event.kind)) + " " + event.id);
  CHECK_FALSE(reader.error());
  CHECK(ids == std::vector<std::string>{"submit a1", "submit b1", "finish b1", "cancel a1"});
  CHECK(reader.events_read() == 4);
  CHECK_FALSE(reader.next(event));  // stays at the end

  // Events before an error were handed out; the error comes when it is reached.
  std::string bad = trace(
      R"({"at": 0, "submit": {"id": "a", "team": "team-a", "gpus": 1}}, {"at": 1, "finish": "b"})");
  gov::trace::TraceReader streaming(bad, module);
  CHECK(streaming.next(event));
  CHECK_FALSE(streaming.next(event));
  REQUIRE(streaming.error());
  CHECK(streaming.error()->message.starts_with("event 1 (at 1): "));
}

TEST_CASE("trace error: unknown keys anywhere", "[trace]") {
  CHECK(error_of(trace(R"({"at": 0, "sumbit": {}})")) ==
        R"(event 0 (at 0): field "sumbit": unknown key; did you mean "submit"?)");
  CHECK(
      error_of(trace(R"({"at": 0, "when": 1})")) ==
      R"(event 0 (at 0): field "when": unknown key; an event has keys at, submit, finish, cancel)");
  CHECK(error_of(submit(R"("gpu": 1)")) ==
        R"(event 0 (at 0): field "gpu": unknown key; did you mean "gpus"?)");
  CHECK(
      error_of(submit(R"("colour": "red", "gpus": 1)")) ==
      R"(event 0 (at 0): field "colour": unknown key; a submit has keys id, team, priority, instance_type, )"
      R"(instances, gpus, vcpus, memory_gib, neuron, efa, pods, per_pod, labels, duration, partitions, created, pod_sets)");
  CHECK(
      error_of(submit(R"("pods": 2, "per_pod": {"gpus": 1, "instances": 1})")) ==
      R"(event 0 (at 0): field "per_pod.instances": unknown key; "per_pod" has keys gpus, vcpus, memory_gib, neuron, efa, partitions)");
  CHECK(error_of(R"({"event": []})") ==
        R"(field "event": unknown key at the top level; did you mean "events"?)");
  CHECK(error_of(R"({"events": [], "policy": "x"})") ==
        R"(field "policy": unknown key at the top level; a trace has only "events")");
}

TEST_CASE("trace error: unknown team", "[trace]") {
  std::string text = trace(R"({"at": 0, "submit": {"id": "a1", "team": "team-a", "gpus": 1}},
                              {"at": 5, "submit": {"id": "z1", "team": "team-z", "gpus": 1}})");
  gov::trace::TraceResult result = gov::trace::read_trace(text, workshop_module());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message ==
        R"(event 1 (at 5): field "team": unknown team "team-z"; teams are team-a, team-b)");
  REQUIRE(result.error().position);
  CHECK(result.error().position->line == 2);
  CHECK(result.error().position->column == 72);  // the value "team-z"
}

TEST_CASE("trace error: unknown priority class", "[trace]") {
  CHECK(
      error_of(submit(R"("priority": "urgent", "gpus": 1)")) ==
      R"(event 0 (at 0): field "priority": unknown priority class "urgent"; priority classes are inference, )"
      R"(experimentation, training, fine-tuning)");
}

TEST_CASE("trace error: unknown instance type", "[trace]") {
  CHECK(
      error_of(submit(R"("instance_type": "ml.p5.48xlarge", "gpus": 1)")) ==
      R"(event 0 (at 0): field "instance_type": unknown instance type "ml.p5.48xlarge"; the policy's quotas are )"
      R"(for ml.g5.8xlarge)");
  // Another size of a family the quotas name (a planner helper got a list of the catalog's 205
  // types for `ml.p5.96xlarge`).
  CHECK(error_of(submit(R"("instance_type": "ml.g5.96xlarge", "gpus": 1)")) ==
        R"(event 0 (at 0): field "instance_type": unknown instance type "ml.g5.96xlarge"; did you mean "ml.g5.8xlarge"?)");
  // Issue 23, point 12: a typo gets a did-you-mean rather than the list (a catalog has 205 types).
  CHECK(error_of(submit(R"("instance_type": "ml.g5.8xlarg", "gpus": 1)")) ==
        R"(event 0 (at 0): field "instance_type": unknown instance type "ml.g5.8xlarg"; did you mean "ml.g5.8xlarge"?)");
}

TEST_CASE("trace error: negative or non-integer amounts", "[trace]") {
  CHECK(error_of(submit(R"("gpus": -1)")) ==
        R"(event 0 (at 0): field "gpus": expected a non-negative integer, found -1)");
  CHECK(error_of(submit(R"("gpus": 1.5)")) ==
        R"(event 0 (at 0): field "gpus": expected a non-negative integer, found 1.5)");
  CHECK(error_of(submit(R"("neuron": 0.5)")) ==
        R"(event 0 (at 0): field "neuron": expected a non-negative integer, found 0.5)");
  CHECK(error_of(submit(R"("efa": "1")")) ==
        R"(event 0 (at 0): field "efa": expected a non-negative integer, found the string "1")");
  CHECK(error_of(submit(R"("instances": 2.5)")) ==
        R"(event 0 (at 0): field "instances": expected a non-negative integer, found 2.5)");
  CHECK(error_of(submit(R"("pods": 0, "per_pod": {"gpus": 1})")) ==
        R"(event 0 (at 0): field "pods": expected a positive integer, found 0)");
  CHECK(error_of(submit(R"("pods": 2, "per_pod": {"gpus": -2})")) ==
        R"(event 0 (at 0): field "per_pod.gpus": expected a non-negative integer, found -2)");
  CHECK(error_of(submit(R"("vcpus": -1)")) ==
        R"(event 0 (at 0): field "vcpus": expected a non-negative number of vCPUs, found -1)");
  CHECK(error_of(submit(R"("vcpus": 0.0005)")) ==
        R"(event 0 (at 0): field "vcpus": 0.0005 vCPUs is not a whole number of millicores)");
  CHECK(error_of(submit(R"("memory_gib": 0.1)")) ==
        R"(event 0 (at 0): field "memory_gib": 0.1 GiB is not a whole number of MiB)");
  CHECK(error_of(submit(R"("gpus": 1e30)")) ==
        R"(event 0 (at 0): field "gpus": 1e30 is out of range)");
  CHECK(error_of(submit(R"("gpus": 1, "duration": -5)")) ==
        R"(event 0 (at 0): field "duration": expected a non-negative number of seconds, found -5)");
}

TEST_CASE("trace error: instances together with per-resource amounts", "[trace]") {
  CHECK(
      error_of(submit(R"("instances": 1, "gpus": 1)")) ==
      R"(event 0 (at 0): field "gpus": a task requests either whole "instances" or per-resource amounts, not both)");
  CHECK(
      error_of(submit(R"("instances": 1, "pods": 2, "per_pod": {"gpus": 1})")) ==
      R"(event 0 (at 0): field "pods": a task requests either whole "instances" or "pods", not both)");
  CHECK(error_of(submit(R"("gpus": 1, "pods": 2, "per_pod": {"gpus": 1})")) ==
        R"(event 0 (at 0): field "gpus": with "pods", per-resource amounts go inside "per_pod")");
  CHECK(
      error_of(submit(R"("labels": {})")) ==
      R"(event 0 (at 0): field "submit": the task requests nothing; give "instances", amounts (gpus, vcpus, )"
      R"(memory_gib, neuron, efa, partitions) or "pods" with "per_pod")");
}

TEST_CASE("trace error: per_pod without pods, and pods without per_pod", "[trace]") {
  CHECK(error_of(submit(R"("per_pod": {"gpus": 1})")) ==
        R"(event 0 (at 0): field "per_pod": "per_pod" needs "pods", the number of pods)");
  CHECK(error_of(submit(R"("pods": 3)")) ==
        R"(event 0 (at 0): field "pods": "pods" needs "per_pod", the resources of one pod)");
}

TEST_CASE("trace error: instances without instance_type on a team with several types", "[trace]") {
  gov::ir::Module module = two_type_module();
  std::string text =
      trace(R"({"at": 0, "submit": {"id": "c1", "team": "team-c", "instances": 1}})");
  CHECK(
      error_of(text, module) ==
      R"(event 0 (at 0): field "instances": "instances" needs "instance_type": team "team-c" has 2 instance types )"
      R"((ml.g5.8xlarge, ml.g5.12xlarge))");
  events_of(trace(R"({"at": 0, "submit": {"id": "c1", "team": "team-c", "instances": 1,
                                          "instance_type": "ml.g5.12xlarge"}})"),
            module);
}

TEST_CASE("trace error: time going backwards", "[trace]") {
  std::string text = trace(R"({"at": 0, "submit": {"id": "a1", "team": "team-a", "gpus": 1}},
                              {"at": 5, "submit": {"id": "b1", "team": "team-b", "gpus": 1}},
                              {"at": 4, "finish": "a1"})");
  CHECK(error_of(text) ==
        R"(event 2 (at 4): field "at": time goes backwards: 4 is before 5, the time of event 1)");
}

TEST_CASE("trace error: bad times", "[trace]") {
  CHECK(error_of(trace(R"({"at": 1.0005, "finish": "x"})")) ==
        R"(event 0: field "at": 1.0005 is more precise than a millisecond)");
  CHECK(error_of(trace(R"({"at": -1, "finish": "x"})")) ==
        R"(event 0: field "at": expected a non-negative number of seconds, found -1)");
  CHECK(error_of(trace(R"({"at": "0", "finish": "x"})")) ==
        R"(event 0: field "at": expected a number of seconds, found the string "0")");
  CHECK(error_of(trace(R"({"at": 1e300, "finish": "x"})")) ==
        R"(event 0: field "at": 1e300 seconds is out of range (at most 10^12 s, about 31,700 years))");
  CHECK(error_of(trace(R"({"at": 1000000000000.001, "finish": "x"})")) ==
        R"(event 0: field "at": 1000000000000.001 seconds is out of range (at most 10^12 s, about 31,700 years))");
  CHECK(error_of(trace(R"({"finish": "x"})")) ==
        R"(event 0: field "at": missing; every event has a time in seconds)");
  // A duration past the bound would saturate the finish at kForever, before the admission of a
  // late task (a hostile-input helper's finding); the bound itself is a time.
  CHECK(error_of(trace(R"({"at": 0, "submit": {"id": "a1", "team": "team-a", "gpus": 1, "duration": 2e12}})")) ==
        R"(event 0 (at 0): field "duration": 2e12 seconds is out of range (at most 10^12 s, about 31,700 years))");
  CHECK(events_of(trace(R"({"at": 1e12, "submit": {"id": "a1", "team": "team-a", "gpus": 1, "duration": 1e12}},
                          {"at": 1e12, "finish": "a1"})")).size() == 2);
}

TEST_CASE("trace error: duplicate submit ids", "[trace]") {
  std::string text = trace(R"({"at": 0, "submit": {"id": "a1", "team": "team-a", "gpus": 1}},
                              {"at": 5, "submit": {"id": "a1", "team": "team-b", "gpus": 1}})");
  CHECK(error_of(text) ==
        R"(event 1 (at 5): field "id": duplicate task id "a1"; event 0 already submits it)");
}

TEST_CASE("trace error: finishing or cancelling an unknown task", "[trace]") {
  CHECK(error_of(trace(R"({"at": 90, "finish": "zz"})")) ==
        R"(event 0 (at 90): field "finish": unknown task "zz"; no earlier event submits it)");
  CHECK(
      error_of(trace(
          R"({"at": 0, "cancel": "a1"}, {"at": 0, "submit": {"id": "a1", "team": "team-a", "gpus": 1}})")) ==
      R"(event 0 (at 0): field "cancel": unknown task "a1"; no earlier event submits it)");
  std::string twice = trace(R"({"at": 0, "submit": {"id": "a1", "team": "team-a", "gpus": 1}},
                               {"at": 1, "cancel": "a1"}, {"at": 2, "finish": "a1"})");
  CHECK(error_of(twice) ==
        R"(event 2 (at 2): field "finish": task "a1" was already cancelled by event 1)");
  CHECK(error_of(trace(R"({"at": 0, "finish": 7})")) ==
        R"(event 0 (at 0): field "finish": expected a task id, found 7)");
}

TEST_CASE("trace error: labels that are not string to string", "[trace]") {
  CHECK(error_of(submit(R"("gpus": 1, "labels": {"project": 3})")) ==
        R"(event 0 (at 0): field "labels.project": expected a string, found 3)");
  CHECK(error_of(submit(R"("gpus": 1, "labels": ["project"])")) ==
        R"(event 0 (at 0): field "labels": expected an object of string labels, found an array)");
  CHECK(error_of(submit(R"("gpus": 1, "labels": {"a": {"b": "c"}})")) ==
        R"(event 0 (at 0): field "labels.a": expected a string, found an object)");
}

TEST_CASE("trace error: malformed JSON", "[trace]") {
  std::string text = "{\n  \"events\": [\n    {\"at\": 0 \"submit\": {}}\n  ]\n}";
  gov::trace::TraceResult result = gov::trace::read_trace(text, workshop_module());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message == "line 3, column 14: expected ',' or '}' after an object member");
  REQUIRE(result.error().position);
  CHECK(result.error().position->offset == text.find("\"submit\""));
  CHECK(error_of(kInterfacesTrace + std::string("x")) ==
        "line 11, column 1: expected end of input after the JSON value, found 'x'");
  CHECK(error_of(trace(R"({"at": 0, "at": 1, "finish": "a"})")) ==
        "line 1, column 23: duplicate key \"at\" (first at line 1, column 14)");
  CHECK(error_of("") == "line 1, column 1: expected a value, found end of input");
  CHECK(error_of("{\"events\": [") == "line 1, column 13: expected a value, found end of input");
}

TEST_CASE("trace error: the shape of the document and of events", "[trace]") {
  CHECK(error_of("[]") ==
        R"(expected the trace to be an object with an "events" array, found an array)");
  CHECK(error_of("{}") == R"(the trace has no "events" array)");
  CHECK(error_of(R"({"events": {}})") ==
        R"(field "events": expected an array of events, found an object)");
  CHECK(error_of(trace("3")) == "event 0: expected an event object, found 3");
  CHECK(error_of(trace(R"({"at": 0})")) ==
        R"(event 0 (at 0): expected one of "submit", "finish" or "cancel")");
  CHECK(
      error_of(trace(R"({"at": 0, "finish": "a", "cancel": "a"})")) ==
      R"(event 0 (at 0): field "cancel": an event has one action, and this one already has "finish")");
  CHECK(
      error_of(trace(R"({"at": 0, "submit": "a1"})")) ==
      R"(event 0 (at 0): field "submit": expected an object describing the task, found the string "a1")");
  CHECK(error_of(trace(R"({"at": 0, "submit": {"team": "team-a", "gpus": 1}})")) ==
        R"(event 0 (at 0): field "id": missing; a submit needs "id" and "team")");
  CHECK(error_of(trace(R"({"at": 0, "submit": {"id": "a", "gpus": 1}})")) ==
        R"(event 0 (at 0): field "team": missing; a submit needs "id" and "team")");
  CHECK(error_of(trace(R"({"at": 0, "submit": {"id": "", "team": "team-a", "gpus": 1}})")) ==
        R"(event 0 (at 0): field "id": expected a task id, found the string "")");
  CHECK(error_of(trace(R"({"at": 0, "submit": {"id": "a", "team": null, "gpus": 1}})")) ==
        R"(event 0 (at 0): field "team": expected a string, found null)");
}

TEST_CASE("trace error: user text in messages stays on one line and short", "[trace]") {
  std::string message = error_of(submit("\"team-x\": 1"));
  CHECK(message == R"(event 0 (at 0): field "team-x": unknown key; did you mean "team"?)");
  std::string text = trace(R"({"at": 0, "finish": ")" + std::string(100, 'x') + R"(\n"})");
  CHECK(error_of(text) == R"(event 0 (at 0): field "finish": unknown task ")" +
                              std::string(64, 'x') + R"("...; no earlier event submits it)");
}

TEST_CASE("trace: random edits of a good trace never crash and give one-line errors", "[trace]") {
  gov::ir::Module module = workshop_module();
  const std::string base = kInterfacesTrace;
  const std::string alphabet = "{}[]\",:-.0123456789eE\\u \n\xFF\xC3tnf";
  std::mt19937 rng(20240611);
  size_t errors = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = base;
    for (unsigned edits = 1 + rng() % 3; edits > 0 && !text.empty(); --edits) {
      size_t at = rng() % text.size();
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.erase(at, 1);
          break;
        default:
          text.insert(at, 1, c);
          break;
      }
    }
    gov::trace::TraceResult result = gov::trace::read_trace(text, module);
    if (result.ok()) continue;
    ++errors;
    const std::string& message = result.error().message;
    INFO(text << "\n-> " << message);
    REQUIRE_FALSE(message.empty());
    REQUIRE(message.find('\n') == std::string::npos);
    REQUIRE(result.error().position);
    REQUIRE(result.error().position->offset <= text.size());
  }
  CHECK(errors > 1000);  // most edits break the trace
}

// ------------------------------------------------------------------ cluster states (gov eval --state)

namespace {

/// The state, or nullopt with `error` set to the message and `where` to the error's position.
std::optional<gov::ClusterState> state_of(std::string_view text, std::string& error,
                                          gov::support::TextPosition* where = nullptr) {
  static const gov::ir::Module module = workshop_module();
  gov::support::Expected<gov::trace::JsonValue> parsed = gov::trace::parse_json(text);
  REQUIRE(parsed.ok());
  gov::support::Expected<gov::ClusterState> state = gov::trace::read_cluster_state(*parsed, module);
  if (state) return std::move(state).value();
  CHECK(state.error().kind == gov::support::ErrorKind::invalid);
  error = state.error().message;
  REQUIRE(state.error().position);  // every state error points into the document
  if (where != nullptr) *where = *state.error().position;
  return std::nullopt;
}

}  // namespace

TEST_CASE("a cluster state reads admitted and pending tasks with their times", "[trace][state]") {
  std::string error;
  const auto state = state_of(R"({"at": 100, "admitted": [{"task": {"id": "a1", "team": "team-a", "gpus": 3},
      "submitted_at": 10, "admitted_at": 20.5, "flavor": "ml.g5.8xlarge"}],
      "pending": [{"task": {"id": "a2", "team": "team-a", "gpus": 1}, "submitted_at": 30}]})",
                              error);
  INFO(error);
  REQUIRE(state);
  CHECK(state->at == 100'000);
  REQUIRE(state->admitted.size() == 1);
  CHECK(state->admitted[0].task.id == "a1");
  CHECK(state->admitted[0].submitted_at == 10'000);
  CHECK(state->admitted[0].admitted_at == 20'500);
  CHECK(state->admitted[0].flavor == "ml.g5.8xlarge");
  REQUIRE(state->pending.size() == 1);
  CHECK(state->pending[0].task.id == "a2");
  CHECK(state->pending[0].submitted_at == 30'000);
}

// Issue 23, point 2: a typo used to read as an empty state, and the answer was wrong.
TEST_CASE("a cluster state is strict at every level, with a did-you-mean", "[trace][state]") {
  std::string error;
  CHECK_FALSE(state_of(R"({"admited": []})", error));
  CHECK(error == R"(unknown key "admited"; did you mean "admitted"?)");
  CHECK_FALSE(state_of(R"({"pending": [{"task": {"id": "p", "team": "team-a", "gpus": 1}, "submited_at": 3}]})", error));
  CHECK(error == R"(pending[0]: unknown key "submited_at"; did you mean "submitted_at"?)");
  gov::support::TextPosition where;
  CHECK_FALSE(state_of(R"({"admitted": [{"task": {"id": "a", "team": "team-a", "gpu": 1}}]})", error, &where));
  CHECK(error == R"(admitted[0]: field "gpu": unknown key; did you mean "gpus"?)");
  CHECK(where.column == 54);  // the key "gpu" inside the task
  CHECK_FALSE(state_of(R"({"pending": [{"submitted_at": 3}]})", error));
  CHECK(error == "pending[0]: field \"task\": missing; every entry needs a `task`");
  CHECK_FALSE(state_of(R"({"at": -1})", error));
  CHECK(error.find("field \"at\": expected a non-negative number of seconds") != std::string::npos);
  CHECK_FALSE(state_of(R"({"admitted": {}})", error));
  CHECK(error == R"(field "admitted": expected an array of entries, found an object)");
  CHECK_FALSE(state_of(R"([])", error));
  CHECK(error.rfind("the state must be an object", 0) == 0);
  // Ids are unique across both lists, as in a trace.
  CHECK_FALSE(state_of(R"({"admitted": [{"task": {"id": "x", "team": "team-a", "gpus": 1}}],
                           "pending": [{"task": {"id": "x", "team": "team-b", "gpus": 1}}]})",
                       error));
  CHECK(error == "pending[0]: field \"id\": duplicate task id \"x\": it is given twice");
  // An admitted entry the policy cannot place was dropped by the engine with a warning only, and
  // the answer changed (a what-if analyst's finding, session 43).
  CHECK_FALSE(state_of(R"({"admitted": [{"task": {"id": "a", "team": "team-a", "gpus": 1}, "flavor": "ml.g5.8xlarg"}]})",
                       error, &where));
  CHECK(error == R"(admitted[0]: field "flavor": unknown instance type "ml.g5.8xlarg"; did you mean "ml.g5.8xlarge"?)");
  CHECK(where.column == 76);  // the flavor's value
  CHECK(state_of(R"({"admitted": [{"task": {"id": "a", "team": "team-a", "gpus": 1, "instance_type": "ml.g5.8xlarge"},
                     "flavor": "ml.g5.8xlarge"}]})",
                 error));  // the task's instance type and its flavor agree
  CHECK_FALSE(state_of(R"({"admitted": [{"task": {"id": "a", "team": "team-a", "gpus": 1}, "submitted_at": 50,
                           "admitted_at": 40}]})",
                       error));
  CHECK(error == R"(admitted[0]: field "admitted_at": 40 is before the task's submitted_at 50: a task is admitted )"
                 R"(after it is submitted)");
}
