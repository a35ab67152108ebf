// `gov inspect`: the resolved policy — quotas after defaults, classes, capacity.
#include <fmt/format.h>

#include "compiler/check/surface.hpp"
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

/// Resources shown for a type: those an instance has (GPU or Neuron, vCPU, memory, EFA).
std::vector<ir::Resource> shown_resources(const check::InstanceType& type, const check::Quota* quota = nullptr) {
  std::vector<ir::Resource> out;
  for (ir::Resource r : ir::kAllResources) {
    if (type.per_instance[ir::index(r)] > 0 || (quota && quota->nominal[ir::index(r)] > 0)) out.push_back(r);
  }
  return out;
}

/// The class a team's borrow threshold names, or "none".
std::string threshold_name(const Policy& p, const check::Team& team) {
  return team.borrow_priority_threshold >= 0 ? p.classes[static_cast<size_t>(team.borrow_priority_threshold)].name
                                             : std::string("none");
}

/// Kueue's controls of a team (docs/language.md), effective values, as JSON members.
std::string controls_json(const Policy& p, const check::Team& team) {
  return fmt::format(
      ",\"reclaim_within_cohort\":\"{}\",\"borrow_within_cohort\":{{\"policy\":\"{}\",\"max_priority_threshold\":{}}}"
      ",\"queueing\":\"{}\",\"when_can_borrow\":\"{}\",\"when_can_preempt\":\"{}\",\"flavor_preference\":\"{}\"",
      check::word_of(team.reclaim_within_cohort), check::word_of(team.borrow_within_cohort),
      team.borrow_priority_threshold >= 0 ? fmt::format("\"{}\"", threshold_name(p, team)) : std::string("null"),
      check::word_of(team.queueing), check::word_of(team.when_can_borrow),
      check::word_of(team.when_can_preempt), check::word_of(team.flavor_preference));
}

