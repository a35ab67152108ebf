#include "runtime/embed/policy_loader.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "compiler/interp/interpreter.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"

namespace gov::embed {

namespace {

std::vector<store::PolicyFile> source_files(const CheckedPolicy& checked) {
  std::vector<store::PolicyFile> files;
  // Paths relative to the policy root, so the version loads again wherever gov runs.
  for (const check::ProgramFile& file : checked.program.files) {
    files.push_back({file.logical_path, checked.program.sources.get(file.source).text()});
  }
  return files;
}

LoadError store_error(const store::Error& error) {
  const auto kind = error.kind == store::ErrorKind::not_found ? LoadError::Kind::not_found : LoadError::Kind::store;
  return {kind, error.message};
}

LoadResult failure(LoadError error) {
  LoadResult result;
  result.error = std::move(error);
  return result;
}

// The cached object of `stored` for this machine into `cached` when its signature verifies
// with `key` (the version's was verified already); else `note` says why there is none. An
// object signed by another key or whose signature fails is tampering: the error refuses the load.
std::optional<LoadError> signed_object(store::Store& db, const store::Version& stored, const std::string& policy_name,
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
    note = "native code not used: the cached object is not signed";
    return std::nullopt;
  }
  if (!verdict.ok()) {
    return LoadError{LoadError::Kind::signature,
                     fmt::format("version {} of policy `{}`: cached object `{}`: {}", stored.info.number, policy_name,
                                 key_hex, verdict.message)};
  }
  auto code = jit::ObjectCode::deserialize(signed_bytes.bytes);
  if (code.ok()) cached = std::move(code.value());
  else note = fmt::format("the cached object was refused: {}", code.error().message);
  return std::nullopt;
}

}  // namespace

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

LoadResult load_file(const std::string& path, BackEnd back_end) {
  return runnable_from(check_file(path, /*require_cluster=*/true), path, back_end);
}

LoadResult runnable_from(CheckedPolicy checked, const std::string& path, BackEnd back_end) {
  if (checked.program.read_failed) return failure({LoadError::Kind::io, checked.program.read_error});
  if (!checked.ok()) {
    DiagnosticPrinter printer;
    printer.add(checked.diagnostics(), checked.program.sources);
    return failure({LoadError::Kind::policy, printer.text()});
  }
  LoadResult result;
  result.policy = std::make_unique<RunnablePolicy>();
  RunnablePolicy& policy = *result.policy;
  policy.name = std::filesystem::path(path).stem().string();
  policy.content_sha256 = content_sha256(checked);
  policy.checked = std::move(checked);
  policy.module = lower::lower(policy.checked.result.policy);
  policy.evaluator = make_evaluator(policy.module, back_end, nullptr, policy.code, policy.warning);
  return result;
}

std::string content_sha256(const CheckedPolicy& checked) {
  return store::content_hash(source_files(checked));
}

std::optional<std::string> resolve_policy_name(store::Store& db, std::string_view policy, LoadError& error) {
  if (!policy.empty()) return std::string(policy);
  auto policies = db.policies();
  if (!policies.ok()) {
    error = store_error(policies.error());
    return std::nullopt;
  }
  if (policies.value().size() == 1) return policies.value().front().name;
  if (policies.value().empty()) {
    error = {LoadError::Kind::not_found, fmt::format("the store `{}` has no policy yet; run `gov apply FILE` first", db.path())};
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const store::PolicyInfo& p : policies.value()) names.push_back(p.name);
  error = {LoadError::Kind::not_found,
           fmt::format("the store has several policies ({}); choose one by name", fmt::join(names, ", "))};
  return std::nullopt;
}

