// JSON-RPC's base protocol as LSP frames it: `Content-Length: N` headers, a blank line, N bytes
// of JSON. Reading is bounded (one message at most kMaxMessageBytes) and never loses its place
// silently: a message it cannot frame is reported, and reading goes on.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gov::lsp {

/// The largest message body read; a longer one is skipped (its bytes read and dropped).
inline constexpr size_t kMaxMessageBytes = size_t{64} << 20;
/// The longest header line; a longer one is a malformed header.
inline constexpr size_t kMaxHeaderLineBytes = 4096;

/// Reads framed messages from a file descriptor (standard input). Not thread-safe.
class MessageReader {
 public:
  explicit MessageReader(int fd) : fd_(fd) {}

  enum class Status {
    message,     // `body` is one message's JSON text
    end,         // the input ended (between messages)
    bad_header,  // the headers were malformed or had no Content-Length; `error` says how
    too_large,   // the body was longer than kMaxMessageBytes; it was skipped
  };
  struct Read {
    Status status = Status::end;
    std::string body;
    std::string error;
  };

  /// The next message; blocks until one is complete or the input ends.
  Read next();
  /// Whether a message's bytes are already buffered, or the descriptor becomes readable within
  /// `timeout_ms` milliseconds (0: right now). For debouncing: work is done only when idle.
  bool input_waiting(int timeout_ms);

 private:
  /// At least one more byte in the buffer; false at the end of input.
  bool fill();
  /// One header line without its line end; nullopt-like false at the end of input.
  bool header_line(std::string& line, bool& too_long);

  int fd_;
  std::string buffer_;
  size_t start_ = 0;  // first unread byte of buffer_
};

/// Writes one message with its header. Returns false when the output is closed.
bool write_message(int fd, std::string_view body);

}  // namespace gov::lsp
