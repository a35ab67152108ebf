// One error shape for every fallible operation below the public API (the store, the driver,
// the JIT, the JSON and trace readers): Error{kind, message, position}, and Expected<T> — a value
// or an Error — with Expected<void> for success without a value. The public API turns them into gov::Error exceptions or gov_status
// codes at its edge.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "compiler/support/assert.hpp"

namespace gov::support {

/// Why an operation failed. Callers branch on the kind (retry on `busy`, re-read on
/// `conflict`, exit 2 on `io` of an input file); the message is for people.
enum class ErrorKind : uint8_t {
  io,            // a file cannot be opened, read or written (permissions, missing directory, I/O)
  busy,          // another process held the store's write lock longer than the busy timeout
  conflict,      // the active version is not the one the caller expected
  corrupt,       // not an SQLite database, truncated, or failing the integrity check
  newer_schema,  // written by a newer gov whose schema this gov does not know
  read_only,     // a write on a store opened read-only or whose file is not writable
  full,          // the disk or the store's page limit is full
  not_found,     // no such file, store, policy or version
  invalid,       // the input is malformed: a request (empty name, bad hash), a JSON document, a
                 // trace or state that does not match the policy
  policy,        // the policy has errors; `message` is the rendered diagnostics
  store,         // the store failed underneath a larger operation (corrupt, busy, I/O, ...)
  signature,     // a signature does not verify, or one is required and missing
  // the JIT's
  invalid_module,  // the rule code is malformed (an operand or index out of range)
  stale_object,    // the object was built for another module, LLVM, CPU or options: recompile
  corrupt_object,  // serialised bytes that do not parse or fail their checksum: recompile
  llvm,            // LLVM could not initialise, generate or link code: use the interpreter
};

/// "io", "busy", ...: the kind as one word.
inline std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::io: return "io";
    case ErrorKind::busy: return "busy";
    case ErrorKind::conflict: return "conflict";
    case ErrorKind::corrupt: return "corrupt";
    case ErrorKind::newer_schema: return "newer_schema";
    case ErrorKind::read_only: return "read_only";
    case ErrorKind::full: return "full";
    case ErrorKind::not_found: return "not_found";
    case ErrorKind::invalid: return "invalid";
    case ErrorKind::policy: return "policy";
    case ErrorKind::store: return "store";
    case ErrorKind::signature: return "signature";
    case ErrorKind::invalid_module: return "invalid_module";
    case ErrorKind::stale_object: return "stale_object";
    case ErrorKind::corrupt_object: return "corrupt_object";
    case ErrorKind::llvm: return "llvm";
  }
  return "unknown";
}

/// A place in a text document: the byte offset, the 1-based line (lines end at LF) and the
/// 1-based column counted in UTF-8 code points, as editors count them.
struct TextPosition {
  size_t offset = 0;
  size_t line = 1;
  size_t column = 1;
};

struct Error {
  ErrorKind kind = ErrorKind::io;
  /// One line (lower-case, no final period) that says where when the input has places ("line 3,
  /// column 14: ...", "event 1 (at 5): field \"team\": ..."), or rendered diagnostics.
  std::string message = {};
  /// Where in the input document the problem is, for errors about a text (JSON, a trace, a
  /// state): what an editor or a tool jumps to. Unset for errors about no particular place.
  std::optional<TextPosition> position = std::nullopt;
};

/// A value of type T or an Error. Accessing the wrong alternative is a programming error
/// (assert). Thread-safety: a plain value.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return *checked_value(); }
  const T& value() const& { return *checked_value(); }
  T&& value() && { return std::move(*checked_value()); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return checked_value(); }
  const T* operator->() const { return checked_value(); }

  const Error& error() const {
    const Error* error = std::get_if<1>(&state_);
    GOV_ASSERT(error != nullptr, "Expected::error() on a value");
    return *error;
  }

 private:
  T* checked_value() {
    T* value = std::get_if<0>(&state_);
    GOV_ASSERT(value != nullptr, "Expected::value() on an error");
    return value;
  }
  const T* checked_value() const {
    const T* value = std::get_if<0>(&state_);
    GOV_ASSERT(value != nullptr, "Expected::value() on an error");
    return value;
  }

  std::variant<T, Error> state_;
};

/// Success without a value, or an Error.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)) {}

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    GOV_ASSERT(error_.has_value(), "Expected::error() on a success");
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace gov::support
