// The documents an editor has open and what gov makes of them: each checked through the driver
// exactly as `gov check` checks a file, with every open buffer standing in for its file on disk
// (so a change in an imported catalog shows in the files that import it).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver/driver.hpp"
#include "tools/lsp/positions.hpp"

namespace gov::lsp {

/// The most documents open at once (each is re-checked after every change).
inline constexpr size_t kMaxOpenDocuments = 200;

struct Document {
  std::string uri;
  std::string path;  // absolute
  std::string text;
  int64_t version = 0;
};

/// A document's policy as checked (parse and check diagnostics, the resolved policy), or why
/// there is none (an unreadable import root, say).
struct Checked {
  driver::Result result;
  /// The file a diagnostic or declaration lies in, as an absolute path ("" when it is not on
  /// disk, such as a buffer of a file that does not exist yet).
  std::string path_of(SourceId source) const;
  const driver::CheckedPolicy* checked() const { return result.policy ? &result.policy->checked : nullptr; }
};

class Workspace {
 public:
  /// The workspace's root directory (from `initialize`); empty: any file may be opened.
  void set_root(std::string root);
  /// Whether `path` lies under the root (always, without a root).
  bool inside(const std::string& path) const;

  /// Opens or replaces a document; nullptr when too many are open.
  Document* open(const std::string& uri, const std::string& path, std::string text, int64_t version);
  void close(const std::string& uri);
  Document* find(const std::string& uri);
  const std::map<std::string, Document>& documents() const { return documents_; }

  /// Checks `document` with every open buffer.
  Checked check(const Document& document) const;

 private:
  std::string root_;
  std::map<std::string, Document> documents_;  // by URI
};

}  // namespace gov::lsp
