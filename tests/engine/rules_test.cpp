// Admission rules (docs/semantics.md §5) with rules built by hand in the IR: deny rejects before
// quota and names the first matching deny rule; warn lets the task proceed and rides on its
// admission.
#include <catch2/catch.hpp>

#include "tests/engine/engine_test_support.hpp"

namespace gov::engine::test {
namespace {

using ir::Instr;
using ir::MessagePart;
using ir::Op;
using ir::ValueType;

Instr instr(Op op, ValueType type, int32_t a = -1, int32_t b = -1, int64_t imm = 0) {
  return Instr{op, type, a, b, imm};
}
MessagePart text(std::string s) {
  return MessagePart{MessagePart::Kind::text, std::move(s), -1, {}, -1};
}
MessagePart value(int32_t reg, ValueType type) {
  return MessagePart{MessagePart::Kind::value, {}, reg, type, -1};
}
MessagePart task_id() {
  return MessagePart{MessagePart::Kind::task_id, {}, -1, {}, -1};
}
int64_t team_stat(ir::TeamStat stat, ir::Resource r) {
  return static_cast<int64_t>(stat) * static_cast<int64_t>(ir::kResourceCount) +
         static_cast<int64_t>(ir::index(r));
}

ir::Module module_with_rules() {
  ir::Module m = workshop_module();
  m.strings = {"", "forbidden"};
  m.label_keys = {"project"};

  ir::Rule max_gpus;  // deny: task.gpus > 2
  max_gpus.name = "max-2-gpus";
  max_gpus.action = ir::RuleAction::deny;
  max_gpus.code = {
      instr(Op::task_field, ValueType::integer, -1, -1, static_cast<int64_t>(ir::TaskField::gpus)),
      instr(Op::constant, ValueType::integer, -1, -1, 2), instr(Op::gt, ValueType::boolean, 0, 1)};
  max_gpus.message = {text("at most 2 GPUs per task, got "), value(0, ValueType::integer)};

  ir::Rule project;  // warn: no project label
  project.name = "needs-project";
  project.action = ir::RuleAction::warn;
  project.code = {instr(Op::label_present, ValueType::boolean, -1, -1, 0),
                  instr(Op::logical_not, ValueType::boolean, 0)};
  project.message = {text("task "), task_id(), text(" has no project label")};

  ir::Rule borrows;  // warn: team used + task gpus > nominal
  borrows.name = "will-borrow";
  borrows.action = ir::RuleAction::warn;
  borrows.code = {
      instr(Op::team_stat, ValueType::integer, -1, -1,
            team_stat(ir::TeamStat::used, ir::Resource::gpu)),
      instr(Op::task_field, ValueType::integer, -1, -1, static_cast<int64_t>(ir::TaskField::gpus)),
      instr(Op::add, ValueType::integer, 0, 1),
      instr(Op::team_stat, ValueType::integer, -1, -1,
            team_stat(ir::TeamStat::nominal, ir::Resource::gpu)),
      instr(Op::gt, ValueType::boolean, 2, 3)};
  borrows.message = {text("team will hold "), value(2, ValueType::integer), text(" GPUs, nominal "),
                     value(3, ValueType::integer)};

  ir::Rule forbidden;  // deny: label project == "forbidden"
  forbidden.name = "forbidden-project";
  forbidden.action = ir::RuleAction::deny;
  forbidden.code = {instr(Op::label_value, ValueType::string, -1, -1, 0),
                    instr(Op::constant, ValueType::string, -1, -1, 1),
                    instr(Op::eq, ValueType::boolean, 0, 1)};
  forbidden.message = {text("project "), value(0, ValueType::string), text(" may not run here")};

  m.rules = {max_gpus, project, borrows, forbidden};
  for (ir::Rule& rule : m.rules) rule.condition_length = static_cast<uint32_t>(rule.code.size());
  return m;
}

}  // namespace

TEST_CASE("a deny rule rejects the task before quota, it is never queued", "[engine]") {
  Harness h(module_with_rules());
  auto d = h.submit(0, TaskBuilder("big", "team-a").gpus(3).label("project", "llm"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].outcome == Outcome::rejected);
  CHECK(d[0].rule == "max-2-gpus");
  CHECK(d[0].message == "at most 2 GPUs per task, got 3");
  // Every other matching rule is reported with it.
  REQUIRE(d[0].warnings.size() == 1);
  CHECK(d[0].warnings[0].rule == "will-borrow");
  CHECK(state_of(*h.engine, "big") == TaskState::rejected);
  CHECK(h.advance(10).empty());
}

TEST_CASE("the first matching deny rule in declared order wins", "[engine]") {
  Harness h(module_with_rules());
  auto d = h.submit(0, TaskBuilder("t", "team-a").gpus(3).label("project", "forbidden"));
  CHECK(d[0].rule == "max-2-gpus");
  REQUIRE(d[0].warnings.size() == 2);
  CHECK(d[0].warnings[1].rule == "forbidden-project");
  CHECK(d[0].warnings[1].message == "project forbidden may not run here");
  auto only_label = h.submit(1, TaskBuilder("u", "team-a").gpus(1).label("project", "forbidden"));
  CHECK(only_label[0].rule == "forbidden-project");
}

TEST_CASE("a warn rule lets the task proceed and its admission carries the warnings", "[engine]") {
  Harness h(module_with_rules());
  auto d = h.submit(0, TaskBuilder("w", "team-a").gpus(2));
  REQUIRE(d.size() == 1);
  CHECK(d[0].outcome == Outcome::admitted);
  REQUIRE(d[0].warnings.size() == 1);
  CHECK(d[0].warnings[0].rule == "needs-project");
  CHECK(d[0].warnings[0].message == "task w has no project label");
  // Rules see the live state of the team: a's 2 GPUs are in use now.
  auto second = h.submit(1, TaskBuilder("w2", "team-a").gpus(1).label("project", "llm"));
  REQUIRE(second.size() == 1);
  REQUIRE(second[0].warnings.size() == 1);
  CHECK(second[0].warnings[0].message == "team will hold 3 GPUs, nominal 2");
  CHECK(
      json_line(second[0]) ==
      R"({"at":0.001,"task":"w2","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":1},)"
      R"("borrowed":{"gpu":1},"warnings":[{"rule":"will-borrow","message":"team will hold 3 GPUs, nominal 2"}],)"
      R"("message":"Quota reserved in ClusterQueue team-a"})");
}

}  // namespace gov::engine::test
