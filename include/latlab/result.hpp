// Errors as values: Result<T> holds either a T or an Error with a message a
// user can act on. (std::expected is C++23; latlab is C++20.)
#pragma once

#include <cassert>  // for files that relied on it through here
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace latlab {

struct Error {
  std::string message;  // what failed and, where known, why and what to do
};

// Thrown by Result::value() (and ->, *) of a failed result, its what() the
// error's own message; by error() of a successful one. A programmer's
// mistake: check ok() first. Uncaught, the message is what the program dies
// with (std::terminate prints what()).
class BadResultAccess : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    check_value();
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    check_value();
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    check_value();
    return std::move(*std::get_if<0>(&v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    const Error* e = std::get_if<1>(&v_);
    if (e == nullptr) throw BadResultAccess("Result::error() of a result that holds a value");
    return *e;
  }

 private:
  void check_value() const {
    if (const Error* e = std::get_if<1>(&v_)) throw BadResultAccess(e->message);
  }
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    if (ok_) throw BadResultAccess("Result::error() of a result that holds no error");
    return error_;
  }
  // Throws BadResultAccess with the error's message when it holds one (the
  // counterpart of Result<T>::value() for a result without a value).
  void value() const {
    if (!ok_) throw BadResultAccess(error_.message);
  }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace latlab
