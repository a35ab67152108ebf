// The YAML loader: yaml-cpp's event parser builds gov's own tree, counting depth and nodes as it
// goes, so that neither deep nesting nor alias expansion can exhaust the stack or memory.
#include "compiler/kube/yaml.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <istream>
#include <streambuf>

#include <fmt/format.h>

#include "compiler/support/utf8.hpp"

namespace gov::kube {

const Node* Node::find(std::string_view key) const {
  if (kind != Kind::map) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].text == key) return &values[i];
  }
  return nullptr;
}

std::string_view kind_name(const Node& node) {
  switch (node.kind) {
    case Node::Kind::null: return "null";
    case Node::Kind::scalar: return "a scalar";
    case Node::Kind::sequence: return "a list";
    case Node::Kind::map: return "a map";
  }
  return "a node";
}

support::Error error_at(const Node& node, std::string_view why) {
  return support::Error{support::ErrorKind::invalid,
                        fmt::format("line {}, column {}: {}", node.at.line, node.at.column, why), node.at};
}

namespace {

support::TextPosition position(const YAML::Mark& mark);

/// The position of byte `offset` of `text` (columns in code points, as elsewhere).
support::TextPosition position_at(std::string_view text, size_t offset) {
  support::TextPosition at;
  at.offset = offset;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++at.column;
    }
  }
  return at;
}

support::TextPosition position(const YAML::Mark& mark) {
  support::TextPosition at;
  at.offset = mark.pos < 0 ? 0 : static_cast<size_t>(mark.pos);
  at.line = mark.line < 0 ? 1 : static_cast<size_t>(mark.line) + 1;
  at.column = mark.column < 0 ? 1 : static_cast<size_t>(mark.column) + 1;
  return at;
}

/// Thrown from the event handler to stop yaml-cpp's parser: the first error ends reading.
struct Stop {
  support::Error error;
};

[[noreturn]] void stop(const support::TextPosition& at, std::string why) {
  throw Stop{support::Error{support::ErrorKind::invalid, fmt::format("line {}, column {}: {}", at.line, at.column, why), at}};
}

class Builder final : public YAML::EventHandler {
 public:
  explicit Builder(const YamlLimits& limits) : limits_(limits) {}

  std::vector<Node> documents;
  /// The offset of the last node yaml-cpp reported: how far the parser has come (the scanner
  /// reads ahead of it).
  size_t parsed_to = 0;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {
    if (root_ && !root_->is_null()) documents.push_back(std::move(*root_));
    root_.reset();
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    seen(mark);
    Node node;
    node.at = position(mark);
    complete(std::move(node), 1, anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    seen(mark);
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) stop(position(mark), "an alias to an anchor that is not complete here");
    // The copy is real memory: it counts against the node budget like the nodes it copies.
    charge(it->second.size, position(mark));
    Node copy = it->second.node;
    complete(std::move(copy), it->second.size, YAML::NullAnchor, /*charged=*/true);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
    seen(mark);
    Node node;
    node.at = position(mark);
    // yaml-cpp tags a plain scalar `?` and a quoted one `!`; an explicit tag (`!!str`) marks a string.
    node.quoted = tag != "?";
    const bool null_word = value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL";
    if (!node.quoted && null_word) {
      complete(std::move(node), 1, anchor);
      return;
    }
    node.kind = Node::Kind::scalar;
    node.text = value;
    complete(std::move(node), 1, anchor);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(Node::Kind::sequence, mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(Node::Kind::map, mark, anchor);
  }
  void OnMapEnd() override {
    if (stack_.back().node.keys.size() != stack_.back().node.values.size()) {
      stop(stack_.back().node.at, "a map key without a value");
    }
    close();
  }

 private:
  struct Frame {
    Node node;
    size_t size = 1;  // nodes in the subtree so far
    YAML::anchor_t anchor = YAML::NullAnchor;
    std::set<std::string> seen_keys;
  };
  struct Anchored {
    Node node;
    size_t size = 0;
  };

  void charge(size_t nodes, const support::TextPosition& at) {
    if (nodes > limits_.max_nodes - std::min(nodes_, limits_.max_nodes)) {
      stop(at, fmt::format("more than {} YAML nodes (counting the copies aliases make); an alias bomb, or a document "
                           "larger than gov reads",
                           limits_.max_nodes));
    }
    nodes_ += nodes;
  }

  void seen(const YAML::Mark& mark) {
    if (mark.pos > 0) parsed_to = std::max(parsed_to, static_cast<size_t>(mark.pos));
  }

  void open(Node::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
    seen(mark);
    const support::TextPosition at = position(mark);
    if (stack_.size() >= limits_.max_depth) {
      stop(at, fmt::format("nesting deeper than {} levels of maps and lists", limits_.max_depth));
    }
    charge(1, at);
    Frame frame;
    frame.node.kind = kind;
    frame.node.at = at;
    frame.anchor = anchor;
    stack_.push_back(std::move(frame));
  }

  void close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    // The frame's own node was charged when it opened; complete() charges only leaves.
    complete(std::move(frame.node), frame.size, frame.anchor, /*charged=*/true);
  }

