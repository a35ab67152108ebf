// The SageMaker HyperPod exporter of gov::bridge (internal: callers use bridge::export_policy).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/bridge/bridge.hpp"

namespace gov::trace {
struct JsonValue;
}

namespace gov::bridge {

inline constexpr std::string_view kSchedulerConfigFile = "cluster-scheduler-config.json";
inline constexpr std::string_view kScriptFile = "apply.sh";
inline constexpr std::string_view kCloudFormationFile = "cloudformation.json";
/// The CloudFormation template's parameter and its cluster policy's logical id.
inline constexpr std::string_view kArnParameter = "ClusterArn";
inline constexpr std::string_view kSchedulerConfigResource = "ClusterSchedulerConfig";
/// The API's pattern of a cluster ARN (sagemaker-task-governance-api.json, shape ClusterArn).
inline constexpr std::string_view kClusterArnPattern = "arn:aws[a-z\\-]*:sagemaker:[a-z0-9\\-]*:[0-9]{12}:cluster/[a-z0-9]{12}";

/// cli-json: the create-cluster-scheduler-config document, one create-compute-quota document per
/// team (`compute-quota-TEAM.json`), and the script that runs them in order (`apply.sh`),
/// `dropped` listed in a comment at its top; against `options.current`, only what changed
/// (`update-…` documents, creates, deletes in the script), and no file at all when nothing did.
/// cloudformation: one template. Constructs HyperPod cannot express are not
/// written (hyperpod_not_expressible lists them).
std::vector<ExportedFile> export_hyperpod(const check::Policy& policy, const ExportOptions& options,
                                          const std::vector<Dropped>& dropped);

/// What HyperPod's API has no member for, besides what neither target has (not_expressible).
std::vector<Dropped> hyperpod_not_expressible(const check::Policy& policy);

/// `# Dropped (--allow-lossy): ...` comment lines (YAML, shell) listing `dropped`; empty when it is
/// empty. In bridge.cpp: the Kueue export uses it too.
std::string dropped_comment(const std::vector<Dropped>& dropped);

/// The borrow limits (percent) HyperPod's documentation gives; the API model accepts 0–10000.
inline constexpr std::pair<int32_t, int32_t> kDocumentedBorrowLimit = {1, 500};
/// The largest BorrowLimit the API model accepts (what `borrow-limit = unlimited` becomes under
/// --allow-lossy).
inline constexpr int64_t kMaxApiBorrowLimit = 10000;

/// The members gov writes of a compute quota (ComputeQuotaConfig, ComputeQuotaTarget,
/// ActivationState) or of a cluster policy (SchedulerConfig) in a canonical compact form: keys
/// sorted, the API's defaults filled in, numbers by value, lists sorted: two documents that differ
/// only in how the service prints them (`48.0`, a default left out, list order) compare equal
/// (hyperpod_update.cpp).
std::string canonical_compute_quota(const trace::JsonValue& document);
std::string canonical_scheduler_config(const trace::JsonValue& document);

/// A described object's `Status` when it says the object does not govern the cluster: `Deleted`,
/// `Deleting`, `CreateFailed` or `CreateRollbackFailed` (a list keeps deleted quotas). Import and
/// `--current` read past such objects; nullopt for every other status or none.
std::optional<std::string> retired_status(const trace::JsonValue& document);

/// A list-* output's `NextToken` when it is a string that is not empty: the list is one page of
/// several (the AWS CLI fetches every page unless told --max-items or --no-paginate), and reading
/// it as the whole list would drop the objects of the other pages.
std::optional<std::string> next_page(const trace::JsonValue& document);

/// What HyperPod's API accepts but its documentation does not (W0401), as warnings into `out`:
/// the export goes on.
void hyperpod_warnings(const check::Policy& policy, Diagnostics& out);

/// The API's names: the scheduler config after the cluster, a compute quota after its team
/// (EntityName: letters, digits and hyphens, at most 63).
std::string scheduler_config_name(const check::Policy& policy);
std::string compute_quota_name(std::string_view team);
std::string compute_quota_file(std::string_view team);

}  // namespace gov::bridge
