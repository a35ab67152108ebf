// Replacing a file the user owns without ever leaving it truncated, widened or redirected.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gov {

struct AtomicWriteOptions {
  /// A symbolic link at the path: true, the file it points to is replaced and the link stays
  /// (a file the user named, `gov fmt FILE`); false, the link itself is replaced by the new
  /// file and what it pointed to is left alone (a name gov picks inside a directory, which a
  /// planted link must not redirect: `gov export --out DIR`); a file there then keeps neither
  /// its owner nor its mode.
  bool follow_link = true;
  /// The new file's permission bits, set before it takes the name (else an existing file's,
  /// or 0666 minus the umask for a new one).
  std::optional<unsigned> mode;
};

/// Replaces the contents of `path` with `bytes` so that, whatever happens, `path` holds either
/// its old contents or all of the new ones:
///   - the new bytes go to a temporary file created beside the target with a fresh random name
///     and O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC (a file or symbolic link planted at any name is
///     never followed or overwritten);
///   - the temporary file takes the target's permission bits (and owner and group where the
///     process may set them), so a 0600 policy stays 0600; a new file gets 0666 minus umask;
///   - every write is checked (EINTR retried), then fsync and close are checked; only then is
///     the temporary renamed over the target, and the directory is synced;
///   - on any failure the temporary file is removed and `path` is untouched.
/// When `path` is a symbolic link, the file it points to is replaced and the link stays, unless
/// `options.follow_link` is false.
/// Returns false with `error` set to the step and cause ("write failed: File too large").
/// Thread-safe (no shared state).
bool write_file_atomically(const std::string& path, std::string_view bytes, std::string& error,
                           const AtomicWriteOptions& options = {});

}  // namespace gov
