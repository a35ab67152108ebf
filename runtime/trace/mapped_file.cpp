#include "runtime/trace/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace gov::trace {
namespace {

/// Closes a file descriptor when it goes out of scope.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_all(int fd, size_t limit, std::string& out, std::string& error) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      return false;
    }
    if (n == 0) return true;
    out.append(buffer, static_cast<size_t>(n));
    if (out.size() > limit) {
      error = fmt::format("file is larger than {} bytes", limit);
      return false;
    }
  }
}

}  // namespace

std::optional<MappedFile> MappedFile::open(const std::string& path, size_t limit, std::string& error) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(info.st_mode)) {
    error = "is a directory";
    return std::nullopt;
  }
  MappedFile mapped;
  if (!S_ISREG(info.st_mode) || info.st_size == 0) {  // a pipe or a device: read it
    if (!read_all(file.fd, limit, mapped.copy_, error)) return std::nullopt;
    mapped.text_ = mapped.copy_;
    return mapped;
  }
  const auto size = static_cast<size_t>(info.st_size);
  if (size > limit) {
    error = fmt::format("file is {} bytes; gov reads at most {} bytes", size, limit);
    return std::nullopt;
  }
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (address == MAP_FAILED) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  ::madvise(address, size, MADV_SEQUENTIAL);  // a hint: read ahead, read once
  mapped.mapping_ = address;
  mapped.mapped_bytes_ = size;
  mapped.text_ = std::string_view(static_cast<const char*>(address), size);
  return mapped;
}

MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this == &other) return *this;
  unmap();
  mapping_ = std::exchange(other.mapping_, nullptr);
  mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  released_ = std::exchange(other.released_, 0);
  const bool copied = mapping_ == nullptr;
  copy_ = std::move(other.copy_);
  text_ = copied ? std::string_view(copy_) : std::exchange(other.text_, {});
  other.text_ = {};
  return *this;
}

MappedFile::~MappedFile() { unmap(); }

void MappedFile::unmap() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapped_bytes_);
  mapping_ = nullptr;
  mapped_bytes_ = 0;
}

void MappedFile::release_before(size_t offset) {
  if (mapping_ == nullptr) return;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t end = std::min(offset, mapped_bytes_) / page * page;  // whole pages only
  if (end <= released_) return;
  // A private, read-only file mapping: dropped pages are read from the file again if touched.
  ::madvise(static_cast<char*>(mapping_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

}  // namespace gov::trace
