#include "runtime/trace/trace_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "compiler/diagnostics/source_file.hpp"

namespace gov::trace {

support::Expected<TraceFile> TraceFile::open(const std::string& path, size_t limit) {
  TraceFile file;
  file.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file.fd_ < 0) return support::Error{support::ErrorKind::io, std::strerror(errno)};
  // A pipe, a FIFO or a device could block or never end, and cannot be read twice.
  std::string error;
  const std::optional<size_t> size = regular_file_size(file.fd_, limit, error);
  if (!size) return support::Error{support::ErrorKind::io, std::move(error)};
  file.size_ = *size;
  if (file.size_ == 0) return file;
  // Address space only: MAP_NORESERVE commits nothing, pages exist once written.
  void* base = ::mmap(nullptr, file.size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return support::Error{support::ErrorKind::io, fmt::format("cannot reserve memory: {}", std::strerror(errno))};
  }
  file.base_ = base;
  return file;
}

TraceFile::TraceFile(TraceFile&& other) noexcept { *this = std::move(other); }

TraceFile& TraceFile::operator=(TraceFile&& other) noexcept {
  if (this == &other) return *this;
  release();
  fd_ = std::exchange(other.fd_, -1);
  base_ = std::exchange(other.base_, nullptr);
  size_ = std::exchange(other.size_, 0);
  filled_ = std::exchange(other.filled_, 0);
  dropped_ = std::exchange(other.dropped_, 0);
  error_ = std::exchange(other.error_, std::nullopt);
  return *this;
}

TraceFile::~TraceFile() { release(); }

void TraceFile::release() {
  if (base_ != nullptr) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);  // read-only: nothing to lose if close fails
  base_ = nullptr;
  fd_ = -1;
}

size_t TraceFile::fill(size_t end, size_t keep) {
  static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  char* base = static_cast<char*>(base_);
  const size_t drop = std::min(keep, filled_) / page * page;  // whole pages only
  if (drop > dropped_) {
    // Anonymous memory: the pages are freed (and would read as zeros; nobody reads them).
    ::madvise(base + dropped_, drop - dropped_, MADV_DONTNEED);
    dropped_ = drop;
  }
  if (error_ || end <= filled_) return filled_;
  const size_t target = std::min(size_, std::max(end, filled_ + kChunkBytes));
  while (filled_ < target) {
    const ssize_t n = ::pread(fd_, base + filled_, target - filled_, static_cast<off_t>(filled_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = fmt::format("read failed after {} bytes: {}", filled_, std::strerror(errno));
      break;
    }
    if (n == 0) {
      error_ = fmt::format("the file ended after {} bytes while it was read; it had {} bytes", filled_, size_);
      break;
    }
    filled_ += static_cast<size_t>(n);
  }
  return filled_;
}

void TraceFile::rewind() {
  if (base_ != nullptr && filled_ > dropped_) {
    ::madvise(static_cast<char*>(base_) + dropped_, filled_ - dropped_, MADV_DONTNEED);
  }
  filled_ = dropped_ = 0;
  error_.reset();
}

}  // namespace gov::trace
