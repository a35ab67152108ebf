#include "compiler/check/check.hpp"

#include <algorithm>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "compiler/ast/source_text.hpp"
#include "compiler/check/expressions.hpp"
#include "compiler/support/name_index.hpp"
#include "compiler/check/quantities.hpp"
#include "compiler/check/quotas.hpp"
#include "compiler/model/quantities.hpp"

namespace gov::check {
namespace {

constexpr int64_t kMaxAmount = 10'000'000;  // HyperPod's range for counts and amounts
constexpr size_t kMaxClasses = 10;
constexpr size_t kMaxQuotasPerTeam = 15;
constexpr size_t kMaxNameLength = 41;

/// A declaration together with the file it came from.
template <typename T>
struct Located {
  const T* decl;
  SourceId source;
};

const ast::Property* find_property(const std::vector<ast::Property>& properties, std::string_view key) {
  for (const ast::Property& p : properties) {
    if (p.key.text == key) return &p;
  }
  return nullptr;
}

/// The span of a string's first `{...}` interpolation (the whole string when none).
Span interpolation_span(const ast::StringLit& s) {
  for (const ast::StringPart& part : s.parts) {
    if (part.expr) return part.span;
  }
  return s.span;
}

std::optional<model::Resource> resource_of(std::string_view key) {
  if (key == "gpus") return model::Resource::gpu;
  if (key == "neuron") return model::Resource::neuron;
  if (key == "vcpus") return model::Resource::vcpu;
  if (key == "memory") return model::Resource::memory;
  if (key == "efa") return model::Resource::efa;
  return std::nullopt;
}

class Checker {
 public:
  Checker(const Program& program, const CheckOptions& options, CheckResult& result)
      : program_(program), options_(options), policy_(result.policy), diagnostics_(result.diagnostics) {}

  void run() {
    collect();
    check_catalogs();
    check_cluster();
    check_policy_settings();
    check_teams();
    check_rules();
    check_tests();
  }

 private:
  // ------------------------------------------------------------------ helpers

  Diagnostic& report(Code code, Location where, std::string message, std::string label = {}) {
    return diagnostics_.report(make_diagnostic(code, where, std::move(message), std::move(label)));
  }

  /// Reports a name defined twice; returns true when `name` was already in `seen`.
  bool duplicate(std::map<std::string, Location>& seen, const std::string& name, Location where, std::string_view what) {
    auto [it, inserted] = seen.emplace(name, where);
    if (inserted) return false;
    Diagnostic& d = report(Code::duplicate_definition, where, fmt::format("{} `{}` is defined twice", what, name),
                           "defined again here");
    d.notes.push_back({it->second, "first defined here"});
    return true;
  }

  /// HyperPod's name rule for teams and classes: a DNS label of at most 41 characters.
  void check_name_format(const ast::Name& name, SourceId source, std::string_view what) {
    static const std::regex label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    if (name.text.size() <= kMaxNameLength && std::regex_match(name.text, label)) return;
    Diagnostic& d = report(Code::invalid_name_format, {source, name.span},
                           name.text.size() > kMaxNameLength
                               ? fmt::format("{} name is {} characters long; HyperPod allows at most {}", what,
                                             name.text.size(), kMaxNameLength)
                               : fmt::format("{} name `{}` is not a DNS label", what.substr(what.find(' ') + 1), name.text),
                           "invalid name");
    d.help = "names are lower-case letters, digits and hyphens, start and end with a letter or digit, and have at most 41 characters, like `team-a`";
  }

  std::optional<int64_t> count_in_range(const ast::Value& v, SourceId source, std::string_view what, int64_t low,
                                        int64_t high, std::string_view unit = "") {
    std::optional<int64_t> n = v.kind == ast::Value::Kind::number ? whole_number(v.number) : std::nullopt;
    if (v.kind == ast::Value::Kind::number && v.number.unit == ast::Unit::percent) n = percentage(v.number);
    if (!n) return std::nullopt;  // the parser already reported the wrong kind
    if (*n < low || *n > high) {
      Diagnostic& d = report(Code::out_of_range, {source, v.span},
                             fmt::format("{} is {}{}; HyperPod accepts {}{} to {}{}", what, *n, unit, low, unit, high, unit),
                             "out of range");
      (void)d;
      return std::nullopt;
    }
    return n;
  }

  /// The amount of a resource property in base units, range-checked.
  std::optional<model::Amount> amount(const ast::Property& p, model::Resource r, SourceId source) {
    const ast::Value& v = *p.value;
    if (v.kind != ast::Value::Kind::number) return std::nullopt;
    std::optional<model::Amount> a;
    model::Amount limit = kMaxAmount;
    switch (r) {
      case model::Resource::vcpu:
        a = millicores(v.number);
        limit = kMaxAmount * 1000;
        if (!a && (v.number.unit == ast::Unit::none || v.number.unit == ast::Unit::milli)) {
          report(Code::out_of_range, {source, v.span},
                 fmt::format("`{}` is not a whole number of millicores", ast::number_text(v.number)));
        }
        break;
      case model::Resource::memory:
        a = mebibytes(v.number);
        limit = kMaxAmount * 1024;
        if (!a && (v.number.unit == ast::Unit::mib || v.number.unit == ast::Unit::gib || v.number.unit == ast::Unit::tib)) {
          report(Code::out_of_range, {source, v.span}, fmt::format("`{}` is not a whole number of MiB", ast::number_text(v.number)));
        }
        break;
      default: a = whole_number(v.number); break;
    }
    if (a && (*a < 0 || *a > limit)) {
      report(Code::out_of_range, {source, v.span},
             fmt::format("`{}` is {}; HyperPod accepts at most {}", p.key.text, ast::number_text(v.number),
                         r == model::Resource::memory ? "10,000,000 GiB" : "10,000,000"),
             "out of range");
      return std::nullopt;
    }
    return a;
  }

