// The trace reader's fast path (runtime/trace/event_scanner.hpp): what the scanner takes and what it
// leaves to the DOM path, and the two paths reading random traces, valid and broken, into the same
// events and the same errors.
#include "runtime/trace/event_scanner.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "compiler/ir/module.hpp"
#include "runtime/trace/trace_reader.hpp"

using gov::trace::EventDecoding;
using gov::trace::EventKind;
using gov::trace::ScannedEvent;
using gov::trace::TraceEvent;

namespace {

// Two instance types; team-a and team-b have one quota each, team-c both (so `instances` without
// `instance_type` is an error for team-c only).
gov::ir::Module scanner_module() {
  gov::ir::Module module;
  for (const char* name : {"ml.g5.8xlarge", "ml.p5.48xlarge"}) {
    gov::ir::Flavor flavor;
    flavor.name = name;
    flavor.per_instance = {8, 0, 192000, 2097152, 32};
    flavor.capacity = 4;
    module.flavors.push_back(flavor);
  }
  module.classes = {{"inference", 90}, {"training", 70}};
  for (const char* name : {"team-a", "team-b", "team-c"}) {
    gov::ir::Team team;
    team.name = name;
    team.quotas.resize(1);
    module.teams.push_back(team);
  }
  module.teams[2].quotas.resize(2);
  module.teams[2].quotas[1].flavor = 1;
  module.strings = {""};
  return module;
}

template <typename T>
std::string or_none(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "-";
}

// Every field of an event, so that two readings compare as strings.
std::string describe(const TraceEvent& e) {
  const gov::Task& t = e.task;
  std::string out = fmt::format("{} {} {} | {} {} {} {} {} {}", e.at, gov::trace::event_kind_name(e.kind), e.id, t.id,
                                t.team, or_none(t.priority), or_none(t.instance_type), or_none(t.instances),
                                or_none(t.pods));
  for (const auto& amount : t.amounts) out += " " + or_none(amount);
  out += fmt::format(" d={} c={}", or_none(t.duration), or_none(t.created));
  for (const auto& [key, value] : t.labels) out += fmt::format(" [{}={}]", key, value);
  for (const auto& [profile, count] : t.partitions) out += fmt::format(" <{}:{}>", profile, count);
  for (const gov::PodSet& pod_set : t.pod_sets) out += fmt::format(" pod-set {}", pod_set.name);
  return out;
}

// A whole reading: each event described, then the error with its position, if any.
std::string read_all(std::string_view text, const gov::ir::Module& module, EventDecoding decoding,
                     const gov::trace::JsonLimits& limits = {}) {
  gov::trace::TraceReader reader(text, module, limits);
  reader.set_decoding(decoding);
  std::string out;
  TraceEvent event;
  while (reader.next(event)) out += describe(event) + "\n";
  if (const auto& error = reader.error()) {
    out += fmt::format("error at {}:{} (offset {}): {}\n", error->position ? error->position->line : 0,
                       error->position ? error->position->column : 0, error->position ? error->position->offset : 0,
                       error->message);
  }
  out += fmt::format("{} events, {} bytes\n", reader.events_read(), reader.bytes_read());
  return out;
}

bool scans(std::string_view event) {
  ScannedEvent scanned;
  return gov::trace::scan_common_event(event, scanned);
}

// Random events of the common shape; one in `wild_` has one thing wrong or unusual in it (an
// error, an escape, a line break, a field only the DOM path reads), and one trace in ten a
// random byte changed.
class EventMaker {
 public:
  explicit EventMaker(uint32_t seed) : random_(seed) {}

  std::string trace(size_t events) {
    std::string out = pick({"{\"events\":[", "{\"events\": [\n  ", "{ \"events\" : [ "});
    for (size_t i = 0; i < events; ++i) {
      if (i > 0) out += pick({",", ",\n  ", " , "});
      wild_ = chance(6);
      site_ = 0;
      odd_site_ = below(14);
      out += event();
    }
    out += chance(20) ? pick({"]} x", "]", "]}}"}) : pick({"]}", "\n]}\n"});
    if (chance(10)) mutate(out);
    return out;
  }

 private:
  // `usual`, except at the one place (of the event's calls) that a wild event picks for `odd`.
  std::string either(const std::string& usual, std::initializer_list<const char*> odd) {
    return odd_here() ? pick(odd) : usual;
  }
  bool odd_here() { return wild_ && site_++ == odd_site_; }

