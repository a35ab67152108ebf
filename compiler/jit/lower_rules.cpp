// Lowers each rule's condition to straight-line SSA code inside `gov_rules`.
#include "compiler/jit/lower_rules.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/rule_index.hpp"
#include "compiler/jit/lower_decisions.hpp"
#include "compiler/jit/validate.hpp"

namespace gov::jit {
namespace {

// The generated code addresses RuleInput as { [11 x i64], [25 x i64], [15 x i64], ptr }.
static_assert(offsetof(ir::RuleInput, task) == 0);
static_assert(offsetof(ir::RuleInput, team) == ir::kTaskFieldCount * 8);
static_assert(offsetof(ir::RuleInput, cluster) ==
              (ir::kTaskFieldCount + ir::kTeamStatCount * ir::kResourceCount) * 8);
static_assert(
    offsetof(ir::RuleInput, labels) ==
    (ir::kTaskFieldCount + (ir::kTeamStatCount + ir::kClusterStatCount) * ir::kResourceCount) * 8);
static_assert(sizeof(int64_t*) == 8);

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

enum InputField : unsigned { kTask = 0, kTeam = 1, kCluster = 2, kLabels = 3 };

/// Sets up to this size become a switch; larger ones a binary search over a constant table.
constexpr size_t kMaxSwitchCases = 64;

/// Rules per function of generated code: gov_rules of a larger policy calls one internal
/// function per chunk of rules. A function's rules merge into one basic block, and LLVM's
/// code generator is superlinear in the size of a block: 10,000 rules in one function took
/// more than five minutes to compile; in chunks, compile time is linear in the rules.
constexpr size_t kRulesPerFunction = 256;

/// Runs of this many consecutive rules or more are concluded through a mask (run_of_rules):
/// its population count and count of trailing zeros cost about as much as eight rules' running
/// minimum, and shorter runs (the index's buckets) measured slower with it.
constexpr size_t kMaskRunMin = 8;

/// Policies with fewer rules evaluate every rule, index or not: at about a nanosecond a rule,
/// straight-line code with no branch to mispredict costs less than a dispatch that can
/// mispredict (~15 cycles per key), and the hot path's ten rules keep their code.
constexpr size_t kIndexedRulesMin = 16;

/// Emits the bodies of `gov_rules` (every condition) and `gov_messages` (one rule's message
/// values); registers of the rule being lowered are the values in `registers_`.
class RuleLowering {
 public:
  RuleLowering(const ir::Module& module, llvm::Module& out)
      : module_(module), out_(out), builder_(out.getContext()) {}

  /// `i64 gov.rules.indexed(const RuleInput* input, uint8_t* verdicts)` (kIndexedRulesSymbol):
  /// the verdicts of the rules the module's index says can match (every rule when it is not
  /// usable, or the policy is small), the others 0; returns the first matching deny rule (i32,
  /// -1 for none) in its low half and the number of matches in its high half.
  void indexed_function(llvm::Function& function);
  /// `void gov_rules(const RuleInput* input, uint8_t* verdicts)`: gov.rules.indexed.
  void rules_function(llvm::Function& function, llvm::Function& indexed);
  /// `void gov_messages(const RuleInput* input, uint64_t rule, int64_t* values)`: a switch on
  /// the rule; values[p] = the register message part p shows.
  void messages_function(llvm::Function& function);

