// Security tests of bounded output and strict trace strings: rendered rule messages are cut at
// 64 KiB in both back ends, oversized label values and NUL characters are refused in traces.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "compiler/diagnostics/source_file.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using gov::test::read_text;
using gov::test::repo_path;
using gov::test::run_gov;
using gov::test::write_text;

namespace {

/// A directory under /tmp holding the workshop policy (with the catalog) and traces.
struct Workshop {
  fs::path root;
  Workshop() {
    static int counter = 0;
    root = fs::temp_directory_path() / fmt::format("gov-sec-bounds-{}-{}", ::getpid(), counter++);
    fs::remove_all(root);
    fs::create_directories(root / "catalog");
    write_text((root / "catalog/aws-ml.gov").string(), read_text(repo_path("policies/catalog/aws-ml.gov")));
    std::string policy = read_text(repo_path("policies/examples/workshop-g5.gov"));
    policy.replace(policy.find("../catalog/"), 3, "");
    write_text(path("policy.gov"), policy);
  }
  ~Workshop() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
  std::string path(const std::string& name) const { return (root / name).string(); }
  void append_policy(const std::string& text) const { write_text(path("policy.gov"), read_text(path("policy.gov")) + text); }
  std::string trace(const std::string& name, const std::string& submit_fields) const {
    write_text(path(name), fmt::format("{{\"events\": [{{\"at\": 0, \"submit\": {{\"id\": \"t1\", \"team\": \"team-a\", "
                                       "\"instance_type\": \"ml.g5.8xlarge\", \"gpus\": 1{}}}}}]}}\n",
                                       submit_fields));
    return path(name);
  }
};

std::string repeat(std::string_view piece, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

}  // namespace

TEST_CASE("a rule message is bounded at 64 KiB and marked identically in both back ends", "[security][bounds]") {
  Workshop w;
  // 227 interpolations fit the 4 KiB string literal; with a 60 KB label the message would be 13.6 MB.
  w.append_policy(fmt::format("\nrule label-echo {{\n  when task.labels[\"k\"] != \"\"\n  deny \"{}\"\n}}\n",
                              repeat("{task.labels[\"k\"]}", 227)));
  // 'a' then 2-byte characters: the cut at 65,536 minus the marker falls inside one of them.
  const std::string value = "a" + repeat("\xC3\xA9", 29'999);
  const std::string trace = w.trace("t.json", fmt::format(", \"labels\": {{\"k\": \"{}\"}}", value));
  const auto interp = run_gov(fmt::format("simulate {} --trace {} --engine interp", w.path("policy.gov"), trace));
  const auto jit = run_gov(fmt::format("simulate {} --trace {} --engine jit", w.path("policy.gov"), trace));
  INFO(interp.err);
  REQUIRE(interp.exit_code == 0);
  REQUIRE(jit.exit_code == 0);
  CHECK(interp.out == jit.out);
  const size_t marker = interp.out.find("\xE2\x80\xA6 [truncated]\"");
  REQUIRE(marker != std::string::npos);
  // The message itself: from the label's first byte to the marker's end, at most 64 KiB.
  const size_t begin = interp.out.find("a\xC3\xA9");
  REQUIRE(begin != std::string::npos);
  const size_t message_bytes = marker + std::string("\xE2\x80\xA6 [truncated]").size() - begin;
  CHECK(message_bytes <= 65536);
  CHECK(message_bytes > 65500);
  CHECK(interp.out.size() < 70'000);  // one decision line, not 13.6 MB
  CHECK(gov::find_invalid_utf8(interp.out) == std::string::npos);  // not cut inside a character
}

TEST_CASE("a message of exactly 64 KiB is not marked and one byte more is", "[security][bounds]") {
  Workshop w;
  w.append_policy("\nrule label-echo {\n  when task.labels[\"k\"] != \"\"\n  deny \"k is {task.labels[\"k\"]}\"\n}\n");
  // "k is " and 65,531 bytes: 65,536.
  std::string trace = w.trace("t.json", fmt::format(", \"labels\": {{\"k\": \"{}\"}}", std::string(65'531, 'v')));
  auto r = run_gov(fmt::format("simulate {} --trace {}", w.path("policy.gov"), trace));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("truncated") == std::string::npos);
  CHECK(r.out.find("\"k is " + std::string(65'531, 'v') + "\"") != std::string::npos);
  trace = w.trace("t.json", fmt::format(", \"labels\": {{\"k\": \"{}\"}}", std::string(65'532, 'v')));
  r = run_gov(fmt::format("simulate {} --trace {}", w.path("policy.gov"), trace));
  REQUIRE(r.exit_code == 0);
  // Cut to 65,536 bytes with the marker (15 bytes): "k is " and 65,516 bytes of the label.
  CHECK(r.out.find("\"k is " + std::string(65'516, 'v') + "\xE2\x80\xA6 [truncated]\"") != std::string::npos);
}

TEST_CASE("a trace label value over 64 KiB is refused naming the event and label", "[security][bounds]") {
  Workshop w;
  const std::string trace = w.trace("t.json", fmt::format(", \"labels\": {{\"k\": \"{}\"}}", std::string(65537, 'v')));
  const auto r = run_gov(fmt::format("simulate {} --trace {}", w.path("policy.gov"), trace));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("event 0 (at 0): field \"labels.k\": the value is 65537 bytes; a label value has at most 65536 bytes") !=
        std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("trace ids names and labels with a NUL character are refused naming the event", "[security][bounds]") {
  Workshop w;
  struct Case {
    std::string submit;  // fields replacing the defaults
    std::string field;
  };
  const std::string nul = "\\u0000";
  const std::string base = "\"team\": \"team-a\", \"instance_type\": \"ml.g5.8xlarge\", \"gpus\": 1";
  for (const auto& [fields, field] : std::initializer_list<std::pair<std::string, std::string>>{
           {"\"id\": \"x" + nul + "A\", " + base, "id"},
           {"\"id\": \"t\", \"team\": \"team-a" + nul + "\", \"instance_type\": \"ml.g5.8xlarge\", \"gpus\": 1", "team"},
           {"\"id\": \"t\", \"priority\": \"training" + nul + "x\", " + base, "priority"},
           {"\"id\": \"t\", \"labels\": {\"k\": \"v" + nul + "\"}, " + base, "labels.k"},
           {"\"id\": \"t\", \"labels\": {\"k" + nul + "\": \"v\"}, " + base, "labels.k\\u0000"}}) {
    write_text(w.path("t.json"), "{\"events\": [{\"at\": 0, \"submit\": {" + fields + "}}]}\n");
    const auto r = run_gov(fmt::format("simulate {} --trace {}", w.path("policy.gov"), w.path("t.json")));
    INFO(fields << "\n" << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(fmt::format("event 0 (at 0): field \"{}\": ", field)) != std::string::npos);
    CHECK(r.err.find("contains a NUL character (\\u0000)") != std::string::npos);
  }
  // Two ids that would alias in C ("x" both) are refused at the first.
  write_text(w.path("t.json"), "{\"events\": [{\"at\": 0, \"submit\": {\"id\": \"x" + nul + "A\", " + base +
                                   "}}, {\"at\": 1, \"submit\": {\"id\": \"x" + nul + "B\", " + base + "}}]}\n");
  const auto r = run_gov(fmt::format("simulate {} --trace {}", w.path("policy.gov"), w.path("t.json")));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("event 0 (at 0): field \"id\": \"x\\u0000A\" contains a NUL character") != std::string::npos);
}
