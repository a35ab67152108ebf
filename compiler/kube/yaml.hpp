// The one YAML loader of gov (entry point of gov::kube): Kubernetes manifests as a tree of nodes
// with line:column, read with bounded input size, nesting depth and alias expansion.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/support/expected.hpp"

namespace gov::kube {

/// One YAML node. Maps keep their entries in document order; keys are scalars (`keys[i]` is the
/// key of `values[i]`). A scalar keeps its text as written (after YAML's unescaping): what it
/// means (a string, a number, a quantity) is up to the reader of the field.
struct Node {
  enum class Kind : unsigned char { null, scalar, sequence, map };
  Kind kind = Kind::null;
  /// A scalar written in quotes (or with an explicit tag): a string even when it reads as a number.
  bool quoted = false;
  std::string text;          // scalar
  std::vector<Node> items;   // sequence
  std::vector<Node> keys;    // map: the keys, scalars
  std::vector<Node> values;  // map: the values, one per key
  support::TextPosition at;  // where the node starts

  bool is_map() const { return kind == Kind::map; }
  bool is_sequence() const { return kind == Kind::sequence; }
  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_null() const { return kind == Kind::null; }
  /// The value of `key` in a map; nullptr when absent or when this is not a map.
  const Node* find(std::string_view key) const;
};

/// "a map", "a list", "a string", "null": a node's kind for messages.
std::string_view kind_name(const Node& node);

/// Bounds on what load_yaml reads (docs/limits.md, "Kubernetes YAML").
struct YamlLimits {
  /// The largest input (bytes). A larger one is an error before anything is parsed.
  size_t max_bytes = size_t{16} << 20;
  /// The deepest nesting of maps and lists. yaml-cpp's parser recurses once per level; reading
  /// stops at the first node deeper than this, so the stack stays bounded whatever the input.
  size_t max_depth = 64;
  /// How far yaml-cpp's scanner may read past the last node its parser finished (bytes). It
  /// reads a whole scalar before reporting it, and queues every token of a flow collection that
  /// might be a key, at about 250 bytes of memory per byte, before reporting any: this bounds that
  /// memory (a 16 MiB `[[[[…` would take 4 GB). A scalar or a flow collection longer than this is
  /// an error; Kubernetes caps an object's annotations at 256 KiB.
  size_t max_lookahead = size_t{1} << 20;
  /// The most nodes in all documents together, counting every node an alias copies: an alias
  /// bomb ("billion laughs") stops here instead of exhausting memory.
  size_t max_nodes = 1'000'000;
};

/// The documents of a YAML stream (`---`-separated), in order, empty documents left out. Not
/// read: merge keys (`<<`, an error), tags beyond marking a scalar as a string. Duplicate keys in
/// a map are an error, as in Kubernetes' strict decoding. Errors are kind `invalid`, with the
/// position and "line L, column C: " in the message. Pure; never throws.
support::Expected<std::vector<Node>> load_yaml(std::string_view text, const YamlLimits& limits = {});

/// The Kubernetes objects of loaded documents: each document that is a map is one object, and a
/// `kind: List` (or any `kind: ...List` with `items`, as `kubectl get -o yaml` writes) stands for
/// its items. A document that is not a map, or a List without an `items` list, is an error.
support::Expected<std::vector<Node>> kubernetes_objects(std::vector<Node> documents);

/// "line 3, column 14: `why`" positioned at `node`: the error shape of every reader of YAML.
support::Error error_at(const Node& node, std::string_view why);

}  // namespace gov::kube