 private:
  void start(llvm::Function& function) {
    function_ = &function;
    builder_.SetInsertPoint(llvm::BasicBlock::Create(out_.getContext(), "entry", &function));
    input_ = function.getArg(0);
  }
  /// The first matching deny rule (i32, -1 for none: compared unsigned, it is the largest)
  /// and the number of matches (i32) of the rules lowered so far.
  struct Matches {
    llvm::Value* deny;
    llvm::Value* count;
  };
  Matches no_matches() { return {builder_.getInt32(-1), builder_.getInt32(0)}; }
  Matches combine(Matches a, Matches b);
  llvm::Value* pack(Matches m);
  Matches unpack(llvm::Value* packed);
  /// Evaluates `rules` (ascending) into verdicts, counting their matches into `so_far`: inline,
  /// or through internal functions of kRulesPerFunction rules each for a long list.
  Matches rule_list(const std::vector<uint32_t>& rules, llvm::Value* verdicts, Matches so_far);
  /// Each dimension of the index: a switch on the key's value to the bucket's rules.
  Matches dispatch(const ir::RuleDimension& dimension, llvm::Value* verdicts, Matches so_far);
  /// Lowers code[0, count) of rule `index` into registers_.
  void registers(size_t index, size_t count);
  Matches rule(size_t index, llvm::Value* verdicts, Matches so_far);
  /// Lowers rule `index`'s condition and stores its verdict; returns the verdict (i1).
  llvm::Value* verdict(size_t index, llvm::Value* verdicts);
  /// rules[first, last) of a list, inline: runs of kMaskRunMin consecutive rules or more through
  /// run_of_rules, the rest one by one.
  Matches rules_inline(const std::vector<uint32_t>& rules, size_t first, size_t last,
                       llvm::Value* verdicts, Matches so_far);
  /// Rules first_rule .. first_rule + count - 1 (count <= 64): each verdict is a bit of a
  /// mask, and the count and the first deny are read off the mask once (a population count and
  /// a count of trailing zeros), which saves the running minimum's three or four instructions
  /// a rule on the hot path.
  Matches run_of_rules(size_t first_rule, size_t count, llvm::Value* verdicts, Matches so_far);
  /// The call of a shared rule's function (its verdict, i1).
  llvm::Value* shared_rule(size_t index);
  void message(size_t index, llvm::Value* values);

  llvm::Value* instruction(const ir::Instr& in);
  llvm::Value* input_field(InputField field, int64_t index);
  llvm::Value* label_id(int64_t index);
  llvm::Value* checked_add(llvm::Value* a, llvm::Value* b);
  llvm::Value* checked_sub(llvm::Value* a, llvm::Value* b);
  llvm::Value* checked_mul(llvm::Value* a, llvm::Value* b);
  llvm::Value* checked_div(llvm::Value* a, llvm::Value* b);
  llvm::Value* checked_neg(llvm::Value* a);
  llvm::Value* overflow_intrinsic(llvm::Intrinsic::ID id, llvm::Value* a, llvm::Value* b,
                                  llvm::Value** overflow);
  llvm::Value* in_set(llvm::Value* a, const std::vector<int64_t>& set);
  llvm::Value* in_sorted_table(llvm::Value* a, const std::vector<int64_t>& values);
  llvm::Value* operand(int32_t reg) {
    return reg >= 0 ? registers_[static_cast<size_t>(reg)] : constant(0);
  }
  llvm::Value* truth(llvm::Value* v) { return builder_.CreateICmpNE(v, constant(0)); }
  llvm::Value* widen(llvm::Value* bit) { return builder_.CreateZExt(bit, builder_.getInt64Ty()); }
  llvm::ConstantInt* constant(int64_t v) { return builder_.getInt64(static_cast<uint64_t>(v)); }
  llvm::StructType* input_type();
  llvm::GlobalVariable* absent_label();

  const ir::Module& module_;
  llvm::Module& out_;
  llvm::IRBuilder<> builder_;
  llvm::Function* function_ = nullptr;
  llvm::Value* input_ = nullptr;
  llvm::GlobalVariable* absent_label_ = nullptr;
  std::vector<llvm::Value*> registers_;
  size_t chunks_ = 0;
  /// Rules in more than one bucket of the index, each with its function once it is made.
  std::map<size_t, llvm::Function*> shared_functions_;
};

RuleLowering::Matches RuleLowering::combine(Matches a, Matches b) {
  return {builder_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, a.deny, b.deny), builder_.CreateAdd(a.count, b.count)};
}

llvm::Value* RuleLowering::pack(Matches m) {
  llvm::Type* i64 = builder_.getInt64Ty();
  return builder_.CreateOr(builder_.CreateZExt(m.deny, i64), builder_.CreateShl(builder_.CreateZExt(m.count, i64), 32));
}

RuleLowering::Matches RuleLowering::unpack(llvm::Value* packed) {
  llvm::Type* i32 = builder_.getInt32Ty();
  return {builder_.CreateTrunc(packed, i32), builder_.CreateTrunc(builder_.CreateLShr(packed, 32), i32)};
}

RuleLowering::Matches RuleLowering::rule_list(const std::vector<uint32_t>& rules, llvm::Value* verdicts,
                                              Matches so_far) {
  if (rules.size() <= kRulesPerFunction) return rules_inline(rules, 0, rules.size(), verdicts, so_far);
  llvm::Function* caller = function_;
  llvm::Value* caller_input = input_;
  llvm::BasicBlock* caller_block = builder_.GetInsertBlock();
  auto* type = llvm::FunctionType::get(builder_.getInt64Ty(), {builder_.getPtrTy(), builder_.getPtrTy()}, false);
  for (size_t first = 0; first < rules.size(); first += kRulesPerFunction) {
    auto* chunk = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                         "gov.rules.chunk." + std::to_string(chunks_++), out_);
    chunk->copyAttributesFrom(caller);
    chunk->setLinkage(llvm::GlobalValue::InternalLinkage);
    chunk->removeFnAttr(llvm::Attribute::AlwaysInline);
    chunk->addFnAttr(llvm::Attribute::NoInline);
    start(*chunk);
    const Matches matches = rules_inline(rules, first, std::min(rules.size(), first + kRulesPerFunction),
                                         chunk->getArg(1), no_matches());
    builder_.CreateRet(pack(matches));
    function_ = caller;
    input_ = caller_input;
    builder_.SetInsertPoint(caller_block);
    so_far = combine(so_far, unpack(builder_.CreateCall(chunk, {input_, verdicts})));
  }
  return so_far;
}

