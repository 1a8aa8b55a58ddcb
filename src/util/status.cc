#include "util/status.h"

#include <cerrno>
#include <cstring>

namespace omicsfs {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "OK";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kIo:
      return "I/O error";
    case ErrorCode::kOutOfMemory:
      return "out of memory";
    case ErrorCode::kInternal:
      return "internal error";
    case ErrorCode::kReadOnly:
      return "read-only";
  }
  return "unknown";
}

Status IoError(std::string message, int sys_errno) {
  if (sys_errno != 0) {
    message += ": ";
    message += std::strerror(sys_errno);
  }
  return Status(ErrorCode::kIo, std::move(message), sys_errno);
}

Status Status::WithContext(std::string_view context) const& {
  Status copy = *this;
  return std::move(copy).WithContext(context);
}

Status Status::WithContext(std::string_view context) && {
  if (ok() || context.empty()) return std::move(*this);
  std::string m;
  m.reserve(context.size() + 2 + message_.size());
  m.append(context).append(": ").append(message_);
  message_ = std::move(m);
  return std::move(*this);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ErrorCodeName(code_)) + ": " + message_;
}

bool IsTransient(const Status& s) {
  if (s.ok() || s.code() != ErrorCode::kIo) return false;
  const int e = s.sys_errno();
  return e != ESTALE && e != EACCES && e != EPERM && e != ENOENT && e != ENOTDIR;
}

}  // namespace omicsfs
