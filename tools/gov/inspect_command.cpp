// `gov inspect`: the resolved policy — quotas after defaults, classes, capacity.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "compiler/check/quotas.hpp"
#include "compiler/check/surface.hpp"
#include "compiler/support/json_writer.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/model/quantities.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

using check::Policy;

/// An amount in the unit people read: devices, vCPUs, GiB (exact, decimals only when needed).
std::string human(ir::Resource r, ir::Amount a) {
  model::AmountFormat format = model::decimal_notation();
  format.unlimited_word = true;
  return model::format_amount(r, a, format);
}

/// Resources shown for a type: those an instance has (GPU or Neuron, vCPU, memory, EFA); of a
/// quota of a team with resource groups, only those its group covers (the team holds no other).
std::vector<ir::Resource> shown_resources(const check::InstanceType& type, const check::Quota* quota = nullptr,
                                          const check::Team* team = nullptr) {
  std::vector<ir::Resource> out;
  for (ir::Resource r : ir::kAllResources) {
    if (quota != nullptr && team != nullptr && !check::group_covers(*team, *quota, r)) continue;
    if (type.per_instance[ir::index(r)] > 0 || (quota && quota->nominal[ir::index(r)] > 0)) out.push_back(r);
  }
  return out;
}

/// The class a team's borrow threshold names, or "none".
std::string threshold_name(const Policy& p, const check::Team& team) {
  return team.borrow_priority_threshold >= 0 ? p.classes[static_cast<size_t>(team.borrow_priority_threshold)].name
                                             : std::string("none");
}

/// An amount as a JSON number in the unit people read (devices, vCPUs, GiB; exact), or null
/// for no limit.
void amount_json(JsonWriter& out, ir::Resource r, ir::Amount a) {
  if (a == ir::kUnlimited) return out.null();
  out.decimal(model::format_amount(r, a, model::decimal_notation()));
}

/// Kueue's controls of a team (docs/language.md), effective values, as JSON members.
void controls_json(JsonWriter& out, const Policy& p, const check::Team& team) {
  out.field("reclaim_within_cohort", check::word_of(team.reclaim_within_cohort));
  out.key("borrow_within_cohort");
  out.begin_object();
  out.field("policy", check::word_of(team.borrow_within_cohort));
  out.key("max_priority_threshold");
  if (team.borrow_priority_threshold >= 0) {
    out.string(threshold_name(p, team));
  } else {
    out.null();
  }
  out.end_object();
  out.field("queueing", check::word_of(team.queueing));
  out.field("when_can_borrow", check::word_of(team.when_can_borrow));
  out.field("when_can_preempt", check::word_of(team.when_can_preempt));
  out.field("flavor_preference", check::word_of(team.flavor_preference));
}

std::string strategies_text(const check::Settings& settings) {
  std::vector<std::string_view> names;
  for (ir::FairShareStrategy s : settings.fair_share_strategies) names.push_back(check::word_of(s));
  return fmt::format("{}", fmt::join(names, ", "));
}

/// A count of partitions as JSON: the number, or null for no limit.
void count_json(JsonWriter& out, int64_t count) {
  if (count == ir::kUnlimited) return out.null();
  out.number(count);
}

void partition_json(JsonWriter& out, const check::PartitionQuota& partition) {
  out.key(partition.profile);
  out.begin_object();
  out.key("nominal");
  count_json(out, partition.nominal);
  out.key("borrowing_limit");
  count_json(out, partition.borrowing_limit);
  if (partition.lending_limit != ir::kUnlimited) {
    out.key("lending_limit");
    count_json(out, partition.lending_limit);
  }
  out.end_object();
}

/// A count of partitions as text: the number, or `unlimited`.
std::string count_text(int64_t count) {
  return count == ir::kUnlimited ? std::string("unlimited") : fmt::format("{}", count);
}

