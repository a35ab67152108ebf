// Helpers shared by the tests: repository paths, running `gov`, parsing text.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/check/program.hpp"
#include "compiler/diagnostics/source_file.hpp"
#include "grammar/parse.hpp"

namespace gov::test {

/// Absolute path of a file in the repository.
std::string repo_path(const std::string& relative);
/// Every file under `directory` (relative to the repository) whose name ends in `suffix`, sorted.
std::vector<std::string> files_under(const std::string& directory, const std::string& suffix);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

/// The root of the tests' temporary files: a directory of the build tree (GOV_TEST_SCRATCH_DIR),
/// made on first use, holding a `gov.toml` so that a policy written under it has its policy
/// root there (its imports must stay under it) wherever the build tree lies. Tests never write
/// into the source tree.
std::string scratch_root();

/// A fresh empty directory under scratch_root() (`NAME-PID-N`), removed with everything in it
/// on destruction. Not for tests that need a directory with no `.git` or `gov.toml` above it
/// (the security tests' Scratch, under /tmp).
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// The path of `relative` under the directory.
  std::string operator/(const std::string& relative) const { return (path_ / relative).string(); }
  /// Writes `text` to `relative` (creating directories); returns its path.
  std::string write(const std::string& relative, const std::string& text) const;
  /// Copies policies/catalog/aws-ml.gov to the same relative path here, so that a policy
  /// written at `tests/<dir>/x.gov` (or `policies/<dir>/x.gov`) keeps the repository's
  /// `import "../../policies/catalog/aws-ml.gov"`.
  void copy_catalog() const;

 private:
  std::filesystem::path path_;
};

/// A small tmpfs mounted at `path` (created) for tests of a full or read-only volume, unmounted on
/// destruction. Mounting needs root: mounted() is false otherwise, and such a test is skipped
/// with a WARN (the CI machine runs as root).
class SmallVolume {
 public:
  SmallVolume(const std::string& path, const std::string& size);
  ~SmallVolume();
  SmallVolume(const SmallVolume&) = delete;
  SmallVolume& operator=(const SmallVolume&) = delete;
  bool mounted() const { return mounted_; }
  /// Remounts the volume read-only; false when that fails.
  bool make_read_only();
  /// Fills the volume with a file `fill` until a write fails; then frees `keep_free` bytes
  /// (a file of that size written first and removed after).
  void fill(size_t keep_free = 0) const;
  /// Removes what fill() wrote.
  void unfill() const;

 private:
  std::string path_, size_;
  bool mounted_ = false;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
/// A deterministic pseudo-random sequence for tests that generate inputs (xorshift64): the
/// same seed gives the same inputs on every run, so a failure reproduces.
class Xorshift64 {
 public:
  explicit Xorshift64(uint64_t seed = 0x9E3779B97F4A7C15ULL) : state_(seed) {}
  uint64_t operator()() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }

 private:
  uint64_t state_;
};

/// Runs `build/bin/gov ARGS` in the repository root and captures both streams.
CommandResult run_gov(const std::string& args);

/// Parses `text` as a file named `name`; the SourceMap keeps the text alive.
struct Parsed {
  SourceMap sources;
  grammar::ParseResult result;
};
Parsed parse_text(const std::string& text, const std::string& name = "test.gov");

/// Rendered diagnostics of a parse, for assertions with a readable failure message.
std::string rendered(const Parsed& parsed);

/// `text` as a policy named `name`, read and parsed by driver::load (Stage::parse; its imports
/// are looked up in memory, where there is no other file).
check::Program program_from_text(const std::string& name, std::string text);
/// The file at `path` and its imports, read and parsed by driver::load (Stage::parse), confined
/// to `root` (empty: check::find_policy_root). When the entry cannot be read, `read_failed`
/// and `read_error` say so.
check::Program program_from_file(const std::string& path, const std::string& root = {});

}  // namespace gov::test
