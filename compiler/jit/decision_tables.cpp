// The constant tables the decisions read (quota cells, cohort quotas, capacities, team lists)
// and the bounded arithmetic that emits saturating operations only where they can saturate.
#include "compiler/jit/decision_lowering.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
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
  const auto [lo, hi] = cell_bounds_[field][field == kPresent ? 0 : r];
  if (field == kPresent) return {load_i64(ref.cell, cell_type(), {kPresent}), lo, hi};
  return {load_i64(ref.cell, cell_type(), {field, r}), lo, hi};
}

DecisionLowering::Bounded DecisionLowering::pool_quota(const CellRef& ref, unsigned r) {
  if (ref.known_pool != nullptr) return exactly((*ref.known_pool)[r]);
  return {load_i64(ref.pool, resources_type(), {r}), pool_bounds_[r].first, pool_bounds_[r].second};
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
  declared_ = ir::declared_quotas(module_);
  quota_cells_ = declared_.cells.size();
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
  // Figures are read whenever there are teams and instance types (the absent cell's too).
  if (module_.flavors.empty() || module_.teams.empty()) return;
  // Only the declared cells, each distinct one once (teams often share a quota), number 0 the
  // absent cell: the object and its digest grow with the quotas, not with teams × the
  // catalog's instance types (a slot per position made 8 MB of a 10,000-team object).
  const auto fields = [](const ir::QuotaCell& cell) {
    std::array<int64_t, 1 + 4 * ir::kResourceCount> out{cell.present ? 1 : 0};
    for (size_t r = 0; r < ir::kResourceCount; ++r) {
      out[1 + r] = cell.nominal[r];
      out[1 + ir::kResourceCount + r] = cell.borrowing_limit[r];
      out[1 + 2 * ir::kResourceCount + r] = cell.lendable[r];
      out[1 + 3 * ir::kResourceCount + r] = cell.local[r];
    }
    return out;
  };
  std::map<std::array<int64_t, 1 + 4 * ir::kResourceCount>, uint32_t> numbers;
  std::vector<llvm::Constant*> cells;
  const auto number_of = [&](const ir::QuotaCell& cell) {
    const auto [at, added] = numbers.emplace(fields(cell), static_cast<uint32_t>(cells.size()));
    if (!added) return at->second;
    cells.push_back(llvm::ConstantStruct::get(cell_type(), {i64(cell.present ? 1 : 0), resources(cell.nominal),
                                                            resources(cell.borrowing_limit), resources(cell.lendable),
                                                            resources(cell.local)}));
    for (unsigned field = kPresent; field <= kLocal; ++field) {
      for (size_t r = 0; r < ir::kResourceCount; ++r) {
        const int64_t value = at->first[field == kPresent ? 0 : 1 + (field - 1) * ir::kResourceCount + r];
        auto& [lo, hi] = cell_bounds_[field][r];
        lo = cells.size() == 1 ? value : std::min(lo, value);
        hi = cells.size() == 1 ? value : std::max(hi, value);
      }
    }
    return at->second;
  };
  number_of(ir::QuotaCell{});  // number 0
  declared_cell_.clear();
  for (const ir::QuotaCell& cell : declared_.cells) declared_cell_.push_back(number_of(cell));
  std::vector<llvm::Constant*> pools;
  for (size_t f = 0; f < declared_.cohort_quota.size(); ++f) {
    pools.push_back(resources(declared_.cohort_quota[f]));
    for (size_t r = 0; r < ir::kResourceCount; ++r) {
      const int64_t value = declared_.cohort_quota[f][r];
      auto& [lo, hi] = pool_bounds_[r];
      lo = f == 0 ? value : std::min(lo, value);
      hi = f == 0 ? value : std::max(hi, value);
    }
  }
  cells_type_ = llvm::ArrayType::get(cell_type(), cells.size());
  pools_type_ = llvm::ArrayType::get(resources_type(), pools.size());
  cell_table_ = constant_table(llvm::ConstantArray::get(cells_type_, cells), "gov.quota_cells");
  pool_table_ = constant_table(llvm::ConstantArray::get(pools_type_, pools), "gov.cohort_quota");

  // Per team, its quotas by ascending instance type for cell_lookup, and a sentinel entry (an
  // instance type no module has, the absent cell) so that the search's last read stays inside.
  std::vector<llvm::Constant*> first, lookup_flavors, lookup_cells, lookup_slots;
  std::vector<uint32_t> order;
  for (size_t t = 0; t < declared_.team_count; ++t) {
    first.push_back(builder_.getInt32(declared_.team_first[t]));
    order.clear();
    for (uint32_t k = declared_.team_first[t]; k < declared_.team_first[t + 1]; ++k) order.push_back(k);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return declared_.flavors[a] < declared_.flavors[b]; });
    for (uint32_t k : order) {
      lookup_flavors.push_back(builder_.getInt32(declared_.flavors[k]));
      lookup_cells.push_back(builder_.getInt32(declared_cell_[k]));
      lookup_slots.push_back(builder_.getInt32(k + 1));
    }
  }
  first.push_back(builder_.getInt32(static_cast<uint32_t>(declared_.cells.size())));
  lookup_flavors.push_back(builder_.getInt32(std::numeric_limits<uint32_t>::max()));
  lookup_cells.push_back(builder_.getInt32(0));
  lookup_slots.push_back(builder_.getInt32(0));
  team_first_type_ = llvm::ArrayType::get(builder_.getInt32Ty(), first.size());
  team_first_ = constant_table(llvm::ConstantArray::get(team_first_type_, first), "gov.team_first");
  lookup_type_ = llvm::ArrayType::get(builder_.getInt32Ty(), lookup_flavors.size());
  lookup_flavors_ = constant_table(llvm::ConstantArray::get(lookup_type_, lookup_flavors), "gov.lookup_flavors");
  lookup_cells_ = constant_table(llvm::ConstantArray::get(lookup_type_, lookup_cells), "gov.lookup_cells");
  if (!unrolled()) {
    // The named instance type's row in the usage table, for gov_decide's figures (unrolled
    // code knows each row).
    lookup_slots_ = constant_table(llvm::ConstantArray::get(lookup_type_, lookup_slots), "gov.lookup_slots");
    build_team_tables();
  }
}