RuleLowering::Matches RuleLowering::dispatch(const ir::RuleDimension& dimension, llvm::Value* verdicts,
                                             Matches so_far) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Value* key = nullptr;
  if (dimension.key.source == ir::RuleKey::Source::task_field) {
    key = input_field(kTask, dimension.key.index);
  } else {  // as label_value reads it: absent is 0, the empty string
    llvm::Value* id = label_id(dimension.key.index);
    key = builder_.CreateSelect(builder_.CreateICmpEQ(id, constant(ir::kAbsentLabel)), constant(0), id);
  }
  llvm::BasicBlock* before = builder_.GetInsertBlock();
  llvm::BasicBlock* joined = llvm::BasicBlock::Create(context, "index.done", function_);
  llvm::SwitchInst* by_value =
      builder_.CreateSwitch(key, joined, static_cast<unsigned>(dimension.buckets.size()));
  std::vector<std::pair<Matches, llvm::BasicBlock*>> incoming{{so_far, before}};
  for (const ir::RuleBucket& bucket : dimension.buckets) {
    llvm::BasicBlock* block = llvm::BasicBlock::Create(context, "index.bucket", function_, joined);
    by_value->addCase(builder_.getInt64(static_cast<uint64_t>(bucket.value)), block);
    builder_.SetInsertPoint(block);
    const Matches after = rule_list(bucket.rules, verdicts, so_far);
    builder_.CreateBr(joined);
    incoming.emplace_back(after, builder_.GetInsertBlock());
  }
  builder_.SetInsertPoint(joined);
  llvm::PHINode* deny = builder_.CreatePHI(builder_.getInt32Ty(), static_cast<unsigned>(incoming.size()), "deny");
  llvm::PHINode* count = builder_.CreatePHI(builder_.getInt32Ty(), static_cast<unsigned>(incoming.size()), "matches");
  for (const auto& [matches, block] : incoming) {
    deny->addIncoming(matches.deny, block);
    count->addIncoming(matches.count, block);
  }
  return {deny, count};
}

// The index decides which rules are evaluated; every rule's verdict is stored (0 for those not
// evaluated), and the first deny is the smallest matching deny rule, so the order the lists are
// evaluated in changes nothing.
void RuleLowering::indexed_function(llvm::Function& function) {
  start(function);
  llvm::Value* verdicts = function.getArg(1);
  const size_t rules = module_.rules.size();
  const ir::RuleIndex* index = ir::usable_rule_index(module_);
  Matches matches = no_matches();
  if (index == nullptr || rules < kIndexedRulesMin) {
    std::vector<uint32_t> every(rules);
    for (size_t i = 0; i < rules; ++i) every[i] = static_cast<uint32_t>(i);
    matches = rule_list(every, verdicts, matches);
  } else {
    std::vector<size_t> buckets(rules, 0);
    for (const ir::RuleDimension& dimension : index->dimensions) {
      for (const ir::RuleBucket& bucket : dimension.buckets) {
        for (uint32_t r : bucket.rules) {
          if (++buckets[r] == 2) shared_functions_.emplace(r, nullptr);
        }
      }
    }
    builder_.CreateMemSet(verdicts, builder_.getInt8(0), rules, llvm::MaybeAlign(1));
    matches = rule_list(index->always, verdicts, matches);
    for (const ir::RuleDimension& dimension : index->dimensions) matches = dispatch(dimension, verdicts, matches);
  }
  builder_.CreateRet(pack(matches));
}

