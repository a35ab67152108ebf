// A trace file read in chunks with read(), for a streaming reader: memory holds a window of it,
// and every read error is reported (a mapped file would turn one into SIGBUS).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/trace/json.hpp"

namespace gov::trace {

/// A regular file of at most `limit` bytes, read front to back in chunks of kChunkBytes with
/// pread() into anonymous memory reserved for the whole file (addresses never move, so a
/// JsonReader can keep offsets), and dropped again (MADV_DONTNEED) behind the reader. A 1 GiB
/// trace costs 1 GiB of address space but only the window in resident memory.
///
/// Why not mmap the file: a page that cannot be read (EIO, a file truncated by another process)
/// raises SIGBUS in whatever code touches it, which no caller can turn into an error message.
/// Here each pread() is checked and a failure ends the input and is kept in error().
///
/// Move-only; a JsonReader using it as its source must not outlive it or see it move. Not
/// thread-safe.
class TraceFile final : public JsonSource {
 public:
  /// Bytes read ahead at a time.
  static constexpr size_t kChunkBytes = size_t{1} << 20;

  /// Opens `path` (O_NONBLOCK: a FIFO cannot block the open), or an error of kind `io` whose
  /// message reads after "cannot read `path`: " ("No such file or directory", "is a directory",
  /// "not a regular file (a FIFO)", "file is N bytes; gov reads at most M bytes", "cannot
  /// reserve memory: ...").
  static support::Expected<TraceFile> open(const std::string& path, size_t limit);

  TraceFile(TraceFile&& other) noexcept;
  TraceFile& operator=(TraceFile&& other) noexcept;
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile();

  /// The whole file's extent; only [dropped, filled) holds its bytes (see fill).
  std::string_view text() const { return {static_cast<const char*>(base_), size_}; }
  /// JsonSource: reads on to at least `end` (a chunk at a time), drops the whole pages before
  /// `keep`; returns the bytes filled. Stops early at a read error (error()) or when the file
  /// turns out shorter than it was.
  size_t fill(size_t end, size_t keep) override;
  /// Drops everything: the next fill reads from the start again (a second pass).
  void rewind();
  /// Why reading stopped early: "read failed after 65536 bytes: Input/output error".
  const std::optional<std::string>& error() const { return error_; }
  /// Bytes resident now (filled minus dropped), for tests.
  size_t window_bytes() const { return filled_ - dropped_; }

 private:
  TraceFile() = default;
  void release();

  int fd_ = -1;
  void* base_ = nullptr;  // anonymous, size_ bytes (nullptr for an empty file)
  size_t size_ = 0;
  size_t filled_ = 0;   // bytes [0, filled_) have been read
  size_t dropped_ = 0;  // bytes [0, dropped_) were given back (page-aligned)
  std::optional<std::string> error_;
};

}  // namespace gov::trace
