// The one way to load a policy: from disk, from memory or from a store version, through
// reading, checking, lowering and (on request) a back end, with one error type.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <deque>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/check/sources.hpp"
#include "compiler/diagnostics/diagnostic.hpp"
#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "runtime/signing/signing.hpp"
#include "runtime/store/store.hpp"

namespace gov::jit {
struct ObjectCode;
}

namespace gov::driver {

/// Largest entry file read for Stage::parse without imports (`gov fmt`); files between the
/// parser's limit and this one are read and refused by the parser with a diagnostic (E0001).
inline constexpr size_t kMaxEntryReadBytes = 64u << 20;

/// How far load() takes a policy. Each stage includes the ones before it.
enum class Stage : uint8_t {
  parse,  // the entry file and its imports read and parsed (check::Program)
  check,  // checked (check::CheckResult): diagnostics are data, not an error
  lower,  // lowered to IR (ir::Module); a policy with errors is an Error of kind policy
  run,    // with an evaluator: the interpreter or native code (Request::back_end)
};

/// Which evaluator Stage::run builds. `jit` falls back to the interpreter where LLVM cannot
/// be used (Policy::warning says why).
enum class BackEnd : uint8_t { jit, interpreter };

/// Where a policy's evaluator came from.
enum class CodeOrigin : uint8_t {
  interpreter,  // the reference interpreter (asked for, or the JIT was unavailable)
  compiled,     // native code generated now
  cached,       // native code loaded from the store's cache (no codegen)
};

/// Why a policy could not be loaded (to the requested stage): the one error shape below the
/// API (compiler/support/expected.hpp). Its kinds here: io (the entry file cannot be read), policy (errors; the message is the rendered
/// diagnostics), not_found (no such store, policy or version), store (the store failed
/// underneath), signature (a signature does not verify, or one is required and missing).
using Error = support::Error;
using ErrorKind = support::ErrorKind;

/// How stored versions are checked against signatures (docs/store.md, "Signed versions").
struct VerifyOptions {
  std::optional<signing::PublicKey> key;  // absent: signatures cannot be checked
  bool require_signature = false;         // refuse a version that is not signed by `key`
};

struct Request;
struct Result;

/// Where a policy's files come from. A plain value; a stored source refers to its store and
/// version, which must outlive load().
class Source {
 public:
  enum class Kind : uint8_t { file, memory, version, stored };

  /// The file at `path` on disk (as the user named it) and its imports, none of which is read
  /// from outside `root` (empty: check::find_policy_root). The policy is named after the stem.
  static Source file(std::string path, std::string root = {});
  /// Files in memory (tests, fuzzing, stdin): the entry is `entry` (a logical path, see
  /// check::normalise_logical_path), shown in diagnostics as `display` (empty: `entry`).
  /// Shipped catalogs are imported by name as from a file.
  static Source memory(check::MemorySources files, std::string entry, std::string display = {});
  /// One file's text in memory, shown as `display` ("fuzz.gov", "<stdin>"). There is no other
  /// file: an import of a shipped catalog by name (`import "aws-ml"`) reads it as from a file,
  /// any other import is an error (E0201 "no such file in memory", or E0208 for `../x`).
  static Source text(std::string display, std::string text);
  /// A version read from a store already (`gov show --inspect`, `gov diff`): checked from its
  /// stored files in memory (nothing is written, nothing else is read). Its signature is the
  /// caller's to check (check_version_signature). A version that no longer checks is an Error.
  static Source version(const store::Version& version);
  /// Version `number` (absent: the active one) of `policy` in `db`, signatures checked with
  /// `verify` before anything is parsed, and at Stage::run with the store's cached native code
  /// when it is signed and matches this machine (docs/store.md). `db` is used from the calling
  /// thread only, as store::Store requires.
  static Source stored(store::Store& db, std::string policy, std::optional<int64_t> number = std::nullopt,
                       VerifyOptions verify = {});

  Kind kind() const { return kind_; }

  /// Texts that replace files on disk, keyed by absolute real path: an editor's unsaved
  /// buffers (`gov lsp`). Only for Kind::file; a buffer outside the policy root is not read.
  using Buffers = std::map<std::string, std::string, std::less<>>;
  Source& with_buffers(std::shared_ptr<const Buffers> buffers) {
    buffers_ = std::move(buffers);
    return *this;
  }

 private:
  friend Result load(const Source& source, const Request& request);
  Kind kind_ = Kind::file;
  std::string path_;     // file: the path; memory/text: the entry's display path; stored: the policy
  std::string root_;     // file: the root; memory/text: the entry's logical path
  std::shared_ptr<const check::MemorySources> files_;  // memory, text
  const store::Version* version_ = nullptr;            // version
  store::Store* db_ = nullptr;                         // stored
  std::optional<int64_t> number_;                      // stored
  VerifyOptions verify_;                               // stored
  std::shared_ptr<const Buffers> buffers_;             // file: unsaved editor buffers
};

/// What load() should do.
struct Request {
  Stage stage = Stage::check;
  /// Inspect, simulate, apply and compile need a complete policy (exactly one `cluster` and
  /// one `policy`); plain `gov check` of a catalog or a rules file does not. Stored versions
  /// are always checked as complete policies.
  bool require_cluster = true;
  /// false: only the entry file, read as named (at most kMaxEntryReadBytes, no root), parsed,
  /// its imports not followed and no declaration limits counted: what `gov fmt` formats. Meant
  /// for Stage::parse (checking a file without its imports reports what they declare as unknown).
  bool follow_imports = true;
  BackEnd back_end = BackEnd::jit;  // Stage::run
  /// A reload's question "did it change?": when the checked policy's content hash equals this,
  /// load() stops after checking and sets Policy::unchanged (nothing is lowered or compiled).
  std::string unless_content_sha256;

