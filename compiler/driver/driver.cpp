#include "compiler/driver/driver.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "compiler/check/schema.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/diagnostics/source_file.hpp"
#include "compiler/interp/interpreter.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "grammar/parse.hpp"

namespace gov::driver {

// What the loader reads, the store holds, and the other way round.
static_assert(check::kMaxProgramFiles == store::kMaxFilesPerVersion);
static_assert(check::kMaxLogicalPathBytes == store::kMaxFilePathBytes);

namespace {

/// The catalogs a program in memory imports by name: the one stored with its files
/// (check::kCatalogLogicalDir/NAME.gov, what store_files records) when there is one, so that a
/// stored policy reads the catalog it was stored with, else the installation's.
class StoredThenShipped final : public check::SourceProvider {
 public:
  StoredThenShipped(const check::MemorySources& files, const check::CatalogSources& shipped)
      : files_(files), shipped_(shipped) {}
  check::SourceRead read(const std::string& name, size_t limit) const override {
    check::SourceRead own = files_.read(std::string(check::kCatalogLogicalDir) + "/" + name, limit);
    return own.ok() ? own : shipped_.read(name, limit);
  }
  std::string root_description() const override { return shipped_.root_description(); }

 private:
  const check::MemorySources& files_;
  const check::CatalogSources& shipped_;
};

namespace fs = std::filesystem;

Result failure(ErrorKind kind, std::string message, std::unique_ptr<Policy> policy = nullptr) {
  Result result;
  result.policy = std::move(policy);
  result.error = Error{kind, std::move(message)};
  return result;
}

Error store_error(const store::Error& error) {
  const auto kind = error.kind == store::ErrorKind::not_found ? ErrorKind::not_found : ErrorKind::store;
  return {kind, error.message};
}

std::string rendered(const CheckedPolicy& checked) {
  DiagnosticPrinter printer;
  printer.add(checked.diagnostics(), checked.program.sources);
  return printer.text();
}

/// The entry file's text alone, parsed (`gov fmt`): no imports.
check::Program entry_only(const std::string& display, std::string text) {
  check::Program program;
  const SourceId id = program.sources.add(display, std::move(text));
  grammar::ParseResult parsed = check::parse_file(program.sources, id);
  program.diagnostics.append(parsed.diagnostics);
  program.files.push_back({id, std::move(parsed.file), check::normalise_logical_path(display).value_or(display),
                           std::nullopt, std::nullopt});
  return program;
}

/// Where this code is: the gov command or the shared library linking the driver.
std::optional<fs::path> this_binary() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&catalog_directories), &info) == 0 || !info.dli_fname) return std::nullopt;
  std::error_code ec;
  fs::path binary = fs::canonical(info.dli_fname, ec);
  if (ec) return std::nullopt;
  return binary;
}

/// Where a policy file named `entry_path` is read from: its root (`given_root`, else
/// check::find_policy_root, found from where the entry is named) and the entry's logical path
/// under it. The entry is confined like its imports: a directory walk (`gov check .`, `gov lint`,
/// `gov fmt`) names files that a pull request may have made links leading out of the root.
struct ConfinedEntry {
  std::unique_ptr<check::DiskSources> sources;
  std::string logical;
  std::string error;  // when `sources` is null: one line, starting "cannot ..."
};

ConfinedEntry confine_entry(const std::string& entry_path, const std::string& given_root) {
  ConfinedEntry out;
  std::string error;
  const std::optional<std::string> root =
      given_root.empty() ? check::find_policy_root(entry_path, error) : check::real_path(given_root, error);
  if (!root) {
    out.error = given_root.empty() ? fmt::format("cannot read `{}`: {}", entry_path, error)
                                   : fmt::format("cannot use `{}` as the policy root: {}", given_root, error);
    return out;
  }
  std::unique_ptr<check::DiskSources> sources = check::DiskSources::open(*root, error);
  if (!sources) {
    out.error = error;
    return out;
  }
  // Its real path places the entry under the root.
  const std::optional<std::string> entry = check::real_path(entry_path, error);
  if (!entry) {
    out.error = fmt::format("cannot read `{}`: {}", entry_path, error);
    return out;
  }
  const fs::path relative = fs::path(*entry).lexically_relative(sources->real_root());
  const std::optional<std::string> logical = check::normalise_logical_path(relative.string());
  if (relative.empty() || !logical) {
    if (std::error_code ec; fs::is_symlink(entry_path, ec)) {
      out.error = fmt::format("cannot read `{}`: it is a symbolic link to `{}`, outside the policy root `{}`",
                              entry_path, *entry, sources->real_root());
    } else {
      out.error = fmt::format("cannot read `{}`: it is outside the policy root `{}`", entry_path, sources->real_root());
    }
    return out;
  }
  out.sources = std::move(sources);
  out.logical = *logical;
  return out;
}