void DecisionLowering::build_team_tables() {
  enum : uint8_t { kActive = 1, kTryOn = 2, kPreferPreemption = 4 };
  std::vector<llvm::Constant*> flavors, cells, flags;
  for (const ir::Team& team : module_.teams) {
    flags.push_back(builder_.getInt8(static_cast<uint8_t>(
        (team.active ? kActive : 0) |
        (team.when_can_borrow == ir::WhenCanBorrow::try_next_flavor ? kTryOn : 0) |
        (team.flavor_preference == ir::FlavorPreference::preemption_over_borrowing ? kPreferPreemption : 0))));
  }
  for (size_t k = 0; k < declared_.cells.size(); ++k) {
    flavors.push_back(builder_.getInt32(declared_.flavors[k]));
    cells.push_back(builder_.getInt32(declared_cell_[k]));
  }
  team_flavors_type_ = llvm::ArrayType::get(builder_.getInt32Ty(), flavors.size());
  team_flavors_ = constant_table(llvm::ConstantArray::get(team_flavors_type_, flavors), "gov.team_flavors");
  team_cells_ = constant_table(llvm::ConstantArray::get(team_flavors_type_, cells), "gov.team_cells");
  team_flags_type_ = llvm::ArrayType::get(builder_.getInt8Ty(), flags.size());
  team_flags_ = constant_table(llvm::ConstantArray::get(team_flags_type_, flags), "gov.team_flags");
}

llvm::Value* DecisionLowering::load_u32(llvm::ArrayType* type, llvm::GlobalVariable* table, llvm::Value* index) {
  llvm::Value* element = builder_.CreateInBoundsGEP(type, table, {i64(0), index});
  return builder_.CreateZExt(builder_.CreateLoad(builder_.getInt32Ty(), element), builder_.getInt64Ty());
}

DecisionLowering::FoundCell DecisionLowering::cell_lookup(llvm::Value* team, llvm::Value* flavor) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::Type* i64_type = builder_.getInt64Ty();
  llvm::Value* first = load_u32(team_first_type_, team_first_, team);
  llvm::Value* end = load_u32(team_first_type_, team_first_, builder_.CreateAdd(team, i64(1)));
  // The first entry of [first, end) whose instance type is not below `flavor` (or end).
  llvm::BasicBlock* before = builder_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, "lookup", function);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "lookup.step", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, "lookup.done", function);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* lo = builder_.CreatePHI(i64_type, 2, "lo");
  llvm::PHINode* hi = builder_.CreatePHI(i64_type, 2, "hi");
  lo->addIncoming(first, before);
  hi->addIncoming(end, before);
  builder_.CreateCondBr(builder_.CreateICmpULT(lo, hi), body, exit);
  builder_.SetInsertPoint(body);
  llvm::Value* mid = builder_.CreateLShr(builder_.CreateAdd(lo, hi), 1);
  llvm::Value* below = builder_.CreateICmpULT(load_u32(lookup_type_, lookup_flavors_, mid), flavor);
  lo->addIncoming(builder_.CreateSelect(below, builder_.CreateAdd(mid, i64(1)), lo), body);
  hi->addIncoming(builder_.CreateSelect(below, hi, mid), body);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(exit);
  // lo <= end <= the sentinel's index: both reads are inside the tables.
  llvm::Value* found = builder_.CreateAnd(builder_.CreateICmpULT(lo, end),
                                          builder_.CreateICmpEQ(load_u32(lookup_type_, lookup_flavors_, lo), flavor));
  llvm::Value* number = builder_.CreateSelect(found, load_u32(lookup_type_, lookup_cells_, lo), i64(0));
  llvm::Value* slot = lookup_slots_ == nullptr
                          ? nullptr
                          : builder_.CreateSelect(found, load_u32(lookup_type_, lookup_slots_, lo), i64(0));
  return {cell_number(number), found, slot};
}

}  // namespace gov::jit::detail
