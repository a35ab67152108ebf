// gov_priority (a class's weight from a constant table) and gov_may_preempt (the team
// policies of ir::may_preempt).
#include "compiler/jit/decision_lowering.hpp"

#include <cstddef>
#include <vector>

namespace gov::jit::detail {

// The generated code addresses PreemptionPair as { i32, i32, i64, i32, i32, i64 }: the C++
// layout must be that.
static_assert(offsetof(ir::PreemptionPair, preemptor_priority) == 4 &&
              offsetof(ir::PreemptionPair, preemptor_submitted) == 8 &&
              offsetof(ir::PreemptionPair, candidate_team) == 16 &&
              offsetof(ir::PreemptionPair, candidate_priority) == 20 &&
              offsetof(ir::PreemptionPair, candidate_submitted) == 24);

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
  // ir::whole_seconds: Kubernetes timestamps have whole seconds (a floor division).
  const auto whole_seconds = [&](llvm::Value* millis) {
    llvm::Value* thousand = llvm::ConstantInt::get(millis->getType(), 1000);
    llvm::Value* quotient = builder_.CreateSDiv(millis, thousand);
    llvm::Value* negative_rest = builder_.CreateICmpSLT(builder_.CreateSRem(millis, thousand),
                                                        llvm::ConstantInt::get(millis->getType(), 0));
    return builder_.CreateSub(quotient, builder_.CreateZExt(negative_rest, millis->getType()));
  };
  llvm::Value* newer_equal =
      builder_.CreateAnd(builder_.CreateICmpEQ(candidate_priority, preemptor_priority),
                         builder_.CreateICmpSLT(whole_seconds(preemptor_submitted), whole_seconds(candidate_submitted)));
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

}  // namespace gov::jit::detail