void RuleLowering::rules_function(llvm::Function& function, llvm::Function& indexed) {
  start(function);
  builder_.CreateCall(&indexed, {function.getArg(0), function.getArg(1)});
  builder_.CreateRetVoid();
}

void RuleLowering::messages_function(llvm::Function& function) {
  start(function);
  llvm::LLVMContext& context = out_.getContext();
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", &function);
  llvm::SwitchInst* dispatch = builder_.CreateSwitch(function.getArg(1), done);
  for (size_t i = 0; i < module_.rules.size(); ++i) {
    const std::vector<ir::MessagePart>& parts = module_.rules[i].message;
    const bool shows_values = std::any_of(parts.begin(), parts.end(), [](const ir::MessagePart& part) {
      return part.kind == ir::MessagePart::Kind::value;
    });
    if (!shows_values) continue;
    llvm::BasicBlock* block =
        llvm::BasicBlock::Create(context, "message" + std::to_string(i), &function, done);
    dispatch->addCase(builder_.getInt64(i), block);
    builder_.SetInsertPoint(block);
    message(i, function.getArg(2));
    builder_.CreateBr(done);
  }
  builder_.SetInsertPoint(done);
  builder_.CreateRetVoid();
}

void RuleLowering::registers(size_t index, size_t count) {
  const ir::Rule& rule = module_.rules[index];
  registers_.clear();
  for (size_t i = 0; i < count; ++i) {
    llvm::Value* value = instruction(rule.code[i]);
    value->setName("rule" + std::to_string(index) + ".r" + std::to_string(i));
    registers_.push_back(value);
  }
}

// A rule the index lists under several values of its key is compiled once, out of line, and
// called from each of its buckets, so that the code stays proportional to the rules.
llvm::Value* RuleLowering::shared_rule(size_t index) {
  llvm::Function*& function = shared_functions_[index];
  if (function == nullptr) {
    llvm::Function* caller = function_;
    llvm::Value* caller_input = input_;
    llvm::BasicBlock* caller_block = builder_.GetInsertBlock();
    auto* type = llvm::FunctionType::get(builder_.getInt1Ty(), {builder_.getPtrTy()}, false);
    function = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                      "gov.rule." + std::to_string(index), out_);
    // The caller's function attributes (target CPU and features, nounwind); not its parameters'.
    function->addFnAttrs(llvm::AttrBuilder(out_.getContext(), caller->getAttributes().getFnAttrs()));
    function->removeFnAttr(llvm::Attribute::AlwaysInline);
    function->addFnAttr(llvm::Attribute::NoInline);
    function->addParamAttr(0, llvm::Attribute::NoAlias);
    function->addParamAttr(0, llvm::Attribute::NoCapture);
    function->addParamAttr(0, llvm::Attribute::ReadOnly);
    start(*function);
    registers(index, module_.rules[index].condition_length);
    builder_.CreateRet(registers_.empty() ? builder_.getFalse() : truth(registers_.back()));
    function_ = caller;
    input_ = caller_input;
    builder_.SetInsertPoint(caller_block);
  }
  return builder_.CreateCall(function, {input_});
}

llvm::Value* RuleLowering::verdict(size_t index, llvm::Value* verdicts) {
  llvm::Value* matched = nullptr;
  if (shared_functions_.count(index) != 0) {
    matched = shared_rule(index);
  } else {
    registers(index, module_.rules[index].condition_length);
    matched = registers_.empty() ? builder_.getFalse() : truth(registers_.back());
  }
  builder_.CreateStore(builder_.CreateZExt(matched, builder_.getInt8Ty()),
                       builder_.CreateConstGEP1_64(builder_.getInt8Ty(), verdicts, index));
  return matched;
}

RuleLowering::Matches RuleLowering::rules_inline(const std::vector<uint32_t>& rules, size_t first,
                                                 size_t last, llvm::Value* verdicts, Matches so_far) {
  constexpr size_t kMaskBits = 64;
  while (first < last) {
    size_t run = 1;
    while (first + run < last && run < kMaskBits && rules[first + run] == rules[first] + run) ++run;
    if (run < kMaskRunMin) {
      for (size_t end = first + run; first < end; ++first) so_far = rule(rules[first], verdicts, so_far);
    } else {
      so_far = run_of_rules(rules[first], run, verdicts, so_far);
      first += run;
    }
  }
  return so_far;
}

