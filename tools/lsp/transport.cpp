#include "tools/lsp/transport.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include <fmt/format.h>

namespace gov::lsp {

bool MessageReader::fill() {
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

bool MessageReader::input_waiting(int timeout_ms) {
  if (start_ < buffer_.size()) return true;
  pollfd p{fd_, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, timeout_ms);
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

bool MessageReader::header_line(std::string& line, bool& too_long) {
  line.clear();
  for (;;) {
    const size_t end = buffer_.find('\n', start_);
    if (end != std::string::npos) {
      const size_t length = end - start_;
      if (length > kMaxHeaderLineBytes) too_long = true;
      else line.assign(buffer_, start_, length);
      start_ = end + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return true;
    }
    // A line longer than the bound is dropped as it arrives, so memory stays bounded.
    if (buffer_.size() - start_ > kMaxHeaderLineBytes) {
      too_long = true;
      start_ = buffer_.size();
    }
    if (!fill()) return false;
  }
}

MessageReader::Read MessageReader::next() {
  Read out;
  std::string line;
  bool any_header = false, too_long = false, bad_length = false;
  std::optional<size_t> length;
  for (;;) {
    if (!header_line(line, too_long)) {
      if (any_header || too_long) {
        out.status = Status::bad_header;
        out.error = too_long ? "a header line is longer than 4096 bytes" : "the input ended inside a message's headers";
        return out;
      }
      out.status = Status::end;
      return out;
    }
    if (line.empty()) {
      // Blank lines between messages are tolerated; after a line too long to keep (whose end may
      // be all that is left of it) the blank line ends the headers.
      if (!any_header && !too_long) continue;
      break;
    }
    any_header = true;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;  // judged below: no usable Content-Length
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name != "content-length") continue;  // Content-Type and others are accepted and ignored
    std::string_view value(line);
    value.remove_prefix(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    size_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
      bad_length = true;
    } else {
      length = n;
    }
  }
  if (too_long || bad_length || !length) {
    out.status = Status::bad_header;
    out.error = too_long     ? "a header line is longer than 4096 bytes"
                : bad_length ? "the Content-Length header is not a number"
                             : "the message has no Content-Length header";
    return out;
  }
  // The body: kept when it fits the bound, else read and dropped.
  const bool keep = *length <= kMaxMessageBytes;
  size_t remaining = *length;
  while (remaining > 0) {
    if (start_ == buffer_.size() && !fill()) {
      out.status = Status::bad_header;
      out.error = fmt::format("the input ended {} bytes before the end of a message", remaining);
      return out;
    }
    const size_t take = std::min(remaining, buffer_.size() - start_);
    if (keep) out.body.append(buffer_, start_, take);
    start_ += take;
    remaining -= take;
  }
  if (!keep) {
    out.status = Status::too_large;
    out.error = fmt::format("a message of {} bytes is larger than the {} MiB gov reads", *length, kMaxMessageBytes >> 20);
    return out;
  }
  out.status = Status::message;
  return out;
}

bool write_message(int fd, std::string_view body) {
  const std::string frame = fmt::format("Content-Length: {}\r\n\r\n{}", body.size(), body);
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t n = ::write(fd, frame.data() + done, frame.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace gov::lsp
