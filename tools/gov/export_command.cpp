// `gov export`: a checked policy as the objects that govern a cluster (gov::bridge).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "compiler/bridge/bridge.hpp"
#include "compiler/diagnostics/atomic_write.hpp"
#include "compiler/support/terminal_text.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/json_inputs.hpp"

namespace gov::cli {
namespace {

/// Removes from `dir` the files an earlier `gov export hyperpod` wrote that this one does not
/// (`apply.sh`'s documents: `*cluster-scheduler-config.json`, `*compute-quota-*.json`), so that the
/// directory holds one plan; other files are left alone.
void remove_stale_plan(const std::string& dir, const std::vector<bridge::ExportedFile>& files) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool ours = name.ends_with(".json") && (name == "cluster-scheduler-config.json" ||
                                                  name == "update-cluster-scheduler-config.json" ||
                                                  name.starts_with("compute-quota-") || name.starts_with("update-compute-quota-"));
    if (!ours) continue;
    const bool written = std::any_of(files.begin(), files.end(), [&](const bridge::ExportedFile& f) { return f.name == name; });
    if (!written) std::filesystem::remove(it->path(), ec);
  }
}


/// The value of option `name` among `choices` (the first is the default); nullopt after
/// printing a usage error.
std::optional<std::string> choice(const Args& args, std::string_view name, std::initializer_list<std::string_view> choices) {
  const std::optional<std::string> given = args.value(name);
  if (!given) return std::string(*choices.begin());
  for (std::string_view word : choices) {
    if (*given == word) return *given;
  }
  fmt::print(stderr, "error: unknown value `{}` for `--{}` (expected {})\n", escape_for_terminal(*given), name,
             fmt::join(choices, " or "));
  return std::nullopt;
}

/// The cluster's current objects from the describe-* and list-compute-quotas outputs in `dir`
/// (its `.json` files, in name order); nullopt after printing the error.
std::optional<bridge::HyperpodState> current_state(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    fmt::print(stderr, "error: `--current {}`: not a directory\n", escape_for_terminal(dir));
    return std::nullopt;
  }
  std::optional<std::vector<bridge::ImportInput>> inputs = read_json_inputs({dir});
  if (!inputs) return std::nullopt;
  support::Expected<bridge::HyperpodState> state = bridge::read_hyperpod_state(*inputs);
  if (!state) {
    fmt::print(stderr, "error: `--current {}`: {}\n", escape_for_terminal(dir), escape_for_terminal(state.error().message));
    return std::nullopt;
  }
  return std::move(state.value());
}

