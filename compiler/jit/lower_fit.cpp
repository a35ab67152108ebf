// gov_fit: ir::fit(...).packed() over the quota-cell tables, and the per-resource fit that
// gov_decide inlines.
#include "compiler/jit/decision_lowering.hpp"

#include <array>
#include <cstddef>
#include <utility>

namespace gov::jit::detail {

// The generated code addresses FitInput as { i32, i32, ptr, ptr, ptr }: the C++ layout must be that.
static_assert(offsetof(ir::FitInput, flavor) == 4 && offsetof(ir::FitInput, request) == 8 &&
              offsetof(ir::FitInput, usage) == 16 && offsetof(ir::FitInput, cohort_usage) == 24);

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

void DecisionLowering::fit() {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Function* function = declare(kFitSymbol, builder_.getInt32Ty(), {ptr});
  if (declared_.cells.empty()) {  // no quota anywhere: never has_quota
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
      builder_.CreateICmpULT(team, i64(static_cast<int64_t>(declared_.team_count))),
      builder_.CreateICmpULT(flavor, i64(static_cast<int64_t>(declared_.flavor_count))));
  llvm::BasicBlock* lookup = llvm::BasicBlock::Create(context, "lookup.team", function);
  llvm::BasicBlock* compute = llvm::BasicBlock::Create(context, "has_quota", function);
  llvm::BasicBlock* none = llvm::BasicBlock::Create(context, "no_quota", function);
  builder_.CreateCondBr(in_range, lookup, none);
  builder_.SetInsertPoint(none);
  builder_.CreateRet(i32(0));
  builder_.SetInsertPoint(lookup);
  const auto [cell, present, slot] = cell_lookup(team, flavor);
  builder_.CreateCondBr(present, compute, none);

  // Only now are the input's pointers read: the reference reads them only for a quota.
  builder_.SetInsertPoint(compute);
  llvm::Value* pool = pool_at(flavor);
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

}  // namespace gov::jit::detail
