// What the engine commands (simulate, eval, test) share: opening a gov::Engine from the command
// line, and the options that say how.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gov/engine.hpp"
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
std::optional<gov::Engine> open_engine(const Args& args, const std::optional<std::string>& file, int& status);

}  // namespace gov::cli
