#include "compiler/diagnostics/source_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace gov {

SourceFile::SourceFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
  // Columns on long lines: a checkpoint every kCheckpointBytes, reached by line_column's own
  // steps from the line's start, so that a column costs at most that many steps.
  const auto size = static_cast<uint32_t>(text_.size());
  for (size_t line = 0; line < line_starts_.size(); ++line) {
    const uint32_t begin = line_starts_[line];
    const uint32_t end = line + 1 < line_starts_.size() ? line_starts_[line + 1] : size;
    if (end - begin <= kCheckpointBytes) continue;
    uint32_t column = 1;
    uint32_t mark = begin + kCheckpointBytes;
    for (uint32_t i = begin; i < end; ++column) {
      if (i >= mark) {
        checkpoints_.push_back({i, column});
        mark = i + kCheckpointBytes;
      }
      i += static_cast<uint32_t>(std::max(1, utf8_sequence_length(static_cast<unsigned char>(text_[i]))));
    }
  }
}

std::string_view SourceFile::slice(Span span) const {
  const size_t begin = std::min<size_t>(span.begin, text_.size());
  const size_t end = std::clamp<size_t>(span.end, begin, text_.size());
  return std::string_view(text_).substr(begin, end - begin);
}

LineColumn SourceFile::line_column(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const uint32_t line = static_cast<uint32_t>(it - line_starts_.begin());
  uint32_t column = 1;
  uint32_t i = line_starts_[line - 1];
  // The nearest checkpoint at or before the offset, on this line.
  const auto cp = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), offset,
                                   [](uint32_t o, const Checkpoint& c) { return o < c.offset; });
  if (cp != checkpoints_.begin() && std::prev(cp)->offset >= i) {
    i = std::prev(cp)->offset;
    column = std::prev(cp)->column;
  }
  for (; i < offset;) {
    i += std::max(1, utf8_sequence_length(static_cast<unsigned char>(text_[i])));
    ++column;
  }
  return {line, column};
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  const uint32_t begin = line_starts_[line - 1];
  uint32_t end = line < line_starts_.size() ? line_starts_[line] : static_cast<uint32_t>(text_.size());
  while (end > begin && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
  return std::string_view(text_).substr(begin, end - begin);
}

SourceId SourceMap::add(std::string path, std::string text) {
  files_.emplace_back(std::move(path), std::move(text));
  return static_cast<SourceId>(files_.size() - 1);
}

const char* file_kind_name(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "an unknown kind of file";
}

std::optional<size_t> regular_file_size(int fd, size_t limit, std::string& error) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    error = fmt::format("cannot stat: {}", std::strerror(errno));
    return std::nullopt;
  }
  // Directories keep their historical message; everything else that is not a regular file
  // (a FIFO, a socket, a device) could block or never end, so it is refused unread.
  if (S_ISDIR(info.st_mode)) {
    error = "is a directory";
    return std::nullopt;
  }
  if (!S_ISREG(info.st_mode)) {
    error = fmt::format("not a regular file ({})", file_kind_name(info.st_mode));
    return std::nullopt;
  }
  if (static_cast<size_t>(info.st_size) > limit) {
    error = fmt::format("file is {} bytes; gov reads at most {} bytes", info.st_size, limit);
    return std::nullopt;
  }
  return static_cast<size_t>(info.st_size);
}

std::optional<std::string> read_text_fd(int fd, size_t limit, std::string& error) {
  const std::optional<size_t> size = regular_file_size(fd, limit, error);
  if (!size) return std::nullopt;
  return read_to_end(fd, limit, *size, error);
}

std::optional<std::string> read_to_end(int fd, size_t limit, size_t expected, std::string& error) {
  std::string text;
  text.reserve(std::min(expected, limit));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = fmt::format("read failed after {} bytes: {}", text.size(), std::strerror(errno));
      return std::nullopt;
    }
    if (n == 0) return text;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > limit) {  // a pipe, or a file that grew while it was read
      error = fmt::format("file is larger than {} bytes", limit);
      return std::nullopt;
    }
  }
}

std::optional<std::string> read_text_file(const std::string& path, size_t limit, std::string& error) {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise; read_text_fd then
  // refuses it. It changes nothing for the regular files that are read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  std::optional<std::string> text = read_text_fd(fd, limit, error);
  ::close(fd);  // read-only: nothing to lose if close fails
  return text;
}

}  // namespace gov
