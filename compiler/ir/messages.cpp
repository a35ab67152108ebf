// Rendering of rule messages, bounded in size.
#include "compiler/ir/messages.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/model/quantities.hpp"
#include "compiler/support/utf8.hpp"

namespace gov::ir {

std::string value_text(const Module& module, ValueType type, int64_t value) {
  switch (type) {
    case ValueType::boolean: return value ? "true" : "false";
    case ValueType::integer: return fmt::format("{}", value);
    case ValueType::millicores: return model::format_amount(Resource::vcpu, value, model::language_notation());
    case ValueType::mebibytes: return model::format_amount(Resource::memory, value, model::language_notation());
    case ValueType::string:
      if (value >= 0 && static_cast<size_t>(value) < module.strings.size()) return module.strings[value];
      return "";
    case ValueType::priority:
      for (const PriorityClass& c : module.classes) {
        if (c.weight == value) return c.name;
      }
      return fmt::format("{}", value);
    case ValueType::team:
      if (value >= 0 && static_cast<size_t>(value) < module.teams.size()) return module.teams[value].name;
      return "";
    case ValueType::flavor:
      if (value >= 0 && static_cast<size_t>(value) < module.flavors.size()) return module.flavors[value].name;
      return "(any)";
  }
  return "";
}

namespace {

/// Appends pieces up to kMaxMessageBytes; the piece that would pass it is cut so that the text
/// and kTruncatedMarker fit, at a UTF-8 boundary, and everything after it is dropped.
class BoundedMessage {
 public:
  /// False once the message is full (the caller may stop rendering).
  bool append(std::string_view piece) {
    if (full_) return false;
    if (out_.size() + piece.size() <= kMaxMessageBytes) {
      out_ += piece;
      return true;
    }
    const size_t room = kMaxMessageBytes - kTruncatedMarker.size();
    // Up to 4 bytes past the cut, to see whether it falls inside a UTF-8 sequence; the piece
    // has them (it passes kMaxMessageBytes, which is more than the marker past the cut).
    out_.append(piece.substr(0, room + 4 > out_.size() ? room + 4 - out_.size() : 0));
    out_.resize(utf8_boundary_at_or_before(out_, room));  // not inside a sequence
    out_ += kTruncatedMarker;
    full_ = true;
    return false;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  bool full_ = false;
};

}  // namespace

std::string render_message(const Module& module, size_t rule, std::span<const int64_t> values,
                           const std::vector<std::pair<std::string, std::string>>& labels, std::string_view task_id) {
  BoundedMessage out;
  const std::vector<MessagePart>& message = module.rules[rule].message;
  for (size_t p = 0; p < message.size(); ++p) {
    const MessagePart& part = message[p];
    bool more = true;
    switch (part.kind) {
      case MessagePart::Kind::text: more = out.append(part.text); break;
      case MessagePart::Kind::value:
        more = out.append(value_text(module, part.type, p < values.size() ? values[p] : 0));
        break;
      case MessagePart::Kind::label: {
        const std::string& key = module.label_keys[static_cast<size_t>(part.label)];
        for (const auto& [k, v] : labels) {
          if (k != key) continue;
          more = out.append(v);  // a key given twice: its first value, as the rules read it
          break;
        }
        break;
      }
      case MessagePart::Kind::task_id: more = out.append(task_id); break;
    }
    if (!more) break;
  }
  return out.take();
}

}  // namespace gov::ir
