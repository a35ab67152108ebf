// The language surface's tables: every block's properties, in documentation order (the order
// "did you mean" and "X takes ..." list them in), with their setters.
#include "compiler/check/surface.hpp"

#include <algorithm>
#include <array>

#include "compiler/check/checker.hpp"
#include "compiler/check/quantities.hpp"
#include "compiler/model/arithmetic.hpp"

namespace gov::check {

bool PropertySpec::has_choice(std::string_view word) const { return value_of(word).has_value(); }

std::vector<std::string_view> PropertySpec::words() const {
  std::vector<std::string_view> out;
  for (const Choice& c : choices) out.push_back(c.word);
  return out;
}

std::optional<int> PropertySpec::value_of(std::string_view word) const {
  for (const Choice& c : choices) {
    if (c.word == word) return c.value;
  }
  return std::nullopt;
}

namespace {

using K = ValueKind;
using V = ast::Value::Kind;

constexpr std::array<std::pair<model::Resource, std::string_view>, model::kResourceCount> kResourceWords = {{
    {model::Resource::gpu, "gpus"},
    {model::Resource::neuron, "neuron"},
    {model::Resource::vcpu, "vcpus"},
    {model::Resource::memory, "memory"},
    {model::Resource::efa, "efa"},
}};

/// The choices of a setting whose words live with its enum (word_of), in documentation order.
template <typename E>
std::vector<Choice> choices_of(std::initializer_list<E> values) {
  std::vector<Choice> out;
  for (E v : values) out.push_back({word_of(v), static_cast<int>(v)});
  return out;
}

/// The shape of a resource amount: `gpus = 2`, `vcpus = 0.5`, `memory = 64 GiB`.
PropertySpec resource_spec(model::Resource r) {
  const ValueKind kind = r == model::Resource::vcpu ? K::vcpu_count : r == model::Resource::memory ? K::size : K::integer;
  return {resource_word(r), kind, {}, BlockKind::resources, r};
}

template <typename Target>
Property<Target> resource_row(model::Resource r, void (*set)(const Assignment&, Target&)) {
  return {resource_spec(r), set};
}

/// `Member = word`: a name among the row's choices. A word that is not a choice (reported
/// by the schema check) stores the default, as a missing property would.
template <typename Target, auto Member>
void set_choice(const Assignment& a, Target& target) {
  const ast::Value& v = a.value();
  if (v.kind != V::name) return;
  using E = std::remove_reference_t<decltype(target.*Member)>;
  const std::optional<int> value = a.spec.value_of(v.name.text);
  target.*Member = value ? static_cast<E>(*value) : Target{}.*Member;
}

template <typename Target, auto Member>
void set_flag(const Assignment& a, Target& target) {
  if (a.value().kind == V::boolean) target.*Member = a.value().boolean;
}

/// Keeps the first occurrence of a property whose block is read as a whole.
template <typename Target, auto Member>
void set_first(const Assignment& a, Target& target) {
  if (!(target.*Member)) target.*Member = &a.property;
}

/// The first of `when-can-borrow`, `when-can-preempt` and `flavor-preference`, for lint.
void note_fungibility(const Assignment& a, Team& team) {
  if (a.value().kind == V::name && !team.fungibility_at) team.fungibility_at = a.at(a.property.span);
}

}  // namespace

std::string_view resource_word(model::Resource resource) {
  for (const auto& [r, word] : kResourceWords) {
    if (r == resource) return word;
  }
  return "?";
}

std::optional<model::Resource> resource_of(std::string_view key) {
  for (const auto& [r, word] : kResourceWords) {
    if (word == key) return r;
  }
  return std::nullopt;
}

// ------------------------------------------------------------------ catalog and cluster

const Table<InstanceType>& instance_table() {
  static const auto per_instance = [](const Assignment& a, InstanceType& t) {
    const model::Resource r = *a.spec.resource;
    t.per_instance[model::index(r)] = a.checker.amount(a.property, r, a.source).value_or(0);
  };
  static const Table<InstanceType> table = {
      {{"accelerator", K::name},
       [](const Assignment& a, InstanceType& t) {
         if (a.value().kind == V::name) t.accelerator = a.value().name.text;
       }},
      resource_row<InstanceType>(model::Resource::gpu, per_instance),
      resource_row<InstanceType>(model::Resource::neuron, per_instance),
      {{"accelerator-memory", K::size},
       [](const Assignment& a, InstanceType& t) {
         if (a.value().kind == V::number) t.accelerator_memory = mebibytes(a.value().number).value_or(0);
       }},
      resource_row<InstanceType>(model::Resource::vcpu, per_instance),
      resource_row<InstanceType>(model::Resource::memory, per_instance),
      resource_row<InstanceType>(model::Resource::efa, per_instance),
      {{"hyperpod", K::boolean}, set_flag<InstanceType, &InstanceType::hyperpod>},
      {{"mig-profiles", K::profile_map},
       [](const Assignment& a, InstanceType& t) {
         if (a.value().kind == V::map) a.checker.mig_profiles(a, t);
       }},
  };
  return table;
}

const Table<ClusterDraft>& cluster_table() {
  static const Table<ClusterDraft> table = {
      {{"catalog", K::name}, set_first<ClusterDraft, &ClusterDraft::catalog>},
      {{"capacity", K::capacity_map}, set_first<ClusterDraft, &ClusterDraft::capacity>},
  };
  return table;
}

// ------------------------------------------------------------------ cluster policy

const Table<SettingsDraft>& policy_table() {
  static const Table<SettingsDraft> table = {
      {{"task-prioritization", K::choice,
        {{"fcfs", static_cast<int>(Prioritization::fcfs)}, {"task-ranking", static_cast<int>(Prioritization::task_ranking)}}},
       set_choice<SettingsDraft, &SettingsDraft::prioritization>},
      {{"idle-compute", K::choice,
        {{"fcfs", static_cast<int>(IdleCompute::fcfs)}, {"fair-share", static_cast<int>(IdleCompute::fair_share)}}},
       set_choice<SettingsDraft, &SettingsDraft::idle_compute>},
      {{"idle-resource-sharing", K::boolean}, set_flag<SettingsDraft, &SettingsDraft::idle_resource_sharing>},
      {{"default-priority", K::name},
       [](const Assignment& a, SettingsDraft& s) {
         if (a.value().kind == V::name) s.default_class_name = {{a.value().name.text, a.at(a.value().span)}};
       }},
      {{"fair-share-preemption", K::choice_list,
        choices_of({model::FairShareStrategy::less_than_or_equal_to_final_share,
                    model::FairShareStrategy::less_than_initial_share})},
       [](const Assignment& a, SettingsDraft& s) {
         if (a.value().kind == V::list) a.checker.fair_share_preemption(a, s);
       }},
  };
  return table;
}

// ------------------------------------------------------------------ teams and quotas

const Table<Team>& team_table() {
  static const Table<Team> table = {
      {{"sharing", K::choice, choices_of({model::Sharing::lend_and_borrow, model::Sharing::lend, model::Sharing::dont_lend})},
       set_choice<Team, &Team::sharing>},
      // `unlimited` is Kueue's borrowingLimit left out (docs/language.md).
      {{"borrow-limit", K::percentage, {{"unlimited", 0}}},
       [](const Assignment& a, Team& t) {
         t.borrow_limit_given = true;
         if (a.value().kind == V::name) {
           t.borrow_limit_unlimited = a.spec.has_choice(a.value().name.text);
           if (t.borrow_limit_unlimited) t.borrow_limit_at = a.at(a.property.span);
           return;
         }
         if (a.value().kind == V::number) t.borrow_limit_at = a.at(a.property.span);
         t.borrow_limit_percent =
             static_cast<int32_t>(a.checker.count_in_range(a.value(), a.source, "the borrow limit", 0, 10000, "%").value_or(50));
       }},
      {{"preempt-team-tasks", K::choice,
        choices_of({model::WithinTeam::lower_priority, model::WithinTeam::lower_or_newer_equal_priority, model::WithinTeam::never})},
       [](const Assignment& a, Team& t) {
         set_choice<Team, &Team::preempt_team_tasks>(a, t);
         if (a.value().kind == V::name) t.preempt_team_tasks_at = a.at(a.value().span);
       }},
      {{"reclaim-within-cohort", K::choice,
        choices_of({model::ReclaimWithinCohort::any, model::ReclaimWithinCohort::lower_priority, model::ReclaimWithinCohort::never})},
       [](const Assignment& a, Team& t) {
         set_choice<Team, &Team::reclaim_within_cohort>(a, t);
         if (a.value().kind == V::name) t.reclaim_within_cohort_at = a.at(a.value().span);
       }},
      {{"borrow-within-cohort", K::choice_or_block,
        choices_of({model::BorrowWithinCohort::never, model::BorrowWithinCohort::lower_priority}),
        BlockKind::borrow_within_cohort},
       [](const Assignment& a, Team& t) { a.checker.borrow_within_cohort(a, t); }},
      {{"queueing", K::choice, choices_of({model::Queueing::best_effort_fifo, model::Queueing::strict_fifo})},
       [](const Assignment& a, Team& t) {
         set_choice<Team, &Team::queueing>(a, t);
         if (a.value().kind == V::name) t.queueing_at = a.at(a.value().span);
       }},
      {{"when-can-borrow", K::choice, choices_of({model::WhenCanBorrow::borrow, model::WhenCanBorrow::try_next_flavor})},
       [](const Assignment& a, Team& t) {
         set_choice<Team, &Team::when_can_borrow>(a, t);
         note_fungibility(a, t);
       }},
      {{"when-can-preempt", K::choice, choices_of({model::WhenCanPreempt::preempt, model::WhenCanPreempt::try_next_flavor})},
       [](const Assignment& a, Team& t) {
         set_choice<Team, &Team::when_can_preempt>(a, t);
         note_fungibility(a, t);
       }},
      {{"flavor-preference", K::choice,
        choices_of({model::FlavorPreference::borrowing_over_preemption, model::FlavorPreference::preemption_over_borrowing})},
       [](const Assignment& a, Team& t) {
         set_choice<Team, &Team::flavor_preference>(a, t);
         if (a.value().kind == V::name) t.flavor_preference_at = a.at(a.property.span);
         note_fungibility(a, t);
       }},
      // Kueue's fairSharing.weight: any decimal (HyperPod's whole 0–100 is lint's W0140).
      {{"fair-share-weight", K::decimal},
       [](const Assignment& a, Team& t) {
         t.fair_share_weight_given = true;
         if (a.value().kind != V::number) return;
         t.fair_share_weight_at = a.at(a.value().span);
         t.fair_share_weight_micros = a.checker.fair_share_weight(a.value(), a.source).value_or(0);
       }},
      {{"active", K::boolean}, set_flag<Team, &Team::active>},
      // Kueue's ClusterQueue `spec.cohort`: the cohort of a tree the team joins.
      {{"cohort", K::name},
       [](const Assignment& a, Team& t) {
         if (a.value().kind != V::name || t.cohort_at) return;
         t.cohort = a.value().name.text;
         t.cohort_at = a.at(a.value().span);
       }},
      {{"queues", K::string_list}, [](const Assignment& a, Team& t) { a.checker.team_kubernetes_names(a, t, false); }},
      {{"namespaces", K::string_list}, [](const Assignment& a, Team& t) { a.checker.team_kubernetes_names(a, t, true); }},
      // Kueue's resourceGroups (docs/language.md "Resource groups"), checked by check_resource_groups.
      {{"resource-groups", K::group_map, {}, BlockKind::resource_group},
       [](const Assignment& a, Team& t) {
         if (a.value().kind != V::map) return;
         for (const ast::MapEntry& entry : a.value().map) {
           if (entry.value == nullptr || entry.value->kind != V::block) continue;  // reported by the schema check
           ResourceGroup& group = t.groups.emplace_back();
           group.name = entry.key.text;
           group.where = a.at(entry.key.span);
           group.covers_at = group.where;
           ResourceGroupDraft draft{&group};
           assign_all(resource_group_table(), entry.value->block, a.checker, a.source, draft);
         }
       }},
  };
  return table;
}

const Table<Cohort>& cohort_table() {
  static const Table<Cohort> table = {
      // Kueue's Cohort `spec.parentName`.
      {{"parent", K::name},
       [](const Assignment& a, Cohort& c) {
         if (a.value().kind != V::name || c.parent_at) return;
         c.parent_name = a.value().name.text;
         c.parent_at = a.at(a.value().span);
       }},
      // Every quota's borrowingLimit, as a team's `borrow-limit`; Kueue's default is none.
      {{"borrow-limit", K::percentage, {{"unlimited", 0}}},
       [](const Assignment& a, Cohort& c) {
         c.borrow_limit_at = a.at(a.property.span);
         if (a.value().kind == V::name) {
           c.borrow_limit_unlimited = a.spec.has_choice(a.value().name.text);
           return;
         }
         if (a.value().kind != V::number) return;
         c.borrow_limit_unlimited = false;
         c.borrow_limit_percent =
             static_cast<int32_t>(a.checker.count_in_range(a.value(), a.source, "the borrow limit", 0, 10000, "%").value_or(0));
       }},
      // Kueue's Cohort `spec.fairSharing.weight`.
      {{"fair-share-weight", K::decimal},
       [](const Assignment& a, Cohort& c) {
         c.fair_share_weight_given = true;
         if (a.value().kind != V::number) return;
         c.fair_share_weight_at = a.at(a.value().span);
         c.fair_share_weight_micros = a.checker.fair_share_weight(a.value(), a.source).value_or(model::kWeightScale);
       }},
  };
  return table;
}

const Table<BorrowWithinCohortDraft>& borrow_within_cohort_table() {
  static const Table<BorrowWithinCohortDraft> table = {
      {{"policy", K::choice, choices_of({model::BorrowWithinCohort::never, model::BorrowWithinCohort::lower_priority})},
       set_first<BorrowWithinCohortDraft, &BorrowWithinCohortDraft::policy>},
      {{"max-priority-threshold", K::name}, set_first<BorrowWithinCohortDraft, &BorrowWithinCohortDraft::threshold>},
  };
  return table;
}

const Table<QuotaDraft>& quota_table() {
  static const auto given = [](const Assignment& a, QuotaDraft& q) {
    const model::Resource r = *a.spec.resource;
    if (!a.checker.accelerator_fits(*q.type, r, a.property, a.source)) return;
    q.given[model::index(r)] = a.checker.amount(a.property, r, a.source);
    q.given_spans[r] = a.property.span;
  };
  static const Table<QuotaDraft> table = {
      {{"instances", K::integer},
       [](const Assignment& a, QuotaDraft& q) {
         q.out->instances = a.checker.count_in_range(a.value(), a.source, "the instance count", 0, kMaxAmount);
       }},
      resource_row<QuotaDraft>(model::Resource::gpu, given),
      resource_row<QuotaDraft>(model::Resource::neuron, given),
      resource_row<QuotaDraft>(model::Resource::vcpu, given),
      resource_row<QuotaDraft>(model::Resource::memory, given),
      resource_row<QuotaDraft>(model::Resource::efa, given),
      {{"partitions", K::profile_map}, set_first<QuotaDraft, &QuotaDraft::partitions>},
      // HyperPod's AbsoluteBorrowLimits take the forms of a quota entry (Count, or amounts), and so
      // does `lending-limit`: `instances = N` is N instances' worth of every resource, amounts
      // set single resources (and override `instances`); the rest keep the team's percentage.
      // `borrow-limit = unlimited`: no limit in any resource or partition of the quota.
      {{"borrow-limit", K::resources, {{"unlimited", 0}}, BlockKind::borrow_amounts},
       [](const Assignment& a, QuotaDraft& q) {
         if (a.value().kind == V::name) {
           if (!a.spec.has_choice(a.value().name.text)) return;
           q.out->borrow_limit_unlimited = true;
           q.absolute.fill(model::kUnlimited);
           return;
         }
         LendingDraft limits;
         assign_all(borrow_amounts_table(), a.value().block, a.checker, a.source, limits);
         q.out->borrow_limit_instances = limits.instances;
         for (size_t r = 0; r < model::kResourceCount; ++r) {
           q.out->borrow_limit_given[r] = limits.given[r].has_value();
           if (const auto at = limits.given_at.find(model::kAllResources[r]); at != limits.given_at.end()) {
             q.out->borrow_limit_at[r] = Location{a.source, at->second->span};
           }
           if (limits.given[r]) q.absolute[r] = limits.given[r];
           else if (limits.instances) q.absolute[r] = model::checked_mul(*limits.instances, q.type->per_instance[r]);
         }
         q.borrow_instances = limits.instances;
         q.borrow_partitions = limits.partitions;
       }},
      {{"lending-limit", K::resources, {}, BlockKind::amounts},
       [](const Assignment& a, QuotaDraft& q) { q.lending = &a.property; }},
  };
  return table;
}

namespace {

/// The rows of a limit block: `instances`, the five resources, `partitions`. `unlimited_word`:
/// each resource also takes `unlimited` (a borrowing limit), stored as kUnlimited.
Table<LendingDraft> limit_rows(bool unlimited_word) {
  static const auto given = [](const Assignment& a, LendingDraft& l) {
    const model::Resource r = *a.spec.resource;
    if (a.value().kind == V::name) {
      if (!a.spec.has_choice(a.value().name.text)) return;  // reported by the schema check
      l.given[model::index(r)] = model::kUnlimited;
    } else {
      l.given[model::index(r)] = a.checker.amount(a.property, r, a.source);
    }
    l.given_at[r] = &a.property;
  };
  Table<LendingDraft> table = {
      {{"instances", K::integer},
       [](const Assignment& a, LendingDraft& l) {
         l.instances = a.checker.count_in_range(a.value(), a.source, "the instance count", 0, kMaxAmount);
         l.instances_at = &a.property;
       }},
  };
  for (model::Resource r : model::kAllResources) {
    Property<LendingDraft> row = resource_row<LendingDraft>(r, given);
    if (unlimited_word) row.spec.choices = {{"unlimited", 0}};
    table.push_back(std::move(row));
  }
  table.push_back({{"partitions", K::profile_map}, set_first<LendingDraft, &LendingDraft::partitions>});
  return table;
}

}  // namespace

const Table<LendingDraft>& amounts_table() {
  static const Table<LendingDraft> table = limit_rows(/*unlimited_word=*/false);
  return table;
}

const Table<LendingDraft>& borrow_amounts_table() {
  static const Table<LendingDraft> table = limit_rows(/*unlimited_word=*/true);
  return table;
}

const Table<ResourceAmounts>& resources_table() {
  static const auto set_amount = [](const Assignment& a, ResourceAmounts& out) {
    const model::Resource r = *a.spec.resource;
    out.emplace_back(r, a.checker.amount(a.property, r, a.source));
  };
  static const Table<ResourceAmounts> table = {
      resource_row<ResourceAmounts>(model::Resource::gpu, set_amount),
      resource_row<ResourceAmounts>(model::Resource::neuron, set_amount),
      resource_row<ResourceAmounts>(model::Resource::vcpu, set_amount),
      resource_row<ResourceAmounts>(model::Resource::memory, set_amount),
      resource_row<ResourceAmounts>(model::Resource::efa, set_amount),
      // GPU partitions carry a profile name, which these pairs cannot: the block's readers take
      // them with Checker::partition_amounts (a known property here, read there).
      {{"partitions", K::profile_map}, [](const Assignment&, ResourceAmounts&) {}},
  };
  return table;
}

// ------------------------------------------------------------------ tests

const Table<SubmitDraft>& submit_table() {
  static const auto set_amount = [](const Assignment& a, SubmitDraft& s) {
    const model::Resource r = *a.spec.resource;
    s.step->submitted.amounts[model::index(r)] = a.checker.amount(a.property, r, a.source);
  };
  static const Table<SubmitDraft> table = {
      {{"team", K::name},
       [](const Assignment& a, SubmitDraft& s) {
         if (a.value().kind != V::name) return;
         s.has_team = true;
         s.step->submitted.team = a.value().name.text;
         a.checker.known_team(a.value().name.text, a.at(a.value().span));
       }},
      {{"instance-type", K::name},
       [](const Assignment& a, SubmitDraft& s) {
         if (a.value().kind != V::name) return;
         s.step->submitted.instance_type = a.value().name.text;
         a.checker.resolve_type(a.value().name.text, a.at(a.value().span));
       }},
      {{"priority", K::name},
       [](const Assignment& a, SubmitDraft& s) {
         if (a.value().kind != V::name) return;
         s.step->submitted.priority = a.value().name.text;
         a.checker.known_class(a.value().name.text, a.at(a.value().span));
       }},
      {{"instances", K::integer},
       [](const Assignment& a, SubmitDraft& s) {
         s.step->submitted.instances = a.checker.count_in_range(a.value(), a.source, "the instance count", 0, kMaxAmount);
       }},
      resource_row<SubmitDraft>(model::Resource::gpu, set_amount),
      resource_row<SubmitDraft>(model::Resource::neuron, set_amount),
      resource_row<SubmitDraft>(model::Resource::vcpu, set_amount),
      resource_row<SubmitDraft>(model::Resource::memory, set_amount),
      resource_row<SubmitDraft>(model::Resource::efa, set_amount),
      {{"pods", K::integer},
       [](const Assignment& a, SubmitDraft& s) {
         s.step->submitted.pods = a.checker.count_in_range(a.value(), a.source, "the pod count", 1, kMaxAmount);
       }},
      {{"per-pod", K::resources},
       [](const Assignment& a, SubmitDraft& s) {
         ResourceAmounts per_pod;
         assign_all(resources_table(), a.value().block, a.checker, a.source, per_pod);
         for (const auto& [r, amount] : per_pod) s.step->submitted.amounts[model::index(r)] = amount;
         for (const ast::Property& p : a.value().block) {
           if (p.key.text == "partitions" && p.value) a.checker.partition_amounts(*p.value, a.source, s.step->submitted.partitions);
         }
       }},
      {{"partitions", K::profile_map},
       [](const Assignment& a, SubmitDraft& s) {
         a.checker.partition_amounts(a.value(), a.source, s.step->submitted.partitions);
       }},
      {{"pod-sets", K::pod_set_map, {}, BlockKind::pod_set},
       [](const Assignment& a, SubmitDraft& s) {
         if (a.value().kind != V::map) return;
         for (const ast::MapEntry& entry : a.value().map) {
           if (entry.value == nullptr || entry.value->kind != V::block) continue;  // reported by the schema check
           gov::PodSet& pod_set = s.step->submitted.pod_sets.emplace_back();
           pod_set.name = entry.key.text;
           PodSetDraft draft{&pod_set};
           assign_all(pod_set_table(), entry.value->block, a.checker, a.source, draft);
         }
       }},
      {{"labels", K::labels_map}, [](const Assignment& a, SubmitDraft& s) { a.checker.labels(a, *s.step); }},
      {{"duration", K::integer},
       [](const Assignment& a, SubmitDraft& s) {
         if (auto seconds = a.checker.count_in_range(a.value(), a.source, "the duration", 0, 100'000'000)) {
           s.step->submitted.duration = *seconds * 1000;
         }
       }},
  };
  return table;
}

const Table<PodSetDraft>& pod_set_table() {
  static const auto set_amount = [](const Assignment& a, PodSetDraft& d) {
    const model::Resource r = *a.spec.resource;
    d.pod_set->amounts[model::index(r)] = a.checker.amount(a.property, r, a.source);
  };
  static const Table<PodSetDraft> table = {
      {{"instance-type", K::name},
       [](const Assignment& a, PodSetDraft& d) {
         if (a.value().kind != V::name) return;
         d.pod_set->instance_type = a.value().name.text;
         a.checker.resolve_type(a.value().name.text, a.at(a.value().span));
       }},
      {{"pods", K::integer},
       [](const Assignment& a, PodSetDraft& d) {
         if (auto pods = a.checker.count_in_range(a.value(), a.source, "the pod count", 1, kMaxAmount)) d.pod_set->pods = *pods;
       }},
      {{"instances", K::integer},
       [](const Assignment& a, PodSetDraft& d) {
         d.pod_set->instances = a.checker.count_in_range(a.value(), a.source, "the instance count", 0, kMaxAmount);
       }},
      resource_row<PodSetDraft>(model::Resource::gpu, set_amount),
      resource_row<PodSetDraft>(model::Resource::neuron, set_amount),
      resource_row<PodSetDraft>(model::Resource::vcpu, set_amount),
      resource_row<PodSetDraft>(model::Resource::memory, set_amount),
      resource_row<PodSetDraft>(model::Resource::efa, set_amount),
      {{"partitions", K::profile_map},
       [](const Assignment& a, PodSetDraft& d) {
         a.checker.partition_amounts(a.value(), a.source, d.pod_set->partitions);
       }},
  };
  return table;
}

const Table<ResourceGroupDraft>& resource_group_table() {
  // The charged resources (EFA is never charged, so no group covers it).
  static const std::vector<Choice> resources = {
      {resource_word(model::Resource::gpu), static_cast<int>(model::Resource::gpu)},
      {resource_word(model::Resource::neuron), static_cast<int>(model::Resource::neuron)},
      {resource_word(model::Resource::vcpu), static_cast<int>(model::Resource::vcpu)},
      {resource_word(model::Resource::memory), static_cast<int>(model::Resource::memory)},
  };
  static const Table<ResourceGroupDraft> table = {
      {{"covers", K::choice_list, resources},
       [](const Assignment& a, ResourceGroupDraft& d) {
         if (a.value().kind != V::list) return;
         d.group->covers_at = a.at(a.value().span);
         for (const ast::Value& item : a.value().list) {
           if (item.kind != V::name) continue;
           if (const std::optional<int> value = a.spec.value_of(item.name.text))
             d.group->covers.push_back(static_cast<model::Resource>(*value));
         }
       }},
      {{"flavors", K::name_list},
       [](const Assignment& a, ResourceGroupDraft& d) {
         if (a.value().kind != V::list) return;
         for (const ast::Value& item : a.value().list) {
           if (item.kind == V::name) d.group->flavors.emplace_back(item.name.text, a.at(item.span));
         }
       }},
  };
  return table;
}

// ------------------------------------------------------------------ the schema check's view

namespace {

template <typename Target>
std::vector<const PropertySpec*> specs_of(const Table<Target>& table) {
  std::vector<const PropertySpec*> out;
  for (const Property<Target>& row : table) out.push_back(&row.spec);
  return out;
}

}  // namespace

const std::vector<const PropertySpec*>& block_schema(BlockKind kind) {
  static const std::vector<const PropertySpec*> instance = specs_of(instance_table());
  static const std::vector<const PropertySpec*> cluster = specs_of(cluster_table());
  static const std::vector<const PropertySpec*> policy = specs_of(policy_table());
  static const std::vector<const PropertySpec*> team = specs_of(team_table());
  static const std::vector<const PropertySpec*> quota = specs_of(quota_table());
  static const std::vector<const PropertySpec*> submit = specs_of(submit_table());
  static const std::vector<const PropertySpec*> resources = specs_of(resources_table());
  static const std::vector<const PropertySpec*> amounts = specs_of(amounts_table());
  static const std::vector<const PropertySpec*> borrow_amounts = specs_of(borrow_amounts_table());
  static const std::vector<const PropertySpec*> borrow_within_cohort = specs_of(borrow_within_cohort_table());
  static const std::vector<const PropertySpec*> pod_set = specs_of(pod_set_table());
  static const std::vector<const PropertySpec*> cohort = specs_of(cohort_table());
  static const std::vector<const PropertySpec*> resource_group = specs_of(resource_group_table());
  // A cohort without a parent borrows from and lends to no one: its quota has no limits.
  static const std::vector<const PropertySpec*> cohort_quota = [] {
    std::vector<const PropertySpec*> out;
    for (const PropertySpec* spec : specs_of(quota_table())) {
      if (spec->key != "borrow-limit" && spec->key != "lending-limit") out.push_back(spec);
    }
    return out;
  }();
  switch (kind) {
    case BlockKind::instance: return instance;
    case BlockKind::cluster: return cluster;
    case BlockKind::policy: return policy;
    case BlockKind::team: return team;
    case BlockKind::quota: return quota;
    case BlockKind::submit: return submit;
    case BlockKind::resources: return resources;
    case BlockKind::amounts: return amounts;
    case BlockKind::borrow_amounts: return borrow_amounts;
    case BlockKind::borrow_within_cohort: return borrow_within_cohort;
    case BlockKind::pod_set: return pod_set;
    case BlockKind::cohort: return cohort;
    case BlockKind::cohort_quota: return cohort_quota;
    case BlockKind::resource_group: return resource_group;
  }
  return resources;
}

// ------------------------------------------------------------------ words

namespace {

template <typename E>
std::string_view policy_word(std::string_view key, E value) {
  const PropertySpec& spec = find_row(policy_table(), key)->spec;
  for (const Choice& c : spec.choices) {
    if (c.value == static_cast<int>(value)) return c.word;
  }
  return "?";
}

}  // namespace

std::string_view word_of(Prioritization value) { return policy_word("task-prioritization", value); }
std::string_view word_of(IdleCompute value) { return policy_word("idle-compute", value); }
std::string_view word_of(model::Sharing value) { return model::sharing_name(value); }
std::string_view word_of(model::WithinTeam value) { return model::within_team_name(value); }
std::string_view word_of(model::ReclaimWithinCohort value) { return model::reclaim_name(value); }
std::string_view word_of(model::BorrowWithinCohort value) { return model::borrow_within_cohort_name(value); }
std::string_view word_of(model::Queueing value) { return model::queueing_name(value); }
std::string_view word_of(model::WhenCanBorrow value) { return model::when_can_borrow_name(value); }
std::string_view word_of(model::WhenCanPreempt value) { return model::when_can_preempt_name(value); }
std::string_view word_of(model::FlavorPreference value) { return model::flavor_preference_name(value); }
std::string_view word_of(model::FairShareStrategy value) { return model::fair_share_strategy_name(value); }

}  // namespace gov::check