RuleLowering::Matches RuleLowering::run_of_rules(size_t first_rule, size_t count, llvm::Value* verdicts,
                                                 Matches so_far) {
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Value* mask = builder_.getInt64(0);
  uint64_t deny_bits = 0;
  for (size_t bit = 0; bit < count; ++bit) {
    llvm::Value* matched = verdict(first_rule + bit, verdicts);
    mask = builder_.CreateOr(mask, builder_.CreateShl(builder_.CreateZExt(matched, i64), bit));
    if (module_.rules[first_rule + bit].action == ir::RuleAction::deny) deny_bits |= uint64_t{1} << bit;
  }
  llvm::Value* in_run = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, mask);
  Matches out{so_far.deny, builder_.CreateAdd(so_far.count, builder_.CreateTrunc(in_run, i32))};
  if (deny_bits != 0) {
    llvm::Value* denies = builder_.CreateAnd(mask, builder_.getInt64(deny_bits));
    // cttz of 0 is 64 (its flag says "defined at zero"); the select turns "none" into -1.
    llvm::Value* lowest =
        builder_.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, denies, builder_.getFalse());
    llvm::Value* lowest_rule = builder_.CreateAdd(builder_.CreateTrunc(lowest, i32),
                                                  builder_.getInt32(static_cast<uint32_t>(first_rule)));
    llvm::Value* none = builder_.CreateICmpEQ(denies, builder_.getInt64(0));
    llvm::Value* first_deny = builder_.CreateSelect(none, builder_.getInt32(-1), lowest_rule);
    out.deny = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, so_far.deny, first_deny);
  }
  return out;
}

RuleLowering::Matches RuleLowering::rule(size_t index, llvm::Value* verdicts, Matches so_far) {
  llvm::Value* matched = verdict(index, verdicts);
  Matches out{so_far.deny, builder_.CreateAdd(so_far.count, builder_.CreateZExt(matched, builder_.getInt32Ty()))};
  if (module_.rules[index].action == ir::RuleAction::deny) {
    llvm::Value* deny = builder_.CreateSelect(matched, builder_.getInt32(static_cast<uint32_t>(index)), builder_.getInt32(-1));
    out.deny = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, so_far.deny, deny);
  }
  return out;
}

// Registers up to the last one a message part shows (validate() checked they exist).
void RuleLowering::message(size_t index, llvm::Value* values) {
  const ir::Rule& rule = module_.rules[index];
  size_t needed = 0;
  for (const ir::MessagePart& part : rule.message) {
    if (part.kind == ir::MessagePart::Kind::value)
      needed = std::max(needed, static_cast<size_t>(part.reg) + 1);
  }
  registers(index, needed);
  for (size_t p = 0; p < rule.message.size(); ++p) {
    const ir::MessagePart& part = rule.message[p];
    if (part.kind != ir::MessagePart::Kind::value) continue;
    builder_.CreateStore(registers_[static_cast<size_t>(part.reg)],
                         builder_.CreateConstGEP1_64(builder_.getInt64Ty(), values, p));
  }
}

llvm::Value* RuleLowering::instruction(const ir::Instr& in) {
  llvm::Value* a = reads_a(in.op) ? operand(in.a) : nullptr;
  llvm::Value* b = reads_b(in.op) ? operand(in.b) : nullptr;
  switch (in.op) {
    case ir::Op::constant:
      return constant(in.imm);
    case ir::Op::task_field:
      return input_field(kTask, in.imm);
    case ir::Op::team_stat:
      return input_field(kTeam, in.imm);
    case ir::Op::cluster_stat:
      return input_field(kCluster, in.imm);
    case ir::Op::label_value: {
      llvm::Value* id = label_id(in.imm);
      return builder_.CreateSelect(builder_.CreateICmpEQ(id, constant(ir::kAbsentLabel)),
                                   constant(0), id);
    }
    case ir::Op::label_present:
      return widen(builder_.CreateICmpNE(label_id(in.imm), constant(ir::kAbsentLabel)));
    case ir::Op::eq:
      return widen(builder_.CreateICmpEQ(a, b));
    case ir::Op::ne:
      return widen(builder_.CreateICmpNE(a, b));
    case ir::Op::lt:
      return widen(builder_.CreateICmpSLT(a, b));
    case ir::Op::le:
      return widen(builder_.CreateICmpSLE(a, b));
    case ir::Op::gt:
      return widen(builder_.CreateICmpSGT(a, b));
    case ir::Op::ge:
      return widen(builder_.CreateICmpSGE(a, b));
    case ir::Op::logical_and:
      return widen(builder_.CreateAnd(truth(a), truth(b)));
    case ir::Op::logical_or:
      return widen(builder_.CreateOr(truth(a), truth(b)));
    case ir::Op::logical_not:
      return widen(builder_.CreateICmpEQ(a, constant(0)));
    case ir::Op::add:
      return checked_add(a, b);
    case ir::Op::sub:
      return checked_sub(a, b);
    case ir::Op::mul:
      return checked_mul(a, b);
    case ir::Op::div:
      return checked_div(a, b);
    case ir::Op::neg:
      return checked_neg(a);
    case ir::Op::in_set:
      return in_set(a, module_.sets[static_cast<size_t>(in.imm)]);
  }
  return constant(0);
}

