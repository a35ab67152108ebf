// The texts of decisions, in Kueue's words (docs/kueue-reference.md §4, §5.6, §10): pending reasons
// of the flavor assigner, scheduler messages and preemption messages, in the HEAD dialect or the
// older one early HyperPod clusters printed (Kueue v0.8/v0.9).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/module.hpp"
#include "runtime/engine/decision.hpp"

namespace gov::engine {

enum class MessageDialect : uint8_t {
  head,        // Kueue HEAD (docs/semantics.md §6)
  kueue_v0_9,  // Kueue v0.8.x/v0.9.0: `borrowing limit for <r> in flavor <f> exceeded`, `... in
               // cohort ...`
};

/// Why one flavor could not take one resource of a task: the structured form of one reason of
/// a `couldn't assign flavors` message.
struct FlavorReason {
  enum class Kind : uint8_t {
    exceeds_max_capacity,  // the request is above what the team could ever hold
    insufficient_unused,   // the request is above what is unused now
    flavor_mismatch,       // the task names another instance type (node affinity)
    resource_unavailable,  // the team has no flavor at all for the resource
  };
  Kind kind = Kind::insufficient_unused;
  ir::Resource resource = ir::Resource::gpu;
  uint32_t flavor = 0;
  Amount request = 0;                   // the pod set's request
  Amount assumed = 0;                   // what the task's earlier pod sets take of it in the flavor
  uint32_t pod_set = 0;                 // of a task of several pod sets: which one
  Amount max_capacity = 0;              // exceeds_max_capacity
  Amount lack = 0;                      // request − available
  bool beyond_borrowing_limit = false;  // usage + request > nominal + borrowing limit (v0.9 text)
  /// resource_unavailable for a GPU partition profile no quota gives (then `resource` is unused).
  const std::string* unavailable_partition = nullptr;

  friend bool operator==(const FlavorReason&, const FlavorReason&) = default;
};

/// The pod set of a task of one pod set.
inline constexpr std::string_view kPodSetName = "main";

/// One reason, rendered.
std::string reason_text(const ir::Module& module, MessageDialect dialect,
                        const FlavorReason& reason);

/// reason_text, remembered for one module and dialect. A reason's text is a function of its
/// fields (all but `pod_set`), and the same reasons recur across the pending heads of a replay
/// (the same shortfall of the same resource in the same instance type): rendering them with fmt
/// was 4% of a replay's instructions. Direct-mapped on a hash of the fields, each slot checked
/// against all of them. Not thread-safe.
class ReasonTexts {
 public:
  ReasonTexts(const ir::Module& module, MessageDialect dialect) : module_(module), dialect_(dialect) {}
  /// The text of `reason`; valid until the next call.
  const std::string& text(const FlavorReason& reason);

 private:
  struct Slot {
    FlavorReason reason;  // pod_set 0
    std::string text;
    bool used = false;
  };
  static constexpr size_t kSlots = 1024;
  const ir::Module& module_;
  MessageDialect dialect_;
  std::vector<Slot> slots_;  // kSlots once used
};

/// `couldn't assign flavors to pod set main: <reasons>`, the reasons rendered, sorted and joined
/// by ", " as Kueue's Assignment.Message() does; for a task of several pod sets one such part per
/// pod set with reasons, in pod set order, joined by "; " (FlavorReason::pod_set indexes
/// `pod_sets`, the pod sets' names; empty: one pod set, `main`). Writes into `out` (reused, no
/// allocation once warm).
void render_assignment_message(ReasonTexts& texts, std::span<const FlavorReason> reasons, std::string& out,
                               std::span<const std::string_view> pod_sets = {});

/// A quantity as Kubernetes prints it: `1`, `1k`, `500m`, `64`, `256Gi`, `1536Mi`.
std::string quantity_text(ir::Resource resource, Amount amount);

std::string admitted_message(std::string_view team);
std::string inactive_team_message(std::string_view team);
std::string pending_preemption_message(std::string_view assignment_message, size_t victims);
/// `Preempted to accommodate a workload (UID: <id>) due to <reason>`.
std::string preempted_message(MessageDialect dialect, std::string_view preemptor,
                              PreemptionKind kind, bool while_borrowing);

/// A team's place in the tree of cohorts, as Kueue HEAD's preemption messages write it:
/// `/<root>/<cohort>/<team>` (buildCQPath); empty in a module without a tree.
std::string cohort_path(const ir::Module& module, uint32_t team);
/// Kueue HEAD's suffix of a preemption message in a tree: `; preemptor path: P; preemptee path: Q`.
std::string preemption_paths(const ir::Module& module, uint32_t preemptor_team, uint32_t victim_team);

inline constexpr std::string_view kNoLongerFits =
    "Workload no longer fits after processing another workload";
inline constexpr std::string_view kOverlappingTargets =
    "Workload has overlapping preemption targets with another workload";
/// Kueue HEAD's text for a task whose recomputed assignment (overlapping targets) fits once the
/// preemptions already issued in the cycle complete.
inline constexpr std::string_view kOverlappingTargetsWillFit =
    "Workload has overlapping preemption targets with another workload, but will fit after these "
    "preemptions complete";

}  // namespace gov::engine
