// Errors carried as values: every fallible operation in tprof returns Result<T> (or Status), and
// callers add context as the error travels up, so the final one-line message says what failed and
// where ("reading out.tprof: chunk at offset 4096: checksum mismatch").
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tprof {

// Whose the failure is: the request's (an option names an event, a function or a table the
// input does not have: the command line must change) or the work's (an unreadable input, I/O, the
// kernel). Commands exit 2 for the first and 1 for the second (cmd/cli_support.h).
enum class ErrorKind { kFailure, kBadRequest };

class Error {
 public:
  explicit Error(std::string message, ErrorKind kind = ErrorKind::kFailure)
      : message_(std::move(message)), kind_(kind) {}
  static Error BadRequest(std::string message) {
    return Error(std::move(message), ErrorKind::kBadRequest);
  }

  const std::string& message() const { return message_; }
  ErrorKind kind() const { return kind_; }

  // Prefixes the message with what the caller was doing: "context: message".
  Error WithContext(std::string_view context) const {
    return Error(std::string(context) + ": " + message_, kind_);
  }

 private:
  std::string message_;
  ErrorKind kind_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// Result of an operation that produces nothing but may fail.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT: implicit by design

  static Status Ok() { return Status(); }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }

 private:
  Error error_{""};
  bool failed_ = false;
};

}  // namespace tprof

// Returns early from the enclosing function when a Status or Result holds an error.
#define TPROF_RETURN_IF_ERROR(expr)                        \
  do {                                                     \
    auto tprof_status_ = (expr);                           \
    if (!tprof_status_.ok()) return tprof_status_.error(); \
  } while (0)