/// A program that could not be read, and why (one line).
check::Program read_failure(std::string message) {
  check::Program program;
  program.read_failed = true;
  program.read_error = std::move(message);
  return program;
}

/// The file at `entry_path` alone, read under its root (confine_entry) and parsed: what `gov
/// fmt` rewrites, which must not be a file the root's rules would refuse to read.
check::Program entry_only_from_disk(const std::string& entry_path, const std::string& given_root) {
  ConfinedEntry confined = confine_entry(entry_path, given_root);
  if (!confined.sources) return read_failure(std::move(confined.error));
  check::SourceRead read = confined.sources->read(confined.logical, kMaxEntryReadBytes);
  if (!read.ok()) return read_failure(fmt::format("cannot read `{}`: {}", entry_path, read.error.reason));
  return entry_only(entry_path, std::move(read.file->text));
}

/// The file at `entry_path` and its imports, none read from outside the root (confine_entry).
check::Program from_disk(const std::string& entry_path, const std::string& given_root,
                         const Source::Buffers* buffers = nullptr) {
  ConfinedEntry confined = confine_entry(entry_path, given_root);
  if (!confined.sources) return read_failure(std::move(confined.error));
  const check::DiskSources& sources = *confined.sources;
  const check::CatalogSources catalogs(catalog_directories());
  if (buffers == nullptr || buffers->empty()) return check::read_program(sources, confined.logical, entry_path, &catalogs);
  // Editor buffers under the root replace the files they stand for.
  std::map<std::string, std::string, std::less<>> overlay;
  for (const auto& [path, text] : *buffers) {
    const std::optional<std::string> under =
        check::normalise_logical_path(fs::path(path).lexically_relative(sources.real_root()).string());
    if (under) overlay.emplace(*under, text);
  }
  const check::OverlaySources overlaid(sources, std::move(overlay));
  return check::read_program(overlaid, confined.logical, entry_path, &catalogs);
}

/// A stored version's files in memory, refused (nullopt, `error` in one line) when they do not
/// hash to the recorded content hash, when a path is not a plain relative path (`../x`, `/x`,
/// NUL: the store was written outside gov), or when there are none or more than
/// check::kMaxProgramFiles.
std::optional<check::MemorySources> version_files(const store::Version& version, std::string& error) {
  const int64_t number = version.info.number;
  if (version.files.empty()) {
    error = fmt::format("version {} has no files", number);
    return std::nullopt;
  }
  if (version.files.size() > check::kMaxProgramFiles) {
    error = fmt::format("version {} has {} files; a policy has at most {}", number, version.files.size(),
                        check::kMaxProgramFiles);
    return std::nullopt;
  }
  // The store is a file anyone with write access can edit: recompute what apply recorded.
  if (const std::string actual = store::content_hash(version.files); actual != version.info.content_sha256) {
    error = fmt::format(
        "version {}'s stored files do not match its recorded content hash (recorded {}, found {}): the store "
        "was changed outside gov",
        number, version.info.content_sha256.substr(0, 12), actual.substr(0, 12));
    return std::nullopt;
  }
  check::MemorySources sources;
  for (const store::PolicyFile& file : version.files) {
    if (check::normalise_logical_path(file.path) != file.path) {
      error = fmt::format("version {} has a stored file path that is not a plain relative path: {:?}", number,
                          file.path);
      return std::nullopt;
    }
    sources.add(file.path, file.text);
  }
  return sources;
}