/// A quota's figures as one JSON object (what quota_json writes under the type's name).
void quota_object_json(JsonWriter& out, const Policy& p, const check::Quota& quota, const check::Team* team = nullptr) {
  out.begin_object();
  for (ir::Resource r : shown_resources(p.types()[quota.type], &quota, team)) {
    const size_t i = ir::index(r);
    out.key(ir::resource_key(r));
    out.begin_object();
    out.key("nominal");
    amount_json(out, r, quota.nominal[i]);
    out.key("borrowing_limit");
    amount_json(out, r, quota.borrowing_limit[i]);
    if (quota.lending_limit[i] != ir::kUnlimited) {
      out.key("lending_limit");
      amount_json(out, r, quota.lending_limit[i]);
    }
    out.end_object();
  }
  if (!quota.partitions.empty()) {
    out.key("partitions");
    out.begin_object();
    for (const check::PartitionQuota& partition : quota.partitions) partition_json(out, partition);
    out.end_object();
  }
  out.end_object();
}

/// `"<type>": {...}`: a quota keyed by its instance type.
void quota_json(JsonWriter& out, const Policy& p, const check::Quota& quota, const check::Team* team = nullptr) {
  out.key(quota.type_name);
  quota_object_json(out, p, quota, team);
}

void team_json(JsonWriter& out, const Policy& p, const check::Team& team) {
  out.key(team.name);
  out.begin_object();
  out.field("sharing", check::word_of(team.sharing));
  // null for `borrow-limit = unlimited`
  out.key("borrow_limit_percent");
  if (team.borrow_limit_unlimited) out.null();
  else out.number(int64_t{team.borrow_limit_percent});
  out.key("fair_share_weight");
  out.decimal(model::weight_text(team.fair_share_weight_micros));
  out.field("preempt_team_tasks", check::word_of(team.preempt_team_tasks));
  out.field("active", team.active);
  controls_json(out, p, team);
  out.key("quotas");
  out.begin_object();
  for (const check::Quota& quota : team.quotas) quota_json(out, p, quota, &team);
  out.end_object();
  if (!team.groups.empty()) {  // `resource-groups`, as written (absent for a team without)
    out.key("resource_groups");
    out.begin_array();
    for (const check::ResourceGroup& group : team.groups) {
      out.begin_object();
      out.field("name", group.name);
      out.key("covers");
      out.begin_array();
      for (ir::Resource r : group.covers) out.string(check::resource_word(r));
      out.end_array();
      out.key("flavors");
      out.begin_array();
      for (const auto& [name, at] : group.flavors) out.string(name);
      out.end_array();
      out.end_object();
    }
    out.end_array();
  }
  out.end_object();
}

/// Instances of `type` that `amounts` add up to, and their text.
double instances_of(const check::InstanceType& type, const model::Resources& amounts) {
  return type.instances_holding(amounts);
}
std::string instances_text(double instances) { return model::format_instances(instances, 3); }