llvm::StructType* RuleLowering::input_type() {
  llvm::LLVMContext& context = out_.getContext();
  if (auto* existing = llvm::StructType::getTypeByName(context, "gov.RuleInput")) return existing;
  llvm::Type* i64 = builder_.getInt64Ty();
  return llvm::StructType::create(
      context,
      {llvm::ArrayType::get(i64, ir::kTaskFieldCount),
       llvm::ArrayType::get(i64, ir::kTeamStatCount * ir::kResourceCount),
       llvm::ArrayType::get(i64, ir::kClusterStatCount * ir::kResourceCount), builder_.getPtrTy()},
      "gov.RuleInput");
}

llvm::Value* RuleLowering::input_field(InputField field, int64_t index) {
  llvm::Value* address = builder_.CreateConstInBoundsGEP2_32(input_type(), input_, 0, field);
  address = builder_.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), address,
                                                static_cast<uint64_t>(index));
  return builder_.CreateLoad(builder_.getInt64Ty(), address);
}

llvm::GlobalVariable* RuleLowering::absent_label() {
  if (absent_label_ != nullptr) return absent_label_;
  absent_label_ = new llvm::GlobalVariable(out_, builder_.getInt64Ty(), /*isConstant=*/true,
                                           llvm::GlobalValue::PrivateLinkage,
                                           constant(ir::kAbsentLabel), "gov.absent_label");
  absent_label_->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return absent_label_;
}

/// The raw id of label `index`, kAbsentLabel when the input has no labels at all. A null
/// labels pointer reads a constant -1 instead (a select of addresses: no branch, no null load).
llvm::Value* RuleLowering::label_id(int64_t index) {
  llvm::Value* field = builder_.CreateConstInBoundsGEP2_32(input_type(), input_, 0, kLabels);
  llvm::Value* labels = builder_.CreateLoad(builder_.getPtrTy(), field, "labels");
  llvm::Value* slot =
      builder_.CreateConstGEP1_64(builder_.getInt64Ty(), labels, static_cast<uint64_t>(index));
  llvm::Value* missing =
      builder_.CreateICmpEQ(labels, llvm::ConstantPointerNull::get(builder_.getPtrTy()));
  return builder_.CreateLoad(builder_.getInt64Ty(),
                             builder_.CreateSelect(missing, absent_label(), slot));
}

llvm::Value* RuleLowering::overflow_intrinsic(llvm::Intrinsic::ID id, llvm::Value* a,
                                              llvm::Value* b, llvm::Value** overflow) {
  llvm::Value* pair = builder_.CreateBinaryIntrinsic(id, a, b);
  *overflow = builder_.CreateExtractValue(pair, 1);
  return builder_.CreateExtractValue(pair, 0);
}

// On overflow: ir::checked_add saturates towards b's sign.
llvm::Value* RuleLowering::checked_add(llvm::Value* a, llvm::Value* b) {
  llvm::Value* overflow = nullptr;
  llvm::Value* sum = overflow_intrinsic(llvm::Intrinsic::sadd_with_overflow, a, b, &overflow);
  llvm::Value* bound =
      builder_.CreateSelect(builder_.CreateICmpSGT(b, constant(0)), constant(kMax), constant(kMin));
  return builder_.CreateSelect(overflow, bound, sum);
}

// On overflow: ir::checked_sub saturates away from b's sign.
llvm::Value* RuleLowering::checked_sub(llvm::Value* a, llvm::Value* b) {
  llvm::Value* overflow = nullptr;
  llvm::Value* difference =
      overflow_intrinsic(llvm::Intrinsic::ssub_with_overflow, a, b, &overflow);
  llvm::Value* bound =
      builder_.CreateSelect(builder_.CreateICmpSLT(b, constant(0)), constant(kMax), constant(kMin));
  return builder_.CreateSelect(overflow, bound, difference);
}

