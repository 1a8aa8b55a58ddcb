#include "text/virtual_file.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

namespace omicsfs::text {
namespace {

// Chunk k is k's pattern repeated lengths[k] times; counts renders per chunk.
class FakeSource : public RecordSource {
 public:
  explicit FakeSource(std::vector<size_t> lengths)
      : lengths_(std::move(lengths)), renders_(lengths_.size()) {}
  uint64_t ChunkCount() const override { return lengths_.size(); }
  Status RenderChunk(uint64_t k, std::string* out) const override {
    ++renders_[k];
    if (k == fail_chunk_) return CorruptError("injected");
    size_t len = lengths_[k] + (grow_after_sizing_ && renders_[k] > 1 ? 1 : 0);
    for (size_t i = 0; i < len; ++i) out->push_back(static_cast<char>('a' + (k * 7 + i) % 26));
    return OkStatus();
  }
  std::string Describe() const override { return "fake"; }
  std::string Expected() const {
    std::string all;
    for (uint64_t k = 0; k < lengths_.size(); ++k) {
      for (size_t i = 0; i < lengths_[k]; ++i)
        all.push_back(static_cast<char>('a' + (k * 7 + i) % 26));
    }
    return all;
  }
  int renders(uint64_t k) const { return renders_[k].load(); }

  uint64_t fail_chunk_ = UINT64_MAX;
  bool grow_after_sizing_ = false;

