// `gov import hyperpod`: describe-cluster-scheduler-config and describe-compute-quota outputs as a
// `.gov` policy. Every member gov reads is checked for its kind and range; what gov cannot
// represent is an error naming the file, the object and the member, never dropped.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "compiler/bridge/bridge.hpp"
#include "compiler/bridge/hyperpod_export.hpp"
#include "compiler/model/partitions.hpp"
#include "compiler/model/quantities.hpp"
#include "runtime/trace/json.hpp"

namespace gov::bridge {

namespace {

/// An import error: thrown inside this file only, caught by import_hyperpod.
struct Failure {
  std::string message;
};

/// Where a member is, for messages: "`quota.json`: compute quota `a`: `ComputeQuotaConfig.Strategy`".
struct Context {
  std::string file;
  std::string object;
  [[noreturn]] void fail(std::string_view member, std::string_view why) const {
    throw Failure{fmt::format("{}: {}: `{}`: {}", file, object, member, why)};
  }
};

const trace::JsonValue& need(const Context& at, const trace::JsonValue& object, std::string_view key, std::string_view path,
                             trace::JsonKind kind) {
  const trace::JsonValue* value = object.find(key);
  if (!value) at.fail(path, "missing");
  if (value->kind != kind) {
    at.fail(path, fmt::format("expected {}, found {}", trace::json_kind_name(kind), trace::json_kind_name(value->kind)));
  }
  return *value;
}

const trace::JsonValue* optional(const Context& at, const trace::JsonValue& object, std::string_view key, std::string_view path,
                                 trace::JsonKind kind) {
  if (!object.find(key)) return nullptr;
  return &need(at, object, key, path, kind);
}

/// Members of `object` other than `known` are an error: gov would otherwise drop them.
void only(const Context& at, const trace::JsonValue& object, std::string_view path, const std::vector<std::string_view>& known) {
  for (const trace::JsonKey& key : object.keys) {
    bool found = false;
    for (std::string_view k : known) found = found || key.text == k;
    if (!found) at.fail(fmt::format("{}{}{}", path, path.empty() ? "" : ".", key.text), "gov cannot represent it");
  }
}

std::string_view choice(const Context& at, const trace::JsonValue& value, std::string_view path,
                        std::initializer_list<std::pair<std::string_view, std::string_view>> words) {
  for (const auto& [api, word] : words) {
    if (value.text == api) return word;
  }
  std::vector<std::string> expected;
  for (const auto& [api, word] : words) expected.push_back(fmt::format("`{}`", api));
  at.fail(path, fmt::format("`{}` is not one of {}", value.text, fmt::join(expected, ", ")));
}

int64_t integer(const Context& at, const trace::JsonValue& value, std::string_view path, int64_t low, int64_t high) {
  const std::optional<int64_t> n = value.as_int64();
  if (!n || *n < low || *n > high) at.fail(path, fmt::format("{} is not a whole number in {}..{}", value.text, low, high));
  return *n;
}

/// A gov name (`team-a`; bridge::name_problem).
std::string name(const Context& at, const trace::JsonValue& value, std::string_view path) {
  const std::string& text = value.text;
  if (const std::optional<std::string> problem = name_problem(text))
    at.fail(path, fmt::format("{} {}", json_quote(text, JsonEscapes::unsafe), *problem));
  return text;
}

/// The amounts of one ComputeQuotaResourceConfig, as the language writes them.
std::string amounts(const Context& at, const trace::JsonValue& config, const std::string& path,
                    const check::InstanceType& type) {
  only(at, config, path, {"InstanceType", "Count", "Accelerators", "VCpu", "MemoryInGiB", "AcceleratorPartition"});
  std::vector<std::string> parts;
  if (const trace::JsonValue* count = optional(at, config, "Count", path + ".Count", trace::JsonKind::number)) {
    parts.push_back(fmt::format("instances = {}", integer(at, *count, path + ".Count", 0, 10'000'000)));
  }
  if (const trace::JsonValue* accelerators = optional(at, config, "Accelerators", path + ".Accelerators", trace::JsonKind::number)) {
    const int64_t n = integer(at, *accelerators, path + ".Accelerators", 0, 10'000'000);
    const bool neuron = type.per_instance[model::index(model::Resource::neuron)] > 0;
    if (!neuron && type.per_instance[model::index(model::Resource::gpu)] == 0) {
      at.fail(path + ".Accelerators", fmt::format("`{}` has no accelerators in the catalog", type.name));
    }
    parts.push_back(fmt::format("{} = {}", neuron ? "neuron" : "gpus", n));
  }
  if (const trace::JsonValue* vcpu = optional(at, config, "VCpu", path + ".VCpu", trace::JsonKind::number)) {
    const trace::ExactNumber millicores = vcpu->to_units(model::kMillicoresPerVcpu);
    if (millicores.status != trace::NumberStatus::ok || millicores.value < 0) {
      at.fail(path + ".VCpu", fmt::format("{} is not a whole number of millicores (0.001 vCPU)", vcpu->text));
    }
    parts.push_back(fmt::format("vcpus = {}", model::format_amount(model::Resource::vcpu, millicores.value)));
  }
  if (const trace::JsonValue* memory = optional(at, config, "MemoryInGiB", path + ".MemoryInGiB", trace::JsonKind::number)) {
    const trace::ExactNumber mebibytes = memory->to_units(model::kMebibytesPerGibibyte);
    if (mebibytes.status != trace::NumberStatus::ok || mebibytes.value < 0) {
      at.fail(path + ".MemoryInGiB", fmt::format("{} GiB is not a whole number of MiB", memory->text));
    }
    parts.push_back(fmt::format("memory = {}", model::format_amount(model::Resource::memory, mebibytes.value)));
  }
  if (const trace::JsonValue* partition =
          optional(at, config, "AcceleratorPartition", path + ".AcceleratorPartition", trace::JsonKind::object)) {
    const std::string member = path + ".AcceleratorPartition";
    only(at, *partition, member, {"Type", "Count"});
    const trace::JsonValue& profile = need(at, *partition, "Type", member + ".Type", trace::JsonKind::string);
    if (!model::parse_mig_profile(profile.text)) {
      at.fail(member + ".Type", fmt::format("{} is not a MIG profile (`mig-<slices>g.<memory>gb`)",
                                            json_quote(profile.text, JsonEscapes::unsafe)));
    }
    const int64_t n = integer(at, need(at, *partition, "Count", member + ".Count", trace::JsonKind::number),
                              member + ".Count", 0, 10'000'000);
    parts.push_back(fmt::format("partitions = {{ {}: {} }}", profile.text, n));
  }
  if (parts.empty()) at.fail(path, "gives neither `Count` nor any amount");
  return fmt::format("{}", fmt::join(parts, ", "));
}

const check::InstanceType& instance_type(const Context& at, const trace::JsonValue& config, const std::string& path,
                                         const std::vector<check::InstanceType>& types) {
  const trace::JsonValue& type = need(at, config, "InstanceType", path + ".InstanceType", trace::JsonKind::string);
  const auto found = std::find_if(types.begin(), types.end(), [&](const check::InstanceType& t) { return t.name == type.text; });
  if (found == types.end()) {
    at.fail(path + ".InstanceType", fmt::format("{} is not in the catalog", json_quote(type.text, JsonEscapes::unsafe)));
  }
  return *found;
}

// Members of a describe output that are about the object, not the policy.
const std::vector<std::string_view> kQuotaMetadata = {
    "ComputeQuotaArn", "ComputeQuotaId", "Name", "Description", "ComputeQuotaVersion", "Status", "FailureReason",
    "ClusterArn", "CreationTime", "CreatedBy", "LastModifiedTime", "LastModifiedBy", "ComputeQuotaConfig",
    "ComputeQuotaTarget", "ActivationState"};
const std::vector<std::string_view> kConfigMetadata = {
    "ClusterSchedulerConfigArn", "ClusterSchedulerConfigId", "Name", "ClusterSchedulerConfigVersion", "Status",
    "FailureReason", "StatusDetails", "ClusterArn", "SchedulerConfig", "Description", "CreationTime", "CreatedBy",
    "LastModifiedTime", "LastModifiedBy"};

std::string team_block(const Context& at, const trace::JsonValue& doc, const std::vector<check::InstanceType>& types) {
  only(at, doc, "", kQuotaMetadata);
  const trace::JsonValue& target = need(at, doc, "ComputeQuotaTarget", "ComputeQuotaTarget", trace::JsonKind::object);
  only(at, target, "ComputeQuotaTarget", {"TeamName", "FairShareWeight"});
  const std::string team = name(at, need(at, target, "TeamName", "ComputeQuotaTarget.TeamName", trace::JsonKind::string),
                                "ComputeQuotaTarget.TeamName");
  const trace::JsonValue& config = need(at, doc, "ComputeQuotaConfig", "ComputeQuotaConfig", trace::JsonKind::object);
  only(at, config, "ComputeQuotaConfig", {"ComputeQuotaResources", "ResourceSharingConfig", "PreemptTeamTasks"});

  // Absolute borrow limits by instance type, written inside that type's quota.
  std::map<std::string, std::string> absolute;
  std::string sharing_lines;
  if (const trace::JsonValue* sharing = optional(at, config, "ResourceSharingConfig", "ComputeQuotaConfig.ResourceSharingConfig",
                                                 trace::JsonKind::object)) {
    const std::string path = "ComputeQuotaConfig.ResourceSharingConfig";
    only(at, *sharing, path, {"Strategy", "BorrowLimit", "AbsoluteBorrowLimits"});
    const std::string_view strategy =
        choice(at, need(at, *sharing, "Strategy", path + ".Strategy", trace::JsonKind::string), path + ".Strategy",
               {{"LendAndBorrow", "lend-and-borrow"}, {"Lend", "lend"}, {"DontLend", "dont-lend"}});
    sharing_lines += fmt::format("  sharing = {}\n", strategy);
    if (const trace::JsonValue* limit = optional(at, *sharing, "BorrowLimit", path + ".BorrowLimit", trace::JsonKind::number)) {
      sharing_lines += fmt::format("  borrow-limit = {}%\n", integer(at, *limit, path + ".BorrowLimit", 0, 10000));
    }
    if (const trace::JsonValue* limits = optional(at, *sharing, "AbsoluteBorrowLimits", path + ".AbsoluteBorrowLimits",
                                                  trace::JsonKind::array)) {
      for (size_t i = 0; i < limits->items.size(); ++i) {
        const std::string item = fmt::format("{}.AbsoluteBorrowLimits[{}]", path, i);
        if (limits->items[i].kind != trace::JsonKind::object) at.fail(item, "expected an object");
        const check::InstanceType& type = instance_type(at, limits->items[i], item, types);
        if (absolute.count(type.name) != 0) {
          at.fail(item + ".InstanceType", fmt::format("`{}` is listed twice: a quota has one borrow limit", type.name));
        }
        absolute[type.name] = amounts(at, limits->items[i], item, type);
      }
    }
  }
  std::string quotas;
  if (const trace::JsonValue* resources = optional(at, config, "ComputeQuotaResources", "ComputeQuotaConfig.ComputeQuotaResources",
                                                   trace::JsonKind::array)) {
    std::set<std::string> listed;  // a team has one quota per instance type
    for (size_t i = 0; i < resources->items.size(); ++i) {
      const std::string item = fmt::format("ComputeQuotaConfig.ComputeQuotaResources[{}]", i);
      if (resources->items[i].kind != trace::JsonKind::object) at.fail(item, "expected an object");
      const check::InstanceType& type = instance_type(at, resources->items[i], item, types);
      if (!listed.insert(type.name).second) {
        at.fail(item + ".InstanceType", fmt::format("`{}` is listed twice: a team has one quota per instance type", type.name));
      }
      std::string body = amounts(at, resources->items[i], item, type);
      if (auto it = absolute.find(type.name); it != absolute.end()) {
        body += fmt::format(", borrow-limit = {{ {} }}", it->second);
        absolute.erase(it);
      }
      quotas += fmt::format("  quota {} {{ {} }}\n", type.name, body);
    }
  }
  if (!absolute.empty()) {
    at.fail("ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits",
            fmt::format("`{}` has a borrow limit but no quota", absolute.begin()->first));
  }
  std::string out = fmt::format("team {} {{\n{}\n{}", team, quotas, sharing_lines);
  if (const trace::JsonValue* preempt = optional(at, config, "PreemptTeamTasks", "ComputeQuotaConfig.PreemptTeamTasks",
                                                 trace::JsonKind::string)) {
    out += fmt::format("  preempt-team-tasks = {}\n",
                       choice(at, *preempt, "ComputeQuotaConfig.PreemptTeamTasks",
                              {{"LowerPriority", "lower-priority"}, {"Never", "never"}}));
  }
  if (const trace::JsonValue* weight = optional(at, target, "FairShareWeight", "ComputeQuotaTarget.FairShareWeight",
                                                trace::JsonKind::number)) {
    out += fmt::format("  fair-share-weight = {}\n", integer(at, *weight, "ComputeQuotaTarget.FairShareWeight", 0, 100));
  }
  if (const trace::JsonValue* state = optional(at, doc, "ActivationState", "ActivationState", trace::JsonKind::string)) {
    if (choice(at, *state, "ActivationState", {{"Enabled", "true"}, {"Disabled", "false"}}) == "false") out += "  active = false\n";
  }
  return out + "}\n";
}

std::string policy_block(const Context& at, const trace::JsonValue& doc) {
  only(at, doc, "", kConfigMetadata);
  const trace::JsonValue& config = need(at, doc, "SchedulerConfig", "SchedulerConfig", trace::JsonKind::object);
  only(at, config, "SchedulerConfig", {"PriorityClasses", "FairShare", "IdleResourceSharing"});
  std::string classes;
  if (const trace::JsonValue* list = optional(at, config, "PriorityClasses", "SchedulerConfig.PriorityClasses", trace::JsonKind::array)) {
    for (size_t i = 0; i < list->items.size(); ++i) {
      const std::string item = fmt::format("SchedulerConfig.PriorityClasses[{}]", i);
      const trace::JsonValue& entry = list->items[i];
      if (entry.kind != trace::JsonKind::object) at.fail(item, "expected an object");
      only(at, entry, item, {"Name", "Weight"});
      classes += fmt::format("  priority {} = {}\n", name(at, need(at, entry, "Name", item + ".Name", trace::JsonKind::string), item + ".Name"),
                             integer(at, need(at, entry, "Weight", item + ".Weight", trace::JsonKind::number), item + ".Weight", 0, 100));
    }
  }
  // HyperPod's first-come-first-served prioritization is the one without classes.
  std::string out = fmt::format("policy {{\n  task-prioritization = {}\n", classes.empty() ? "fcfs" : "task-ranking");
  if (const trace::JsonValue* fair = optional(at, config, "FairShare", "SchedulerConfig.FairShare", trace::JsonKind::string)) {
    out += fmt::format("  idle-compute = {}\n",
                       choice(at, *fair, "SchedulerConfig.FairShare", {{"Enabled", "fair-share"}, {"Disabled", "fcfs"}}));
  }
  if (const trace::JsonValue* idle = optional(at, config, "IdleResourceSharing", "SchedulerConfig.IdleResourceSharing",
                                              trace::JsonKind::string)) {
    out += fmt::format("  idle-resource-sharing = {}\n",
                       choice(at, *idle, "SchedulerConfig.IdleResourceSharing", {{"Enabled", "true"}, {"Disabled", "false"}}));
  }
  if (!classes.empty()) out += "\n" + classes;
  return out + "}\n";
}

}  // namespace

support::Expected<std::string> import_hyperpod(const std::vector<ImportInput>& inputs, const check::Catalog& catalog,
                                               const ImportOptions& options, std::vector<ImportOrigin>* origins) {
  try {
    std::string policy;
    std::string cluster_name = "imported";
    std::optional<std::string> renamed_cluster;  // the config's Name, when it had capitals
    std::vector<std::pair<std::string, std::string>> teams;  // each block, and what it was written from
    std::set<std::string> quota_ids;                // a quota listed and described is read once
    std::optional<std::string> listed_config;       // list-cluster-scheduler-configs: a config to describe
    std::vector<std::string> skipped;               // retired objects, named in a comment
    const auto object_name_of = [](const trace::JsonValue& doc) {
      const trace::JsonValue* object_name = doc.find("Name");
      return object_name && object_name->kind == trace::JsonKind::string ? object_name->text : std::string("?");
    };
    // A deleted (or never created) object governs nothing: it is named in a comment, not imported.
    const auto retired = [&](const std::string& file, const trace::JsonValue& doc, std::string_view what) {
      const std::optional<std::string> status = retired_status(doc);
      const std::string name = file.substr(file.rfind('/') + 1);  // the comment does not say where it was read
      if (status) skipped.push_back(fmt::format("{} {} in {} (status {})", what, json_quote(object_name_of(doc), JsonEscapes::unsafe),
                                                json_quote(name, JsonEscapes::unsafe), json_quote(*status, JsonEscapes::unsafe)));
      return status.has_value();
    };
    std::map<std::string, std::string> team_quotas;  // team → the quota that gave it, for messages
    const auto add_team = [&](const std::string& file, const trace::JsonValue& doc, const std::string& where) {
      const trace::JsonValue* id = doc.find("ComputeQuotaId");
      if (retired(file, doc, "compute quota")) return;
      if (id && id->kind == trace::JsonKind::string && !quota_ids.insert(id->text).second) return;
      const Context at{file, fmt::format("{}compute quota `{}`", where, object_name_of(doc))};
      teams.emplace_back(team_block(at, doc, catalog.types), fmt::format("{}: {}", at.file, at.object));
      // A second live quota of one team: said at its input, not as E0207 in the generated policy.
      const trace::JsonValue* target = doc.find("ComputeQuotaTarget");
      const trace::JsonValue* team = target ? target->find("TeamName") : nullptr;
      if (team && team->kind == trace::JsonKind::string) {
        const auto [first, inserted] = team_quotas.emplace(team->text, fmt::format("`{}` in {}", object_name_of(doc), file));
        if (!inserted) {
          at.fail("ComputeQuotaTarget.TeamName",
                  fmt::format("team {} has a second compute quota (the first is {}): a team has one",
                              json_quote(team->text, JsonEscapes::unsafe), first->second));
        }
      }
    };
    const auto whole_list = [](const Context& at, const trace::JsonValue& doc) {
      if (next_page(doc)) {
        at.fail("NextToken", "this is one page of several: objects on the other pages would be missed; run the list "
                             "without --max-items or --no-paginate, which fetches every page");
      }
    };
    for (const ImportInput& input : inputs) {
      trace::JsonLimits limits;
      limits.max_bytes = kMaxImportBytes;
      const support::Expected<trace::JsonValue> parsed = trace::parse_json(input.text, limits);
      if (!parsed) throw Failure{fmt::format("{}: {}", input.name, parsed.error().message)};
      const trace::JsonValue& doc = parsed.value();
      if (doc.kind != trace::JsonKind::object) throw Failure{fmt::format("{}: expected a JSON object", input.name)};
      if (doc.find("SchedulerConfig")) {
        if (retired(input.name, doc, "cluster scheduler config")) continue;
        const trace::JsonValue* object_name = doc.find("Name");
        const Context at{input.name, fmt::format("cluster scheduler config `{}`",
                                                 object_name && object_name->kind == trace::JsonKind::string ? object_name->text : "?")};
        if (!policy.empty()) at.fail("SchedulerConfig", "a second cluster scheduler config (a cluster has one)");
        policy = policy_block(at, doc);
        if (object_name && object_name->kind == trace::JsonKind::string) {
          // The API's EntityName takes capitals (`Prod-Cluster-Config`); a gov name does not. The
          // name only labels the cluster, so it is lower-cased and said (a migration helper's
          // finding: the import refused the config); one gov cannot write at all is refused.
          std::string lowered = object_name->text;
          for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          if (name_problem(lowered)) name(at, *object_name, "Name");  // fails, naming the input
          cluster_name = lowered;
          if (lowered != object_name->text) renamed_cluster = object_name->text;
        }
      } else if (doc.find("ComputeQuotaConfig") || doc.find("ComputeQuotaTarget")) {
        add_team(input.name, doc, "");
      } else if (const trace::JsonValue* summaries = doc.find("ComputeQuotaSummaries")) {
        // list-compute-quotas: each summary holds the quota's whole configuration.
        const Context at{input.name, "list-compute-quotas output"};
        only(at, doc, "", {"ComputeQuotaSummaries", "NextToken"});
        whole_list(at, doc);
        if (summaries->kind != trace::JsonKind::array) at.fail("ComputeQuotaSummaries", "expected an array");
        for (size_t i = 0; i < summaries->items.size(); ++i) {
          if (summaries->items[i].kind != trace::JsonKind::object) at.fail(fmt::format("ComputeQuotaSummaries[{}]", i), "expected an object");
          add_team(input.name, summaries->items[i], fmt::format("`ComputeQuotaSummaries[{}]`: ", i));
        }
      } else if (const trace::JsonValue* configs = doc.find("ClusterSchedulerConfigSummaries")) {
        // list-cluster-scheduler-configs has no SchedulerConfig: the describe output must be given too.
        const Context at{input.name, "list-cluster-scheduler-configs output"};
        only(at, doc, "", {"ClusterSchedulerConfigSummaries", "NextToken"});
        whole_list(at, doc);
        if (configs->kind != trace::JsonKind::array) at.fail("ClusterSchedulerConfigSummaries", "expected an array");
        for (const trace::JsonValue& summary : configs->items) {
          if (summary.kind == trace::JsonKind::object && retired_status(summary)) continue;
          const trace::JsonValue* config_name = summary.kind == trace::JsonKind::object ? summary.find("Name") : nullptr;
          if (!listed_config) listed_config = config_name && config_name->kind == trace::JsonKind::string ? config_name->text : "?";
        }
      } else {
        throw Failure{fmt::format("{}: not a describe-cluster-scheduler-config or describe-compute-quota output, nor a "
                                  "list-compute-quotas or list-cluster-scheduler-configs one (it has neither "
                                  "`SchedulerConfig`, `ComputeQuotaConfig` nor a list of summaries)",
                                  input.name)};
      }
    }
    if (policy.empty() && listed_config) {
      throw Failure{fmt::format("cluster scheduler config {} is listed but not described: a list has no `SchedulerConfig`; "
                                "add its describe-cluster-scheduler-config output",
                                json_quote(*listed_config, JsonEscapes::unsafe))};
    }
    if (policy.empty()) policy = "policy {\n}\n";  // HyperPod's defaults when no scheduler config is given
    std::string out = "# Imported by `gov import hyperpod`.\n";
    for (const std::string& line : skipped) out += fmt::format("# Not imported: {}: it does not govern the cluster.\n", line);
    if (renamed_cluster) {
      out += fmt::format("# The cluster scheduler config's Name `{}`, lower-cased: gov names are lower-case.\n",
                         *renamed_cluster);  // letters, digits and hyphens: its lower case is a gov name
    }
    out += fmt::format("import \"{}\"\n\ncluster {} {{\n  catalog = {}\n", options.catalog_import, cluster_name, catalog.name);
    if (options.capacity.empty()) {
      out += "  # capacity: HyperPod's API does not say; give it (gov import hyperpod --capacity TYPE=N,...)\n";
    } else {
      std::vector<std::string> entries;
      for (const auto& [type, count] : options.capacity) entries.push_back(fmt::format("{}: {}", type, count));
      out += fmt::format("  capacity = {{ {} }}\n", fmt::join(entries, ", "));
    }
    out += "}\n\n" + policy;
    for (const auto& [team, from] : teams) {
      if (origins != nullptr) {
        origins->push_back({static_cast<uint32_t>(out.size()), static_cast<uint32_t>(out.size() + 1 + team.size()), from});
      }
      out += "\n" + team;
    }
    return out;
  } catch (const Failure& failure) {
    return support::Error{support::ErrorKind::invalid, failure.message};
  }
}

}  // namespace gov::bridge
