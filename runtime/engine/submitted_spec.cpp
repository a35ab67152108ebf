#include "runtime/engine/submitted_spec.hpp"

#include <cstdint>

#include "compiler/support/assert.hpp"

namespace gov::engine {
namespace {

// Every field of gov::Task and gov::PodSet is listed below; a new field must be too (these sizes
// are those of the fields listed, on the 64-bit targets gov builds for).
static_assert(sizeof(void*) != 8 || sizeof(gov::Task) == 360, "gov::Task changed: list its new field here");
static_assert(sizeof(void*) != 8 || sizeof(gov::PodSet) == 200, "gov::PodSet changed: list its new field here");

/// The fields in their order, one list for both directions: `io` is a Writer (over a const task)
/// or a Reader.
template <class Io, class PodSetT>
void pod_set_fields(Io& io, PodSetT& pod_set) {
  io(pod_set.name);
  io(pod_set.instance_type);
  io(pod_set.instances);
  io(pod_set.amounts);
  io(pod_set.pods);
  io(pod_set.partitions);
}

template <class Io, class TaskT>
void task_fields(Io& io, TaskT& task) {
  io(task.id);
  io(task.team);
  io(task.priority);
  io(task.instance_type);
  io(task.instances);
  io(task.amounts);
  io(task.pods);
  io(task.partitions);
  io(task.labels);
  io(task.duration);
  io(task.created);
  io(task.pod_sets);
}

using Amounts = std::array<std::optional<int64_t>, kResourceCount>;

/// Varints (signed ones zigzag), a present-flag before an optional, a count before a list, and
/// a mask of the present amounts before them.
class Writer {
 public:
  void operator()(int64_t v) { u64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void operator()(const std::string& s) {
    u64(s.size());
    out_.append(s);
  }
  template <class T>
  void operator()(const std::optional<T>& value) {
    u64(value ? 1 : 0);
    if (value) (*this)(*value);
  }
  template <class A, class B>
  void operator()(const std::pair<A, B>& pair) {
    (*this)(pair.first);
    (*this)(pair.second);
  }
  template <class T>
  void operator()(const std::vector<T>& list) {
    u64(list.size());
    for (const T& item : list) (*this)(item);
  }
  void operator()(const Amounts& amounts) {
    uint64_t mask = 0;
    for (size_t i = 0; i < amounts.size(); ++i) mask |= amounts[i] ? uint64_t{1} << i : 0;
    u64(mask);
    for (const std::optional<int64_t>& amount : amounts) {
      if (amount) (*this)(*amount);
    }
  }
  void operator()(const PodSet& pod_set) { pod_set_fields(*this, pod_set); }
  /// The bytes written, in a string of their exact size (a task keeps it while it lives). A
  /// buffer grown past 64 KiB by an unusual task is released rather than kept.
  std::string take() {
    std::string bytes(out_);
    if (out_.capacity() > 64 * 1024) std::string().swap(out_);
    return bytes;
  }

 private:
  void u64(uint64_t v) {
    for (; v >= 0x80; v >>= 7) out_.push_back(static_cast<char>(v | 0x80));
    out_.push_back(static_cast<char>(v));
  }
  /// Written into a per-thread buffer that keeps its capacity: growing a new string byte by byte
  /// reallocated it three or four times a submit. Hence one Writer at a time on a thread
  /// (encode_submitted's, which does not nest).
  std::string& out_ = buffer();
  static std::string& buffer() {
    thread_local std::string bytes;
    bytes.clear();
    return bytes;
  }
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  void operator()(int64_t& v) {
    const uint64_t zigzag = u64();
    v = static_cast<int64_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1));
  }
  void operator()(std::string& s) {
    const uint64_t n = u64();
    GOV_ASSERT(n <= in_.size() - at_, "a submitted task's bytes end early");
    s.assign(in_.substr(at_, n));
    at_ += n;
  }
  template <class T>
  void operator()(std::optional<T>& value) {
    if (u64() == 0) return;
    (*this)(value.emplace());
  }
  template <class A, class B>
  void operator()(std::pair<A, B>& pair) {
    (*this)(pair.first);
    (*this)(pair.second);
  }
  template <class T>
  void operator()(std::vector<T>& list) {
    const uint64_t n = u64();
    GOV_ASSERT(n <= in_.size() - at_, "a submitted task's bytes end early");  // every item takes a byte
    list.resize(n);
    for (T& item : list) (*this)(item);
  }
  void operator()(Amounts& amounts) {
    const uint64_t mask = u64();
    for (size_t i = 0; i < amounts.size(); ++i) {
      if ((mask >> i) & 1) (*this)(amounts[i].emplace());
    }
  }
  void operator()(PodSet& pod_set) { pod_set_fields(*this, pod_set); }
  bool done() const { return at_ == in_.size(); }

 private:
  uint64_t u64() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      GOV_ASSERT(at_ < in_.size() && shift < 64, "a submitted task's bytes end early");
      const auto byte = static_cast<uint8_t>(in_[at_++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace

std::string encode_submitted(const gov::Task& task) {
  Writer writer;
  task_fields(writer, task);
  return writer.take();
}

gov::Task decode_submitted(std::string_view bytes) {
  Reader reader(bytes);
  gov::Task task;
  task_fields(reader, task);
  GOV_ASSERT(reader.done(), "a submitted task's bytes go on past its last field");
  return task;
}

}  // namespace gov::engine