std::string json(const Policy& p) {
  JsonWriter out(/*indented=*/false);
  out.begin_object();
  out.field("cluster", p.cluster ? std::string_view(p.cluster->name) : std::string_view());
  const check::Settings settings = p.settings.value_or(check::Settings{});
  out.field("prioritization", check::word_of(settings.prioritization));
  out.field("idle_compute", check::word_of(settings.idle_compute));
  out.field("idle_resource_sharing", settings.idle_resource_sharing);
  if (settings.default_class >= 0) out.field("default_priority", p.classes[settings.default_class].name);
  out.key("fair_share_preemption");
  out.begin_array();
  for (ir::FairShareStrategy s : settings.fair_share_strategies) out.string(check::word_of(s));
  out.end_array();
  out.key("priorities");
  out.begin_object();
  for (const check::PriorityClass& c : p.classes) out.field(c.name, int64_t{c.weight});
  out.end_object();
  out.key("teams");
  out.begin_object();
  for (const check::Team& team : p.teams) team_json(out, p, team);
  out.end_object();
  // The rules as the text form lists them: name, effect, condition and message as written.
  out.key("rules");
  out.begin_array();
  for (const check::Rule& rule : p.rules) {
    out.begin_object();
    out.field("name", rule.name);
    out.field("effect", rule.action == ast::RuleAction::deny ? "deny" : "warn");
    out.field("when", rule.condition_text);
    out.field("message", rule.message_text);
    out.end_object();
  }
  out.end_array();
  if (p.cohort) {
    // The cohort's own quota (`cohort NAME { quota ... }`): nominal amounts only.
    out.key("cohort");
    out.begin_object();
    out.field("name", p.cohort->name);
    out.key("quotas");
    out.begin_object();
    for (const check::Quota& quota : p.cohort->quotas) {
      out.key(quota.type_name);
      out.begin_object();
      for (ir::Resource r : shown_resources(p.types()[quota.type], &quota)) {
        out.key(ir::resource_key(r));
        amount_json(out, r, quota.nominal[ir::index(r)]);
      }
      for (const check::PartitionQuota& partition : quota.partitions) out.field(partition.profile, partition.nominal);
      out.end_object();
    }
    out.end_object();
    out.end_object();
  }
  if (!p.cohort_tree.empty()) {
    // The tree of cohorts: each cohort's parent, weight, teams, and per instance type its own
    // quota with its limits and its effective (subtree) quota.
    out.key("cohorts");
    out.begin_object();
    for (size_t c = 0; c < p.cohort_tree.size(); ++c) {
      const check::Cohort& cohort = p.cohort_tree[c];
      out.key(cohort.name);
      out.begin_object();
      if (cohort.parent >= 0) out.field("parent", p.cohort_tree[static_cast<size_t>(cohort.parent)].name);
      out.key("fair_share_weight");
      out.decimal(model::weight_text(cohort.fair_share_weight_micros));
      out.key("teams");
      out.begin_array();
      for (const check::Team& team : p.teams) {
        if (team.cohort_index == static_cast<int32_t>(c)) out.string(team.name);
      }
      out.end_array();
      out.key("quotas");
      out.begin_object();
      for (size_t t = 0; t < p.types().size(); ++t) {
        if (!check::subtree_has_type(p, c, t)) continue;
        const check::InstanceType& type = p.types()[t];
        const model::Resources subtree = check::subtree_quota(p, c, t);
        out.key(type.name);
        out.begin_object();
        const check::Quota* own = nullptr;
        for (const check::Quota& q : cohort.quotas) {
          if (q.type == t) own = &q;
        }
        if (own) {
          out.key("own");  // already under the type's key
          quota_object_json(out, p, *own);
        }
        out.key("subtree");
        out.begin_object();
        for (ir::Resource r : shown_resources(type, own)) {
          out.key(ir::resource_key(r));
          amount_json(out, r, subtree[ir::index(r)]);
        }
        out.end_object();
        out.end_object();
      }
      out.end_object();
      out.end_object();
    }
    out.end_object();
  }
  out.key("capacity");
  out.begin_object();
  if (p.cluster) {
    for (const check::Capacity& cap : p.cluster->capacity) {
      const check::InstanceType& type = p.types()[cap.type];
      out.key(type.name);
      out.begin_object();
      out.field("instances", int64_t{cap.instances});
      model::Resources total{};
      for (const check::Team& team : p.teams) {
        for (const check::Quota& q : team.quotas) {
          if (q.type != cap.type) continue;
          for (size_t r = 0; r < model::kResourceCount; ++r) total[r] += q.nominal[r];
        }
      }
      out.key("guaranteed_instances");  // Σ nominal quotas, in instances (the largest share of any resource)
      out.decimal(instances_text(instances_of(type, total)));
      for (ir::Resource r : shown_resources(type)) {
        out.key(ir::resource_key(r));
        amount_json(out, r, cap.instances * type.per_instance[ir::index(r)]);
      }
      out.end_object();
    }
  }
  out.end_object();
  out.end_object();
  return out.finish();
}

}  // namespace