  std::string event() {
    at_ += static_cast<int>(below(3));
    const std::string at = either(fmt::format("{}{}", at_, pick({"", ".5", ".250", ".001"})),
                                  {"-1", "0.0001", "1e3", "01", "\"5\"", "1.5e-1", "-0", "1E400", "99999999999999999999"});
    std::string body;
    if (!ids_.empty() && chance(3)) {
      const std::string id = either(ids_[below(ids_.size())], {"nope", ""});
      body = fmt::format("\"{}\":\"{}\"", either(pick({"finish", "cancel"}), {"finsh", "submit"}), id);
    } else {
      body = "\"submit\":" + submit();
    }
    std::vector<std::string> members = {"\"at\":" + at, body};
    if (odd_here()) members.push_back(pick({"\"at\":1", "\"finish\":\"t1\"", "\"note\":1"}));
    if (odd_here()) members.erase(members.begin() + static_cast<long>(below(members.size())));
    if (chance(5)) std::swap(members[0], members.back());
    return "{" + join(members) + "}";
  }

  std::string submit() {
    std::vector<std::string> members;
    const std::string id = either(fmt::format("t{}", next_id_++), {"", "t\\u0031", "t\xc3\xa9", "t2"});
    ids_.push_back(id);
    if (!(odd_here())) members.push_back(fmt::format("\"id\":\"{}\"", id));
    const std::string team = pick({"team-a", "team-b", "team-c"});
    if (!(odd_here())) members.push_back(fmt::format("\"team\":\"{}\"", either(team, {"team-z", "", "team-\\u0061"})));
    if (chance(2)) members.push_back(fmt::format("\"priority\":\"{}\"", either(pick({"inference", "training"}), {"batch", ""})));
    const bool typed = chance(2) || team == "team-c";
    if (typed)
      members.push_back(fmt::format("\"instance_type\":\"{}\"",
                                    either(pick({"ml.g5.8xlarge", "ml.p5.48xlarge"}), {"ml.g5.8xlarg", ""})));
    switch (below(3)) {
      case 0:
        members.push_back("\"instances\":" + count());
        break;
      case 1:
        members.push_back(fmt::format("\"gpus\":{}", amount()));
        for (const char* key : {"vcpus", "memory_gib", "neuron", "efa"}) {
          if (chance(2)) members.push_back(fmt::format("\"{}\":{}", key, amount()));
        }
        break;
      default: {
        members.push_back("\"pods\":" + either(pick({"1", "2", "8"}), {"0", "-1", "1.5", "00"}));
        std::vector<std::string> per_pod = {fmt::format("\"gpus\":{}", amount())};
        for (const char* key : {"vcpus", "memory_gib"}) {
          if (chance(2)) per_pod.push_back(fmt::format("\"{}\":{}", key, amount()));
        }
        if (odd_here()) per_pod.push_back(pick({"\"partitions\":{\"mig-1g.10gb\":1}", "\"gpus\":2", "\"pods\":1"}));
        members.push_back("\"per_pod\":{" + join(per_pod) + "}");
        break;
      }
    }
    if (odd_here())
      members.push_back(pick({"\"pod_sets\":[{\"name\":\"w\",\"instances\":1}]", "\"partitions\":{\"mig-1g.10gb\":2}",
                              "\"per_pod\":{\"gpus\":1}", "\"instances\":1", "\"pods\":2", "\"gpus\":1",
                              "\"created\":0", "\"created\":-5", "\"gpu\":1", "\"id\":\"dup\"", "\"team\":\"team-a\""}));
    if (chance(2)) {
      std::vector<std::string> labels;
      for (const char* key : {"project", "tier", "cost-center"}) {
        if (chance(2)) labels.push_back(fmt::format("\"{}\":{}", key, either(pick({"\"llm\"", "\"\"", "\"vision\""}), {"\"a\\nb\"", "1", "\"caf\xc3\xa9\""})));
      }
      if (odd_here()) labels.push_back(pick({"\"project\":\"x\"", "\"\":\"empty key\"", "\"k\\u0041\":\"v\""}));
      members.push_back("\"labels\":{" + join(labels) + "}");
    }
    if (chance(3)) members.push_back("\"duration\":" + either(pick({"600", "0.5", "7e2"}), {"-3", "1.0001", "\"6\""}));
    for (size_t i = members.size(); i > 1; --i) std::swap(members[i - 1], members[below(i)]);
    return "{" + join(members) + "}";
  }

  std::string count() { return either(pick({"1", "2", "0", "1.0", "3e1"}), {"-1", "1.5", "00", "9223372036854775808", "true"}); }
  std::string amount() {
    return either(pick({"1", "4", "0", "0.5", "1e2", "2.25", "-0"}), {"0.0005", "-2", "1.001", "12345678901234567890", "true", "1."});
  }