  void complete(Node node, size_t size, YAML::anchor_t anchor, bool charged = false) {
    if (!charged) charge(size, node.at);  // a leaf
    if (anchor != YAML::NullAnchor) {
      charge(size, node.at);  // the anchor's own copy
      anchors_[anchor] = Anchored{node, size};
    }
    if (stack_.empty()) {
      root_ = std::make_unique<Node>(std::move(node));
      return;
    }
    Frame& parent = stack_.back();
    parent.size += size;
    if (parent.node.kind == Node::Kind::sequence) {
      parent.node.items.push_back(std::move(node));
      return;
    }
    Node& map = parent.node;
    if (map.keys.size() == map.values.size()) {
      if (node.kind != Node::Kind::scalar) stop(node.at, fmt::format("a map key must be a string, found {}", kind_name(node)));
      if (node.text == "<<" && !node.quoted) stop(node.at, "merge keys (`<<`) are not read; write the entries out");
      if (!parent.seen_keys.insert(node.text).second) stop(node.at, fmt::format("duplicate key `{}`", node.text));
      map.keys.push_back(std::move(node));
      return;
    }
    map.values.push_back(std::move(node));
  }

  const YamlLimits& limits_;
  std::vector<Frame> stack_;
  std::unique_ptr<Node> root_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  size_t nodes_ = 0;
};

/// The input as yaml-cpp reads it, in chunks, refusing to hand out bytes further than
/// `max_lookahead` past the last node the parser reported. yaml-cpp's scanner queues every token
/// of a flow collection that might turn out to be a key (`[[[[…`, `{a: …`) before the parser sees
/// the first one, about 250 bytes of memory per byte of input; this keeps that queue bounded.
class LookaheadBuffer final : public std::streambuf {
 public:
  LookaheadBuffer(std::string_view text, const size_t& parsed_to, size_t max_lookahead)
      : text_(text), parsed_to_(parsed_to), max_lookahead_(max_lookahead) {}

 protected:
  int_type underflow() override {
    if (next_ >= text_.size()) return traits_type::eof();
    if (next_ > parsed_to_ && next_ - parsed_to_ > max_lookahead_) {
      stop(position_at(text_, next_),
           fmt::format("the YAML parser read more than {} bytes past the last node it finished (a scalar that long, or a "
                       "flow collection `[...]` or `{{...}}` that long or nested that deep); write it in block style",
                       max_lookahead_));
    }
    const size_t n = std::min(kChunk, text_.size() - next_);
    char* begin = const_cast<char*>(text_.data() + next_);  // the get area is only read
    setg(begin, begin, begin + n);
    next_ += n;
    return traits_type::to_int_type(*gptr());
  }

 private:
  static constexpr size_t kChunk = 4096;
  std::string_view text_;
  const size_t& parsed_to_;
  size_t max_lookahead_;
  size_t next_ = 0;
};

}  // namespace

support::Expected<std::vector<Node>> load_yaml(std::string_view text, const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return support::Error{support::ErrorKind::invalid,
                          fmt::format("the input is {} bytes, more than the {} bytes gov reads", text.size(), limits.max_bytes)};
  }
  // YAML's characters are the printable ones and tab, line feed and carriage return: yaml-cpp
  // read a NUL as the start of an escape ("unknown escape character" at the next line) and took
  // other C0 controls into scalars (a hostile-input helper's finding). Refused here, named.
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      continue;
    }
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      support::TextPosition at;
      at.line = line;
      at.column = i - line_start + 1;
      at.offset = i;
      return support::Error{support::ErrorKind::invalid,
                            fmt::format("line {}, column {}: control character U+{:04X} in the YAML, which allows none "
                                        "(a binary file, or a NUL written by a script?)",
                                        at.line, at.column, c),
                            at};
    }
  }
  // yaml-cpp does not check the encoding, and bad bytes were replaced by U+FFFD later: two
  // names that differ in them became one (a hostile-input trial's finding). The JSON readers
  // refuse them; so does this one.
  if (const size_t bad = find_invalid_utf8(text); bad != std::string_view::npos) {
    const support::TextPosition at = position_at(text, bad);
    return support::Error{support::ErrorKind::invalid,
                          fmt::format("line {}, column {}: invalid UTF-8 byte 0x{:02X}: Kubernetes YAML is UTF-8 "
                                      "(a file saved in another encoding?)",
                                      at.line, at.column, static_cast<unsigned char>(text[bad])),
                          at};
  }
  Builder builder(limits);
  LookaheadBuffer buffer(text, builder.parsed_to, limits.max_lookahead);
  std::istream in(&buffer);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const Stop& stopped) {
    return stopped.error;
  } catch (const YAML::Exception& e) {
    const support::TextPosition at = position(e.mark);
    return support::Error{support::ErrorKind::invalid, fmt::format("line {}, column {}: {}", at.line, at.column, e.msg), at};
  } catch (const std::bad_alloc&) {
    return support::Error{support::ErrorKind::invalid, "out of memory reading the YAML"};
  } catch (const std::exception& e) {
    return support::Error{support::ErrorKind::invalid, fmt::format("cannot read the YAML: {}", e.what())};
  }
  return std::move(builder.documents);
}

support::Expected<std::vector<Node>> kubernetes_objects(std::vector<Node> documents) {
  std::vector<Node> out;
  for (Node& document : documents) {
    if (!document.is_map()) return error_at(document, fmt::format("expected a Kubernetes object (a map), found {}", kind_name(document)));
    const Node* kind = document.find("kind");
    const bool list = kind && kind->is_scalar() && kind->text.size() >= 4 && kind->text.compare(kind->text.size() - 4, 4, "List") == 0 &&
                      document.find("items");
    if (!list) {
      out.push_back(std::move(document));
      continue;
    }
    const Node* items = document.find("items");
    if (!items->is_sequence() && !items->is_null()) return error_at(*items, fmt::format("`items` of a `{}` must be a list", kind->text));
    for (const Node& item : items->items) {
      if (!item.is_map()) return error_at(item, fmt::format("expected a Kubernetes object (a map), found {}", kind_name(item)));
      out.push_back(item);
    }
  }
  return out;
}

}  // namespace gov::kube
