// Lowers the fit test, the priority and the may-preempt predicate to straight-line code over
// constant tables built from the module.
#include "compiler/jit/lower_decisions.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compiler/ir/decisions.hpp"
#include "compiler/ir/evaluator.hpp"

namespace gov::jit {
namespace {

// The generated code addresses FitInput as { i32, i32, ptr, ptr, ptr } and PreemptionPair as
// { i32, i32, i64, i32, i32, i64 }: the C++ layouts must be those.
static_assert(offsetof(ir::FitInput, flavor) == 4 && offsetof(ir::FitInput, request) == 8 &&
              offsetof(ir::FitInput, usage) == 16 && offsetof(ir::FitInput, cohort_usage) == 24);
static_assert(offsetof(ir::DecideInput, labels) == 8 && offsetof(ir::DecideInput, usage) == 16 &&
              offsetof(ir::UsageView, cohort_usage) == 8 && offsetof(ir::UsageView, flavor_usage) == 16);
static_assert(offsetof(ir::DecideResult, warnings) == 4 && offsetof(ir::DecideResult, flavor) == 8 &&
              offsetof(ir::DecideResult, borrows) == 12);
static_assert(offsetof(ir::RuleInput, labels) == (ir::kTaskFieldCount + 40) * 8);
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

  /// The cell and cohort-quota tables (built once, shared by gov_fit and gov_decide).
  void build_tables();
  void fit();
  void priority();
  void may_preempt();
  void decide();

 private:
  llvm::Function* declare(std::string_view name, llvm::Type* result, std::vector<llvm::Type*> args);
  llvm::GlobalVariable* constant_table(llvm::Constant* initializer, const char* name);
  llvm::Constant* resources(const ir::Resources& amounts);
  /// A value of the generated code with an interval its runtime value lies in (inclusive):
  /// exact for constants, everything for a plain load, [0, kGuardedBound] for the loads of a
  /// guarded fast path. An addition or subtraction whose interval fits in int64 cannot
  /// saturate and is emitted as a plain instruction; a min or max that the intervals decide
  /// is not emitted at all. Same results as the saturating reference, fewer instructions.
  struct Bounded {
    llvm::Value* value;
    int64_t lo = std::numeric_limits<int64_t>::min();
    int64_t hi = std::numeric_limits<int64_t>::max();
  };
  Bounded exactly(int64_t v) { return {i64(v), v, v}; }
  Bounded add(Bounded a, Bounded b);    // ir::checked_add
  Bounded sub(Bounded a, Bounded b);    // ir::checked_sub
  Bounded max(Bounded a, Bounded b);    // std::max
  Bounded min(Bounded a, Bounded b);    // std::min
  Bounded limit_add(Bounded a, Bounded b);  // ir::limit_add

