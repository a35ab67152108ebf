#include "compiler/diff/diff.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "compiler/check/surface.hpp"
#include "compiler/model/quantities.hpp"
#include "compiler/support/json_writer.hpp"

namespace gov::diff {
namespace {

using check::Policy;

constexpr std::array<std::string_view, model::kResourceCount> kResourceNames = {"gpu", "neuron", "vcpu", "memory", "efa"};

/// An amount in display units: devices, vCPUs, GiB.
double display(model::Resource r, model::Amount a) {
  if (r == model::Resource::vcpu) return static_cast<double>(a) / 1000.0;
  if (r == model::Resource::memory) return static_cast<double>(a) / 1024.0;
  return static_cast<double>(a);
}

std::string number_text(double v) {
  std::string text = fmt::format("{:.3f}", v);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string amount_text(model::Resource r, model::Amount a) {
  model::AmountFormat format = model::decimal_notation(/*fraction_digits=*/3);
  format.memory_unit = true;
  format.unlimited_word = true;
  return model::format_amount(r, a, format);
}

class Comparer {
 public:
  Comparer(const Policy& before, const Policy& after) : before_(before), after_(after) {}

  PolicyDiff run() {
    cluster();
    settings();
    classes();
    teams();
    rules();
    consequences();
    return std::move(diff_);
  }

 private:
  void change(std::string subject, std::string field, std::string before, std::string after) {
    if (before == after) return;
    diff_.changes.push_back({std::move(subject), std::move(field), std::move(before), std::move(after), std::nullopt,
                             std::nullopt, std::nullopt});
  }

  void numeric(std::string subject, std::string field, std::optional<double> before, std::optional<double> after,
               std::string_view unit = "") {
    if (before == after) return;
    auto text = [&](std::optional<double> v) { return v ? number_text(*v) + std::string(unit) : std::string(); };
    Change c{std::move(subject), std::move(field), text(before), text(after), std::nullopt, before, after};
    if (before && after) {
      const double d = *after - *before;
      c.delta = (d > 0 ? "+" : "") + number_text(d) + std::string(unit);
    }
    diff_.changes.push_back(std::move(c));
  }

  void cluster() {
    const std::string b = before_.cluster ? before_.cluster->name : "", a = after_.cluster ? after_.cluster->name : "";
    change("cluster", "name", b, a);
    std::map<std::string, int64_t> before_capacity, after_capacity;
    std::vector<std::string> order;
    auto collect = [&](const Policy& p, std::map<std::string, int64_t>& into) {
      if (!p.cluster) return;
      for (const check::Capacity& c : p.cluster->capacity) {
        const std::string& name = p.types()[c.type].name;
        into[name] += c.instances;
        if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
      }
    };
    collect(after_, after_capacity);
    collect(before_, before_capacity);
    for (const std::string& type : order) {
      auto get = [&](const std::map<std::string, int64_t>& m) -> std::optional<double> {
        auto it = m.find(type);
        return it == m.end() ? std::nullopt : std::optional<double>(static_cast<double>(it->second));
      };
      numeric("cluster", fmt::format("capacity of {} (instances)", type), get(before_capacity), get(after_capacity));
    }
  }

  void settings() {
    const check::Settings b = before_.settings.value_or(check::Settings{}), a = after_.settings.value_or(check::Settings{});
    auto prioritization = [](const check::Settings& s) { return std::string(check::word_of(s.prioritization)); };
    auto idle = [](const check::Settings& s) { return std::string(check::word_of(s.idle_compute)); };
    change("policy", "task prioritization", prioritization(b), prioritization(a));
    change("policy", "idle compute", idle(b), idle(a));
    change("policy", "idle-resource sharing", b.idle_resource_sharing ? "on" : "off", a.idle_resource_sharing ? "on" : "off");
    auto default_class = [](const Policy& p, const check::Settings& s) {
      return s.default_class >= 0 ? p.classes[s.default_class].name : std::string("(none)");
    };
    change("policy", "default priority", default_class(before_, b), default_class(after_, a));
    auto strategies = [](const check::Settings& s) {
      std::vector<std::string_view> names;
      for (model::FairShareStrategy strategy : s.fair_share_strategies) names.push_back(check::word_of(strategy));
      return fmt::format("[{}]", fmt::join(names, ", "));
    };
    change("policy", "fair-share preemption", strategies(b), strategies(a));
  }

  static const check::PriorityClass* find_class(const Policy& p, const std::string& name) {
    for (const check::PriorityClass& c : p.classes) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  void classes() {
    for (const check::PriorityClass& c : after_.classes) {
      const check::PriorityClass* old = find_class(before_, c.name);
      numeric("classes", fmt::format("{} weight", c.name),
              old ? std::optional<double>(old->weight) : std::nullopt, static_cast<double>(c.weight));
    }
    for (const check::PriorityClass& c : before_.classes) {
      if (!find_class(after_, c.name)) numeric("classes", fmt::format("{} weight", c.name), c.weight, std::nullopt);
    }
    // A class that now outranks another it did not outrank before.
    for (const check::PriorityClass& a : after_.classes) {
      for (const check::PriorityClass& b : after_.classes) {
        const check::PriorityClass* old_a = find_class(before_, a.name);
        const check::PriorityClass* old_b = find_class(before_, b.name);
        if (!old_a || !old_b || !(a.weight > b.weight) || old_a->weight > old_b->weight) continue;
        diff_.warnings.push_back({"class-order", fmt::format("class `{}` ({}) now outranks `{}` ({}); before it did not ({} vs {})",
                                                            a.name, a.weight, b.name, b.weight, old_a->weight, old_b->weight)});
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
  }

  void team(const check::Team* b, const check::Team* a) {
    const std::string subject = fmt::format("team {}", (a ? a : b)->name);
    if (!b) change(subject, "team", "", "added");
    if (!a) change(subject, "team", "present", "removed");
    if (a && b) {
      change(subject, "sharing", std::string(check::word_of(b->sharing)), std::string(check::word_of(a->sharing)));
      numeric(subject, "borrow limit", b->borrow_limit_percent, a->borrow_limit_percent, "%");
      change(subject, "preempt team tasks", std::string(check::word_of(b->preempt_team_tasks)),
             std::string(check::word_of(a->preempt_team_tasks)));
      numeric(subject, "fair-share weight", b->fair_share_weight, a->fair_share_weight);
      change(subject, "active", b->active ? "yes" : "no", a->active ? "yes" : "no");
      controls(subject, *b, *a);
      if (b->active && !a->active) {
        diff_.warnings.push_back({"team-inactive", fmt::format("team `{}` becomes inactive: it will admit nothing", a->name)});
      }
    }
    std::vector<std::string> types;
    for (const check::Team* t : {a, b}) {
      if (!t) continue;
      for (const check::Quota& q : t->quotas) {
        if (std::find(types.begin(), types.end(), q.type_name) == types.end()) types.push_back(q.type_name);
      }
    }
    for (const std::string& type : types) quota(subject, (a ? a : b)->name, type, find_quota(b, type), find_quota(a, type));
  }

  /// Kueue's controls (docs/language.md), compared by their effective values.
  void controls(const std::string& subject, const check::Team& b, const check::Team& a) {
    change(subject, "reclaim within cohort", std::string(check::word_of(b.reclaim_within_cohort)),
           std::string(check::word_of(a.reclaim_within_cohort)));
    change(subject, "borrow within cohort", std::string(check::word_of(b.borrow_within_cohort)),
           std::string(check::word_of(a.borrow_within_cohort)));
    auto threshold = [](const Policy& p, const check::Team& t) {
      return t.borrow_priority_threshold >= 0 ? p.classes[static_cast<size_t>(t.borrow_priority_threshold)].name
                                              : std::string("(none)");
    };
    change(subject, "max priority threshold", threshold(before_, b), threshold(after_, a));
    change(subject, "queueing", std::string(check::word_of(b.queueing)), std::string(check::word_of(a.queueing)));
    change(subject, "when can borrow", std::string(check::word_of(b.when_can_borrow)),
           std::string(check::word_of(a.when_can_borrow)));
    change(subject, "when can preempt", std::string(check::word_of(b.when_can_preempt)),
           std::string(check::word_of(a.when_can_preempt)));
    change(subject, "flavor preference", std::string(check::word_of(b.flavor_preference)),
           std::string(check::word_of(a.flavor_preference)));
  }

  void quota(const std::string& subject, const std::string& team, const std::string& type, const check::Quota* b,
             const check::Quota* a) {
    for (model::Resource r : model::kAllResources) {
      const size_t i = model::index(r);
      auto value = [&](const check::Quota* q, const model::Resources check::Quota::*field) -> std::optional<double> {
        if (!q || (q->*field)[i] == model::kUnlimited) return q ? std::optional<double>() : std::nullopt;
        return display(r, (q->*field)[i]);
      };
      const std::string unit = r == model::Resource::memory ? " GiB" : "";
      const std::string name = fmt::format("{} {}", type, kResourceNames[i]);
      numeric(subject, name + " nominal", value(b, &check::Quota::nominal), value(a, &check::Quota::nominal), unit);
      numeric(subject, name + " borrowing limit", value(b, &check::Quota::borrowing_limit),
              value(a, &check::Quota::borrowing_limit), unit);
      auto lending = [&](const check::Quota* q) { return q ? amount_text(r, q->lending_limit[i]) : std::string(); };
      change(subject, name + " lending limit", lending(b), lending(a));
    }
    // Consequence: fewer guaranteed accelerators.
    for (model::Resource r : {model::Resource::gpu, model::Resource::neuron}) {
      const model::Amount before = b ? b->nominal[model::index(r)] : 0;
      const model::Amount after = a ? a->nominal[model::index(r)] : 0;
      if (after >= before) continue;
      const check::InstanceType* t = type_named(after_, type);
      if (!t) t = type_named(before_, type);
      const std::string accelerator = t && !t->accelerator.empty() ? fmt::format(" ({})", t->accelerator) : "";
      diff_.warnings.push_back({"guaranteed-gpus-fall",
                                fmt::format("team `{}` loses {} guaranteed {}{} on {}", team, before - after,
                                            r == model::Resource::gpu ? "GPUs" : "Neuron devices", accelerator, type)});
    }
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

  void rules() {
    auto describe = [](const check::Rule* r) {
      if (!r) return std::string();
      return fmt::format("when {} {} {}", r->condition_text, r->action == ast::RuleAction::deny ? "deny" : "warn",
                         r->message_text);
    };
    for (const check::Rule& r : after_.rules) {
      change(fmt::format("rule {}", r.name), "rule", describe(find_rule(before_, r.name)), describe(&r));
    }
    for (const check::Rule& r : before_.rules) {
      if (!find_rule(after_, r.name)) change(fmt::format("rule {}", r.name), "rule", describe(&r), "");
    }
  }

  /// Guaranteed instances of a type, as the largest share of any resource.
  static double guaranteed(const Policy& p, size_t type) {
    const check::InstanceType& t = p.types()[type];
    model::Resources total{};
    for (const check::Team& team : p.teams) {
      for (const check::Quota& q : team.quotas) {
        if (q.type != type) continue;
        for (size_t r = 0; r < model::kResourceCount; ++r) total[r] += q.nominal[r];
      }
    }
    double most = 0;
    for (size_t r = 0; r < model::kResourceCount; ++r) {
      if (t.per_instance[r] > 0) most = std::max(most, static_cast<double>(total[r]) / static_cast<double>(t.per_instance[r]));
    }
    return most;
  }

  void consequences() {
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
      diff_.warnings.push_back({"quota-exceeds-capacity",
                                fmt::format("guaranteed quotas for {} now exceed the cluster's {} instances ({} guaranteed)",
                                            types[t].name, capacity, number_text(now))});
    }
  }

  const Policy& before_;
  const Policy& after_;
  PolicyDiff diff_;
};

// Unsafe characters escaped too: diff documents end up in CI logs.
std::string json_string(std::string_view s) { return json_quote(s, JsonEscapes::unsafe); }

std::string arrow(const Change& c) {
  if (c.before.empty()) return fmt::format("(none) → {}", c.after);
  if (c.after.empty()) return fmt::format("{} → (removed)", c.before);
  return fmt::format("{} → {}{}", c.before, c.after, c.delta ? fmt::format(" ({})", *c.delta) : "");
}

}  // namespace

PolicyDiff compare(const check::Policy& before, const check::Policy& after) { return Comparer(before, after).run(); }

std::string render_text(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name) {
  if (diff.empty()) return fmt::format("no changes between {} and {}\n", before_name, after_name);
  std::string out = fmt::format("changes from {} to {}:\n", before_name, after_name);
  std::string subject;
  for (const Change& c : diff.changes) {
    if (c.subject != subject) {
      subject = c.subject;
      out += fmt::format("\n{}\n", subject);
    }
    out += fmt::format("  {}: {}\n", c.field, arrow(c));
  }
  if (!diff.warnings.empty()) {
    out += "\nworth a reviewer's eye:\n";
    for (const Warning& w : diff.warnings) out += fmt::format("  ! {}\n", w.message);
  }
  return out;
}

std::string render_json(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name) {
  std::string out = fmt::format("{{\"before\":{},\"after\":{},\"changed\":{},\"changes\":[", json_string(before_name),
                                json_string(after_name), !diff.empty());
  for (size_t i = 0; i < diff.changes.size(); ++i) {
    const Change& c = diff.changes[i];
    out += fmt::format("{}{{\"subject\":{},\"field\":{}", i ? "," : "", json_string(c.subject), json_string(c.field));
    if (c.before_number || c.after_number) {
      out += fmt::format(",\"before\":{},\"after\":{}", c.before_number ? number_text(*c.before_number) : "null",
                         c.after_number ? number_text(*c.after_number) : "null");
      if (c.before_number && c.after_number) out += fmt::format(",\"delta\":{}", number_text(*c.after_number - *c.before_number));
    } else {
      out += fmt::format(",\"before\":{},\"after\":{}", c.before.empty() ? "null" : json_string(c.before),
                         c.after.empty() ? "null" : json_string(c.after));
    }
    out += "}";
  }
  out += "],\"warnings\":[";
  for (size_t i = 0; i < diff.warnings.size(); ++i) {
    out += fmt::format("{}{{\"kind\":{},\"message\":{}}}", i ? "," : "", json_string(diff.warnings[i].kind),
                       json_string(diff.warnings[i].message));
  }
  return out + "]}\n";
}

std::string render_markdown(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name) {
  if (diff.empty()) return fmt::format("**gov diff**: no changes between `{}` and `{}`.\n", before_name, after_name);
  std::string out = fmt::format("### gov diff: `{}` → `{}`\n\n", before_name, after_name);
  if (!diff.warnings.empty()) {
    out += "> [!WARNING]\n";
    for (const Warning& w : diff.warnings) out += fmt::format("> - {}\n", w.message);
    out += "\n";
  }
  std::string subject;
  for (const Change& c : diff.changes) {
    if (c.subject != subject) {
      subject = c.subject;
      out += fmt::format("\n**{}**\n\n| what | before | after | change |\n|---|---|---|---|\n", subject);
    }
    out += fmt::format("| {} | {} | {} | {} |\n", c.field, c.before.empty() ? "—" : c.before,
                       c.after.empty() ? "—" : c.after, c.delta.value_or(""));
  }
  return out;
}

}  // namespace gov::diff
