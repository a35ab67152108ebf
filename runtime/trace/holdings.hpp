// What teams hold and borrow over time, read from a decision stream: the accounting the summary
// (`gov simulate --format text`), the usage report and the what-if comparison share.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gov/types.hpp"

namespace gov::trace {

/// Amounts of the five resources, in base units, indexed by gov::Resource.
using ResourceArray = std::array<int64_t, 5>;

/// One instance type an admitted task holds, and what it holds there.
struct Holding {
  std::string flavor;
  ResourceArray amounts{};
};

/// What an `admitted` decision holds per instance type: each pod set (or resource group) in its
/// own instance type, summed by type, in order of first appearance; a task of one pod set holds
/// its `usage` in its `flavor`. GPU partitions are not counted (they are no resource of the five).
std::vector<Holding> holdings_of(const Decision& decision);

/// Per team and instance type, what its admitted tasks hold now and the time integral of what
/// they hold and of what exceeds the team's nominal quota there: Kueue's borrowing (a
/// ClusterQueue's usage above its nominal quota, whichever task brought it there), so a team that
/// falls back within its quota stops borrowing although the task that borrowed still runs.
/// Changes are fed in time order; each charges the interval since the last change of that team
/// and instance type to `sink(team, flavor, from, to, held, borrowed)` first. Not thread-safe.
class HoldingsClock {
 public:
  /// The team's nominal quota of `resource` in `flavor` (0 when never set: everything held there
  /// is borrowed).
  void set_nominal(const std::string& team, const std::string& flavor, Resource resource, int64_t amount);

  /// Adds `delta` (negative to release) to what `team` holds in `flavor` at `at`.
  template <typename Sink>
  void change(const std::string& team, const std::string& flavor, const ResourceArray& delta, Time at, Sink&& sink) {
    Slot& slot = slots_[{team, flavor}];
    charge(team, flavor, slot, at, sink);
    for (size_t i = 0; i < delta.size(); ++i) slot.held[i] += delta[i];
  }

  /// Charges every open interval up to `end`, without changing the clock (a report at the end).
  template <typename Sink>
  void charge_until(Time end, Sink&& sink) const {
    for (const auto& [key, slot] : slots_) {
      Slot copy = slot;
      charge(key.first, key.second, copy, end, sink);
    }
  }

 private:
  struct Slot {
    ResourceArray held{};
    ResourceArray nominal{};
    Time since = 0;
  };

  template <typename Sink>
  static void charge(const std::string& team, const std::string& flavor, Slot& slot, Time at, Sink&& sink) {
    if (at > slot.since) {
      bool any = false;
      ResourceArray borrowed{};
      for (size_t i = 0; i < slot.held.size(); ++i) {
        borrowed[i] = slot.held[i] > slot.nominal[i] ? slot.held[i] - slot.nominal[i] : 0;
        any = any || slot.held[i] != 0;
      }
      if (any) sink(team, flavor, slot.since, at, slot.held, borrowed);
    }
    slot.since = std::max(slot.since, at);
  }

  std::map<std::pair<std::string, std::string>, Slot> slots_;
};

}  // namespace gov::trace