  /// One quota cell and its instance type's cohort quota: the module's constants when the team
  /// and instance type are known while lowering, loads from the constant tables otherwise.
  struct CellRef {
    const ir::QuotaCell* known = nullptr;
    const ir::Resources* known_pool = nullptr;
    llvm::Value* cell = nullptr;
    llvm::Value* pool = nullptr;
  };
  Bounded cell_field(const CellRef& ref, CellField field, unsigned r);
  Bounded pool_quota(const CellRef& ref, unsigned r);
  /// ir::fit's three answers for one resource, as i1 values (exceeds only when asked for).
  struct ResourceFit {
    llvm::Value* fits;
    llvm::Value* borrows;
    llvm::Value* exceeds;
  };
  ResourceFit fit_resource(unsigned r, const CellRef& cell, Bounded amount, Bounded used,
                           Bounded cohort_used, bool with_exceeds);
  /// ir::fit(...).packed() over every charged resource: fits << r, borrows << 8 + r,
  /// exceeds << 16 + r, as an i32.
  llvm::Value* fit_bits(const CellRef& cell, const Bounded* amounts, const Bounded* used,
                        const Bounded* cohort_used);
  /// Whether every charged resource fits, and whether any borrows (the two answers decide
  /// needs), as i1 values.
  std::pair<llvm::Value*, llvm::Value*> fits_and_borrows(const CellRef& cell, const Bounded* amounts,
                                                         const Bounded* used, const Bounded* cohort_used);
  llvm::Value* load_i64(llvm::Value* base, llvm::Type* type, std::vector<unsigned> path);
  llvm::Value* sat(llvm::Intrinsic::ID id, llvm::Value* a, llvm::Value* b) {
    return builder_.CreateBinaryIntrinsic(id, a, b);
  }
  llvm::Value* add_sat(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::sadd_sat, a, b); }
  llvm::Value* sub_sat(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::ssub_sat, a, b); }
  llvm::Value* smax(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::smax, a, b); }
  llvm::Value* smin(llvm::Value* a, llvm::Value* b) { return sat(llvm::Intrinsic::smin, a, b); }
  llvm::Value* cell_at(llvm::Value* index) {
    return builder_.CreateInBoundsGEP(cells_type_, cell_table_, {i64(0), index});
  }
  llvm::Value* pool_at(llvm::Value* flavor) {
    return builder_.CreateInBoundsGEP(pools_type_, pool_table_, {i64(0), flavor});
  }
  llvm::Value* figure(bool team_stat, uint8_t slot, llvm::Value* team, llvm::Value* flavor,
                      llvm::Value* usage_base, llvm::Value* cohort_base, llvm::Value* flavor_base);
  llvm::Value* add_figure(llvm::Value* a, llvm::Value* b);
  /// fits_and_borrows of a known team and instance type through a call of gov_fit.
  std::pair<llvm::Value*, llvm::Value*> fit_call(int64_t cell_index, int64_t flavor,
                                                 llvm::Value* request, llvm::Value* usage_base,
                                                 llvm::Value* cohort_base);
  /// Up to this many quota cells (team × instance type), gov_decide is specialised per team
  /// (constants folded, a switch over teams). Above it, the code would grow with the policy
  /// and so would the time LLVM takes (quadratically in places: 10,000 teams took minutes), so
  /// gov_decide walks constant tables of each team's instance types instead and calls gov_fit.
  static constexpr size_t kUnrolledCells = 64;
  bool unrolled() const { return quota_cells_ <= kUnrolledCells; }
  /// The tables the walk reads: per team, the range of its instance types in one list
  /// (`gov.team_first`, teams + 1 entries; `gov.team_flavors`) and its flags (`gov.team_flags`).
  void build_team_tables();
  /// The team figures of the held instance types, summed by walking the team's list.
  void held_figures_by_table(const ir::FigureSlots& slots, llvm::Value* team, llvm::Value* usage_base,
                             llvm::Value* cohort_base, llvm::Value* flavor_base,
                             const std::function<llvm::Value*(bool, uint8_t)>& slot_address);
  /// ir::conclude's fit by walking the team's list and calling gov_fit: (flavor, borrows as i8).
  std::pair<llvm::Value*, llvm::Value*> fit_by_table(llvm::Value* team, llvm::Value* requested,
                                                     llvm::Value* request, llvm::Value* usage_base,
                                                     llvm::Value* cohort_base);
  /// Up to this many rules, gov_decide concludes from the verdicts in unrolled code.
  static constexpr size_t kUnrolledRules = 256;
  /// (the first deny rule or -1, the number of matches) by a loop over the verdicts.
  std::pair<llvm::Value*, llvm::Value*> deny_and_matches_by_table(llvm::Value* verdicts);
  std::pair<llvm::Value*, llvm::Value*> guarded_fit(int64_t cell_index, int64_t flavor,
                                                    llvm::Value* request, llvm::Value* usage_base,
                                                    llvm::Value* cohort_base);
  /// The fast path's bound on requests and usage: 2^62 − 1, far above any real cluster (a
  /// sum of two such values, or one minus another, stays inside int64). The or of values
  /// in [0, 2^62) is below 2^62 exactly when each is.
  static constexpr int64_t kGuardedBound = (int64_t{1} << 62) - 1;
  /// ir::available: max(0, max(0, local − U) + min(quota − cohortU, limit_add(L − spill, B))).
  Bounded available_of(const CellRef& cell, unsigned r, Bounded used, Bounded cohort_used);
  llvm::ConstantInt* i64(int64_t v) { return builder_.getInt64(static_cast<uint64_t>(v)); }
  llvm::ConstantInt* i32(int64_t v) { return builder_.getInt32(static_cast<uint32_t>(v)); }
  llvm::Type* resources_type() { return llvm::ArrayType::get(builder_.getInt64Ty(), ir::kResourceCount); }
  llvm::StructType* cell_type();

  const ir::Module& module_;
  llvm::Module& out_;
  const llvm::TargetMachine& machine_;
  llvm::IRBuilder<> builder_;
  ir::QuotaTable table_;
  llvm::ArrayType* cells_type_ = nullptr;
  llvm::ArrayType* pools_type_ = nullptr;
  llvm::GlobalVariable* cell_table_ = nullptr;
  llvm::GlobalVariable* pool_table_ = nullptr;
  llvm::ArrayType* capacity_type_ = nullptr;  // per flavor: capacity × per instance
  llvm::GlobalVariable* capacity_table_ = nullptr;
  size_t quota_cells_ = 0;  // quotas over all teams
  llvm::ArrayType* team_first_type_ = nullptr;
  llvm::GlobalVariable* team_first_ = nullptr;
  llvm::ArrayType* team_flavors_type_ = nullptr;
  llvm::GlobalVariable* team_flavors_ = nullptr;
  llvm::ArrayType* team_flags_type_ = nullptr;
  llvm::GlobalVariable* team_flags_ = nullptr;
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

// ------------------------------------------------------------------ gov_fit

DecisionLowering::ResourceFit DecisionLowering::fit_resource(unsigned r, const CellRef& cell,
                                                             Bounded amount, Bounded used,
                                                             Bounded cohort_used, bool with_exceeds) {
  const Bounded nominal = cell_field(cell, kNominal, r);
  const Bounded available = available_of(cell, r, used, cohort_used);

  llvm::Value* requested = builder_.CreateICmpNE(amount.value, i64(0));
  llvm::Value* fits = builder_.CreateOr(builder_.CreateNot(requested),
                                        builder_.CreateICmpSLE(amount.value, available.value));
  llvm::Value* borrows = builder_.CreateAnd(
      requested, builder_.CreateICmpSGT(add(used, amount).value, nominal.value));
  if (!with_exceeds) return {fits, borrows, nullptr};
  const Bounded max_capacity = min(add(cell_field(cell, kLocal, r), pool_quota(cell, r)),
                                   limit_add(nominal, cell_field(cell, kBorrowingLimit, r)));
  llvm::Value* exceeds =
      builder_.CreateAnd(requested, builder_.CreateICmpSGT(amount.value, max_capacity.value));
  return {fits, borrows, exceeds};
}

llvm::Value* DecisionLowering::fit_bits(const CellRef& cell, const Bounded* amounts,
                                        const Bounded* used, const Bounded* cohort_used) {
  llvm::Type* i32_type = builder_.getInt32Ty();
  const auto bit = [&](llvm::Value* flag, size_t shift) {
    return builder_.CreateShl(builder_.CreateZExt(flag, i32_type), static_cast<uint64_t>(shift));
  };
  llvm::Value* bits = i32(0);
  for (ir::Resource resource : ir::kAllResources) {
    if (!ir::is_charged(resource)) continue;
    const size_t r = ir::index(resource);
    const ResourceFit one = fit_resource(static_cast<unsigned>(r), cell, amounts[r], used[r],
                                         cohort_used[r], /*with_exceeds=*/true);
    bits = builder_.CreateOr(bits, builder_.CreateOr(builder_.CreateOr(bit(one.fits, r), bit(one.borrows, 8 + r)),
                                                     bit(one.exceeds, 16 + r)));
  }
  return bits;
}

