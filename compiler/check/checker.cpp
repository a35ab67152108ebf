// The checker: its entry point, helpers, and the declarations of catalogs, the cluster and the
// cluster policy. Teams and quotas: teams.cpp; rules: rules.cpp; tests: tests.cpp.
#include "compiler/check/checker.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "compiler/ast/source_text.hpp"
#include "compiler/check/expressions.hpp"
#include "compiler/check/limits.hpp"
#include "compiler/support/name_index.hpp"
#include "compiler/check/quantities.hpp"
#include "compiler/check/quotas.hpp"
#include "compiler/check/schema.hpp"
#include "compiler/model/quantities.hpp"

namespace gov::check {

const ast::Property* find_property(const std::vector<ast::Property>& properties, std::string_view key) {
  for (const ast::Property& p : properties) {
    if (p.key.text == key) return &p;
  }
  return nullptr;
}

Span interpolation_span(const ast::StringLit& s) {
  for (const ast::StringPart& part : s.parts) {
    if (part.expr) return part.span;
  }
  return s.span;
}

void Checker::run() {
  collect();
  check_catalogs();
  check_cluster();
  check_policy_settings();
  check_teams();
  check_cohort();
  check_partition_profiles();
  check_rules();
  check_tests();
}

Diagnostic& Checker::report(Code code, Location where, std::string message, std::string label) {
  return diagnostics_.report(make_diagnostic(code, where, std::move(message), std::move(label)));
}

/// Reports a name defined twice; returns true when `name` was already in `seen`.
bool Checker::duplicate(std::map<std::string, Location>& seen, const std::string& name, Location where, std::string_view what) {
  auto [it, inserted] = seen.emplace(name, where);
  if (inserted) return false;
  Diagnostic& d = report(Code::duplicate_definition, where, fmt::format("{} `{}` is defined twice", what, name),
                         "defined again here");
  d.notes.push_back({it->second, "first defined here"});
  return true;
}

/// HyperPod's name rule for teams and classes: a DNS label of at most 41 characters.
void Checker::check_name_format(const ast::Name& name, SourceId source, std::string_view what) {
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

std::optional<int64_t> Checker::count_in_range(const ast::Value& v, SourceId source, std::string_view what, int64_t low,
                                               int64_t high, std::string_view unit) {
  if (v.kind != ast::Value::Kind::number) return std::nullopt;  // the schema reported the wrong kind
  const bool percent = v.number.unit == ast::Unit::percent;
  const bool percent_wanted = unit == "%";
  if (percent != percent_wanted && (percent || v.number.unit == ast::Unit::none)) {
    // A percentage where a count goes (`priority inference = 90%`); the schema reports a count
    // where a percentage goes, and other units are their callers' to report.
    if (percent) {
      Diagnostic& d = report(Code::wrong_value_kind, {source, v.span},
                             fmt::format("{} is a number, not a percentage: found `{}`", what, ast::number_text(v.number)),
                             "not a percentage");
      if (v.number.micros % 1'000'000 == 0) d.help = fmt::format("write `{}`", v.number.micros / 1'000'000);
    }
    return std::nullopt;
  }
  const std::optional<int64_t> n = percent ? percentage(v.number) : whole_number(v.number);
  if (!n) {
    // The right kind, but not whole (`borrow-limit = 0.25%`, `priority inference = 99.9`): an
    // error, never a default in its place. Other units are their callers' to report.
    if (percent || v.number.unit == ast::Unit::none) {
      report(Code::out_of_range, {source, v.span},
             fmt::format("{} must be a whole number{}, found `{}`", what, percent ? " of percent" : "",
                         ast::number_text(v.number)),
             "not a whole number");
    }
    return std::nullopt;
  }
  if (*n < low || *n > high) {
    Diagnostic& d = report(Code::out_of_range, {source, v.span},
                           fmt::format("{} is {}{}; HyperPod accepts {}{} to {}{}", what, *n, unit, low, unit, high, unit),
                           "out of range");
    (void)d;
    return std::nullopt;
  }
  return n;
}

std::optional<int64_t> Checker::fair_share_weight(const ast::Value& v, SourceId source) {
  if (v.kind != ast::Value::Kind::number || v.number.unit != ast::Unit::none) return std::nullopt;  // reported
  const int64_t micros = v.number.micros;
  if (micros < 0 || micros > model::kMaxFairShareWeight * model::kWeightScale) {
    report(Code::out_of_range, {source, v.span},
           fmt::format("the fair-share weight is {}; gov accepts 0 to {} (Kueue: any non-negative number)",
                       model::weight_text(micros), model::kMaxFairShareWeight),
           "out of range");
    return std::nullopt;
  }
  return micros;
}

/// The amount of a resource property in base units, range-checked.
std::optional<model::Amount> Checker::amount(const ast::Property& p, model::Resource r, SourceId source) {
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
        Diagnostic& d = report(Code::out_of_range, {source, v.span},
                               fmt::format("`{}` is not a whole number of MiB", ast::number_text(v.number)));
        // The nearest whole MiB below, exact: micros × MiB per unit / 10^6.
        const int64_t per_unit = v.number.unit == ast::Unit::tib ? 1024 * 1024 : v.number.unit == ast::Unit::gib ? 1024 : 1;
        if (v.number.micros >= 0 && v.number.micros <= std::numeric_limits<int64_t>::max() / per_unit) {
          d.help = fmt::format("memory is counted in whole MiB: write `{} MiB` (the nearest below)",
                               v.number.micros * per_unit / 1'000'000);
        }
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

/// The instance types names resolve against: the cluster's catalog, or every catalog
/// when the file has no cluster.
std::vector<std::string> Checker::type_names() const {
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

/// type_names() and its index; made again when the cluster or the catalogs change.
const Checker::Names& Checker::type_lookup() {
  const std::pair<size_t, size_t> key{policy_.cluster ? policy_.cluster->catalog + 1 : 0, policy_.catalogs.size()};
  if (!type_lookup_ || type_lookup_key_ != key) {
    type_lookup_.emplace(type_names());
    type_lookup_key_ = key;
  }
  return *type_lookup_;
}

const Checker::Names& Checker::team_lookup() {
  if (!team_lookup_ || team_lookup_->list.size() != policy_.teams.size()) {
    std::vector<std::string> names;
    for (const Team& t : policy_.teams) names.push_back(t.name);
    team_lookup_.emplace(std::move(names));
  }
  return *team_lookup_;
}

const Checker::Names& Checker::rule_lookup() {
  if (!rule_lookup_ || rule_lookup_->list.size() != rules_.size()) {
    std::vector<std::string> names;
    for (const auto& [rule, s] : rules_) names.push_back(rule->name.text);
    rule_lookup_.emplace(std::move(names));
  }
  return *rule_lookup_;
}

/// Index of an instance type in the cluster's catalog; reports E0203 when unknown.
/// Without a cluster, returns nullopt silently unless no catalog knows the name.
std::optional<size_t> Checker::resolve_type(const std::string& name, Location where) {
  const Names& types = type_lookup();
  const std::vector<std::string>& names = types.list;
  if (const std::optional<size_t> i = types.index.find(name)) return policy_.cluster ? i : std::nullopt;
  if (!policy_.cluster && policy_.catalogs.empty()) {  // nothing to resolve against: say so once
    // Once, and not beside a cluster whose catalog is unknown (E0206 says that already).
    if (!warned_unchecked_types_ && clusters_.empty()) {
      warned_unchecked_types_ = true;
      Diagnostic& d = report(Code::instance_types_not_checked, where,
                             fmt::format("no catalog is visible, so instance type `{}` is not checked", name),
                             "not checked");
      d.help = "import the catalog of the cluster's instance types (the shipped one: `import \"aws-ml\"` or "
               "`import \"../catalog/aws-ml.gov\"`)";
    }
    return std::nullopt;
  }
  Diagnostic& d = report(Code::unknown_instance_type, where, fmt::format("unknown instance type `{}`", name),
                         "not in the catalog");
  if (auto guess = did_you_mean(name, names)) {
    d.help = *guess;
  } else if (policy_.cluster) {
    d.help = fmt::format("the cluster's catalog `{}` has no such type", policy_.catalogs[policy_.cluster->catalog].name);
  }
  return std::nullopt;
}

void Checker::unknown_class(const std::string& name, Location where) {
  std::vector<std::string> names;
  for (const PriorityClass& c : policy_.classes) names.push_back(c.name);
  Diagnostic& d = report(Code::unknown_priority_class, where, fmt::format("unknown priority class `{}`", name),
                         "not a class of this policy");
  d.help = did_you_mean(name, names).value_or(
      names.empty() ? "the policy declares no classes: add `priority NAME = WEIGHT` to `policy`"
                    : names_help("classes", names));
}

// ------------------------------------------------------------------ catalogs, cluster, cluster policy

void Checker::collect() {
  for (const ProgramFile& file : program_.files) {
    for (const ast::Declaration& d : file.ast.declarations) {
      if (const auto* x = std::get_if<ast::Catalog>(&d)) catalogs_.push_back({x, file.source});
      if (const auto* x = std::get_if<ast::Cluster>(&d)) clusters_.push_back({x, file.source});
      if (const auto* x = std::get_if<ast::Policy>(&d)) policies_.push_back({x, file.source});
      if (const auto* x = std::get_if<ast::Team>(&d)) teams_.push_back({x, file.source});
      if (const auto* x = std::get_if<ast::Cohort>(&d)) cohorts_.push_back({x, file.source});
      if (const auto* x = std::get_if<ast::Rule>(&d)) rules_.push_back({x, file.source});
      if (const auto* x = std::get_if<ast::Test>(&d)) tests_.push_back({x, file.source});
    }
  }
}

namespace {

/// Resolves `catalog NAME extends BASE { ... }`: the base's types (resolved first, wherever it
/// is declared), each overridden in place by an own type of the same name, then the own types
/// that are new. Inherited types keep the location of their own declaration, so a diagnostic
/// about one names the base's file. Unknown bases and cycles are reported at the `extends`.
class CatalogResolver {
 public:
  CatalogResolver(Checker& checker, const std::vector<const ast::Catalog*>& decls, const std::vector<SourceId>& sources,
                  std::vector<Catalog>& out)
      : checker_(checker), decls_(decls), sources_(sources), out_(out), state_(decls.size(), State::unvisited) {
    for (size_t i = 0; i < decls_.size(); ++i) by_name_.emplace(decls_[i]->name.text, i);
  }

  void resolve(size_t i) {
    if (state_[i] != State::unvisited) return;
    state_[i] = State::in_progress;
    const ast::Catalog& decl = *decls_[i];
    const SourceId source = sources_[i];
    Catalog& catalog = out_[i];
    if (decl.base) {
      if (const std::optional<size_t> base = base_of(decl, source)) {
        resolve(*base);
        if (resolved_types_ + out_[*base].types.size() > kMaxResolvedInstanceTypes) {
          Diagnostic& d = checker_.report(Code::too_many, {source, decl.base->span},
                                          fmt::format("the catalogs hold more than {} instance types with the "
                                                      "types they extend", kMaxResolvedInstanceTypes),
                                          "one extension too many");
          d.help = "extend a catalog once and let the cluster use it, rather than extending it again and again";
        } else {
          catalog.types = out_[*base].types;
        }
      }
    }
    std::map<std::string, Location> own;
    for (const ast::Instance& instance : decl.instances) {
      if (checker_.duplicate(own, instance.type.text, {source, instance.type.span}, "instance type")) continue;
      InstanceType type = checker_.instance_type(instance, source);
      auto inherited = std::find_if(catalog.types.begin(), catalog.types.end(),
                                    [&](const InstanceType& t) { return t.name == type.name; });
      if (inherited != catalog.types.end()) *inherited = std::move(type);
      else catalog.types.push_back(std::move(type));
    }
    resolved_types_ += catalog.types.size();
    state_[i] = State::done;
  }

 private:
  enum class State : uint8_t { unvisited, in_progress, done };

  /// The index of `decl`'s base, or nullopt (reported) when it is unknown or closes a cycle.
  std::optional<size_t> base_of(const ast::Catalog& decl, SourceId source) {
    const ast::Name& base = *decl.base;
    const auto found = by_name_.find(base.text);
    if (found == by_name_.end()) {
      std::vector<std::string> names;
      for (const ast::Catalog* c : decls_) {
        if (c != &decl) names.push_back(c->name.text);
      }
      Diagnostic& d = checker_.report(Code::unknown_catalog, {source, base.span},
                                      fmt::format("catalog `{}` extends `{}`, which is not defined", decl.name.text,
                                                  base.text),
                                      "not defined");
      d.help = did_you_mean(base.text, names).value_or(
          names.empty() ? "import the catalog it extends: `import \"aws-ml\"` (the shipped catalog)"
                        : names_help("catalogs", names));
      return std::nullopt;
    }
    if (state_[found->second] == State::in_progress) {
      Diagnostic& d = checker_.report(Code::catalog_cycle, {source, base.span},
                                      fmt::format("catalog `{}` extends `{}`, which extends `{}` again", decl.name.text,
                                                  base.text, decl.name.text),
                                      "closes the cycle");
      d.notes.push_back({Location{sources_[found->second], decls_[found->second]->name.span},
                         fmt::format("`{}` is defined here", base.text)});
      d.help = "a catalog extends one that does not extend it back; copy the shared types into a third catalog";
      return std::nullopt;
    }
    return found->second;
  }

  Checker& checker_;
  const std::vector<const ast::Catalog*>& decls_;
  const std::vector<SourceId>& sources_;
  std::vector<Catalog>& out_;
  std::vector<State> state_;
  std::map<std::string, size_t> by_name_;
  size_t resolved_types_ = 0;
};

}  // namespace

void Checker::check_catalogs() {
  std::map<std::string, Location> seen;
  std::vector<const ast::Catalog*> decls;
  std::vector<SourceId> sources;
  for (const auto& [catalog, source] : catalogs_) {
    if (duplicate(seen, catalog->name.text, {source, catalog->name.span}, "catalog")) continue;
    decls.push_back(catalog);
    sources.push_back(source);
  }
  std::vector<Catalog> resolved;
  for (size_t i = 0; i < decls.size(); ++i) resolved.push_back({decls[i]->name.text, {}, {sources[i], decls[i]->span}});
  CatalogResolver resolver(*this, decls, sources, resolved);
  for (size_t i = 0; i < decls.size(); ++i) resolver.resolve(i);
  for (Catalog& catalog : resolved) policy_.catalogs.push_back(std::move(catalog));
}

InstanceType Checker::instance_type(const ast::Instance& instance, SourceId source) {
  InstanceType t;
  t.name = instance.type.text;
  t.where = {source, instance.type.span};
  assign_all(instance_table(), instance.properties, *this, source, t);
  for (std::string_view required : {resource_word(model::Resource::vcpu), resource_word(model::Resource::memory)}) {
    if (find_property(instance.properties, required)) continue;
    Diagnostic& d = report(Code::missing_property, {source, instance.type.span},
                           fmt::format("instance type `{}` has no `{}`", t.name, required), "incomplete");
    d.help = fmt::format("add `{} = ...` (the shipped catalog, policies/catalog/aws-ml.gov, has the figures)", required);
  }
  const ast::Property* gpus = find_property(instance.properties, resource_word(model::Resource::gpu));
  const ast::Property* neuron = find_property(instance.properties, resource_word(model::Resource::neuron));
  if (gpus && neuron) {
    Diagnostic& d = report(Code::conflicting_accelerators, {source, neuron->key.span},
                           fmt::format("instance type `{}` has both `gpus` and `neuron`", t.name), "second kind");
    d.notes.push_back({Location{source, gpus->key.span}, "`gpus` is set here"});
  }
  mig_profiles_need_gpus(instance, source, t);
  return t;
}

void Checker::check_cluster() {
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
  ClusterDraft properties;
  assign_all(cluster_table(), cluster->properties, *this, source, properties);
  const ast::Property* catalog = properties.catalog;
  if (!catalog) {
    report(Code::missing_property, {source, cluster->name.span},
           fmt::format("cluster `{}` has no `catalog`", cluster->name.text), "which catalog?")
        .help = "add `catalog = aws-ml` (the shipped catalog, imported with `import \"aws-ml\"`)";
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
        names.empty() ? "import a catalog first: `import \"aws-ml\"` (the shipped catalog)"
                      : names_help("catalogs", names));
    return;
  }
  Cluster out{cluster->name.text, static_cast<size_t>(it - policy_.catalogs.begin()), {}, {source, cluster->span},
              {source, cluster->name.span}};
  policy_.cluster = std::move(out);
  if (const ast::Property* capacity = properties.capacity) {
    for (const ast::MapEntry& entry : capacity->value->map) {
      auto type = resolve_type(entry.key.text, {source, entry.key.span});
      auto n = count_in_range(*entry.value, source, fmt::format("the capacity of `{}`", entry.key.text), 0, kMaxAmount);
      if (type && n) policy_.cluster->capacity.push_back({*type, *n, {source, entry.span}});
    }
  }
}

void Checker::missing_declaration(std::string_view what) {
  const SourceId entry = program_.files.empty() ? 0 : program_.files[0].source;
  Diagnostic& d = report(Code::missing_cluster_or_policy, {entry, {0, 0}},
                         fmt::format("this policy has no `{}` declaration", what), "");
  d.help = what == "cluster" ? "add `cluster NAME { catalog = aws-ml, capacity = { ml.g5.8xlarge: 4 } }`"
                             : "add `policy { ... }` with the cluster policy (task prioritization, idle compute, classes)";
}

void Checker::check_policy_settings() {
  if (policies_.size() > 1) {
    for (size_t i = 1; i < policies_.size(); ++i) {
      Diagnostic& d = report(Code::duplicate_cluster_or_policy, {policies_[i].source, {policies_[i].decl->span.begin, policies_[i].decl->span.begin + 6}},
                             "a cluster has one cluster policy; this is a second `policy`", "second policy");
      d.notes.push_back({Location{policies_[0].source, {policies_[0].decl->span.begin, policies_[0].decl->span.begin + 6}},
                         "the first policy is here"});
    }
  }
  if (policies_.empty()) {
    // Every setting has a default, as a HyperPod cluster without a scheduler config has: a
    // cluster without a `policy` block has `policy {}`'s settings (a reviewer's finding, session
    // 43: `gov lint` passed such a file, which `gov diff`, `apply` and `export` refused).
    if (policy_.cluster) {
      SettingsDraft settings;
      settings.where = policy_.cluster->where;
      policy_.settings = static_cast<const Settings&>(settings);
    }
    return;
  }
  const auto& [policy, source] = policies_[0];
  SettingsDraft settings;
  settings.where = {source, policy->span};
  std::map<std::string, Location> seen;
  for (const auto& item : policy->items) {
    if (const auto* c = std::get_if<ast::PriorityClass>(&item)) {
      priority_class(*c, source, seen);
      continue;
    }
    assign(policy_table(), std::get<ast::Property>(item), *this, source, settings);
  }
  const std::optional<std::pair<std::string, Location>>& default_class = settings.default_class_name;
  if (policy_.classes.size() > kMaxClasses) {
    const size_t extra = policy_.classes.size() - kMaxClasses;
    Diagnostic& d = report(Code::too_many_priority_classes, policy_.classes[kMaxClasses].where,
                           fmt::format("the policy has {} priority classes; HyperPod allows at most {}",
                                       policy_.classes.size(), kMaxClasses),
                           extra == 1 ? std::string("one too many") : fmt::format("the first of {} too many", extra));
    for (size_t i = kMaxClasses + 1; i < policy_.classes.size(); ++i) {
      d.notes.push_back({policy_.classes[i].where, fmt::format("class {} of {}", i + 1, policy_.classes.size())});
    }
    d.help = "merge classes, or remove the ones no team submits to";
  }
  if (default_class) {
    auto it = std::find_if(policy_.classes.begin(), policy_.classes.end(),
                           [&](const PriorityClass& c) { return c.name == default_class->first; });
    if (it == policy_.classes.end()) {
      unknown_class(default_class->first, default_class->second);
    } else {
      settings.default_class = static_cast<int32_t>(it - policy_.classes.begin());
      settings.default_class_at = default_class->second;
    }
  }
  policy_.settings = static_cast<const Settings&>(settings);
}

/// Kueue accepts three lists of fair-sharing preemption strategies: S2-a alone, S2-b alone, or
/// S2-a then S2-b (docs/kueue-reference.md §1, `parseStrategies`).
void Checker::fair_share_preemption(const Assignment& a, Settings& settings) {
  using S = model::FairShareStrategy;
  const ast::Value& v = a.value();
  const SourceId source = a.source;
  std::vector<S> strategies;
  for (const ast::Value& item : v.list) {
    if (item.kind != ast::Value::Kind::name) return;  // already reported
    const std::optional<int> strategy = a.spec.value_of(item.name.text);
    if (!strategy) return;  // an unknown choice, already reported
    strategies.push_back(static_cast<S>(*strategy));
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

void Checker::priority_class(const ast::PriorityClass& c, SourceId source, std::map<std::string, Location>& seen) {
  if (duplicate(seen, c.name.text, {source, c.name.span}, "priority class")) return;
  check_name_format(c.name, source, "a priority class");
  ast::Value weight;
  weight.kind = ast::Value::Kind::number;
  weight.number = c.weight;
  weight.span = c.weight.span;
  auto w = count_in_range(weight, source, fmt::format("the weight of `{}`", c.name.text), 0, 100);
  if (!w && c.weight.unit != ast::Unit::none && c.weight.unit != ast::Unit::percent) {
    report(Code::out_of_range, {source, c.weight.span},
           fmt::format("a class weight is a whole number from 0 to 100, found `{}`", ast::number_text(c.weight)));
  }
  policy_.classes.push_back({c.name.text, static_cast<int32_t>(w.value_or(0)), {source, c.name.span}});
}

const std::vector<InstanceType>& Policy::types() const {
  static const std::vector<InstanceType> none;
  if (!cluster) return none;
  return catalogs[cluster->catalog].types;
}

double InstanceType::instances_holding(const model::Resources& amounts) const {
  double most = 0;
  for (size_t r = 0; r < model::kResourceCount; ++r) {
    if (per_instance[r] > 0) most = std::max(most, static_cast<double>(amounts[r]) / static_cast<double>(per_instance[r]));
  }
  return most;
}

const MigProfile* InstanceType::mig_profile(std::string_view profile) const {
  for (const MigProfile& p : mig_profiles) {
    if (p.name == profile) return &p;
  }
  return nullptr;
}

std::string Team::borrow_limit_text() const {
  return borrow_limit_unlimited ? std::string("unlimited") : fmt::format("{}%", borrow_limit_percent);
}

const PartitionQuota* Quota::partition(std::string_view profile) const {
  for (const PartitionQuota& p : partitions) {
    if (p.profile == profile) return &p;
  }
  return nullptr;
}

std::vector<std::string> Policy::partition_profiles() const {
  std::vector<std::string> out;
  for (const Team& team : teams) {
    for (const Quota& quota : team.quotas) {
      for (const PartitionQuota& p : quota.partitions) {
        if (std::find(out.begin(), out.end(), p.profile) == out.end()) out.push_back(p.profile);
      }
    }
  }
  return out;
}

int64_t Policy::capacity_of(size_t type) const {
  if (!cluster) return 0;
  int64_t total = 0;
  for (const Capacity& c : cluster->capacity) {
    if (c.type == type) total += c.instances;
  }
  return total;
}

namespace {

/// Where a declaration of a program is: its file's source and its first byte.
using DeclarationKey = std::pair<SourceId, uint32_t>;

/// The declaration of `file` that holds `offset`, if any: declarations are in source order and
/// do not overlap, so a binary search finds it (a file may have tens of thousands of them, each
/// with a shape error).
std::optional<DeclarationKey> declaration_at(const ProgramFile& file, uint32_t offset) {
  const std::vector<ast::Declaration>& declarations = file.ast.declarations;
  auto after = std::upper_bound(declarations.begin(), declarations.end(), offset,
                                [](uint32_t o, const ast::Declaration& d) { return o < ast::span_of(d).begin; });
  if (after == declarations.begin()) return std::nullopt;
  const Span span = ast::span_of(*std::prev(after));
  if (offset >= span.end) return std::nullopt;
  return DeclarationKey{file.source, span.begin};
}

/// Drops the checker's findings inside a declaration with a shape error (schema.hpp): a value of
/// the wrong kind or an unknown choice reads as absent, so "has no team" or "lists no instance
/// type" there would be that error again in other words. They are reported once the shape is
/// fixed; findings in every other declaration are reported now.
void hold_back_cascades(const Program& program, Diagnostics& diagnostics) {
  std::map<SourceId, const ProgramFile*> files;
  for (const ProgramFile& file : program.files) files.emplace(file.source, &file);
  const auto declaration_of = [&](const Diagnostic& d) -> std::optional<DeclarationKey> {
    const auto file = files.find(d.primary.source);
    return file == files.end() ? std::nullopt : declaration_at(*file->second, d.primary.span.begin);
  };
  std::set<DeclarationKey> misshapen;
  for (const Diagnostic& d : program.diagnostics.items()) {
    if (d.severity != Severity::error || !is_shape_error(d.code)) continue;
    if (const std::optional<DeclarationKey> key = declaration_of(d)) misshapen.insert(*key);
  }
  if (misshapen.empty()) return;
  std::erase_if(diagnostics.items(), [&](const Diagnostic& d) {
    const std::optional<DeclarationKey> key = declaration_of(d);
    return key && misshapen.contains(*key);
  });
}

}  // namespace

CheckResult check(const Program& program, const CheckOptions& options) {
  const SuggestionBudget suggestions;  // "did you mean" in bounded time, however many unknown names
  CheckResult result;
  Checker(program, options, result).run();
  hold_back_cascades(program, result.diagnostics);
  program.add_import_chains(result.diagnostics);
  result.diagnostics.sort();
  return result;
}

}  // namespace gov::check
