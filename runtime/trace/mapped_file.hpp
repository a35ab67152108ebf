// A file's bytes for a streaming reader: mapped read-only, so that a trace of a gigabyte is
// read without holding it in memory (pages already read are handed back with release_before).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gov::trace {

/// A regular file mapped read-only, or any other file (a pipe, /dev/stdin) read into memory.
/// Move-only; the mapping ends with the object. Not thread-safe.
class MappedFile {
 public:
  /// Opens `path`; nullopt with a readable `error` ("No such file or directory", "is a
  /// directory", "file is N bytes; gov reads at most M bytes") when it cannot be read or has
  /// more than `limit` bytes.
  static std::optional<MappedFile> open(const std::string& path, size_t limit, std::string& error);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  /// The whole file; valid while this object lives.
  std::string_view text() const { return text_; }

  /// Drops the pages before `offset` from memory; reading them again reads the file again, so
  /// text() stays valid and unchanged. Keeps the memory of a reader that moves forward small.
  /// Does nothing for a file read into memory.
  void release_before(size_t offset);

 private:
  MappedFile() = default;
  void unmap();

  void* mapping_ = nullptr;
  size_t mapped_bytes_ = 0;
  size_t released_ = 0;  // bytes from the start already released
  std::string copy_;     // the contents when not mapped
  std::string_view text_;
};

}  // namespace gov::trace