std::pair<llvm::Value*, llvm::Value*> DecisionLowering::fits_and_borrows(
    const CellRef& cell, const Bounded* amounts, const Bounded* used, const Bounded* cohort_used) {
  llvm::Value* fits = builder_.getTrue();
  llvm::Value* borrows = builder_.getFalse();
  for (ir::Resource resource : ir::kAllResources) {
    if (!ir::is_charged(resource)) continue;
    const size_t r = ir::index(resource);
    const ResourceFit one = fit_resource(static_cast<unsigned>(r), cell, amounts[r], used[r],
                                         cohort_used[r], /*with_exceeds=*/false);
    fits = builder_.CreateAnd(fits, one.fits);
    borrows = builder_.CreateOr(borrows, one.borrows);
  }
  return {fits, borrows};
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
  std::vector<llvm::Constant*> cells;
  for (const ir::QuotaCell& cell : table_.cells) {
    cells.push_back(llvm::ConstantStruct::get(
        cell_type(), {i64(cell.present ? 1 : 0), resources(cell.nominal), resources(cell.borrowing_limit),
                      resources(cell.lendable), resources(cell.local)}));
  }
  std::vector<llvm::Constant*> pools;
  for (const ir::Resources& quota : table_.cohort_quota) pools.push_back(resources(quota));
  cells_type_ = llvm::ArrayType::get(cell_type(), cells.size());
  pools_type_ = llvm::ArrayType::get(resources_type(), pools.size());
  cell_table_ = constant_table(llvm::ConstantArray::get(cells_type_, cells), "gov.quota_cells");
  pool_table_ = constant_table(llvm::ConstantArray::get(pools_type_, pools), "gov.cohort_quota");
}

void DecisionLowering::fit() {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Function* function = declare(kFitSymbol, builder_.getInt32Ty(), {ptr});
  const ir::QuotaTable& table = table_;
  if (table.cells.empty()) {
    builder_.CreateRet(i32(0));
    return;
  }

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
  llvm::Value* cell = cell_at(index);
  llvm::Value* present = builder_.CreateICmpNE(load_i64(cell, cell_type(), {kPresent}), i64(0));
  llvm::BasicBlock* compute = llvm::BasicBlock::Create(context, "has_quota", function);
  llvm::BasicBlock* none = llvm::BasicBlock::Create(context, "no_quota", function);
  builder_.CreateCondBr(builder_.CreateAnd(in_range, present), compute, none);
  builder_.SetInsertPoint(none);
  builder_.CreateRet(i32(0));

  // Only now are the input's pointers read: the reference reads them only for a quota.
  builder_.SetInsertPoint(compute);
  llvm::Value* pool = pool_at(builder_.CreateSelect(in_range, flavor, i64(0)));
  llvm::Value* request = field(2, ptr);
  llvm::Value* usage = field(3, ptr);
  llvm::Value* cohort_usage = field(4, ptr);
  std::array<Bounded, ir::kResourceCount> amounts{}, used{}, cohort_used{};
  for (unsigned r = 0; r < ir::kResourceCount; ++r) {
    amounts[r] = {load_i64(request, resources_type(), {r})};
    used[r] = {load_i64(usage, resources_type(), {r})};
    cohort_used[r] = {load_i64(cohort_usage, resources_type(), {r})};
  }
  CellRef ref;
  ref.cell = cell;
  ref.pool = pool;
  llvm::Value* bits = fit_bits(ref, amounts.data(), used.data(), cohort_used.data());
  builder_.CreateRet(builder_.CreateOr(bits, i32(1 << 24)));  // has_quota
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

// ------------------------------------------------------------------ gov_decide

llvm::Value* DecisionLowering::add_figure(llvm::Value* a, llvm::Value* b) {
  llvm::Value* pair = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_with_overflow, a, b);
  return builder_.CreateSelect(builder_.CreateExtractValue(pair, 1),
                               i64(std::numeric_limits<int64_t>::max()),
                               builder_.CreateExtractValue(pair, 0));
}

/// One figure of ir::fill_figures (team or cluster slot) of `team` in `flavor` (both in range;
/// constants when the caller knows them, and then the loads from constant tables fold away).
llvm::Value* DecisionLowering::figure(bool team_stat, uint8_t slot, llvm::Value* team,
                                      llvm::Value* flavor, llvm::Value* usage_base,
                                      llvm::Value* cohort_base, llvm::Value* flavor_base) {
  const unsigned r = slot % ir::kResourceCount;
  llvm::Type* i64_type = builder_.getInt64Ty();
  const int64_t flavors = static_cast<int64_t>(table_.flavor_count);
  const auto element = [&](llvm::Value* base, llvm::Value* row) {
    llvm::Value* at = builder_.CreateAdd(builder_.CreateMul(row, i64(ir::kResourceCount)), i64(r));
    return builder_.CreateLoad(i64_type, builder_.CreateInBoundsGEP(i64_type, base, at));
  };
  if (!team_stat) {
    llvm::Value* capacity = builder_.CreateLoad(
        i64_type, builder_.CreateInBoundsGEP(capacity_type_, capacity_table_, {i64(0), flavor, i64(r)}));
    llvm::Value* used = element(flavor_base, flavor);
    switch (static_cast<ir::ClusterStat>(slot / ir::kResourceCount)) {
      case ir::ClusterStat::capacity:
        return capacity;
      case ir::ClusterStat::used:
        return used;
      case ir::ClusterStat::available:
        return smax(i64(0), sub_sat(capacity, used));
    }
    return i64(0);
  }
  llvm::Value* cell_index = builder_.CreateAdd(builder_.CreateMul(team, i64(flavors)), flavor);
  llvm::Value* cell = cell_at(cell_index);
  llvm::Value* used = element(usage_base, cell_index);
  llvm::Value* nominal = load_i64(cell, cell_type(), {kNominal, r});
  switch (static_cast<ir::TeamStat>(slot / ir::kResourceCount)) {
    case ir::TeamStat::nominal:
      return nominal;
    case ir::TeamStat::used:
      return used;
    case ir::TeamStat::borrowed:
      return smax(i64(0), sub_sat(used, nominal));
    case ir::TeamStat::borrowing_limit:
      return load_i64(cell, cell_type(), {kBorrowingLimit, r});
    case ir::TeamStat::available: {
      llvm::Value* present = builder_.CreateICmpNE(load_i64(cell, cell_type(), {kPresent}), i64(0));
      CellRef ref;
      ref.cell = cell;
      ref.pool = pool_at(flavor);
      const Bounded value = available_of(ref, r, {used}, {element(cohort_base, flavor)});
      return builder_.CreateSelect(present, value.value, i64(0));
    }
  }
  return i64(0);
}

