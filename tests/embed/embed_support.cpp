#include "tests/embed/embed_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "compiler/driver/driver.hpp"
#include "runtime/store/store.hpp"
#include "tests/support/test_support.hpp"

namespace gov::test {

namespace fs = std::filesystem;

ScratchDir::ScratchDir(const std::string& name) {
  static std::atomic<int> count{0};
  path_ = fs::temp_directory_path() / fmt::format("gov-{}-{}-{}", name, ::getpid(), count.fetch_add(1));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

ProgramResult run_program(const std::string& command) {
  ScratchDir scratch("stderr");
  const std::string err_path = scratch / "stderr.txt";
  const std::string line = "cd " + quoted(GOV_SOURCE_DIR) + " && (" + command + ") 2>" + quoted(err_path);
  ProgramResult result;
  FILE* pipe = ::popen(line.c_str(), "r");
  if (!pipe) return result;
  char buffer[1 << 14];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_path);
  return result;
}

std::optional<int64_t> try_apply_policy_file(const std::string& db, const std::string& path, const std::string& policy,
                                             std::string& error, const signing::SecretKey* sign_key) {
  // Lowered: a policy with errors is an error (the rendered diagnostics).
  driver::Result loaded = driver::load(driver::Source::file(path), driver::Request::up_to(driver::Stage::lower));
  if (!loaded.ok()) {
    error = loaded.error->message;
    return std::nullopt;
  }
  const driver::CheckedPolicy& checked = loaded.policy->checked;
  auto opened = store::Store::open(db);
  if (!opened.ok()) {
    error = opened.error().message;
    return std::nullopt;
  }
  store::ApplyRequest request;
  request.policy = policy;
  request.author = "test";
  std::string warning;
  auto applied = driver::apply_policy(opened.value(), checked, request, warning, sign_key);
  if (!applied.ok()) {
    error = applied.error().message;
    return std::nullopt;
  }
  if (!warning.empty()) {
    error = warning;
    return std::nullopt;
  }
  return applied.value().version;
}

int64_t apply_policy_file(const std::string& db, const std::string& path, const std::string& policy,
                          const signing::SecretKey* sign_key) {
  std::string error;
  std::optional<int64_t> version = try_apply_policy_file(db, path, policy, error, sign_key);
  INFO(error);
  REQUIRE(version);
  return *version;
}

signing::KeyPair write_test_key_pair(const std::string& prefix) {
  auto pair = signing::generate_key_pair();
  REQUIRE(pair.ok());
  auto written = signing::write_key_pair(pair.value(), prefix);
  INFO((written.ok() ? std::string() : written.error().message));
  REQUIRE(written.ok());
  return std::move(pair.value());
}

std::string write_workshop_variant(const ScratchDir& dir, const std::string& name, int team_a_instances,
                                   bool with_team_b, const std::string& extra) {
  if (!fs::exists(dir / "aws-ml.gov")) fs::copy_file(repo_path("policies/catalog/aws-ml.gov"), dir / "aws-ml.gov");
  const auto team = [](const char* team_name, int count) {
    return fmt::format(R"(
team {} {{
  quota ml.g5.8xlarge {{ instances = {} }}

  sharing            = lend-and-borrow
  borrow-limit       = 50%
  preempt-team-tasks = lower-priority
  fair-share-weight  = 0
}}
)",
                       team_name, count);
  };
  std::string text = R"(import "aws-ml.gov"

cluster ml-cluster {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 4 }
}

policy {
  task-prioritization = task-ranking
  idle-compute        = fair-share

  priority high = 90
  priority low  = 10
}
)";
  text += team("team-a", team_a_instances);
  if (with_team_b) text += team("team-b", 2);
  text += extra;
  const std::string path = dir / name;
  write_text(path, text);
  return path;
}

std::string build_path(const std::string& relative) {
  return std::string(GOV_BUILD_ROOT) + "/" + relative;
}

