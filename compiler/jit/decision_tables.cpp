// The constant tables the decisions read (quota cells, cohort quotas, capacities, team lists)
// and the bounded arithmetic that emits saturating operations only where they can saturate.
#include "compiler/jit/decision_lowering.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/evaluator.hpp"

namespace gov::jit::detail {

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
  // The five resources only: the generated fit tests them; partition columns are checked by
  // the engine with the reference formulas (docs/semantics-decisions.md "GPU partitions").
  for (size_t r = 0; r < ir::kResourceCount; ++r) values.push_back(i64(amounts[r]));
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

// ------------------------------------------------------------------ bounded arithmetic

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
int64_t saturate(bool overflowed, int64_t toward, int64_t value) {
  return overflowed ? (toward < 0 ? kMin : kMax) : value;
}
}  // namespace

DecisionLowering::Bounded DecisionLowering::add(Bounded a, Bounded b) {
  int64_t lo = 0, hi = 0;
  const bool lo_over = __builtin_add_overflow(a.lo, b.lo, &lo);
  const bool hi_over = __builtin_add_overflow(a.hi, b.hi, &hi);
  if (!lo_over && !hi_over) return {builder_.CreateNSWAdd(a.value, b.value), lo, hi};
  return {sat(llvm::Intrinsic::sadd_sat, a.value, b.value), saturate(lo_over, a.lo, lo),
          saturate(hi_over, a.hi, hi)};
}

DecisionLowering::Bounded DecisionLowering::sub(Bounded a, Bounded b) {
  int64_t lo = 0, hi = 0;
  const bool lo_over = __builtin_sub_overflow(a.lo, b.hi, &lo);
  const bool hi_over = __builtin_sub_overflow(a.hi, b.lo, &hi);
  if (!lo_over && !hi_over) return {builder_.CreateNSWSub(a.value, b.value), lo, hi};
  return {sat(llvm::Intrinsic::ssub_sat, a.value, b.value), saturate(lo_over, a.lo, lo),
          saturate(hi_over, a.hi, hi)};
}

