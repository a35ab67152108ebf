// gov::bridge's entry point and the names of the objects it writes.
#include "compiler/bridge/bridge.hpp"

#include <fmt/format.h>

#include "compiler/bridge/hyperpod_export.hpp"
#include "compiler/bridge/kueue_export.hpp"
#include "compiler/check/checker.hpp"
#include "grammar/parse.hpp"

namespace gov::bridge {

// A team's namespace is a Kubernetes DNS label (at most 63 characters). The checker's E0303 keeps
// team names to 41 characters, so `hyperpod-ns-TEAM` always fits (HyperPod itself needs 51 or fewer).
static_assert(std::string_view("hyperpod-ns-").size() + check::kMaxNameLength <= 63);

std::optional<std::string> name_problem(std::string_view text) {
  bool ok = !text.empty() && text.size() <= 63 && text[0] >= 'a' && text[0] <= 'z';
  for (char c : text) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (!ok) return "is not a name gov can write (lower-case letters, digits and hyphens)";
  if (grammar::is_reserved_word(text))
    return "is a reserved word of gov's language, which it cannot write as a name; rename it before importing";
  return std::nullopt;
}

std::string namespace_name(Naming naming, std::string_view team) {
  return naming == Naming::hyperpod ? "hyperpod-ns-" + std::string(team) : std::string(team);
}

std::string cluster_queue_name(Naming naming, std::string_view team) {
  return naming == Naming::hyperpod ? namespace_name(naming, team) + "-clusterqueue" : std::string(team);
}

std::string local_queue_name(Naming naming, std::string_view team) {
  return naming == Naming::hyperpod ? namespace_name(naming, team) + "-localqueue" : std::string(team);
}

std::string cohort_name(Naming naming, const check::Policy& policy) {
  if (naming == Naming::plain && policy.cluster) return policy.cluster->name;
  return "shared-pool";
}

std::string priority_class_name(Naming naming, std::string_view priority_class) {
  return naming == Naming::hyperpod ? std::string(priority_class) + "-priority" : std::string(priority_class);
}

std::vector<Dropped> not_expressible(const check::Policy& policy, Target target) {
  const std::string_view name = target == Target::kueue ? "Kueue" : "SageMaker HyperPod";
  std::vector<Dropped> out;
  for (const check::Rule& rule : policy.rules) {
    out.push_back({fmt::format("rule `{}`: {} has no admission rules", rule.name, name), rule.where});
  }
  if (policy.settings && policy.settings->default_class_at) {
    out.push_back({fmt::format("`default-priority = {}`: {} gives a task without a priority class the lowest priority",
                               policy.classes[static_cast<size_t>(policy.settings->default_class)].name, name),
                   *policy.settings->default_class_at});
  }
  return out;
}

std::string dropped_comment(const std::vector<Dropped>& dropped) {
  if (dropped.empty()) return {};
  std::string out = "# Dropped (--allow-lossy): the policy says more than the target can express.\n";
  for (const Dropped& construct : dropped) out += fmt::format("#   {}\n", construct.what);
  return out;
}

std::vector<Dropped> not_exportable(const check::Policy& policy, Target target) {
  std::vector<Dropped> dropped = not_expressible(policy, target);
  if (target == Target::hyperpod) {
    for (Dropped& construct : hyperpod_not_expressible(policy)) dropped.push_back(std::move(construct));
  }
  return dropped;
}

ExportResult export_policy(const check::Policy& policy, const ExportOptions& options) {
  ExportResult result;
  std::vector<Dropped> dropped = not_exportable(policy, options.target);
  for (const Dropped& construct : dropped) {
    Diagnostic& d = result.problems.report(make_diagnostic(
        Code::not_expressible, construct.where,
        fmt::format("cannot export {}", construct.what), "not exported"));
    if (options.allow_lossy) {
      d.severity = Severity::warning;
      d.label = "dropped";
    } else {
      d.help = "remove it, or pass `--allow-lossy` to export the rest with a comment of what was dropped";
    }
  }
  if (options.target == Target::hyperpod) hyperpod_warnings(policy, result.problems);
  result.problems.sort();
  if (!result.ok()) return result;
  switch (options.target) {
    case Target::kueue:
      result.files.push_back({"kueue.yaml", dropped_comment(dropped) + export_kueue(policy, options)});
      break;
    case Target::hyperpod:
      // JSON has no comments: the script or the template's metadata lists what was dropped.
      result.files = export_hyperpod(policy, options, dropped);
      break;
  }
  return result;
}

}  // namespace gov::bridge
