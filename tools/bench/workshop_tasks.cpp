#include "tools/bench/workshop_tasks.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "runtime/trace/json.hpp"

namespace gov::bench {
namespace {

size_t field(ir::TaskField f) {
  return static_cast<size_t>(f);
}
size_t team_stat(ir::TeamStat s) {
  return static_cast<size_t>(s) * ir::kResourceCount + ir::index(ir::Resource::gpu);
}
size_t cluster_stat(ir::ClusterStat s) {
  return static_cast<size_t>(s) * ir::kResourceCount + ir::index(ir::Resource::gpu);
}

/// The id rules see for a string: its index among the module's constants, else kOtherString.
int64_t string_id(const ir::Module& module, std::string_view text) {
  for (size_t i = 0; i < module.strings.size(); ++i) {
    if (module.strings[i] == text) return static_cast<int64_t>(i);
  }
  return ir::kOtherString;
}

class TaskReader {
 public:
  TaskReader(const ir::Module& module, std::string& error) : module_(module), error_(error) {}

  bool read(const trace::JsonValue& task, size_t n, RuleTasks& out) {
    n_ = n;
    const std::string* id = text(task, "id");
    const std::string* team = text(task, "team");
    const std::string* priority = text(task, "priority");
    const std::string* type = text(task, "instance_type");
    if (id == nullptr || team == nullptr || priority == nullptr || type == nullptr) return false;
    ir::RuleInput input;
    const int32_t team_index = module_.team_index(*team);
    const int32_t class_index = module_.class_index(*priority);
    const int32_t flavor = type->empty() ? -1 : module_.flavor_index(*type);
    if (team_index < 0 || class_index < 0 || (flavor < 0 && !type->empty()))
      return fail(fmt::format("unknown team, class or instance type in `{}`", *id));
    input.task[field(ir::TaskField::team)] = team_index;
    input.task[field(ir::TaskField::priority)] = module_.priority_of(class_index);
    input.task[field(ir::TaskField::flavor)] = flavor;
    int64_t gpus = 0, vcpus = 0, memory = 0, instances = 0, pods = 0, nominal = 0, used = 0, available = 0;
    if (!number(task, "gpus", gpus) || !number(task, "vcpus", vcpus) || !number(task, "memory_mib", memory) ||
        !number(task, "instances", instances) || !number(task, "pods", pods) ||
        !number(task, "team_nominal_gpus", nominal) || !number(task, "team_used_gpus", used) ||
        !number(task, "cluster_available_gpus", available))
      return false;
    input.task[field(ir::TaskField::gpus)] = gpus;
    input.task[field(ir::TaskField::vcpus)] = vcpus * 1000;  // millicores
    input.task[field(ir::TaskField::memory)] = memory;       // MiB
    input.task[field(ir::TaskField::instances)] = instances;
    input.task[field(ir::TaskField::pods)] = pods;
    input.task[field(ir::TaskField::id)] = string_id(module_, *id);
    input.team[team_stat(ir::TeamStat::nominal)] = nominal;
    input.team[team_stat(ir::TeamStat::used)] = used;
    input.team[team_stat(ir::TeamStat::borrowed)] = std::max<int64_t>(0, used - nominal);
    input.cluster[cluster_stat(ir::ClusterStat::available)] = available;
    const trace::JsonValue* labels = task.find("labels");
    if (labels == nullptr || labels->kind != trace::JsonKind::object) return fail("`labels` is not an object");
    for (const std::string& key : module_.label_keys) {
      const trace::JsonValue* value = labels->find(key);
      if (value != nullptr && value->kind != trace::JsonKind::string) return fail("a label is not a string");
      out.label_ids.push_back(value == nullptr ? ir::kAbsentLabel : string_id(module_, value->text));
    }
    out.ids.push_back(*id);
    out.inputs.push_back(input);
    return true;
  }

 private:
  bool fail(const std::string& message) {
    error_ = fmt::format("task {}: {}", n_, message);
    return false;
  }
  const std::string* text(const trace::JsonValue& task, std::string_view key) {
    const trace::JsonValue* value = task.find(key);
    if (value != nullptr && value->kind == trace::JsonKind::string) return &value->text;
    fail(fmt::format("`{}` is missing or not a string", key));
    return nullptr;
  }
  bool number(const trace::JsonValue& task, std::string_view key, int64_t& out) {
    const trace::JsonValue* value = task.find(key);
    const std::optional<int64_t> n = value != nullptr ? value->as_int64() : std::nullopt;
    if (!n) return fail(fmt::format("`{}` is missing or not an integer", key));
    out = *n;
    return true;
  }

  const ir::Module& module_;
  std::string& error_;
  size_t n_ = 0;
};

}  // namespace

std::unique_ptr<RuleTasks> read_rule_tasks(const std::string& path, const ir::Module& module,
                                           std::string& error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot read " + path + " (run tools/gen-bench first)";
    return nullptr;
  }
  std::ostringstream text;
  text << file.rdbuf();
  const support::Expected<trace::JsonValue> json = trace::parse_json(text.str());
  if (!json.ok()) {
    error = path + ": " + json.error().message;
    return nullptr;
  }
  const trace::JsonValue* tasks = json->find("tasks");
  if (tasks == nullptr || tasks->kind != trace::JsonKind::array) {
    error = path + ": expected {\"tasks\": [...]}";
    return nullptr;
  }
  auto out = std::make_unique<RuleTasks>();
  TaskReader reader(module, error);
  for (size_t i = 0; i < tasks->items.size(); ++i) {
    if (!reader.read(tasks->items[i], i, *out)) {
      error = path + ": " + error;
      return nullptr;
    }
  }
  // Point every input at its labels now that the id vector no longer moves.
  const size_t keys = module.label_keys.size();
  for (size_t i = 0; i < out->inputs.size(); ++i)
    out->inputs[i].labels = keys == 0 ? nullptr : &out->label_ids[i * keys];
  return out;
}

uint64_t verdict_mask(const std::vector<uint8_t>& verdicts) {
  uint64_t mask = 0;
  for (size_t i = 0; i < verdicts.size() && i < 64; ++i) mask |= uint64_t{verdicts[i] != 0} << i;
  return mask;
}

}  // namespace gov::bench
