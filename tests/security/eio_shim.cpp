// An LD_PRELOAD library for the I/O tests: read() and pread() of one file fail with EIO past a
// given offset, as a failing disk would, so that readers can be shown to report it.
//
// GOV_EIO_PATH: the file, matched as a suffix of the path /proc/self/fd/N resolves to.
// GOV_EIO_AFTER: how many bytes read fine (default 0); reads that start there or later fail,
// reads that cross it are cut short at it (the next one then fails).
// Other files and processes without GOV_EIO_PATH are untouched.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using ReadFn = ssize_t (*)(int, void*, size_t);
using PreadFn = ssize_t (*)(int, void*, size_t, off_t);

bool matches(int fd) {
  const char* want = std::getenv("GOV_EIO_PATH");
  if (want == nullptr || *want == '\0') return false;
  char link[64];
  char path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  const size_t length = std::strlen(want);
  return static_cast<size_t>(n) >= length && std::strcmp(path + n - length, want) == 0;
}

off_t fail_after() {
  const char* after = std::getenv("GOV_EIO_AFTER");
  return after == nullptr ? 0 : static_cast<off_t>(std::strtoll(after, nullptr, 10));
}

/// How many of `count` bytes at `offset` may be read; -1 (errno EIO) when none.
ssize_t allowed(off_t offset, size_t count) {
  const off_t limit = fail_after();
  if (offset >= limit) {
    errno = EIO;
    return -1;
  }
  const auto left = static_cast<size_t>(limit - offset);
  return static_cast<ssize_t>(count < left ? count : left);
}

}  // namespace

extern "C" ssize_t read(int fd, void* buffer, size_t count) {
  static auto real = reinterpret_cast<ReadFn>(::dlsym(RTLD_NEXT, "read"));
  if (matches(fd)) {
    const off_t offset = ::lseek(fd, 0, SEEK_CUR);
    if (offset >= 0) {
      const ssize_t n = allowed(offset, count);
      if (n < 0) return -1;
      count = static_cast<size_t>(n);
    }
  }
  return real(fd, buffer, count);
}

extern "C" ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  static auto real = reinterpret_cast<PreadFn>(::dlsym(RTLD_NEXT, "pread"));
  if (matches(fd)) {
    const ssize_t n = allowed(offset, count);
    if (n < 0) return -1;
    count = static_cast<size_t>(n);
  }
  return real(fd, buffer, count, offset);
}

extern "C" ssize_t pread64(int fd, void* buffer, size_t count, off_t offset) {
  return pread(fd, buffer, count, offset);
}