  // One random change to the text: a byte replaced, dropped or doubled, or a line break put in.
  void mutate(std::string& text) {
    const size_t at = below(text.size());
    switch (below(4)) {
      case 0: text[at] = pick({"\"", "{", "}", ",", ":", "\\", "0", " ", "\t"})[0]; break;
      case 1: text.erase(at, 1); break;
      case 2: text.insert(at, 1, text[at]); break;
      default: text.insert(at, "\n"); break;
    }
  }

  std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : pick({",", ", ", " ,"})) + parts[i];
    return out;
  }
  std::string pick(std::initializer_list<const char*> options) {
    return *(options.begin() + static_cast<long>(below(options.size())));
  }
  size_t below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }
  bool chance(size_t one_in) { return below(one_in) == 0; }

  std::mt19937 random_;
  bool wild_ = false;
  size_t site_ = 0;      // calls of either() in this event so far
  size_t odd_site_ = 0;  // the one that gives something odd, if the event is wild
  int at_ = 0;
  size_t next_id_ = 2;
  std::vector<std::string> ids_;
};

}  // namespace

TEST_CASE("a common submit is scanned field by field", "[trace][scanner]") {
  const std::string event =
      R"({"at":2.982,"submit":{"id":"t1","team":"team-0003","instance_type":"ml.p4d.24xlarge","priority":"training",)"
      R"("gpus":4,"vcpus":24,"memory_gib":432,"labels":{"project":"search","cost-center":""},"duration":6089}},)";
  ScannedEvent scanned;
  REQUIRE(gov::trace::scan_common_event(event, scanned));
  CHECK(scanned.length == event.size() - 1);  // up to the '}', not the ',' after it
  CHECK(scanned.depth == 3);
  CHECK(scanned.at == "2.982");
  CHECK(scanned.kind == EventKind::submit);
  CHECK(scanned.id == "t1");
  CHECK(scanned.team == "team-0003");
  CHECK(scanned.instance_type == "ml.p4d.24xlarge");
  CHECK(scanned.priority == "training");
  CHECK(scanned.amounts[gov::ir::index(gov::ir::Resource::gpu)] == "4");
  CHECK(scanned.amounts[gov::ir::index(gov::ir::Resource::vcpu)] == "24");
  CHECK(scanned.amounts[gov::ir::index(gov::ir::Resource::memory)] == "432");
  CHECK(scanned.amounts[gov::ir::index(gov::ir::Resource::neuron)].empty());
  CHECK(scanned.label_count == 2);
  CHECK(scanned.labels[1].first == "cost-center");
  CHECK(scanned.labels[1].second.empty());
  CHECK(scanned.duration == "6089");
  CHECK_FALSE(scanned.per_pod);

  REQUIRE(gov::trace::scan_common_event(R"( { "finish" : "t1" , "at" : 7 } )", scanned));
  CHECK(scanned.kind == EventKind::finish);
  CHECK(scanned.id == "t1");
  CHECK(scanned.depth == 1);
}

TEST_CASE("the scanner leaves every other shape to the DOM path", "[trace][scanner]") {
  const char* const kLeft[] = {
      R"({"at":1,"submit":{"id":"t1","team":"a","gpus":1,"created":0}})",               // created
      R"({"at":1,"submit":{"id":"t1","team":"a","pod_sets":[{"name":"w"}]}})",          // pod sets
      R"({"at":1,"submit":{"id":"t1","team":"a","partitions":{"mig-1g.10gb":1}}})",     // partitions
      R"({"at":1,"submit":{"id":"t\u0031","team":"a","gpus":1}})",                      // an escape
      "{\"at\":1,\"submit\":{\"id\":\"t\xc3\xa9\",\"team\":\"a\",\"gpus\":1}}",         // non-ASCII
      R"({"at":1,"submit":{"id":"task-0000\u0031","team":"a","gpus":1}})",             // an escape past 8 bytes
      "{\"at\":1,\"submit\":{\"id\":\"task-000000-\xc3\xa9\",\"team\":\"a\",\"gpus\":1}}",  // non-ASCII past 8
      "{\"at\":1,\"submit\":{\"id\":\"task-0000000\t\",\"team\":\"a\",\"gpus\":1}}",   // a control past 8
      "{\"at\":1,\n\"finish\":\"t1\"}",                                                 // a line break
      R"({"at":1,"finish":"t1","at":2})",                                               // a key twice
      R"({"at":1,"submit":{"id":"t1","team":"a","gpus":1,"gpus":2}})",                  // an amount twice
      R"({"at":1,"submit":{"id":"t1","team":"a","labels":{"x":"1","x":"2"}}})",         // a label twice
      R"({"at":01,"finish":"t1"})",                                                     // a leading zero
      R"({"at":1,"finish":""})",                                                        // an empty id
      R"({"at":1,"finish":"t1","cancel":"t1"})",                                        // two actions
      R"({"finish":"t1"})",                                                             // no time
      R"({"at":1,"submit":{"id":"t1","team":"a","labels":{"x":1}}})",                   // a number label
      R"({"at":1,"submit":{"id":"t1","team":"a","gpus":"1"}})",                         // a string amount
      R"({"at":1,"submit":{"id":"t1","team":"a","gpu":1}})",                            // an unknown key
      R"({"at":1,"submit":{}})",                                                        // an empty submit
      R"({"at":1,"finish":"t1")",                                                       // cut short
  };
  for (const char* event : kLeft) {
    INFO(event);
    CHECK_FALSE(scans(event));
  }
}

