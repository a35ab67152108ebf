// The cluster's current task governance, read from describe-* outputs, for `gov export hyperpod
// --current DIR`: which objects exist (ids, versions) and what they hold, in a canonical form that
// compares equal exactly when the API would keep the same policy (defaults filled in, numbers by
// value, lists in any order).
#include <fmt/format.h>

#include <algorithm>

#include "compiler/bridge/hyperpod_export.hpp"
#include "compiler/model/kubernetes_names.hpp"
#include "runtime/trace/json.hpp"

namespace gov::bridge {

namespace {

/// A member the API gives a default when a request leaves it out (sagemaker-task-governance-api.json
/// and the API reference): `path` is the object's place in the document, `value` JSON text.
struct Default {
  std::string_view path;
  std::string_view key;
  std::string_view value;
};

constexpr Default kDefaults[] = {
    {"SchedulerConfig", "PriorityClasses", "[]"},
    {"SchedulerConfig", "FairShare", "\"Enabled\""},
    {"SchedulerConfig", "IdleResourceSharing", "\"Disabled\""},
    {"ComputeQuotaConfig", "ComputeQuotaResources", "[]"},
    {"ComputeQuotaConfig", "ResourceSharingConfig", "{}"},
    {"ComputeQuotaConfig", "PreemptTeamTasks", "\"LowerPriority\""},
    {"ComputeQuotaConfig.ResourceSharingConfig", "Strategy", "\"LendAndBorrow\""},
    {"ComputeQuotaConfig.ResourceSharingConfig", "BorrowLimit", "50"},
    {"ComputeQuotaConfig.ResourceSharingConfig", "AbsoluteBorrowLimits", "[]"},
    {"ComputeQuotaTarget", "FairShareWeight", "0"},
    {"", "ActivationState", "\"Enabled\""},
};

/// A number by its value: "48", "48.0" and "4.8e1" are the same (exact to a millionth, which
/// covers the API's vCPU and GiB amounts; anything finer keeps its text).
std::string canonical_number(const trace::JsonValue& number) {
  const trace::ExactNumber micros = number.to_units(1'000'000);
  if (micros.status != trace::NumberStatus::ok) return number.text;
  const int64_t whole = micros.value / 1'000'000;
  int64_t fraction = micros.value % 1'000'000;
  if (fraction == 0) return fmt::format("{}", whole);
  std::string digits = fmt::format("{:06}", fraction < 0 ? -fraction : fraction);
  while (digits.back() == '0') digits.pop_back();
  return fmt::format("{}{}.{}", micros.value < 0 && whole == 0 ? "-" : "", whole, digits);
}

/// `value` (at `path`) as compact JSON: members sorted by key with the API's defaults added, the
/// elements of every list sorted (no list of the API's policy members is ordered).
std::string canonical(const trace::JsonValue& value, const std::string& path) {
  switch (value.kind) {
    case trace::JsonKind::null: return "null";
    case trace::JsonKind::boolean: return value.boolean ? "true" : "false";
    case trace::JsonKind::number: return canonical_number(value);
    case trace::JsonKind::string: return json_quote(value.text);
    case trace::JsonKind::array: {
      std::vector<std::string> items;
      for (const trace::JsonValue& item : value.items) items.push_back(canonical(item, path));
      std::sort(items.begin(), items.end());
      return fmt::format("[{}]", fmt::join(items, ","));
    }
    case trace::JsonKind::object: {
      std::vector<std::pair<std::string, std::string>> members;
      for (size_t i = 0; i < value.keys.size(); ++i) {
        const std::string& key = value.keys[i].text;
        members.emplace_back(key, canonical(value.items[i], path.empty() ? key : path + "." + key));
      }
      for (const Default& d : kDefaults) {
        if (d.path != path || value.find(d.key)) continue;
        // The default's own members get their defaults too ({} for ResourceSharingConfig).
        const support::Expected<trace::JsonValue> parsed = trace::parse_json(d.value);
        const std::string key(d.key);
        members.emplace_back(key, canonical(parsed.value(), path.empty() ? key : path + "." + key));
      }
      std::sort(members.begin(), members.end());
      std::string out = "{";
      for (const auto& [key, text] : members) out += (out.size() > 1 ? "," : "") + json_quote(key) + ":" + text;
      return out + "}";
    }
  }
  return "null";
}

struct Failure {
  std::string message;
};

const trace::JsonValue& member(const std::string& where, const trace::JsonValue& object, std::string_view key,
                               trace::JsonKind kind) {
  const trace::JsonValue* value = object.find(key);
  if (!value) throw Failure{fmt::format("{}: `{}`: missing", where, key)};
  if (value->kind != kind) {
    throw Failure{fmt::format("{}: `{}`: expected {}, found {}", where, key, trace::json_kind_name(kind),
                              trace::json_kind_name(value->kind))};
  }
  return *value;
}

/// The id (12 lower-case letters and digits, the API's pattern) and version of a described object.
CurrentObject described(const std::string& where, const trace::JsonValue& doc, std::string_view id_key,
                        std::string_view version_key) {
  CurrentObject out;
  out.id = member(where, doc, id_key, trace::JsonKind::string).text;
  const bool id_ok = out.id.size() == 12 && std::all_of(out.id.begin(), out.id.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                     });
  if (!id_ok) throw Failure{fmt::format("{}: `{}`: {} is not an id of 12 lower-case letters and digits", where, id_key, json_quote(out.id, JsonEscapes::unsafe))};
  const std::optional<int64_t> version = member(where, doc, version_key, trace::JsonKind::number).as_int64();
  if (!version || *version < 0) throw Failure{fmt::format("{}: `{}`: not a whole number of 0 or more", where, version_key)};
  out.version = *version;
  return out;
}

/// One describe-compute-quota output (or one summary of list-compute-quotas) into `state`.
void add_quota(const std::string& where, const trace::JsonValue& doc, HyperpodState& state) {
  CurrentObject quota = described(where, doc, "ComputeQuotaId", "ComputeQuotaVersion");
  const trace::JsonValue& target = member(where, doc, "ComputeQuotaTarget", trace::JsonKind::object);
  const std::string team = member(where + ": `ComputeQuotaTarget`", target, "TeamName", trace::JsonKind::string).text;
  // The API's pattern (a DNS label): the name goes into apply.sh's comments, so nothing else may.
  if (!model::is_dns1123(team)) {
    throw Failure{fmt::format("{}: `ComputeQuotaTarget.TeamName`: {} is not a team name HyperPod accepts (lower-case letters, "
                              "digits and hyphens)",
                              where, json_quote(team, JsonEscapes::unsafe))};
  }
  quota.canonical = canonical_compute_quota(doc);
  const auto [it, inserted] = state.quotas.emplace(team, std::move(quota));
  if (!inserted) {
    throw Failure{fmt::format("{}: a second compute quota for team {} (`{}` is the first)", where,
                              json_quote(team, JsonEscapes::unsafe), it->second.id)};
  }
}

}  // namespace

