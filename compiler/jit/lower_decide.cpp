// gov_decide: the rules, the first deny, the warnings and the fit of the task's
// team, unrolled per team for small policies and walking the teams' lists of declared quota
// cells for large ones.
#include "compiler/jit/decision_lowering.hpp"

#include <llvm/IR/MDBuilder.h>

#include <array>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gov::jit::detail {

// The generated code reads DecideInput, DecideResult and RuleInput at these offsets.
static_assert(offsetof(ir::DecideInput, labels) == 8 && offsetof(ir::DecideInput, usage) == 16 &&
              offsetof(ir::UsageView, cohort_usage) == 8 && offsetof(ir::UsageView, flavor_usage) == 16);
static_assert(offsetof(ir::DecideResult, warnings) == 4 && offsetof(ir::DecideResult, flavor) == 8 &&
              offsetof(ir::DecideResult, borrows) == 12);
static_assert(offsetof(ir::RuleInput, labels) == (ir::kTaskFieldCount + 40) * 8);

llvm::Value* DecisionLowering::add_figure(llvm::Value* a, llvm::Value* b) {
  llvm::Value* pair = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_with_overflow, a, b);
  return builder_.CreateSelect(builder_.CreateExtractValue(pair, 1),
                               i64(std::numeric_limits<int64_t>::max()),
                               builder_.CreateExtractValue(pair, 0));
}

