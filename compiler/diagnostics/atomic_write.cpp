#include "compiler/diagnostics/atomic_write.hpp"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace gov {
namespace {

std::string cause(const char* step) { return fmt::format("{} failed: {}", step, std::strerror(errno)); }

/// A name that is hard to predict: 64 random bits (getrandom; the pid and a counter when the
/// kernel has none), so another user cannot plant a link at the name in advance. O_EXCL is what
/// makes the creation safe; the randomness only keeps a planted file from blocking it.
std::string random_suffix() {
  static unsigned counter = 0;
  uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bits)) {
    bits = (static_cast<uint64_t>(::getpid()) << 32) ^ ++counter;
  }
  return fmt::format("{:016x}", bits);
}

bool write_all(int fd, std::string_view bytes, std::string& error) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = cause("write");
      return false;
    }
    if (n == 0) {  // not expected of a regular file; never loop forever on it
      error = "write failed: no bytes written";
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

/// The file a write to `path` should replace: `path` itself, or the file its symbolic links
/// lead to (replacing the link by a regular file would silently detach it).
std::string resolve_target(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return path;
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return path;  // a dangling link: rename replaces it
  return resolved;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool write_file_atomically(const std::string& path, std::string_view bytes, std::string& error,
                           const AtomicWriteOptions& options) {
  const std::string target = options.follow_link ? resolve_target(path) : path;
  const std::string directory = directory_of(target);
  struct stat original {};
  std::optional<struct stat> existing;
  const int looked = options.follow_link ? ::stat(target.c_str(), &original) : ::lstat(target.c_str(), &original);
  if (looked == 0 && !options.follow_link && (S_ISLNK(original.st_mode) || S_ISREG(original.st_mode))) {
    // A name gov picks: the rename replaces a link or a file there, and nothing of either is
    // kept (a file planted by another user must not give it the new file's ownership).
  } else if (looked == 0) {
    if (!S_ISREG(original.st_mode)) {
      error = "not a regular file";
      return false;
    }
    existing = original;
  } else if (errno != ENOENT) {
    error = cause("stat");
    return false;
  }

  // A dot file beside the target: same file system (rename is atomic), hidden from globs.
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temporary = fmt::format("{}/.{}.{}.tmp", directory, base_name_of(target), random_suffix());
    // An existing file keeps its mode below; until then nobody else may read the new bytes.
    const mode_t mode = existing ? 0600 : 0666;
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST && errno != EINTR) break;
  }
  if (fd < 0) {
    error = fmt::format("cannot create a temporary file in `{}`: {}", directory, std::strerror(errno));
    return false;
  }
  auto abandon = [&](std::string why) {
    if (fd >= 0) ::close(fd);
    ::unlink(temporary.c_str());
    error = std::move(why);
    return false;
  };
  if (existing) {
    // Owner first: fchown may clear set-id bits, which fchmod then restores. Only root may give
    // a file away; for anyone else the owner is already right or cannot be kept (not an error).
    if ((existing->st_uid != ::geteuid() || existing->st_gid != ::getegid()) &&
        ::fchown(fd, existing->st_uid, existing->st_gid) != 0 && errno != EPERM) {
      return abandon(cause("fchown"));
    }
    if (::fchmod(fd, existing->st_mode & 07777) != 0) return abandon(cause("fchmod"));
  }
  if (options.mode && ::fchmod(fd, *options.mode & 07777) != 0) return abandon(cause("fchmod"));
  if (!write_all(fd, bytes, error)) return abandon(error);
  if (::fsync(fd) != 0) return abandon(cause("fsync"));
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) return abandon(cause("close"));
  if (::rename(temporary.c_str(), target.c_str()) != 0) return abandon(cause("rename"));
  // The rename is durable only once the directory is: sync it too. The new contents are in place
  // by now, so a failure is reported but there is nothing to undo.
  const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 || ::fsync(dir) != 0) {
    error = cause("syncing the directory");
    if (dir >= 0) ::close(dir);
    return false;
  }
  ::close(dir);
  return true;
}

}  // namespace gov
