// Checks rule code against the tables it indexes, so generated code never reads out of bounds.
#include "compiler/jit/validate.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "compiler/check/limits.hpp"
#include "compiler/ir/printer.hpp"

namespace gov::jit {

bool reads_a(ir::Op op) {
  switch (op) {
    case ir::Op::constant:
    case ir::Op::task_field:
    case ir::Op::team_stat:
    case ir::Op::cluster_stat:
    case ir::Op::label_value:
    case ir::Op::label_present:
      return false;
    case ir::Op::eq:
    case ir::Op::ne:
    case ir::Op::lt:
    case ir::Op::le:
    case ir::Op::gt:
    case ir::Op::ge:
    case ir::Op::logical_and:
    case ir::Op::logical_or:
    case ir::Op::logical_not:
    case ir::Op::add:
    case ir::Op::sub:
    case ir::Op::mul:
    case ir::Op::div:
    case ir::Op::neg:
    case ir::Op::in_set:
      return true;
  }
  return false;
}

bool reads_b(ir::Op op) {
  return reads_a(op) && op != ir::Op::logical_not && op != ir::Op::neg && op != ir::Op::in_set;
}

namespace {

/// How many entries the table `op`'s immediate indexes has, or -1 when imm is a value.
int64_t table_size(const ir::Module& module, ir::Op op) {
  switch (op) {
    case ir::Op::task_field:
      return ir::kTaskFieldCount;
    case ir::Op::team_stat:
      return ir::kTeamStatCount * ir::kResourceCount;
    case ir::Op::cluster_stat:
      return ir::kClusterStatCount * ir::kResourceCount;
    case ir::Op::label_value:
    case ir::Op::label_present:
      return static_cast<int64_t>(module.label_keys.size());
    case ir::Op::in_set:
      return static_cast<int64_t>(module.sets.size());
    case ir::Op::constant:  // imm is a value
    case ir::Op::eq:
    case ir::Op::ne:
    case ir::Op::lt:
    case ir::Op::le:
    case ir::Op::gt:
    case ir::Op::ge:
    case ir::Op::logical_and:
    case ir::Op::logical_or:
    case ir::Op::logical_not:
    case ir::Op::add:
    case ir::Op::sub:
    case ir::Op::mul:
    case ir::Op::div:
    case ir::Op::neg:
      return -1;
  }
  return -1;
}

std::optional<std::string> instruction_problem(const ir::Module& module, const ir::Instr& in,
                                               size_t index) {
  const auto defined = [index](int32_t reg) { return reg < static_cast<int64_t>(index); };
  if (reads_a(in.op) && !defined(in.a))
    return fmt::format("reads %{}, which is not defined before it", in.a);
  if (reads_b(in.op) && !defined(in.b))
    return fmt::format("reads %{}, which is not defined before it", in.b);
  const int64_t size = table_size(module, in.op);
  if (size >= 0 && (in.imm < 0 || in.imm >= size)) {
    return fmt::format("indexes #{} of a table with {} entries", in.imm, size);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> validate(const ir::Module& module) {
  // The quota tables of the generated code hold one cell per declared quota and find a team's
  // cell of an instance type by its flavor: one quota per flavor, every flavor in range.
  std::vector<size_t> quoted_by(module.flavors.size(), 0);  // the last team (+1) with a quota there
  for (size_t t = 0; t < module.teams.size(); ++t) {
    const ir::Team& team = module.teams[t];
    for (const ir::FlavorQuota& quota : team.quotas) {
      if (quota.flavor >= module.flavors.size()) {
        return Error{ErrorKind::invalid_module,
                     fmt::format("team `{}`: a quota for instance type #{} of a module with {}", team.name,
                                 quota.flavor, module.flavors.size())};
      }
      if (quoted_by[quota.flavor] == t + 1) {
        return Error{ErrorKind::invalid_module,
                     fmt::format("team `{}`: two quotas for instance type `{}`", team.name,
                                 module.flavors[quota.flavor].name)};
      }
      quoted_by[quota.flavor] = t + 1;
    }
  }
  // gov_decide keeps one byte per rule on its stack (lower_decide.cpp): a checked policy's bound.
  if (module.rules.size() > check::kMaxRules) {
    return Error{ErrorKind::invalid_module,
                 fmt::format("{} rules; gov compiles at most {}", module.rules.size(), check::kMaxRules)};
  }
  for (const ir::Rule& rule : module.rules) {
    if (rule.condition_length > rule.code.size()) {
      return Error{ErrorKind::invalid_module,
                   fmt::format("rule `{}`: condition of {} instructions in code of {}", rule.name,
                               rule.condition_length, rule.code.size())};
    }
    for (size_t i = 0; i < rule.code.size(); ++i) {
      if (auto problem = instruction_problem(module, rule.code[i], i)) {
        return Error{ErrorKind::invalid_module,
                     fmt::format("rule `{}`: instruction %{} ({}) {}", rule.name, i,
                                 ir::op_name(rule.code[i].op), *problem)};
      }
    }
    for (const ir::MessagePart& part : rule.message) {
      const bool defined = part.reg >= 0 && static_cast<size_t>(part.reg) < rule.code.size();
      if (part.kind == ir::MessagePart::Kind::value && !defined) {
        return Error{ErrorKind::invalid_module,
                     fmt::format("rule `{}`: its message reads %{}, which is not defined",
                                 rule.name, part.reg)};
      }
    }
  }
  return std::nullopt;
}

}  // namespace gov::jit
