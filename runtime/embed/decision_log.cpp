// The decision log: JSON lines stamped with the policy, to a callback and/or a file.
#include "runtime/embed/decision_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "compiler/support/json_writer.hpp"
#include "runtime/embed/labels.hpp"

namespace gov::embed {

DecisionLog::DecisionLog(const Options& options)
    : callback_(options.on_decision_log),
      path_(options.decision_log_path),
      with_labels_(options.decision_log_labels),
      masked_(options.decision_log_masked_labels) {
  mask_all_ = std::find(masked_.begin(), masked_.end(), "*") != masked_.end();
  enabled_ = callback_ != nullptr || !path_.empty();
  if (path_.empty()) return;
  // Append-only, created private: the log names tasks, teams and labels.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) {
    throw Error(ErrorCode::io, fmt::format("decision log `{}`: cannot open it: {}", path_, std::strerror(errno)));
  }
}

DecisionLog::~DecisionLog() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

/// Writes all of `bytes` to `fd` (retrying short writes and EINTR); false on an error.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void DecisionLog::remember(const Task& task) {
  if (!enabled_ || !with_labels_ || task.labels.empty()) return;
  Labels labels;
  for_each_first_label(task.labels, [&](const std::string& key, const std::string& value) {
    const bool masked = mask_all_ || std::find(masked_.begin(), masked_.end(), key) != masked_.end();
    labels.emplace_back(key, masked ? std::string("***") : value);
  });
  labels_.insert_or_assign(task.id, std::move(labels));
}

std::string DecisionLog::line(const Decision& decision, const PolicyInfo& policy, uint64_t sequence) const {
  std::string out = to_json(decision);  // the stream's object, exactly: `{...}`
  out.pop_back();
  out += ",\"policy\":";
  append_json_string(out, policy.name);
  out += fmt::format(",\"policy_version\":{},\"policy_sha256\":", policy.version);
  append_json_string(out, policy.content_sha256);
  out += fmt::format(",\"sequence\":{}", sequence);
  if (with_labels_) {
    out += ",\"labels\":{";
    if (auto it = labels_.find(decision.task); it != labels_.end()) {
      bool first = true;
      for (const auto& [key, value] : it->second) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, key);
        out += ':';
        append_json_string(out, value);
      }
    }
    out += '}';
  }
  out += '}';
  return out;
}

void DecisionLog::write(const Step& step, const PolicyInfo& policy) {
  if (!enabled_) return;
  std::string block;
  for (const Decision& d : step.decisions) {
    std::string text = line(d, policy, step.sequence);
    if (callback_) {
      try {
        callback_(text);
      } catch (...) {  // a listener's failure is not the engine's (as on_step)
      }
    }
    if (fd_ >= 0) {
      block += text;
      block += '\n';
    }
    const bool ended = d.outcome == Outcome::finished || d.outcome == Outcome::cancelled ||
                       d.outcome == Outcome::rejected || d.outcome == Outcome::invalid;
    if (ended) labels_.erase(d.task);
  }
  if (fd_ < 0 || block.empty()) return;
  if (torn_) block.insert(block.begin(), '\n');
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  if (write_all(fd_, block)) {
    torn_ = false;
    return;
  }
  ++write_failures_;
  // The part written is cut off again; when it cannot be, the next block starts a new line, so
  // that only the torn line is lost to a reader.
  torn_ = before < 0 || ::ftruncate(fd_, before) != 0;
}

}  // namespace gov::embed
