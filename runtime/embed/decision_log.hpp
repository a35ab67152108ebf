// The decision log (Options::on_decision_log, Options::decision_log_path): every decision of the
// engine as one JSON line, the decision stream's object stamped with the policy (name, version,
// content hash), the step's sequence number and the task's labels, with label values masked as
// configured. What auditors ask for (OPA has the same). Internal; docs/observability.md.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gov/engine.hpp"

namespace gov::embed {

class DecisionLog {
 public:
  /// Opens the file sink (Options::decision_log_path) when set: appended to, created 0600.
  /// Throws Error io naming the file when it cannot be opened.
  explicit DecisionLog(const Options& options);
  ~DecisionLog();
  DecisionLog(const DecisionLog&) = delete;
  DecisionLog& operator=(const DecisionLog&) = delete;

  /// Whether anything is logged (a callback or a file).
  bool enabled() const { return enabled_; }
  /// Keeps the labels of a task the engine takes (submitted or loaded), masked, for its lines.
  void remember(const Task& task);
  /// Logs every decision of `step` (made under `policy`): one callback call per line, one write
  /// of the file per step. Forgets the labels of tasks that ended. A failing write is counted
  /// (write_failures) and the engine goes on: a log must not stop admission. What a failing
  /// write left of its step (a full disk writes part of it) is cut off again, so that every
  /// line of the file stays one JSON object. Caller holds the engine's state lock exclusively.
  void write(const Step& step, const PolicyInfo& policy);
  uint64_t write_failures() const { return write_failures_; }

  /// One decision's line, without the newline (exposed for the tests' expectations).
  std::string line(const Decision& decision, const PolicyInfo& policy, uint64_t sequence) const;

 private:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  bool enabled_ = false;
  std::function<void(std::string_view)> callback_;
  std::string path_;
  int fd_ = -1;  // the file sink, opened O_APPEND
  bool torn_ = false;  // a failed write's part could not be cut off: start the next on a new line
  bool with_labels_ = true;
  bool mask_all_ = false;
  std::vector<std::string> masked_;
  std::unordered_map<std::string, Labels> labels_;  // live tasks' labels, masked
  uint64_t write_failures_ = 0;
};

}  // namespace gov::embed