int run_export(const Args& args) {
  if (args.positional.size() != 2 || (args.positional[0] != "kueue" && args.positional[0] != "hyperpod")) {
    fmt::print(stderr, "error: `gov export` takes a target (`kueue` or `hyperpod`) and one POLICY file\n");
    return kUsage;
  }
  bridge::ExportOptions options;
  options.target = args.positional[0] == "kueue" ? bridge::Target::kueue : bridge::Target::hyperpod;
  const bool hyperpod = options.target == bridge::Target::hyperpod;
  for (const char* option : {"api", "naming"}) {
    if (hyperpod && args.has(option)) {
      fmt::print(stderr, "error: `--{}` applies to `gov export kueue` only\n", option);
      return kUsage;
    }
  }
  for (const char* option : {"cluster-arn", "out", "format", "current"}) {
    if (!hyperpod && args.has(option)) {
      fmt::print(stderr, "error: `--{}` applies to `gov export hyperpod` only\n", option);
      return kUsage;
    }
  }
  options.cluster_arn = args.value("cluster-arn").value_or("");
  // The API's pattern for ClusterArn (sagemaker-task-governance-api.json).
  static const std::regex kArn("arn:aws[a-z\\-]*:sagemaker:[a-z0-9\\-]*:[0-9]{12}:cluster/[a-z0-9]{12}");
  if (args.has("cluster-arn") && !std::regex_match(options.cluster_arn, kArn)) {
    fmt::print(stderr, "error: `{}` is not a HyperPod cluster ARN (arn:aws:sagemaker:REGION:ACCOUNT:cluster/ID)\n",
               escape_for_terminal(options.cluster_arn));
    return kUsage;
  }
  const std::optional<std::string> api = choice(args, "api", {"v1beta2", "v1beta1"});
  const std::optional<std::string> naming = choice(args, "naming", {"hyperpod", "plain"});
  const std::optional<std::string> format = choice(args, "format", {"cli-json", "cloudformation"});
  if (!api || !naming || !format) return kUsage;
  options.format = *format == "cli-json" ? bridge::HyperpodFormat::cli_json : bridge::HyperpodFormat::cloudformation;
  options.api = *api == "v1beta2" ? bridge::KueueApi::v1beta2 : bridge::KueueApi::v1beta1;
  options.naming = *naming == "hyperpod" ? bridge::Naming::hyperpod : bridge::Naming::plain;
  options.allow_lossy = args.has("allow-lossy");
  if (const std::optional<std::string> current = args.value("current")) {
    if (options.format == bridge::HyperpodFormat::cloudformation) {
      fmt::print(stderr, "error: `--current` applies to `--format cli-json` only (a CloudFormation stack updates itself)\n");
      return kUsage;
    }
    std::optional<bridge::HyperpodState> state = current_state(*current);
    if (!state) return kUsage;
    options.current = std::move(*state);
  }

  int status = kOk;
  std::optional<driver::Source> source = source_argument(args.positional[1], status);
  if (!source) return status;
  std::unique_ptr<driver::Policy> policy = load_policy(*source, driver::Request::up_to(driver::Stage::check), status);
  if (!policy) return status;
  const CheckedPolicy& checked = policy->checked;
  DiagnosticPrinter printer;
  if (!checked.ok()) {
    printer.add(checked.diagnostics(), checked.program.sources);
    fmt::print(stderr, "{}", printer.text());
    return kFailed;
  }
  const bridge::ExportResult result = bridge::export_policy(checked.result.policy, options);
  if (!result.problems.items().empty()) {
    printer.add(result.problems, checked.program.sources);
    fmt::print(stderr, "{}", printer.text());
  }
  if (!result.ok()) return kFailed;
  const std::optional<std::string> out = args.value("out");
  std::vector<bridge::ExportedFile> files = result.files;
  if (files.empty()) {
    constexpr const char* kNoChanges = "no changes: the cluster's current objects already hold the policy";
    if (!out) {
      fmt::print("{}\n", kNoChanges);
      return kOk;
    }
    // The directory may hold an earlier plan (a CI workspace, a second run): its apply.sh would
    // replay a stale delete, update and create. The plan written is one that does nothing.
    files.push_back({"apply.sh", fmt::format("#!/bin/sh\n# Written by `gov export hyperpod --current`: nothing to apply.\n"
                                             "echo '{}'\n",
                                             kNoChanges)});
    fmt::print("{}\n", kNoChanges);
  }
  // One file (Kueue's YAML, a CloudFormation template) is printed as it is, for a redirection.
  if (files.size() == 1 && !out) {
    fmt::print("{}", files.front().text);
    return kOk;
  }
  if (!out) {
    for (const bridge::ExportedFile& file : files) fmt::print("==> {} <==\n{}", file.name, file.text);
    return kOk;
  }
  std::error_code ec;
  std::filesystem::create_directories(*out, ec);
  if (ec) {
    fmt::print(stderr, "error: cannot create `{}`: {}\n", escape_for_terminal(*out), ec.message());
    return kUsage;
  }
  remove_stale_plan(*out, files);
  for (const bridge::ExportedFile& file : files) {
    const std::string path = (std::filesystem::path(*out) / file.name).string();
    std::string error;
    // Names gov picks in a directory that may be shared: a link planted at one is replaced, not
    // followed (it would have overwritten, and made executable, whatever it points to).
    AtomicWriteOptions write;
    write.follow_link = false;
    if (file.name.ends_with(".sh")) write.mode = 0755;
    if (!write_file_atomically(path, file.text, error, write)) {
      fmt::print(stderr, "error: cannot write `{}`: {}\n", escape_for_terminal(path), error);
      return kFailed;
    }
  }
  if (options.format == bridge::HyperpodFormat::cloudformation) {
    fmt::print("wrote {}/cloudformation.json; deploy it with `aws cloudformation deploy --template-file {}/cloudformation.json "
               "--stack-name NAME{}`\n",
               escape_for_terminal(*out), escape_for_terminal(*out),
               options.cluster_arn.empty() ? " --parameter-overrides ClusterArn=ARN" : "");
    return kOk;
  }
  if (result.files.empty()) {
    fmt::print("wrote {}/apply.sh, which does nothing\n", escape_for_terminal(*out));
    return kOk;
  }
  fmt::print("wrote {} files to {}; run {}/apply.sh\n", files.size(), escape_for_terminal(*out), escape_for_terminal(*out));
  return kOk;
}

}  // namespace