std::optional<LoadError> check_version_signature(const std::string& policy_name, const store::Version& stored,
                                                 const VerifyOptions& verify, std::optional<std::string>& native_refused) {
  const std::string which = fmt::format("version {} of policy `{}`", stored.info.number, policy_name);
  if (!verify.key) {
    if (verify.require_signature) {
      return LoadError{LoadError::Kind::signature,
                       fmt::format("{}: a signature is required but no verify key is configured", which)};
    }
    native_refused = "no verify key configured";
    return std::nullopt;
  }
  const signing::Verification verdict =
      signing::verify_version(*verify.key, policy_name, stored.info.content_sha256, stored.files, stored.signature);
  if (verdict.ok()) return std::nullopt;
  if (verdict.verdict != signing::Verdict::not_signed) {
    return LoadError{LoadError::Kind::signature, fmt::format("{}: {}", which, verdict.message)};
  }
  if (verify.require_signature) {
    return LoadError{LoadError::Kind::signature, fmt::format("{} is not signed and a signature by key `{}` is required",
                                                             which, verify.key->key_id())};
  }
  native_refused = fmt::format("version {} is not signed", stored.info.number);
  return std::nullopt;
}

LoadResult load_store_version(store::Store& db, const std::string& policy_name, std::optional<int64_t> number,
                              BackEnd back_end, const VerifyOptions& verify) {
  auto version = db.show(policy_name, number);
  if (!version.ok()) return failure(store_error(version.error()));
  // Signatures first: refuse what was changed after signing; decide whether native code may run.
  const store::Version& stored = version.value();
  std::optional<std::string> native_refused;  // why cached native code must not run
  if (auto refused = check_version_signature(policy_name, stored, verify, native_refused)) {
    return failure(std::move(*refused));
  }
  std::string why;
  std::optional<CheckedPolicy> checked = check_stored_version(version.value(), why);
  if (!checked) return failure({LoadError::Kind::policy, fmt::format("policy `{}`: {}", policy_name, why)});
  LoadResult result;
  result.policy = std::make_unique<RunnablePolicy>();
  RunnablePolicy& policy = *result.policy;
  policy.name = policy_name;
  policy.version = version.value().info.number;
  policy.content_sha256 = version.value().info.content_sha256;
  policy.checked = std::move(*checked);
  policy.module = lower::lower(policy.checked.result.policy);
  std::optional<jit::ObjectCode> cached;
  if (back_end == BackEnd::jit) {
    std::optional<LoadError> tampered =
        native_refused ? std::nullopt : signed_object(db, stored, policy_name, policy.module, *verify.key, cached,
                                                      policy.code_note);
    if (tampered) return failure(std::move(*tampered));
    if (native_refused) policy.code_note = fmt::format("native code not used: {}", *native_refused);
  }
  policy.evaluator = make_evaluator(policy.module, back_end, cached ? &*cached : nullptr, policy.code, policy.warning);
  if (policy.code == CodeOrigin::cached) policy.code_note.clear();
  else if (cached) policy.code_note = "the cached object was refused by the loader";
  return result;
}

store::Result<store::ApplyResult> apply_policy(store::Store& db, const CheckedPolicy& checked,
                                               store::ApplyRequest request, std::string& warning,
                                               const signing::SecretKey* sign_key) {
  request.files = source_files(checked);
  if (request.content_sha256.empty()) request.content_sha256 = store::content_hash(request.files);
  if (sign_key) {
    request.signature = signing::sign_version(*sign_key, request.policy, request.content_sha256, request.files);
  }
  // Compile now so that controllers start without codegen (the object is keyed by machine).
  const ir::Module module = lower::lower(checked.result.policy);
  if (auto object = jit::compile(module); object.ok()) {
    const auto bytes = object.value().serialize();
    request.object = store::CompiledObject{jit::to_hex(object.value().key), {bytes.begin(), bytes.end()}, std::nullopt};
    if (sign_key) {
      request.object->signature = signing::sign_object(*sign_key, request.policy, request.content_sha256,
                                                       request.object->key, request.object->bytes);
    }
  } else {
    warning = fmt::format("not caching native code: {}", object.error().message);
  }
  return db.apply(request);
}

}  // namespace gov::embed
