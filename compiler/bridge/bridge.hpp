// Entry point of gov::bridge: a checked policy as the objects that govern a real cluster
// (Kueue's custom resources, SageMaker HyperPod's task-governance API input), and back.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/check/policy.hpp"
#include "compiler/diagnostics/diagnostic.hpp"
#include "compiler/kube/yaml.hpp"
#include "compiler/support/expected.hpp"

namespace gov::bridge {

/// What `gov export` writes.
enum class Target : uint8_t { kueue, hyperpod };
/// Kueue's served API version: v1beta2 (Kueue v0.20 serves only it), or v1beta1 (what
/// HyperPod's add-on, Kueue v0.19.2, and its CLI read).
enum class KueueApi : uint8_t { v1beta2, v1beta1 };
/// Object names: `hyperpod` reproduces what HyperPod creates (`hyperpod-ns-<team>`,
/// `…-clusterqueue`, cohort `shared-pool`, classes `<class>-priority`, sagemaker labels);
/// `plain` names every object after its team or class, the cohort after the cluster.
enum class Naming : uint8_t { hyperpod, plain };
/// What `gov export hyperpod` writes: `aws sagemaker … --cli-input-json` documents and a script,
/// or one CloudFormation template (AWS::SageMaker::ClusterSchedulerConfig and ::ComputeQuota).
enum class HyperpodFormat : uint8_t { cli_json, cloudformation };

/// One object of a HyperPod cluster's task governance, as a describe-* output gives it.
struct CurrentObject {
  std::string id;         // ClusterSchedulerConfigId or ComputeQuotaId
  int64_t version = 0;    // ClusterSchedulerConfigVersion or ComputeQuotaVersion: an update's TargetVersion
  std::string canonical;  // what it holds of the policy, canonical (hyperpod_export.hpp)
};

/// What a HyperPod cluster has now: its cluster policy (if any) and its compute quotas by team.
struct HyperpodState {
  std::optional<CurrentObject> scheduler_config;
  std::map<std::string, CurrentObject> quotas;
};

/// One file given to `gov import` or `gov export --current`: its name (for messages) and its text.
struct ImportInput {
  std::string name;
  std::string text;
};

/// describe-cluster-scheduler-config, describe-compute-quota and list-compute-quotas outputs (one
/// JSON object per input) as a HyperpodState. An input that is none of them, lacks the id or
/// version, or gives a second cluster policy or a second quota for one team is an Error (kind
/// invalid) naming the file. Pure; never throws.
support::Expected<HyperpodState> read_hyperpod_state(const std::vector<ImportInput>& inputs);

struct ExportOptions {
  Target target = Target::kueue;
  KueueApi api = KueueApi::v1beta2;
  Naming naming = Naming::hyperpod;
  HyperpodFormat format = HyperpodFormat::cli_json;
  /// Export what the target can express and drop the rest: each dropped construct is a warning
  /// (not an error) and a comment in the output.
  bool allow_lossy = false;
  /// hyperpod: the cluster's ARN, written into every document; empty: the script takes it from
  /// `$CLUSTER_ARN` (`--cluster-arn` on each command line). A CloudFormation template takes it as
  /// its parameter `ClusterArn`, with this as the default when given.
  std::string cluster_arn;
  /// hyperpod, cli-json: the cluster's current objects (`--current DIR`); the export then writes
  /// update documents and deletes for what differs, and creates for what is missing.
  std::optional<HyperpodState> current;
};

/// One file of an export: `name` is a file name without directories ("kueue.yaml").
struct ExportedFile {
  std::string name;
  std::string text;
};

/// The files of an export, and the policy's constructs the target cannot express (E0401, one
/// per construct with its span, in source order: errors, or warnings under allow_lossy).
/// `files` is empty when `problems` holds errors.
struct ExportResult {
  std::vector<ExportedFile> files;
  Diagnostics problems;
  bool ok() const { return !problems.has_errors(); }
};

/// `policy` (checked without errors, with a cluster and a cluster policy) in `options.target`'s
/// terms. Pure and deterministic: the same policy and options give the same bytes.
ExportResult export_policy(const check::Policy& policy, const ExportOptions& options);

/// What `policy` says that `target` cannot express, one construct each: a description for a
/// comment ("rule `cap-gpus`: Kueue has no admission rules") and where it is written.
struct Dropped {
  std::string what;
  Location where;
};
std::vector<Dropped> not_expressible(const check::Policy& policy, Target target);
/// Everything export_policy would refuse (E0401) for `target`: not_expressible, and for HyperPod
/// what its API has no member for. `gov lint --target` reports them before an export does.
std::vector<Dropped> not_exportable(const check::Policy& policy, Target target);

// ------------------------------------------------------------------ import (hyperpod_import.cpp)


struct ImportOptions {
  std::string catalog_import;  // the path the policy's `import` names
  std::vector<std::pair<std::string, int64_t>> capacity;  // `--capacity TYPE=N,...`; empty: a comment asks for it
  kube::YamlLimits yaml;  // import_kueue: the YAML loader's limits (docs/kubernetes.md)
  /// import_kueue: `--idle-compute` (`fcfs` or `fair-share`), what Kueue keeps in its manager
  /// configuration (fairSharing.enable), not in objects; empty: a Cohort's gov annotation, else
  /// gov's default written out with a comment that it is assumed.
  std::string idle_compute;
};

/// The largest input file `gov import` reads (bytes).
inline constexpr size_t kMaxImportBytes = size_t{1} << 20;

/// Where a part of an imported policy's text came from: bytes [begin, end) of the text were
/// written from `object` ("queues.yaml:3:11: ClusterQueue `a`", the place of its name), so that a
/// message about that policy, which the user never saw, can name the input.
struct ImportOrigin {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string object;
};

/// describe-cluster-scheduler-config and describe-compute-quota outputs (one JSON object per
/// input, at most one scheduler config) as the text of a `.gov` policy whose instance types come
/// from `catalog`. The text is not formatted (`gov fmt`'s printer does that) and not checked. An
/// input gov cannot represent fully is an Error (kind invalid) naming the file, the object and the
/// member: an unknown member, a wrong kind, a value out of range, an amount that is not a whole
/// number of base units, an instance type outside the catalog. Pure; never throws. With `origins`,
/// the team blocks' ImportOrigins, in text order: each names its compute quota.
support::Expected<std::string> import_hyperpod(const std::vector<ImportInput>& inputs, const check::Catalog& catalog,
                                               const ImportOptions& options, std::vector<ImportOrigin>* origins = nullptr);

/// Why `text` cannot be written as a gov name (`team-a`), or nullopt: the importers' test of every
/// name they read (lower-case letters, digits and hyphens, a letter first, at most 63
/// characters, and not a reserved word such as `test` or `policy`, which the language cannot
/// write as a name), so that the error names the input rather than the generated policy.
std::optional<std::string> name_problem(std::string_view text);

// ------------------------------------------------------------------ import (kueue_import.cpp)

/// Kueue's objects (ClusterQueues, Cohorts, ResourceFlavors, LocalQueues, WorkloadPriorityClasses,
/// v1beta1 or v1beta2, multi-document YAML and `kind: List` as `kubectl get -o yaml` writes them;
/// Namespaces are skipped) as the text of a `.gov` policy whose instance types come from
/// `catalog`, read through gov::kube's YAML loader and its limits. Not formatted, not checked.
/// An object gov cannot represent fully is an Error (kind invalid) naming the file, line and
/// column, the object and the field: an unknown kind or field, a second resource group or cohort,
/// unlimited borrowing, a quantity that is not a whole number of base units, a flavor whose
/// instance type is outside the catalog. Pure; never throws. With `origins`, the team and cohort
/// blocks' ImportOrigins, in text order.
support::Expected<std::string> import_kueue(const std::vector<ImportInput>& inputs, const check::Catalog& catalog,
                                            const ImportOptions& options, std::vector<ImportOrigin>* origins = nullptr);

// ------------------------------------------------------------------ names (bridge.cpp)

/// The names of a team's and a class's Kueue objects under a naming.
std::string namespace_name(Naming naming, std::string_view team);
std::string cluster_queue_name(Naming naming, std::string_view team);
std::string local_queue_name(Naming naming, std::string_view team);
std::string cohort_name(Naming naming, const check::Policy& policy);
std::string priority_class_name(Naming naming, std::string_view priority_class);

}  // namespace gov::bridge
