#include "tools/gov/engine_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "compiler/check/check.hpp"
#include "compiler/support/terminal_text.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/trace/json.hpp"
#include "runtime/trace/trace_reader.hpp"
#include "runtime/trace/units.hpp"
#include "runtime/store/store.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/kube_inputs.hpp"

namespace gov::cli {

std::vector<OptionSpec> engine_options() {
  return {{"engine", "NAME", "evaluator back end: `jit` (native code, the default) or `interp` (the reference interpreter)"},
          {"dialect", "NAME", "message wording: `head` (Kueue HEAD, default) or `kueue-v0.9` (early HyperPod clusters)"},
          root_option_spec()};
}

std::vector<OptionSpec> verify_options() {
  return {{"verify-key", "FILE",
           "the Ed25519 public key (`gov keygen`'s .pub, default $GOV_VERIFY_KEY) stored versions are signed with; "
           "only then does cached native code run"},
          {"require-signature", "", "refuse a stored version that is not signed by the verify key"}};
}

std::optional<driver::VerifyOptions> verify_options_from(const Args& args) {
  driver::VerifyOptions verify;
  verify.require_signature = args.has("require-signature");
  std::optional<std::string> path = args.value("verify-key");
  if (!path) {
    if (const char* env = std::getenv("GOV_VERIFY_KEY"); env && *env) path = env;
  }
  if (!path) return verify;
  auto key = signing::load_public_key(*path);
  if (!key.ok()) {
    fmt::print(stderr, "error: {}\n", key.error().message);
    return std::nullopt;
  }
  verify.key = key.value();
  return verify;
}

bool signature_accepted(const std::string& policy, const store::Version& version, const driver::VerifyOptions& verify) {
  std::optional<std::string> native_refused;
  std::optional<driver::Error> refused = driver::check_version_signature(policy, version, verify, native_refused);
  if (!refused) return true;
  fmt::print(stderr, "error: {}\n", refused->message);
  return false;
}

namespace {

/// The API's options from the command line; nullopt after printing why one is wrong.

void print_api_error(const gov::Error& error) {
  const std::string message = error.what();
  if (error.code() == gov::ErrorCode::policy && message.find('\n') != std::string::npos) {
    fmt::print(stderr, "{}", message);  // rendered diagnostics
    return;
  }
  fmt::print(stderr, "error: {}\n", escape_for_terminal(with_option_hint(message)));
}

// Whether the store at `path` opens for reading: tells a store that cannot be opened (exit 2)
// from a version in it that the engine refused (exit 1), which share ErrorCode::store.
bool store_opens(const std::string& path) {
  store::OpenOptions options;
  options.create = false;
  options.read_only = true;
  return store::Store::open(path, options).ok();
}

}  // namespace

std::string with_option_hint(std::string message) {
  if (message.find("several policies") != std::string::npos) message += " with --policy NAME";
  return message;
}

void warn_quotas_above_capacity(const gov::Engine& engine, std::string_view label) {
  const std::shared_ptr<const driver::Policy> policy = EngineInternals::runnable(engine);
  if (!policy || !policy->checked.ok()) return;
  // The lint rule itself (W0101), so that its `# gov:allow(quota-exceeds-capacity)` holds here too.
  const Diagnostics found = check::lint(policy->checked.result.policy, policy->checked.program);
  for (const Diagnostic& d : found.items()) {
    if (d.code != Code::quota_exceeds_capacity) continue;
    fmt::print(stderr, "warning: {}{}: admission is decided on quotas alone, so this replay may hold more than exists "
                       "(`gov lint`: W0101)\n",
               label.empty() ? std::string() : fmt::format("{}: ", escape_for_terminal(label)),
               escape_for_terminal(d.message));
  }
}

std::optional<gov::Engine> open_engine(const Args& args, const std::optional<std::string>& file, int& status,
                                       bool replay) {
  std::optional<gov::Options> options = api_options_from(args);
  if (!options) {
    status = kUsage;
    return std::nullopt;
  }
  if (replay) {
    options->remember_decisions = false;
    options->count_decisions = args.has("metrics");  // the counters show only in --metrics
  }
  std::optional<gov::Engine> engine;
  const std::string store_path = args.value("db").value_or(store::default_path());
  try {
    engine.emplace(file ? gov::Engine::compile_file(*file, std::move(*options))
                        : gov::Engine::open_store(store_path, std::move(*options)));
  } catch (const gov::Error& error) {
    print_api_error(error);
    // Exit 2 for I/O and usage problems, and for a store that cannot be opened (missing,
    // damaged, locked, newer) or has no such policy, as the store commands do
    // (docs/interfaces.md); 1 for a policy at fault, a stored version a signature check refuses
    // included.
    const gov::ErrorCode code = error.code();
    const bool usage = code == gov::ErrorCode::io || code == gov::ErrorCode::invalid_argument ||
                       (!file && (code == gov::ErrorCode::not_found ||
                                  (code == gov::ErrorCode::store && !store_opens(store_path))));
    status = usage ? kUsage : kFailed;
    return std::nullopt;
  }
  const gov::PolicyInfo policy = engine->policy();
  if (!policy.warning.empty()) fmt::print(stderr, "warning: {}\n", escape_for_terminal(policy.warning));
  if (!file && policy.back_end == "jit") {
    fmt::print(stderr, "gov: `{}` version {}: {}\n", escape_for_terminal(policy.name), policy.version,
               policy.cached_code ? std::string("loaded cached native code (no codegen)")
                                  : fmt::format("compiled native code ({})", policy.code_note));
  }
  status = kOk;
  return engine;
}

bool until_option(const Args& args, std::optional<gov::Time>& until) {
  const std::optional<std::string> text = args.value("until");
  if (!text) return true;
  // Seconds with at most three decimals, as a trace's `at` (the trace reader's exact number
  // conversion), and within its 10^12 s. The grammar is checked first: digits, then a point and
  // digits (number_units expects a JSON number).
  const std::string& t = *text;
  const size_t dot = t.find('.');
  const auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string_view view(t);
  const std::string_view whole = view.substr(0, dot);
  const bool number = digits(whole) && (whole == "0" || whole.front() != '0') &&
                      (dot == std::string::npos || digits(view.substr(dot + 1)));
  const trace::ExactNumber millis = number ? trace::number_units(t, trace::kMillisPerSecond) : trace::ExactNumber{};
  if (millis.status != trace::NumberStatus::ok || millis.value > 1'000'000'000'000'000) {
    fmt::print(stderr, "error: --until takes a time in seconds (at most 3 decimals, at most 10^12), found `{}`\n",
               escape_for_terminal(t));
    return false;
  }
  until = millis.value;
  return true;
}

std::optional<gov::Options> api_options_from(const Args& args) {
  gov::Options options;
  options.policy_root = root_option(args);
  const std::string back_end = args.value("engine").value_or("jit");
  if (back_end == "interp") {
    options.back_end = gov::Options::BackEnd::interpreter;
  } else if (back_end != "jit") {
    fmt::print(stderr, "error: unknown engine `{}` (expected `jit` or `interp`)\n", escape_for_terminal(back_end));
    return std::nullopt;
  }
  const std::string dialect = args.value("dialect").value_or("head");
  if (dialect == "kueue-v0.9") {
    options.dialect = gov::Options::Dialect::kueue_v0_9;
  } else if (dialect != "head") {
    fmt::print(stderr, "error: unknown dialect `{}` (expected `head` or `kueue-v0.9`)\n", escape_for_terminal(dialect));
    return std::nullopt;
  }
  if (std::optional<std::string> key = args.value("verify-key")) {
    options.verify_key_path = *key;
  } else if (const char* env = std::getenv("GOV_VERIFY_KEY"); env && *env) {
    options.verify_key_path = env;
  }
  options.require_signature = args.has("require-signature");
  options.policy = args.value("policy").value_or("");
  // A command replays whole traces: the trace reader's bound is the one that applies.
  options.max_tasks = std::numeric_limits<std::size_t>::max();
  // Commands never ask decision() about an ended task: keep no history of them.
  options.remembered_ended_tasks = 0;
  return options;
}

namespace {
constexpr size_t kMaxInputBytes = 64u << 20;
}  // namespace

std::optional<trace::JsonValue> read_json_file(const std::string& path) {
  std::string error;
  std::optional<std::string> text = read_file(path, kMaxInputBytes, error);
  if (!text) {
    fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(path), escape_for_terminal(error));
    return std::nullopt;
  }
  support::Expected<trace::JsonValue> parsed = trace::parse_json(*text);
  if (!parsed) {
    fmt::print(stderr, "error: {}: {}\n", display_path(path), escape_for_terminal(parsed.error().message));
    return std::nullopt;
  }
  return std::move(parsed).value();
}