namespace {

/// A quota cell: devices and vCPUs as numbers, memory in the largest unit that divides it
/// (`192 GiB`, `2 TiB`, `9830 MiB`), never a long GiB fraction.
std::string cell(ir::Resource r, ir::Amount a) {
  if (r != ir::Resource::memory || a == ir::kUnlimited) return human(r, a);
  return model::format_amount(r, a, model::language_notation());
}

/// Per instance type of the cluster: capacity, what the teams are guaranteed (in instances),
/// what no team is guaranteed, and who holds the guarantees. The first thing an
/// administrator checks.
/// One cohort of the tree and, indented below it, its children: its teams, then per instance type
/// its own quota and limits beside its effective (subtree) quota.
void cohort_text(const Policy& p, size_t c, size_t depth, std::string& out) {
  const check::Cohort& cohort = p.cohort_tree[c];
  const std::string indent(2 * depth, ' ');
  std::vector<std::string> teams;
  for (const check::Team& team : p.teams) {
    if (team.cohort_index == static_cast<int32_t>(c)) teams.push_back(team.name);
  }
  out += fmt::format("{}cohort {}: {}, fair-share weight {}, teams {}\n", indent, cohort.name,
                     cohort.parent >= 0 ? fmt::format("parent {}", p.cohort_tree[static_cast<size_t>(cohort.parent)].name)
                                        : std::string("a root"),
                     model::weight_text(cohort.fair_share_weight_micros),
                     teams.empty() ? std::string("none") : fmt::format("{}", fmt::join(teams, ", ")));
  for (size_t t = 0; t < p.types().size(); ++t) {
    if (!check::subtree_has_type(p, c, t)) continue;
    const check::InstanceType& type = p.types()[t];
    const check::Quota* own = nullptr;
    for (const check::Quota& q : cohort.quotas) {
      if (q.type == t) own = &q;
    }
    const model::Resources subtree = check::subtree_quota(p, c, t);
    out += fmt::format("{}  {:<24} {:>10} {:>16} {:>14} {:>10}\n", indent, type.name, "own", "borrowing limit",
                       "lending limit", "subtree");
    for (ir::Resource r : shown_resources(type, own)) {
      const size_t i = ir::index(r);
      const ir::Amount none = 0;
      out += fmt::format("{}    {:<22} {:>10} {:>16} {:>14} {:>10}\n", indent,
                         ir::resource_key(r) == std::string_view("memory_gib") ? "memory" : ir::resource_key(r),
                         cell(r, own ? own->nominal[i] : none),
                         own && own->borrowing_limit[i] != model::kUnlimited ? cell(r, own->borrowing_limit[i]) : "none",
                         own && own->lending_limit[i] != model::kUnlimited ? cell(r, own->lending_limit[i]) : "none",
                         cell(r, subtree[i]));
    }
  }
  for (size_t child = 0; child < p.cohort_tree.size(); ++child) {
    if (child != c && p.cohort_tree[child].parent == static_cast<int32_t>(c)) cohort_text(p, child, depth + 1, out);
  }
}

std::string cohort_tree_text(const Policy& p) {
  std::string out = "\ncohorts: a tree; a cohort's subtree quota is its own plus what its teams and child cohorts lend it\n";
  for (size_t c = 0; c < p.cohort_tree.size(); ++c) {
    if (p.cohort_tree[c].parent < 0) cohort_text(p, c, 1, out);
  }
  return out;
}

std::string capacity_table(const Policy& p) {
  std::vector<std::array<std::string, 5>> rows = {{"instance type", "capacity", "guaranteed", "unreserved", "guaranteed to"}};
  for (const check::Capacity& cap : p.cluster->capacity) {
    const check::InstanceType& type = p.types()[cap.type];
    model::Resources total{};
    std::vector<std::string> holders;
    for (const check::Team& team : p.teams) {
      for (const check::Quota& q : team.quotas) {
        if (q.type != cap.type) continue;
        for (size_t r = 0; r < model::kResourceCount; ++r) total[r] += q.nominal[r];
        holders.push_back(fmt::format("{} {}", team.name, instances_text(instances_of(type, q.nominal))));
      }
    }
    const double guaranteed = instances_of(type, total);
    const double unreserved = static_cast<double>(cap.instances) - guaranteed;
    rows.push_back({type.name, std::to_string(cap.instances), instances_text(guaranteed),
                    unreserved < -1e-9 ? fmt::format("over by {}", instances_text(-unreserved)) : instances_text(std::max(unreserved, 0.0)),
                    holders.empty() ? "-" : fmt::format("{}", fmt::join(holders, ", "))});
  }
  std::array<size_t, 5> width{};
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    out += fmt::format("  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {}\n", row[0], width[0], row[1], width[1], row[2], width[2], row[3],
                       width[3], row[4]);
  }
  return out;
}

}  // namespace

