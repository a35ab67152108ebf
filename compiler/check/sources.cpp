#include "compiler/check/sources.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "compiler/diagnostics/source_file.hpp"

namespace gov::check {
namespace {

namespace fs = std::filesystem;

std::string errno_text(int error) {
  if (error == ELOOP) return "too many levels of symbolic links (a symbolic link loop?)";
  return std::strerror(error);
}

/// The path the kernel has for an open descriptor (symlinks resolved).
std::optional<std::string> descriptor_path(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  std::string target(PATH_MAX, '\0');
  const ssize_t length = ::readlink(link, target.data(), target.size());
  if (length <= 0 || static_cast<size_t>(length) >= target.size()) return std::nullopt;
  target.resize(static_cast<size_t>(length));
  return target;
}

/// `path` relative to `root` when it lies under it (both absolute and real), else nullopt.
std::optional<std::string> relative_to_root(const std::string& root, const std::string& path) {
  if (root == "/") return path.size() > 1 ? std::optional(path.substr(1)) : std::nullopt;
  if (path.size() <= root.size() + 1 || path.compare(0, root.size(), root) != 0 || path[root.size()] != '/') {
    return std::nullopt;
  }
  return path.substr(root.size() + 1);
}

bool is_dir(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool path_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

}  // namespace

std::optional<std::string> normalise_logical_path(std::string_view path) {
  if (path.empty() || path.size() > kMaxLogicalPathBytes || path.front() == '/') return std::nullopt;
  if (path.find('\0') != std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(begin, end - begin);
    if (part == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    begin = end + 1;
  }
  if (parts.empty()) return std::nullopt;
  std::string out;
  for (std::string_view part : parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

std::string logical_directory(std::string_view logical_path) {
  const size_t slash = logical_path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(logical_path.substr(0, slash));
}

void MemorySources::add(std::string logical_path, std::string text) {
  files_.insert_or_assign(std::move(logical_path), std::move(text));
}

SourceRead MemorySources::read(const std::string& logical_path, size_t limit) const {
  SourceRead result;
  const auto found = files_.find(logical_path);
  if (found == files_.end()) {
    result.error.reason = fmt::format("no such file in {}", description_);
  } else if (found->second.size() > limit) {
    result.error.reason = fmt::format("file is {} bytes; gov reads at most {} bytes", found->second.size(), limit);
  } else {
    result.file = SourceText{logical_path, found->second, {}};
  }
  return result;
}

SourceRead OverlaySources::read(const std::string& logical_path, size_t limit) const {
  const auto found = buffers_.find(logical_path);
  if (found == buffers_.end()) return base_.read(logical_path, limit);
  SourceRead result;
  if (found->second.size() > limit) {
    result.error.reason = fmt::format("file is {} bytes; gov reads at most {} bytes", found->second.size(), limit);
  } else {
    result.file = SourceText{logical_path, found->second, {}};
  }
  return result;
}

std::unique_ptr<DiskSources> DiskSources::open(const std::string& root, std::string& error) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("cannot open the policy root `{}`: {}", root, errno_text(errno));
    return nullptr;
  }
  std::optional<std::string> real = descriptor_path(fd);
  if (!real || real->empty() || real->front() != '/') {
    ::close(fd);
    error = fmt::format("cannot resolve the policy root `{}` (is /proc mounted?)", root);
    return nullptr;
  }
  return std::unique_ptr<DiskSources>(new DiskSources(fd, std::move(*real)));
}

DiskSources::~DiskSources() {
  if (root_fd_ >= 0) ::close(root_fd_);
}

SourceRead DiskSources::read(const std::string& logical_path, size_t limit) const {
  SourceRead result;
  // O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOCTTY: a terminal never
  // becomes ours.
  const int fd = ::openat(root_fd_, logical_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    result.error.reason = errno_text(errno);
    return result;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // The check is on the opened file, so what is read is what was checked.
  const std::optional<std::string> real = descriptor_path(fd);
  if (!real) {
    result.error.reason = "cannot tell where the file resolves (is /proc mounted?)";
    return result;
  }
  std::optional<std::string> logical = relative_to_root(real_root_, *real);
  if (!logical) {
    result.error.reason = fmt::format("it resolves to `{}`, outside the policy root `{}`", *real, real_root_);
    result.error.outside_root = true;
    return result;
  }
  // Refuses anything but a regular file (a FIFO, a device) before a byte is read; reads of a
  // regular file ignore O_NONBLOCK.
  std::optional<std::string> text = read_text_fd(fd, limit, result.error.reason);
  if (!text) return result;
  result.file = SourceText{std::move(*logical), std::move(*text), {}};
  return result;
}

CatalogSources::CatalogSources(std::vector<std::string> directories) : directories_(std::move(directories)) {
  for (const std::string& directory : directories_) {
    std::string error;
    if (std::unique_ptr<DiskSources> opened = DiskSources::open(directory, error)) opened_.push_back(std::move(opened));
  }
}

CatalogSources::~CatalogSources() = default;

SourceRead CatalogSources::read(const std::string& logical_path, size_t limit) const {
  for (const std::unique_ptr<DiskSources>& directory : opened_) {
    SourceRead read = directory->read(logical_path, limit);
    if (read.ok()) {
      read.file->origin = directory->real_root() + "/" + read.file->logical_path;
      return read;
    }
    // A file that exists but cannot be read is an error, not a reason to look further.
    if (read.error.reason != errno_text(ENOENT)) return read;
  }
  SourceRead missing;
  missing.error.reason = fmt::format("no such catalog in {}", root_description());
  return missing;
}

std::string CatalogSources::root_description() const {
  if (directories_.empty()) return "the catalog directories (none is known)";
  std::string out;
  for (size_t i = 0; i < directories_.size(); ++i) {
    if (i) out += i + 1 == directories_.size() ? " or " : ", ";
    out += "`" + directories_[i] + "`";
  }
  return out;
}

std::optional<std::string> real_path(const std::string& path, std::string& error) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) {
    error = errno_text(errno);
    return std::nullopt;
  }
  std::string out(resolved);
  std::free(resolved);
  return out;
}

std::optional<std::string> find_policy_root(const std::string& entry_path, std::string& error) {
  // The entry must exist (its errors are the user's), but the root is looked for from the
  // directory that holds its name: from a link's target's directory, a link to any file would
  // bring its own root along and be read from outside the repository that holds the link.
  if (!real_path(entry_path, error)) return std::nullopt;
  const fs::path named_in = fs::path(entry_path).parent_path();
  const std::optional<std::string> directory = real_path(named_in.empty() ? "." : named_in.string(), error);
  if (!directory) return std::nullopt;
  const fs::path start = *directory;
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    if (path_exists(dir / "gov.toml")) {
      if (dir == dir.root_path()) break;
      return dir.string();
    }
    if (dir == dir.parent_path()) break;
  }
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    if (path_exists(dir / ".git")) {
      if (dir == dir.root_path()) break;
      return dir.string();
    }
    if (dir == dir.parent_path()) break;
  }
  if (start == start.root_path() || !is_dir(start)) {
    error = fmt::format("`{}` lies in `/`, which gov does not use as a policy root; give a root directory", entry_path);
    return std::nullopt;
  }
  return start.string();
}

}  // namespace gov::check