  // ------------------------------------------------------------------ collecting declarations

  void collect() {
    for (const ProgramFile& file : program_.files) {
      for (const ast::Declaration& d : file.ast.declarations) {
        if (const auto* x = std::get_if<ast::Catalog>(&d)) catalogs_.push_back({x, file.source});
        if (const auto* x = std::get_if<ast::Cluster>(&d)) clusters_.push_back({x, file.source});
        if (const auto* x = std::get_if<ast::Policy>(&d)) policies_.push_back({x, file.source});
        if (const auto* x = std::get_if<ast::Team>(&d)) teams_.push_back({x, file.source});
        if (const auto* x = std::get_if<ast::Rule>(&d)) rules_.push_back({x, file.source});
        if (const auto* x = std::get_if<ast::Test>(&d)) tests_.push_back({x, file.source});
      }
    }
  }

  // ------------------------------------------------------------------ catalogs

  void check_catalogs() {
    std::map<std::string, Location> seen;
    for (const auto& [catalog, source] : catalogs_) {
      if (duplicate(seen, catalog->name.text, {source, catalog->name.span}, "catalog")) continue;
      Catalog out{catalog->name.text, {}, {source, catalog->span}};
      std::map<std::string, Location> types_seen;
      for (const ast::Instance& instance : catalog->instances) {
        if (duplicate(types_seen, instance.type.text, {source, instance.type.span}, "instance type")) continue;
        out.types.push_back(instance_type(instance, source));
      }
      policy_.catalogs.push_back(std::move(out));
    }
  }

  InstanceType instance_type(const ast::Instance& instance, SourceId source) {
    InstanceType t;
    t.name = instance.type.text;
    t.where = {source, instance.type.span};
    for (const ast::Property& p : instance.properties) {
      const ast::Value& v = *p.value;
      if (p.key.text == "accelerator" && v.kind == ast::Value::Kind::name) t.accelerator = v.name.text;
      if (p.key.text == "hyperpod" && v.kind == ast::Value::Kind::boolean) t.hyperpod = v.boolean;
      if (p.key.text == "accelerator-memory" && v.kind == ast::Value::Kind::number) {
        t.accelerator_memory = mebibytes(v.number).value_or(0);
      }
      if (auto r = resource_of(p.key.text)) t.per_instance[model::index(*r)] = amount(p, *r, source).value_or(0);
    }
    for (std::string_view required : {"vcpus", "memory"}) {
      if (find_property(instance.properties, required)) continue;
      Diagnostic& d = report(Code::missing_property, {source, instance.type.span},
                             fmt::format("instance type `{}` has no `{}`", t.name, required), "incomplete");
      d.help = fmt::format("add `{} = ...` (the shipped catalog, policies/catalog/aws-ml.gov, has the figures)", required);
    }
    const ast::Property* gpus = find_property(instance.properties, "gpus");
    const ast::Property* neuron = find_property(instance.properties, "neuron");
    if (gpus && neuron) {
      Diagnostic& d = report(Code::conflicting_accelerators, {source, neuron->key.span},
                             fmt::format("instance type `{}` has both `gpus` and `neuron`", t.name), "second kind");
      d.notes.push_back({Location{source, gpus->key.span}, "`gpus` is set here"});
    }
    return t;
  }

  // ------------------------------------------------------------------ cluster

  void check_cluster() {
    if (clusters_.size() > 1) {
      for (size_t i = 1; i < clusters_.size(); ++i) {
        Diagnostic& d = report(Code::duplicate_cluster_or_policy, {clusters_[i].source, clusters_[i].decl->name.span},
                               "a policy describes one cluster; this is a second `cluster`", "second cluster");
        d.notes.push_back({Location{clusters_[0].source, clusters_[0].decl->name.span}, "the first cluster is here"});
      }
    }
    if (clusters_.empty()) {
      if (options_.require_cluster) missing_declaration("cluster");
      return;
    }
    const auto& [cluster, source] = clusters_[0];
    const ast::Property* catalog = find_property(cluster->properties, "catalog");
    if (!catalog) {
      report(Code::missing_property, {source, cluster->name.span},
             fmt::format("cluster `{}` has no `catalog`", cluster->name.text), "which catalog?")
          .help = "add `catalog = aws-ml` (the shipped catalog, imported from policies/catalog/aws-ml.gov)";
      return;
    }
    if (catalog->value->kind != ast::Value::Kind::name) return;
    const std::string& wanted = catalog->value->name.text;
    auto it = std::find_if(policy_.catalogs.begin(), policy_.catalogs.end(),
                           [&](const Catalog& c) { return c.name == wanted; });
    if (it == policy_.catalogs.end()) {
      std::vector<std::string> names;
      for (const Catalog& c : policy_.catalogs) names.push_back(c.name);
      Diagnostic& d = report(Code::unknown_catalog, {source, catalog->value->span},
                             fmt::format("unknown catalog `{}`", wanted), "not defined");
      d.help = did_you_mean(wanted, names).value_or(
          names.empty() ? "import a catalog first: `import \"../catalog/aws-ml.gov\"`"
                        : names_help("catalogs", names));
      return;
    }
    Cluster out{cluster->name.text, static_cast<size_t>(it - policy_.catalogs.begin()), {}, {source, cluster->span}};
    policy_.cluster = std::move(out);
    if (const ast::Property* capacity = find_property(cluster->properties, "capacity")) {
      for (const ast::MapEntry& entry : capacity->value->map) {
        auto type = resolve_type(entry.key.text, {source, entry.key.span});
        auto n = count_in_range(*entry.value, source, fmt::format("the capacity of `{}`", entry.key.text), 0, kMaxAmount);
        if (type && n) policy_.cluster->capacity.push_back({*type, *n, {source, entry.span}});
      }
    }
  }

