// What the engine commands (simulate, eval, test) share: a checked policy lowered to IR
// with an evaluator.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gov/engine.hpp"
#include "runtime/embed/policy_loader.hpp"
#include "runtime/engine/decision.hpp"
#include "runtime/engine/engine_options.hpp"
#include "tools/gov/checked.hpp"
#include "tools/gov/cli.hpp"

namespace gov::cli {

/// A policy ready for the engine (runtime/embed/policy_loader.hpp, shared with embedding
/// controllers). Not movable: the evaluator refers to `module`.
using embed::RunnablePolicy;

/// The --engine, --dialect options every engine command takes.
std::vector<OptionSpec> engine_options();

/// Loads, checks and lowers `path` and builds the evaluator named by --engine. On failure
/// prints diagnostics or the error and sets `status` (1 for policy errors, 2 for usage/IO).
std::unique_ptr<RunnablePolicy> load_runnable(const std::string& path, const Args& args, int& status);

/// The active version of the store named by --db (and --policy), rebuilt from its stored
/// sources, with the native code cached by `gov apply` when it matches this machine (no
/// codegen; a line on stderr says which happened).
std::unique_ptr<RunnablePolicy> load_runnable_from_store(const Args& args, int& status);

/// --verify-key FILE and --require-signature: how the signatures of stored versions are checked.
std::vector<OptionSpec> verify_options();

/// The verify options from --verify-key (else $GOV_VERIFY_KEY when set and not empty) and
/// --require-signature; nullopt after printing why the key cannot be read.
std::optional<embed::VerifyOptions> verify_options_from(const Args& args);

/// For commands that read a stored version's sources without running it (show --inspect, diff):
/// false after printing the refusal when its signature does not verify, or is required and missing.
bool signature_accepted(const std::string& policy, const store::Version& version, const embed::VerifyOptions& verify);

/// The engine options from --dialect; nullopt (after printing why) for an unknown dialect.
std::optional<engine::EngineOptions> engine_options_from(const Args& args);

/// The engine a command runs, opened through the embedding API as a controller would: FILE
/// compiled (gov::Engine::compile_file), or without FILE the active version of the store named
/// by --db (and --policy), with its cached native code when --verify-key verifies it. Reads
/// --engine, --dialect, --verify-key (else $GOV_VERIFY_KEY) and --require-signature. On failure
/// prints the diagnostics or the error and sets `status` (1 for policy and store errors, 2 for
/// usage and unreadable files); prints the JIT fallback warning and, for a store, which code runs.
std::optional<gov::Engine> open_engine(const Args& args, const std::optional<std::string>& file, int& status);

}  // namespace gov::cli
