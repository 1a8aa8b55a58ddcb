// The errno a FUSE reply carries for a Status (mount/errno_map.h).
#include "mount/errno_map.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace omicsfs::mount {
namespace {

// A read that fails is EIO whatever the status says: a row a reader cannot serve (kUnsupported:
// dense TSV of a slice's unsorted row once said EOPNOTSUPP), a bad argument, a vanished part.
TEST(ErrnoMap, AFailedReadIsEio) {
  EXPECT_EQ(ReadErrno(OkStatus()), 0);
  EXPECT_EQ(ReadErrno(UnsupportedError("row 27 has unsorted column indices")), EIO);
  EXPECT_EQ(ReadErrno(InvalidArgumentError("x")), EIO);
  EXPECT_EQ(ReadErrno(NotFoundError("x")), EIO);
  EXPECT_EQ(ReadErrno(CorruptError("x")), EIO);
  EXPECT_EQ(ReadErrno(Status(ErrorCode::kIo, "x", ENOENT)), EIO);
  // Elsewhere the status chooses (a lookup's ENOENT is the answer, not a failure).
  EXPECT_EQ(ToErrno(NotFoundError("x")), ENOENT);
}

}  // namespace
}  // namespace omicsfs::mount
