#include "runtime/engine/submitted_spec.hpp"

#include <cstdint>

#include "compiler/support/assert.hpp"

namespace gov::engine {
namespace {

// Every field of gov::Task and gov::PodSet is written below; a new field must be too (these sizes
// are those of the fields encoded, on the 64-bit targets gov builds for).
static_assert(sizeof(void*) != 8 || sizeof(gov::Task) == 360, "gov::Task changed: encode its new field here");
static_assert(sizeof(void*) != 8 || sizeof(gov::PodSet) == 200, "gov::PodSet changed: encode its new field here");

class Writer {
 public:
  void u64(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void i64(int64_t v) { u64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }  // zigzag
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void opt_str(const std::optional<std::string>& s) {
    u64(s ? 1 : 0);
    if (s) str(*s);
  }
  void opt_i64(const std::optional<int64_t>& v) {
    u64(v ? 1 : 0);
    if (v) i64(*v);
  }
  void amounts(const std::array<std::optional<int64_t>, kResourceCount>& a) {
    uint64_t mask = 0;
    for (size_t i = 0; i < a.size(); ++i) mask |= a[i] ? uint64_t{1} << i : 0;
    u64(mask);
    for (const std::optional<int64_t>& v : a) {
      if (v) i64(*v);
    }
  }
  void partitions(const std::vector<std::pair<std::string, int64_t>>& p) {
    u64(p.size());
    for (const auto& [name, amount] : p) {
      str(name);
      i64(amount);
    }
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint64_t u64() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      GOV_ASSERT(at_ < in_.size() && shift < 64, "a submitted task's bytes end early");
      const auto byte = static_cast<uint8_t>(in_[at_++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
  }
  int64_t i64() {
    const uint64_t v = u64();
    return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  std::string str() {
    const uint64_t n = u64();
    GOV_ASSERT(n <= in_.size() - at_, "a submitted task's bytes end early");
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  std::optional<std::string> opt_str() {
    if (u64() == 0) return std::nullopt;
    return str();
  }
  std::optional<int64_t> opt_i64() {
    if (u64() == 0) return std::nullopt;
    return i64();
  }
  void amounts(std::array<std::optional<int64_t>, kResourceCount>& a) {
    const uint64_t mask = u64();
    for (size_t i = 0; i < a.size(); ++i) {
      if ((mask >> i) & 1) a[i] = i64();
    }
  }
  void partitions(std::vector<std::pair<std::string, int64_t>>& p) {
    const uint64_t n = u64();
    for (uint64_t i = 0; i < n; ++i) {
      std::string name = str();
      p.emplace_back(std::move(name), i64());
    }
  }
  bool done() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace

std::string encode_submitted(const gov::Task& task) {
  Writer w;
  w.str(task.id);
  w.str(task.team);
  w.opt_str(task.priority);
  w.opt_str(task.instance_type);
  w.opt_i64(task.instances);
  w.amounts(task.amounts);
  w.opt_i64(task.pods);
  w.partitions(task.partitions);
  w.u64(task.labels.size());
  for (const auto& [key, value] : task.labels) {
    w.str(key);
    w.str(value);
  }
  w.opt_i64(task.duration);
  w.opt_i64(task.created);
  w.u64(task.pod_sets.size());
  for (const PodSet& pod_set : task.pod_sets) {
    w.str(pod_set.name);
    w.opt_str(pod_set.instance_type);
    w.opt_i64(pod_set.instances);
    w.amounts(pod_set.amounts);
    w.i64(pod_set.pods);
    w.partitions(pod_set.partitions);
  }
  return w.take();
}

gov::Task decode_submitted(std::string_view bytes) {
  Reader r(bytes);
  gov::Task task;
  task.id = r.str();
  task.team = r.str();
  task.priority = r.opt_str();
  task.instance_type = r.opt_str();
  task.instances = r.opt_i64();
  r.amounts(task.amounts);
  task.pods = r.opt_i64();
  r.partitions(task.partitions);
  const uint64_t labels = r.u64();
  for (uint64_t i = 0; i < labels; ++i) {
    std::string key = r.str();
    task.labels.emplace_back(std::move(key), r.str());
  }
  task.duration = r.opt_i64();
  task.created = r.opt_i64();
  const uint64_t pod_sets = r.u64();
  for (uint64_t i = 0; i < pod_sets; ++i) {
    PodSet& pod_set = task.pod_sets.emplace_back();
    pod_set.name = r.str();
    pod_set.instance_type = r.opt_str();
    pod_set.instances = r.opt_i64();
    r.amounts(pod_set.amounts);
    pod_set.pods = r.i64();
    r.partitions(pod_set.partitions);
  }
  GOV_ASSERT(r.done(), "a submitted task's bytes go on past its last field");
  return task;
}

}  // namespace gov::engine
