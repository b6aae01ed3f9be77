// User-facing errors of the engine; the binding layer turns each kind into a Python exception.
#pragma once
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace dyn {

// The Python exception a user error becomes. Internal invariants are asserts, not errors.
enum class ErrorKind { Runtime, Value, Index, Type, NotImplemented, GraphBreak };

// A mistake in how the library was called: says what was expected, what was found, what to do.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// The user asked to leave (Ctrl-D or :quit while the script is stopped at a breakpoint): unwinds
// through the engine and becomes SystemExit(code) in Python.
struct ExitRequest {
  int code = 0;
};

template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(kind, fmt::format(f, std::forward<Args>(args)...));
}

#define DYN_CHECK(cond, kind, ...)               \
  do {                                           \
    if (!(cond)) ::dyn::fail(kind, __VA_ARGS__); \
  } while (0)

}  // namespace dyn
