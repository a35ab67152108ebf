#include "tests/engine/engine_test_support.hpp"

#include <fmt/format.h>

namespace gov::engine::test {

ir::Resources amounts(ir::Amount gpu, ir::Amount neuron, ir::Amount vcpu, ir::Amount memory,
                      ir::Amount efa) {
  return {gpu, neuron, vcpu, memory, efa};
}

ir::Resources instances(const ir::Flavor& flavor, int64_t n) {
  ir::Resources out{};
  for (size_t i = 0; i < ir::kResourceCount; ++i) out[i] = flavor.per_instance[i] * n;
  return out;
}

ir::Resources unlimited() { return ir::unlimited_columns(); }

ir::Flavor make_flavor(std::string name, ir::Resources per_instance, int64_t capacity) {
  return ir::Flavor{std::move(name), per_instance, capacity};
}

ir::FlavorQuota make_quota(uint32_t flavor, ir::Resources nominal, ir::Resources borrowing_limit,
                           ir::Resources lending_limit) {
  ir::FlavorQuota quota;
  quota.flavor = flavor;
  quota.nominal = nominal;
  quota.borrowing_limit = borrowing_limit;
  quota.lending_limit = lending_limit;
  return quota;
}

ir::Team make_team(std::string name, std::vector<ir::FlavorQuota> quotas) {
  ir::Team team;
  team.name = std::move(name);
  team.quotas = std::move(quotas);
  return team;
}

ir::Module workshop_module() {
  ir::Module m;
  m.cluster = "workshop";
  m.strings = {""};
  m.flavors.push_back(make_flavor("ml.g5.8xlarge", amounts(1, 0, 32000, 131072, 1), 4));
  const ir::Resources nominal = instances(m.flavors[0], 2);
  const ir::Resources limit = amounts(1, 0, 32000, 131072, 1);
  for (const char* name : {"team-a", "team-b"}) {
    ir::Team team = make_team(name, {make_quota(0, nominal, limit)});
    team.within_team = ir::WithinTeam::lower_priority;
    team.fair_share_weight_micros = 0;
    m.teams.push_back(team);
  }
  m.classes = {{"inference", 90}, {"experimentation", 80}, {"training", 70}, {"fine-tuning", 50}};
  m.settings.rank_by_priority = true;
  m.settings.fair_sharing = true;
  return m;
}

ir::Module gpu_module(const std::vector<GpuTeam>& teams, bool fair_sharing) {
  ir::Module m;
  m.cluster = "gpus";
  m.strings = {""};
  ir::Amount capacity = 0;
  for (const GpuTeam& team : teams) capacity += team.nominal;
  m.flavors.push_back(make_flavor("gpu", gpus(1), capacity));
  for (const GpuTeam& spec : teams) {
    ir::Resources limit = unlimited();
    limit[ir::index(ir::Resource::gpu)] = spec.borrowing_limit;
    ir::Resources lending = unlimited();
    lending[ir::index(ir::Resource::gpu)] = spec.lending_limit;
    ir::Team team = make_team(spec.name, {make_quota(0, gpus(spec.nominal), limit, lending)});
    team.fair_share_weight_micros = int64_t{spec.weight} * model::kWeightScale;
    m.teams.push_back(team);
  }
  m.classes = {{"low", 10}, {"mid", 50}, {"high", 90}};
  m.settings.fair_sharing = fair_sharing;
  return m;
}

TaskBuilder::TaskBuilder(std::string id, std::string team) {
  spec.id = std::move(id);
  spec.team = std::move(team);
}
TaskBuilder& TaskBuilder::gpus(ir::Amount n) {
  spec.amounts[ir::index(ir::Resource::gpu)] = n;
  return *this;
}
TaskBuilder& TaskBuilder::vcpu_millis(ir::Amount n) {
  spec.amounts[ir::index(ir::Resource::vcpu)] = n;
  return *this;
}
TaskBuilder& TaskBuilder::memory_mib(ir::Amount n) {
  spec.amounts[ir::index(ir::Resource::memory)] = n;
  return *this;
}
TaskBuilder& TaskBuilder::efa(ir::Amount n) {
  spec.amounts[ir::index(ir::Resource::efa)] = n;
  return *this;
}
TaskBuilder& TaskBuilder::instances(int64_t n) {
  spec.instances = n;
  return *this;
}
TaskBuilder& TaskBuilder::pods(int64_t n) {
  spec.pods = n;
  return *this;
}
TaskBuilder& TaskBuilder::type(std::string instance_type) {
  spec.instance_type = std::move(instance_type);
  return *this;
}
TaskBuilder& TaskBuilder::priority(std::string name) {
  spec.priority = std::move(name);
  return *this;
}
TaskBuilder& TaskBuilder::duration(Time ms) {
  spec.duration = ms;
  return *this;
}
TaskBuilder& TaskBuilder::label(std::string key, std::string value) {
  spec.labels.emplace_back(std::move(key), std::move(value));
  return *this;
}

Harness::Harness(ir::Module m, EngineOptions options)
    : module(std::make_unique<ir::Module>(std::move(m))),
      interpreter(std::make_unique<interp::Interpreter>(*module)),
      engine(std::make_unique<Engine>(*module, *interpreter, options)) {}

std::vector<Decision> Harness::submit(Time at, gov::Task spec) {
  const Event event = Event::submit(std::move(spec));
  return engine->step(at, std::span<const Event>(&event, 1));
}

std::vector<Decision> Harness::submit_all(Time at, std::vector<gov::Task> specs) {
  std::vector<Event> events;
  for (gov::Task& spec : specs) events.push_back(Event::submit(std::move(spec)));
  return engine->step(at, events);
}

std::vector<Decision> Harness::finish(Time at, std::string id) {
  const Event event = Event::finish(std::move(id));
  return engine->step(at, std::span<const Event>(&event, 1));
}

std::vector<Decision> Harness::cancel(Time at, std::string id) {
  const Event event = Event::cancel(std::move(id));
  return engine->step(at, std::span<const Event>(&event, 1));
}

std::vector<Decision> Harness::advance(Time at) {
  return engine->advance(at);
}

namespace {

std::string number(ir::Amount value, ir::Amount per_unit) {
  if (value % per_unit == 0) return fmt::format("{}", value / per_unit);
  return fmt::format("{}", static_cast<double>(value) / static_cast<double>(per_unit));
}

std::string amount_json(ir::Resource r, ir::Amount value) {
  switch (r) {
    case ir::Resource::vcpu:
      return number(value, 1000);
    case ir::Resource::memory:
      return number(value, 1024);
    case ir::Resource::gpu:
    case ir::Resource::neuron:
    case ir::Resource::efa:
      return number(value, 1);
  }
  return "?";
}

std::string amounts_json(const ResourceAmounts& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += fmt::format("\"{}\":{}", ir::resource_key(values[i].resource),
                       amount_json(values[i].resource, values[i].amount));
  }
  return out + "}";
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string json_line(const Decision& d) {
  std::string out =
      fmt::format("{{\"at\":{},\"task\":{},\"outcome\":\"{}\",\"team\":{}", number(d.at, kSecond),
                  quoted(d.task), outcome_name(d.outcome), quoted(d.team));
  switch (d.outcome) {
    case Outcome::admitted:
      out += fmt::format(",\"flavor\":{},\"usage\":{},\"borrowed\":{}", quoted(d.flavor),
                         amounts_json(d.usage), amounts_json(d.borrowed));
      if (!d.warnings.empty()) {
        out += ",\"warnings\":[";
        for (size_t i = 0; i < d.warnings.size(); ++i) {
          if (i > 0) out += ",";
          out += fmt::format("{{\"rule\":{},\"message\":{}}}", quoted(d.warnings[i].rule),
                             quoted(d.warnings[i].message));
        }
        out += "]";
      }
      break;
    case Outcome::pending:
      out += fmt::format(",\"reason\":\"{}\"", reason_name(*d.reason));
      if (!d.short_of.empty()) out += fmt::format(",\"short\":{}", amounts_json(d.short_of));
      if (!d.maximum.empty()) out += fmt::format(",\"max\":{}", amounts_json(d.maximum));
      if (!d.victims.empty()) {
        out += ",\"victims\":[";
        for (size_t i = 0; i < d.victims.size(); ++i)
          out += (i > 0 ? "," : "") + quoted(d.victims[i]);
        out += "]";
      }
      break;
    case Outcome::preempted:
      out += fmt::format(",\"by\":{},\"kind\":\"{}\"", quoted(d.by), preemption_kind_name(d.kind.value_or(PreemptionKind::in_team)));
      break;
    case Outcome::rejected:
      out += fmt::format(",\"rule\":{}", quoted(d.rule));
      break;
    case Outcome::finished:
    case Outcome::cancelled:
      return out + "}";
    case Outcome::invalid:
      break;
  }
  return out + fmt::format(",\"message\":{}}}", quoted(d.message));
}

std::vector<std::string> json_lines(const std::vector<Decision>& decisions) {
  std::vector<std::string> out;
  for (const Decision& d : decisions) out.push_back(json_line(d));
  return out;
}

std::vector<std::string> ids_with(const std::vector<Decision>& decisions, Outcome outcome) {
  std::vector<std::string> out;
  for (const Decision& d : decisions) {
    if (d.outcome == outcome) out.push_back(d.task);
  }
  return out;
}

const Decision* last_for(const std::vector<Decision>& decisions, const std::string& task) {
  for (auto it = decisions.rbegin(); it != decisions.rend(); ++it) {
    if (it->task == task) return &*it;
  }
  return nullptr;
}

ir::Amount used(const Engine& engine, const std::string& team, const std::string& flavor,
                ir::Resource resource) {
  for (const UsageRow& row : engine.snapshot().usage) {
    if (row.team == team && row.flavor == flavor && row.resource == resource) return row.used;
  }
  return 0;
}

TaskState state_of(const Engine& engine, const std::string& id) {
  const Snapshot snapshot = engine.snapshot();
  for (auto it = snapshot.tasks.rbegin(); it != snapshot.tasks.rend(); ++it) {
    if (it->id == id) return it->state;
  }
  return TaskState::invalid;
}

}  // namespace gov::engine::test
