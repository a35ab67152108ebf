#include "runtime/engine/decision.hpp"

namespace gov::engine {

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::admitted: return "admitted";
    case Outcome::pending: return "pending";
    case Outcome::preempted: return "preempted";
    case Outcome::rejected: return "rejected";
    case Outcome::finished: return "finished";
    case Outcome::cancelled: return "cancelled";
    case Outcome::invalid: return "invalid";
  }
  return "?";
}

std::string_view reason_name(PendingReason reason) {
  switch (reason) {
    case PendingReason::waiting_for_quota: return "waiting-for-quota";
    case PendingReason::exceeds_max_quota: return "exceeds-max-quota";
    case PendingReason::waiting_for_preemption: return "waiting-for-preemption";
    case PendingReason::no_matching_flavor: return "no-matching-flavor";
    case PendingReason::team_inactive: return "team-inactive";
  }
  return "?";
}

std::string_view preemption_kind_name(PreemptionKind kind) {
  switch (kind) {
    case PreemptionKind::in_team: return "in-team";
    case PreemptionKind::reclaim: return "reclaim";
    case PreemptionKind::fair_sharing: return "fair-sharing";
  }
  return "?";
}

std::string_view task_state_name(TaskState state) {
  switch (state) {
    case TaskState::pending: return "pending";
    case TaskState::admitted: return "admitted";
    case TaskState::finished: return "finished";
    case TaskState::cancelled: return "cancelled";
    case TaskState::rejected: return "rejected";
    case TaskState::invalid: return "invalid";
  }
  return "?";
}

}  // namespace gov::engine