  void missing_declaration(std::string_view what) {
    const SourceId entry = program_.files.empty() ? 0 : program_.files[0].source;
    Diagnostic& d = report(Code::missing_cluster_or_policy, {entry, {0, 0}},
                           fmt::format("this policy has no `{}` declaration", what), "");
    d.help = what == "cluster" ? "add `cluster NAME { catalog = aws-ml, capacity = { ml.g5.8xlarge: 4 } }`"
                               : "add `policy { ... }` with the cluster policy (task prioritization, idle compute, classes)";
  }

  /// The instance types names resolve against: the cluster's catalog, or every catalog
  /// when the file has no cluster.
  std::vector<std::string> type_names() const {
    std::vector<std::string> names;
    if (policy_.cluster) {
      for (const InstanceType& t : policy_.types()) names.push_back(t.name);
      return names;
    }
    for (const Catalog& c : policy_.catalogs) {
      for (const InstanceType& t : c.types) names.push_back(t.name);
    }
    return names;
  }

  /// A list of names and its index, made once: resolve_type runs for every quota and test step,
  /// the team and rule lookups for every step (docs/limits.md).
  struct Names {
    std::vector<std::string> list;
    NameIndex index;
    explicit Names(std::vector<std::string> names) : list(std::move(names)), index(list) {}
  };

  /// type_names() and its index; made again when the cluster or the catalogs change.
  const Names& type_lookup() {
    const std::pair<size_t, size_t> key{policy_.cluster ? policy_.cluster->catalog + 1 : 0, policy_.catalogs.size()};
    if (!type_lookup_ || type_lookup_key_ != key) {
      type_lookup_.emplace(type_names());
      type_lookup_key_ = key;
    }
    return *type_lookup_;
  }

  const Names& team_lookup() {
    if (!team_lookup_ || team_lookup_->list.size() != policy_.teams.size()) {
      std::vector<std::string> names;
      for (const Team& t : policy_.teams) names.push_back(t.name);
      team_lookup_.emplace(std::move(names));
    }
    return *team_lookup_;
  }

  const Names& rule_lookup() {
    if (!rule_lookup_ || rule_lookup_->list.size() != rules_.size()) {
      std::vector<std::string> names;
      for (const auto& [rule, s] : rules_) names.push_back(rule->name.text);
      rule_lookup_.emplace(std::move(names));
    }
    return *rule_lookup_;
  }

  /// Index of an instance type in the cluster's catalog; reports E0203 when unknown.
  /// Without a cluster, returns nullopt silently unless no catalog knows the name.
  std::optional<size_t> resolve_type(const std::string& name, Location where) {
    const Names& types = type_lookup();
    const std::vector<std::string>& names = types.list;
    if (const std::optional<size_t> i = types.index.find(name)) return policy_.cluster ? i : std::nullopt;
    if (!policy_.cluster && policy_.catalogs.empty()) return std::nullopt;  // nothing to resolve against
    Diagnostic& d = report(Code::unknown_instance_type, where, fmt::format("unknown instance type `{}`", name),
                           "not in the catalog");
    if (auto guess = did_you_mean(name, names)) {
      d.help = *guess;
    } else if (policy_.cluster) {
      d.help = fmt::format("the cluster's catalog `{}` has no such type", policy_.catalogs[policy_.cluster->catalog].name);
    }
    return std::nullopt;
  }

  // ------------------------------------------------------------------ cluster policy

