// Lowers the fit test, the priority and the may-preempt predicate to straight-line code over
// constant tables built from the module.
#include "compiler/jit/lower_decisions.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "compiler/ir/decisions.hpp"

namespace gov::jit {
namespace {

// The generated code addresses FitInput as { i32, i32, ptr, ptr, ptr } and PreemptionPair as
// { i32, i32, i64, i32, i32, i64 }: the C++ layouts must be those.
static_assert(offsetof(ir::FitInput, flavor) == 4 && offsetof(ir::FitInput, request) == 8 &&
              offsetof(ir::FitInput, usage) == 16 && offsetof(ir::FitInput, cohort_usage) == 24);
static_assert(offsetof(ir::PreemptionPair, preemptor_priority) == 4 &&
              offsetof(ir::PreemptionPair, preemptor_submitted) == 8 &&
              offsetof(ir::PreemptionPair, candidate_team) == 16 &&
              offsetof(ir::PreemptionPair, candidate_priority) == 20 &&
              offsetof(ir::PreemptionPair, candidate_submitted) == 24);

constexpr int64_t kUnlimited = ir::kUnlimited;

/// The fields of one quota cell in the constant table, in struct order.
enum CellField : unsigned { kPresent = 0, kNominal, kBorrowingLimit, kLendable, kLocal };

class DecisionLowering {
 public:
  DecisionLowering(const ir::Module& module, llvm::Module& out, const llvm::TargetMachine& machine)
      : module_(module), out_(out), machine_(machine), builder_(out.getContext()) {}

  void fit();
  void priority();
  void may_preempt();

 private:
  llvm::Function* declare(std::string_view name, llvm::Type* result, std::vector<llvm::Type*> args);
  llvm::GlobalVariable* constant_table(llvm::Constant* initializer, const char* name);
  llvm::Constant* resources(const ir::Resources& amounts);
  llvm::Value* fit_resource(ir::Resource r, llvm::Value* cell, llvm::Value* pool,
                            llvm::Value* request, llvm::Value* usage, llvm::Value* cohort_usage);
  llvm::Value* load_i64(llvm::Value* base, llvm::Type* type, std::vector<unsigned> path);
  llvm::Value* sat(llvm::Intrinsic::ID id, llvm::Value* a, llvm::Value* b) {
    return builder_.CreateBinaryIntrinsic(id, a, b);
  }
  llvm::Value* add_sat(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::sadd_sat, a, b); }
  llvm::Value* sub_sat(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::ssub_sat, a, b); }
  llvm::Value* smax(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::smax, a, b); }
  llvm::Value* smin(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::smin, a, b); }
  /// ir::limit_add: kUnlimited absorbs, anything else saturates.
  llvm::Value* limit_add(llvm::Value* a, llvm::Value* b);
  llvm::ConstantInt* i64(int64_t v) { return builder_.getInt64(static_cast<uint64_t>(v)); }
  llvm::ConstantInt* i32(int64_t v) { return builder_.getInt32(static_cast<uint32_t>(v)); }
  llvm::Type* resources_type() { return llvm::ArrayType::get(builder_.getInt64Ty(), ir::kResourceCount); }
  llvm::StructType* cell_type();

  const ir::Module& module_;
  llvm::Module& out_;
  const llvm::TargetMachine& machine_;
  llvm::IRBuilder<> builder_;
};

llvm::Function* DecisionLowering::declare(std::string_view name, llvm::Type* result,
                                          std::vector<llvm::Type*> args) {
  auto* type = llvm::FunctionType::get(result, args, /*isVarArg=*/false);
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                          std::string(name), out_);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  function->addFnAttr("target-cpu", machine_.getTargetCPU());
  function->addFnAttr("target-features", machine_.getTargetFeatureString());
  for (unsigned arg = 0; arg < args.size(); ++arg) {
    if (!args[arg]->isPointerTy()) continue;
    function->addParamAttr(arg, llvm::Attribute::NoCapture);
    function->addParamAttr(arg, llvm::Attribute::ReadOnly);
  }
  builder_.SetInsertPoint(llvm::BasicBlock::Create(out_.getContext(), "entry", function));
  return function;
}

llvm::GlobalVariable* DecisionLowering::constant_table(llvm::Constant* initializer,
                                                       const char* name) {
  auto* table = new llvm::GlobalVariable(out_, initializer->getType(), /*isConstant=*/true,
                                         llvm::GlobalValue::PrivateLinkage, initializer, name);
  table->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return table;
}

