#include "compiler/interp/interpreter.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace gov::interp {
namespace {

using ir::Op;

/// Runs the first `n` instructions of `rule` into registers `r`; returns the last value.
int64_t run(const ir::Module& module, const ir::Rule& rule, const ir::RuleInput& input, int64_t* r, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const ir::Instr& in = rule.code[i];
    const int64_t a = in.a >= 0 ? r[in.a] : 0;
    const int64_t b = in.b >= 0 ? r[in.b] : 0;
    int64_t v = 0;
    switch (in.op) {
      case Op::constant: v = in.imm; break;
      case Op::task_field: v = input.task[static_cast<size_t>(in.imm)]; break;
      case Op::team_stat: v = input.team[static_cast<size_t>(in.imm)]; break;
      case Op::cluster_stat: v = input.cluster[static_cast<size_t>(in.imm)]; break;
      case Op::label_value: {
        const int64_t id = input.labels ? input.labels[in.imm] : ir::kAbsentLabel;
        v = id == ir::kAbsentLabel ? 0 : id;
        break;
      }
      case Op::label_present: v = input.labels && input.labels[in.imm] != ir::kAbsentLabel; break;
      case Op::eq: v = a == b; break;
      case Op::ne: v = a != b; break;
      case Op::lt: v = a < b; break;
      case Op::le: v = a <= b; break;
      case Op::gt: v = a > b; break;
      case Op::ge: v = a >= b; break;
      case Op::logical_and: v = (a != 0) && (b != 0); break;
      case Op::logical_or: v = (a != 0) || (b != 0); break;
      case Op::logical_not: v = a == 0; break;
      case Op::add: v = ir::checked_add(a, b); break;
      case Op::sub: v = ir::checked_sub(a, b); break;
      case Op::mul: v = ir::checked_mul(a, b); break;
      case Op::div: v = ir::checked_div(a, b); break;
      case Op::neg: v = ir::checked_neg(a); break;
      case Op::in_set: {
        const auto& set = module.sets[static_cast<size_t>(in.imm)];
        v = std::find(set.begin(), set.end(), a) != set.end();
        break;
      }
    }
    r[i] = v;
  }
  return n == 0 ? 0 : r[n - 1];
}

}  // namespace

void Interpreter::evaluate_rules(const ir::RuleInput& input, std::span<uint8_t> verdicts) const {
  // Registers live on the stack for small rules; large ones use a heap buffer.
  int64_t small[256];
  std::vector<int64_t> large;
  for (size_t i = 0; i < module_.rules.size(); ++i) {
    const ir::Rule& rule = module_.rules[i];
    int64_t* registers = small;
    if (rule.condition_length > std::size(small)) {
      large.resize(rule.condition_length);
      registers = large.data();
    }
    verdicts[i] = run(module_, rule, input, registers, rule.condition_length) != 0;
  }
}

std::vector<int64_t> Interpreter::registers(size_t rule, const ir::RuleInput& input) const {
  const ir::Rule& r_rule = module_.rules[rule];
  std::vector<int64_t> r(r_rule.code.size());
  run(module_, r_rule, input, r.data(), r_rule.code.size());
  return r;
}

void Interpreter::message_values(size_t rule, const ir::RuleInput& input,
                                 std::span<int64_t> values) const {
  if (rule >= module_.rules.size()) return;
  const ir::Rule& r_rule = module_.rules[rule];
  int64_t small[256];
  std::vector<int64_t> large;
  int64_t* registers = small;
  if (r_rule.code.size() > std::size(small)) {
    large.resize(r_rule.code.size());
    registers = large.data();
  }
  run(module_, r_rule, input, registers, r_rule.code.size());
  for (size_t p = 0; p < r_rule.message.size() && p < values.size(); ++p) {
    const ir::MessagePart& part = r_rule.message[p];
    const bool readable = part.reg >= 0 && static_cast<size_t>(part.reg) < r_rule.code.size();
    if (part.kind == ir::MessagePart::Kind::value && readable) values[p] = registers[part.reg];
  }
}

