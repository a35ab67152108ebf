// Where a policy's files come from: a directory on disk, opened so that no file outside it is
// ever read, or a set of files in memory (a stored version, a test, fuzzing, stdin).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gov::check {

/// Most files one policy may read, its entry file and every import (docs/limits.md).
inline constexpr size_t kMaxProgramFiles = 1'000;
/// Longest root-relative path of a policy file, in bytes.
inline constexpr size_t kMaxLogicalPathBytes = 1'024;

/// A file a SourceProvider read.
struct SourceText {
  /// The file's path relative to the provider's root, normalised and symlinks resolved
  /// ("catalog/g5.gov"): what identifies the file and what the store records.
  std::string logical_path;
  std::string text;
  /// Where the file was found, when that is not under the policy root (a shipped catalog read
  /// from its directory: its real path); empty otherwise.
  std::string origin;
};

/// Why a file was not read.
struct SourceError {
  /// Completes "cannot read `path`: ..." (lower-case, no final period).
  std::string reason;
  /// The file exists but resolves outside the root (through a symbolic link).
  bool outside_root = false;
};

/// The result of SourceProvider::read: a file or the reason there is none.
struct SourceRead {
  std::optional<SourceText> file;
  SourceError error;
  bool ok() const { return file.has_value(); }
};

/// Reads the files of one policy. Paths given to read() are logical: relative to the
/// provider's root, normalised, without `..` (see normalise_logical_path). Implementations
/// are used from one thread at a time.
class SourceProvider {
 public:
  virtual ~SourceProvider() = default;
  /// Reads the file at `logical_path`, at most `limit` bytes.
  virtual SourceRead read(const std::string& logical_path, size_t limit) const = 0;
  /// The root as the user should see it in notes ("/work/repo", or "the stored version").
  virtual std::string root_description() const = 0;
};

/// `path` as a logical path (relative, `.` and `..` resolved, no empty component), or nullopt
/// when it is absolute, empty, contains NUL, is longer than kMaxLogicalPathBytes or leaves the
/// root ("../x", "a/../../x").
std::optional<std::string> normalise_logical_path(std::string_view path);

/// The directory part of a logical path ("a/b.gov" -> "a", "b.gov" -> "").
std::string logical_directory(std::string_view logical_path);

/// Files in memory, keyed by logical path (a stored version's files, tests, fuzzing, stdin).
class MemorySources final : public SourceProvider {
 public:
  /// `description` names the set in messages ("no such file in the stored version").
  explicit MemorySources(std::string description = "the stored version") : description_(std::move(description)) {}
  /// Adds or replaces a file. `logical_path` must be normalised.
  void add(std::string logical_path, std::string text);
  SourceRead read(const std::string& logical_path, size_t limit) const override;
  std::string root_description() const override { return description_; }

 private:
  std::string description_;
  std::map<std::string, std::string, std::less<>> files_;
};

/// Files under a directory on disk. A file is opened once, without blocking (a FIFO or a
/// device is refused, never waited on), and the opened descriptor is checked: the file must
/// be a regular file whose real path lies under the root. There is no window between the
/// check and the read, so a symbolic link swapped in by another process cannot lead outside.
/// Symbolic links that stay under the root are followed.
class DiskSources final : public SourceProvider {
 public:
  /// Opens `root` (an existing directory). On failure returns nullptr and sets `error`.
  static std::unique_ptr<DiskSources> open(const std::string& root, std::string& error);
  ~DiskSources() override;
  DiskSources(const DiskSources&) = delete;
  DiskSources& operator=(const DiskSources&) = delete;

  SourceRead read(const std::string& logical_path, size_t limit) const override;
  std::string root_description() const override { return real_root_; }
  /// The root's real path (absolute, symlinks resolved).
  const std::string& real_root() const { return real_root_; }

 private:
  DiskSources(int root_fd, std::string real_root) : root_fd_(root_fd), real_root_(std::move(real_root)) {}
  int root_fd_ = -1;
  std::string real_root_;
};

/// Files on disk with some of them replaced by texts in memory: an editor's open, unsaved
/// buffers (`gov lsp`). `base` must outlive it; `buffers` are keyed by logical path.
class OverlaySources final : public SourceProvider {
 public:
  OverlaySources(const SourceProvider& base, std::map<std::string, std::string, std::less<>> buffers)
      : base_(base), buffers_(std::move(buffers)) {}
  SourceRead read(const std::string& logical_path, size_t limit) const override;
  std::string root_description() const override { return base_.root_description(); }

 private:
  const SourceProvider& base_;
  std::map<std::string, std::string, std::less<>> buffers_;
};

/// Shipped catalogs (`import "aws-ml"`): `<name>.gov` in the first of a list of directories that
/// holds it. Each directory is a root of its own: a catalog file is read like a policy file
/// under it (regular files only, no symbolic link out of the directory). Directories that do
/// not exist are skipped. SourceText::origin is the file's real path.
class CatalogSources final : public SourceProvider {
 public:
  explicit CatalogSources(std::vector<std::string> directories);
  ~CatalogSources() override;
  /// `logical_path` is `<name>.gov`.
  SourceRead read(const std::string& logical_path, size_t limit) const override;
  std::string root_description() const override;
  const std::vector<std::string>& directories() const { return directories_; }

 private:
  std::vector<std::string> directories_;
  std::vector<std::unique_ptr<DiskSources>> opened_;  // the directories that exist, in order
};

/// Where a policy entered at `entry_path` has its root, when no root is given: the nearest
/// directory at or above the (real) directory the entry is named in that holds a `gov.toml`
/// project file, else the top of the git work tree holding it (a directory with `.git`), else
/// that directory. The directory of the name, not of what a symbolic link leads to: a link
/// named as the entry is confined like one imported (docs/security.md). The filesystem root
/// `/` is never chosen (an error: give a root). Sets `error` and returns nullopt when the entry
/// cannot be resolved.
std::optional<std::string> find_policy_root(const std::string& entry_path, std::string& error);

/// The real path of `path` (absolute, every symlink resolved) or nullopt with `error` set.
std::optional<std::string> real_path(const std::string& path, std::string& error);

}  // namespace gov::check
