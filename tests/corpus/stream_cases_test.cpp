// Issues 27 and 28 (same-instant events, overlapping preemption targets): the stream cases of
// tests/corpus/streams/ (a trace of a policies/examples policy and the exact stream it must
// give) replay identically in both back ends.
#include <catch2/catch.hpp>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

/// `DIR/POLICY.CASE.trace.json` → `policies/examples/POLICY.gov`.
std::string policy_of(const std::string& trace) {
  const std::string name = trace.substr(trace.rfind('/') + 1);
  return "policies/examples/" + name.substr(0, name.find('.')) + ".gov";
}

}  // namespace

TEST_CASE("every stream case gives its expected stream with the interpreter and with the JIT",
          "[security][sem-instant][corpus]") {
  const std::vector<std::string> traces =
      gov::test::files_under("tests/corpus/streams", ".trace.json");
  CHECK(traces.size() >= 5);
  for (const std::string& trace : traces) {
    const std::string stem = trace.substr(0, trace.size() - std::string(".trace.json").size());
    const std::string expected = gov::test::read_text(stem + ".expected.jsonl");
    INFO(trace);
    for (const char* engine : {"interp", "jit"}) {
      INFO(engine);
      const auto run = run_gov("simulate " + policy_of(trace) + " --trace " + trace +
                               " --engine " + engine);
      INFO(run.err);
      CHECK(run.exit_code == 0);
      CHECK(run.out == expected);
    }
  }
}