ir::DecideResult Interpreter::decide(const ir::DecideInput& in, std::span<uint8_t> verdicts) const {
  if (!ir::decide_input_in_range(module_, in)) {
    std::fill(verdicts.begin(), verdicts.end(), 0);
    return {};
  }
  ir::RuleInput input;
  std::copy_n(in.task, ir::kTaskFieldCount, input.task.begin());
  input.labels = in.labels;
  const auto team = static_cast<uint32_t>(in.task[static_cast<size_t>(ir::TaskField::team)]);
  const auto flavor = static_cast<int32_t>(in.task[static_cast<size_t>(ir::TaskField::flavor)]);
  ir::fill_figures(module_, quota_table_, in.usage, team, flavor, figure_slots_, input);
  evaluate_rules(input, verdicts);
  return ir::conclude(module_, quota_table_, in, verdicts);
}

bool Interpreter::matches(size_t rule, const ir::RuleInput& input) const {
  const ir::Rule& r_rule = module_.rules[rule];
  std::vector<int64_t> r(r_rule.condition_length);
  return run(module_, r_rule, input, r.data(), r_rule.condition_length) != 0;
}

std::string value_text(const ir::Module& module, ir::ValueType type, int64_t value) {
  switch (type) {
    case ir::ValueType::boolean: return value ? "true" : "false";
    case ir::ValueType::integer: return fmt::format("{}", value);
    case ir::ValueType::millicores:
      if (value % 1000 == 0) return fmt::format("{}", value / 1000);
      return fmt::format("{}m", value);
    case ir::ValueType::mebibytes:
      if (value % (1024 * 1024) == 0) return fmt::format("{} TiB", value / (1024 * 1024));
      if (value % 1024 == 0) return fmt::format("{} GiB", value / 1024);
      return fmt::format("{} MiB", value);
    case ir::ValueType::string:
      if (value >= 0 && static_cast<size_t>(value) < module.strings.size()) return module.strings[value];
      return "";
    case ir::ValueType::priority:
      for (const ir::PriorityClass& c : module.classes) {
        if (c.weight == value) return c.name;
      }
      return fmt::format("{}", value);
    case ir::ValueType::team:
      if (value >= 0 && static_cast<size_t>(value) < module.teams.size()) return module.teams[value].name;
      return "";
    case ir::ValueType::flavor:
      if (value >= 0 && static_cast<size_t>(value) < module.flavors.size()) return module.flavors[value].name;
      return "(any)";
  }
  return "";
}

namespace {

/// Appends pieces up to kMaxMessageBytes; the piece that would pass it is cut so that the text
/// and kTruncatedMarker fit, at a UTF-8 boundary, and everything after it is dropped.
class BoundedMessage {
 public:
  /// False once the message is full (the caller may stop rendering).
  bool append(std::string_view piece) {
    if (full_) return false;
    if (out_.size() + piece.size() <= kMaxMessageBytes) {
      out_ += piece;
      return true;
    }
    const size_t room = kMaxMessageBytes - kTruncatedMarker.size();
    // Up to 4 bytes past the cut, to see whether it falls inside a UTF-8 sequence; the piece
    // has them (it passes kMaxMessageBytes, which is more than the marker past the cut).
    out_.append(piece.substr(0, room + 4 > out_.size() ? room + 4 - out_.size() : 0));
    size_t cut = std::min(out_.size(), room);
    while (cut > 0 && (static_cast<unsigned char>(out_[cut]) & 0xC0) == 0x80) --cut;  // not inside a sequence
    out_.resize(cut);
    out_ += kTruncatedMarker;
    full_ = true;
    return false;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  bool full_ = false;
};

}  // namespace

std::string render_message(const ir::Module& module, size_t rule, std::span<const int64_t> values,
                           const std::vector<std::pair<std::string, std::string>>& labels, std::string_view task_id) {
  BoundedMessage out;
  const std::vector<ir::MessagePart>& message = module.rules[rule].message;
  for (size_t p = 0; p < message.size(); ++p) {
    const ir::MessagePart& part = message[p];
    bool more = true;
    switch (part.kind) {
      case ir::MessagePart::Kind::text: more = out.append(part.text); break;
      case ir::MessagePart::Kind::value:
        more = out.append(value_text(module, part.type, p < values.size() ? values[p] : 0));
        break;
      case ir::MessagePart::Kind::label: {
        const std::string& key = module.label_keys[static_cast<size_t>(part.label)];
        for (const auto& [k, v] : labels) {
          if (k == key) more = more && out.append(v);
        }
        break;
      }
      case ir::MessagePart::Kind::task_id: more = out.append(task_id); break;
    }
    if (!more) break;
  }
  return out.take();
}

}  // namespace gov::interp