namespace {

struct TeamShape {
  const char* name;
  std::vector<const char*> types;  // the instance types it has quota for
};

// policies/examples/rules.gov: its teams, their quotas' instance types, the classes.
const std::vector<TeamShape> kTeams = {
    {"research", {"ml.p5.48xlarge", "ml.c5.2xlarge"}},
    {"platform", {"ml.p5.48xlarge", "ml.g5.12xlarge", "ml.c5.2xlarge"}},
    {"serving", {"ml.g5.12xlarge"}},
    {"analytics", {"ml.g5.12xlarge", "ml.c5.2xlarge"}},
};
const std::vector<const char*> kClasses = {"inference", "experimentation", "training", "fine-tuning"};

class TraceWriter {
 public:
  explicit TraceWriter(uint64_t seed) : random_(seed) {}

  std::string write(size_t count) {
    std::string out = "{\"events\":[\n";
    for (size_t i = 0; i < count; ++i) {
      if (i) out += ",\n";
      advance_time();
      out += event();
    }
    return out + "\n]}\n";
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

  void advance_time() {
    if (chance(35)) return;  // same instant as the previous event
    millis_ += chance(70) ? 1 + pick(30) * 1000 : 1 + pick(5000);
  }

  std::string at() const { return millis_ % 1000 == 0 ? std::to_string(millis_ / 1000) : fmt::format("{}.{:03}", millis_ / 1000, millis_ % 1000); }

  std::string event() {
    if (!live_.empty() && chance(live_.size() > 40 ? 70 : 40)) {
      // Mostly the oldest tasks: they ran long enough to finish, or waited long enough to be
      // given up (cancelled) — which also keeps the queues, and the replay, short.
      const size_t k = chance(80) ? pick(std::min<size_t>(live_.size(), 8)) : pick(live_.size());
      const std::string id = live_[k];
      live_.erase(live_.begin() + static_cast<long>(k));
      return fmt::format(R"(  {{"at": {}, "{}": "{}"}})", at(), chance(50) ? "finish" : "cancel", id);
    }
    const std::string id = fmt::format("t{}", next_id_++);
    live_.push_back(id);
    return fmt::format(R"(  {{"at": {}, "submit": {}}})", at(), task(id));
  }

  std::string task(const std::string& id) {
    const TeamShape& team = kTeams[pick(kTeams.size())];
    std::string out = fmt::format(R"({{"id": "{}", "team": "{}")", id, team.name);
    const bool typed = chance(80);
    if (typed) out += fmt::format(R"(, "instance_type": "{}")", team.types[pick(team.types.size())]);
    if (chance(75)) out += fmt::format(R"(, "priority": "{}")", kClasses[pick(kClasses.size())]);
    switch (pick(4)) {
      case 0:  // whole instances need a type: named, or the team's only one
        out += typed || team.types.size() == 1 ? fmt::format(R"(, "instances": {})", 1 + pick(2)) : R"(, "gpus": 1)";
        break;
      case 1: out += fmt::format(R"(, "gpus": {}, "memory_gib": {})", 1 + pick(8), 16 * (1 + pick(20))); break;
      case 2: out += fmt::format(R"(, "vcpus": {}.{}, "memory_gib": {}.5)", pick(12), 25 * pick(4), pick(64)); break;
      default:
        out += fmt::format(R"(, "pods": {}, "per_pod": {{"gpus": {}, "vcpus": 0.5, "memory_gib": 2}})", 1 + pick(8), pick(2));
        break;
    }
    if (chance(90)) {
      out += fmt::format(R"(, "labels": {{"project": "p{}")", pick(5));
      if (chance(85)) out += fmt::format(R"(, "cost-center": "{}")", chance(95) ? "cc-7" : "");
      out += "}";
    }
    if (chance(50)) out += fmt::format(R"(, "duration": {}.{})", 1 + pick(300), pick(10));
    return out + "}";
  }

  std::mt19937_64 random_;
  int64_t millis_ = 0;
  uint64_t next_id_ = 0;
  std::vector<std::string> live_;
};

}  // namespace

std::string generate_rules_trace(size_t events, uint64_t seed) {
  return TraceWriter(seed).write(events);
}

}  // namespace gov::test