TEST_CASE("the scanner and the DOM path read random traces into the same events and errors", "[trace][scanner]") {
  const gov::ir::Module module = scanner_module();
  gov::trace::JsonLimits tight;  // where the fast path must also respect the reader's limits
  tight.max_depth = 4;
  tight.max_value_bytes = 120;
  size_t traces_read = 0;
  size_t events_read = 0;
  size_t fast_events = 0;
  for (uint32_t seed = 1; seed <= 3000; ++seed) {
    EventMaker maker(seed);
    const std::string text = maker.trace(1 + seed % 12);
    const std::string dom = read_all(text, module, EventDecoding::dom_only);
    const std::string scanned = read_all(text, module, EventDecoding::scan_common);
    INFO("seed " << seed << "\n" << text);
    REQUIRE(scanned == dom);
    if (seed % 5 == 0) REQUIRE(read_all(text, module, EventDecoding::scan_common, tight) ==
                               read_all(text, module, EventDecoding::dom_only, tight));
    gov::trace::TraceReader reader(text, module);
    TraceEvent event;
    while (reader.next(event)) ++events_read;
    if (!reader.error()) ++traces_read;
  }
  // The fast path must be the one taken: count the events that a scan takes whole (and then
  // decodes), against all the events read.
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    EventMaker maker(seed);
    const std::string text = maker.trace(1 + seed % 12);
    gov::trace::TraceReader reader(text, module);
    TraceEvent event;
    size_t offset = text.find('[') + 1;
    while (reader.next(event)) {
      while (offset < text.size() && (text[offset] == ' ' || text[offset] == ',' || text[offset] == '\n')) ++offset;
      if (scans(std::string_view(text).substr(offset))) ++fast_events;
      offset = reader.bytes_read();
    }
  }
  INFO(traces_read << " whole traces, " << events_read << " events read, " << fast_events << " scanned");
  WARN(traces_read << " whole traces, " << events_read << " events read, " << fast_events << " scanned");
  CHECK(traces_read > 100);
  CHECK(events_read > 2000);
  CHECK(fast_events > 100);
}

TEST_CASE("a scanned trace reads the generator's common events exactly as the DOM path does", "[trace][scanner]") {
  const gov::ir::Module module = scanner_module();
  std::string text = "{\"events\": [\n";
  for (int i = 0; i < 200; ++i) {
    if (i > 0) text += ",\n";
    text += fmt::format(
        R"(    {{"at":{}.{:03},"submit":{{"id":"t{}","team":"team-{}","instance_type":"ml.g5.8xlarge","priority":"training",)"
        R"("gpus":{},"vcpus":{}.5,"memory_gib":{},"labels":{{"project":"p{}","tier":"batch"}},"duration":{}}}}})",
        i, i * 7 % 1000, i, "abc"[i % 3], i % 8, i % 32, i * 3, i % 5, 100 + i);
    if (i % 4 == 3) text += fmt::format(",\n    {{\"at\":{}.999,\"{}\":\"t{}\"}}", i, i % 8 == 3 ? "finish" : "cancel", i - 1);
  }
  text += "\n  ]\n}\n";
  const std::string scanned = read_all(text, module, EventDecoding::scan_common);
  CHECK(scanned == read_all(text, module, EventDecoding::dom_only));
  CHECK(scanned.find("error") == std::string::npos);
  CHECK(scanned.find("250 events") != std::string::npos);
}
