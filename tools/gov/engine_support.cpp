#include "tools/gov/engine_support.hpp"

#include <fmt/format.h>

#include "compiler/interp/interpreter.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "runtime/store/store.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {

std::vector<OptionSpec> engine_options() {
  return {{"engine", "NAME", "evaluator back end: `jit` (native code, the default) or `interp` (the reference interpreter)"},
          {"dialect", "NAME", "message wording: `head` (Kueue HEAD, default) or `kueue-v0.9` (early HyperPod clusters)"}};
}

std::optional<engine::EngineOptions> engine_options_from(const Args& args) {
  engine::EngineOptions options;
  const std::string dialect = args.value("dialect").value_or("head");
  if (dialect == "head") {
    options.dialect = engine::MessageDialect::head;
  } else if (dialect == "kueue-v0.9") {
    options.dialect = engine::MessageDialect::kueue_v0_9;
  } else {
    fmt::print(stderr, "error: unknown dialect `{}` (expected `head` or `kueue-v0.9`)\n", dialect);
    return std::nullopt;
  }
  return options;
}

std::unique_ptr<ir::Evaluator> make_evaluator(const ir::Module& module, std::string_view engine_name,
                                             const gov::jit::ObjectCode* cached) {
  if (engine_name == "interp") return std::make_unique<interp::Interpreter>(module);
  auto loaded = cached ? jit::load(module, *cached) : jit::compile_and_load(module);
  if (!loaded.ok() && cached) loaded = jit::compile_and_load(module);  // a stale object: recompile
  if (loaded.ok()) return std::move(loaded.value());
  fmt::print(stderr, "warning: the JIT is unavailable ({}); using the interpreter\n", loaded.error().message);
  return std::make_unique<interp::Interpreter>(module);
}

std::unique_ptr<RunnablePolicy> load_runnable(const std::string& path, const Args& args, int& status) {
  const std::string engine_name = args.value("engine").value_or("jit");
  if (engine_name != "interp" && engine_name != "jit") {
    fmt::print(stderr, "error: unknown engine `{}` (expected `jit` or `interp`)\n", engine_name);
    status = kUsage;
    return nullptr;
  }
  std::optional<CheckedPolicy> checked = load_checked(path, /*require_cluster=*/true);
  if (!checked) {
    status = kUsage;
    return nullptr;
  }
  if (!checked->ok()) {
    DiagnosticPrinter printer;
    printer.add(checked->diagnostics(), checked->program.sources);
    fmt::print(stderr, "{}", printer.text());
    status = kFailed;
    return nullptr;
  }
  auto runnable = std::make_unique<RunnablePolicy>();
  runnable->checked = std::move(*checked);
  runnable->module = lower::lower(runnable->checked.result.policy);
  runnable->evaluator = make_evaluator(runnable->module, engine_name);
  return runnable;
}

engine::TaskSpec task_from_step(const check::TestStep& step) {
  engine::TaskSpec task;
  task.id = step.task;
  task.team = step.team;
  task.priority = step.priority;
  task.instance_type = step.instance_type;
  task.instances = step.instances;
  task.amounts = step.amounts;
  task.pods = step.pods;
  task.labels = step.labels;
  task.duration = step.duration_ms;
  return task;
}

}  // namespace gov::cli

namespace gov::cli {

std::unique_ptr<RunnablePolicy> load_runnable_from_store(const Args& args, int& status) {
  status = kFailed;
  store::OpenOptions open_options;
  open_options.create = false;
  open_options.read_only = true;
  const std::string path = args.value("db").value_or(store::default_path());
  auto db = store::Store::open(path, open_options);
  if (!db.ok()) {
    fmt::print(stderr, "error: store `{}`: {}\n", path, db.error().message);
    return nullptr;
  }
  std::string policy_name = args.value("policy").value_or("");
  if (policy_name.empty()) {
    auto policies = db.value().policies();
    if (!policies.ok() || policies.value().size() != 1) {
      fmt::print(stderr, "error: choose the policy with --policy NAME\n");
      return nullptr;
    }
    policy_name = policies.value().front().name;
  }
  auto version = db.value().show(policy_name);
  if (!version.ok()) {
    fmt::print(stderr, "error: {}\n", version.error().message);
    return nullptr;
  }
  std::optional<CheckedPolicy> checked = rebuild_version(version.value());
  if (!checked) {
    fmt::print(stderr, "error: version {} of `{}` no longer checks with this gov\n", version.value().info.number, policy_name);
    return nullptr;
  }
  auto runnable = std::make_unique<RunnablePolicy>();
  runnable->checked = std::move(*checked);
  runnable->module = lower::lower(runnable->checked.result.policy);
  const std::string engine_name = args.value("engine").value_or("jit");
  std::optional<jit::ObjectCode> cached;
  if (engine_name == "jit") {
    if (auto key = jit::key_for(runnable->module); key.ok()) {
      auto bytes = db.value().get_object(policy_name, version.value().info.number, jit::to_hex(key.value()));
      if (bytes.ok() && bytes.value()) {
        auto object = jit::ObjectCode::deserialize(*bytes.value());
        if (object.ok()) cached = std::move(object.value());
      }
    }
  }
  const uint64_t codegen_before = jit::codegen_count();
  runnable->evaluator = make_evaluator(runnable->module, engine_name, cached ? &*cached : nullptr);
  if (engine_name == "jit") {
    fmt::print(stderr, "gov: `{}` version {}: {}\n", policy_name, version.value().info.number,
               jit::codegen_count() == codegen_before ? "loaded cached native code (no codegen)"
                                                      : "compiled native code (no cached object for this machine)");
  }
  status = kOk;
  return runnable;
}

}  // namespace gov::cli