llvm::Constant* DecisionLowering::resources(const ir::Resources& amounts) {
  std::vector<llvm::Constant*> values;
  for (ir::Amount amount : amounts) values.push_back(i64(amount));
  return llvm::ConstantArray::get(llvm::cast<llvm::ArrayType>(resources_type()), values);
}

llvm::StructType* DecisionLowering::cell_type() {
  llvm::LLVMContext& context = out_.getContext();
  if (auto* existing = llvm::StructType::getTypeByName(context, "gov.QuotaCell")) return existing;
  return llvm::StructType::create(context,
                                  {builder_.getInt64Ty(), resources_type(), resources_type(),
                                   resources_type(), resources_type()},
                                  "gov.QuotaCell");
}

llvm::Value* DecisionLowering::load_i64(llvm::Value* base, llvm::Type* type,
                                        std::vector<unsigned> path) {
  std::vector<llvm::Value*> indices{builder_.getInt32(0)};
  for (unsigned step : path) indices.push_back(builder_.getInt32(step));
  return builder_.CreateLoad(builder_.getInt64Ty(), builder_.CreateInBoundsGEP(type, base, indices));
}

llvm::Value* DecisionLowering::limit_add(llvm::Value* a, llvm::Value* b) {
  llvm::Value* unlimited = builder_.CreateOr(builder_.CreateICmpEQ(a, i64(kUnlimited)),
                                             builder_.CreateICmpEQ(b, i64(kUnlimited)));
  return builder_.CreateSelect(unlimited, i64(kUnlimited), add_sat(a, b));
}

// ------------------------------------------------------------------ gov_fit

/// The three bits of one resource, already shifted into place (fits, borrows << 8,
/// exceeds << 16), as an i32.
llvm::Value* DecisionLowering::fit_resource(ir::Resource r, llvm::Value* cell, llvm::Value* pool,
                                            llvm::Value* request, llvm::Value* usage,
                                            llvm::Value* cohort_usage) {
  const unsigned i = static_cast<unsigned>(ir::index(r));
  llvm::Type* i64_type = builder_.getInt64Ty();
  const auto element = [&](llvm::Value* array) {
    return builder_.CreateLoad(i64_type, builder_.CreateConstInBoundsGEP1_64(i64_type, array, i));
  };
  llvm::Value* amount = element(request);
  llvm::Value* used = element(usage);
  llvm::Value* cohort_used = element(cohort_usage);
  llvm::Value* nominal = load_i64(cell, cell_type(), {kNominal, i});
  llvm::Value* borrowing_limit = load_i64(cell, cell_type(), {kBorrowingLimit, i});
  llvm::Value* lendable = load_i64(cell, cell_type(), {kLendable, i});
  llvm::Value* local = load_i64(cell, cell_type(), {kLocal, i});
  llvm::Value* cohort_quota = load_i64(pool, resources_type(), {i});

  llvm::Value* private_left = smax(i64(0), sub_sat(local, used));
  llvm::Value* spill = smax(i64(0), sub_sat(used, local));
  llvm::Value* cohort_left = sub_sat(cohort_quota, cohort_used);
  llvm::Value* limit_left = limit_add(sub_sat(lendable, spill), borrowing_limit);
  llvm::Value* available = smax(i64(0), add_sat(private_left, smin(cohort_left, limit_left)));
  llvm::Value* max_capacity =
      smin(add_sat(local, cohort_quota), limit_add(nominal, borrowing_limit));

  llvm::Value* requested = builder_.CreateICmpNE(amount, i64(0));
  llvm::Value* fits =
      builder_.CreateOr(builder_.CreateNot(requested), builder_.CreateICmpSLE(amount, available));
  llvm::Value* borrows =
      builder_.CreateAnd(requested, builder_.CreateICmpSGT(add_sat(used, amount), nominal));
  llvm::Value* exceeds = builder_.CreateAnd(requested, builder_.CreateICmpSGT(amount, max_capacity));
  llvm::Type* i32_type = builder_.getInt32Ty();
  const auto bit = [&](llvm::Value* flag, unsigned shift) {
    return builder_.CreateShl(builder_.CreateZExt(flag, i32_type), shift);
  };
  return builder_.CreateOr(builder_.CreateOr(bit(fits, i), bit(borrows, 8 + i)), bit(exceeds, 16 + i));
}

