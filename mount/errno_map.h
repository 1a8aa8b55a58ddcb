// The only place an errno is chosen for a Status.
#pragma once

#include "util/status.h"

namespace omicsfs::mount {
int ToErrno(const Status& status);
// A read that fails is EIO, whatever the cause: read(2) reporting EOPNOTSUPP, EINVAL or ENOENT
// on an open file misleads the tool reading it (the store's damage is in the daemon's log).
int ReadErrno(const Status& status);
}  // namespace omicsfs::mount
