// Source text, byte spans and offset -> line:column mapping for every stage.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The UTF-8 helpers (append_utf8, utf8_sequence_length, find_invalid_utf8) are gov::support's.
#include "compiler/support/utf8.hpp"

namespace gov {

/// A half-open byte range [begin, end) into one SourceFile's text.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  friend bool operator==(const Span&, const Span&) = default;
};

/// 1-based line and column; the column counts UTF-8 code points, as editors do.
struct LineColumn {
  uint32_t line = 1;
  uint32_t column = 1;
};

/// Owns one file's text and its line table. Immutable after construction.
class SourceFile {
 public:
  SourceFile(std::string path, std::string text);

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  std::string_view slice(Span span) const;

  /// Line and column of a byte offset (offsets past the end map to the end).
  LineColumn line_column(uint32_t offset) const;
  /// The text of a 1-based line without its line terminator.
  std::string_view line_text(uint32_t line) const;
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }
  uint32_t line_start(uint32_t line) const { return line_starts_[line - 1]; }

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
  /// On lines longer than kCheckpointBytes: the column at a byte offset, every kCheckpointBytes
  /// or so (line_column starts from the nearest, so a diagnostic far along a 10 MB line costs
  /// no more than one near its start). Sorted by offset.
  struct Checkpoint {
    uint32_t offset;
    uint32_t column;
  };
  static constexpr uint32_t kCheckpointBytes = 4096;
  std::vector<Checkpoint> checkpoints_;
};

using SourceId = uint32_t;

/// Owns every SourceFile of a run (a policy and its imports). References stay valid
/// for the SourceMap's lifetime. Not thread-safe.
class SourceMap {
 public:
  SourceId add(std::string path, std::string text);
  const SourceFile& get(SourceId id) const { return files_[id]; }
  size_t size() const { return files_.size(); }

 private:
  std::deque<SourceFile> files_;
};

/// A span in a particular file.
struct Location {
  SourceId source = 0;
  Span span;
};

/// Reads a whole regular file; on failure returns nullopt and sets `error` to a readable
/// reason ("No such file or directory", "is a directory", "not a regular file (a FIFO)",
/// "file is N bytes; gov reads at most M bytes", "read failed after N bytes: Input/output
/// error"). Opens with O_NONBLOCK so that a FIFO without a writer cannot block, and refuses
/// anything that is not a regular file before reading a byte. Refuses regular files larger
/// than `limit` without reading them. Every read is checked (EINTR is retried): an I/O error
/// is an error, never a short text.
std::optional<std::string> read_text_file(const std::string& path, size_t limit, std::string& error);

/// Reads the regular file open as `fd` from its current offset to its end, with the same
/// checks and messages as read_text_file (not a regular file, more than `limit` bytes, any
/// failed read). Does not close `fd`; the caller keeps owning it.
std::optional<std::string> read_text_fd(int fd, size_t limit, std::string& error);

/// Reads `fd` (any kind: a pipe, a terminal, standard input) to its end, at most `limit` bytes
/// (more is the error "file is larger than N bytes"); `expected` sizes the buffer. Every read is
/// checked (EINTR is retried). Does not close `fd`.
std::optional<std::string> read_to_end(int fd, size_t limit, size_t expected, std::string& error);

/// "a FIFO", "a socket", "a character device", "a block device", "a directory", "a symbolic
/// link", "an unknown kind of file": the kind of a file's `st_mode`, for messages.
const char* file_kind_name(unsigned mode);

/// The size of the regular file open as `fd`, or nullopt with `error` set: "is a directory",
/// "not a regular file (a FIFO)" (anything that could block or never end is refused before a
/// byte is read), "file is N bytes; gov reads at most M bytes", or why fstat failed.
std::optional<size_t> regular_file_size(int fd, size_t limit, std::string& error);

}  // namespace gov