/// A stored version checked from memory, or nullopt with `error` saying why in one line (or
/// ending with the rendered diagnostics when it no longer checks with this gov) and `kind`:
/// `store` for stored files that are not what apply wrote (changed outside gov, damaged),
/// `policy` for a version that no longer reads or checks with this gov.
std::unique_ptr<Policy> checked_version(const store::Version& version, std::string& error, ErrorKind& kind) {
  kind = ErrorKind::store;
  std::optional<check::MemorySources> sources = version_files(version, error);
  if (!sources) return nullptr;
  kind = ErrorKind::policy;
  auto policy = std::make_unique<Policy>();
  CheckedPolicy& checked = policy->checked;
  const std::string& entry = version.files.front().path;
  checked.program = check::read_program(*sources, entry, entry);
  const int64_t number = version.info.number;
  if (checked.program.read_failed) {
    error = fmt::format("version {} no longer loads: {}", number, checked.program.read_error);
    return nullptr;
  }
  if (!checked.program.diagnostics.has_errors()) checked.result = check::check(checked.program, {/*require_cluster=*/true});
  if (!checked.ok()) {
    error = fmt::format("version {} no longer checks with this gov:\n{}", number, rendered(checked));
    return nullptr;
  }
  policy->version = number;
  policy->content_sha256 = version.info.content_sha256;
  return policy;
}

// The cached object of `stored` for this machine into `cached` when its signature verifies
// with `key` (the version's was verified already); else `note` says why there is none. An
// object signed by another key or whose signature fails is tampering: the error refuses the load.
std::optional<Error> signed_object(store::Store& db, const store::Version& stored, const std::string& policy_name,
                                   const ir::Module& module, const signing::PublicKey& key,
                                   std::optional<jit::ObjectCode>& cached, std::string& note) {
  auto object_key = jit::key_for(module);
  if (!object_key.ok()) {
    note = fmt::format("no cache key: {}", object_key.error().message);
    return std::nullopt;
  }
  const std::string key_hex = jit::to_hex(object_key.value());
  auto object = db.get_signed_object(policy_name, stored.info.number, key_hex);
  if (!object.ok()) {
    note = fmt::format("the cached object cannot be read: {}", object.error().message);
    return std::nullopt;
  }
  if (!object.value()) {
    note = "no cached object for this machine";
    return std::nullopt;
  }
  const store::SignedObject& signed_bytes = *object.value();
  const signing::Verification verdict = signing::verify_object(key, policy_name, stored.info.content_sha256, key_hex,
                                                               signed_bytes.bytes, signed_bytes.signature);
  if (verdict.verdict == signing::Verdict::not_signed) {
    note = "stored native code not run: the cached object is not signed";
    return std::nullopt;
  }
  if (!verdict.ok()) {
    return Error{ErrorKind::signature, fmt::format("version {} of policy `{}`: cached object `{}`: {}",
                                                     stored.info.number, policy_name, key_hex, verdict.message)};
  }
  auto code = jit::ObjectCode::deserialize(signed_bytes.bytes);
  if (code.ok()) cached = std::move(code.value());
  else note = fmt::format("the cached object was refused: {}", code.error().message);
  return std::nullopt;
}

/// Stage::run of a stored version: the cached native code when the version verified
/// (`native_refused` empty) and its object does too, else compiled now with `code_note` saying why.
std::optional<Error> stored_evaluator(store::Store& db, const store::Version& stored, const VerifyOptions& verify,
                                      const std::optional<std::string>& native_refused, BackEnd back_end,
                                      Policy& policy) {
  std::optional<jit::ObjectCode> cached;
  if (back_end == BackEnd::jit) {
    if (native_refused) {
      policy.code_note = fmt::format("stored native code not run: {}", *native_refused);
    } else if (auto tampered = signed_object(db, stored, policy.name, policy.module, *verify.key, cached,
                                             policy.code_note)) {
      return tampered;
    }
  }
  policy.evaluator = make_evaluator(policy.module, back_end, cached ? &*cached : nullptr, policy.code, policy.warning);
  if (policy.code == CodeOrigin::cached) policy.code_note.clear();
  else if (cached) policy.code_note = "the cached object was refused by the loader";
  return std::nullopt;
}

}  // namespace

