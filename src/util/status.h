// Errors as values: a small closed set of codes, a message that gathers context at every layer
// boundary, and an optional errno carried from the OS. No exceptions cross module boundaries.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace omicsfs {

enum class ErrorCode {
  kOk = 0,
  kNotFound,         // ENOENT
  kInvalidArgument,  // EINVAL (bad options, bad requests)
  kCorrupt,          // EIO: data that breaks the format
  kUnsupported,      // EOPNOTSUPP: valid but unimplemented variant
  kIo,               // carries the original errno
  kOutOfMemory,      // ENOMEM
  kInternal,         // a bug: EIO
  kReadOnly,         // EROFS
};

std::string_view ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message, int sys_errno = 0)
      : code_(code), message_(std::move(message)), errno_(sys_errno) {}

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  int sys_errno() const { return errno_; }

  // Prepends "context: " to the message (no-op on OK), as an error passes up a layer.
  Status WithContext(std::string_view context) const&;
  Status WithContext(std::string_view context) &&;
  std::string ToString() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  int errno_ = 0;
};

inline Status OkStatus() { return Status(); }
inline Status NotFoundError(std::string m) { return Status(ErrorCode::kNotFound, std::move(m)); }
inline Status InvalidArgumentError(std::string m) {
  return Status(ErrorCode::kInvalidArgument, std::move(m));
}
inline Status CorruptError(std::string m) { return Status(ErrorCode::kCorrupt, std::move(m)); }
inline Status UnsupportedError(std::string m) {
  return Status(ErrorCode::kUnsupported, std::move(m));
}
inline Status InternalError(std::string m) { return Status(ErrorCode::kInternal, std::move(m)); }
inline Status ReadOnlyError(std::string m) { return Status(ErrorCode::kReadOnly, std::move(m)); }
Status IoError(std::string message, int sys_errno);
// A failure that may pass by itself (an I/O error: a server down, a timeout, a cut transfer), as
// opposed to one that lasts (corrupt or unsupported data; a changed object, ESTALE; a refusal,
// EACCES). Lasting failures may be remembered; transient ones must be retried.
bool IsTransient(const Status& s);

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok());
    if (std::get<Status>(v_).ok()) v_ = InternalError("Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const& {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  Status status() && { return ok() ? Status() : std::get<Status>(std::move(v_)); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace omicsfs

#define OMICSFS_CONCAT_INNER(a, b) a##b
#define OMICSFS_CONCAT(a, b) OMICSFS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if it is not OK.
#define RETURN_IF_ERROR(expr)       \
  do {                              \
    ::omicsfs::Status _st = (expr); \
    if (!_st.ok()) return _st;      \
  } while (0)

// Returns the status with context prepended if it is not OK.
#define RETURN_IF_ERROR_CTX(expr, ctx)                     \
  do {                                                     \
    ::omicsfs::Status _st = (expr);                        \
    if (!_st.ok()) return std::move(_st).WithContext(ctx); \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr)   \
  auto tmp = (rexpr);                            \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()

// `ASSIGN_OR_RETURN(auto x, MakeX());`
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL(OMICSFS_CONCAT(_res_, __LINE__), lhs, rexpr)
