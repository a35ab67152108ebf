// What the engine commands (simulate, eval, test) share: opening a gov::Engine from the command
// line, and the options that say how.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gov/engine.hpp"
#include "compiler/support/expected.hpp"
#include "runtime/trace/json.hpp"
#include "tools/gov/cli.hpp"

namespace gov::cli {

/// A policy loaded to driver::Stage::run (compiler/driver/driver.hpp, shared with embedding
/// controllers). Not movable: the evaluator refers to `module`.
using RunnablePolicy = driver::Policy;

/// The --engine, --dialect options every engine command takes.
std::vector<OptionSpec> engine_options();

/// --verify-key FILE and --require-signature: how the signatures of stored versions are checked.
std::vector<OptionSpec> verify_options();

/// The verify options from --verify-key (else $GOV_VERIFY_KEY when set and not empty) and
/// --require-signature; nullopt after printing why the key cannot be read.
std::optional<driver::VerifyOptions> verify_options_from(const Args& args);

/// For commands that read a stored version's sources without running it (show --inspect, diff):
/// false after printing the refusal when its signature does not verify, or is required and missing.
bool signature_accepted(const std::string& policy, const store::Version& version, const driver::VerifyOptions& verify);

/// A library error's message with the command-line option that answers it ("... choose one by
/// name with --policy NAME").
std::string with_option_hint(std::string message);

/// The engine a command runs, opened through the embedding API as a controller would: FILE
/// compiled (gov::Engine::compile_file), or without FILE the active version of the store named
/// by --db (and --policy), with its cached native code when --verify-key verifies it. Reads
/// --engine, --dialect, --verify-key (else $GOV_VERIFY_KEY) and --require-signature. On failure
/// prints the diagnostics or the error and sets `status` (1 for policy and store errors, 2 for
/// usage and unreadable files); prints the JIT fallback warning and, for a store, which code runs.
/// `replay`: for a batch replay that never asks Engine::decision() (Options::remember_decisions
/// off) and counts decisions only for --metrics (Options::count_decisions).
/// Warns on stderr, one line per instance type, where the teams' guaranteed quotas add up to
/// more than the cluster's capacity (`gov lint`'s W0101, whose message it prints): admission is
/// decided on quotas alone (planned capacity, as on HyperPod), so a replay may hold more than
/// exists. `label` names the policy in a comparison ("" otherwise).
void warn_quotas_above_capacity(const gov::Engine& engine, std::string_view label);
std::optional<gov::Engine> open_engine(const Args& args, const std::optional<std::string>& file, int& status,
                                       bool replay = false);

/// The embedding options the engine options on the command line ask for (--engine, --dialect,
/// --verify-key, --require-signature, --policy, --root); nullopt after printing why not.
std::optional<gov::Options> api_options_from(const Args& args);

/// A JSON document read from `path` (at most 64 MiB); nullopt after printing why not.
std::optional<trace::JsonValue> read_json_file(const std::string& path);

/// "task.json:3:14", or the path alone when the error has no position: where an editor jumps.
std::string located(const std::string& path, const support::Error& error);
/// The error's message without the `line L, column C: ` its reader put first when `located`
/// prints that place already; escaped for the terminal.
std::string message_after_location(const support::Error& error);

/// Whether `json` (read from `path`, not a `.yaml` name) is a Kubernetes object (`apiVersion` and
/// `kind`), after printing that gov reads those from `.yaml`/`.yml` files.
bool kubernetes_json(const std::string& path, const trace::JsonValue& json);

/// Loads the cluster state document at `path` (trace::read_cluster_state: `gov eval --state`'s
/// format; a `.yaml`/`.yml` path is `kubectl get workloads -A -o yaml`, read_workloads_state) into
/// `engine`, printing each entry it could not load as a warning. The state's time,
/// or nullopt after printing why not (status: 2 unreadable, 1 invalid). For a YAML state, `origin`
/// (when given) is set to its time 0 in milliseconds since 1970 (read_workloads_state).
std::optional<gov::Time> load_state_file(gov::Engine& engine, const std::string& path, int& status,
                                         std::optional<int64_t>* origin = nullptr);

/// The finishes due after a replay's last event, one instant per Step (tick(kForever) would
/// decide exactly the same, but hold every decision of the drain in one Step: hundreds of
/// thousands at the end of a long trace), then tick(kForever) for whatever else is left. Each
/// Step goes to `emit`. With `until` (`gov simulate --until`), only the finishes due by then,
/// and the engine's time moves to `until`.
template <typename Emit>
void drain_finishes(gov::Engine& engine, Emit&& emit, std::optional<gov::Time> until = std::nullopt) {
  while (const std::optional<gov::Time> due = engine.next_finish()) {
    if (until && *due > *until) break;
    emit(engine.tick(*due));
  }
  emit(engine.tick(until.value_or(gov::kForever)));
}

/// `--until SECONDS`: the replay's horizon in milliseconds (events after it are not replayed,
/// usage counts until it), nullopt when not given; false after printing why it does not read.
bool until_option(const Args& args, std::optional<gov::Time>& until);

}  // namespace gov::cli