  void check_policy_settings() {
    if (policies_.size() > 1) {
      for (size_t i = 1; i < policies_.size(); ++i) {
        Diagnostic& d = report(Code::duplicate_cluster_or_policy, {policies_[i].source, {policies_[i].decl->span.begin, policies_[i].decl->span.begin + 6}},
                               "a cluster has one cluster policy; this is a second `policy`", "second policy");
        d.notes.push_back({Location{policies_[0].source, {policies_[0].decl->span.begin, policies_[0].decl->span.begin + 6}},
                           "the first policy is here"});
      }
    }
    if (policies_.empty()) {
      if (options_.require_cluster) missing_declaration("policy");
      return;
    }
    const auto& [policy, source] = policies_[0];
    Settings settings;
    settings.where = {source, policy->span};
    std::map<std::string, Location> seen;
    std::optional<std::pair<std::string, Location>> default_class;
    for (const auto& item : policy->items) {
      if (const auto* c = std::get_if<ast::PriorityClass>(&item)) {
        priority_class(*c, source, seen);
        continue;
      }
      const auto& p = std::get<ast::Property>(item);
      const ast::Value& v = *p.value;
      if (p.key.text == "task-prioritization" && v.kind == ast::Value::Kind::name) {
        settings.prioritization = v.name.text == "fcfs" ? Prioritization::fcfs : Prioritization::task_ranking;
      } else if (p.key.text == "idle-compute" && v.kind == ast::Value::Kind::name) {
        settings.idle_compute = v.name.text == "fcfs" ? IdleCompute::fcfs : IdleCompute::fair_share;
      } else if (p.key.text == "idle-resource-sharing" && v.kind == ast::Value::Kind::boolean) {
        settings.idle_resource_sharing = v.boolean;
      } else if (p.key.text == "default-priority" && v.kind == ast::Value::Kind::name) {
        default_class = {{v.name.text, Location{source, v.span}}};
      } else if (p.key.text == "fair-share-preemption" && v.kind == ast::Value::Kind::list) {
        fair_share_preemption(v, source, settings);
      }
    }
    if (policy_.classes.size() > kMaxClasses) {
      Diagnostic& d = report(Code::too_many_priority_classes, policy_.classes[kMaxClasses].where,
                             fmt::format("the policy has {} priority classes; HyperPod allows at most {}",
                                         policy_.classes.size(), kMaxClasses),
                             "one too many");
      (void)d;
    }
    if (default_class) {
      auto it = std::find_if(policy_.classes.begin(), policy_.classes.end(),
                             [&](const PriorityClass& c) { return c.name == default_class->first; });
      if (it == policy_.classes.end()) {
        unknown_class(default_class->first, default_class->second);
      } else {
        settings.default_class = static_cast<int32_t>(it - policy_.classes.begin());
      }
    }
    policy_.settings = settings;
  }

  /// Kueue accepts three lists of fair-sharing preemption strategies: S2-a alone, S2-b alone, or
  /// S2-a then S2-b (docs/kueue-reference.md §1, `parseStrategies`).
  void fair_share_preemption(const ast::Value& v, SourceId source, Settings& settings) {
    using S = model::FairShareStrategy;
    std::vector<S> strategies;
    for (const ast::Value& item : v.list) {
      if (item.kind != ast::Value::Kind::name) return;  // already reported
      if (item.name.text == model::fair_share_strategy_name(S::less_than_or_equal_to_final_share)) {
        strategies.push_back(S::less_than_or_equal_to_final_share);
      } else if (item.name.text == model::fair_share_strategy_name(S::less_than_initial_share)) {
        strategies.push_back(S::less_than_initial_share);
      } else {
        return;  // an unknown choice, already reported
      }
    }
    const bool valid = strategies == std::vector<S>{S::less_than_or_equal_to_final_share} ||
                       strategies == std::vector<S>{S::less_than_initial_share} ||
                       strategies == std::vector<S>{S::less_than_or_equal_to_final_share, S::less_than_initial_share};
    if (!valid) {
      Diagnostic& d = report(Code::invalid_fair_share_preemption, {source, v.span},
                             strategies.empty() ? std::string("`fair-share-preemption` names no strategy")
                                                : fmt::format("Kueue does not accept the strategies `{}`", ast::value_text(v)),
                             "not an accepted list");
      d.help =
          "write `[less-than-or-equal-to-final-share, less-than-initial-share]` (the default), "
          "`[less-than-or-equal-to-final-share]` or `[less-than-initial-share]`";
      return;
    }
    settings.fair_share_strategies = std::move(strategies);
    settings.fair_share_strategies_at = Location{source, v.span};
  }

  void priority_class(const ast::PriorityClass& c, SourceId source, std::map<std::string, Location>& seen) {
    if (duplicate(seen, c.name.text, {source, c.name.span}, "priority class")) return;
    check_name_format(c.name, source, "a priority class");
    ast::Value weight;
    weight.kind = ast::Value::Kind::number;
    weight.number = c.weight;
    weight.span = c.weight.span;
    auto w = count_in_range(weight, source, fmt::format("the weight of `{}`", c.name.text), 0, 100);
    if (!w && c.weight.unit != ast::Unit::none) {
      report(Code::out_of_range, {source, c.weight.span},
             fmt::format("a class weight is a whole number from 0 to 100, found `{}`", ast::number_text(c.weight)));
    }
    policy_.classes.push_back({c.name.text, static_cast<int32_t>(w.value_or(0)), {source, c.name.span}});
  }

  void unknown_class(const std::string& name, Location where) {
    std::vector<std::string> names;
    for (const PriorityClass& c : policy_.classes) names.push_back(c.name);
    Diagnostic& d = report(Code::unknown_priority_class, where, fmt::format("unknown priority class `{}`", name),
                           "not a class of this policy");
    d.help = did_you_mean(name, names).value_or(
        names.empty() ? "the policy declares no classes: add `priority NAME = WEIGHT` to `policy`"
                      : names_help("classes", names));
  }

  // ------------------------------------------------------------------ teams

  void check_teams() {
    std::map<std::string, Location> seen;
    for (const auto& [team, source] : teams_) {
      if (duplicate(seen, team->name.text, {source, team->name.span}, "team")) continue;
      check_name_format(team->name, source, "a team");
      policy_.teams.push_back(resolve_team(*team, source));
    }
  }

