// Helpers for the store tests: a temporary directory, policies whose files carry a marker,
// and checks that a version read back is whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/store/store.hpp"

namespace gov::store::test {

/// A fresh directory under the system's temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& root() const { return root_; }
  /// `root/name`.
  std::string path(std::string_view name) const;

 private:
  std::string root_;
};

/// An entry file and `imports` imported files, every one containing `marker` (so a reader can
/// tell whether all files of a version belong together).
std::vector<PolicyFile> marked_files(std::string_view marker, int imports = 1);

/// An apply of `files` to `policy` by "tester" with `message`.
ApplyRequest apply_request(std::string_view policy, std::vector<PolicyFile> files,
                           std::string_view message = "change");

/// Empty when `version` is whole: its content hash is content_hash(files), every file carries
/// the marker of the entry file and the message names it. Otherwise what is wrong.
std::string whole_version_problem(const Version& version);

/// The store's integrity_check report, or the error's message.
std::string integrity(Store& store);

/// Opens `path` or fails the test with the error's message.
Store open_or_fail(const std::string& path, const OpenOptions& options = {});

}  // namespace gov::store::test
