// The only place an errno is chosen for a Status.
#pragma once

#include "util/status.h"

namespace omicsfs::mount {
int ToErrno(const Status& status);
}  // namespace omicsfs::mount
