// The checker: teams and quotas (sharing, borrowing and lending limits, Kueue's controls).
#include "compiler/check/checker.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "compiler/model/hyperpod_names.hpp"
#include "compiler/model/quantities.hpp"

#include "compiler/ast/source_text.hpp"
#include "compiler/check/quantities.hpp"
#include "compiler/check/quotas.hpp"

namespace gov::check {

void Checker::check_teams() {
  std::map<std::string, Location> seen;
  for (const auto& [team, source] : teams_) {
    if (duplicate(seen, team->name.text, {source, team->name.span}, "team")) continue;
    check_name_format(team->name, source, "a team");
    policy_.teams.push_back(resolve_team(*team, source));
  }
  check_queue_claims();
}

void Checker::check_cohort() {
  if (cohorts_.empty()) {
    for (const Team& team : policy_.teams) {
      if (team.cohort_at) unknown_cohort(team.cohort, *team.cohort_at, "team", team.name);
    }
    return;
  }
  // A tree: a team names its cohort, a cohort its parent, or several cohorts are declared (each
  // then either has a parent or is a root some team joins). Otherwise the one flat cohort.
  const bool any_team_joins = std::any_of(policy_.teams.begin(), policy_.teams.end(),
                                          [](const Team& t) { return t.cohort_at.has_value(); });
  std::vector<Cohort> cohorts;
  std::map<std::string, Location> seen;
  for (const auto& [decl, source] : cohorts_) {
    if (duplicate(seen, decl->name.text, {source, decl->name.span}, "cohort")) continue;
    cohorts.push_back(resolve_cohort(*decl, source));
  }
  const bool tree = any_team_joins || std::any_of(cohorts.begin(), cohorts.end(),
                                                  [](const Cohort& c) { return c.parent_at.has_value(); });
  if (!tree) {
    for (size_t i = 1; i < cohorts.size(); ++i) {
      Diagnostic& d = report(Code::second_cohort, cohorts[i].where,
                             fmt::format("a second cohort `{}`: every team is in one cohort", cohorts[i].name),
                             "second cohort");
      d.notes.push_back({cohorts.front().where, "the cohort is declared here"});
      d.help = fmt::format("give its quotas to the first cohort, or make a tree: `parent = {}` in it, and `cohort = {}` "
                           "in the teams that join it",
                           cohorts.front().name, cohorts[i].name);
    }
    for (const Cohort& c : cohorts) root_limits(c);
    policy_.cohort = std::move(cohorts.front());
    check_idle_sharing(*policy_.cohort);
    return;
  }
  check_cohort_tree(std::move(cohorts));
}

Cohort Checker::resolve_cohort(const ast::Cohort& decl, SourceId source) {
  Cohort out;
  out.name = decl.name.text;
  out.where = {source, decl.name.span};
  for (const auto& item : decl.items) {
    if (const auto* p = std::get_if<ast::Property>(&item)) assign(cohort_table(), *p, *this, source, out);
  }
  // Quotas resolve as a lend-and-borrow team's would, with the cohort's borrow limit.
  Team owner;
  owner.name = out.name;
  owner.where = out.where;
  owner.borrow_limit_unlimited = out.borrow_limit_unlimited;
  owner.borrow_limit_percent = out.borrow_limit_percent;
  std::map<std::string, Location> types_seen;
  for (const auto& item : decl.items) {
    const auto* q = std::get_if<ast::Quota>(&item);
    if (!q) continue;
    auto [it, inserted] = types_seen.emplace(q->instance_type.text, Location{source, q->instance_type.span});
    if (!inserted) {
      Diagnostic& d = report(Code::duplicate_quota, {source, q->instance_type.span},
                             fmt::format("cohort `{}` has two quotas for `{}`", out.name, q->instance_type.text),
                             "second quota");
      d.notes.push_back({it->second, "the first quota is here"});
      d.help = "merge them into one `quota` block";
      continue;
    }
    if (auto quota = resolve_quota(*q, source, owner, /*cohort=*/true)) out.quotas.push_back(std::move(*quota));
  }
  return out;
}

// A root borrows from no one: a borrow limit there has nothing to limit (Kueue's webhook refuses
// borrowingLimit on a Cohort without a parent). Quota-level limits are the schema check's.
void Checker::root_limits(const Cohort& cohort) {
  if (cohort.parent_at || !cohort.borrow_limit_at) return;
  Diagnostic& d = report(Code::root_cohort_limit, *cohort.borrow_limit_at,
                         fmt::format("cohort `{}` has no parent, so it has nobody to borrow from", cohort.name),
                         "a root's borrow limit");
  d.help = "remove `borrow-limit`, or give the cohort a `parent`";
}

// Idle-resource sharing makes the unreserved capacity the flat cohort's quota: one or the other.
void Checker::check_idle_sharing(const Cohort& cohort) {
  if (!policy_.settings || !policy_.settings->idle_resource_sharing || cohort.quotas.empty()) return;
  Diagnostic& d = report(Code::cohort_quota_with_idle_sharing, cohort.where,
                         fmt::format("cohort `{}` gives its own quota while `idle-resource-sharing` makes the unreserved "
                                     "capacity the cohort's quota",
                                     cohort.name),
                         "the cohort's own quota");
  d.notes.push_back({policy_.settings->where, "`idle-resource-sharing = true` is set in this policy"});
  d.help = "remove `idle-resource-sharing = true` (the cohort's quotas say what it holds), or the cohort's quotas";
}

void Checker::unknown_cohort(const std::string& name, Location where, std::string_view what, const std::string& who) {
  std::vector<std::string> names;
  for (const Cohort& c : policy_.cohort_tree) names.push_back(c.name);
  Diagnostic& d = report(Code::unknown_cohort, where,
                         fmt::format("{} `{}` names cohort `{}`, which the policy does not declare", what, who, name),
                         "unknown cohort");
  d.help = did_you_mean(name, names).value_or(fmt::format("declare it: `cohort {} {{ ... }}`", name));
}

// Kueue's validation of a tree: parents exist and form no cycle; a team is in exactly one cohort
// (its `cohort`, or the only root when it names none); limits only below a root.
void Checker::check_cohort_tree(std::vector<Cohort> cohorts) {
  policy_.cohort_tree = std::move(cohorts);
  std::vector<Cohort>& tree = policy_.cohort_tree;
  const auto index_of = [&tree](const std::string& name) -> int32_t {
    for (size_t i = 0; i < tree.size(); ++i) {
      if (tree[i].name == name) return static_cast<int32_t>(i);
    }
    return -1;
  };
  for (Cohort& c : tree) {
    if (!c.parent_at) continue;
    c.parent = index_of(c.parent_name);
    if (c.parent < 0) unknown_cohort(c.parent_name, *c.parent_at, "cohort", c.name);
  }
  // A cycle: walking parents from a cohort comes back to it. Reported once, at its member declared
  // first, naming every member; its parents are cut so that the tree stays a forest. Each cohort is
  // walked once (0: not yet, 1: on the current walk, 2: done): linear in the number of cohorts.
  std::vector<uint8_t> state(tree.size(), 0);
  std::vector<bool> reported(tree.size(), false);
  for (size_t start = 0; start < tree.size(); ++start) {
    std::vector<size_t> path;
    int32_t at = static_cast<int32_t>(start);
    while (at >= 0 && state[static_cast<size_t>(at)] == 0) {
      state[static_cast<size_t>(at)] = 1;
      path.push_back(static_cast<size_t>(at));
      at = tree[static_cast<size_t>(at)].parent;
    }
    if (at >= 0 && state[static_cast<size_t>(at)] == 1) {
      std::vector<size_t> cycle(std::find(path.begin(), path.end(), static_cast<size_t>(at)), path.end());
      std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
      std::vector<std::string> names;
      for (size_t i : cycle) names.push_back(fmt::format("`{}`", tree[i].name));
      names.push_back(fmt::format("`{}`", tree[cycle.front()].name));
      Diagnostic& d = report(Code::cohort_cycle, *tree[cycle.front()].parent_at,
                             fmt::format("the parents of cohort `{}` form a cycle: {}", tree[cycle.front()].name,
                                         fmt::join(names, " → ")),
                             "a cycle");
      d.help = "a cohort cannot be its own ancestor: one cohort of the cycle must be a root (no `parent`)";
      for (size_t i : cycle) reported[i] = true;
    }
    for (size_t i : path) state[i] = 2;
  }
  for (size_t i = 0; i < tree.size(); ++i) {
    if (reported[i]) tree[i].parent = -1;
  }
  std::vector<size_t> roots;
  for (size_t i = 0; i < tree.size(); ++i) {
    root_limits(tree[i]);
    if (!tree[i].parent_at) roots.push_back(i);
  }
  for (Team& team : policy_.teams) {
    if (team.cohort_at) {
      team.cohort_index = index_of(team.cohort);
      if (team.cohort_index < 0) unknown_cohort(team.cohort, *team.cohort_at, "team", team.name);
      continue;
    }
    if (roots.size() == 1) {
      team.cohort_index = static_cast<int32_t>(roots.front());
      continue;
    }
    Diagnostic& d = report(Code::team_without_cohort, team.where,
                           fmt::format("team `{}` joins no cohort, and the tree of cohorts has {} roots", team.name,
                                       roots.size()),
                           "which cohort?");
    d.help = "add `cohort = NAME` to the team (a team without one joins the root when there is only one)";
  }
  // HyperPod's idle-resource sharing is the capacity of its one flat cohort.
  if (policy_.settings && policy_.settings->idle_resource_sharing) {
    Diagnostic& d = report(Code::cohort_tree_with_idle_sharing, tree.front().where,
                           "a tree of cohorts while `idle-resource-sharing` makes the unreserved capacity the one flat "
                           "cohort's quota",
                           "a tree of cohorts");
    d.notes.push_back({policy_.settings->where, "`idle-resource-sharing = true` is set in this policy"});
    d.help = "remove `idle-resource-sharing = true` and give the root cohort its quota (`quota TYPE { ... }`)";
  }
}

// A LocalQueue name is a Kubernetes object name (a DNS subdomain), a namespace a DNS label.
// HyperPod's own queue names (`hyperpod-ns-<team>-localqueue`) always map to their team, so listing
// one would never be read.
void Checker::team_kubernetes_names(const Assignment& a, Team& team, bool namespaces) {
  static const std::regex subdomain("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  static const std::regex label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  const std::string_view what = namespaces ? "namespace" : "queue";
  const size_t longest = namespaces ? kMaxNamespaceLength : kMaxQueueNameLength;
  std::vector<Team::ClaimedName>& names = namespaces ? team.namespaces : team.queues;
  for (const ast::Value& item : a.value().list) {
    if (item.kind != ast::Value::Kind::string) continue;  // the schema check reported it
    const std::string name = item.string.plain();
    const Location where = a.at(item.span);
    if (name.size() > longest || !std::regex_match(name, namespaces ? label : subdomain)) {
      Diagnostic& d = report(Code::invalid_queue_name, where,
                             name.size() > longest
                                 ? fmt::format("a {} name is {} characters long; Kubernetes allows at most {}", what,
                                               name.size(), longest)
                                 : fmt::format("`{}` is not a Kubernetes {} name", name, namespaces ? "namespace" : "LocalQueue"),
                             fmt::format("invalid {} name", what));
      d.help = namespaces ? "a namespace name is lower-case letters, digits and `-`, starting and ending with a letter or digit"
                          : "a LocalQueue name is lower-case letters, digits, `-` and `.`, starting and ending with a letter "
                            "or digit";
      continue;
    }
    if (const std::optional<std::string> owner = namespaces ? std::nullopt : model::hyperpod_queue_team(name)) {
      Diagnostic& d = report(Code::invalid_queue_name, where,
                             fmt::format("`{}` is HyperPod's name of team `{}`'s queue, which always maps to that team", name,
                                         *owner),
                             "HyperPod's naming");
      d.help = "list only queues named otherwise";
      continue;
    }
    const auto same = [&](const Team::ClaimedName& q) { return q.name == name; };
    if (const auto it = std::find_if(names.begin(), names.end(), same); it != names.end()) {
      Diagnostic& d = report(Code::queue_claimed_twice, where,
                             fmt::format("team `{}` lists {} `{}` twice", team.name, what, name), "again here");
      d.notes.push_back({it->where, "first listed here"});
      continue;
    }
    names.push_back({name, where});
  }
}

void Checker::check_queue_claims() {
  for (const bool namespaces : {false, true}) {
    const std::string_view what = namespaces ? "namespace" : "queue";
    const auto names_of = [&](const Team& t) -> const std::vector<Team::ClaimedName>& {
      return namespaces ? t.namespaces : t.queues;
    };
    std::map<std::string, const Team*> owner;  // name -> the first team listing it
    for (const Team& team : policy_.teams) {
      for (const Team::ClaimedName& claimed : names_of(team)) {
        auto [it, inserted] = owner.emplace(claimed.name, &team);
        if (!inserted) {
          Diagnostic& d = report(Code::queue_claimed_twice, claimed.where,
                                 fmt::format("{} `{}` is claimed by teams `{}` and `{}`", what, claimed.name,
                                             it->second->name, team.name),
                                 "claimed again here");
          const std::vector<Team::ClaimedName>& first_names = names_of(*it->second);
          const auto first = std::find_if(first_names.begin(), first_names.end(),
                                          [&](const Team::ClaimedName& q) { return q.name == claimed.name; });
          d.notes.push_back({first->where, fmt::format("team `{}` claims it here", it->second->name)});
          d.help = namespaces ? "a workload of a namespace belongs to one team: keep the namespace in one team's `namespaces`"
                              : "a workload of a queue belongs to one team: keep the queue in one team's `queues`";
          continue;
        }
        if (namespaces) continue;
        // A queue named like another team is that team's LocalQueue under plain naming (`gov export
        // kueue --naming plain`); claiming it for this team would take that team's workloads.
        for (const Team& other : policy_.teams) {
          if (&other == &team || other.name != claimed.name) continue;
          Diagnostic& d = report(Code::queue_claimed_twice, claimed.where,
                                 fmt::format("queue `{}` is team `{}`'s own name, but team `{}` claims it", claimed.name,
                                             other.name, team.name),
                                 "claimed here");
          d.notes.push_back({other.where, fmt::format("team `{}` is defined here", other.name)});
          d.help = fmt::format("a queue named after a team is that team's (plain naming); rename the queue or list it in "
                               "team `{}`'s `queues`",
                               other.name);
        }
      }
    }
  }
}

Team Checker::resolve_team(const ast::Team& team, SourceId source) {
  Team out;
  out.name = team.name.text;
  out.where = {source, team.name.span};
  for (const auto& item : team.items) {
    if (const auto* p = std::get_if<ast::Property>(&item)) assign(team_table(), *p, *this, source, out);
  }
  std::map<std::string, Location> types_seen;
  size_t quota_count = 0;
  for (const auto& item : team.items) {
    const auto* q = std::get_if<ast::Quota>(&item);
    if (!q) continue;
    ++out.declared_quotas;
    if (++quota_count == kMaxQuotasPerTeam + 1) {
      report(Code::too_many_quotas, {source, q->instance_type.span},
             fmt::format("team `{}` has more than {} quotas (HyperPod's limit)", out.name, kMaxQuotasPerTeam),
             "the 16th quota");
    }
    auto [it, inserted] = types_seen.emplace(q->instance_type.text, Location{source, q->instance_type.span});
    if (!inserted) {
      Diagnostic& d = report(Code::duplicate_quota, {source, q->instance_type.span},
                             fmt::format("team `{}` has two quotas for `{}`", out.name, q->instance_type.text),
                             "second quota");
      d.notes.push_back({it->second, "the first quota is here"});
      d.help = "merge them into one `quota` block";
      continue;
    }
    if (auto quota = resolve_quota(*q, source, out)) out.quotas.push_back(std::move(*quota));
  }
  // HyperPod's default `borrowWithinCohort: LowerPriority` needs reclaiming (Kueue's CEL rule,
  // E0311 when written): a team that never reclaims defaults to never preempting while borrowing.
  if (!out.borrow_within_cohort_at && out.reclaim_within_cohort == model::ReclaimWithinCohort::never) {
    out.borrow_within_cohort = model::BorrowWithinCohort::never;
  }
  check_preemption_controls(out, out.reclaim_within_cohort_at);
  check_fungibility(out, out.flavor_preference_at);
  if (!out.groups.empty()) check_resource_groups(team, source, out);
  return out;
}

// Kueue's webhook: a resource in one group at most, an instance type in one group at most, each
// group's flavors giving only its covered resources; gov's quota blocks give the numbers, so a
// group names quota blocks, and every quota block is in a group. Partitions (MIG) are slices of
// GPUs: they go with the group that covers `gpus`.
void Checker::check_resource_groups(const ast::Team& decl, SourceId source, Team& team) {
  std::map<std::string, Location> declared;  // the team's quota blocks, resolved or not
  for (const auto& item : decl.items) {
    if (const auto* q = std::get_if<ast::Quota>(&item))
      declared.emplace(q->instance_type.text, Location{source, q->instance_type.span});
  }
  std::map<model::Resource, const ResourceGroup*> covered;
  std::map<std::string, const ResourceGroup*> listed;
  std::set<std::string> twice;  // listed in two groups (E0351): its quota's group is unclear
  for (const ResourceGroup& group : team.groups) {
    if (group.covers.empty() || group.flavors.empty()) {
      Diagnostic& d = report(Code::empty_resource_group, group.where,
                             fmt::format("resource group `{}` of team `{}` {}", group.name, team.name,
                                         group.covers.empty() ? "covers no resource" : "lists no instance type"),
                             "empty resource group");
      d.help = group.covers.empty() ? "write the resources it covers: `covers = [vcpus, memory]`"
                                    : "write the instance types it takes them from: `flavors = [ml.c5.xlarge]`";
    }
    for (model::Resource r : group.covers) {
      auto [it, inserted] = covered.emplace(r, &group);
      if (inserted) continue;
      Diagnostic& d = report(Code::resource_covered_twice, group.covers_at,
                             fmt::format("`{}` is covered by resource groups `{}` and `{}` of team `{}`", resource_word(r),
                                         it->second->name, group.name, team.name),
                             "covered again here");
      d.notes.push_back({it->second->covers_at, fmt::format("`{}` covers it first", it->second->name)});
      d.help = "a resource's flavors are chosen in one group: remove it from one of them";
    }
    for (const auto& [flavor, at] : group.flavors) {
      auto [it, inserted] = listed.emplace(flavor, &group);
      if (!inserted) {
        twice.insert(flavor);
        Diagnostic& d = report(Code::flavor_in_two_groups, at,
                               fmt::format("`{}` is listed in resource groups `{}` and `{}` of team `{}`", flavor,
                                           it->second->name, group.name, team.name),
                               "listed again here");
        for (const auto& [first, first_at] : it->second->flavors) {
          if (first == flavor) {
            d.notes.push_back({first_at, fmt::format("`{}` lists it first", it->second->name)});
            break;
          }
        }
        d.help = "an instance type gives the resources of one group: give each group its own instance types";
        continue;
      }
      if (!declared.contains(flavor)) {
        Diagnostic& d = report(Code::group_flavor_without_quota, at,
                               fmt::format("resource group `{}` lists `{}`, but team `{}` has no quota for it",
                                           group.name, flavor, team.name),
                               "no quota");
        d.help = fmt::format("add `quota {} {{ ... }}` to team `{}` with the amounts of {}", flavor, team.name,
                             group.covers.empty() ? std::string("the group's resources")
                                                  : fmt::format("`{}`", resource_word(group.covers.front())));
      }
    }
  }
  for (const auto& [flavor, at] : declared) {
    if (listed.contains(flavor)) continue;
    Diagnostic& d = report(Code::quota_without_group, at,
                           fmt::format("team `{}` has resource groups, but none lists its quota for `{}`", team.name, flavor),
                           "in no resource group");
    d.help = fmt::format("add `{}` to the `flavors` of the group that covers its resources", flavor);
  }
  for (const Quota& quota : team.quotas) {
    const auto it = listed.find(quota.type_name);
    if (it == listed.end() || twice.contains(quota.type_name)) continue;
    const ResourceGroup& group = *it->second;
    const auto covers = [&group](model::Resource r) {
      return std::find(group.covers.begin(), group.covers.end(), r) != group.covers.end();
    };
    for (model::Resource r : model::kAllResources) {
      if (!quota.given[model::index(r)] || covers(r)) continue;
      Diagnostic& d = report(Code::quota_outside_group, quota.where,
                             fmt::format("the quota for `{}` gives `{}`, which its resource group `{}` does not cover",
                                         quota.type_name, resource_word(r), group.name),
                             fmt::format("gives `{}`", resource_word(r)));
      d.notes.push_back({group.covers_at, fmt::format("`{}` covers only these", group.name)});
      d.help = fmt::format("remove `{}` from this quota, or cover it in group `{}`", resource_word(r), group.name);
    }
    if (!quota.partitions.empty() && !covers(model::Resource::gpu)) {
      Diagnostic& d = report(Code::quota_outside_group, quota.partitions.front().where,
                             fmt::format("the quota for `{}` gives partitions, which go with `gpus`, and its resource "
                                         "group `{}` does not cover `gpus`",
                                         quota.type_name, group.name),
                             "partitions");
      d.help = fmt::format("cover `gpus` in group `{}`, or move the partitions to a quota of the group that does", group.name);
    }
  }
}

/// `borrow-within-cohort = lower-priority`, or the block form with an optional
/// `max-priority-threshold` (a class: victims of other teams above its weight are spared).
void Checker::borrow_within_cohort(const Assignment& a, Team& out) {
  const ast::Value& v = a.value();
  const SourceId source = a.source;
  // An unknown word (reported by the schema check) is `never`, the default.
  const auto policy_of = [](const PropertySpec& spec, const std::string& text) {
    const std::optional<int> value = spec.value_of(text);
    return value ? static_cast<model::BorrowWithinCohort>(*value) : model::BorrowWithinCohort::never;
  };
  if (v.kind == ast::Value::Kind::name) {
    out.borrow_within_cohort = policy_of(a.spec, v.name.text);
    out.borrow_within_cohort_at = Location{source, v.span};
    return;
  }
  if (v.kind != ast::Value::Kind::block) return;  // the schema reported it
  out.borrow_within_cohort_at = Location{source, v.span};
  BorrowWithinCohortDraft block;
  assign_all(borrow_within_cohort_table(), v.block, *this, source, block);
  const ast::Property* policy = block.policy;
  if (!policy) {
    report(Code::missing_property, {source, v.span}, "`borrow-within-cohort` has no `policy`", "which policy?").help =
        "add `policy = lower-priority` (or write `borrow-within-cohort = never`)";
  } else if (policy->value->kind == ast::Value::Kind::name) {
    out.borrow_within_cohort = policy_of(find_row(borrow_within_cohort_table(), policy->key.text)->spec,
                                         policy->value->name.text);
  }
  const ast::Property* threshold = block.threshold;
  if (!threshold || threshold->value->kind != ast::Value::Kind::name) return;
  const std::string& name = threshold->value->name.text;
  auto it = std::find_if(policy_.classes.begin(), policy_.classes.end(),
                         [&](const PriorityClass& c) { return c.name == name; });
  if (it == policy_.classes.end()) {
    unknown_class(name, {source, threshold->value->span});
    return;
  }
  out.borrow_priority_threshold = static_cast<int32_t>(it - policy_.classes.begin());
  out.borrow_priority_threshold_at = Location{source, threshold->span};
}

/// Kueue's validation of preemption: borrowWithinCohort needs reclaimWithinCohort other than
/// Never (a team that never reclaims cannot reclaim while borrowing either).
void Checker::check_preemption_controls(const Team& team, const std::optional<Location>& reclaim_at) {
  if (team.borrow_within_cohort == model::BorrowWithinCohort::never ||
      team.reclaim_within_cohort != model::ReclaimWithinCohort::never || !team.borrow_within_cohort_at) {
    return;
  }
  Diagnostic& d = report(Code::borrow_without_reclaim, *team.borrow_within_cohort_at,
                         fmt::format("team `{}` may preempt while borrowing, but never reclaims", team.name),
                         "needs reclaim");
  if (reclaim_at) d.notes.push_back({*reclaim_at, "`reclaim-within-cohort` is `never` here"});
  d.help = "set `reclaim-within-cohort` to `lower-priority` or `any`, or remove `borrow-within-cohort`";
}

/// Kueue's validation of flavorFungibility: a preference only chooses among flavors when the
/// search tries them all, i.e. when both policies are TryNextFlavor.
void Checker::check_fungibility(const Team& team, const std::optional<Location>& preference_at) {
  if (!preference_at || (team.when_can_borrow == model::WhenCanBorrow::try_next_flavor &&
                         team.when_can_preempt == model::WhenCanPreempt::try_next_flavor)) {
    return;
  }
  const bool borrow_stops = team.when_can_borrow != model::WhenCanBorrow::try_next_flavor;
  Diagnostic& d = report(Code::preference_without_try_next_flavor, *preference_at,
                         fmt::format("team `{}` sets `flavor-preference`, but `{}` stops the search at the first "
                                     "instance type that can take the task",
                                     team.name, borrow_stops ? "when-can-borrow = borrow" : "when-can-preempt = preempt"),
                         "has no effect");
  d.help = "set `when-can-borrow = try-next-flavor` and `when-can-preempt = try-next-flavor`, or remove `flavor-preference`";
}

std::optional<Quota> Checker::resolve_quota(const ast::Quota& q, SourceId source, const Team& team, bool cohort) {
  const std::optional<size_t> type_index = resolve_type(q.instance_type.text, {source, q.instance_type.span});
  if (!type_index) return std::nullopt;
  const InstanceType& type = policy_.types()[*type_index];
  Quota out;
  out.type = *type_index;
  out.type_name = type.name;
  out.where = {source, q.span};
  QuotaDraft draft;
  draft.type = &type;
  draft.out = &out;
  assign_all(quota_table(), q.properties, *this, source, draft);
  const GivenAmounts& given = draft.given;
  const GivenAmounts& absolute = draft.absolute;
  const std::map<model::Resource, Span>& given_spans = draft.given_spans;
  const ast::Property* lending = draft.lending;
  const bool any_given = std::any_of(given.begin(), given.end(), [](const auto& a) { return a.has_value(); });
  const bool has_partitions = draft.partitions && draft.partitions->value->kind == ast::Value::Kind::map &&
                              !draft.partitions->value->map.empty();
  if (!out.instances && !any_given && !has_partitions) {
    // The limits (`borrow-limit`, `lending-limit`) are the quota's block-valued properties.
    const auto is_limit = [](const ast::Property& p) {
      const Property<QuotaDraft>* row = find_row(quota_table(), p.key.text);
      return row && row->spec.kind == ValueKind::resources;
    };
    if (!q.properties.empty() && std::all_of(q.properties.begin(), q.properties.end(), is_limit) == false) {
      return std::nullopt;  // the amounts were invalid and already reported
    }
    Diagnostic& d = report(Code::empty_quota, {source, q.instance_type.span},
                           fmt::format("the quota for `{}` gives no resources", type.name), "empty quota");
    d.help = "give `instances = N`, or amounts such as `gpus = 2`";
    return std::nullopt;
  }
  if (out.instances && (any_given || has_partitions)) {
    // HyperPod's quota entry takes Count or the amounts (Accelerators, VCpu, MemoryInGiB,
    // AcceleratorPartition), not both.
    std::vector<std::string> amounts;
    for (model::Resource r : model::kAllResources) {
      if (given[model::index(r)]) {
        amounts.push_back(fmt::format("{} = {}", resource_word(r), display_amount(r, *given[model::index(r)])));
      }
    }
    std::vector<Span> spans;
    for (const auto& [r, span] : given_spans) spans.push_back(span);
    if (has_partitions) {
      spans.push_back(draft.partitions->span);
      amounts.push_back(fmt::format("partitions = {}", ast::value_text(*draft.partitions->value)));
    }
    const auto first_amount =
        std::min_element(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
    Diagnostic& d = report(Code::quota_mixes_instances_and_amounts, {source, *first_amount},
                           fmt::format("the quota for `{}` gives both `instances` and amounts; HyperPod takes a "
                                       "count of instances or amounts, not both",
                                       type.name),
                           "an amount beside `instances`");
    if (const ast::Property* instances = find_property(q.properties, "instances")) {
      d.notes.push_back({Location{source, instances->span}, "`instances` is given here"});
    }
    d.help = fmt::format("write `quota {} {{ instances = {} }}` (every resource of {} {}) or `quota {} {{ {} }}` (the "
                         "amounts alone; unspecified vCPU and memory follow the accelerators' share)",
                         type.name, *out.instances, *out.instances, *out.instances == 1 ? "instance" : "instances",
                         type.name, fmt::join(amounts, ", "));
    return std::nullopt;
  }
  for (size_t r = 0; r < model::kResourceCount; ++r) out.absolute_borrow_limit[r] = absolute[r].has_value();
  out.nominal = resolve_nominal(type, out.instances, given);
  for (size_t r = 0; r < model::kResourceCount; ++r) out.given[r] = given[r].has_value();
  if (has_partitions) {
    if (!quota_partitions(draft, type, source, team, out)) return std::nullopt;
    out.nominal = resolve_quota_nominal(type, out.instances, given, out.partitions);
  }
  out.borrowing_limit = resolve_borrowing_limit(
      out.nominal, team.borrow_limit_unlimited ? std::nullopt : std::optional<int32_t>(team.borrow_limit_percent), absolute,
      team.sharing);
  out.lending_limit = resolve_lending_limit(team.sharing);
  if (lending) lending_limit(*lending, type, source, team, out, cohort);
  return out;
}

/// `lending-limit = { ... }` inside a quota: Kueue's lendingLimit, at most the nominal quota.
void Checker::lending_limit(const ast::Property& p, const InstanceType& type, SourceId source, const Team& team, Quota& out,
                            bool cohort) {
  if (team.sharing == model::Sharing::dont_lend) {
    Diagnostic& d = report(Code::lending_limit_without_lending, {source, p.key.span},
                           fmt::format("team `{}` lends nothing (`sharing = dont-lend`), so it cannot have a lending limit",
                                       team.name),
                           "contradicts `dont-lend`");
    d.help = "remove `lending-limit`, or use `sharing = lend-and-borrow` to lend part of the quota";
    return;
  }
  LendingDraft draft;
  assign_all(amounts_table(), p.value->block, *this, source, draft);
  const std::optional<int64_t>& instances = draft.instances;
  const GivenAmounts& given = draft.given;
  std::map<model::Resource, const ast::Property*>& given_at = draft.given_at;
  const ast::Property* instances_at = draft.instances_at;
  const model::Resources limit = resolve_lending_limit(type, instances, given);
  // One error per property that lends more than the quota holds.
  std::vector<std::pair<const ast::Property*, model::Resource>> above;
  for (model::Resource r : model::kAllResources) {
    const size_t i = model::index(r);
    if (cohort || limit[i] == model::kUnlimited || limit[i] <= out.nominal[i]) continue;
    const ast::Property* at = given[i] ? given_at[r] : instances_at;
    if (at && std::none_of(above.begin(), above.end(), [&](const auto& a) { return a.first == at; })) {
      above.emplace_back(at, r);
    }
  }
  for (const auto& [at, r] : above) {
    const size_t i = model::index(r);
    Diagnostic& d = report(Code::lending_limit_above_nominal, {source, at->span},
                           fmt::format("the lending limit of {} is {}, above the quota's nominal {} of `{}`",
                                       display_name(r), display_amount(r, limit[i]), display_amount(r, out.nominal[i]),
                                       type.name),
                           "more than the team holds");
    d.help = "a team can lend at most its own quota: lower the lending limit or raise the quota";
  }
  if (!above.empty()) return;
  out.lending_limit = limit;
  for (size_t r = 0; r < model::kResourceCount; ++r) out.lending_limit_given[r] = limit[r] != model::kUnlimited;
}

std::string_view Checker::display_name(model::Resource r) {
  switch (r) {
    case model::Resource::gpu: return "GPUs";
    case model::Resource::neuron: return "Neuron devices";
    case model::Resource::vcpu: return "vCPUs";
    case model::Resource::memory: return "memory";
    case model::Resource::efa: return "EFA interfaces";
  }
  return "?";
}

std::string Checker::display_amount(model::Resource r, model::Amount a) {
  return model::format_amount(r, a, model::language_notation(model::kMebibytesPerGibibyte));
}

bool Checker::accelerator_fits(const InstanceType& type, model::Resource r, const ast::Property& p, SourceId source) {
  if (r != model::Resource::gpu && r != model::Resource::neuron) return true;
  if (type.per_instance[model::index(r)] > 0) return true;
  const bool gpu = r == model::Resource::gpu;
  Diagnostic& d = report(Code::accelerator_mismatch, {source, p.key.span},
                         fmt::format("`{}` has no {}", type.name, gpu ? "NVIDIA GPUs" : "Neuron devices"),
                         fmt::format("no {} on this type", gpu ? "GPUs" : "Neuron devices"));
  if (type.per_instance[model::index(model::Resource::neuron)] > 0) d.help = "this is a Neuron type: use `neuron = N`";
  else if (type.per_instance[model::index(model::Resource::gpu)] > 0) d.help = "this is a GPU type: use `gpus = N`";
  else d.help = "this type has CPUs only: give `vcpus` and `memory`";
  d.notes.push_back({type.where, fmt::format("`{}` is defined here", type.name)});
  return false;
}

}  // namespace gov::check
