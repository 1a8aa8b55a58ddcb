#include "text/chunk_index.h"

#include <gtest/gtest.h>

namespace omicsfs::text {
namespace {

TEST(ChunkIndexTest, LocateSkipsEmptyChunks) {
  ChunkIndex idx({5, 0, 0, 3, 10, 0});
  EXPECT_EQ(idx.chunk_count(), 6u);
  EXPECT_EQ(idx.total_size(), 18u);
  EXPECT_EQ(idx.Locate(0), 0u);
  EXPECT_EQ(idx.Locate(4), 0u);
  EXPECT_EQ(idx.Locate(5), 3u);
  EXPECT_EQ(idx.Locate(7), 3u);
  EXPECT_EQ(idx.Locate(8), 4u);
  EXPECT_EQ(idx.Locate(17), 4u);
  EXPECT_EQ(idx.ChunkStart(4), 8u);
  EXPECT_EQ(idx.ChunkLength(4), 10u);
}

TEST(ChunkIndexTest, EmptyFile) {
  ChunkIndex idx(std::vector<uint64_t>{});
  EXPECT_EQ(idx.total_size(), 0u);
  EXPECT_EQ(idx.chunk_count(), 0u);
}

}  // namespace
}  // namespace omicsfs::text