llvm::Value* DecisionLowering::figure(bool team_stat, uint8_t slot, const CellRef& cell, llvm::Value* row,
                                      llvm::Value* flavor, llvm::Value* usage_base, llvm::Value* cohort_base,
                                      llvm::Value* flavor_base) {
  const unsigned r = slot % ir::kResourceCount;
  llvm::Type* i64_type = builder_.getInt64Ty();
  const auto element = [&](llvm::Value* base, llvm::Value* index) {
    llvm::Value* at = builder_.CreateAdd(builder_.CreateMul(index, i64(ir::kColumnCount)), i64(r));
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
  llvm::Value* used = element(usage_base, row);
  llvm::Value* nominal = cell_field(cell, kNominal, r).value;
  switch (static_cast<ir::TeamStat>(slot / ir::kResourceCount)) {
    case ir::TeamStat::nominal:
      return nominal;
    case ir::TeamStat::used:
      return used;
    case ir::TeamStat::borrowed:
      return smax(i64(0), sub_sat(used, nominal));
    case ir::TeamStat::borrowing_limit:
      return cell_field(cell, kBorrowingLimit, r).value;
    case ir::TeamStat::available: {
      if (cell.known != nullptr && !cell.known->present) return i64(0);
      const Bounded value = available_of(cell, r, {used}, {element(cohort_base, flavor)});
      if (cell.known != nullptr) return value.value;
      llvm::Value* present = builder_.CreateICmpNE(cell_field(cell, kPresent, 0).value, i64(0));
      return builder_.CreateSelect(present, value.value, i64(0));
    }
  }
  return i64(0);
}

DecisionLowering::FitLoads DecisionLowering::fit_loads(llvm::Value* request, llvm::Value* row,
                                                       llvm::Value* flavor, llvm::Value* usage_base,
                                                       llvm::Value* cohort_base) {
  llvm::Type* i64_type = builder_.getInt64Ty();
  const auto at = [&](llvm::Value* base, llvm::Value* at_row, size_t r) {
    llvm::Value* index = at_row == nullptr ? i64(static_cast<int64_t>(r))
                                           : builder_.CreateAdd(builder_.CreateMul(at_row, i64(ir::kColumnCount)),
                                                                i64(static_cast<int64_t>(r)));
    return builder_.CreateLoad(i64_type, builder_.CreateInBoundsGEP(i64_type, base, index));
  };
  FitLoads loads;
  llvm::Value* any_bits = i64(0);
  for (ir::Resource resource : ir::kAllResources) {
    if (!ir::is_charged(resource)) continue;
    const size_t r = ir::index(resource);
    loads.amounts[r] = {at(request, nullptr, r)};
    loads.used[r] = {at(usage_base, row, r)};
    loads.cohort_used[r] = {at(cohort_base, flavor, r)};
    any_bits = builder_.CreateOr(any_bits, builder_.CreateOr(loads.amounts[r].value,
                                                             builder_.CreateOr(loads.used[r].value,
                                                                               loads.cohort_used[r].value)));
  }
  // Unsigned: a negative value is above the bound too.
  loads.usual = builder_.CreateICmpULE(any_bits, i64(kGuardedBound));
  return loads;
}

/// The fit twice: a fast path for the usual inputs (every request and usage in [0,
/// kGuardedBound]: with the cell's constants, or the intervals of the table's values for a
/// loaded cell, no sum or difference can saturate and the arithmetic is plain) and gov_fit,
/// out of line, for the rest.
std::pair<llvm::Value*, llvm::Value*> DecisionLowering::guarded(
    const FitLoads& loads, llvm::Value* team, llvm::Value* flavor, llvm::Value* row, llvm::Value* request,
    llvm::Value* usage_base, llvm::Value* cohort_base,
    const std::function<std::pair<llvm::Value*, llvm::Value*>(const FitLoads&)>& fast_fit) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* fast = llvm::BasicBlock::Create(context, "fit.fast", function);
  llvm::BasicBlock* general = llvm::BasicBlock::Create(context, "fit.general", function);
  llvm::BasicBlock* joined = llvm::BasicBlock::Create(context, "fit.done", function);
  builder_.CreateCondBr(loads.usual, fast, general,
                        llvm::MDBuilder(context).createBranchWeights(/*TrueWeight=*/1000, /*FalseWeight=*/1));

  builder_.SetInsertPoint(fast);
  FitLoads bounded = loads;
  for (auto* values : {&bounded.amounts, &bounded.used, &bounded.cohort_used}) {
    for (Bounded& value : *values) value.lo = 0, value.hi = kGuardedBound;
  }
  const auto fast_answer = fast_fit(bounded);
  llvm::BasicBlock* fast_end = builder_.GetInsertBlock();
  builder_.CreateBr(joined);

  // The rest: gov_fit, out of line (inlining it into every team and instance type would
  // multiply the code, and the time to compile it, for inputs no cluster has).
  builder_.SetInsertPoint(general);
  const auto general_answer = fit_call(team, flavor, row, request, usage_base, cohort_base);
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

/// The fit of one known team and declared quota: the cell's constants folded into the fast path.
std::pair<llvm::Value*, llvm::Value*> DecisionLowering::guarded_fit(int64_t team, size_t quota,
                                                                    llvm::Value* request,
                                                                    llvm::Value* usage_base,
                                                                    llvm::Value* cohort_base) {
  const uint32_t flavor = declared_.flavors[quota];
  CellRef ref;
  ref.known = &declared_.cells[quota];
  ref.known_pool = &declared_.cohort_quota[flavor];
  const int64_t row = static_cast<int64_t>(quota) + 1;  // its slot (ir::QuotaTable::slot)
  const FitLoads loads = fit_loads(request, i64(row), i64(flavor), usage_base, cohort_base);
  return guarded(loads, i64(team), i64(flavor), i64(row), request, usage_base, cohort_base, [&](const FitLoads& fast) {
    return fits_and_borrows(ref, fast.amounts.data(), fast.used.data(), fast.cohort_used.data());
  });
}

std::pair<llvm::Value*, llvm::Value*> DecisionLowering::fit_call(llvm::Value* team, llvm::Value* flavor,
                                                                 llvm::Value* row, llvm::Value* request,
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
  set(0, builder_.CreateTrunc(team, i32_type));
  set(1, builder_.CreateTrunc(flavor, i32_type));
  set(2, request);
  set(3, builder_.CreateInBoundsGEP(i64_type, usage_base, builder_.CreateMul(row, i64(ir::kColumnCount))));
  set(4, builder_.CreateInBoundsGEP(i64_type, cohort_base, builder_.CreateMul(flavor, i64(ir::kColumnCount))));
  llvm::CallInst* bits = builder_.CreateCall(out_.getFunction(kFitSymbol), {input});
  bits->addFnAttr(llvm::Attribute::NoInline);
  bits->addFnAttr(llvm::Attribute::Cold);
  // ir::FitResult::packed(): fits in bits 0-7, borrows in 8-15, has_quota at bit 24.
  llvm::Value* fits = builder_.CreateICmpEQ(builder_.CreateAnd(bits, i32(0xff | 1 << 24)),
                                            i32(ir::kChargedMask | 1 << 24));
  llvm::Value* borrows = builder_.CreateICmpNE(builder_.CreateAnd(bits, i32(0xff00)), i32(0));
  return {fits, borrows};
}

void DecisionLowering::held_figures_by_table(const ir::FigureSlots& slots, llvm::Value* team,
                                             llvm::Value* usage_base, llvm::Value* cohort_base,
                                             llvm::Value* flavor_base,
                                             const std::function<llvm::Value*(bool, uint8_t)>& slot_address) {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::Type* i64_type = builder_.getInt64Ty();
  llvm::Value* first = load_u32(team_first_type_, team_first_, team);
  llvm::Value* end = load_u32(team_first_type_, team_first_, builder_.CreateAdd(team, i64(1)));
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
  llvm::Value* flavor = load_u32(team_flavors_type_, team_flavors_, i);
  CellRef cell;
  cell.cell = cell_number(load_u32(team_flavors_type_, team_cells_, i));
  cell.pool = pool_at(flavor);
  llvm::Value* row = builder_.CreateAdd(i, i64(1));  // declared cell i's slot
  std::vector<llvm::Value*> next;
  for (size_t k = 0; k < all.size(); ++k) {
    next.push_back(add_figure(sums[k], figure(all[k].first, all[k].second, cell, row, flavor, usage_base,
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
  llvm::Value* flags = builder_.CreateLoad(i8_type, builder_.CreateInBoundsGEP(team_flags_type_, team_flags_, {i64(0), team}));
  const auto flag = [&](uint8_t bit) { return builder_.CreateICmpNE(builder_.CreateAnd(flags, bit), builder_.getInt8(0)); };
  llvm::Value* first = load_u32(team_first_type_, team_first_, team);
  // An inactive team has no fit: its walk is empty.
  llvm::Value* end = builder_.CreateSelect(
      flag(1), load_u32(team_first_type_, team_first_, builder_.CreateAdd(team, i64(1))), first);
  llvm::Value* try_on = flag(2);
  llvm::Value* prefer_preemption = flag(4);

  llvm::BasicBlock* before = builder_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, "fit.walk", function);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "fit.walk.body", function);
  llvm::BasicBlock* call = llvm::BasicBlock::Create(context, "fit.walk.test", function);
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
  llvm::Value* flavor = load_u32(team_flavors_type_, team_flavors_, i);
  llvm::Value* wanted = builder_.CreateOr(builder_.CreateICmpSLT(requested, i64(0)),
                                          builder_.CreateICmpEQ(requested, flavor));
  builder_.CreateCondBr(wanted, call, latch);

  // The team's cell there, loaded (the team's list holds its number), on the guarded fast path.
  builder_.SetInsertPoint(call);
  CellRef cell;
  cell.cell = cell_number(load_u32(team_flavors_type_, team_cells_, i));
  cell.pool = pool_at(flavor);
  llvm::Value* row = builder_.CreateAdd(i, i64(1));  // declared cell i's slot
  const FitLoads loads = fit_loads(request, row, flavor, usage_base, cohort_base);
  const auto [fits, borrows] = guarded(loads, team, flavor, row, request, usage_base, cohort_base, [&](const FitLoads& fast) {
    return fits_and_borrows(cell, fast.amounts.data(), fast.used.data(), fast.cohort_used.data());
  });
  llvm::BasicBlock* tested = builder_.GetInsertBlock();
  // when-can-borrow = try-next-flavor: a borrowing fit is remembered, not taken.
  llvm::Value* take = builder_.CreateAnd(fits, builder_.CreateOr(builder_.CreateNot(try_on), builder_.CreateNot(borrows)));
  llvm::Value* flavor32 = builder_.CreateTrunc(flavor, i32_type);
  fitted->addIncoming(flavor32, tested);
  borrowed->addIncoming(builder_.CreateZExt(borrows, i8_type), tested);
  llvm::Value* first_borrowing = builder_.CreateAnd(builder_.CreateAnd(fits, borrows),
                                                    builder_.CreateICmpSLT(borrowing_fit, i32(0)));
  llvm::Value* remembered = builder_.CreateSelect(first_borrowing, flavor32, borrowing_fit);
  builder_.CreateCondBr(take, done, latch);

  builder_.SetInsertPoint(latch);
  llvm::PHINode* carried = builder_.CreatePHI(i32_type, 2, "borrowing_fit.next");
  carried->addIncoming(borrowing_fit, body);
  carried->addIncoming(remembered, tested);
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

void DecisionLowering::decide() {
  llvm::LLVMContext& context = out_.getContext();
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Type* i64_type = builder_.getInt64Ty();
  llvm::Type* i32_type = builder_.getInt32Ty();
  llvm::Function* function = declare(kDecideSymbol, builder_.getVoidTy(), {ptr, ptr});
  function->removeParamAttr(1, llvm::Attribute::ReadOnly);
  llvm::Value* in = function->getArg(0);
  llvm::Value* result = function->getArg(1);
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

  // Out of range (ir::decide_input_in_range): the empty result.
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "in_range", function);
  llvm::BasicBlock* outside = llvm::BasicBlock::Create(context, "out_of_range", function);
  llvm::Value* in_range = builder_.CreateAnd(
      builder_.CreateAnd(builder_.CreateICmpSGE(team, i64(0)), builder_.CreateICmpSLT(team, i64(teams))),
      builder_.CreateAnd(builder_.CreateICmpSGE(requested, i64(-1)), builder_.CreateICmpSLT(requested, i64(flavors))));
  builder_.CreateCondBr(in_range, body, outside);
  builder_.SetInsertPoint(outside);
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
  // The rules through the index (lower_rules.cpp): their first matching deny and their number
  // of matches come back with the verdicts, so no verdict is read again here. The verdicts go to
  // a buffer of this frame that nothing reads: once the rules are inlined (small policies, the
  // hot path's) their stores are dead and dropped, one store per rule (about 13 instructions a
  // decision of the workshop policy); else it is at most kMaxRules bytes of stack.
  llvm::Value* deny = i32(-1);
  llvm::Value* matches = i32(0);
  llvm::Function* rules_function = out_.getFunction(kIndexedRulesSymbol);
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
    if ((!slots.team.empty() || !slots.cluster.empty()) && cell_table_ != nullptr) {
      // The instance type the task names (one, dynamic), or its team's, summed: each team and
      // instance type with its cell's constants folded in (a switch per team, then per named
      // type), or for large policies the cell found in the team's list.
      llvm::BasicBlock* named = llvm::BasicBlock::Create(context, "figures.named", function);
      llvm::BasicBlock* held = llvm::BasicBlock::Create(context, "figures.held", function);
      llvm::BasicBlock* joined = llvm::BasicBlock::Create(context, "figures.done", function);
      builder_.CreateCondBr(builder_.CreateICmpSGE(requested, i64(0)), named, held);
      const auto store_figures = [&](const CellRef& cell, llvm::Value* row, llvm::Value* flavor) {
        for (bool team_stat : {true, false}) {
          for (uint8_t slot : team_stat ? slots.team : slots.cluster) {
            builder_.CreateStore(figure(team_stat, slot, cell, row, flavor, usage_base, cohort_base, flavor_base),
                                 slot_address(team_stat, slot));
          }
        }
        builder_.CreateBr(joined);
      };
      builder_.SetInsertPoint(named);
      if (!unrolled()) {
        const FoundCell found = cell_lookup(team, requested);
        CellRef cell;
        cell.cell = found.cell;
        cell.pool = pool_at(requested);
        store_figures(cell, found.slot, requested);
      } else {
        // A quota the team does not declare: the absent cell (team figures 0 but what it uses).
        static const ir::QuotaCell kAbsentCell{};
        llvm::BasicBlock* absent = llvm::BasicBlock::Create(context, "figures.named.absent", function, joined);
        llvm::SwitchInst* by_team = builder_.CreateSwitch(team, absent, static_cast<unsigned>(teams));
        for (int64_t t = 0; t < teams; ++t) {
          const uint32_t first = declared_.team_first[static_cast<size_t>(t)];
          const uint32_t end = declared_.team_first[static_cast<size_t>(t) + 1];
          if (first == end) continue;
          llvm::BasicBlock* block = llvm::BasicBlock::Create(context, "figures.named.team" + std::to_string(t), function, joined);
          by_team->addCase(builder_.getInt64(static_cast<uint64_t>(t)), block);
          builder_.SetInsertPoint(block);
          llvm::SwitchInst* by_flavor = builder_.CreateSwitch(requested, absent, end - first);
          for (uint32_t k = first; k < end; ++k) {
            const uint32_t flavor = declared_.flavors[k];
            llvm::BasicBlock* one = llvm::BasicBlock::Create(context, "", function, joined);
            by_flavor->addCase(builder_.getInt64(flavor), one);
            builder_.SetInsertPoint(one);
            CellRef cell;
            cell.known = &declared_.cells[k];
            cell.known_pool = &declared_.cohort_quota[flavor];
            store_figures(cell, i64(static_cast<int64_t>(k) + 1), i64(flavor));
          }
        }
        builder_.SetInsertPoint(absent);
        CellRef cell;
        cell.known = &kAbsentCell;
        store_figures(cell, i64(0), requested);  // the absent cell's row: all zeros
      }
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
            for (uint32_t k = declared_.team_first[static_cast<size_t>(t)]; k < declared_.team_first[static_cast<size_t>(t) + 1]; ++k) {
              const uint32_t flavor = declared_.flavors[k];
              CellRef cell;
              cell.known = &declared_.cells[k];
              cell.known_pool = &declared_.cohort_quota[flavor];
              sum = add_figure(sum, figure(team_stat, slot, cell, i64(static_cast<int64_t>(k) + 1), i64(flavor), usage_base,
                                           cohort_base, flavor_base));
            }
            builder_.CreateStore(sum, slot_address(team_stat, slot));
          }
        }
        builder_.CreateBr(joined);
      }
      builder_.SetInsertPoint(joined);
    }
    llvm::Value* verdicts = at_entry.CreateAlloca(llvm::ArrayType::get(builder_.getInt8Ty(), rules));
    llvm::Value* packed = builder_.CreateCall(rules_function, {input, verdicts});
    deny = builder_.CreateTrunc(packed, i32_type);
    matches = builder_.CreateTrunc(builder_.CreateLShr(packed, 32), i32_type);
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
    for (uint32_t k = declared_.team_first[static_cast<size_t>(t)]; k < declared_.team_first[static_cast<size_t>(t) + 1]; ++k) {
      const ir::FlavorQuota& quota = team_def.quotas[k - declared_.team_first[static_cast<size_t>(t)]];
      builder_.SetInsertPoint(next);
      next = llvm::BasicBlock::Create(context, "", function, done);
      const auto [fits, borrows] = guarded_fit(t, k, request, usage_base, cohort_base);
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

}  // namespace gov::jit::detail