bool kubernetes_json(const std::string& path, const trace::JsonValue& json) {
  if (json.kind != trace::JsonKind::object || !json.find("apiVersion") || !json.find("kind")) return false;
  fmt::print(stderr,
             "error: {}: this is a Kubernetes object (`kubectl get -o json`); gov reads Kubernetes objects from a file "
             "named `.yaml` or `.yml` (JSON is YAML): rename it\n",
             display_path(path));
  return true;
}

std::string located(const std::string& path, const support::Error& error) {
  if (!error.position) return display_path(path);
  return fmt::format("{}:{}:{}", display_path(path), error.position->line, error.position->column);
}

std::string message_after_location(const support::Error& error) {
  std::string_view message = error.message;
  // The readers say where in the message too (`line 14, column 31: ...`), for callers that
  // print no file name; after `FILE:14:31:` it would say it twice.
  if (error.position) {
    const std::string prefix = fmt::format("line {}, column {}: ", error.position->line, error.position->column);
    if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
  }
  return escape_for_terminal(message);
}

std::optional<gov::Time> load_state_file(gov::Engine& engine, const std::string& path, int& status,
                                         std::optional<int64_t>* origin) {
  std::optional<gov::ClusterState> state;
  if (is_yaml_path(path)) {
    state = read_workloads_state(path, *EngineInternals::module(engine), queue_naming(engine), status, origin);
    if (!state) return std::nullopt;
  } else {
    std::optional<trace::JsonValue> json = read_json_file(path);
    if (!json) {
      status = kUsage;
      return std::nullopt;
    }
    if (kubernetes_json(path, *json)) {
      status = kFailed;
      return std::nullopt;
    }
    support::Expected<gov::ClusterState> read = trace::read_cluster_state(*json, *EngineInternals::module(engine));
    if (!read) {
      fmt::print(stderr, "error: {}: {}\n", located(path, read.error()), message_after_location(read.error()));
      status = kFailed;
      return std::nullopt;
    }
    state = std::move(read).value();
  }
  for (const gov::LoadFailure& failure : engine.load_state(*state)) {
    const bool admitted = failure.list == gov::LoadFailure::List::admitted;
    // A YAML state's entries are Workloads, named by their ids rather than list positions.
    const std::string entry =
        !is_yaml_path(path) ? fmt::format("{}[{}]", admitted ? "admitted" : "pending", failure.index)
                            : fmt::format("{} Workload `{}`", admitted ? "admitted" : "pending",
                                          admitted ? state->admitted[failure.index].task.id : state->pending[failure.index].task.id);
    fmt::print(stderr, "warning: {}: {}: {}\n", display_path(path), escape_for_terminal(entry),
               escape_for_terminal(failure.message));
  }
  return state->at;
}

}  // namespace gov::cli