Command export_command() {
  return {{"export",
           "gov export kueue POLICY [--api v1beta2|v1beta1] [--naming hyperpod|plain] [--allow-lossy]\n"
           "       gov export hyperpod POLICY [--cluster-arn ARN] [--out DIR] [--format cli-json|cloudformation]\n"
           "                           [--current DIR] [--allow-lossy]",
           "Write a checked policy as the objects that govern a cluster: Kueue's resources or HyperPod API input.",
           "`gov export kueue` prints one multi-document YAML that `kubectl apply -f` accepts: a Namespace,\n"
           "ClusterQueue and LocalQueue per team, a ResourceFlavor per instance type (node label\n"
           "`node.kubernetes.io/instance-type`), the Cohort, a WorkloadPriorityClass per class. Every Kueue\n"
           "control of the language maps to its field; the cluster policy's settings that live in Kueue's\n"
           "manager configuration are printed as a comment and kept as annotations of the Cohort.\n"
           "`--api v1beta2` (default; Kueue v0.20 serves only it) or `v1beta1` (HyperPod's add-on, Kueue\n"
           "v0.19.2). `--naming hyperpod` (default) names objects as HyperPod does (`hyperpod-ns-TEAM`,\n"
           "`hyperpod-ns-TEAM-clusterqueue`, cohort `shared-pool`, classes `CLASS-priority`, sagemaker labels);\n"
           "`plain` after the teams, classes and cluster.\n"
           "`gov export hyperpod` writes the input of `aws sagemaker create-cluster-scheduler-config` (priority\n"
           "classes, fair share, idle-resource sharing) and of `create-compute-quota` per team (`--cli-input-json`\n"
           "documents) and `apply.sh`, which runs them in order: into `--out DIR`, or on standard output, each\n"
           "file after a `==> NAME <==` line. Without `--cluster-arn` the script takes `$CLUSTER_ARN`.\n"
           "`--format cloudformation` writes one template instead (`cloudformation.json` in `--out DIR`, or printed):\n"
           "AWS::SageMaker::ClusterSchedulerConfig and one AWS::SageMaker::ComputeQuota per team, the cluster's ARN\n"
           "its parameter `ClusterArn` (default `--cluster-arn`).\n"
           "`--current DIR` compares with the cluster's objects (`describe-cluster-scheduler-config`,\n"
           "`describe-compute-quota` and `list-compute-quotas` outputs, the `.json` files of DIR) and writes only\n"
           "what changed: `update-…` documents (TargetVersion the described version), creates for new teams and\n"
           "deletes for removed ones in `apply.sh`; nothing when the cluster already holds the policy.\n"
           "What the target has no field for (admission rules, `default-priority`; for HyperPod also Kueue's\n"
           "controls, lending limits, EFA amounts, instance types outside its API) is an error (E0401) for each\n"
           "construct; `--allow-lossy` exports the rest, lists what was dropped in a comment and warns. A HyperPod\n"
           "borrow limit outside the documented 1-500% is exported with a warning (W0401). See docs/deploy.md.",
           {{"api", "VERSION", "v1beta2 (default) or v1beta1"},
            {"naming", "NAMING", "hyperpod (default) or plain"},
            {"cluster-arn", "ARN", "hyperpod: the cluster's ARN, written into every document"},
            {"out", "DIR", "hyperpod: write the files into DIR (created if missing)"},
            {"format", "FORMAT", "hyperpod: cli-json (default) or cloudformation"},
            {"current", "DIR", "hyperpod: update the objects described in DIR's JSON files, only what changed"},
            {"allow-lossy", "", "export what the target can express; drop the rest with a comment"}}},
          run_export};
}

}  // namespace gov::cli
