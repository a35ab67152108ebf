// The words of the vocabulary: resource keys and Kubernetes names, and the language's words for
// team settings.
#include <fmt/format.h>

#include "compiler/model/resources.hpp"
#include "compiler/model/team.hpp"

namespace gov::model {

std::string_view resource_key(Resource resource) {
  return ::gov::resource_name(resource);
}

std::string_view display_name(Resource resource) {
  return resource == Resource::memory ? "memory" : resource_key(resource);
}

std::string_view kubernetes_name(Resource resource) {
  switch (resource) {
    case Resource::gpu: return "nvidia.com/gpu";
    case Resource::neuron: return "aws.amazon.com/neurondevice";
    case Resource::vcpu: return "cpu";
    case Resource::memory: return "memory";
    case Resource::efa: return "vpc.amazonaws.com/efa";
  }
  return "?";
}

std::string_view sharing_name(Sharing sharing) {
  switch (sharing) {
    case Sharing::lend_and_borrow: return "lend-and-borrow";
    case Sharing::lend: return "lend";
    case Sharing::dont_lend: return "dont-lend";
  }
  return "?";
}

std::string_view within_team_name(WithinTeam within) {
  switch (within) {
    case WithinTeam::never: return "never";
    case WithinTeam::lower_priority: return "lower-priority";
    case WithinTeam::lower_or_newer_equal_priority: return "lower-or-newer-equal-priority";
  }
  return "?";
}

std::string_view reclaim_name(ReclaimWithinCohort reclaim) {
  switch (reclaim) {
    case ReclaimWithinCohort::never: return "never";
    case ReclaimWithinCohort::lower_priority: return "lower-priority";
    case ReclaimWithinCohort::any: return "any";
  }
  return "?";
}

std::string_view borrow_within_cohort_name(BorrowWithinCohort borrow) {
  switch (borrow) {
    case BorrowWithinCohort::never: return "never";
    case BorrowWithinCohort::lower_priority: return "lower-priority";
  }
  return "?";
}

std::string_view queueing_name(Queueing queueing) {
  switch (queueing) {
    case Queueing::best_effort_fifo: return "best-effort-fifo";
    case Queueing::strict_fifo: return "strict-fifo";
  }
  return "?";
}

std::string_view when_can_borrow_name(WhenCanBorrow when) {
  switch (when) {
    case WhenCanBorrow::borrow: return "borrow";
    case WhenCanBorrow::try_next_flavor: return "try-next-flavor";
  }
  return "?";
}

std::string_view when_can_preempt_name(WhenCanPreempt when) {
  switch (when) {
    case WhenCanPreempt::preempt: return "preempt";
    case WhenCanPreempt::try_next_flavor: return "try-next-flavor";
  }
  return "?";
}

std::string_view flavor_preference_name(FlavorPreference preference) {
  switch (preference) {
    case FlavorPreference::borrowing_over_preemption: return "borrowing-over-preemption";
    case FlavorPreference::preemption_over_borrowing: return "preemption-over-borrowing";
  }
  return "?";
}

std::string_view fair_share_strategy_name(FairShareStrategy strategy) {
  switch (strategy) {
    case FairShareStrategy::less_than_or_equal_to_final_share: return "less-than-or-equal-to-final-share";
    case FairShareStrategy::less_than_initial_share: return "less-than-initial-share";
  }
  return "?";
}

std::string weight_text(int64_t micros) {
  const char* sign = micros < 0 ? "-" : "";
  const uint64_t magnitude = micros < 0 ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  const uint64_t whole = magnitude / kWeightScale;
  uint64_t fraction = magnitude % kWeightScale;
  if (fraction == 0) return fmt::format("{}{}", sign, whole);
  int digits = 6;
  while (fraction % 10 == 0) {
    fraction /= 10;
    --digits;
  }
  return fmt::format("{}{}.{:0{}}", sign, whole, fraction, digits);
}

}  // namespace gov::model
