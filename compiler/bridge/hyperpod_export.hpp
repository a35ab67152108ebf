// The SageMaker HyperPod exporter of gov::bridge (internal: callers use bridge::export_policy).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/bridge/bridge.hpp"

namespace gov::bridge {

inline constexpr std::string_view kSchedulerConfigFile = "cluster-scheduler-config.json";
inline constexpr std::string_view kScriptFile = "create.sh";

/// The create-cluster-scheduler-config document, one create-compute-quota document per team
/// (`compute-quota-TEAM.json`), and the script that runs them in order. Constructs HyperPod
/// cannot express are not written (hyperpod_not_expressible lists them).
std::vector<ExportedFile> export_hyperpod(const check::Policy& policy, const ExportOptions& options);

/// What HyperPod's API has no member for, besides what neither target has (not_expressible).
std::vector<Dropped> hyperpod_not_expressible(const check::Policy& policy);

/// The borrow limits (percent) HyperPod's documentation gives; the API model accepts 0–10000.
inline constexpr std::pair<int32_t, int32_t> kDocumentedBorrowLimit = {1, 500};

/// What HyperPod's API accepts but its documentation does not (W0401), as warnings into `out`:
/// the export goes on.
void hyperpod_warnings(const check::Policy& policy, Diagnostics& out);

/// The API's names: the scheduler config after the cluster, a compute quota after its team
/// (EntityName: letters, digits and hyphens, at most 63).
std::string scheduler_config_name(const check::Policy& policy);
std::string compute_quota_name(std::string_view team);
std::string compute_quota_file(std::string_view team);

}  // namespace gov::bridge