std::string canonical_compute_quota(const trace::JsonValue& document) {
  trace::JsonValue kept;
  kept.kind = trace::JsonKind::object;
  for (std::string_view key : {"ComputeQuotaConfig", "ComputeQuotaTarget", "ActivationState"}) {
    if (const trace::JsonValue* value = document.find(key)) {
      kept.keys.push_back({std::string(key), {}});
      kept.items.push_back(*value);
    }
  }
  return canonical(kept, "");
}

std::string canonical_scheduler_config(const trace::JsonValue& document) {
  const trace::JsonValue* config = document.find("SchedulerConfig");
  if (!config) return canonical(trace::parse_json("{}").value(), "SchedulerConfig");
  return canonical(*config, "SchedulerConfig");
}

std::optional<std::string> retired_status(const trace::JsonValue& document) {
  const trace::JsonValue* status = document.find("Status");
  if (!status || status->kind != trace::JsonKind::string) return std::nullopt;
  for (std::string_view retired : {"Deleted", "Deleting", "CreateFailed", "CreateRollbackFailed"}) {
    if (status->text == retired) return status->text;
  }
  return std::nullopt;
}

std::optional<std::string> next_page(const trace::JsonValue& document) {
  const trace::JsonValue* token = document.find("NextToken");
  if (!token || token->kind != trace::JsonKind::string || token->text.empty()) return std::nullopt;
  return token->text;
}

std::string one_page_only(std::string_view file, std::string_view list) {
  return fmt::format("{}: the {} output is one page of several (it has a `NextToken`): objects on the other pages would "
                     "be missed; run it without --max-items or --no-paginate, which fetches every page",
                     file, list);
}

support::Expected<HyperpodState> read_hyperpod_state(const std::vector<ImportInput>& inputs) {
  HyperpodState state;
  try {
    for (const ImportInput& input : inputs) {
      trace::JsonLimits limits;
      limits.max_bytes = kMaxImportBytes;
      const support::Expected<trace::JsonValue> parsed = trace::parse_json(input.text, limits);
      const std::string& file = input.name;
      if (!parsed) throw Failure{fmt::format("{}: {}", file, parsed.error().message)};
      const trace::JsonValue& doc = parsed.value();
      if (doc.kind != trace::JsonKind::object) throw Failure{file + ": expected a JSON object"};
      if (const trace::JsonValue* list = doc.find("ComputeQuotaSummaries")) {
        // list-compute-quotas: each summary holds the quota's configuration, id and version.
        if (list->kind != trace::JsonKind::array) throw Failure{file + ": `ComputeQuotaSummaries`: expected an array"};
        if (next_page(doc)) throw Failure{one_page_only(file, "list-compute-quotas")};
        for (size_t i = 0; i < list->items.size(); ++i) {
          const std::string where = fmt::format("{}: `ComputeQuotaSummaries[{}]`", file, i);
          if (list->items[i].kind != trace::JsonKind::object) throw Failure{where + ": expected an object"};
          if (retired_status(list->items[i])) continue;  // not on the cluster: nothing to update or delete
          add_quota(where, list->items[i], state);
        }
      } else if (retired_status(doc)) {
        continue;  // a deleted (or never created) object: not what the cluster has
      } else if (doc.find("SchedulerConfig")) {
        const std::string where = file + ": cluster scheduler config";
        CurrentObject config = described(where, doc, "ClusterSchedulerConfigId", "ClusterSchedulerConfigVersion");
        member(where, doc, "SchedulerConfig", trace::JsonKind::object);
        config.canonical = canonical_scheduler_config(doc);
        if (state.scheduler_config) {
          throw Failure{fmt::format("{}: a second cluster scheduler config (`{}` is the first; a cluster has one)", where,
                                    state.scheduler_config->id)};
        }
        state.scheduler_config = std::move(config);
      } else if (doc.find("ComputeQuotaId")) {
        add_quota(file + ": compute quota", doc, state);
      } else {
        throw Failure{file + ": not a describe-cluster-scheduler-config, describe-compute-quota or list-compute-quotas "
                             "output (it has neither `SchedulerConfig`, `ComputeQuotaId` nor `ComputeQuotaSummaries`)"};
      }
    }
  } catch (const Failure& failure) {
    return support::Error{support::ErrorKind::invalid, failure.message};
  }
  return state;
}

}  // namespace gov::bridge