// On overflow: ir::checked_mul saturates by the signs of the operands.
llvm::Value* RuleLowering::checked_mul(llvm::Value* a, llvm::Value* b) {
  llvm::Value* overflow = nullptr;
  llvm::Value* product = overflow_intrinsic(llvm::Intrinsic::smul_with_overflow, a, b, &overflow);
  llvm::Value* negative = builder_.CreateXor(builder_.CreateICmpSLT(a, constant(0)),
                                             builder_.CreateICmpSLT(b, constant(0)));
  llvm::Value* bound = builder_.CreateSelect(negative, constant(kMin), constant(kMax));
  return builder_.CreateSelect(overflow, bound, product);
}

// x / 0 = 0 and INT64_MIN / -1 = INT64_MAX. The divisor of the sdiv itself is replaced by 1
// in both cases, so the instruction never traps and is never undefined.
llvm::Value* RuleLowering::checked_div(llvm::Value* a, llvm::Value* b) {
  llvm::Value* by_zero = builder_.CreateICmpEQ(b, constant(0));
  llvm::Value* overflow = builder_.CreateAnd(builder_.CreateICmpEQ(a, constant(kMin)),
                                             builder_.CreateICmpEQ(b, constant(-1)));
  llvm::Value* safe_divisor =
      builder_.CreateSelect(builder_.CreateOr(by_zero, overflow), constant(1), b);
  llvm::Value* quotient = builder_.CreateSDiv(a, safe_divisor);
  llvm::Value* saturated = builder_.CreateSelect(overflow, constant(kMax), quotient);
  return builder_.CreateSelect(by_zero, constant(0), saturated);
}

llvm::Value* RuleLowering::checked_neg(llvm::Value* a) {
  llvm::Value* negated = builder_.CreateSub(constant(0), a);
  return builder_.CreateSelect(builder_.CreateICmpEQ(a, constant(kMin)), constant(kMax), negated);
}

/// A switch over the set's distinct values; the optimiser turns it into compares, a range
/// check, a bit test or a lookup table, whichever is cheapest.
llvm::Value* RuleLowering::in_set(llvm::Value* a, const std::vector<int64_t>& set) {
  std::vector<int64_t> values = set;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  if (values.empty()) return constant(0);
  if (values.size() > kMaxSwitchCases) return in_sorted_table(a, values);
  llvm::LLVMContext& context = out_.getContext();
  llvm::BasicBlock* member = llvm::BasicBlock::Create(context, "in_set.member", function_);
  llvm::BasicBlock* other = llvm::BasicBlock::Create(context, "in_set.other", function_);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(context, "in_set.join", function_);
  llvm::SwitchInst* dispatch =
      builder_.CreateSwitch(a, other, static_cast<unsigned>(values.size()));
  for (int64_t value : values) dispatch->addCase(constant(value), member);
  builder_.SetInsertPoint(member);
  builder_.CreateBr(join);
  builder_.SetInsertPoint(other);
  builder_.CreateBr(join);
  builder_.SetInsertPoint(join);
  llvm::PHINode* result = builder_.CreatePHI(builder_.getInt64Ty(), 2);
  result->addIncoming(constant(1), member);
  result->addIncoming(constant(0), other);
  return result;
}

/// Whether `a` is in `values` (sorted, unique, more than a few): a branchless binary search
/// over a constant table, unrolled to ceil(log2 n) loads, compares and selects. Straight-line
/// code whose size grows with log n, so compiling it stays fast for any set (a switch of
/// 400,000 cases took LLVM 18 minutes).
llvm::Value* RuleLowering::in_sorted_table(llvm::Value* a, const std::vector<int64_t>& values) {
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::ArrayType* type = llvm::ArrayType::get(i64, values.size());
  std::vector<uint64_t> bits(values.begin(), values.end());
  auto* table = new llvm::GlobalVariable(out_, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantDataArray::get(out_.getContext(), bits), "gov.set");
  table->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  const auto element = [&](llvm::Value* index) {
    llvm::Value* address = builder_.CreateInBoundsGEP(type, table, {constant(0), index});
    return builder_.CreateLoad(i64, address);
  };
  // The largest index whose value is <= a (or 0): each step halves the range still open.
  llvm::Value* base = constant(0);
  for (size_t n = values.size(); n > 1;) {
    const size_t half = n / 2;
    llvm::Value* probe = builder_.CreateAdd(base, constant(static_cast<int64_t>(half)));
    base = builder_.CreateSelect(builder_.CreateICmpSLE(element(probe), a), probe, base);
    n -= half;
  }
  return widen(builder_.CreateICmpEQ(element(base), a));
}