  Team resolve_team(const ast::Team& team, SourceId source) {
    Team out;
    out.name = team.name.text;
    out.where = {source, team.name.span};
    std::optional<Location> reclaim_at, preference_at;
    for (const auto& item : team.items) {
      const auto* p = std::get_if<ast::Property>(&item);
      if (!p) continue;
      const ast::Value& v = *p->value;
      if (p->key.text == "sharing" && v.kind == ast::Value::Kind::name) {
        out.sharing = v.name.text == "lend" ? model::Sharing::lend
                      : v.name.text == "dont-lend" ? model::Sharing::dont_lend
                                                   : model::Sharing::lend_and_borrow;
      } else if (p->key.text == "borrow-limit") {
        out.borrow_limit_given = true;
        out.borrow_limit_percent = static_cast<int32_t>(count_in_range(v, source, "the borrow limit", 0, 10000, "%").value_or(50));
      } else if (p->key.text == "preempt-team-tasks" && v.kind == ast::Value::Kind::name) {
        out.preempt_team_tasks = v.name.text == "never"                           ? model::WithinTeam::never
                                 : v.name.text == "lower-or-newer-equal-priority" ? model::WithinTeam::lower_or_newer_equal_priority
                                                                                  : model::WithinTeam::lower_priority;
      } else if (p->key.text == "reclaim-within-cohort" && v.kind == ast::Value::Kind::name) {
        out.reclaim_within_cohort = v.name.text == "never"            ? model::ReclaimWithinCohort::never
                                    : v.name.text == "lower-priority" ? model::ReclaimWithinCohort::lower_priority
                                                                      : model::ReclaimWithinCohort::any;
        reclaim_at = Location{source, v.span};
      } else if (p->key.text == "borrow-within-cohort") {
        borrow_within_cohort(v, source, out);
      } else if (p->key.text == "queueing" && v.kind == ast::Value::Kind::name) {
        out.queueing = v.name.text == "strict-fifo" ? model::Queueing::strict_fifo : model::Queueing::best_effort_fifo;
      } else if (p->key.text == "when-can-borrow" && v.kind == ast::Value::Kind::name) {
        out.when_can_borrow = v.name.text == "try-next-flavor" ? model::WhenCanBorrow::try_next_flavor : model::WhenCanBorrow::borrow;
        if (!out.fungibility_at) out.fungibility_at = Location{source, p->span};
      } else if (p->key.text == "when-can-preempt" && v.kind == ast::Value::Kind::name) {
        out.when_can_preempt = v.name.text == "preempt" ? model::WhenCanPreempt::preempt : model::WhenCanPreempt::try_next_flavor;
        if (!out.fungibility_at) out.fungibility_at = Location{source, p->span};
      } else if (p->key.text == "flavor-preference" && v.kind == ast::Value::Kind::name) {
        out.flavor_preference = v.name.text == "preemption-over-borrowing" ? model::FlavorPreference::preemption_over_borrowing
                                                                           : model::FlavorPreference::borrowing_over_preemption;
        preference_at = Location{source, p->span};
        if (!out.fungibility_at) out.fungibility_at = Location{source, p->span};
      } else if (p->key.text == "fair-share-weight") {
        out.fair_share_weight_given = true;
        out.fair_share_weight = static_cast<int32_t>(count_in_range(v, source, "the fair-share weight", 0, 100).value_or(0));
      } else if (p->key.text == "active" && v.kind == ast::Value::Kind::boolean) {
        out.active = v.boolean;
      }
    }
    std::map<std::string, Location> types_seen;
    size_t quota_count = 0;
    for (const auto& item : team.items) {
      const auto* q = std::get_if<ast::Quota>(&item);
      if (!q) continue;
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
    check_preemption_controls(out, reclaim_at);
    check_fungibility(out, preference_at);
    return out;
  }

  /// `borrow-within-cohort = lower-priority`, or the block form with an optional
  /// `max-priority-threshold` (a class: victims of other teams above its weight are spared).
  void borrow_within_cohort(const ast::Value& v, SourceId source, Team& out) {
    const auto policy_of = [](const std::string& text) {
      return text == "lower-priority" ? model::BorrowWithinCohort::lower_priority : model::BorrowWithinCohort::never;
    };
    if (v.kind == ast::Value::Kind::name) {
      out.borrow_within_cohort = policy_of(v.name.text);
      out.borrow_within_cohort_at = Location{source, v.span};
      return;
    }
    if (v.kind != ast::Value::Kind::block) return;  // the schema reported it
    out.borrow_within_cohort_at = Location{source, v.span};
    const ast::Property* policy = find_property(v.block, "policy");
    if (!policy) {
      report(Code::missing_property, {source, v.span}, "`borrow-within-cohort` has no `policy`", "which policy?").help =
          "add `policy = lower-priority` (or write `borrow-within-cohort = never`)";
    } else if (policy->value->kind == ast::Value::Kind::name) {
      out.borrow_within_cohort = policy_of(policy->value->name.text);
    }
    const ast::Property* threshold = find_property(v.block, "max-priority-threshold");
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
  void check_preemption_controls(const Team& team, const std::optional<Location>& reclaim_at) {
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
  void check_fungibility(const Team& team, const std::optional<Location>& preference_at) {
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

  std::optional<Quota> resolve_quota(const ast::Quota& q, SourceId source, const Team& team) {
    const std::optional<size_t> type_index = resolve_type(q.instance_type.text, {source, q.instance_type.span});
    if (!type_index) return std::nullopt;
    const InstanceType& type = policy_.types()[*type_index];
    Quota out;
    out.type = *type_index;
    out.type_name = type.name;
    out.where = {source, q.span};
    GivenAmounts given{}, absolute{};
    std::map<model::Resource, Span> given_spans;
    const ast::Property* lending = nullptr;
    for (const ast::Property& p : q.properties) {
      if (p.key.text == "instances") {
        out.instances = count_in_range(*p.value, source, "the instance count", 0, kMaxAmount);
      } else if (p.key.text == "borrow-limit") {
        for (const ast::Property& limit : p.value->block) {
          if (auto r = resource_of(limit.key.text)) absolute[model::index(*r)] = amount(limit, *r, source);
        }
      } else if (p.key.text == "lending-limit") {
        lending = &p;
      } else if (auto r = resource_of(p.key.text)) {
        if (!accelerator_fits(type, *r, p, source)) continue;
        given[model::index(*r)] = amount(p, *r, source);
        given_spans[*r] = p.span;
      }
    }
    const bool any_given = std::any_of(given.begin(), given.end(), [](const auto& a) { return a.has_value(); });
    if (!out.instances && !any_given) {
      if (!q.properties.empty() && std::all_of(q.properties.begin(), q.properties.end(), [](const ast::Property& p) {
            return p.key.text == "borrow-limit" || p.key.text == "lending-limit";
          }) == false) {
        return std::nullopt;  // the amounts were invalid and already reported
      }
      Diagnostic& d = report(Code::empty_quota, {source, q.instance_type.span},
                             fmt::format("the quota for `{}` gives no resources", type.name), "empty quota");
      d.help = "give `instances = N`, or amounts such as `gpus = 2`";
      return std::nullopt;
    }
    if (out.instances) {
      for (const auto& [r, span] : given_spans) {
        const model::Amount holds = *out.instances * type.per_instance[model::index(r)];
        if (given[model::index(r)] && *given[model::index(r)] > holds) {
          auto shown = [&](model::Amount a) {
            const std::string amount = model::format_amount(r, a, model::decimal_notation());
            if (r == model::Resource::vcpu) return fmt::format("{} vCPUs", amount);
            if (r == model::Resource::memory) return fmt::format("{} GiB of memory", amount);
            return fmt::format("{} {}", a, r == model::Resource::gpu ? "GPUs" : r == model::Resource::neuron ? "Neuron devices" : "EFA interfaces");
          };
          report(Code::quota_exceeds_instances, {source, span},
                 fmt::format("the quota asks for {}, but {} {} of `{}` {} {}", shown(*given[model::index(r)]), *out.instances,
                             *out.instances == 1 ? "instance" : "instances", type.name,
                             *out.instances == 1 ? "holds" : "hold", shown(holds)),
                 "more than the instances hold");
        }
      }
    }
    for (size_t r = 0; r < model::kResourceCount; ++r) out.absolute_borrow_limit[r] = absolute[r].has_value();
    out.nominal = resolve_nominal(type, out.instances, given);
    out.borrowing_limit = resolve_borrowing_limit(out.nominal, team.borrow_limit_percent, absolute, team.sharing);
    out.lending_limit = resolve_lending_limit(team.sharing);
    if (lending) lending_limit(*lending, type, source, team, out);
    return out;
  }

  /// `lending-limit = { ... }` inside a quota: Kueue's lendingLimit, at most the nominal quota.
  void lending_limit(const ast::Property& p, const InstanceType& type, SourceId source, const Team& team, Quota& out) {
    if (team.sharing == model::Sharing::dont_lend) {
      Diagnostic& d = report(Code::lending_limit_without_lending, {source, p.key.span},
                             fmt::format("team `{}` lends nothing (`sharing = dont-lend`), so it cannot have a lending limit",
                                         team.name),
                             "contradicts `dont-lend`");
      d.help = "remove `lending-limit`, or use `sharing = lend-and-borrow` to lend part of the quota";
      return;
    }
    std::optional<int64_t> instances;
    GivenAmounts given{};
    std::map<model::Resource, const ast::Property*> given_at;
    const ast::Property* instances_at = nullptr;
    for (const ast::Property& item : p.value->block) {
      if (item.key.text == "instances") {
        instances = count_in_range(*item.value, source, "the instance count", 0, kMaxAmount);
        instances_at = &item;
      } else if (auto r = resource_of(item.key.text)) {
        given[model::index(*r)] = amount(item, *r, source);
        given_at[*r] = &item;
      }
    }
    const model::Resources limit = resolve_lending_limit(type, instances, given);
    // One error per property that lends more than the quota holds.
    std::vector<std::pair<const ast::Property*, model::Resource>> above;
    for (model::Resource r : model::kAllResources) {
      const size_t i = model::index(r);
      if (limit[i] == model::kUnlimited || limit[i] <= out.nominal[i]) continue;
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

  static std::string_view display_name(model::Resource r) {
    switch (r) {
      case model::Resource::gpu: return "GPUs";
      case model::Resource::neuron: return "Neuron devices";
      case model::Resource::vcpu: return "vCPUs";
      case model::Resource::memory: return "memory";
      case model::Resource::efa: return "EFA interfaces";
    }
    return "?";
  }

  static std::string display_amount(model::Resource r, model::Amount a) {
    return model::format_amount(r, a, model::language_notation(model::kMebibytesPerGibibyte));
  }

  bool accelerator_fits(const InstanceType& type, model::Resource r, const ast::Property& p, SourceId source) {
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

  // ------------------------------------------------------------------ rules

  ExprScope scope() const {
    ExprScope s;
    s.classes = &policy_.classes;
    for (const Team& t : policy_.teams) s.teams.push_back(t.name);
    s.instance_types = type_names();
    s.team_index = NameIndex(s.teams);
    s.type_index = NameIndex(s.instance_types);
    return s;
  }

  void check_rules() {
    const ExprScope names = scope();
    std::map<std::string, Location> seen;
    for (const auto& [rule, source] : rules_) {
      if (duplicate(seen, rule->name.text, {source, rule->name.span}, "rule")) continue;
      Rule out;
      out.name = rule->name.text;
      out.action = rule->action;
      out.where = {source, rule->name.span};
      out.condition_text = ast::expr_text(*rule->when);
      out.message_text = ast::string_text(rule->message);
      std::optional<TypedExpr> when = type_expression(*rule->when, names, source, diagnostics_);
      bool ok = when.has_value();
      if (when && when->type != model::ValueType::boolean) {
        Diagnostic& d = report(Code::condition_not_boolean, {source, when->span},
                               fmt::format("a rule's condition must be true or false, found {}", type_description(when->type)),
                               "not a condition");
        d.help = "compare it with something: `task.gpus > 4`";
        ok = false;
      }
      for (const ast::StringPart& part : rule->message.parts) {
        if (!part.expr) {
          out.message.push_back({part.text, std::nullopt});
          continue;
        }
        std::optional<TypedExpr> value = type_expression(*part.expr, names, source, diagnostics_);
        if (!value) {
          ok = false;
          continue;
        }
        out.message.push_back({"", std::move(value)});
      }
      if (!ok) continue;
      out.when = std::move(*when);
      if (auto constant = constant_value(out.when)) out.constant = *constant != 0;
      policy_.rules.push_back(std::move(out));
    }
  }

  // ------------------------------------------------------------------ tests

  void check_tests() {
    for (const auto& [test, source] : tests_) {
      Test out{test->name.plain(), {}, {source, test->name.span}};
      if (test->name.has_interpolation()) {
        report(Code::interpolation_not_allowed, {source, interpolation_span(test->name)},
               "`{...}` is only allowed in a rule's message", "interpolation")
            .help = "escape literal braces as `\\{` and `\\}`";
      }
      std::map<std::string, Location> submitted;
      int64_t clock = 0;
      for (const ast::Step& step : test->steps) {
        if (auto s = test_step(step, source, submitted, clock)) out.steps.push_back(std::move(*s));
      }
      policy_.tests.push_back(std::move(out));
    }
  }

  std::optional<TestStep> test_step(const ast::Step& step, SourceId source, std::map<std::string, Location>& submitted,
                                    int64_t& clock) {
    TestStep out;
    out.kind = step.kind;
    out.task = step.task.text;
    out.where = {source, step.span};
    switch (step.kind) {
      case ast::Step::Kind::submit:
        if (duplicate(submitted, step.task.text, {source, step.task.span}, "task")) return std::nullopt;
        submit(step, source, out);
        return out;
      case ast::Step::Kind::at: {
        const int64_t ms = step.time.micros / 1000;
        if (step.time.unit != ast::Unit::none || step.time.micros % 1000 != 0 || ms < clock) {
          report(Code::invalid_time, {source, step.time.span},
                 ms < clock ? "time moves backwards: `at` must not be earlier than the previous `at`"
                            : "`at` takes seconds, with at most three decimals",
                 "bad time");
          return std::nullopt;
        }
        clock = ms;
        out.time_ms = ms;
        return out;
      }
      case ast::Step::Kind::finish:
      case ast::Step::Kind::cancel:
      case ast::Step::Kind::expect: break;
    }
    if (!known_task(step.task, source, submitted)) return std::nullopt;
    if (step.kind == ast::Step::Kind::expect) expect(step, source, submitted, out);
    return out;
  }

  bool known_task(const ast::Name& task, SourceId source, const std::map<std::string, Location>& submitted) {
    if (submitted.count(task.text)) return true;
    std::vector<std::string> names;
    for (const auto& [name, where] : submitted) names.push_back(name);
    Diagnostic& d = report(Code::unknown_task, {source, task.span},
                           fmt::format("task `{}` is not submitted before this step", task.text), "unknown task");
    d.help = did_you_mean(task.text, names).value_or("submit it first: `submit " + task.text + " { team = ... }`");
    return false;
  }

  void submit(const ast::Step& step, SourceId source, TestStep& out) {
    bool has_team = false;
    for (const ast::Property& p : step.properties) {
      const ast::Value& v = *p.value;
      const std::string& key = p.key.text;
      if (key == "team" && v.kind == ast::Value::Kind::name) {
        has_team = true;
        out.team = v.name.text;
        if (!team_lookup().index.contains(out.team)) {
          const std::vector<std::string>& names = team_lookup().list;
          Diagnostic& d = report(Code::unknown_team, {source, v.span}, fmt::format("unknown team `{}`", out.team), "not a team");
          d.help = did_you_mean(out.team, names)
                       .value_or(names.empty() ? "the policy defines no teams"
                                               : names_help("teams", names));
        }
      } else if (key == "priority" && v.kind == ast::Value::Kind::name) {
        out.priority = v.name.text;
        if (std::none_of(policy_.classes.begin(), policy_.classes.end(),
                         [&](const PriorityClass& c) { return c.name == v.name.text; })) {
          unknown_class(v.name.text, {source, v.span});
        }
      } else if (key == "instance-type" && v.kind == ast::Value::Kind::name) {
        out.instance_type = v.name.text;
        resolve_type(v.name.text, {source, v.span});
      } else if (key == "instances") {
        out.instances = count_in_range(v, source, "the instance count", 0, kMaxAmount);
      } else if (key == "pods") {
        out.pods = count_in_range(v, source, "the pod count", 1, kMaxAmount);
      } else if (key == "duration") {
        if (auto seconds = count_in_range(v, source, "the duration", 0, 100'000'000)) out.duration_ms = *seconds * 1000;
      } else if (key == "labels") {
        for (const ast::MapEntry& e : v.map) {
          if (e.value->kind != ast::Value::Kind::string) continue;
          if (e.value->string.has_interpolation()) {
            report(Code::interpolation_not_allowed, {source, interpolation_span(e.value->string)},
                   "`{...}` is only allowed in a rule's message", "interpolation")
                .help = "escape literal braces as `\\{` and `\\}`";
          }
          out.labels.emplace_back(e.key.text, e.value->string.plain());
        }
      } else if (key == "per-pod") {
        for (const ast::Property& r : v.block) {
          if (auto res = resource_of(r.key.text)) out.amounts[model::index(*res)] = amount(r, *res, source);
        }
      } else if (auto r = resource_of(key)) {
        out.amounts[model::index(*r)] = amount(p, *r, source);
      }
    }
    if (!has_team) {
      Diagnostic& d = report(Code::missing_property, {source, step.task.span},
                             fmt::format("task `{}` has no `team`", step.task.text), "which team?");
      d.help = "add `team = NAME`";
    }
  }

  std::vector<std::pair<model::Resource, model::Amount>> resources(const std::vector<ast::Property>& block, SourceId source) {
    std::vector<std::pair<model::Resource, model::Amount>> out;
    for (const ast::Property& p : block) {
      if (auto r = resource_of(p.key.text)) {
        if (auto a = amount(p, *r, source)) out.emplace_back(*r, *a);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  void expect(const ast::Step& step, SourceId source, const std::map<std::string, Location>& submitted, TestStep& out) {
    using K = ast::ExpectClause::Kind;
    out.outcome = step.outcome.text;
    for (const ast::ExpectClause& c : step.clauses) {
      switch (c.kind) {
        case K::on:
          out.flavor = c.name.text;
          resolve_type(c.name.text, {source, c.name.span});
          break;
        case K::by:
          out.by = c.name.text;
          if (out.outcome == "rejected") {
            known_rule(c.name, source);
          } else {
            known_task(c.name, source, submitted);
          }
          break;
        case K::warned_by:
          out.warned_by.push_back(c.name.text);
          known_rule(c.name, source);
          break;
        case K::borrowing: out.borrowing = resources(c.resources, source); break;
        case K::short_of: out.short_of = resources(c.resources, source); break;
        case K::message:
          if (c.message.has_interpolation()) {
            report(Code::interpolation_not_allowed, {source, interpolation_span(c.message)},
                   "`{...}` is only allowed in a rule's message", "interpolation")
                .help = "write the exact text you expect; escape braces as `\\{` and `\\}`";
          }
          out.message = c.message.plain();
          break;
        case K::word: out.word = c.name.text; break;
      }
    }
  }

  void known_rule(const ast::Name& name, SourceId source) {
    const Names& rules = rule_lookup();
    if (rules.index.contains(name.text)) return;
    const std::vector<std::string>& names = rules.list;
    Diagnostic& d = report(Code::unknown_rule, {source, name.span}, fmt::format("unknown rule `{}`", name.text), "no such rule");
    d.help = did_you_mean(name.text, names).value_or(names.empty() ? "the policy has no rules"
                                                                   : names_help("rules", names));
  }

  const Program& program_;
  const CheckOptions& options_;
  Policy& policy_;
  Diagnostics& diagnostics_;
  std::vector<Located<ast::Catalog>> catalogs_;
  std::vector<Located<ast::Cluster>> clusters_;
  std::vector<Located<ast::Policy>> policies_;
  std::vector<Located<ast::Team>> teams_;
  std::vector<Located<ast::Rule>> rules_;
  std::vector<Located<ast::Test>> tests_;
  std::optional<Names> type_lookup_;
  std::pair<size_t, size_t> type_lookup_key_{};
  std::optional<Names> team_lookup_;
  std::optional<Names> rule_lookup_;
};

}  // namespace

const std::vector<InstanceType>& Policy::types() const {
  static const std::vector<InstanceType> none;
  if (!cluster) return none;
  return catalogs[cluster->catalog].types;
}

int64_t Policy::capacity_of(size_t type) const {
  if (!cluster) return 0;
  int64_t total = 0;
  for (const Capacity& c : cluster->capacity) {
    if (c.type == type) total += c.instances;
  }
  return total;
}

CheckResult check(const Program& program, const CheckOptions& options) {
  const SuggestionBudget suggestions;  // "did you mean" in bounded time, however many unknown names
  CheckResult result;
  Checker(program, options, result).run();
  program.add_import_chains(result.diagnostics);
  result.diagnostics.sort();
  return result;
}

}  // namespace gov::check