/// The fit of one known team and instance type, twice: a fast path for the usual inputs (every
/// request and usage in [0, kGuardedBound], so that no sum or difference with the cell's
/// constants can saturate and the arithmetic is plain) and the saturating path for the rest.
std::pair<llvm::Value*, llvm::Value*> DecisionLowering::guarded_fit(int64_t cell_index, int64_t flavor,
                                                                    llvm::Value* request,
                                                                    llvm::Value* usage_base,
                                                                    llvm::Value* cohort_base) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::Type* i64_type = builder_.getInt64Ty();
  CellRef ref;
  ref.known = &table_.cells[static_cast<size_t>(cell_index)];
  ref.known_pool = &table_.cohort_quota[static_cast<size_t>(flavor)];
  const auto at = [&](llvm::Value* base, uint64_t index) {
    return builder_.CreateLoad(i64_type, builder_.CreateConstInBoundsGEP1_64(i64_type, base, index));
  };
  std::array<Bounded, ir::kResourceCount> amounts{}, used{}, cohort_used{};
  llvm::Value* any_bits = i64(0);
  for (ir::Resource resource : ir::kAllResources) {
    if (!ir::is_charged(resource)) continue;
    const size_t r = ir::index(resource);
    amounts[r] = {at(request, r)};
    used[r] = {at(usage_base, static_cast<uint64_t>(cell_index) * ir::kResourceCount + r)};
    cohort_used[r] = {at(cohort_base, static_cast<uint64_t>(flavor) * ir::kResourceCount + r)};
    any_bits = builder_.CreateOr(any_bits, builder_.CreateOr(amounts[r].value,
                                                             builder_.CreateOr(used[r].value, cohort_used[r].value)));
  }
  // Unsigned: a negative value is above the bound too.
  llvm::Value* usual = builder_.CreateICmpULE(any_bits, i64(kGuardedBound));
  llvm::BasicBlock* fast = llvm::BasicBlock::Create(context, "fit.fast", function);
  llvm::BasicBlock* general = llvm::BasicBlock::Create(context, "fit.general", function);
  llvm::BasicBlock* joined = llvm::BasicBlock::Create(context, "fit.done", function);
  builder_.CreateCondBr(usual, fast, general,
                        llvm::MDBuilder(context).createBranchWeights(/*TrueWeight=*/1000, /*FalseWeight=*/1));

  builder_.SetInsertPoint(fast);
  std::array<Bounded, ir::kResourceCount> amounts_fast = amounts, used_fast = used, cohort_fast = cohort_used;
  for (auto* values : {&amounts_fast, &used_fast, &cohort_fast}) {
    for (Bounded& value : *values) value.lo = 0, value.hi = kGuardedBound;
  }
  const auto fast_answer = fits_and_borrows(ref, amounts_fast.data(), used_fast.data(), cohort_fast.data());
  llvm::BasicBlock* fast_end = builder_.GetInsertBlock();
  builder_.CreateBr(joined);

  // The rest: gov_fit, out of line (inlining it into every team and instance type would
  // multiply the code, and the time to compile it, for inputs no cluster has).
  builder_.SetInsertPoint(general);
  const auto general_answer = fit_call(cell_index, flavor, request, usage_base, cohort_base);
  llvm::BasicBlock* general_end = builder_.GetInsertBlock();
  builder_.CreateBr(joined);

  builder_.SetInsertPoint(joined);
  const auto merge = [&](llvm::Value* fast_value, llvm::Value* general_value, const char* name) {
    llvm::PHINode* phi = builder_.CreatePHI(builder_.getInt1Ty(), 2, name);
    phi->addIncoming(fast_value, fast_end);
    phi->addIncoming(general_value, general_end);
    return phi;
  };
  return {merge(fast_answer.first, general_answer.first, "fit.fits"),
          merge(fast_answer.second, general_answer.second, "fit.borrows")};
}

std::pair<llvm::Value*, llvm::Value*> DecisionLowering::fit_call(int64_t cell_index, int64_t flavor,
                                                                 llvm::Value* request,
                                                                 llvm::Value* usage_base,
                                                                 llvm::Value* cohort_base) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Type* i32_type = builder_.getInt32Ty();
  llvm::Type* i64_type = builder_.getInt64Ty();
  llvm::Type* ptr = builder_.getPtrTy();
  auto* input_type = llvm::StructType::get(context, {i32_type, i32_type, ptr, ptr, ptr});
  llvm::BasicBlock& entry = builder_.GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  llvm::Value* input = at_entry.CreateAlloca(input_type);
  const auto set = [&](unsigned field, llvm::Value* value) {
    builder_.CreateStore(value, builder_.CreateConstInBoundsGEP2_32(input_type, input, 0, field));
  };
  const int64_t team = cell_index / static_cast<int64_t>(table_.flavor_count);
  set(0, i32(team));
  set(1, i32(flavor));
  set(2, request);
  set(3, builder_.CreateConstInBoundsGEP1_64(i64_type, usage_base, static_cast<uint64_t>(cell_index) * ir::kResourceCount));
  set(4, builder_.CreateConstInBoundsGEP1_64(i64_type, cohort_base, static_cast<uint64_t>(flavor) * ir::kResourceCount));
  llvm::CallInst* bits = builder_.CreateCall(out_.getFunction(kFitSymbol), {input});
  bits->addFnAttr(llvm::Attribute::NoInline);
  bits->addFnAttr(llvm::Attribute::Cold);
  // ir::FitResult::packed(): fits in bits 0-7, borrows in 8-15, has_quota at bit 24.
  llvm::Value* fits = builder_.CreateICmpEQ(builder_.CreateAnd(bits, i32(0xff | 1 << 24)),
                                            i32(ir::kChargedMask | 1 << 24));
  llvm::Value* borrows = builder_.CreateICmpNE(builder_.CreateAnd(bits, i32(0xff00)), i32(0));
  return {fits, borrows};
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

