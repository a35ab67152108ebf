// From source text or a store version to a runnable policy: checked, lowered to IR, with an
// evaluator (native code when LLVM is usable, cached by `gov apply`; the interpreter
// otherwise). Shared by the `gov` commands and the embedding runtime (gov::Engine).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/embed/checked_policy.hpp"
#include "runtime/store/store.hpp"

namespace gov::jit {
struct ObjectCode;
}

namespace gov::embed {

/// Which evaluator to build. `jit` falls back to the interpreter where LLVM cannot be used.
enum class BackEnd : uint8_t { jit, interpreter };

/// Where a policy's evaluator came from.
enum class CodeOrigin : uint8_t {
  interpreter,  // the reference interpreter (asked for, or the JIT was unavailable)
  compiled,     // native code generated now
  cached,       // native code loaded from the store's cache (no codegen)
};

/// A policy ready for the engine: immutable once built, so any number of threads may use it
/// at once. Not movable: the evaluator may refer to `module`; hold it by pointer.
struct RunnablePolicy {
  CheckedPolicy checked;
  ir::Module module;
  std::unique_ptr<ir::Evaluator> evaluator;

  std::string name;            // the store's policy name, or the entry file's stem
  int64_t version = 0;         // the store's version number; 0 for a file
  std::string content_sha256;  // store::content_hash of the source files
  CodeOrigin code = CodeOrigin::interpreter;
  std::string warning;         // why the JIT was not used although asked for (else empty)
  std::string code_note;       // a store version compiled now: why no cached object was used

  RunnablePolicy() = default;
  RunnablePolicy(const RunnablePolicy&) = delete;
  RunnablePolicy& operator=(const RunnablePolicy&) = delete;
};

/// Why a policy could not be loaded.
struct LoadError {
  enum class Kind : uint8_t {
    io,         // the entry file cannot be read
    policy,     // the policy has errors; `message` is the rendered diagnostics
    not_found,  // no such store, policy or version
    store,      // the store failed (corrupt, busy, I/O, ...)
  };
  Kind kind = Kind::io;
  std::string message;  // one line (lower-case, no final period), or rendered diagnostics
};

/// A policy or the reason there is none.
struct LoadResult {
  std::unique_ptr<RunnablePolicy> policy;
  std::optional<LoadError> error;
  bool ok() const { return policy != nullptr; }
};

/// The evaluator for `module` (which must outlive it): the interpreter, or native code (from
/// `cached` object code when given and still valid for this machine, compiled otherwise).
/// Where the JIT cannot be used it falls back to the interpreter and sets `warning`. `origin`
/// says what happened. Thread-safe.
std::unique_ptr<ir::Evaluator> make_evaluator(const ir::Module& module, BackEnd back_end, const jit::ObjectCode* cached,
                                             CodeOrigin& origin, std::string& warning);

/// Loads, checks and lowers the policy file at `path` and builds its evaluator. Thread-safe.
LoadResult load_file(const std::string& path, BackEnd back_end);

/// The same from a policy checked already (`path` names it: the policy is named after its stem).
LoadResult runnable_from(CheckedPolicy checked, const std::string& path, BackEnd back_end);

/// store::content_hash of a checked policy's source files (entry first): what `gov apply`
/// stores as the version's content hash.
std::string content_sha256(const CheckedPolicy& checked);

/// The store's only policy when `policy` is empty, else `policy` itself; not_found errors say
/// what the store has.
std::optional<std::string> resolve_policy_name(store::Store& db, std::string_view policy, LoadError& error);

/// A version of `policy` (the active one when `version` is absent), rebuilt from its stored
/// sources, with the native code cached in the store when it matches this machine (no codegen).
/// `db` is used from the calling thread only, as store::Store requires.
LoadResult load_store_version(store::Store& db, const std::string& policy, std::optional<int64_t> version,
                              BackEnd back_end);

/// Stores `checked` (which must be ok()) as a new active version of `request.policy`: its source
/// files, and the native code compiled for this machine so that engines start without codegen.
/// Fills in request.files and request.object. Sets `warning` when no native code could be
/// cached (the version is stored anyway).
store::Result<store::ApplyResult> apply_policy(store::Store& db, const CheckedPolicy& checked,
                                               store::ApplyRequest request, std::string& warning);

}  // namespace gov::embed
