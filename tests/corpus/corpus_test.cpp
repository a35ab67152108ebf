// The decision corpus (tests/corpus/*.gov: policies with test blocks, one case per block)
// passes through both back ends, and their decision streams are byte-identical.
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <unistd.h>

#include <fmt/format.h>

#include "tests/support/test_support.hpp"

using gov::test::run_gov;

namespace {

std::string corpus_files() {
  std::string files;
  for (const std::string& path : gov::test::files_under("tests/corpus", ".gov")) {
    if (path.find("disputed") != std::string::npos) continue;
    files += " " + path.substr(std::string(GOV_SOURCE_DIR).size() + 1);
  }
  return files;
}

size_t passed_count(const std::string& out) {
  const size_t at = out.rfind(" passed, ");
  if (at == std::string::npos) return 0;
  size_t start = out.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return std::stoul(out.substr(start, at - start));
}

}  // namespace

TEST_CASE("every corpus case passes with the interpreter and with the JIT", "[corpus]") {
  const std::string files = corpus_files();
  auto interp = run_gov("test --engine interp" + files);
  INFO(interp.out << interp.err);
  CHECK(interp.exit_code == 0);
  CHECK(passed_count(interp.out) >= 60);
  auto jit = run_gov("test --engine jit" + files);
  CHECK(jit.exit_code == 0);
  CHECK(jit.out == interp.out);
}

TEST_CASE("the walkthrough's decision stream is byte-identical in both back ends", "[corpus]") {
  const std::string args = "simulate policies/examples/workshop-g5.gov --trace policies/examples/workshop-g5.trace.json";
  auto interp = run_gov(args + " --engine interp");
  auto jit = run_gov(args + " --engine jit");
  CHECK(interp.exit_code == 0);
  CHECK(jit.out == interp.out);
}

TEST_CASE("a generated trace over the rules example decides identically in both back ends", "[corpus]") {
  // 2,000 seeded random events exercising every rule of policies/examples/rules.gov.
  std::mt19937 random(2026);
  const std::vector<std::string> teams = {"research", "platform", "serving", "analytics"};
  const std::vector<std::string> types = {"ml.p5.48xlarge", "ml.g5.12xlarge", "ml.c5.2xlarge"};
  const std::vector<std::string> classes = {"inference", "experimentation", "training", "fine-tuning"};
  std::string trace = "{\"events\":[";
  std::vector<std::string> live;
  for (int i = 0; i < 2000; ++i) {
    const int at = i / 4;
    std::string event;
    if (!live.empty() && random() % 4 == 0) {
      const size_t k = random() % live.size();
      event = fmt::format("{{\"at\":{},\"{}\":\"{}\"}}", at, random() % 2 ? "finish" : "cancel", live[k]);
      live.erase(live.begin() + static_cast<long>(k));
    } else {
      const std::string id = "t" + std::to_string(i);
      const std::string& type = types[random() % types.size()];
      std::string labels = random() % 3 ? "\"labels\":{\"project\":\"p\",\"cost-center\":\"cc-1\"}," : "";
      const std::string amount = type == "ml.c5.2xlarge" ? fmt::format("\"vcpus\":{}", 1 + random() % 8)
                                                         : fmt::format("\"gpus\":{}", 1 + random() % 8);
      event = fmt::format("{{\"at\":{},\"submit\":{{\"id\":\"{}\",\"team\":\"{}\",\"instance_type\":\"{}\",{}\"priority\":\"{}\",{},\"duration\":{}}}}}",
                          at, id, teams[random() % teams.size()], type, labels, classes[random() % classes.size()], amount,
                          1 + random() % 50);
      live.push_back(id);
    }
    trace += (i ? "," : "") + event;
  }
  trace += "]}";
  const std::string path = "tests/corpus/tmp-trace-" + std::to_string(::getpid()) + ".json";
  gov::test::write_text(gov::test::repo_path(path), trace);
  auto interp = run_gov("simulate policies/examples/rules.gov --engine interp --trace " + path);
  auto jit = run_gov("simulate policies/examples/rules.gov --engine jit --trace " + path);
  std::remove(gov::test::repo_path(path).c_str());
  INFO(interp.err);
  CHECK(interp.exit_code == 0);
  CHECK(interp.out.find("\"outcome\":\"rejected\"") != std::string::npos);
  CHECK(interp.out.find("\"warnings\"") != std::string::npos);
  CHECK(jit.out == interp.out);
}