std::string inspection_text(const check::Policy& p) {
  std::string out;
  const check::Settings settings = p.settings.value_or(check::Settings{});
  if (p.cluster) {
    out += fmt::format("cluster {} (catalog {}), capacity and guaranteed quota in instances\n", p.cluster->name,
                       p.catalogs[p.cluster->catalog].name);
    out += capacity_table(p);
    out += "\n";
  }
  out += fmt::format("policy: task prioritization {}, idle compute {}, idle-resource sharing {}\n",
                     check::word_of(settings.prioritization),
                     check::word_of(settings.idle_compute),
                     settings.idle_resource_sharing ? "on" : "off");
  if (settings.idle_compute == check::IdleCompute::fair_share) {
    out += fmt::format("fair-share preemption: {}\n", strategies_text(settings));
  }
  // Classes as the engine ranks them: highest weight first.
  std::vector<const check::PriorityClass*> ranked;
  for (const check::PriorityClass& c : p.classes) ranked.push_back(&c);
  std::stable_sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) { return a->weight > b->weight; });
  std::vector<std::string> classes;
  for (const check::PriorityClass* c : ranked) classes.push_back(fmt::format("{} {}", c->name, c->weight));
  out += fmt::format("priority classes, highest first: {}\n", classes.empty() ? "none" : fmt::format("{}", fmt::join(classes, ", ")));
  out += fmt::format("default priority: {}\n", settings.default_class >= 0
                                                    ? p.classes[static_cast<size_t>(settings.default_class)].name
                                                    : std::string("none (a task without a class has priority 0)"));
  if (!p.rules.empty()) {
    out += "rules:\n";
    for (const check::Rule& r : p.rules) {
      out += fmt::format("  {}: when {} {} {}\n", r.name, r.condition_text, r.action == ast::RuleAction::deny ? "deny" : "warn",
                         r.message_text);
    }
  }
  if (p.cohort) {
    out += fmt::format("\ncohort {}: its own quota, which every team may borrow and none reclaims\n", p.cohort->name);
    for (const check::Quota& quota : p.cohort->quotas) {
      out += fmt::format("  {:<24} {:>10}\n", quota.type_name, "nominal");
      for (ir::Resource r : shown_resources(p.types()[quota.type], &quota)) {
        const size_t i = ir::index(r);
        out += fmt::format("    {:<22} {:>10}\n", ir::resource_key(r) == std::string_view("memory_gib") ? "memory" : ir::resource_key(r),
                           cell(r, quota.nominal[i]));
      }
      for (const check::PartitionQuota& partition : quota.partitions) {
        out += fmt::format("    {:<22} {:>10}\n", partition.profile, count_text(partition.nominal));
      }
    }
  }
  if (!p.cohort_tree.empty()) out += cohort_tree_text(p);
  for (const check::Team& team : p.teams) {
    out += fmt::format("\nteam {}: {}, borrow limit {}, preempt team tasks {}, fair-share weight {}{}\n", team.name,
                       check::word_of(team.sharing), team.borrow_limit_text(), check::word_of(team.preempt_team_tasks),
                       model::weight_text(team.fair_share_weight_micros), team.active ? "" : ", inactive");
    const std::string threshold =
        team.borrow_priority_threshold >= 0 ? fmt::format(" up to {}", threshold_name(p, team)) : std::string();
    out += fmt::format("  preemption: reclaim within cohort {}, borrow within cohort {}{}\n",
                       check::word_of(team.reclaim_within_cohort),
                       check::word_of(team.borrow_within_cohort), threshold);
    out += fmt::format("  queueing {}; flavors: when can borrow {}, when can preempt {}, preference {}\n",
                       check::word_of(team.queueing), check::word_of(team.when_can_borrow),
                       check::word_of(team.when_can_preempt),
                       check::word_of(team.flavor_preference));
    for (const check::ResourceGroup& group : team.groups) {
      std::vector<std::string_view> covers;
      std::vector<std::string_view> flavors;
      for (ir::Resource r : group.covers) covers.push_back(check::resource_word(r));
      for (const auto& [name, at] : group.flavors) flavors.push_back(name);
      out += fmt::format("  resource group {}: {} from {}\n", group.name, fmt::join(covers, ", "), fmt::join(flavors, ", then "));
    }
    for (const check::Quota& quota : team.quotas) {
      out += fmt::format("  {:<24} {:>10} {:>16} {:>14}\n", quota.type_name, "nominal", "borrowing limit", "lending limit");
      for (ir::Resource r : shown_resources(p.types()[quota.type], &quota, &team)) {
        const size_t i = ir::index(r);
        out += fmt::format("    {:<22} {:>10} {:>16} {:>14}\n", ir::resource_key(r) == std::string_view("memory_gib") ? "memory" : ir::resource_key(r),
                           cell(r, quota.nominal[i]), cell(r, quota.borrowing_limit[i]), cell(r, quota.lending_limit[i]));
      }
      for (const check::PartitionQuota& partition : quota.partitions) {
        out += fmt::format("    {:<22} {:>10} {:>16} {:>14}\n", partition.profile, count_text(partition.nominal),
                           count_text(partition.borrowing_limit), count_text(partition.lending_limit));
      }
    }
  }
  return out;
}

