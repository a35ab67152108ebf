#include "compiler/diff/diff.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "compiler/check/quotas.hpp"
#include "compiler/check/surface.hpp"
#include "compiler/model/quantities.hpp"
#include "compiler/support/json_writer.hpp"
#include "compiler/support/terminal_text.hpp"

namespace gov::diff {
namespace {

using check::Policy;
using model::Amount;
using model::Resource;

/// A setting that is absent on one side (no default class, no resource groups, no queues): text
/// output shows it, JSON writes `null` (or `[]` for a list of names).
constexpr std::string_view kNone = "(none)";

constexpr std::array<std::string_view, model::kResourceCount> kResourceNames = {"gpu", "neuron", "vcpu", "memory", "efa"};

/// An amount as a reviewer reads it: devices, vCPUs, GiB, 3 digits at most after the point.
// Exact: MiB in GiB end within ten decimals, and amounts rounded one by one did not add up
// (`614.399 GiB → 204.8 GiB (-409.6 GiB)`).
std::string amount_text(Resource r, Amount a) {
  model::AmountFormat format = model::decimal_notation();
  format.memory_unit = true;
  format.unlimited_word = true;
  return model::format_amount(r, a, format);
}

/// An amount with what it counts: `8 GPUs`, `96 vCPUs`, `1152 GiB memory`, `4 EFA`.
std::string counted(Resource r, Amount a) {
  const std::string n = amount_text(r, a);
  switch (r) {
    case Resource::gpu: return n + (a == 1 ? " GPU" : " GPUs");
    case Resource::neuron: return n + (a == 1 ? " Neuron device" : " Neuron devices");
    case Resource::vcpu: return n + (a == model::kMillicoresPerVcpu ? " vCPU" : " vCPUs");
    case Resource::memory: return n + " memory";
    case Resource::efa: return n + " EFA";
  }
  return n;
}

/// Whether `counted` names one thing (`1 GPU`, `1 vCPU`): a singular verb then.
bool is_one(Resource r, Amount a) {
  if (r == Resource::memory) return false;  // "1 GiB memory" is an amount, not a count
  return a == (r == Resource::vcpu ? model::kMillicoresPerVcpu : 1);
}

/// The nonzero amounts of a quota row, `8 GPUs, 96 vCPUs, 1152 GiB memory`.
std::string amounts_text(const model::Resources& amounts) {
  std::vector<std::string> parts;
  for (Resource r : model::kAllResources) {
    const Amount a = amounts[model::index(r)];
    if (a != 0 && a != model::kUnlimited) parts.push_back(counted(r, a));
  }
  return parts.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(parts, ", "));
}

/// How many whole instances of `type` the amounts are, when they are exactly that.
std::optional<Amount> whole_instances(const check::InstanceType* type, const model::Resources& amounts) {
  if (!type) return std::nullopt;
  std::optional<Amount> instances;
  for (Resource r : model::kAllResources) {
    const Amount per = type->per_instance[model::index(r)], a = amounts[model::index(r)];
    if (per == 0) {
      if (a != 0) return std::nullopt;
      continue;
    }
    if (a % per != 0 || (instances && *instances != a / per)) return std::nullopt;
    instances = a / per;
  }
  return instances;
}

/// `1 × ml.p4d.24xlarge (8 GPUs, …)` when the amounts are whole instances of the type, else
/// `ml.p4d.24xlarge: 4 GPUs, …`.
std::string quota_text(const check::InstanceType* type, const std::string& type_name, const model::Resources& amounts) {
  const std::optional<Amount> instances = whole_instances(type, amounts);
  if (instances && *instances > 0) return fmt::format("{} × {} ({})", *instances, type_name, amounts_text(amounts));
  // A quota of nothing guaranteed still lets the team borrow there (its limits' rows say how much).
  if (instances && *instances == 0) return fmt::format("{}: nothing guaranteed", type_name);
  return fmt::format("{}: {}", type_name, amounts_text(amounts));
}

std::string signed_text(Resource r, Amount d) { return (d > 0 ? "+" : "-") + amount_text(r, d > 0 ? d : -d); }

/// `+1 GPU, +32 vCPUs, -128 GiB memory`: what changes between two quota rows.
std::string deltas_text(const model::Resources& before, const model::Resources& after) {
  std::vector<std::string> parts;
  for (Resource r : model::kAllResources) {
    const Amount d = after[model::index(r)] - before[model::index(r)];
    if (d != 0) parts.push_back((d > 0 ? "+" : "-") + counted(r, d > 0 ? d : -d));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

class Comparer {
 public:
  Comparer(const Policy& before, const Policy& after, const HeldAmounts* held)
      : before_(before), after_(after), held_(held) {}

  PolicyDiff run() {
    cluster();
    settings();
    classes();
    teams();
    cohort();
    idle_pool();
    cohort_tree();
    rules();
    capacity_consequences();
    return std::move(diff_);
  }

 private:
  /// A change of a named setting, with its summary line. False when nothing changed.
  bool change(Change c) {
    if (c.before == c.after) return false;
    diff_.summary.push_back(summary_of(c));
    diff_.changes.push_back(std::move(c));
    return true;
  }

  static std::string summary_of(const Change& c) {
    const std::string who = c.team.empty() ? c.subject : fmt::format("team `{}`", c.team);
    if (c.before.empty()) return fmt::format("{}: {} {}", who, c.field, c.after);
    if (c.after.empty()) return fmt::format("{}: {} removed (was {})", who, c.field, c.before);
    return fmt::format("{}: {} {} → {}", who, c.field, c.before, c.after);
  }

  /// A numeric change; `unit` follows the number in display texts (`%`). No summary line: the
  /// caller writes one for the group it belongs to.
  bool numeric(Change c, std::optional<int64_t> before, std::optional<int64_t> after, std::string_view unit = "") {
    if (before == after) return false;
    auto text = [&](std::optional<int64_t> v) { return v ? fmt::format("{}{}", *v, unit) : std::string(); };
    c.before = text(before);
    c.after = text(after);
    c.before_number = before;
    c.after_number = after;
    if (before && after) c.delta = fmt::format("{}{}{}", *after > *before ? "+" : "", *after - *before, unit);
    diff_.changes.push_back(std::move(c));
    return true;
  }

  /// A fair-share weight's change: exact decimals (millionths, Change::micros), with a delta, so
  /// that `0.5 → 2` is numbers in the JSON as `1 → 2` is. No summary line: the caller writes it.
  bool weight(Change c, int64_t before_micros, int64_t after_micros) {
    if (before_micros == after_micros) return false;
    c.before = model::weight_text(before_micros);
    c.after = model::weight_text(after_micros);
    c.before_number = before_micros;
    c.after_number = after_micros;
    c.micros = true;
    const int64_t delta = after_micros - before_micros;
    c.delta = (delta > 0 ? "+" : "") + model::weight_text(delta);
    diff_.changes.push_back(std::move(c));
    return true;
  }

  /// A resource amount's change (base units; kUnlimited allowed).
  bool amount(Change c, Resource r, std::optional<Amount> before, std::optional<Amount> after) {
    if (before == after) return false;
    auto text = [&](std::optional<Amount> v) { return v ? amount_text(r, *v) : std::string(); };
    c.before = text(before);
    c.after = text(after);
    c.resource = r;
    c.before_number = before;
    c.after_number = after;
    if (before && after && *before != model::kUnlimited && *after != model::kUnlimited) {
      c.delta = signed_text(r, *after - *before);
    }
    diff_.changes.push_back(std::move(c));
    return true;
  }

  /// The warning added, for its typed facts.
  Warning& warn(std::string kind, std::string message, std::string team = "") {
    diff_.warnings.push_back({std::move(kind), std::move(message), std::move(team), ""});
    return diff_.warnings.back();
  }

  static void typed(Warning& w, const std::string& type, Resource r, Amount before, Amount after) {
    w.instance_type = type;
    w.resource = r;
    w.before_number = before;
    w.after_number = after;
  }

  void warn_rule(std::string kind, std::string message, const std::string& rule) {
    diff_.warnings.push_back({std::move(kind), std::move(message), "", rule});
  }

  void cluster() {
    const std::string b = before_.cluster ? before_.cluster->name : "", a = after_.cluster ? after_.cluster->name : "";
    change({.subject = "cluster", .field = "name", .before = b, .after = a, .property = "name"});
    std::vector<std::string> order;
    for (const Policy* p : {&after_, &before_}) {
      if (!p->cluster) continue;
      for (const check::Capacity& c : p->cluster->capacity) {
        const std::string& name = p->types()[c.type].name;
        if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
      }
    }
    for (const std::string& type : order) {
      const std::optional<int64_t> b_count = capacity(before_, type), a_count = capacity(after_, type);
      if (!numeric({.subject = "cluster", .field = fmt::format("capacity of {} (instances)", type), .instance_type = type,
                    .property = "capacity"},
                   b_count, a_count)) {
        continue;
      }
      diff_.summary.push_back(fmt::format("cluster: capacity of {}: {} → {} instances", type,
                                          b_count ? fmt::to_string(*b_count) : "none",
                                          a_count ? fmt::to_string(*a_count) : "none"));
    }
    // An instance type redefined by a catalog change: every quota of whole instances of it
    // changes its amounts with it (the teams' rows show by how much).
    for (const std::string& type : order) {
      const check::InstanceType* b_type = type_named(before_, type);
      const check::InstanceType* a_type = type_named(after_, type);
      if (!b_type || !a_type || b_type->per_instance == a_type->per_instance) continue;
      if (!change({.subject = "cluster", .field = fmt::format("{} per instance", type),
                   .before = amounts_text(b_type->per_instance), .after = amounts_text(a_type->per_instance),
                   .instance_type = type, .property = "instance-type"})) {
        continue;
      }
      diff_.summary.back() = fmt::format("cluster: instance type {} redefined: {} per instance (was {})", type,
                                         amounts_text(a_type->per_instance), amounts_text(b_type->per_instance));
    }
  }

  static std::optional<int64_t> capacity(const Policy& p, const std::string& type) {
    if (!p.cluster) return std::nullopt;
    std::optional<int64_t> total;
    for (const check::Capacity& c : p.cluster->capacity) {
      if (p.types()[c.type].name == type) total = total.value_or(0) + c.instances;
    }
    return total;
  }

  /// The cohort's own quota (`cohort NAME { quota ... }`), per instance type and resource.
  void cohort() {
    const auto quota_of = [](const Policy& p, const std::string& type) -> const check::Quota* {
      if (!p.cohort) return nullptr;
      for (const check::Quota& q : p.cohort->quotas) {
        if (q.type_name == type) return &q;
      }
      return nullptr;
    };
    std::vector<std::string> types;
    for (const Policy* p : {&after_, &before_}) {
      if (!p->cohort) continue;
      for (const check::Quota& q : p->cohort->quotas) {
        if (std::find(types.begin(), types.end(), q.type_name) == types.end()) types.push_back(q.type_name);
      }
    }
    for (const std::string& type : types) {
      const check::Quota* b = quota_of(before_, type);
      const check::Quota* a = quota_of(after_, type);
      for (Resource r : model::kAllResources) {
        const std::optional<Amount> before = b ? std::optional<Amount>(b->nominal[model::index(r)]) : std::nullopt;
        const std::optional<Amount> after = a ? std::optional<Amount>(a->nominal[model::index(r)]) : std::nullopt;
        if (before.value_or(0) == 0 && after.value_or(0) == 0) continue;
        if (amount({.subject = "cohort", .field = fmt::format("own quota of {}", type), .instance_type = type,
                    .property = "cohort-quota"},
                   r, before, after)) {
          diff_.summary.push_back(fmt::format("cohort quota of `{}`: {} {} → {}", type, model::resource_key(r),
                                              before ? amount_text(r, *before) : std::string("none"),
                                              after ? amount_text(r, *after) : std::string("none")));
        }
      }
    }
  }

  /// Under `idle-resource-sharing`, the idle compute every team may borrow: per instance type the
  /// capacity no team is guaranteed (check::idle_capacity_quotas; the Kueue export's Cohort quota).
  /// It moves with the capacity and the teams' quotas without any row of its own saying so, and a
  /// smaller pool leaves tasks that borrowed from it waiting: a warning.
  void idle_pool() {
    const auto pool = [](const Policy& p) {
      const bool sharing = p.settings && p.settings->idle_resource_sharing;
      return sharing ? check::idle_capacity_quotas(p) : std::vector<check::Quota>{};
    };
    const std::vector<check::Quota> b_pool = pool(before_), a_pool = pool(after_);
    const auto find = [](const std::vector<check::Quota>& quotas, const std::string& type) -> const check::Quota* {
      for (const check::Quota& q : quotas) {
        if (q.type_name == type) return &q;
      }
      return nullptr;
    };
    std::vector<std::string> types;
    for (const std::vector<check::Quota>* quotas : {&a_pool, &b_pool}) {
      for (const check::Quota& q : *quotas) {
        if (std::find(types.begin(), types.end(), q.type_name) == types.end()) types.push_back(q.type_name);
      }
    }
    for (const std::string& type : types) {
      const check::Quota* b = find(b_pool, type);
      const check::Quota* a = find(a_pool, type);
      std::vector<std::string> parts, shrunk;
      for (Resource r : model::kAllResources) {
        const Amount before = b ? b->nominal[model::index(r)] : 0, after = a ? a->nominal[model::index(r)] : 0;
        if (!amount({.subject = "idle compute", .field = fmt::format("{} {}", type, kResourceNames[model::index(r)]),
                     .instance_type = type, .property = "idle-pool"},
                    r, before, after)) {
          continue;
        }
        const std::string part =
            fmt::format("{} {} → {}", kResourceNames[model::index(r)], amount_text(r, before), amount_text(r, after));
        parts.push_back(part);
        if (after < before) shrunk.push_back(part);
      }
      if (!parts.empty()) {
        diff_.summary.push_back(fmt::format("idle compute of `{}` (what no team is guaranteed, lent under "
                                            "idle-resource-sharing): {}",
                                            type, fmt::join(parts, ", ")));
      }
      if (!shrunk.empty()) {
        warn("idle-pool-shrinks", fmt::format("the idle compute teams may borrow in `{}` shrinks ({}): tasks that borrow "
                                              "it may wait or be reclaimed",
                                              type, fmt::join(shrunk, ", ")))
            .instance_type = type;
      }
    }
  }

  /// The tree of cohorts: cohorts added or removed, a parent or weight changed, a cohort's own
  /// quota and limits per instance type and resource, and teams moving between cohorts.
  void cohort_tree() {
    const auto find = [](const Policy& p, const std::string& name) -> const check::Cohort* {
      for (const check::Cohort& c : p.cohort_tree) {
        if (c.name == name) return &c;
      }
      return nullptr;
    };
    const auto parent_of = [](const Policy& p, const check::Cohort& c) {
      return c.parent >= 0 ? p.cohort_tree[static_cast<size_t>(c.parent)].name : std::string("(root)");
    };
    std::vector<std::string> names;
    for (const Policy* p : {&after_, &before_}) {
      for (const check::Cohort& c : p->cohort_tree) {
        if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
      }
    }
    for (const std::string& name : names) {
      const check::Cohort* b = find(before_, name);
      const check::Cohort* a = find(after_, name);
      const std::string subject = fmt::format("cohort `{}`", name);
      if (!b || !a) {
        change({.subject = subject, .field = "cohort", .before = b ? "declared" : "", .after = a ? "declared" : "",
                .cohort = name, .property = "cohort"});
      }
      change({.subject = subject, .field = "parent", .before = b ? parent_of(before_, *b) : "",
              .after = a ? parent_of(after_, *a) : "", .cohort = name, .property = "parent"});
      if (b && a && weight({.subject = subject, .field = "fair-share weight", .cohort = name, .property = "weight"},
                           b->fair_share_weight_micros, a->fair_share_weight_micros)) {
        diff_.summary.push_back(summary_of(diff_.changes.back()));
      } else if (!b || !a) {
        change({.subject = subject, .field = "fair-share weight",
                .before = b ? model::weight_text(b->fair_share_weight_micros) : "",
                .after = a ? model::weight_text(a->fair_share_weight_micros) : "", .cohort = name, .property = "weight"});
      }
      std::vector<std::string> types;
      for (const check::Cohort* c : {a, b}) {
        if (!c) continue;
        for (const check::Quota& q : c->quotas) {
          if (std::find(types.begin(), types.end(), q.type_name) == types.end()) types.push_back(q.type_name);
        }
      }
      const auto quota_of = [](const check::Cohort* c, const std::string& type) -> const check::Quota* {
        if (!c) return nullptr;
        for (const check::Quota& q : c->quotas) {
          if (q.type_name == type) return &q;
        }
        return nullptr;
      };
      for (const std::string& type : types) {
        const check::Quota* bq = quota_of(b, type);
        const check::Quota* aq = quota_of(a, type);
        const check::InstanceType* t = type_named(after_, type);
        if (!t) t = type_named(before_, type);
        std::vector<std::string> parts;  // one summary line per type, as a team's limits have
        for (Resource r : model::kAllResources) {
          if (!meaningful(t, r, bq, aq)) continue;  // no rows for what the type does not have
          const size_t i = model::index(r);
          const auto value = [i](const check::Quota* q, model::Resources check::Quota::*member) {
            return q ? std::optional<Amount>((q->*member)[i]) : std::nullopt;
          };
          const std::pair<std::string_view, model::Resources check::Quota::*> facts[] = {
              {"nominal", &check::Quota::nominal},
              {"borrowing-limit", &check::Quota::borrowing_limit},
              {"lending-limit", &check::Quota::lending_limit}};
          for (const auto& [property, member] : facts) {
            const std::optional<Amount> before = value(bq, member);
            const std::optional<Amount> after = value(aq, member);
            if (property == "nominal" && before.value_or(0) == 0 && after.value_or(0) == 0) continue;
            if (property != "nominal" && before.value_or(model::kUnlimited) == model::kUnlimited &&
                after.value_or(model::kUnlimited) == model::kUnlimited)
              continue;
            std::string words(property);
            std::replace(words.begin(), words.end(), '-', ' ');
            if (amount({.subject = subject, .field = fmt::format("{} {} {}", type, kResourceNames[i], words),
                        .instance_type = type, .cohort = name, .property = std::string(property)},
                       r, before, after)) {
              parts.push_back(fmt::format("{} {} {} → {}", kResourceNames[i], words,
                                          before ? amount_text(r, *before) : std::string("none"),
                                          after ? amount_text(r, *after) : std::string("none")));
            }
          }
        }
        if (!parts.empty()) {
          diff_.summary.push_back(fmt::format("cohort `{}`: quota on {}: {}", name, type, fmt::join(parts, ", ")));
        }
      }
    }
    // A team moving: its cohort in each version (the one flat cohort counts as none).
    for (const check::Team& team : after_.teams) {
      const auto it = std::find_if(before_.teams.begin(), before_.teams.end(),
                                   [&](const check::Team& t) { return t.name == team.name; });
      if (it == before_.teams.end()) continue;
      const auto cohort_of = [](const Policy& p, const check::Team& t) {
        return t.cohort_index >= 0 ? p.cohort_tree[static_cast<size_t>(t.cohort_index)].name : std::string("(flat)");
      };
      change({.subject = fmt::format("team {}", team.name), .field = "cohort", .before = cohort_of(before_, *it),
              .after = cohort_of(after_, team), .team = team.name, .property = "cohort"});
    }
  }

  void settings() {
    const check::Settings b = before_.settings.value_or(check::Settings{}), a = after_.settings.value_or(check::Settings{});
    auto setting = [&](std::string field, std::string property, std::string before, std::string after) {
      return change({.subject = "policy", .field = std::move(field), .before = std::move(before),
                     .after = std::move(after), .property = std::move(property)});
    };
    if (setting("task prioritization", "task-prioritization", std::string(check::word_of(b.prioritization)),
                std::string(check::word_of(a.prioritization))) &&
        a.prioritization == check::Prioritization::fcfs) {
      warn("classes-ignored",
           "task prioritization becomes `fcfs`: priority classes stop mattering; every task has priority 0, "
           "queues are first come, first served, and no task preempts another for its priority");
    }
    setting("idle compute", "idle-compute", std::string(check::word_of(b.idle_compute)), std::string(check::word_of(a.idle_compute)));
    setting("idle-resource sharing", "idle-resource-sharing", b.idle_resource_sharing ? "on" : "off",
            a.idle_resource_sharing ? "on" : "off");
    auto default_class = [](const Policy& p, const check::Settings& s) {
      return s.default_class >= 0 ? p.classes[s.default_class].name : std::string(kNone);
    };
    setting("default priority", "default-priority", default_class(before_, b), default_class(after_, a));
    auto strategies = [](const check::Settings& s) {
      std::vector<std::string_view> names;
      for (model::FairShareStrategy strategy : s.fair_share_strategies) names.push_back(check::word_of(strategy));
      return fmt::format("[{}]", fmt::join(names, ", "));
    };
    setting("fair-share preemption", "fair-share-preemption", strategies(b), strategies(a));
  }

  static const check::PriorityClass* find_class(const Policy& p, const std::string& name) {
    for (const check::PriorityClass& c : p.classes) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  void class_change(const std::string& name, const check::PriorityClass* b, const check::PriorityClass* a) {
    const auto weight = [](const check::PriorityClass* c) { return c ? std::optional<int64_t>(c->weight) : std::nullopt; };
    if (!numeric({.subject = "classes", .field = fmt::format("{} weight", name), .priority_class = name, .property = "weight"}, weight(b), weight(a))) {
      return;
    }
    if (!b) diff_.summary.push_back(fmt::format("class `{}` added (weight {})", name, a->weight));
    if (!a) {
      diff_.summary.push_back(fmt::format("class `{}` removed (was weight {})", name, b->weight));
      warn("class-removed", fmt::format("class `{}` is removed: tasks of that class end as `invalid` when a controller "
                                        "loads this version",
                                        name))
          .priority_class = name;
    }
    if (a && b) diff_.summary.push_back(fmt::format("class `{}`: weight {} → {}", name, b->weight, a->weight));
  }

  void classes() {
    for (const check::PriorityClass& c : after_.classes) class_change(c.name, find_class(before_, c.name), &c);
    for (const check::PriorityClass& c : before_.classes) {
      if (!find_class(after_, c.name)) class_change(c.name, &c, nullptr);
    }
    // A class that now outranks another it did not outrank before.
    for (const check::PriorityClass& a : after_.classes) {
      for (const check::PriorityClass& b : after_.classes) {
        const check::PriorityClass* old_a = find_class(before_, a.name);
        const check::PriorityClass* old_b = find_class(before_, b.name);
        if (!old_a || !old_b || !(a.weight > b.weight) || old_a->weight > old_b->weight) continue;
        warn("class-order", fmt::format("class `{}` ({}) now outranks `{}` ({}); before it did not ({} vs {})", a.name,
                                        a.weight, b.name, b.weight, old_a->weight, old_b->weight))
            .priority_class = a.name;
      }
    }
  }

  static const check::Team* find_team(const Policy& p, const std::string& name) {
    for (const check::Team& t : p.teams) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  static const check::Quota* find_quota(const check::Team* team, const std::string& type) {
    if (!team) return nullptr;
    for (const check::Quota& q : team->quotas) {
      if (q.type_name == type) return &q;
    }
    return nullptr;
  }

  void teams() {
    for (const check::Team& t : after_.teams) team(find_team(before_, t.name), &t);
    for (const check::Team& t : before_.teams) {
      if (!find_team(after_, t.name)) team(&t, nullptr);
    }
    claims_moved(/*namespaces=*/false);
    claims_moved(/*namespaces=*/true);
  }

  /// A queue or namespace that another team claims after the change: its workloads change
  /// teams when gov reads Kubernetes objects (docs/language.md, `queues`). Each is claimed by one
  /// team at most on each side (E0230).
  void claims_moved(bool namespaces) {
    const auto owners = [&](const Policy& p) {
      std::map<std::string_view, std::string_view> owner;
      for (const check::Team& t : p.teams) {
        for (const check::Team::ClaimedName& c : namespaces ? t.namespaces : t.queues) owner.emplace(c.name, t.name);
      }
      return owner;
    };
    const auto before = owners(before_), after = owners(after_);
    for (const auto& [name, to] : after) {
      const auto from = before.find(name);
      if (from == before.end() || from->second == to) continue;
      warn(namespaces ? "namespace-moves" : "queue-moves",
           fmt::format("{} `{}` moves from team `{}` to team `{}`: gov reads its workloads as `{}`'s",
                       namespaces ? "namespace" : "queue", name, from->second, to, to),
           std::string(to));
    }
  }

  void team(const check::Team* b, const check::Team* a) {
    const std::string& name = (a ? a : b)->name;
    const std::string subject = fmt::format("team {}", name);
    if (!b || !a) {
      diff_.changes.push_back({.subject = subject, .field = "team", .before = b ? "present" : "", .after = a ? "added" : "",
                               .team = name, .property = "team"});
      diff_.summary.push_back(fmt::format("team `{}` {}", name, a ? "added" : "removed"));
    }
    if (!a) {
      warn("team-removed",
           fmt::format("team `{}` is removed: its pending and admitted tasks end as `invalid` when a controller "
                       "loads this version",
                       name),
           name);
    }
    if (a && b) team_settings(subject, *b, *a, /*added=*/false);
    if (a && !b) added_team_settings(subject, *a);
    if (a && b && a->groups.empty() && b->groups.empty()) quota_order(subject, *b, *a);
    std::vector<std::string> types;
    for (const check::Team* t : {a, b}) {
      if (!t) continue;
      for (const check::Quota& q : t->quotas) {
        if (std::find(types.begin(), types.end(), q.type_name) == types.end()) types.push_back(q.type_name);
      }
    }
    // A `dont-lend` team's lending limits are 0 by definition: its `sharing` row says it all.
    const bool lending_rows = !(a && a->sharing == model::Sharing::dont_lend) && !(b && b->sharing == model::Sharing::dont_lend);
    for (const std::string& type : types) {
      quota(subject, name, type, find_quota(b, type), find_quota(a, type), a != nullptr, lending_rows);
    }
  }

  /// The names of `list` that `other` also has, in `list`'s order.
  static std::vector<std::string> common_in_order(const std::vector<std::string>& list, const std::vector<std::string>& other) {
    std::vector<std::string> out;
    for (const std::string& name : list) {
      if (std::find(other.begin(), other.end(), name) != other.end()) out.push_back(name);
    }
    return out;
  }

  /// A change in the order of names both versions have (added and removed ones have rows of
  /// their own). False when the order is the same.
  bool order_change(Change c, const std::vector<std::string>& before, const std::vector<std::string>& after) {
    const std::vector<std::string> b = common_in_order(before, after), a = common_in_order(after, before);
    if (a == b) return false;
    c.before = fmt::format("{}", fmt::join(b, ", "));
    c.after = fmt::format("{}", fmt::join(a, ", "));
    c.names = true;
    diff_.changes.push_back(std::move(c));
    return true;
  }

  /// A task that names no instance type tries its team's quotas in their declared order
  /// (docs/semantics.md §1), so the order decides where it lands (a team with resource groups
  /// orders its flavors there, compared with the groups).
  void quota_order(const std::string& subject, const check::Team& b, const check::Team& a) {
    const auto types = [](const check::Team& t) {
      std::vector<std::string> out;
      for (const check::Quota& q : t.quotas) out.push_back(q.type_name);
      return out;
    };
    if (order_change({.subject = subject, .field = "quota order", .team = a.name, .property = "quota-order"}, types(b),
                     types(a))) {
      const Change& c = diff_.changes.back();
      diff_.summary.push_back(fmt::format("team `{}`: a task without an instance type tries {} (was {})", a.name,
                                          c.after, c.before));
    }
  }

  /// The settings of a team that `before` did not have, each one a team declared without it would
  /// not have, as rows with no before: the new team is a change a reviewer must see in full (a
  /// reviewer's finding, session 43: only its quotas were shown, and an inactive or `dont-lend`
  /// team looked like any other).
  void added_team_settings(const std::string& subject, const check::Team& a) {
    check::Team declared;  // a team declared with no settings
    declared.name = a.name;
    const size_t changes = diff_.changes.size(), summary = diff_.summary.size();
    team_settings(subject, declared, a, /*added=*/true);
    diff_.summary.resize(summary);
    for (size_t i = changes; i < diff_.changes.size(); ++i) {
      Change& c = diff_.changes[i];
      c.before.clear();
      c.before_number.reset();
      c.delta.reset();
      diff_.summary.push_back(summary_of(c));
    }
  }

  /// The settings that differ between `b` and `a`, or with `added`, those of a new team `a` that
  /// differ from a team declared without them (`b`; added_team_settings).
  void team_settings(const std::string& subject, const check::Team& b, const check::Team& a, bool added) {
    auto text = [&](std::string field, std::string property, std::string_view before, std::string_view after) {
      return change({.subject = subject, .field = std::move(field), .before = std::string(before),
                     .after = std::string(after), .team = a.name, .property = std::move(property)});
    };
    if (text("sharing", "sharing", check::word_of(b.sharing), check::word_of(a.sharing)) && !added) sharing_consequences(b, a);
    if (b.borrow_limit_unlimited || a.borrow_limit_unlimited) {
      // `unlimited` is no percentage: the change is a word's.
      if (text("borrow limit", "borrow-limit", b.borrow_limit_text(), a.borrow_limit_text())) {
        diff_.summary.push_back(
            fmt::format("team `{}`: borrow limit {} → {}", a.name, b.borrow_limit_text(), a.borrow_limit_text()));
      }
    } else if (numeric({.subject = subject, .field = "borrow limit", .team = a.name, .property = "borrow-limit-percent"},
                       b.borrow_limit_percent, a.borrow_limit_percent, "%")) {
      diff_.summary.push_back(
          fmt::format("team `{}`: borrow limit {}% → {}%", a.name, b.borrow_limit_percent, a.borrow_limit_percent));
    }
    text("preempt team tasks", "preempt-team-tasks", check::word_of(b.preempt_team_tasks), check::word_of(a.preempt_team_tasks));
    // Weights compare as exact decimals, with a delta (one summary line, below).
    const int64_t wb = b.fair_share_weight_micros, wa = a.fair_share_weight_micros;
    if (weight({.subject = subject, .field = "fair-share weight", .team = a.name, .property = "fair-share-weight"}, wb, wa)) {
      diff_.summary.push_back(fmt::format("team `{}`: fair-share weight {} → {}", a.name, model::weight_text(wb),
                                          model::weight_text(wa)));
    }
    text("active", "active", b.active ? "yes" : "no", a.active ? "yes" : "no");
    if (b.active && !a.active) {
      warn("team-inactive", fmt::format("team `{}` {} inactive: it will admit nothing", a.name, added ? "is added" : "becomes"),
           a.name);
    }
    // A new team's cohort in a tree (a team that moves is cohort_tree's).
    if (added) text("cohort", "cohort", kNone, a.cohort.empty() ? kNone : std::string_view(a.cohort));
    // Kueue's controls (docs/language.md), compared by their effective values.
    text("reclaim within cohort", "reclaim-within-cohort", check::word_of(b.reclaim_within_cohort),
         check::word_of(a.reclaim_within_cohort));
    text("borrow within cohort", "borrow-within-cohort", check::word_of(b.borrow_within_cohort),
         check::word_of(a.borrow_within_cohort));
    auto threshold = [](const Policy& p, const check::Team& t) {
      return t.borrow_priority_threshold >= 0 ? p.classes[static_cast<size_t>(t.borrow_priority_threshold)].name
                                              : std::string(kNone);
    };
    text("max priority threshold", "max-priority-threshold", threshold(before_, b), threshold(after_, a));
    text("queueing", "queueing", check::word_of(b.queueing), check::word_of(a.queueing));
    text("when can borrow", "when-can-borrow", check::word_of(b.when_can_borrow), check::word_of(a.when_can_borrow));
    text("when can preempt", "when-can-preempt", check::word_of(b.when_can_preempt), check::word_of(a.when_can_preempt));
    text("flavor preference", "flavor-preference", check::word_of(b.flavor_preference), check::word_of(a.flavor_preference));
    // Resource groups by what they cover and their flavors in order (their names are gov's own:
    // `gov import kueue` names them after their resources).
    const auto groups_text = [](const check::Team& t) {
      if (t.groups.empty()) return std::string(kNone);
      std::vector<std::string> groups;
      for (const check::ResourceGroup& group : t.groups) {
        std::vector<std::string_view> covers;
        std::vector<std::string_view> flavors;
        for (Resource r : group.covers) covers.push_back(check::resource_word(r));
        for (const auto& [name, at] : group.flavors) flavors.push_back(name);
        groups.push_back(fmt::format("{} from {}", fmt::join(covers, ", "), fmt::join(flavors, ", ")));
      }
      return fmt::format("{}", fmt::join(groups, "; "));
    };
    text("resource groups", "resource-groups", groups_text(b), groups_text(a));
    // Which Kubernetes workloads gov reads as the team's (docs/language.md, `queues`): compared as
    // sets, so that reordering a list is no change.
    const auto names_text = [](const std::vector<check::Team::ClaimedName>& claimed) {
      if (claimed.empty()) return std::string(kNone);
      std::vector<std::string_view> names;
      for (const check::Team::ClaimedName& c : claimed) names.push_back(c.name);
      std::sort(names.begin(), names.end());
      return fmt::format("{}", fmt::join(names, ", "));
    };
    for (const bool namespaces : {false, true}) {
      const char* word = namespaces ? "namespaces" : "queues";
      change({.subject = subject, .field = word, .before = names_text(namespaces ? b.namespaces : b.queues),
              .after = names_text(namespaces ? a.namespaces : a.queues), .team = a.name, .property = word, .names = true});
    }
  }

  /// What others can no longer borrow when a team stops lending; what it can no longer borrow.
  void sharing_consequences(const check::Team& b, const check::Team& a) {
    using model::Sharing;
    if (b.sharing != Sharing::dont_lend && a.sharing == Sharing::dont_lend) {
      std::vector<std::string> lent;
      for (const check::Quota& q : b.quotas) {
        for (Resource r : {Resource::gpu, Resource::neuron}) {
          const Amount lendable = std::min(q.nominal[model::index(r)], q.lending_limit[model::index(r)]);
          if (lendable > 0) lent.push_back(fmt::format("{} on {}", counted(r, lendable), q.type_name));
        }
        for (const check::PartitionQuota& p : q.partitions) {  // GPU partitions are accelerators too
          const int64_t lendable = std::min(p.nominal, p.lending_limit);
          if (lendable > 0) lent.push_back(fmt::format("{} `{}` partitions on {}", lendable, p.profile, q.type_name));
        }
      }
      warn("stops-lending",
           fmt::format("team `{}` stops lending (`dont-lend`): other teams can no longer borrow its idle quota{}", a.name,
                       lent.empty() ? std::string() : fmt::format(" (up to {})", fmt::join(lent, ", "))),
           a.name);
    }
    // `dont-lend` still borrows (docs/language.md); only `lend` gives borrowing up.
    if (b.sharing != Sharing::lend && a.sharing == Sharing::lend) {
      warn("stops-borrowing",
           fmt::format("team `{}` can no longer borrow idle compute: it runs within its own quota only", a.name), a.name);
    }
  }

  /// Whether row `r` of a quota on `type` means anything: the type has the resource, or a side
  /// gives it a nominal amount (a type unknown to the catalog shows every row).
  bool meaningful(const check::InstanceType* type, Resource r, const check::Quota* b, const check::Quota* a) const {
    const size_t i = model::index(r);
    if (!type || type->per_instance[i] > 0) return true;
    return (b && b->nominal[i] != 0) || (a && a->nominal[i] != 0);
  }

  void quota(const std::string& subject, const std::string& team, const std::string& type, const check::Quota* b,
             const check::Quota* a, bool team_remains, bool lending_rows) {
    const check::InstanceType* t = type_named(after_, type);
    if (!t) t = type_named(before_, type);
    std::vector<std::string> nominal_parts, other_parts;
    for (Resource r : model::kAllResources) {
      if (!meaningful(t, r, b, a)) continue;
      const size_t i = model::index(r);
      auto value = [&](const check::Quota* q, const model::Resources check::Quota::*field) -> std::optional<Amount> {
        return q ? std::optional<Amount>((q->*field)[i]) : std::nullopt;
      };
      const std::string name = fmt::format("{} {}", type, kResourceNames[i]);
      const Change base{.subject = subject, .team = team, .instance_type = type};
      auto row = [&](std::string suffix, std::string property, const model::Resources check::Quota::*field,
                     std::vector<std::string>& parts) {
        Change c = base;
        c.field = name + " " + suffix;
        c.property = std::move(property);
        if (!amount(std::move(c), r, value(b, field), value(a, field)) || !a || !b) return;
        parts.push_back(fmt::format("{} {} {} → {}", kResourceNames[i], suffix, amount_text(r, (b->*field)[i]),
                                    amount_text(r, (a->*field)[i])));
      };
      row("nominal", "nominal", &check::Quota::nominal, nominal_parts);
      row("borrowing limit", "borrowing-limit", &check::Quota::borrowing_limit, other_parts);
      if (lending_rows) row("lending limit", "lending-limit", &check::Quota::lending_limit, other_parts);
    }
    const std::string who = fmt::format("team `{}`", team);
    if (!b) diff_.summary.push_back(fmt::format("{}: quota added: {}", who, quota_text(t, type, a->nominal)));
    if (!a) {
      diff_.summary.push_back(fmt::format("{}: quota removed: {}", who, quota_text(t, type, b->nominal)));
      if (team_remains) {
        warn("quota-removed",
             fmt::format("team `{}` no longer has a quota for {}: its tasks there end as `invalid` when a controller "
                         "loads this version",
                         team, type),
             team)
            .instance_type = type;
      }
    }
    if (a && b && !nominal_parts.empty()) {
      // Each side in its own catalog's instances: a catalog change alone leaves `instances = 2`.
      const check::InstanceType* tb = type_named(before_, type) ? type_named(before_, type) : t;
      const check::InstanceType* ta = type_named(after_, type) ? type_named(after_, type) : t;
      const std::optional<Amount> was = whole_instances(tb, b->nominal), now = whole_instances(ta, a->nominal);
      // A quota that is not whole instances (`gpus = 4` of a p5) counts in the instances its
      // largest share holds, as gov inspect's guaranteed column does. The same such count on
      // both sides (another share changed: `1 → 1 instances (-1 GPU)` read as no change, a
      // reviewer's finding, session 43) says nothing; whole instances (`2 → 2` of a redefined
      // type) do.
      std::string counts;
      if (was && now) {
        counts = fmt::format(" {} → {} instances", *was, *now);
      } else if (tb && ta) {
        const std::string before = model::format_instances(tb->instances_holding(b->nominal), 3);
        const std::string after = model::format_instances(ta->instances_holding(a->nominal), 3);
        if (before != after) counts = fmt::format(" {} → {} instances", before, after);
      }
      const std::string deltas = deltas_text(b->nominal, a->nominal);
      diff_.summary.push_back(counts.empty() ? fmt::format("{}: guaranteed on {}: {}", who, type, deltas)
                                             : fmt::format("{}: guaranteed on {}:{} ({})", who, type, counts, deltas));
    }
    if (a && b && !other_parts.empty()) {
      diff_.summary.push_back(fmt::format("{}: limits on {}: {}", who, type, fmt::join(other_parts, ", ")));
    }
    partitions(subject, team, type, b, a, lending_rows);
    accelerator_consequences(team, type, t, b, a);
    if (a && b) lending_consequences(team, type, *b, *a);
    if (a && b && held_) held_consequences(team, type, *b, *a);
  }

  /// A quota whose changed lending limit lends more of its accelerators than before (raised or
  /// removed, or `dont-lend` given up: a `dont-lend` quota's lending limit is 0): other teams may borrow
  /// them, and the team reclaims them by preempting (a new author's finding: eight field changes
  /// listed, no word of what they meant).
  void lending_consequences(const std::string& team, const std::string& type, const check::Quota& b, const check::Quota& a) {
    for (Resource r : {Resource::gpu, Resource::neuron}) {
      const size_t i = model::index(r);
      const Amount before = std::min(b.nominal[i], b.lending_limit[i]), after = std::min(a.nominal[i], a.lending_limit[i]);
      // A larger quota lends more too, but that is its own line: only a changed limit counts.
      if (after <= before || a.lending_limit[i] == b.lending_limit[i]) continue;
      Warning& w = warn("lends-more",
                        fmt::format("team `{}` may now lend {} on {} ({} before): other teams can borrow {} while idle, "
                                    "and the team gets {} back by preempting their tasks",
                                    team, counted(r, after), type, before == 0 ? "none" : counted(r, before),
                                    is_one(r, after) ? "it" : "them", is_one(r, after) ? "it" : "them"),
                        team);
      typed(w, type, r, before, after);
    }
  }

  void accelerator_consequences(const std::string& team, const std::string& type, const check::InstanceType* t,
                                const check::Quota* b, const check::Quota* a) {
    for (Resource r : {Resource::gpu, Resource::neuron}) {
      const Amount before = b ? b->nominal[model::index(r)] : 0;
      const Amount after = a ? a->nominal[model::index(r)] : 0;
      if (after >= before) continue;
      const std::string accelerator = t && !t->accelerator.empty() ? fmt::format(" ({})", t->accelerator) : "";
      Warning& w = warn("guaranteed-gpus-fall",
                        fmt::format("team `{}` loses {} guaranteed {}{} on {}", team, before - after,
                                    r == Resource::gpu ? (before - after == 1 ? "GPU" : "GPUs")
                                                       : (before - after == 1 ? "Neuron device" : "Neuron devices"),
                                    accelerator, type),
                        team);
      typed(w, type, r, before, after);
    }
  }

  /// kubernetes-sigs/kueue#5176: lowering a nominal quota below what is admitted evicts nothing;
  /// the excess counts as borrowed from then on, and other teams may reclaim it.
  void held_consequences(const std::string& team, const std::string& type, const check::Quota& b, const check::Quota& a) {
    auto it = held_->find({team, type});
    if (it == held_->end()) return;
    for (Resource r : model::kAllResources) {
      if (!model::is_charged(r)) continue;
      const Amount holds = it->second[model::index(r)], nominal = a.nominal[model::index(r)];
      if (holds <= nominal || nominal >= b.nominal[model::index(r)]) continue;
      Warning& w = warn("quota-below-held",
                        fmt::format("team `{}` holds {} on {} in the given state, above its new nominal quota of {}: "
                                    "nothing is evicted, but {} {} as borrowed and other teams may reclaim {}",
                                    team, counted(r, holds), type, amount_text(r, nominal), counted(r, holds - nominal),
                                    is_one(r, holds - nominal) ? "counts" : "count", is_one(r, holds - nominal) ? "it" : "them"),
                        team);
      typed(w, type, r, holds, nominal);  // what it holds, and the nominal quota now
    }
  }

  /// A quota's GPU partitions, per profile (either side's, in order of first appearance): nominal
  /// and limits as counts (`property` nominal, borrowing-limit, lending-limit; an unlimited
  /// lending limit has no number), one summary line per quota, and fewer guaranteed partitions
  /// as a consequence.
  void partitions(const std::string& subject, const std::string& team, const std::string& type, const check::Quota* b,
                  const check::Quota* a, bool lending_rows) {
    std::vector<std::string> profiles;
    for (const check::Quota* q : {b, a}) {
      if (!q) continue;
      for (const check::PartitionQuota& p : q->partitions) {
        if (std::find(profiles.begin(), profiles.end(), p.profile) == profiles.end()) profiles.push_back(p.profile);
      }
    }
    std::vector<std::string> parts;
    for (const std::string& profile : profiles) {
      const check::PartitionQuota* pb = b ? b->partition(profile) : nullptr;
      const check::PartitionQuota* pa = a ? a->partition(profile) : nullptr;
      const auto row = [&](std::string suffix, std::string property, int64_t check::PartitionQuota::*field) {
        const auto value = [&](const check::PartitionQuota* p) -> std::optional<int64_t> {
          if (!p) return std::nullopt;
          return p->*field;  // kUnlimited: JSON null with "unlimited", as the resources' rows
        };
        const auto text = [&](const check::PartitionQuota* p) {
          if (!p) return std::string(kNone);
          return p->*field == model::kUnlimited ? std::string("unlimited") : fmt::format("{}", p->*field);
        };
        if (text(pb) == text(pa)) return;
        Change c{.subject = subject, .field = fmt::format("{} {} {}", type, profile, suffix), .team = team,
                 .instance_type = type, .profile = profile, .property = std::move(property)};
        c.before = pb ? text(pb) : std::string();
        c.after = pa ? text(pa) : std::string();
        c.before_number = value(pb);
        c.after_number = value(pa);
        if (c.before_number && c.after_number && *c.before_number != model::kUnlimited && *c.after_number != model::kUnlimited) {
          const int64_t d = *c.after_number - *c.before_number;
          c.delta = fmt::format("{}{}", d > 0 ? "+" : "", d);
        }
        diff_.changes.push_back(std::move(c));
        parts.push_back(fmt::format("{} {} {} → {}", profile, suffix, text(pb), text(pa)));
      };
      row("nominal", "nominal", &check::PartitionQuota::nominal);
      row("borrowing limit", "borrowing-limit", &check::PartitionQuota::borrowing_limit);
      // A `dont-lend` team's lending limits are 0 by definition: its `sharing` row says it all.
      if (lending_rows) row("lending limit", "lending-limit", &check::PartitionQuota::lending_limit);
      const int64_t before = pb ? pb->nominal : 0;
      const int64_t after = pa ? pa->nominal : 0;
      if (after >= before) continue;
      Warning& w = warn("guaranteed-gpus-fall",
                        fmt::format("team `{}` loses {} guaranteed `{}` GPU partitions on {}", team, before - after, profile, type),
                        team);
      w.instance_type = type;
      w.profile = profile;
      w.before_number = before;
      w.after_number = after;
    }
    if (parts.empty()) return;
    if (!a || !b) {
      // A quota added or removed: its partitions in one line, as the quota's own line gives its amounts.
      std::vector<std::string> counts;
      for (const check::PartitionQuota& p : (a ? a : b)->partitions) counts.push_back(fmt::format("{} × {}", p.nominal, p.profile));
      diff_.summary.push_back(fmt::format("team `{}`: GPU partitions on {} {}: {}", team, type, a ? "added" : "removed",
                                          fmt::join(counts, ", ")));
      return;
    }
    diff_.summary.push_back(fmt::format("team `{}`: GPU partitions on {}: {}", team, type, fmt::join(parts, ", ")));
  }

  static const check::InstanceType* type_named(const Policy& p, const std::string& name) {
    for (const check::InstanceType& t : p.types()) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  static const check::Rule* find_rule(const Policy& p, const std::string& name) {
    for (const check::Rule& r : p.rules) {
      if (r.name == name) return &r;
    }
    return nullptr;
  }

  static std::string describe(const check::Rule* r) {
    if (!r) return std::string();
    return fmt::format("when {} {} {}", r->condition_text, r->action == ast::RuleAction::deny ? "deny" : "warn",
                       r->message_text);
  }

  void rule_change(const std::string& name, const check::Rule* b, const check::Rule* a) {
    const std::string before = describe(b), after = describe(a);
    if (before == after) return;
    diff_.changes.push_back({.subject = fmt::format("rule {}", name), .field = "rule", .before = before, .after = after,
                             .rule = name, .property = "rule"});
    diff_.summary.push_back(fmt::format("rule `{}` {}", name, !b ? "added" : !a ? "removed" : "changed"));
    const bool denied = b && b->action == ast::RuleAction::deny;
    if (denied && !a) {
      warn_rule("deny-removed", fmt::format("rule `{}` is removed: tasks it denied (when {}) are admitted again", name,
                                       b->condition_text), name);
    }
    if (denied && a && a->action != ast::RuleAction::deny) {
      warn_rule("deny-removed", fmt::format("rule `{}` now only warns: tasks it denied (when {}) are admitted", name,
                                       b->condition_text), name);
    }
    const bool denies = a && a->action == ast::RuleAction::deny;
    if (denies && b && !denied) {
      warn_rule("deny-added",
                b->condition_text == a->condition_text
                    ? fmt::format("rule `{}` now denies: tasks it warned about (when {}) are rejected", name, a->condition_text)
                    : fmt::format("rule `{}` now denies: tasks it matches (when {}) are rejected; it warned when {}", name,
                                  a->condition_text, b->condition_text),
                name);
    } else if (denies && !b) {
      warn_rule("deny-added", fmt::format("rule `{}` is added: tasks it matches (when {}) are rejected", name, a->condition_text), name);
    }
    // Which tasks a changed condition lets in or keeps out is not computed: a reviewer reads both.
    if (denied && denies && b->condition_text != a->condition_text) {
      warn_rule("deny-condition-changed", fmt::format("deny rule `{}` changes which tasks it rejects: when {} → when {}", name,
                                                 b->condition_text, a->condition_text), name);
    }
  }

  void rules() {
    for (const check::Rule& r : after_.rules) rule_change(r.name, find_rule(before_, r.name), &r);
    for (const check::Rule& r : before_.rules) {
      if (!find_rule(after_, r.name)) rule_change(r.name, &r, nullptr);
    }
    // The first deny that matches names a rejection's rule and message (docs/semantics.md §5).
    const auto names = [](const Policy& p) {
      std::vector<std::string> out;
      for (const check::Rule& r : p.rules) out.push_back(r.name);
      return out;
    };
    if (order_change({.subject = "rules", .field = "order", .property = "rule-order"}, names(before_), names(after_))) {
      const Change& c = diff_.changes.back();
      diff_.summary.push_back(fmt::format("rules are tried in the order {} (was {}): the first deny that matches a task "
                                          "names its rejection",
                                          c.after, c.before));
    }
  }

  /// Guaranteed instances of a type (InstanceType::instances_holding of all teams' nominal quotas).
  static double guaranteed(const Policy& p, size_t type) {
    model::Resources total{};
    for (const check::Team& team : p.teams) {
      for (const check::Quota& q : team.quotas) {
        if (q.type != type) continue;
        for (size_t r = 0; r < model::kResourceCount; ++r) total[r] += q.nominal[r];
      }
    }
    return p.types()[type].instances_holding(total);
  }

  void capacity_consequences() {
    if (!after_.cluster) return;
    const auto& types = after_.types();
    for (size_t t = 0; t < types.size(); ++t) {
      const int64_t capacity = after_.capacity_of(t);
      const double now = guaranteed(after_, t);
      if (capacity == 0 || now <= static_cast<double>(capacity) + 1e-9) continue;
      bool exceeded_before = false;
      if (before_.cluster) {
        const auto& old_types = before_.types();
        for (size_t o = 0; o < old_types.size(); ++o) {
          if (old_types[o].name != types[t].name) continue;
          const int64_t old_capacity = before_.capacity_of(o);
          exceeded_before = old_capacity > 0 && guaranteed(before_, o) > static_cast<double>(old_capacity) + 1e-9;
        }
      }
      if (exceeded_before) continue;
      warn("quota-exceeds-capacity", fmt::format("guaranteed quotas for {} now exceed the cluster's {} instances ({} guaranteed)",
                                                 types[t].name, capacity, model::format_instances(now, 3)))
          .instance_type = types[t].name;
    }
  }

  const Policy& before_;
  const Policy& after_;
  const HeldAmounts* held_;
  PolicyDiff diff_;
};

std::string arrow(const Change& c) {
  if (c.before.empty()) return fmt::format("(none) → {}", c.after);
  if (c.after.empty()) return fmt::format("{} → (removed)", c.before);
  return fmt::format("{} → {}{}", c.before, c.after, c.delta ? fmt::format(" ({})", *c.delta) : "");
}

/// A change's number as JSON: resource amounts in display units, exactly (`0.5` vCPUs,
/// `9.599609375` GiB); `null` for unlimited or absent.
void number_value(JsonWriter& out, const Change& c, std::optional<int64_t> value) {
  if (!value || *value == model::kUnlimited) return out.null();
  if (c.micros) return out.decimal(model::weight_text(*value));
  if (c.resource) return out.decimal(model::format_amount(*c.resource, *value, model::decimal_notation()));
  out.number(*value);
}

void change_json(JsonWriter& out, const Change& c) {
  out.begin_object();
  out.field("subject", c.subject);
  out.field("field", c.field);
  if (!c.team.empty()) out.field("team", c.team);
  if (!c.instance_type.empty()) out.field("instance_type", c.instance_type);
  if (!c.rule.empty()) out.field("rule", c.rule);
  if (!c.priority_class.empty()) out.field("class", c.priority_class);
  if (!c.cohort.empty()) out.field("cohort", c.cohort);
  if (c.resource) out.field("resource", model::resource_key(*c.resource));
  if (!c.profile.empty()) out.field("profile", c.profile);
  out.field("property", c.property);
  if (c.before_number || c.after_number) {
    out.key("before");
    number_value(out, c, c.before_number);
    out.key("after");
    number_value(out, c, c.after_number);
    if (c.before_number && c.after_number && *c.before_number != model::kUnlimited && *c.after_number != model::kUnlimited) {
      out.key("delta");
      number_value(out, c, *c.after_number - *c.before_number);
    }
    if ((c.before_number == model::kUnlimited) || (c.after_number == model::kUnlimited)) {
      out.field("unlimited", c.after_number == model::kUnlimited ? "after" : "before");
    }
  } else {
    const auto text_value = [&](const std::string& value) {
      if (c.names) {  // a set of names, `a, b`: an array, empty when there are none
        out.begin_array();
        if (value != kNone) {
          for (size_t at = 0; at <= value.size();) {
            const size_t end = std::min(value.find(", ", at), value.size());
            out.string(std::string_view(value).substr(at, end - at));
            at = end + 2;
          }
        }
        return out.end_array();
      }
      value.empty() || value == kNone ? out.null() : out.string(value);
    };
    out.key("before");
    text_value(c.before);
    out.key("after");
    text_value(c.after);
  }
  out.end_object();
}

}  // namespace

PolicyDiff compare(const check::Policy& before, const check::Policy& after, const HeldAmounts* held) {
  return Comparer(before, after, held).run();
}

// Text for a terminal or a CI log: the file names and every line written escaped
// (docs/diagnostics.md, "Hostile file names and text"), so that no name or rule message can
// start a line of its own (a GitHub workflow command) or drive the terminal.
std::string render_text(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name) {
  const std::string before = display_path(before_name), after = display_path(after_name);
  if (diff.empty() && diff.warnings.empty()) return fmt::format("no changes between {} and {}\n", before, after);
  std::string out = fmt::format("changes from {} to {}:\n", before, after);
  for (const std::string& line : diff.summary) out += fmt::format("  {}\n", escape_for_terminal(line));
  if (!diff.warnings.empty()) {
    out += "\nworth a reviewer's eye:\n";
    for (const Warning& w : diff.warnings) out += fmt::format("  ! {}\n", escape_for_terminal(w.message));
  }
  std::string subject;
  for (const Change& c : diff.changes) {
    if (c.subject != subject) {
      subject = c.subject;
      out += fmt::format("\n{}\n", escape_for_terminal(subject));
    }
    out += fmt::format("  {}\n", escape_for_terminal(fmt::format("{}: {}", c.field, arrow(c))));
  }
  return out;
}

std::string render_json(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name) {
  JsonWriter out(/*indented=*/false);
  out.begin_object();
  out.field("before", before_name);
  out.field("after", after_name);
  out.field("changed", !diff.empty());
  out.key("summary");
  out.begin_array();
  for (const std::string& line : diff.summary) out.string(line);
  out.end_array();
  out.key("changes");
  out.begin_array();
  for (const Change& c : diff.changes) change_json(out, c);
  out.end_array();
  out.key("warnings");
  out.begin_array();
  for (const Warning& w : diff.warnings) {
    out.begin_object();
    out.field("kind", w.kind);
    if (!w.team.empty()) out.field("team", w.team);
    if (!w.rule.empty()) out.field("rule", w.rule);
    if (!w.instance_type.empty()) out.field("instance_type", w.instance_type);
    if (!w.priority_class.empty()) out.field("class", w.priority_class);
    if (w.resource) out.field("resource", model::resource_key(*w.resource));
    if (!w.profile.empty()) out.field("profile", w.profile);
    if (w.before_number && w.after_number) {
      const auto number = [&](int64_t value) {
        if (w.resource) return out.decimal(model::format_amount(*w.resource, value, model::decimal_notation()));
        out.number(value);
      };
      out.key("before");
      number(*w.before_number);
      out.key("after");
      number(*w.after_number);
    }
    out.field("message", w.message);
    out.end_object();
  }
  out.end_array();
  out.end_object();
  return out.finish();
}

namespace {
/// HTML's three special characters as entities: rule messages and conditions are the policy
/// author's text, and a `</details>` in one would close the comment's collapsed section.
void append_html_escaped(std::string& out, char c) {
  if (c == '<') out += "&lt;";
  else if (c == '>') out += "&gt;";
  else if (c == '&') out += "&amp;";
  else out += c;
}

/// Text outside code spans: HTML escaped, and the characters of emphasis, links and strike-through
/// backslash-escaped, so that a rule's message (`*now*`, `[x](http://e)`) shows as written
/// rather than as emphasis and a live link in the pull-request comment (a reviewer's finding,
/// session 43).
void append_inline_escaped(std::string& out, char c) {
  if (c == '\\' || c == '*' || c == '_' || c == '[' || c == ']' || c == '~') out += '\\';
  append_html_escaped(out, c);
}

/// Table cells: a `|` would end the cell, a newline the row; no code spans are meant there, so a
/// backtick is escaped too, and emphasis, links and HTML everywhere.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '`') out += "\\`";
    else if (c == '\n' || c == '\r') out += ' ';
    else append_inline_escaped(out, c);
  }
  return out;
}

/// `text` as a CommonMark code span (where HTML is inert) that its own backticks cannot end: a
/// fence one backtick longer than the longest run in it, padded with spaces; a line break is a
/// space. File names are the user's text: `y`</details>`.gov` closed the comment's section.
std::string code_span(std::string_view text) {
  size_t longest = 0;
  for (size_t i = 0, run = 0; i < text.size(); ++i) {
    run = text[i] == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string body;
  for (char c : text) body += (c == '\n' || c == '\r') ? ' ' : c;
  const std::string fence(longest + 1, '`');
  const bool pad = longest > 0;
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

/// A summary or warning line: names stand in backticks (code spans, where HTML and Markdown are
/// inert and an escape would show as written), the rest is escaped; a line break is a space.
std::string line_text(std::string_view text) {
  std::string out;
  bool in_code = false;
  for (char c : text) {
    if (c == '`') in_code = !in_code;
    if (c == '\n' || c == '\r') out += ' ';
    else if (in_code) out += c;
    else append_inline_escaped(out, c);
  }
  return out;
}
}  // namespace

std::string render_markdown(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name) {
  if (diff.empty() && diff.warnings.empty()) {
    return fmt::format("**gov diff**: no changes between {} and {}.\n", code_span(before_name), code_span(after_name));
  }
  std::string out = fmt::format("### gov diff: {} → {}\n\n", code_span(before_name), code_span(after_name));
  for (const std::string& line : diff.summary) out += fmt::format("- {}\n", line_text(line));
  out += "\n";
  if (!diff.warnings.empty()) {
    out += "> [!WARNING]\n";
    for (const Warning& w : diff.warnings) out += fmt::format("> - {}\n", line_text(w.message));
    out += "\n";
  }
  out += "<details><summary>Every changed field</summary>\n";
  std::string subject;
  for (const Change& c : diff.changes) {
    if (c.subject != subject) {
      subject = c.subject;
      out += fmt::format("\n**{}**\n\n| what | before | after | change |\n|---|---|---|---|\n", line_text(subject));
    }
    out += fmt::format("| {} | {} | {} | {} |\n", cell(c.field), c.before.empty() ? "—" : cell(c.before),
                       c.after.empty() ? "—" : cell(c.after), cell(c.delta.value_or("")));
  }
  out += "\n</details>\n";
  return out;
}

}  // namespace gov::diff
