#include "mount/errno_map.h"

#include <cerrno>

namespace omicsfs::mount {

int ToErrno(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk:
      return 0;
    case ErrorCode::kNotFound:
      return ENOENT;
    case ErrorCode::kInvalidArgument:
      return EINVAL;
    case ErrorCode::kCorrupt:
      return EIO;
    case ErrorCode::kUnsupported:
      return EOPNOTSUPP;
    case ErrorCode::kIo:
      return status.sys_errno() != 0 ? status.sys_errno() : EIO;
    case ErrorCode::kOutOfMemory:
      return ENOMEM;
    case ErrorCode::kInternal:
      return EIO;
    case ErrorCode::kReadOnly:
      return EROFS;
  }
  return EIO;
}

int ReadErrno(const Status& status) { return status.ok() ? 0 : EIO; }

}  // namespace omicsfs::mount