void DecisionLowering::fit() {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Function* function = declare(kFitSymbol, builder_.getInt32Ty(), {ptr});
  const ir::QuotaTable table = ir::quota_table(module_);
  if (table.cells.empty()) {
    builder_.CreateRet(i32(0));
    return;
  }
  std::vector<llvm::Constant*> cells;
  for (const ir::QuotaCell& cell : table.cells) {
    cells.push_back(llvm::ConstantStruct::get(
        cell_type(), {i64(cell.present ? 1 : 0), resources(cell.nominal), resources(cell.borrowing_limit),
                      resources(cell.lendable), resources(cell.local)}));
  }
  std::vector<llvm::Constant*> pools;
  for (const ir::Resources& quota : table.cohort_quota) pools.push_back(resources(quota));
  auto* cells_type = llvm::ArrayType::get(cell_type(), cells.size());
  auto* pools_type = llvm::ArrayType::get(resources_type(), pools.size());
  llvm::GlobalVariable* cell_table =
      constant_table(llvm::ConstantArray::get(cells_type, cells), "gov.quota_cells");
  llvm::GlobalVariable* pool_table =
      constant_table(llvm::ConstantArray::get(pools_type, pools), "gov.cohort_quota");

  auto* input_type = llvm::StructType::get(context, {builder_.getInt32Ty(), builder_.getInt32Ty(), ptr, ptr, ptr});
  llvm::Value* input = function->getArg(0);
  const auto field = [&](unsigned index, llvm::Type* type) {
    return builder_.CreateLoad(type, builder_.CreateConstInBoundsGEP2_32(input_type, input, 0, index));
  };
  llvm::Value* team = builder_.CreateZExt(field(0, builder_.getInt32Ty()), builder_.getInt64Ty());
  llvm::Value* flavor = builder_.CreateZExt(field(1, builder_.getInt32Ty()), builder_.getInt64Ty());
  llvm::Value* in_range = builder_.CreateAnd(
      builder_.CreateICmpULT(team, i64(static_cast<int64_t>(table.team_count))),
      builder_.CreateICmpULT(flavor, i64(static_cast<int64_t>(table.flavor_count))));
  // Out of range reads cell 0 (and is discarded): every address stays inside the table.
  llvm::Value* index = builder_.CreateSelect(
      in_range, builder_.CreateAdd(builder_.CreateMul(team, i64(static_cast<int64_t>(table.flavor_count))), flavor),
      i64(0));
  llvm::Value* cell = builder_.CreateInBoundsGEP(cells_type, cell_table, {i64(0), index});
  llvm::Value* present = builder_.CreateICmpNE(load_i64(cell, cell_type(), {kPresent}), i64(0));
  llvm::BasicBlock* compute = llvm::BasicBlock::Create(context, "has_quota", function);
  llvm::BasicBlock* none = llvm::BasicBlock::Create(context, "no_quota", function);
  builder_.CreateCondBr(builder_.CreateAnd(in_range, present), compute, none);
  builder_.SetInsertPoint(none);
  builder_.CreateRet(i32(0));

  // Only now are the input's pointers read: the reference reads them only for a quota.
  builder_.SetInsertPoint(compute);
  llvm::Value* pool = builder_.CreateInBoundsGEP(pools_type, pool_table,
                                                 {i64(0), builder_.CreateSelect(in_range, flavor, i64(0))});
  llvm::Value* request = field(2, ptr);
  llvm::Value* usage = field(3, ptr);
  llvm::Value* cohort_usage = field(4, ptr);
  llvm::Value* bits = i32(1 << 24);  // has_quota
  for (ir::Resource r : ir::kAllResources) {
    if (!ir::is_charged(r)) continue;
    bits = builder_.CreateOr(bits, fit_resource(r, cell, pool, request, usage, cohort_usage));
  }
  builder_.CreateRet(bits);
}

// ------------------------------------------------------------------ gov_priority

void DecisionLowering::priority() {
  llvm::Function* function = declare(kPrioritySymbol, builder_.getInt32Ty(), {builder_.getInt32Ty()});
  const ir::Settings& settings = module_.settings;
  const int32_t fallback =
      settings.default_class >= 0 ? module_.classes[static_cast<size_t>(settings.default_class)].weight : 0;
  if (!settings.rank_by_priority) {
    builder_.CreateRet(i32(0));
    return;
  }
  if (module_.classes.empty()) {
    builder_.CreateRet(i32(fallback));
    return;
  }
  std::vector<llvm::Constant*> weights;
  for (const ir::PriorityClass& c : module_.classes) weights.push_back(i32(c.weight));
  auto* weights_type = llvm::ArrayType::get(builder_.getInt32Ty(), weights.size());
  llvm::GlobalVariable* table =
      constant_table(llvm::ConstantArray::get(weights_type, weights), "gov.class_weights");
  llvm::Value* class_index = function->getArg(0);
  // Unsigned: -1 ("no class") and every other out-of-range index take the fallback.
  llvm::Value* in_range = builder_.CreateICmpULT(class_index, i32(static_cast<int64_t>(weights.size())));
  llvm::Value* index = builder_.CreateSelect(in_range, class_index, i32(0));
  llvm::Value* weight = builder_.CreateLoad(
      builder_.getInt32Ty(),
      builder_.CreateInBoundsGEP(weights_type, table, {i64(0), builder_.CreateZExt(index, builder_.getInt64Ty())}));
  builder_.CreateRet(builder_.CreateSelect(in_range, weight, i32(fallback)));
}