void DecisionLowering::held_figures_by_table(const ir::FigureSlots& slots, llvm::Value* team,
                                             llvm::Value* usage_base, llvm::Value* cohort_base,
                                             llvm::Value* flavor_base,
                                             const std::function<llvm::Value*(bool, uint8_t)>& slot_address) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::Type* i32_type = builder_.getInt32Ty();
  llvm::Type* i64_type = builder_.getInt64Ty();
  const auto load_i32 = [&](llvm::ArrayType* type, llvm::GlobalVariable* table, llvm::Value* index) {
    return builder_.CreateZExt(
        builder_.CreateLoad(i32_type, builder_.CreateInBoundsGEP(type, table, {i64(0), index})), i64_type);
  };
  llvm::Value* first = load_i32(team_first_type_, team_first_, team);
  llvm::Value* end = load_i32(team_first_type_, team_first_, builder_.CreateAdd(team, i64(1)));
  llvm::BasicBlock* before = builder_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, "figures.walk", function);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "figures.walk.body", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, "figures.walk.done", function);
  builder_.CreateBr(header);

  builder_.SetInsertPoint(header);
  llvm::PHINode* i = builder_.CreatePHI(i64_type, 2, "i");
  i->addIncoming(first, before);
  std::vector<std::pair<bool, uint8_t>> all;
  for (uint8_t slot : slots.team) all.emplace_back(true, slot);
  for (uint8_t slot : slots.cluster) all.emplace_back(false, slot);
  std::vector<llvm::PHINode*> sums;
  for (size_t k = 0; k < all.size(); ++k) {
    sums.push_back(builder_.CreatePHI(i64_type, 2, "sum"));
    sums.back()->addIncoming(i64(0), before);
  }
  builder_.CreateCondBr(builder_.CreateICmpULT(i, end), body, exit);

  builder_.SetInsertPoint(body);
  llvm::Value* flavor = load_i32(team_flavors_type_, team_flavors_, i);
  std::vector<llvm::Value*> next;
  for (size_t k = 0; k < all.size(); ++k) {
    next.push_back(add_figure(sums[k], figure(all[k].first, all[k].second, team, flavor, usage_base,
                                              cohort_base, flavor_base)));
  }
  llvm::BasicBlock* latch = builder_.GetInsertBlock();
  i->addIncoming(builder_.CreateAdd(i, i64(1)), latch);
  for (size_t k = 0; k < all.size(); ++k) sums[k]->addIncoming(next[k], latch);
  builder_.CreateBr(header);

  builder_.SetInsertPoint(exit);
  for (size_t k = 0; k < all.size(); ++k) builder_.CreateStore(sums[k], slot_address(all[k].first, all[k].second));
}

std::pair<llvm::Value*, llvm::Value*> DecisionLowering::fit_by_table(llvm::Value* team,
                                                                     llvm::Value* requested,
                                                                     llvm::Value* request,
                                                                     llvm::Value* usage_base,
                                                                     llvm::Value* cohort_base) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::Type* i8_type = builder_.getInt8Ty();
  llvm::Type* i32_type = builder_.getInt32Ty();
  llvm::Type* i64_type = builder_.getInt64Ty();
  llvm::Type* ptr = builder_.getPtrTy();
  const auto load_i32 = [&](llvm::ArrayType* type, llvm::GlobalVariable* table, llvm::Value* index) {
    return builder_.CreateZExt(
        builder_.CreateLoad(i32_type, builder_.CreateInBoundsGEP(type, table, {i64(0), index})), i64_type);
  };
  llvm::Value* flags = builder_.CreateLoad(i8_type, builder_.CreateInBoundsGEP(team_flags_type_, team_flags_, {i64(0), team}));
  const auto flag = [&](uint8_t bit) { return builder_.CreateICmpNE(builder_.CreateAnd(flags, bit), builder_.getInt8(0)); };
  llvm::Value* first = load_i32(team_first_type_, team_first_, team);
  // An inactive team has no fit: its walk is empty.
  llvm::Value* end = builder_.CreateSelect(
      flag(1), load_i32(team_first_type_, team_first_, builder_.CreateAdd(team, i64(1))), first);
  llvm::Value* try_on = flag(2);
  llvm::Value* prefer_preemption = flag(4);

  auto* input_type = llvm::StructType::get(context, {i32_type, i32_type, ptr, ptr, ptr});
  llvm::BasicBlock& entry = function->getEntryBlock();
  llvm::Value* input = llvm::IRBuilder<>(&entry, entry.begin()).CreateAlloca(input_type);

  llvm::BasicBlock* before = builder_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, "fit.walk", function);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "fit.walk.body", function);
  llvm::BasicBlock* call = llvm::BasicBlock::Create(context, "fit.walk.call", function);
  llvm::BasicBlock* latch = llvm::BasicBlock::Create(context, "fit.walk.next", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, "fit.walk.end", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "fit.walk.done", function);
  builder_.CreateBr(header);

  builder_.SetInsertPoint(done);
  llvm::PHINode* fitted = builder_.CreatePHI(i32_type, 2, "flavor");
  llvm::PHINode* borrowed = builder_.CreatePHI(i8_type, 2, "borrows");

  builder_.SetInsertPoint(header);
  llvm::PHINode* i = builder_.CreatePHI(i64_type, 2, "i");
  llvm::PHINode* borrowing_fit = builder_.CreatePHI(i32_type, 2, "borrowing_fit");
  i->addIncoming(first, before);
  borrowing_fit->addIncoming(i32(-1), before);
  builder_.CreateCondBr(builder_.CreateICmpULT(i, end), body, exit);

  builder_.SetInsertPoint(body);
  llvm::Value* flavor = load_i32(team_flavors_type_, team_flavors_, i);
  llvm::Value* wanted = builder_.CreateOr(builder_.CreateICmpSLT(requested, i64(0)),
                                          builder_.CreateICmpEQ(requested, flavor));
  builder_.CreateCondBr(wanted, call, latch);

  builder_.SetInsertPoint(call);
  const auto set = [&](unsigned field, llvm::Value* value) {
    builder_.CreateStore(value, builder_.CreateConstInBoundsGEP2_32(input_type, input, 0, field));
  };
  llvm::Value* cell_index = builder_.CreateAdd(builder_.CreateMul(team, i64(static_cast<int64_t>(table_.flavor_count))), flavor);
  set(0, builder_.CreateTrunc(team, i32_type));
  set(1, builder_.CreateTrunc(flavor, i32_type));
  set(2, request);
  set(3, builder_.CreateInBoundsGEP(i64_type, usage_base, builder_.CreateMul(cell_index, i64(ir::kResourceCount))));
  set(4, builder_.CreateInBoundsGEP(i64_type, cohort_base, builder_.CreateMul(flavor, i64(ir::kResourceCount))));
  llvm::Value* bits = builder_.CreateCall(out_.getFunction(kFitSymbol), {input});
  llvm::Value* fits = builder_.CreateICmpEQ(builder_.CreateAnd(bits, i32(0xff | 1 << 24)), i32(ir::kChargedMask | 1 << 24));
  llvm::Value* borrows = builder_.CreateICmpNE(builder_.CreateAnd(bits, i32(0xff00)), i32(0));
  // when-can-borrow = try-next-flavor: a borrowing fit is remembered, not taken.
  llvm::Value* take = builder_.CreateAnd(fits, builder_.CreateOr(builder_.CreateNot(try_on), builder_.CreateNot(borrows)));
  llvm::Value* flavor32 = builder_.CreateTrunc(flavor, i32_type);
  fitted->addIncoming(flavor32, call);
  borrowed->addIncoming(builder_.CreateZExt(borrows, i8_type), call);
  llvm::Value* first_borrowing = builder_.CreateAnd(builder_.CreateAnd(fits, borrows),
                                                    builder_.CreateICmpSLT(borrowing_fit, i32(0)));
  llvm::Value* remembered = builder_.CreateSelect(first_borrowing, flavor32, borrowing_fit);
  builder_.CreateCondBr(take, done, latch);

  builder_.SetInsertPoint(latch);
  llvm::PHINode* carried = builder_.CreatePHI(i32_type, 2, "borrowing_fit.next");
  carried->addIncoming(borrowing_fit, body);
  carried->addIncoming(remembered, call);
  i->addIncoming(builder_.CreateAdd(i, i64(1)), latch);
  borrowing_fit->addIncoming(carried, latch);
  builder_.CreateBr(header);

  // No fit without borrowing: the borrowing fit, unless the team prefers preemption.
  builder_.SetInsertPoint(exit);
  llvm::Value* chosen = builder_.CreateSelect(prefer_preemption, i32(-1), borrowing_fit);
  fitted->addIncoming(chosen, exit);
  borrowed->addIncoming(builder_.CreateZExt(builder_.CreateICmpSGE(chosen, i32(0)), i8_type), exit);
  builder_.CreateBr(done);

  builder_.SetInsertPoint(done);
  return {fitted, borrowed};
}

