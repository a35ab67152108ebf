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
#include <string>
#include <vector>

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

/// Emits the body of `gov_rules` one rule at a time; registers of the current rule are
/// the values in `registers_`.
class RuleLowering {
 public:
  RuleLowering(const ir::Module& module, llvm::Module& out, llvm::Function& function)
      : module_(module), out_(out), builder_(out.getContext()), function_(function) {
    builder_.SetInsertPoint(llvm::BasicBlock::Create(out.getContext(), "entry", &function));
    input_ = function.getArg(0);
    verdicts_ = function.getArg(1);
  }

  void rule(size_t index);
  void finish() { builder_.CreateRetVoid(); }

 private:
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
  llvm::Function& function_;
  llvm::Value* input_ = nullptr;
  llvm::Value* verdicts_ = nullptr;
  llvm::GlobalVariable* absent_label_ = nullptr;
  std::vector<llvm::Value*> registers_;
};

void RuleLowering::rule(size_t index) {
  const ir::Rule& rule = module_.rules[index];
  registers_.clear();
  for (size_t i = 0; i < rule.condition_length; ++i) {
    llvm::Value* value = instruction(rule.code[i]);
    value->setName("rule" + std::to_string(index) + ".r" + std::to_string(i));
    registers_.push_back(value);
  }
  llvm::Value* verdict = registers_.empty()
                             ? builder_.getInt8(0)
                             : builder_.CreateZExt(truth(registers_.back()), builder_.getInt8Ty());
  builder_.CreateStore(verdict,
                       builder_.CreateConstGEP1_64(builder_.getInt8Ty(), verdicts_, index));
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
  llvm::LLVMContext& context = out_.getContext();
  llvm::BasicBlock* member = llvm::BasicBlock::Create(context, "in_set.member", &function_);
  llvm::BasicBlock* other = llvm::BasicBlock::Create(context, "in_set.other", &function_);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(context, "in_set.join", &function_);
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

llvm::Function* declare_rules_function(llvm::Module& out, const llvm::TargetMachine& machine) {
  llvm::LLVMContext& context = out.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  auto* type =
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr}, /*isVarArg=*/false);
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                          std::string(kRulesSymbol), out);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  function->addFnAttr("target-cpu", machine.getTargetCPU());
  function->addFnAttr("target-features", machine.getTargetFeatureString());
  for (unsigned arg = 0; arg < 2; ++arg) {
    function->addParamAttr(arg, llvm::Attribute::NoAlias);
    function->addParamAttr(arg, llvm::Attribute::NoCapture);
  }
  function->addParamAttr(0, llvm::Attribute::ReadOnly);
  function->addParamAttr(1, llvm::Attribute::WriteOnly);
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
  RuleLowering lowering(module, *out, *declare_rules_function(*out, machine));
  for (size_t i = 0; i < module.rules.size(); ++i) lowering.rule(i);
  lowering.finish();
  return out;
}

}  // namespace gov::jit