DecisionLowering::Bounded DecisionLowering::max(Bounded a, Bounded b) {
  if (a.lo >= b.hi) return a;
  if (b.lo >= a.hi) return b;
  return {smax(a.value, b.value), std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
}

DecisionLowering::Bounded DecisionLowering::min(Bounded a, Bounded b) {
  if (a.hi <= b.lo) return a;
  if (b.hi <= a.lo) return b;
  return {smin(a.value, b.value), std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
}

DecisionLowering::Bounded DecisionLowering::limit_add(Bounded a, Bounded b) {
  if (a.lo == kUnlimited || b.lo == kUnlimited) return exactly(kUnlimited);
  if (a.hi != kUnlimited && b.hi != kUnlimited) return add(a, b);  // neither can be unlimited
  Bounded sum = add(a, b);
  llvm::Value* unlimited = builder_.CreateOr(builder_.CreateICmpEQ(a.value, i64(kUnlimited)),
                                             builder_.CreateICmpEQ(b.value, i64(kUnlimited)));
  return {builder_.CreateSelect(unlimited, i64(kUnlimited), sum.value), sum.lo, kUnlimited};
}

DecisionLowering::Bounded DecisionLowering::cell_field(const CellRef& ref, CellField field,
                                                       unsigned r) {
  if (ref.known != nullptr) {
    switch (field) {
      case kPresent: return exactly(ref.known->present ? 1 : 0);
      case kNominal: return exactly(ref.known->nominal[r]);
      case kBorrowingLimit: return exactly(ref.known->borrowing_limit[r]);
      case kLendable: return exactly(ref.known->lendable[r]);
      case kLocal: return exactly(ref.known->local[r]);
    }
  }
  if (field == kPresent) return {load_i64(ref.cell, cell_type(), {kPresent})};
  return {load_i64(ref.cell, cell_type(), {field, r})};
}

DecisionLowering::Bounded DecisionLowering::pool_quota(const CellRef& ref, unsigned r) {
  if (ref.known_pool != nullptr) return exactly((*ref.known_pool)[r]);
  return {load_i64(ref.pool, resources_type(), {r})};
}

DecisionLowering::Bounded DecisionLowering::available_of(const CellRef& cell, unsigned r,
                                                         Bounded used, Bounded cohort_used) {
  const Bounded zero = exactly(0);
  const Bounded local = cell_field(cell, kLocal, r);
  const Bounded private_left = max(zero, sub(local, used));
  const Bounded spill = max(zero, sub(used, local));
  const Bounded cohort_left = sub(pool_quota(cell, r), cohort_used);
  const Bounded limit_left =
      limit_add(sub(cell_field(cell, kLendable, r), spill), cell_field(cell, kBorrowingLimit, r));
  return max(zero, add(private_left, min(cohort_left, limit_left)));
}

void DecisionLowering::build_tables() {
  table_ = ir::quota_table(module_);
  for (const ir::Team& team : module_.teams) quota_cells_ += team.quotas.size();
  if (!unrolled()) build_team_tables();
  if (!module_.flavors.empty()) {
    std::vector<llvm::Constant*> capacities;
    for (const ir::Flavor& flavor : module_.flavors) {
      ir::Resources capacity{};
      for (size_t r = 0; r < ir::kResourceCount; ++r)
        capacity[r] = ir::checked_mul(flavor.capacity, flavor.per_instance[r]);
      capacities.push_back(resources(capacity));
    }
    capacity_type_ = llvm::ArrayType::get(resources_type(), capacities.size());
    capacity_table_ =
        constant_table(llvm::ConstantArray::get(capacity_type_, capacities), "gov.capacity");
  }
  if (table_.cells.empty()) return;
  // The team × flavor grid is mostly empty (a team has quotas in a few of the catalog's types):
  // it holds a slot per cell, and the cells themselves are stored once each, slot 0 being the
  // absent cell every empty position shares. So the object grows with the quotas, not with
  // teams × catalog types (201 types × 64 teams would be 2 MB of constant cells).
  const auto cell_constant = [&](const ir::QuotaCell& cell) {
    return llvm::ConstantStruct::get(cell_type(), {i64(cell.present ? 1 : 0), resources(cell.nominal),
                                                   resources(cell.borrowing_limit), resources(cell.lendable),
                                                   resources(cell.local)});
  };
  std::vector<llvm::Constant*> cells{cell_constant(ir::QuotaCell{})};
  std::vector<llvm::Constant*> slots;
  slots.reserve(table_.cells.size());
  for (const ir::QuotaCell& cell : table_.cells) {
    if (!cell.present) {
      slots.push_back(builder_.getInt32(0));
      continue;
    }
    slots.push_back(builder_.getInt32(static_cast<uint32_t>(cells.size())));
    cells.push_back(cell_constant(cell));
  }
  std::vector<llvm::Constant*> pools;
  for (const ir::Resources& quota : table_.cohort_quota) pools.push_back(resources(quota));
  cells_type_ = llvm::ArrayType::get(cell_type(), cells.size());
  slots_type_ = llvm::ArrayType::get(builder_.getInt32Ty(), slots.size());
  pools_type_ = llvm::ArrayType::get(resources_type(), pools.size());
  cell_table_ = constant_table(llvm::ConstantArray::get(cells_type_, cells), "gov.quota_cells");
  slot_table_ = constant_table(llvm::ConstantArray::get(slots_type_, slots), "gov.quota_cell_slots");
  pool_table_ = constant_table(llvm::ConstantArray::get(pools_type_, pools), "gov.cohort_quota");
}

void DecisionLowering::build_team_tables() {
  enum : uint8_t { kActive = 1, kTryOn = 2, kPreferPreemption = 4 };
  std::vector<llvm::Constant*> first, flavors, flags;
  for (const ir::Team& team : module_.teams) {
    first.push_back(builder_.getInt32(static_cast<uint32_t>(flavors.size())));
    for (const ir::FlavorQuota& quota : team.quotas) flavors.push_back(builder_.getInt32(static_cast<uint32_t>(quota.flavor)));
    flags.push_back(builder_.getInt8(static_cast<uint8_t>(
        (team.active ? kActive : 0) |
        (team.when_can_borrow == ir::WhenCanBorrow::try_next_flavor ? kTryOn : 0) |
        (team.flavor_preference == ir::FlavorPreference::preemption_over_borrowing ? kPreferPreemption : 0))));
  }
  first.push_back(builder_.getInt32(static_cast<uint32_t>(flavors.size())));
  team_first_type_ = llvm::ArrayType::get(builder_.getInt32Ty(), first.size());
  team_first_ = constant_table(llvm::ConstantArray::get(team_first_type_, first), "gov.team_first");
  team_flavors_type_ = llvm::ArrayType::get(builder_.getInt32Ty(), flavors.size());
  team_flavors_ = constant_table(llvm::ConstantArray::get(team_flavors_type_, flavors), "gov.team_flavors");
  team_flags_type_ = llvm::ArrayType::get(builder_.getInt8Ty(), flags.size());
  team_flags_ = constant_table(llvm::ConstantArray::get(team_flags_type_, flags), "gov.team_flags");
}

}  // namespace gov::jit::detail
