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

LoadResult load_store_version(store::Store& db, const std::string& policy_name, std::optional<int64_t> number,
                              BackEnd back_end) {
  auto version = db.show(policy_name, number);
  if (!version.ok()) return failure(store_error(version.error()));
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
    policy.code_note = "no cached object for this machine";
    if (auto key = jit::key_for(policy.module); !key.ok()) {
      policy.code_note = fmt::format("no cache key: {}", key.error().message);
    } else if (auto bytes = db.get_object(policy_name, policy.version, jit::to_hex(key.value())); !bytes.ok()) {
      policy.code_note = fmt::format("the cached object cannot be read: {}", bytes.error().message);
    } else if (bytes.value()) {
      auto object = jit::ObjectCode::deserialize(*bytes.value());
      if (object.ok()) cached = std::move(object.value());
      else policy.code_note = fmt::format("the cached object was refused: {}", object.error().message);
    }
  }
  policy.evaluator = make_evaluator(policy.module, back_end, cached ? &*cached : nullptr, policy.code, policy.warning);
  if (policy.code == CodeOrigin::cached) policy.code_note.clear();
  else if (cached) policy.code_note = "the cached object was refused by the loader";
  return result;
}

store::Result<store::ApplyResult> apply_policy(store::Store& db, const CheckedPolicy& checked,
                                               store::ApplyRequest request, std::string& warning) {
  request.files = source_files(checked);
  // Compile now so that controllers start without codegen (the object is keyed by machine).
  const ir::Module module = lower::lower(checked.result.policy);
  if (auto object = jit::compile(module); object.ok()) {
    const auto bytes = object.value().serialize();
    request.object = store::CompiledObject{jit::to_hex(object.value().key), {bytes.begin(), bytes.end()}};
  } else {
    warning = fmt::format("not caching native code: {}", object.error().message);
  }
  return db.apply(request);
}

}  // namespace gov::embed