std::vector<std::string> catalog_directories() {
  std::vector<std::string> out;
  if (const std::optional<fs::path> binary = this_binary()) {
    out.push_back((binary->parent_path().parent_path() / "share" / "gov" / "catalog").string());
  }
#ifdef GOV_SOURCE_CATALOG_DIR
  if (std::find(out.begin(), out.end(), GOV_SOURCE_CATALOG_DIR) == out.end()) out.push_back(GOV_SOURCE_CATALOG_DIR);
#endif
  return out;
}

Source Source::file(std::string path, std::string root) {
  Source source;
  source.kind_ = Kind::file;
  source.path_ = std::move(path);
  source.root_ = std::move(root);
  return source;
}

Source Source::memory(check::MemorySources files, std::string entry, std::string display) {
  Source source;
  source.kind_ = Kind::memory;
  source.path_ = display.empty() ? entry : std::move(display);
  source.root_ = std::move(entry);
  source.files_ = std::make_shared<const check::MemorySources>(std::move(files));
  return source;
}

Source Source::text(std::string display, std::string text) {
  // The logical path is the display path when it is a plain relative one, else its file name.
  std::string logical = check::normalise_logical_path(display)
                            .value_or(check::normalise_logical_path(fs::path(display).filename().string())
                                          .value_or("policy.gov"));
  check::MemorySources files("memory");
  files.add(logical, std::move(text));
  return memory(std::move(files), std::move(logical), std::move(display));
}

Source Source::version(const store::Version& version) {
  Source source;
  source.kind_ = Kind::version;
  source.version_ = &version;
  return source;
}

Source Source::stored(store::Store& db, std::string policy, std::optional<int64_t> number, VerifyOptions verify) {
  Source source;
  source.kind_ = Kind::stored;
  source.db_ = &db;
  source.path_ = std::move(policy);
  source.number_ = number;
  source.verify_ = std::move(verify);
  return source;
}

Result load(const Source& source, const Request& request) {
  std::unique_ptr<Policy> policy;
  // Stored versions: signatures first (refuse what was changed after signing; decide whether
  // native code may run), then checked from memory.
  std::optional<store::Version> fetched;
  std::optional<std::string> native_refused;  // why cached native code must not run
  if (source.kind_ == Source::Kind::stored || source.kind_ == Source::Kind::version) {
    const store::Version* version = source.version_;
    if (source.kind_ == Source::Kind::stored) {
      auto shown = source.db_->show(source.path_, source.number_);
      if (!shown.ok()) {
        Error error = store_error(shown.error());
        return failure(error.kind, std::move(error.message));
      }
      fetched = std::move(shown.value());
      version = &*fetched;
      if (auto refused = check_version_signature(source.path_, *version, source.verify_, native_refused)) {
        return failure(refused->kind, std::move(refused->message));
      }
    }
    std::string why;
    ErrorKind kind = ErrorKind::policy;
    policy = checked_version(*version, why, kind);
    if (!policy) {
      if (source.kind_ == Source::Kind::stored) why = fmt::format("policy `{}`: {}", source.path_, why);
      return failure(kind, std::move(why));
    }
    if (source.kind_ == Source::Kind::stored) policy->name = source.path_;
  } else {
    policy = std::make_unique<Policy>();
    check::Program& program = policy->checked.program;
    const bool in_memory = source.kind_ == Source::Kind::memory;
    if (!request.follow_imports) {
      if (in_memory) {
        check::SourceRead read = source.files_->read(source.root_, kMaxEntryReadBytes);
        if (!read.ok()) {
          program.read_failed = true;
          program.read_error = fmt::format("cannot read `{}`: {}", source.path_, read.error.reason);
        } else {
          program = entry_only(source.path_, std::move(read.file->text));
        }
      } else {
        program = entry_only_from_disk(source.path_, source.root_);
      }
    } else if (in_memory) {
      // Catalogs by name (`import "aws-ml"`): one stored with the files (under @catalog/) first,
      // else the installation's, as from a file (stdin, an editor's unsaved buffer).
      const check::CatalogSources shipped(catalog_directories());
      const StoredThenShipped catalogs(*source.files_, shipped);
      program = check::read_program(*source.files_, source.root_, source.path_, &catalogs);
    } else {
      program = from_disk(source.path_, source.root_, source.buffers_.get());
    }
    if (program.read_failed) return failure(ErrorKind::io, program.read_error);
    policy->name = fs::path(source.path_).stem().string();
    if (request.stage == Stage::parse) return Result{std::move(policy), std::nullopt};
    // Syntax errors drop declarations; checking what is left would report their absence as
    // more errors. Fix the syntax first, as the user must anyway. Shape errors drop nothing:
    // the checker runs and holds back what it finds in their declarations (check.hpp).
    if (!check::stops_checking(program.diagnostics)) {
      policy->checked.result = check::check(program, {request.require_cluster});
    }
  }
  CheckedPolicy& checked = policy->checked;
  if (!request.unless_content_sha256.empty() && checked.ok()) {
    if (policy->content_sha256.empty()) policy->content_sha256 = store::content_hash(store_files(checked));
    if (policy->content_sha256 == request.unless_content_sha256) {
      policy->unchanged = true;
      return Result{std::move(policy), std::nullopt};
    }
  }
  if (request.stage <= Stage::check) return Result{std::move(policy), std::nullopt};
  if (!checked.ok()) {
    std::string message = rendered(checked);
    return failure(ErrorKind::policy, std::move(message), std::move(policy));
  }
  if (policy->content_sha256.empty()) policy->content_sha256 = store::content_hash(store_files(checked));
  policy->module = lower::lower(checked.result.policy);
  if (request.stage == Stage::lower) return Result{std::move(policy), std::nullopt};
  if (source.kind_ == Source::Kind::stored) {
    if (auto tampered = stored_evaluator(*source.db_, *fetched, source.verify_, native_refused, request.back_end, *policy)) {
      return failure(tampered->kind, std::move(tampered->message));
    }
    return Result{std::move(policy), std::nullopt};
  }
  policy->evaluator = make_evaluator(policy->module, request.back_end, nullptr, policy->code, policy->warning);
  return Result{std::move(policy), std::nullopt};
}

