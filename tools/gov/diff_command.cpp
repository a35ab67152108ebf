// `gov diff`: what changes between two policies, in cluster terms.
#include <fmt/format.h>

#include "compiler/diff/diff.hpp"
#include "compiler/support/terminal_text.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {
namespace {

int compare_policies(const Args& args) {
  const std::string format = args.value("format").value_or("text");
  if (format != "text" && format != "json" && format != "markdown") {
    fmt::print(stderr, "error: unknown format `{}` (expected text, json or markdown)\n", escape_for_terminal(format));
    return kUsage;
  }
  if (!args.has("files")) return run_store_diff(args);
  if (args.positional.size() != 2) {
    fmt::print(stderr, "error: `gov diff --files` takes two files: OLD NEW\n");
    return kUsage;
  }
  // `/dev/null` is no policy, as in `git diff`: the pull request that adds a policy file, or
  // deletes one, compares it with nothing (a reviewer's finding, session 43).
  const auto is_none = [](const std::string& path) { return path == "/dev/null"; };
  if (is_none(args.positional[0]) && is_none(args.positional[1])) {
    fmt::print(stderr, "error: `gov diff --files`: at most one side can be `/dev/null`\n");
    return kUsage;
  }
  if (is_none(args.positional[0]) && args.has("state")) {
    fmt::print(stderr, "error: `--state` holds what an old policy admitted; OLD is `/dev/null`, no policy\n");
    return kUsage;
  }
  int status = kOk;
  const check::Policy none;
  std::unique_ptr<driver::Policy> before, after;
  for (size_t side = 0; side < 2; ++side) {
    if (is_none(args.positional[side])) continue;
    (side == 0 ? before : after) = load_file_for_diff(args.positional[side], root_option(args), status);
    if (!(side == 0 ? before : after)) return status;
  }
  std::optional<diff::HeldAmounts> held;
  if (args.has("state")) {
    held = held_in_state(args, args.positional[0], status);
    if (!held) return status;
  }
  return print_diff(args, before ? before->checked.result.policy : none, after ? after->checked.result.policy : none,
                    args.positional[0], args.positional[1], held ? &*held : nullptr);
}

int run_diff(const Args& args) {
  const int status = compare_policies(args);
  if (status == kDiffChanged) return kFailed;
  return args.has("exit-code") && status == kFailed ? kUsage : status;
}

}  // namespace

/// Loads and checks a complete policy, printing its problems; nullptr when it has errors.
std::unique_ptr<driver::Policy> load_file_for_diff(const std::string& path, const std::string& root, int& status) {
  std::unique_ptr<driver::Policy> policy =
      load_policy(driver::Source::file(path, root), driver::Request::up_to(driver::Stage::check), status);
  if (!policy) return nullptr;
  if (!policy->checked.ok()) {
    DiagnosticPrinter printer;
    printer.add(policy->checked.diagnostics(), policy->checked.program.sources);
    fmt::print(stderr, "{}error: `{}` has errors; cannot compare it\n", printer.text(), display_path(path));
    status = kFailed;
    return nullptr;
  }
  return policy;
}

std::optional<diff::HeldAmounts> held_in_state(const Args& args, const std::optional<std::string>& before_file, int& status) {
  std::optional<gov::Options> options = api_options_from(args);
  if (!options) {
    status = kUsage;
    return std::nullopt;
  }
  // The state was admitted under the old policy: its usage is what the old policy charges.
  options->back_end = gov::Options::BackEnd::interpreter;
  std::optional<gov::Engine> engine;
  try {
    engine.emplace(before_file ? gov::Engine::compile_file(*before_file, std::move(*options))
                               : gov::Engine::open_store(args.value("db").value_or(store::default_path()), std::move(*options)));
  } catch (const gov::Error& error) {
    fmt::print(stderr, "error: {}\n", escape_for_terminal(error.what()));
    status = kFailed;
    return std::nullopt;
  }
  if (!load_state_file(*engine, *args.value("state"), status)) return std::nullopt;
  diff::HeldAmounts held;
  for (const gov::UsageRow& row : engine->snapshot().usage) {
    held[{row.team, row.flavor}][model::index(row.resource)] += row.used;
  }
  return held;
}

int print_diff(const Args& args, const check::Policy& before, const check::Policy& after, std::string_view before_name,
               std::string_view after_name, const diff::HeldAmounts* held) {
  const diff::PolicyDiff d = diff::compare(before, after, held);
  const std::string format = args.value("format").value_or("text");
  if (format == "json") fmt::print("{}", diff::render_json(d, before_name, after_name));
  else if (format == "markdown") fmt::print("{}", diff::render_markdown(d, before_name, after_name));
  else fmt::print("{}", diff::render_text(d, before_name, after_name));
  return args.has("exit-code") && !d.empty() ? kDiffChanged : kOk;
}

Command diff_command() {
  return {{"diff", "gov diff [A] [B] | gov diff FILE | gov diff --files OLD NEW [--format text|json|markdown] [--state STATE.json] [--exit-code]",
           "Compare two policies in cluster terms: quotas, limits, classes, rules, and their consequences.",
           "Prints one summary line per changed thing (a quota added, a setting, a rule), the consequences\n"
           "worth a reviewer's eye (a team or quota removed: its tasks become invalid on reload; a team\n"
           "stops lending; classes stop mattering under fcfs; a deny rule is gone; a team loses guaranteed\n"
           "GPUs; guaranteed quota exceeds capacity; a class now outranks another), then every changed field\n"
           "before -> after with deltas. `markdown` is ready to paste as a pull-request comment; `json` has\n"
           "typed fields (team, instance_type, resource, property; numbers exact, in vCPUs and GiB).\n"
           "Without --files it compares stored versions A and B (default: the active version and its parent);\n"
           "`gov diff FILE` compares the active stored version with FILE (plan before apply; without --policy,\n"
           "of the policy named after FILE, as `gov apply FILE` names it, when the store has it). With\n"
           "--state, also warns where a lowered nominal quota falls below what the state's admitted tasks hold\n"
           "(Kueue evicts nothing on a quota change; the excess becomes borrowed). Exit 0, or with\n"
           "--exit-code 1 when something changed, and then 2 for every failure (a file with errors, a\n"
           "stored version refused), so that a gate tells a change from a failure.",
           {{"files", "", "compare two policy files (OLD NEW; either may be /dev/null: no policy)"},
            root_option_spec(),
            {"db", "PATH|URL", "the store: an SQLite file or a postgresql:// URL (default $GOV_DB, else .gov/policies.db)"},
            {"policy", "NAME", "the policy in the store (default: the only one)"},
            {"format", "FORMAT", "text (default), json or markdown"},
            {"state", "STATE.json", "a cluster state (`gov eval --state`'s format) admitted under the old policy"},
            {"exit-code", "", "exit 1 when the policies differ (as `git diff --exit-code`), 2 on any failure"},
            {"verify-key", "FILE", "stored versions: the Ed25519 public key they must be signed with (default $GOV_VERIFY_KEY)"},
            {"require-signature", "", "stored versions: refuse one that is not signed by the verify key"}}},
          run_diff};
}

}  // namespace gov::cli
