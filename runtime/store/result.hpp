// The error type of the policy store and Result<T>: a value or an error, never an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "compiler/support/assert.hpp"

namespace gov::store {

/// Why a store operation failed. Callers branch on the kind (retry on `busy`, re-read on
/// `conflict`); the message is for people.
enum class ErrorKind : uint8_t {
  io,            // the file cannot be opened, read or written (permissions, missing directory, I/O)
  busy,          // another process held the write lock longer than the busy timeout
  conflict,      // the active version is not the one the caller expected
  corrupt,       // not an SQLite database, truncated, or failing the integrity check
  newer_schema,  // written by a newer gov whose schema this gov does not know
  read_only,     // a write on a store opened read-only or whose file is not writable
  full,          // the disk or the store's page limit is full
  not_found,     // no such store, policy or version
  invalid,       // the request itself is malformed (empty name, duplicate paths, bad hash)
};

/// "io", "busy", "conflict", ...: the kind as one word, for messages and JSON.
std::string_view error_kind_name(ErrorKind kind);

/// One failure: its kind and a one-line message (lower-case start, no final period, names in
/// backticks), e.g. "policy `team-a` is at version 4, expected version 3".
struct Error {
  ErrorKind kind = ErrorKind::io;
  std::string message;
};

/// A value of type T or an Error. Accessing the wrong alternative is a programming error
/// (assert). Thread-safety: a plain value.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

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
    GOV_ASSERT(error != nullptr, "Result::error() on a value");
    return *error;
  }

 private:
  T* checked_value() {
    T* value = std::get_if<0>(&state_);
    GOV_ASSERT(value != nullptr, "Result::value() on an error");
    return value;
  }
  const T* checked_value() const {
    const T* value = std::get_if<0>(&state_);
    GOV_ASSERT(value != nullptr, "Result::value() on an error");
    return value;
  }

  std::variant<T, Error> state_;
};

/// Success without a value, or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    GOV_ASSERT(error_.has_value(), "Result::error() on a success");
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace gov::store