 private:
  std::vector<size_t> lengths_;
  mutable std::vector<std::atomic<int>> renders_;
};

std::string Join(const std::vector<Piece>& pieces) {
  std::string s;
  for (const auto& p : pieces) s.append(p.buffer->data() + p.offset, p.length);
  return s;
}

std::vector<size_t> RandomLengths(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<size_t> l(n);
  for (auto& x : l) x = rng() % 4 == 0 ? 0 : rng() % 5000;
  return l;
}

TEST(VirtualTextFileTest, RandomReadsEqualSequentialBytes) {
  auto src = std::make_shared<FakeSource>(RandomLengths(200, 1));
  cache::CachePool pool(1 << 20);
  VirtualTextFile f(src, &pool);
  const std::string want = src->Expected();
  auto size = f.Size();
  ASSERT_TRUE(size.ok());
  ASSERT_EQ(*size, want.size());
  std::mt19937 rng(2);
  for (int r = 0; r < 2000; ++r) {
    uint64_t off = rng() % (want.size() + 100), len = rng() % 20000;
    auto pieces = f.Read(off, len);
    ASSERT_TRUE(pieces.ok());
    std::string got = Join(*pieces);
    std::string expect = off >= want.size() ? "" : want.substr(off, len);
    ASSERT_EQ(got, expect) << "off " << off << " len " << len;
  }
}

TEST(VirtualTextFileTest, ConcurrentReadersAgree) {
  auto src = std::make_shared<FakeSource>(RandomLengths(300, 3));
  cache::CachePool pool(64 << 10);  // small: constant eviction and re-rendering
  VirtualTextFile f(src, &pool, SizingOptions{.threads = 2});
  const std::string want = src->Expected();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      for (int r = 0; r < 300; ++r) {
        uint64_t off = rng() % want.size(), len = 1 + rng() % 70000;
        auto pieces = f.Read(off, len);
        if (!pieces.ok() || Join(*pieces) != want.substr(off, len)) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(VirtualTextFileTest, ReadTouchesOnlyNeededChunks) {
  auto src = std::make_shared<FakeSource>(std::vector<size_t>(10, 100));
  cache::CachePool pool(0);  // nothing is kept: every read renders
  VirtualTextFile f(src, &pool);
  ASSERT_TRUE(f.Size().ok());
  for (int k = 0; k < 10; ++k) EXPECT_EQ(src->renders(k), 1);  // the sizing pass
  auto pieces = f.Read(550, 20);
  ASSERT_TRUE(pieces.ok());
  EXPECT_EQ(Join(*pieces), src->Expected().substr(550, 20));
  for (int k = 0; k < 10; ++k) EXPECT_EQ(src->renders(k), k == 5 ? 2 : 1) << k;
  auto spanning = f.Read(790, 20);  // chunks 7 and 8
  ASSERT_TRUE(spanning.ok());
  EXPECT_EQ(spanning->size(), 2u);
  EXPECT_EQ(src->renders(7), 2);
  EXPECT_EQ(src->renders(8), 2);
}

TEST(VirtualTextFileTest, SizingSeedsTheCache) {
  auto src = std::make_shared<FakeSource>(std::vector<size_t>(4, 100));
  cache::CachePool pool(1 << 20);
  VirtualTextFile f(src, &pool);
  ASSERT_TRUE(f.Read(0, 400).ok());
  for (int k = 0; k < 4; ++k) EXPECT_EQ(src->renders(k), 1);
  EXPECT_EQ(pool.Stats().hits, 4u);
}

TEST(VirtualTextFileTest, SizingErrorIsReportedAndRemembered) {
  auto src = std::make_shared<FakeSource>(std::vector<size_t>(5, 10));
  src->fail_chunk_ = 3;
  cache::CachePool pool(1 << 20);
  VirtualTextFile f(src, &pool, SizingOptions{.threads = 1});
  auto size = f.Size();
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.status().message().find("chunk 3"), std::string::npos);
  EXPECT_FALSE(f.Read(0, 5).ok());
  EXPECT_EQ(src->renders(3), 1);
}

TEST(VirtualTextFileTest, RenderDisagreeingWithSizingIsCorruptNotMisalignedBytes) {
  auto src = std::make_shared<FakeSource>(std::vector<size_t>(3, 10));
  cache::CachePool pool(0);
  VirtualTextFile f(src, &pool);
  ASSERT_TRUE(f.Size().ok());
  src->grow_after_sizing_ = true;
  auto r = f.Read(12, 3);
  EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt);
}

TEST(VirtualTextFileTest, EmptyFileAndEof) {
  auto src = std::make_shared<FakeSource>(std::vector<size_t>{});
  cache::CachePool pool(1 << 20);
  VirtualTextFile f(src, &pool);
  ASSERT_EQ(*f.Size(), 0u);
  auto r = f.Read(0, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace omicsfs::text

#include "text/prefetcher.h"

namespace omicsfs::text {
namespace {

// Chunks of 1 MiB that record whether they were rendered in a CachePool::Streaming scope.
class StreamingProbe : public RecordSource {
 public:
  explicit StreamingProbe(size_t n) : streaming_(n) {
    for (auto& s : streaming_) s = -1;
  }
  uint64_t ChunkCount() const override { return streaming_.size(); }
  Status RenderChunk(uint64_t k, std::string* out) const override {
    streaming_[k] = cache::CachePool::InStreaming() ? 1 : 0;
    out->append(size_t{1} << 20, static_cast<char>('a' + k % 26));
    return OkStatus();
  }
  std::string Describe() const override { return "probe"; }
  int streaming(uint64_t k) const { return streaming_[k].load(); }

 private:
  mutable std::vector<std::atomic<int>> streaming_;
};

// Reads that follow each other (within a few MiB: the kernel's read-ahead requests arrive out of
// order) make a run; past 64 MiB of it (or a quarter of the file: 30 MiB here), chunks render in a
// Streaming scope (a Zarr source then
// decodes whole chunks, not the blosc blocks a short read needs). A read elsewhere starts anew.
TEST(VirtualTextFileTest, LongSequentialRunsRenderStreaming) {
  auto src = std::make_shared<StreamingProbe>(120);
  cache::CachePool pool(4 << 20);
  VirtualTextFile f(src, &pool);
  const uint64_t mib = uint64_t{1} << 20;
  for (uint64_t half = 0; half < 200; ++half) {
    // Halves of MiBs, each pair read swapped, as concurrent read-ahead delivers them.
    ASSERT_TRUE(f.Read((half ^ 1) * (mib / 2), mib / 2).ok());
  }
  EXPECT_EQ(src->streaming(0), 0);
  EXPECT_EQ(src->streaming(10), 0);
  EXPECT_EQ(src->streaming(70), 1);
  EXPECT_EQ(src->streaming(99), 1);
  ASSERT_TRUE(f.Read(2 * mib, 100).ok());  // a jump back: chunk 2 is rendered again, not streaming
  EXPECT_EQ(src->streaming(2), 0);
}

TEST(PrefetcherTest, ReadAheadRendersTheNextChunksIntoTheCache) {
  auto src = std::make_shared<FakeSource>(std::vector<size_t>(10, 100));
  cache::CachePool pool(0);  // nothing kept by the sizing pass
  Prefetcher prefetcher;
  prefetcher.Start(2);
  auto f = std::make_shared<VirtualTextFile>(
      src, &pool,
      SizingOptions{.threads = 1, .prefetcher = &prefetcher, .readahead_bytes = 200});  // 2 chunks
  ASSERT_TRUE(f->Size().ok());
  // With a zero budget nothing is kept, so look at the render counts instead.
  ASSERT_TRUE(f->Read(700, 50).ok());  // the file's first read (head, tail): its neighbours too
  ASSERT_TRUE(f->Read(0, 50).ok());    // a jump back (random): no read-ahead
  for (int i = 0; i < 200 && (src->renders(6) < 2 || src->renders(8) < 2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(src->renders(6), 2);  // sizing + warmed
  EXPECT_EQ(src->renders(8), 2);
  EXPECT_EQ(src->renders(5), 1);  // only the nearest neighbours
  EXPECT_EQ(src->renders(9), 1);
  EXPECT_EQ(src->renders(1), 1);
  ASSERT_TRUE(f->Read(50, 50).ok());  // follows the previous read: sequential
  for (int i = 0; i < 200 && (src->renders(1) < 2 || src->renders(2) < 2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(src->renders(1), 2);  // sizing + prefetch
  EXPECT_EQ(src->renders(2), 2);
  EXPECT_EQ(src->renders(3), 1);  // beyond the read-ahead window
}

TEST(PrefetcherTest, UnstartedPrefetcherDoesNothingAndStopsCleanly) {
  Prefetcher p;
  int ran = 0;
  p.Submit([&] { ++ran; });
  EXPECT_EQ(ran, 0);
}

}  // namespace
}  // namespace omicsfs::text
