// `gov diff`: what changes between two policies, in cluster terms.
#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "compiler/diff/diff.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

/// Loads and checks a complete policy, printing its problems; nullopt when it has errors.
std::optional<CheckedPolicy> load_for_diff(const std::string& path, const std::string& root, int& status) {
  std::unique_ptr<driver::Policy> policy =
      load_policy(driver::Source::file(path, root), driver::Request::up_to(driver::Stage::check), status);
  if (!policy) return std::nullopt;
  std::optional<CheckedPolicy> checked = std::move(policy->checked);
  if (!checked->ok()) {
    DiagnosticPrinter printer;
    printer.add(checked->diagnostics(), checked->program.sources);
    fmt::print(stderr, "{}error: `{}` has errors; cannot compare it\n", printer.text(), display_path(path));
    status = kFailed;
    return std::nullopt;
  }
  return checked;
}

int run_diff(const Args& args) {
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
  int status = kOk;
  std::optional<CheckedPolicy> before = load_for_diff(args.positional[0], root_option(args), status);
  std::optional<CheckedPolicy> after = load_for_diff(args.positional[1], root_option(args), status);
  if (!before || !after) return status;
  const diff::PolicyDiff d = diff::compare(before->result.policy, after->result.policy);
  const std::string& a = args.positional[0];
  const std::string& b = args.positional[1];
  if (format == "json") fmt::print("{}", diff::render_json(d, a, b));
  if (format == "markdown") fmt::print("{}", diff::render_markdown(d, a, b));
  if (format == "text") fmt::print("{}", diff::render_text(d, a, b));
  return kOk;
}

}  // namespace

Command diff_command() {
  return {{"diff", "gov diff [A] [B] | gov diff --files OLD NEW [--format text|json|markdown]",
           "Compare two policies in cluster terms: quotas, limits, classes, rules, and their consequences.",
           "Reports per team and instance type the nominal, borrowing and lending limits before -> after with\n"
           "deltas, sharing, preemption, weights, classes, rules and capacity, then consequences worth a\n"
           "reviewer's eye (a team loses guaranteed GPUs, guaranteed quota now exceeds capacity, a class now\n"
           "outranks another). `markdown` is ready to paste as a pull-request comment. No changes: says so, exit 0.\n"
           "Without --files it compares stored versions A and B (default: the active version and its parent).",
           {{"files", "", "compare two policy files (OLD NEW)"},
            root_option_spec(),
            {"db", "PATH", "the store (default $GOV_DB, else .gov/policies.db)"},
            {"policy", "NAME", "the policy in the store (default: the only one)"},
            {"format", "FORMAT", "text (default), json or markdown"},
            {"verify-key", "FILE", "stored versions: the Ed25519 public key they must be signed with (default $GOV_VERIFY_KEY)"},
            {"require-signature", "", "stored versions: refuse one that is not signed by the verify key"}}},
          run_diff};
}

}  // namespace gov::cli