namespace {

int run_inspect(const Args& args) {
  if (args.positional.size() != 1) {
    fmt::print(stderr, "error: `gov inspect` takes exactly one FILE\n");
    return kUsage;
  }
  const std::string format = args.value("format").value_or("text");
  if (format != "text" && format != "json") {
    fmt::print(stderr, "error: unknown format `{}` (expected text or json)\n", escape_for_terminal(format));
    return kUsage;
  }
  int status = kOk;
  std::unique_ptr<driver::Policy> policy =
      load_policy(driver::Source::file(args.positional[0], root_option(args)), driver::Request::up_to(driver::Stage::check), status);
  if (!policy) return status;
  const CheckedPolicy* checked = &policy->checked;
  if (!checked->ok()) {
    DiagnosticPrinter printer;
    printer.add(checked->diagnostics(), checked->program.sources);
    fmt::print(stderr, "{}", printer.text());
    return kFailed;
  }
  fmt::print("{}", format == "json" ? json(checked->result.policy) : inspection_text(checked->result.policy));
  return kOk;
}

}  // namespace

Command inspect_command() {
  return {{"inspect", "gov inspect FILE [--format text|json]",
           "Print the resolved policy: capacity against guarantees, classes, rules, and per team the limits.",
           "Quotas are shown after defaults (docs/semantics.md §2): fine-grained quotas filled by the largest ratio,\n"
           "GPU partitions (MIG profiles) with the vCPU and memory their share of the instance gives,\n"
           "borrowing limits from the percentage or absolute limits, lending limits from the sharing strategy\n"
           "or `lending-limit`; each team's Kueue controls (preemption, queueing, flavor fungibility) and the\n"
           "fair-share preemption strategies with their defaults filled in.\n"
           "First, per instance type of the cluster: its capacity, the instances the teams are guaranteed\n"
           "(the largest share of any resource), what no team is guaranteed, and the teams' shares. vCPU in\n"
           "vCPUs, memory in the largest of TiB, GiB and MiB that divides it (JSON: exact GiB).\n"
           "The policy must have one `cluster` and one `policy`.",
           {{"format", "FORMAT", "text (default) or json"}, root_option_spec()}},
          run_inspect};
}

}  // namespace gov::cli