// ------------------------------------------------------------------ gov_may_preempt

void DecisionLowering::may_preempt() {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = declare(kMayPreemptSymbol, builder_.getInt8Ty(), {builder_.getPtrTy()});
  const size_t teams = module_.teams.size();
  if (teams == 0) {
    builder_.CreateRet(builder_.getInt8(0));
    return;
  }
  // Per team: within-team policy in the low byte, reclaim policy in the high byte.
  std::vector<llvm::Constant*> policies;
  for (const ir::Team& team : module_.teams) {
    policies.push_back(builder_.getInt16(static_cast<uint16_t>(
        static_cast<unsigned>(ir::within_team_policy(team)) |
        static_cast<unsigned>(ir::reclaim_policy(team)) << 8)));
  }
  auto* policies_type = llvm::ArrayType::get(builder_.getInt16Ty(), policies.size());
  llvm::GlobalVariable* table =
      constant_table(llvm::ConstantArray::get(policies_type, policies), "gov.team_policies");

  llvm::Type* i32_type = builder_.getInt32Ty();
  llvm::Type* i64_type = builder_.getInt64Ty();
  auto* pair_type = llvm::StructType::get(context, {i32_type, i32_type, i64_type, i32_type, i32_type, i64_type});
  llvm::Value* pair = function->getArg(0);
  const auto field = [&](unsigned index, llvm::Type* type) {
    return builder_.CreateLoad(type, builder_.CreateConstInBoundsGEP2_32(pair_type, pair, 0, index));
  };
  llvm::Value* preemptor_team = field(0, i32_type);
  llvm::Value* preemptor_priority = field(1, i32_type);
  llvm::Value* preemptor_submitted = field(2, i64_type);
  llvm::Value* candidate_team = field(3, i32_type);
  llvm::Value* candidate_priority = field(4, i32_type);
  llvm::Value* candidate_submitted = field(5, i64_type);

  llvm::Value* team_count = i32(static_cast<int64_t>(teams));
  llvm::Value* in_range = builder_.CreateAnd(builder_.CreateICmpULT(preemptor_team, team_count),
                                             builder_.CreateICmpULT(candidate_team, team_count));
  llvm::Value* index = builder_.CreateZExt(builder_.CreateSelect(in_range, preemptor_team, i32(0)), i64_type);
  llvm::Value* both = builder_.CreateLoad(builder_.getInt16Ty(),
                                          builder_.CreateInBoundsGEP(policies_type, table, {i64(0), index}));
  llvm::Value* same_team = builder_.CreateICmpEQ(preemptor_team, candidate_team);
  llvm::Value* policy = builder_.CreateSelect(same_team, builder_.CreateAnd(both, 0xff),
                                              builder_.CreateLShr(both, 8));

  llvm::Value* lower = builder_.CreateICmpSLT(candidate_priority, preemptor_priority);
  llvm::Value* newer_equal =
      builder_.CreateAnd(builder_.CreateICmpEQ(candidate_priority, preemptor_priority),
                         builder_.CreateICmpSLT(preemptor_submitted, candidate_submitted));
  const auto is = [&](ir::PreemptionPolicy p) {
    return builder_.CreateICmpEQ(policy, builder_.getInt16(static_cast<uint16_t>(p)));
  };
  llvm::Value* allowed = builder_.CreateSelect(
      is(ir::PreemptionPolicy::any), builder_.getTrue(),
      builder_.CreateSelect(
          is(ir::PreemptionPolicy::lower_priority), lower,
          builder_.CreateSelect(is(ir::PreemptionPolicy::lower_or_newer_equal_priority),
                                builder_.CreateOr(lower, newer_equal), builder_.getFalse())));
  builder_.CreateRet(builder_.CreateZExt(builder_.CreateAnd(in_range, allowed), builder_.getInt8Ty()));
}

}  // namespace

void lower_decisions(const ir::Module& module, llvm::Module& out, const llvm::TargetMachine& machine) {
  DecisionLowering lowering(module, out, machine);
  lowering.fit();
  lowering.priority();
  lowering.may_preempt();
}

}  // namespace gov::jit