/// Declares `void name(const RuleInput* input, <middle>, <out>* result)`: the input is read,
/// the last pointer argument only written.
llvm::Function* declare_function(llvm::Module& out, const llvm::TargetMachine& machine,
                                 std::string_view name, bool with_rule_index) {
  llvm::LLVMContext& context = out.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  std::vector<llvm::Type*> args{ptr};
  if (with_rule_index) args.push_back(llvm::Type::getInt64Ty(context));
  args.push_back(ptr);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), args, /*isVarArg=*/false);
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                          std::string(name), out);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  function->addFnAttr("target-cpu", machine.getTargetCPU());
  function->addFnAttr("target-features", machine.getTargetFeatureString());
  const unsigned result = static_cast<unsigned>(args.size()) - 1;
  for (unsigned arg : {0u, result}) {
    function->addParamAttr(arg, llvm::Attribute::NoAlias);
    function->addParamAttr(arg, llvm::Attribute::NoCapture);
  }
  function->addParamAttr(0, llvm::Attribute::ReadOnly);
  function->addParamAttr(result, llvm::Attribute::WriteOnly);
  function->getArg(0)->setName("input");
  if (with_rule_index) function->getArg(1)->setName("rule");
  function->getArg(result)->setName(with_rule_index ? "values" : "verdicts");
  return function;
}

/// `i64 gov.rules.indexed(const RuleInput* input, uint8_t* verdicts)`, internal: gov_rules and
/// gov_decide call it (and LLVM inlines it where it is small).
llvm::Function* declare_indexed(llvm::Module& out, const llvm::TargetMachine& machine) {
  llvm::LLVMContext& context = out.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  auto* type = llvm::FunctionType::get(llvm::Type::getInt64Ty(context), {ptr, ptr}, /*isVarArg=*/false);
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                          std::string(kIndexedRulesSymbol), out);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  function->addFnAttr("target-cpu", machine.getTargetCPU());
  function->addFnAttr("target-features", machine.getTargetFeatureString());
  for (unsigned arg : {0u, 1u}) {
    function->addParamAttr(arg, llvm::Attribute::NoAlias);
    function->addParamAttr(arg, llvm::Attribute::NoCapture);
  }
  function->addParamAttr(0, llvm::Attribute::ReadOnly);
  function->getArg(0)->setName("input");
  function->getArg(1)->setName("verdicts");
  return function;
}

}  // namespace

std::unique_ptr<llvm::Module> lower_rules(const ir::Module& module, llvm::LLVMContext& context,
                                          const llvm::TargetMachine& machine) {
  auto out = std::make_unique<llvm::Module>("gov.rules", context);
  out->setTargetTriple(machine.getTargetTriple().str());
  out->setDataLayout(machine.createDataLayout());
  RuleLowering lowering(module, *out);
  llvm::Function* indexed = declare_indexed(*out, machine);
  // Inlined into gov_rules and gov_decide while the rules are few enough to run unindexed:
  // gov_rules then drops the first deny and the count it does not return (out of line, they
  // cost ~70 instructions on ten rules). An indexed list is compiled once, out of line: inlined
  // into both callers it was compiled twice, 20% of compile.gov's JIT compile (100 rules), for
  // ~3% of the decision's instructions.
  if (module.rules.size() < kIndexedRulesMin) {
    indexed->addFnAttr(llvm::Attribute::AlwaysInline);
  } else {
    indexed->addFnAttr(llvm::Attribute::NoInline);
  }
  lowering.indexed_function(*indexed);
  lowering.rules_function(*declare_function(*out, machine, kRulesSymbol, false), *indexed);
  // gov_messages runs only to show a rule's message: compiled without optimisation (fast
  // instruction selection), it takes 3.5% less of compile.gov's compile.
  llvm::Function* messages = declare_function(*out, machine, kMessagesSymbol, true);
  messages->addFnAttr(llvm::Attribute::OptimizeNone);
  messages->addFnAttr(llvm::Attribute::NoInline);
  lowering.messages_function(*messages);
  lower_decisions(module, *out, machine);
  return out;
}

}  // namespace gov::jit