std::pair<llvm::Value*, llvm::Value*> DecisionLowering::deny_and_matches_by_table(llvm::Value* verdicts) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::Type* i8_type = builder_.getInt8Ty();
  llvm::Type* i32_type = builder_.getInt32Ty();
  llvm::Type* i64_type = builder_.getInt64Ty();
  std::vector<llvm::Constant*> flags;
  for (const ir::Rule& rule : module_.rules)
    flags.push_back(builder_.getInt8(rule.action == ir::RuleAction::deny ? 1 : 0));
  auto* flags_type = llvm::ArrayType::get(i8_type, flags.size());
  llvm::GlobalVariable* table = constant_table(llvm::ConstantArray::get(flags_type, flags), "gov.rule_denies");

  llvm::BasicBlock* before = builder_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, "conclude.walk", function);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "conclude.walk.body", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, "conclude.walk.done", function);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* i = builder_.CreatePHI(i64_type, 2, "i");
  llvm::PHINode* deny = builder_.CreatePHI(i32_type, 2, "deny");
  llvm::PHINode* matches = builder_.CreatePHI(i32_type, 2, "matches");
  i->addIncoming(i64(0), before);
  deny->addIncoming(i32(-1), before);
  matches->addIncoming(i32(0), before);
  builder_.CreateCondBr(builder_.CreateICmpULT(i, i64(static_cast<int64_t>(module_.rules.size()))), body, exit);

  builder_.SetInsertPoint(body);
  llvm::Value* matched = builder_.CreateICmpNE(
      builder_.CreateLoad(i8_type, builder_.CreateInBoundsGEP(i8_type, verdicts, i)), builder_.getInt8(0));
  llvm::Value* denies = builder_.CreateICmpNE(
      builder_.CreateLoad(i8_type, builder_.CreateInBoundsGEP(flags_type, table, {i64(0), i})), builder_.getInt8(0));
  llvm::Value* first = builder_.CreateAnd(builder_.CreateAnd(matched, denies), builder_.CreateICmpSLT(deny, i32(0)));
  deny->addIncoming(builder_.CreateSelect(first, builder_.CreateTrunc(i, i32_type), deny), body);
  matches->addIncoming(builder_.CreateAdd(matches, builder_.CreateZExt(matched, i32_type)), body);
  i->addIncoming(builder_.CreateAdd(i, i64(1)), body);
  builder_.CreateBr(header);

  builder_.SetInsertPoint(exit);
  return {deny, matches};
}

