// Entry point of gov::diff: what changes between two checked policies, in cluster terms
// (quotas, limits, classes, rules), and the consequences worth a reviewer's eye.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/check/policy.hpp"

namespace gov::diff {

/// One changed fact. `subject` groups changes (`team team-a`, `cluster`, `classes`,
/// `rule cap-gpus`); `field` names what changed within it (`ml.g5.8xlarge gpu nominal`,
/// `borrow limit`); before/after are display texts, empty when added or removed.
struct Change {
  std::string subject;
  std::string field;
  std::string before;
  std::string after;
  std::optional<std::string> delta;  // `+1`, `-128 GiB` for numeric changes
  // Machine-readable parts for JSON (numbers in base display units; nullopt when not numeric).
  std::optional<double> before_number;
  std::optional<double> after_number;
};

/// A consequence: a team loses guaranteed accelerators, guaranteed quota now exceeds the
/// cluster's capacity, a class now outranks another, a team becomes inactive.
struct Warning {
  std::string kind;  // "guaranteed-gpus-fall", "quota-exceeds-capacity", "class-order", "team-inactive"
  std::string message;
};

struct PolicyDiff {
  std::vector<Change> changes;
  std::vector<Warning> warnings;
  bool empty() const { return changes.empty(); }
};

/// Compares `before` with `after`. Deterministic: subjects in the order of `after`
/// (removed ones where they stood in `before`), fields in a fixed order.
PolicyDiff compare(const check::Policy& before, const check::Policy& after);

std::string render_text(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name);
std::string render_json(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name);
/// Markdown ready to paste as a pull-request comment.
std::string render_markdown(const PolicyDiff& diff, std::string_view before_name, std::string_view after_name);

}  // namespace gov::diff
