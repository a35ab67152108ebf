// Scans one trace event of the common shape in a single pass over its bytes. Every deviation
// from that shape gives up at once (returns false): the DOM path is the one that reads, and
// reports, everything else, so nothing here needs a message or a position.
#include "runtime/trace/event_scanner.hpp"

#include <cstdint>

#include "compiler/support/swar.hpp"

namespace gov::trace {

namespace {

/// The keys of a submit the scanner knows, as bits of a mask (each key once).
enum class SubmitKey : uint8_t {
  id, team, priority, instance_type, instances, pods, per_pod, labels, duration,
  amount,  // one of the resources; which one is returned beside it
  unknown,
};

constexpr uint32_t bit(SubmitKey key) { return uint32_t{1} << static_cast<unsigned>(key); }

/// A cursor over the scanned text; every step fails (false) rather than reads past its end.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()) {}

  size_t offset() const { return static_cast<size_t>(p_ - begin_); }

  /// Spaces, tabs and carriage returns; a line feed would move the reader's line count, so it
  /// is not the common shape.
  void skip_blanks() {
    // Most values follow their ':' or ',' at once: one test for a byte above the blanks.
    while (p_ < end_ && static_cast<unsigned char>(*p_) <= ' ' && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r')) ++p_;
  }

  /// `c` after optional blanks.
  bool expect(char c) {
    skip_blanks();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  /// After a member: true for ',' (another member follows), false with `closed` set for the
  /// closing `close`; false with `closed` unset for anything else.
  bool next_member(char close, bool& closed) {
    skip_blanks();
    closed = false;
    if (p_ == end_) return false;
    if (*p_ == ',') {
      ++p_;
      return true;
    }
    closed = *p_ == close;
    if (closed) ++p_;
    return false;
  }

  /// Whether the next value (after blanks) starts with `c`, consuming nothing but the blanks.
  bool at(char c) {
    skip_blanks();
    return p_ < end_ && *p_ == c;
  }

  /// A plain string (printable ASCII, no escape) after optional blanks.
  bool string(std::string_view& out) {
    if (!expect('"')) return false;
    const char* start = p_;
    while (end_ - p_ >= 8) {
      const uint64_t word = swar::load(std::string_view(p_, 8), 0);
      const uint64_t special = swar::any_equal(word, '"') | swar::any_equal(word, '\\') |
                               swar::any_below(word, 0x20) | swar::any_high(word);
      if (special != 0) {  // the first byte that is not plain ends the string, or the shape
        p_ += swar::first_flagged(special);
        if (*p_ != '"') return false;
        out = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      p_ += 8;
    }
    for (; p_ < end_; ++p_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
    }
    return false;
  }

  /// A non-empty plain string.
  bool name(std::string_view& out) { return string(out) && !out.empty(); }

  /// A number, after optional blanks, by RFC 8259's grammar:
  /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number(std::string_view& out) {
    skip_blanks();
    const char* start = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    // What follows must be ',' or '}' (next_member), which also turns away "01" and "1x".
    out = std::string_view(start, static_cast<size_t>(p_ - start));
    return true;
  }

 private:
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  bool digits() {
    const char* start = p_;
    while (p_ < end_ && is_digit(*p_)) ++p_;
    return p_ > start;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
};

SubmitKey submit_key(std::string_view key, size_t& resource) {
  const auto amount = [&](ir::Resource r) {
    resource = ir::index(r);
    return SubmitKey::amount;
  };
  switch (key.size()) {
    case 2:
      return key == "id" ? SubmitKey::id : SubmitKey::unknown;
    case 3:
      return key == "efa" ? amount(ir::Resource::efa) : SubmitKey::unknown;
    case 4:
      if (key == "team") return SubmitKey::team;
      if (key == "gpus") return amount(ir::Resource::gpu);
      return key == "pods" ? SubmitKey::pods : SubmitKey::unknown;
    case 5:
      return key == "vcpus" ? amount(ir::Resource::vcpu) : SubmitKey::unknown;
    case 6:
      if (key == "labels") return SubmitKey::labels;
      return key == "neuron" ? amount(ir::Resource::neuron) : SubmitKey::unknown;
    case 7:
      return key == "per_pod" ? SubmitKey::per_pod : SubmitKey::unknown;
    case 8:
      if (key == "priority") return SubmitKey::priority;
      return key == "duration" ? SubmitKey::duration : SubmitKey::unknown;
    case 9:
      return key == "instances" ? SubmitKey::instances : SubmitKey::unknown;
    case 10:
      return key == "memory_gib" ? amount(ir::Resource::memory) : SubmitKey::unknown;
    case 13:
      return key == "instance_type" ? SubmitKey::instance_type : SubmitKey::unknown;
    default:
      return SubmitKey::unknown;
  }
}

/// `{"gpus": n, ...}`: amounts only, each once, into `amounts`.
bool scan_amounts(Scanner& in, std::array<std::string_view, ir::kResourceCount>& amounts) {
  if (!in.expect('{')) return false;
  if (in.at('}')) return in.expect('}');
  for (;;) {
    std::string_view key;
    size_t resource = 0;
    if (!in.string(key) || submit_key(key, resource) != SubmitKey::amount || !amounts[resource].empty() ||
        !in.expect(':') || !in.number(amounts[resource]))
      return false;
    bool closed = false;
    if (!in.next_member('}', closed)) return closed;
  }
}

/// `{"key": "value", ...}`: string values, each key once.
bool scan_labels(Scanner& in, ScannedEvent& out) {
  if (!in.expect('{')) return false;
  if (in.at('}')) return in.expect('}');
  for (;;) {
    if (out.label_count == kMaxScannedLabels) return false;
    auto& [key, value] = out.labels[out.label_count];
    if (!in.string(key) || !in.expect(':') || !in.string(value)) return false;
    for (size_t i = 0; i < out.label_count; ++i) {
      if (out.labels[i].first == key) return false;  // a duplicate key: the DOM path's error
    }
    ++out.label_count;
    bool closed = false;
    if (!in.next_member('}', closed)) return closed;
  }
}

bool scan_submit(Scanner& in, ScannedEvent& out) {
  if (!in.expect('{') || in.at('}')) return false;  // an empty submit is an error
  uint32_t seen = 0;
  for (;;) {
    std::string_view key;
    size_t resource = 0;
    if (!in.string(key)) return false;
    const SubmitKey which = submit_key(key, resource);
    if (which == SubmitKey::unknown || !in.expect(':')) return false;
    if (which != SubmitKey::amount) {
      if ((seen & bit(which)) != 0) return false;
      seen |= bit(which);
    }
    bool ok = false;
    switch (which) {
      case SubmitKey::id: ok = in.name(out.id); break;
      case SubmitKey::team: ok = in.name(out.team); break;
      case SubmitKey::priority: ok = in.name(out.priority); break;
      case SubmitKey::instance_type: ok = in.name(out.instance_type); break;
      case SubmitKey::instances: ok = in.number(out.instances); break;
      case SubmitKey::pods: ok = in.number(out.pods); break;
      case SubmitKey::duration: ok = in.number(out.duration); break;
      case SubmitKey::amount: ok = out.amounts[resource].empty() && in.number(out.amounts[resource]); break;
      case SubmitKey::per_pod:
        out.per_pod = true;
        out.depth = 3;
        ok = scan_amounts(in, out.per_pod_amounts);
        break;
      case SubmitKey::labels:
        out.depth = 3;
        ok = scan_labels(in, out);
        break;
      case SubmitKey::unknown: ok = false; break;
    }
    if (!ok) return false;
    bool closed = false;
    if (!in.next_member('}', closed)) return closed;
  }
}

}  // namespace

bool scan_common_event(std::string_view text, ScannedEvent& out) {
  out = ScannedEvent{};
  out.depth = 1;
  Scanner in(text);
  if (!in.expect('{')) return false;
  bool at = false;
  bool action = false;
  for (;;) {
    std::string_view key;
    if (!in.string(key) || !in.expect(':')) return false;
    if (key == "at") {
      if (at || !in.number(out.at)) return false;
      at = true;
    } else {
      if (action) return false;  // two actions, or one twice: the DOM path's error
      action = true;
      if (key == "submit") {
        out.kind = EventKind::submit;
        out.depth = std::max<size_t>(out.depth, 2);
        if (!scan_submit(in, out)) return false;
      } else if (key == "finish" || key == "cancel") {
        out.kind = key == "finish" ? EventKind::finish : EventKind::cancel;
        if (!in.name(out.id)) return false;
      } else {
        return false;
      }
    }
    bool closed = false;
    if (in.next_member('}', closed)) continue;
    if (!closed || !at || !action) return false;
    out.length = in.offset();
    return true;
  }
}

}  // namespace gov::trace
