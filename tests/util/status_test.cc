#include "util/status.h"

#include <gtest/gtest.h>

namespace omicsfs {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError(std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status Outer(int x) {
  RETURN_IF_ERROR_CTX(Quarter(x).status(), "outer");
  return OkStatus();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(OkStatus().ok());
  Status s = CorruptError("bad chunk");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kCorrupt);
  EXPECT_EQ(s.ToString(), "corrupt: bad chunk");
}

TEST(StatusTest, ContextIsPrepended) {
  Status s = CorruptError("checksum").WithContext("chunk 3").WithContext("store x");
  EXPECT_EQ(s.message(), "store x: chunk 3: checksum");
  EXPECT_TRUE(OkStatus().WithContext("ignored").ok());
}

TEST(StatusTest, IoErrorKeepsErrno) {
  Status s = IoError("open f", ENOENT);
  EXPECT_EQ(s.sys_errno(), ENOENT);
  EXPECT_NE(s.message().find("No such file"), std::string::npos);
}

TEST(ResultTest, PropagatesThroughMacros) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_FALSE(Quarter(6).ok());
  EXPECT_EQ(Quarter(6).status().message(), "3 is odd");
  EXPECT_EQ(Outer(6).message(), "outer: 3 is odd");
  EXPECT_TRUE(Outer(4).ok());
}

}  // namespace
}  // namespace omicsfs