  /// Up to `stage`, other fields defaulted.
  static Request up_to(Stage stage, bool require_cluster = true) {
    Request request;
    request.stage = stage;
    request.require_cluster = require_cluster;
    return request;
  }
  /// Stage::run with `back_end`.
  static Request running(BackEnd back_end) {
    Request request = up_to(Stage::run);
    request.back_end = back_end;
    return request;
  }
};

/// A policy's files loaded and checked: what checking a policy produces, the diagnostics as
/// data. A plain value (movable); not thread-safe to mutate.
struct CheckedPolicy {
  check::Program program;
  check::CheckResult result;  // empty when the files have syntax errors (not checked)
  /// Parse and check diagnostics together, with import chains, sorted.
  Diagnostics diagnostics() const;
  bool ok() const { return !program.diagnostics.has_errors() && result.ok(); }
};

/// A loaded policy, as far as Request::stage asked. Immutable once returned, so any number of
/// threads may read it (and call its evaluator) at once. Not movable: the evaluator may refer
/// to `module`; held by pointer.
struct Policy {
  CheckedPolicy checked;
  ir::Module module;                         // Stage::lower and later
  std::unique_ptr<ir::Evaluator> evaluator;  // Stage::run

  std::string name;            // the store's policy name, or the entry file's stem
  int64_t version = 0;         // the store's version number; 0 for files and memory
  std::string content_sha256;  // store::content_hash of the source files (Stage::lower and later, and reloads)
  CodeOrigin code = CodeOrigin::interpreter;
  std::string warning;    // why the JIT was not used although asked for (else empty)
  std::string code_note;  // a stored version compiled now: why no cached object was used
  bool unchanged = false;  // Request::unless_content_sha256 matched: stopped after checking

  Policy() = default;
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;
};

/// A policy or the reason there is none. `policy` is also set beside an Error of kind policy
/// (its diagnostics) when the files could be read.
struct Result {
  std::unique_ptr<Policy> policy;
  std::optional<Error> error;
  bool ok() const { return !error.has_value(); }
};

/// Loads a policy from `source` to `request.stage`. Never throws; problems with the policy are
/// diagnostics up to Stage::check and an Error of kind policy beyond it (and for stored
/// versions at every stage: they were valid when applied). Thread-safe for distinct sources.
Result load(const Source& source, const Request& request = {});

/// The evaluator for `module` (which must outlive it): the interpreter, or native code (from
/// `cached` object code when given and still valid for this machine, compiled otherwise).
/// Where the JIT cannot be used it falls back to the interpreter and sets `warning`. `origin`
/// says what happened. Thread-safe.
std::unique_ptr<ir::Evaluator> make_evaluator(const ir::Module& module, BackEnd back_end, const jit::ObjectCode* cached,
                                             CodeOrigin& origin, std::string& warning);

/// The store's only policy when `policy` is empty, else `policy` itself; not_found errors say
/// what the store has.
support::Expected<std::string> resolve_policy_name(store::Store& db, std::string_view policy);

/// The signature check of a stored version (`policy` is its policy's name): an Error when it
/// must not load (a signature that does not verify with `verify.key`; with require_signature,
/// an unsigned version or no key); else nullopt, with `native_refused` set when the version is
/// not verified (then none of its cached native code may run). Pure.
std::optional<Error> check_version_signature(const std::string& policy, const store::Version& version,
                                             const VerifyOptions& verify, std::optional<std::string>& native_refused);

/// Where `import "NAME"` looks for the shipped catalog `NAME.gov` (docs/language.md, "import"), in
/// order: `share/gov/catalog` of the installation that holds this code (`<dir>/../share/gov/catalog`
/// beside the `bin/` or `lib/` directory of the gov command or libgov.so), then the source tree's
/// `policies/catalog` (so a build tree finds the repository's catalog). Absolute paths.
std::vector<std::string> catalog_directories();

/// A checked policy's source files as the store records them: paths relative to the policy
/// root (so a version loads again wherever gov runs), entry first.
std::vector<store::PolicyFile> store_files(const CheckedPolicy& checked);

/// Stores `checked` (which must be ok()) as a new active version of `request.policy`: its source
/// files, and the native code compiled for this machine so that engines start without codegen.
/// Fills in request.files and request.object; with `sign_key`, also request.signature and the
/// object's signature. Sets `warning` when no native code could be cached (the version is
/// stored anyway).
store::Result<store::ApplyResult> apply_policy(store::Store& db, const CheckedPolicy& checked,
                                               store::ApplyRequest request, std::string& warning,
                                               const signing::SecretKey* sign_key = nullptr);

/// Renders diagnostics of several programs, keeping each distinct diagnostic once (a catalog
/// imported by several files is reported once), then a summary line.
class DiagnosticPrinter {
 public:
  void add(const Diagnostics& diagnostics, const SourceMap& sources);
  /// The rendered text, ending with "N errors, M warnings" when there is anything.
  std::string text() const;
  size_t errors() const { return errors_; }
  size_t warnings() const { return warnings_; }

 private:
  std::deque<std::string> rendered_;  // a deque: seen_ views its strings, which never move
  std::unordered_set<std::string_view> seen_;  // rendered_, to drop a repeat in O(1) (a list scan was quadratic)
  size_t errors_ = 0;
  size_t warnings_ = 0;
};

}  // namespace gov::driver
