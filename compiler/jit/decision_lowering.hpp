// The state and helpers shared by the files that lower the engine's decisions (gov_fit,
// gov_decide, gov_priority, gov_may_preempt): internal to gov::jit, included by its
// lower_*.cpp and decision_tables.cpp only (lower_decisions.hpp is the entry point).
#pragma once

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/ir/decisions.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/jit/lower_decisions.hpp"
#include "compiler/jit/lower_rules.hpp"

namespace gov::jit::detail {

constexpr int64_t kUnlimited = ir::kUnlimited;

/// The fields of one quota cell in the constant table, in struct order.
enum CellField : unsigned { kPresent = 0, kNominal, kBorrowingLimit, kLendable, kLocal };

/// Emits gov_fit, gov_decide, gov_priority and gov_may_preempt for one module into `out`, in
/// the order lower_decisions() calls them (build_tables first, fit before decide). Holds
/// references to the module, the output and the target machine, which must outlive it.
class DecisionLowering {
 public:
  DecisionLowering(const ir::Module& module, llvm::Module& out, const llvm::TargetMachine& machine)
      : module_(module), out_(out), machine_(machine), builder_(out.getContext()) {}

  /// The cell, team-list and cohort-quota tables (built once, shared by gov_fit and gov_decide).
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
  /// and instance type are known while lowering, loads from the constant tables otherwise
  /// (bounded by what the tables hold: cell_bounds_, pool_bounds_).
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
  /// The distinct cell number `index` (an i32 or i64 of `gov.team_cells` / `gov.lookup_cells`).
  llvm::Value* cell_number(llvm::Value* index) {
    return builder_.CreateInBoundsGEP(cells_type_, cell_table_,
                                      {i64(0), builder_.CreateZExt(index, builder_.getInt64Ty())});
  }
  /// The cell of a team (in range) in an instance type (in range): a binary search of the
  /// team's quotas sorted by instance type (`gov.lookup_flavors`), the absent cell (number 0)
  /// when it declares none there.
  struct FoundCell {
    llvm::Value* cell = nullptr;     // the cell's constants
    llvm::Value* present = nullptr;  // i1
    llvm::Value* slot = nullptr;     // i64: its row in the usage table (`gov.lookup_slots`), 0 if absent
  };
  FoundCell cell_lookup(llvm::Value* team, llvm::Value* flavor);
  /// Element `index` of a constant table of 32-bit entries, widened to 64 bits.
  llvm::Value* load_u32(llvm::ArrayType* type, llvm::GlobalVariable* table, llvm::Value* index);
  llvm::Value* pool_at(llvm::Value* flavor) {
    return builder_.CreateInBoundsGEP(pools_type_, pool_table_, {i64(0), flavor});
  }
  /// One figure of ir::fill_figures (team or cluster slot) of one instance type: `cell` is the
  /// team's cell there (known or loaded), `row` its row in the engine's usage table (the cell's
  /// slot, ir::UsageView: 1 + its declared index, 0 when absent), `flavor` the instance type.
  llvm::Value* figure(bool team_stat, uint8_t slot, const CellRef& cell, llvm::Value* row,
                      llvm::Value* flavor, llvm::Value* usage_base, llvm::Value* cohort_base,
                      llvm::Value* flavor_base);
  llvm::Value* add_figure(llvm::Value* a, llvm::Value* b);
  /// fits_and_borrows of one team and instance type through a call of gov_fit (i64 values;
  /// `row` as in figure()).
  std::pair<llvm::Value*, llvm::Value*> fit_call(llvm::Value* team, llvm::Value* flavor, llvm::Value* row,
                                                 llvm::Value* request, llvm::Value* usage_base,
                                                 llvm::Value* cohort_base);
  /// The loads of the fit of one team and instance type (`row` as in figure()), and the
  /// guard that every request and usage is in [0, kGuardedBound].
  struct FitLoads {
    std::array<Bounded, ir::kResourceCount> amounts{}, used{}, cohort_used{};
    llvm::Value* usual = nullptr;
  };
  FitLoads fit_loads(llvm::Value* request, llvm::Value* row, llvm::Value* flavor,
                     llvm::Value* usage_base, llvm::Value* cohort_base);
  /// Up to this many quota cells (team × instance type), gov_decide is specialised per team
  /// (constants folded, a switch over teams). Above it, the code would grow with the policy
  /// and so would the time LLVM takes (quadratically in places: 10,000 teams took minutes), so
  /// gov_decide walks constant tables of each team's instance types instead, with the same
  /// guarded fast path on the loaded cell and gov_fit out of line for the rest.
  static constexpr size_t kUnrolledCells = 64;
  bool unrolled() const { return quota_cells_ <= kUnrolledCells; }
  /// The tables the walk reads: per team, its instance types in declared order
  /// (`gov.team_flavors`, the range `gov.team_first`), their cells (`gov.team_cells`) and its
  /// flags (`gov.team_flags`).
  void build_team_tables();
  /// The team figures of the held instance types, summed by walking the team's list.
  void held_figures_by_table(const ir::FigureSlots& slots, llvm::Value* team, llvm::Value* usage_base,
                             llvm::Value* cohort_base, llvm::Value* flavor_base,
                             const std::function<llvm::Value*(bool, uint8_t)>& slot_address);
  /// ir::conclude's fit by walking the team's list and calling gov_fit: (flavor, borrows as i8).
  std::pair<llvm::Value*, llvm::Value*> fit_by_table(llvm::Value* team, llvm::Value* requested,
                                                     llvm::Value* request, llvm::Value* usage_base,
                                                     llvm::Value* cohort_base);
  /// The fit of team `team`'s declared quota number `quota` (an index into declared_), known.
  std::pair<llvm::Value*, llvm::Value*> guarded_fit(int64_t team, size_t quota, llvm::Value* request,
                                                    llvm::Value* usage_base, llvm::Value* cohort_base);
  /// The fast path and gov_fit out of line, joined: `fast` emits the fit on the guarded loads.
  std::pair<llvm::Value*, llvm::Value*> guarded(
      const FitLoads& loads, llvm::Value* team, llvm::Value* flavor, llvm::Value* row, llvm::Value* request,
      llvm::Value* usage_base, llvm::Value* cohort_base,
      const std::function<std::pair<llvm::Value*, llvm::Value*>(const FitLoads&)>& fast);
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
  ir::DeclaredQuotas declared_;
  std::vector<uint32_t> declared_cell_;  // per declared quota: its distinct cell's number
  llvm::ArrayType* cells_type_ = nullptr;  // the distinct cells; 0 is the absent cell
  llvm::ArrayType* pools_type_ = nullptr;
  llvm::GlobalVariable* cell_table_ = nullptr;
  llvm::GlobalVariable* pool_table_ = nullptr;
  /// Per cell field and resource, the least and greatest value of gov.quota_cells (the absent
  /// cell included) and of gov.cohort_quota: the intervals of the values loaded from them.
  std::array<std::array<std::pair<int64_t, int64_t>, ir::kResourceCount>, kLocal + 1> cell_bounds_{};
  std::array<std::pair<int64_t, int64_t>, ir::kResourceCount> pool_bounds_{};
  llvm::ArrayType* lookup_type_ = nullptr;  // quotas + 1 entries: a sentinel past the last team's
  llvm::GlobalVariable* lookup_flavors_ = nullptr;  // per team, its instance types in ascending order
  llvm::GlobalVariable* lookup_cells_ = nullptr;    // their cells' numbers
  llvm::GlobalVariable* lookup_slots_ = nullptr;    // their usage rows (the table walk only)
  llvm::ArrayType* capacity_type_ = nullptr;  // per flavor: capacity × per instance
  llvm::GlobalVariable* capacity_table_ = nullptr;
  size_t quota_cells_ = 0;  // quotas over all teams
  llvm::ArrayType* team_first_type_ = nullptr;
  llvm::GlobalVariable* team_first_ = nullptr;
  llvm::ArrayType* team_flavors_type_ = nullptr;
  llvm::GlobalVariable* team_flavors_ = nullptr;
  llvm::GlobalVariable* team_cells_ = nullptr;  // type team_flavors_type_
  llvm::ArrayType* team_flags_type_ = nullptr;
  llvm::GlobalVariable* team_flags_ = nullptr;
};

}  // namespace gov::jit::detail