void DecisionLowering::decide() {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Type* i64_type = builder_.getInt64Ty();
  llvm::Type* i32_type = builder_.getInt32Ty();
  llvm::Function* function = declare(kDecideSymbol, builder_.getVoidTy(), {ptr, ptr, ptr});
  for (unsigned written : {1u, 2u}) function->removeParamAttr(written, llvm::Attribute::ReadOnly);
  llvm::Value* in = function->getArg(0);
  llvm::Value* verdicts = function->getArg(1);
  llvm::Value* result = function->getArg(2);
  const size_t rules = module_.rules.size();
  const int64_t teams = static_cast<int64_t>(module_.teams.size());
  const int64_t flavors = static_cast<int64_t>(module_.flavors.size());
  llvm::BasicBlock* entry = builder_.GetInsertBlock();
  const auto store_result = [&](llvm::Value* deny, llvm::Value* warnings, llvm::Value* flavor,
                                llvm::Value* borrows) {
    builder_.CreateStore(deny, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), result, 0));
    builder_.CreateStore(warnings, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), result, 4));
    builder_.CreateStore(flavor, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), result, 8));
    builder_.CreateStore(borrows, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), result, 12));
  };
  const auto load_ptr = [&](unsigned offset) {
    return builder_.CreateLoad(ptr, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), in, offset));
  };
  llvm::Value* task = load_ptr(0);
  llvm::Value* labels = load_ptr(8);
  llvm::Value* usage_base = load_ptr(16);
  llvm::Value* cohort_base = load_ptr(24);
  llvm::Value* flavor_base = load_ptr(32);
  const auto task_field = [&](ir::TaskField f) {
    return builder_.CreateLoad(i64_type, builder_.CreateConstInBoundsGEP1_64(i64_type, task, static_cast<uint64_t>(f)));
  };
  llvm::Value* team = task_field(ir::TaskField::team);
  llvm::Value* requested = task_field(ir::TaskField::flavor);

  // Out of range (ir::decide_input_in_range): all verdicts 0, the empty result.
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "in_range", function);
  llvm::BasicBlock* outside = llvm::BasicBlock::Create(context, "out_of_range", function);
  llvm::Value* in_range = builder_.CreateAnd(
      builder_.CreateAnd(builder_.CreateICmpSGE(team, i64(0)), builder_.CreateICmpSLT(team, i64(teams))),
      builder_.CreateAnd(builder_.CreateICmpSGE(requested, i64(-1)), builder_.CreateICmpSLT(requested, i64(flavors))));
  builder_.CreateCondBr(in_range, body, outside);
  builder_.SetInsertPoint(outside);
  if (rules > 0) builder_.CreateMemSet(verdicts, builder_.getInt8(0), rules, llvm::MaybeAlign(1));
  store_result(i32(-1), i32(0), i32(-1), builder_.getInt8(0));
  builder_.CreateRetVoid();
  builder_.SetInsertPoint(body);

  // The rules' input on the stack: the task's fields, the figures rules read, the labels.
  llvm::StructType* input_type = llvm::StructType::getTypeByName(context, "gov.RuleInput");
  if (input_type == nullptr) {  // no rule reads its input: the same layout, named here
    input_type = llvm::StructType::create(
        context,
        {llvm::ArrayType::get(i64_type, ir::kTaskFieldCount),
         llvm::ArrayType::get(i64_type, ir::kTeamStatCount * ir::kResourceCount),
         llvm::ArrayType::get(i64_type, ir::kClusterStatCount * ir::kResourceCount), ptr},
        "gov.RuleInput");
  }
  llvm::Function* rules_function = out_.getFunction("gov_rules");
  if (rules > 0 && rules_function != nullptr) {
    // In the entry block, so that SROA splits it into registers (an alloca elsewhere is a
    // dynamic stack allocation, and its copy of the task's fields would stay a memcpy).
    llvm::IRBuilder<> at_entry(entry, entry->begin());
    llvm::Value* input = at_entry.CreateAlloca(input_type);
    builder_.CreateMemCpy(input, llvm::MaybeAlign(8), task, llvm::MaybeAlign(8), ir::kTaskFieldCount * 8);
    builder_.CreateStore(labels, builder_.CreateConstInBoundsGEP2_32(input_type, input, 0, 3));
    const ir::FigureSlots slots = ir::figure_slots(module_);
    const auto slot_address = [&](bool team_stat, uint8_t slot) {
      return builder_.CreateInBoundsGEP(input_type, input,
                                        {builder_.getInt32(0), builder_.getInt32(team_stat ? 1 : 2),
                                         builder_.getInt32(slot)});
    };
    for (uint8_t slot : slots.team) builder_.CreateStore(i64(0), slot_address(true, slot));
    for (uint8_t slot : slots.cluster) builder_.CreateStore(i64(0), slot_address(false, slot));
    if ((!slots.team.empty() || !slots.cluster.empty()) && !table_.cells.empty()) {
      // The instance type the task names (one, dynamic), or its team's (a switch per team,
      // each summing over the team's types with their constants folded in).
      llvm::BasicBlock* named = llvm::BasicBlock::Create(context, "figures.named", function);
      llvm::BasicBlock* held = llvm::BasicBlock::Create(context, "figures.held", function);
      llvm::BasicBlock* joined = llvm::BasicBlock::Create(context, "figures.done", function);
      builder_.CreateCondBr(builder_.CreateICmpSGE(requested, i64(0)), named, held);
      builder_.SetInsertPoint(named);
      for (bool team_stat : {true, false}) {
        for (uint8_t slot : team_stat ? slots.team : slots.cluster) {
          builder_.CreateStore(figure(team_stat, slot, team, requested, usage_base, cohort_base, flavor_base),
                               slot_address(team_stat, slot));
        }
      }
      builder_.CreateBr(joined);
      builder_.SetInsertPoint(held);
      if (!unrolled()) {
        held_figures_by_table(slots, team, usage_base, cohort_base, flavor_base, slot_address);
        builder_.CreateBr(joined);
      }
      llvm::SwitchInst* by_team = unrolled() ? builder_.CreateSwitch(team, joined, static_cast<unsigned>(teams)) : nullptr;
      for (int64_t t = 0; by_team != nullptr && t < teams; ++t) {
        llvm::BasicBlock* block = llvm::BasicBlock::Create(context, "figures.team" + std::to_string(t), function, joined);
        by_team->addCase(builder_.getInt64(static_cast<uint64_t>(t)), block);
        builder_.SetInsertPoint(block);
        for (bool team_stat : {true, false}) {
          for (uint8_t slot : team_stat ? slots.team : slots.cluster) {
            llvm::Value* sum = i64(0);
            for (const ir::FlavorQuota& quota : module_.teams[static_cast<size_t>(t)].quotas) {
              sum = add_figure(sum, figure(team_stat, slot, i64(t), i64(quota.flavor), usage_base,
                                           cohort_base, flavor_base));
            }
            builder_.CreateStore(sum, slot_address(team_stat, slot));
          }
        }
        builder_.CreateBr(joined);
      }
      builder_.SetInsertPoint(joined);
    }
    builder_.CreateCall(rules_function, {input, verdicts});
  }

  // The first deny rule and the warnings: unrolled for a few rules, a loop over a constant
  // table of deny flags for many (one block of thousands of selects compiles slowly).
  llvm::Value* deny = i32(-1);
  llvm::Value* matches = i32(0);
  if (rules > kUnrolledRules) std::tie(deny, matches) = deny_and_matches_by_table(verdicts);
  for (size_t i = rules > kUnrolledRules ? 0 : rules; i-- > 0;) {
    llvm::Value* matched = builder_.CreateICmpNE(
        builder_.CreateLoad(builder_.getInt8Ty(), builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), verdicts, i)),
        builder_.getInt8(0));
    matches = builder_.CreateAdd(matches, builder_.CreateZExt(matched, i32_type));
    if (module_.rules[i].action == ir::RuleAction::deny)
      deny = builder_.CreateSelect(matched, i32(static_cast<int64_t>(i)), deny);
  }
  llvm::Value* warnings =
      builder_.CreateSub(matches, builder_.CreateZExt(builder_.CreateICmpSGE(deny, i32(0)), i32_type));

  // The fit: per team, its instance types in declared order, constants folded.
  llvm::Value* request = builder_.CreateConstInBoundsGEP1_64(i64_type, task, static_cast<uint64_t>(ir::TaskField::gpus));
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", function);
  llvm::BasicBlock* none = llvm::BasicBlock::Create(context, "no_fit", function);
  llvm::BasicBlock* fitting = llvm::BasicBlock::Create(context, "fit", function);
  builder_.CreateCondBr(builder_.CreateICmpSGE(deny, i32(0)), none, fitting);  // rejected: not fitted
  builder_.SetInsertPoint(fitting);
  llvm::SwitchInst* dispatch = builder_.CreateSwitch(team, none, static_cast<unsigned>(teams));
  builder_.SetInsertPoint(done);
  llvm::PHINode* fitted = builder_.CreatePHI(i32_type, 4, "flavor");
  llvm::PHINode* borrowed = builder_.CreatePHI(builder_.getInt8Ty(), 4, "borrows");
  builder_.SetInsertPoint(none);
  fitted->addIncoming(i32(-1), none);
  borrowed->addIncoming(builder_.getInt8(0), none);
  builder_.CreateBr(done);
  if (!unrolled()) {
    llvm::BasicBlock* walk = llvm::BasicBlock::Create(context, "fit.table", function, done);
    dispatch->setDefaultDest(walk);
    builder_.SetInsertPoint(walk);
    const auto [flavor, borrows] = fit_by_table(team, requested, request, usage_base, cohort_base);
    fitted->addIncoming(flavor, builder_.GetInsertBlock());
    borrowed->addIncoming(borrows, builder_.GetInsertBlock());
    builder_.CreateBr(done);
  }
  for (int64_t t = 0; unrolled() && t < teams; ++t) {
    const ir::Team& team_def = module_.teams[static_cast<size_t>(t)];
    if (!team_def.active || team_def.quotas.empty()) continue;  // the default: no fit
    llvm::BasicBlock* next = llvm::BasicBlock::Create(context, "team" + std::to_string(t), function, done);
    dispatch->addCase(builder_.getInt64(static_cast<uint64_t>(t)), next);
    // when-can-borrow = try-next-flavor: a borrowing fit is remembered, not taken.
    const bool try_on = team_def.when_can_borrow == ir::WhenCanBorrow::try_next_flavor;
    llvm::Value* borrowing_fit = i32(-1);
    for (const ir::FlavorQuota& quota : team_def.quotas) {
      builder_.SetInsertPoint(next);
      next = llvm::BasicBlock::Create(context, "", function, done);
      const int64_t cell_index = t * flavors + quota.flavor;
      const auto [fits, borrows] = guarded_fit(cell_index, quota.flavor, request, usage_base, cohort_base);
      llvm::Value* wanted = builder_.CreateOr(builder_.CreateICmpSLT(requested, i64(0)),
                                              builder_.CreateICmpEQ(requested, i64(quota.flavor)));
      llvm::Value* take = builder_.CreateAnd(fits, wanted);
      if (try_on) {
        llvm::Value* first_borrowing = builder_.CreateAnd(
            builder_.CreateAnd(take, borrows), builder_.CreateICmpEQ(borrowing_fit, i32(-1)));
        borrowing_fit = builder_.CreateSelect(first_borrowing, i32(quota.flavor), borrowing_fit);
        take = builder_.CreateAnd(take, builder_.CreateNot(borrows));
      }
      llvm::BasicBlock* here = builder_.GetInsertBlock();
      fitted->addIncoming(i32(quota.flavor), here);
      borrowed->addIncoming(builder_.CreateZExt(borrows, builder_.getInt8Ty()), here);
      builder_.CreateCondBr(take, done, next);
    }
    builder_.SetInsertPoint(next);
    if (team_def.flavor_preference == ir::FlavorPreference::preemption_over_borrowing)
      borrowing_fit = i32(-1);
    fitted->addIncoming(borrowing_fit, next);
    borrowed->addIncoming(
        builder_.CreateZExt(builder_.CreateICmpSGE(borrowing_fit, i32(0)), builder_.getInt8Ty()), next);
    builder_.CreateBr(done);
  }
  builder_.SetInsertPoint(done);
  store_result(deny, warnings, fitted, borrowed);
  builder_.CreateRetVoid();
}

}  // namespace

void lower_decisions(const ir::Module& module, llvm::Module& out, const llvm::TargetMachine& machine) {
  DecisionLowering lowering(module, out, machine);
  lowering.build_tables();
  lowering.fit();  // first: gov_decide calls it
  lowering.decide();
  lowering.priority();
  lowering.may_preempt();
}

}  // namespace gov::jit