std::unique_ptr<ir::Evaluator> make_evaluator(const ir::Module& module, BackEnd back_end, const jit::ObjectCode* cached,
                                             CodeOrigin& origin, std::string& warning) {
  origin = CodeOrigin::interpreter;
  if (back_end == BackEnd::interpreter) return std::make_unique<interp::Interpreter>(module);
  auto loaded = cached ? jit::load(module, *cached) : jit::compile_and_load(module);
  origin = cached ? CodeOrigin::cached : CodeOrigin::compiled;
  if (!loaded.ok() && cached) {  // a stale or foreign object: recompile
    loaded = jit::compile_and_load(module);
    origin = CodeOrigin::compiled;
  }
  if (loaded.ok()) return std::move(loaded.value());
  origin = CodeOrigin::interpreter;
  warning = fmt::format("the JIT is unavailable ({}); using the interpreter", loaded.error().message);
  return std::make_unique<interp::Interpreter>(module);
}

std::vector<store::PolicyFile> store_files(const CheckedPolicy& checked) {
  std::vector<store::PolicyFile> files;
  // Paths relative to the policy root, so the version loads again wherever gov runs.
  for (const check::ProgramFile& file : checked.program.files) {
    files.push_back({file.logical_path, checked.program.sources.get(file.source).text()});
  }
  return files;
}

Diagnostics CheckedPolicy::diagnostics() const {
  Diagnostics all = program.diagnostics;
  program.add_import_chains(all);
  all.append(result.diagnostics);
  all.sort();
  return all;
}

void DiagnosticPrinter::add(const Diagnostics& diagnostics, const SourceMap& sources) {
  for (const Diagnostic& d : diagnostics.items()) {
    std::string text = render(d, sources);
    if (seen_.contains(text)) continue;
    seen_.insert(rendered_.emplace_back(std::move(text)));
    if (d.severity == Severity::error) ++errors_;
    if (d.severity == Severity::warning) ++warnings_;
  }
}

std::string DiagnosticPrinter::text() const {
  std::string out;
  for (const std::string& r : rendered_) out += r + "\n";
  std::vector<std::string> parts;
  if (errors_) parts.push_back(fmt::format("{} error{}", errors_, errors_ == 1 ? "" : "s"));
  if (warnings_) parts.push_back(fmt::format("{} warning{}", warnings_, warnings_ == 1 ? "" : "s"));
  if (!parts.empty()) out += fmt::format("{}\n", fmt::join(parts, ", "));
  return out;
}

}  // namespace gov::driver