std::string strategies_text(const check::Settings& settings, std::string_view quote) {
  std::vector<std::string> names;
  for (ir::FairShareStrategy s : settings.fair_share_strategies) {
    names.push_back(fmt::format("{}{}{}", quote, check::word_of(s), quote));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string json(const Policy& p) {
  std::string out = "{";
  out += fmt::format("\"cluster\":\"{}\"", p.cluster ? p.cluster->name : "");
  const check::Settings settings = p.settings.value_or(check::Settings{});
  out += fmt::format(",\"prioritization\":\"{}\"",
                     check::word_of(settings.prioritization));
  out += fmt::format(",\"idle_compute\":\"{}\"", check::word_of(settings.idle_compute));
  out += fmt::format(",\"idle_resource_sharing\":{}", settings.idle_resource_sharing);
  if (settings.default_class >= 0) out += fmt::format(",\"default_priority\":\"{}\"", p.classes[settings.default_class].name);
  out += fmt::format(",\"fair_share_preemption\":[{}]", strategies_text(settings, "\""));
  out += ",\"priorities\":{";
  for (size_t i = 0; i < p.classes.size(); ++i) {
    out += fmt::format("{}\"{}\":{}", i ? "," : "", p.classes[i].name, p.classes[i].weight);
  }
  out += "},\"teams\":{";
  for (size_t t = 0; t < p.teams.size(); ++t) {
    const check::Team& team = p.teams[t];
    out += fmt::format(
        "{}\"{}\":{{\"sharing\":\"{}\",\"borrow_limit_percent\":{},\"fair_share_weight\":{},\"preempt_team_tasks\":\"{}\","
        "\"active\":{}{},\"quotas\":{{",
        t ? "," : "", team.name, check::word_of(team.sharing), team.borrow_limit_percent, team.fair_share_weight,
        check::word_of(team.preempt_team_tasks), team.active, controls_json(p, team));
    for (size_t q = 0; q < team.quotas.size(); ++q) {
      const check::Quota& quota = team.quotas[q];
      out += fmt::format("{}\"{}\":{{", q ? "," : "", quota.type_name);
      const auto resources = shown_resources(p.types()[quota.type], &quota);
      for (size_t k = 0; k < resources.size(); ++k) {
        const size_t r = ir::index(resources[k]);
        out += fmt::format("{}\"{}\":{{\"nominal\":{},\"borrowing_limit\":{}", k ? "," : "", ir::resource_key(resources[k]),
                           human(resources[k], quota.nominal[r]), human(resources[k], quota.borrowing_limit[r]));
        if (quota.lending_limit[r] != ir::kUnlimited) {
          out += fmt::format(",\"lending_limit\":{}", human(resources[k], quota.lending_limit[r]));
        }
        out += "}";
      }
      out += "}";
    }
    out += "}}";
  }
  out += "},\"capacity\":{";
  if (p.cluster) {
    for (size_t c = 0; c < p.cluster->capacity.size(); ++c) {
      const check::Capacity& cap = p.cluster->capacity[c];
      const check::InstanceType& type = p.types()[cap.type];
      out += fmt::format("{}\"{}\":{{\"instances\":{}", c ? "," : "", type.name, cap.instances);
      for (ir::Resource r : shown_resources(type)) {
        out += fmt::format(",\"{}\":{}", ir::resource_key(r), human(r, cap.instances * type.per_instance[ir::index(r)]));
      }
      out += "}";
    }
  }
  out += "}}\n";
  return out;
}

}  // namespace

std::string inspection_text(const check::Policy& p) {
  std::string out;
  const check::Settings settings = p.settings.value_or(check::Settings{});
  if (p.cluster) {
    out += fmt::format("cluster {} (catalog {})\n", p.cluster->name, p.catalogs[p.cluster->catalog].name);
    for (const check::Capacity& cap : p.cluster->capacity) {
      const check::InstanceType& type = p.types()[cap.type];
      std::vector<std::string> parts;
      for (ir::Resource r : shown_resources(type)) {
        parts.push_back(fmt::format("{} {}", human(r, cap.instances * type.per_instance[ir::index(r)]),
                                    r == ir::Resource::memory ? "GiB memory" : ir::resource_key(r)));
      }
      out += fmt::format("  {} × {}: {}\n", cap.instances, type.name, fmt::join(parts, ", "));
    }
  }
  out += fmt::format("policy: task prioritization {}, idle compute {}, idle-resource sharing {}\n",
                     check::word_of(settings.prioritization),
                     check::word_of(settings.idle_compute),
                     settings.idle_resource_sharing ? "on" : "off");
  if (settings.idle_compute == check::IdleCompute::fair_share) {
    out += fmt::format("fair-share preemption: {}\n", strategies_text(settings, ""));
  }
  std::vector<std::string> classes;
  for (const check::PriorityClass& c : p.classes) classes.push_back(fmt::format("{} {}", c.name, c.weight));
  out += fmt::format("priority classes: {}\n", classes.empty() ? "none" : fmt::format("{}", fmt::join(classes, ", ")));
  for (const check::Team& team : p.teams) {
    out += fmt::format("\nteam {}: {}, borrow limit {}%, preempt team tasks {}, fair-share weight {}{}\n", team.name,
                       check::word_of(team.sharing), team.borrow_limit_percent, check::word_of(team.preempt_team_tasks),
                       team.fair_share_weight, team.active ? "" : ", inactive");
    const std::string threshold =
        team.borrow_priority_threshold >= 0 ? fmt::format(" up to {}", threshold_name(p, team)) : std::string();
    out += fmt::format("  preemption: reclaim within cohort {}, borrow within cohort {}{}\n",
                       check::word_of(team.reclaim_within_cohort),
                       check::word_of(team.borrow_within_cohort), threshold);
    out += fmt::format("  queueing {}; flavors: when can borrow {}, when can preempt {}, preference {}\n",
                       check::word_of(team.queueing), check::word_of(team.when_can_borrow),
                       check::word_of(team.when_can_preempt),
                       check::word_of(team.flavor_preference));
    for (const check::Quota& quota : team.quotas) {
      out += fmt::format("  {:<24} {:>10} {:>16} {:>14}\n", quota.type_name, "nominal", "borrowing limit", "lending limit");
      for (ir::Resource r : shown_resources(p.types()[quota.type], &quota)) {
        const size_t i = ir::index(r);
        out += fmt::format("    {:<22} {:>10} {:>16} {:>14}\n", r == ir::Resource::memory ? "memory (GiB)" : ir::resource_key(r), human(r, quota.nominal[i]),
                           human(r, quota.borrowing_limit[i]), human(r, quota.lending_limit[i]));
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
      load_policy(driver::Source::file(args.positional[0]), driver::Request::up_to(driver::Stage::check), status);
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
           "Print the resolved policy: per team and instance type the nominal, borrowing and lending limits.",
           "Quotas are shown after defaults (docs/semantics.md §2): fine-grained quotas filled by the largest ratio,\n"
           "borrowing limits from the percentage or absolute limits, lending limits from the sharing strategy\n"
           "or `lending-limit`; each team's Kueue controls (preemption, queueing, flavor fungibility) and the\n"
           "fair-share preemption strategies with their defaults filled in.\n"
           "vCPU in vCPUs, memory in GiB. The policy must have one `cluster` and one `policy`.",
           {{"format", "FORMAT", "text (default) or json"}}},
          run_inspect};
}

}  // namespace gov::cli
