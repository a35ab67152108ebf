// Helpers of the embedding tests: scratch directories, running programs, storing policy
// versions, and generating large valid traces.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "gov/gov.h"
#include "gov/types.hpp"
#include "runtime/signing/signing.hpp"

namespace gov::test {

/// A fresh directory under the system's temporary directory, removed (with its contents)
/// when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct ProgramResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
/// Runs a shell command line (in the repository's root) and captures both streams.
ProgramResult run_program(const std::string& command);

/// A task asking for `gpus` GPUs on ml.g5.8xlarge (the workshop example's instance type).
inline gov::Task g5_gpu_task(const std::string& id, const std::string& team, int64_t gpus) {
  gov::Task t;
  t.id = id;
  t.team = team;
  t.instance_type = "ml.g5.8xlarge";
  t.set(gov::Resource::gpu, gpus);
  return t;
}

/// The same task for the C ABI (the strings are the caller's and must outlive the task).
inline gov_task g5_gpu_c_task(const char* id, const char* team, int64_t gpus) {
  gov_task task;
  gov_task_init(&task);
  task.id = id;
  task.team = team;
  task.instance_type = "ml.g5.8xlarge";
  task.amounts[GOV_GPU] = gpus;
  return task;
}

/// Quotes a path for the shell.
std::string quoted(const std::string& text);

/// Checks `path` and stores it as the next version of `policy` in the store at `db` (created
/// when missing), with its native code, like `gov apply` (signed with `sign_key` when given,
/// like `gov apply --sign-key`). Returns the new version's number; fails the test on any error.
int64_t apply_policy_file(const std::string& db, const std::string& path, const std::string& policy,
                          const signing::SecretKey* sign_key = nullptr);
/// The same without test assertions (Catch2's are not thread-safe): the version, or nullopt
/// with `error` set.
std::optional<int64_t> try_apply_policy_file(const std::string& db, const std::string& path, const std::string& policy,
                                             std::string& error, const signing::SecretKey* sign_key = nullptr);

/// A new key pair written as `prefix`.key and `prefix`.pub (as `gov keygen --out prefix`).
signing::KeyPair write_test_key_pair(const std::string& prefix);

/// Writes `name` into `dir`: a cluster of 4 × ml.g5.8xlarge (as the workshop) with team-a at
/// `team_a_instances` instances and team-b at 2 (when `with_team_b`), both lend-and-borrow with
/// a 50 % borrow limit, classes `high` (90) and `low` (10), plus `extra` source text; the
/// shipped catalog is copied next to it. Returns the file's path.
std::string write_workshop_variant(const ScratchDir& dir, const std::string& name, int team_a_instances,
                                   bool with_team_b = true, const std::string& extra = "");

/// A valid trace of `events` events for policies/examples/rules.gov (four teams, three
/// instance types, priority classes, label rules): submissions of every shape (instances,
/// GPUs, fractional vCPUs and memory, pods × per_pod, labels, durations), finishes and
/// cancels of earlier tasks, many events sharing an instant. Deterministic for a seed.
std::string generate_rules_trace(size_t events, uint64_t seed);

/// The build directory's binaries and libraries (GOV_BUILD_ROOT).
std::string build_path(const std::string& relative);

}  // namespace gov::test
