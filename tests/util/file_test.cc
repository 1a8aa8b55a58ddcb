#include "util/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "util/fs.h"

namespace omicsfs {
namespace {

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fs::unique_path("omicsfs-file-%%%%%%");
    fs::create_directories(dir_);
    path_ = (dir_ / "data.bin").string();
    std::ofstream(path_) << "0123456789";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

TEST_F(FileTest, PositionalReads) {
  auto f = File::OpenReadOnly(path_);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  char buf[4];
  ASSERT_TRUE(f->ReadExact(3, buf, 4).ok());
  EXPECT_EQ(std::string(buf, 4), "3456");
  auto n = f->ReadAt(8, buf, 4);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2u);
  Status short_read = f->ReadExact(8, buf, 4);
  EXPECT_EQ(short_read.code(), ErrorCode::kCorrupt);
  EXPECT_NE(short_read.message().find(path_), std::string::npos);
}

TEST_F(FileTest, MissingFileIsIoErrorWithErrno) {
  auto f = File::OpenReadOnly((dir_ / "missing").string());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().sys_errno(), ENOENT);
}

TEST_F(FileTest, ReadWholeFileHonoursLimit) {
  auto all = ReadWholeFile(path_);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "0123456789");
  EXPECT_FALSE(ReadWholeFile(path_, 5).ok());
}

}  // namespace
}  // namespace omicsfs
