// The store-backed parts of the driver: choosing a stored policy, checking a version's
// signature, and storing a checked policy with its native code.
#include <fmt/format.h>

#include "compiler/driver/driver.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"

namespace gov::driver {

support::Expected<std::string> resolve_policy_name(store::Store& db, std::string_view policy) {
  if (!policy.empty()) return std::string(policy);
  auto policies = db.policies();
  if (!policies.ok()) {
    const auto& failed = policies.error();
    return Error{failed.kind == store::ErrorKind::not_found ? ErrorKind::not_found : ErrorKind::store, failed.message};
  }
  if (policies.value().size() == 1) return policies.value().front().name;
  if (policies.value().empty()) {
    return Error{ErrorKind::not_found,
                 fmt::format("the store `{}` has no policy yet; run `gov apply FILE` first", db.path())};
  }
  std::vector<std::string> names;
  for (const store::PolicyInfo& p : policies.value()) names.push_back(p.name);
  return Error{ErrorKind::not_found,
               fmt::format("the store has several policies ({}); choose one by name", fmt::join(names, ", "))};
}

std::optional<Error> check_version_signature(const std::string& policy_name, const store::Version& stored,
                                             const VerifyOptions& verify, std::optional<std::string>& native_refused) {
  const std::string which = fmt::format("version {} of policy `{}`", stored.info.number, policy_name);
  if (!verify.key) {
    if (verify.require_signature) {
      return Error{ErrorKind::signature,
                   fmt::format("{}: a signature is required but no verify key is configured", which)};
    }
    native_refused = "no verify key configured";
    return std::nullopt;
  }
  const signing::Verification verdict =
      signing::verify_version(*verify.key, policy_name, stored.info.content_sha256, stored.files, stored.signature);
  if (verdict.ok()) return std::nullopt;
  if (verdict.verdict != signing::Verdict::not_signed) {
    return Error{ErrorKind::signature, fmt::format("{}: {}", which, verdict.message)};
  }
  if (verify.require_signature) {
    return Error{ErrorKind::signature, fmt::format("{} is not signed and a signature by key `{}` is required", which,
                                                     verify.key->key_id())};
  }
  native_refused = fmt::format("version {} is not signed", stored.info.number);
  return std::nullopt;
}

store::Result<store::ApplyResult> apply_policy(store::Store& db, const CheckedPolicy& checked,
                                               store::ApplyRequest request, std::string& warning,
                                               const signing::SecretKey* sign_key) {
  request.files = store_files(checked);
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

}  // namespace gov::driver
