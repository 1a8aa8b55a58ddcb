#include "cache/cache_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace omicsfs::cache {
namespace {

CacheKey Key(uint64_t i) { return CacheKey{1, CacheKind::kTextChunk, i}; }

TEST(CachePoolTest, HitsAndMisses) {
  CachePool pool(1000);
  int calls = 0;
  auto make = [&]() -> Result<std::string> { ++calls; return std::string(10, 'x'); };
  ASSERT_TRUE(pool.GetOrCompute(Key(1), make).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), make).ok());
  EXPECT_EQ(calls, 1);
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.bytes, 10u);
  EXPECT_EQ(s.entries, 1u);
}

TEST(CachePoolTest, EvictsLeastRecentlyUsedWithinBudget) {
  CachePool pool(300, 1.0);
  auto make = [](char c) { return [c]() -> Result<std::string> { return std::string(100, c); }; };
  ASSERT_TRUE(pool.GetOrCompute(Key(1), make('a')).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(2), make('b')).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(3), make('c')).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), make('a')).ok());  // touch 1: 2 is now the oldest
  ASSERT_TRUE(pool.GetOrCompute(Key(4), make('d')).ok());
  EXPECT_TRUE(pool.Contains(Key(1)));
  EXPECT_FALSE(pool.Contains(Key(2)));
  EXPECT_TRUE(pool.Contains(Key(3)));
  EXPECT_TRUE(pool.Contains(Key(4)));
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_LE(s.bytes, 300u);
}

TEST(CachePoolTest, EvictedBuffersStayValidForHolders) {
  CachePool pool(100, 1.0);
  auto a = pool.GetOrCompute(Key(1), []() -> Result<std::string> { return std::string(100, 'a'); });
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(2), []() -> Result<std::string> { return std::string(100, 'b'); }).ok());
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_EQ(**a, std::string(100, 'a'));
}

TEST(CachePoolTest, ShedDropsTheOldestEntriesNoReaderHolds) {
  CachePool pool(1000, 1.0);
  auto make = [](char c) { return [c]() -> Result<std::string> { return std::string(100, c); }; };
  for (uint64_t i = 1; i <= 5; ++i) ASSERT_TRUE(pool.GetOrCompute(Key(i), make('a' + i)).ok());
  auto held = pool.GetOrCompute(Key(1), make('b'));  // a reader holds 1
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(2), make('c')).ok());
  // Oldest first: 3, 4, 5, 1, 2.
  EXPECT_EQ(pool.Shed(150), 200u);  // whole entries: 3 and 4
  EXPECT_FALSE(pool.Contains(Key(3)));
  EXPECT_FALSE(pool.Contains(Key(4)));
  EXPECT_TRUE(pool.Contains(Key(5)));
  EXPECT_EQ(pool.Stats().bytes, 300u);
  EXPECT_EQ(pool.Stats().entries, 3u);
  EXPECT_EQ(pool.Stats().evictions, 2u);
  EXPECT_EQ(pool.Shed(10000), 200u) << "1 is held: only 5 and 2 go";
  EXPECT_TRUE(pool.Contains(Key(1)));
  EXPECT_EQ(**held, std::string(100, 'b'));
  held = Result<Buffer>(Buffer());
  EXPECT_EQ(pool.Shed(10000), 100u);
  EXPECT_EQ(pool.Stats().bytes, 0u);
}

TEST(CachePoolTest, OversizedEntriesAreReturnedButNotKept) {
  CachePool pool(1000, 0.25);
  auto r = pool.GetOrCompute(Key(1), []() -> Result<std::string> { return std::string(300, 'z'); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->size(), 300u);
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_EQ(pool.Stats().uncached, 1u);
}

TEST(CachePoolTest, ErrorsAreNotCached) {
  CachePool pool(1000);
  int calls = 0;
  auto fail = [&]() -> Result<std::string> { ++calls; return CorruptError("bad"); };
  EXPECT_EQ(pool.GetOrCompute(Key(1), fail).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(pool.GetOrCompute(Key(1), fail).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(pool.Contains(Key(1)));
}

TEST(CachePoolTest, ExceptionsBecomeErrors) {
  CachePool pool(1000);
  auto r = pool.GetOrCompute(Key(1), []() -> Result<std::string> { throw std::runtime_error("boom"); });
  EXPECT_EQ(r.status().code(), ErrorCode::kInternal);
}

TEST(CachePoolTest, SingleFlightPerKey) {
  CachePool pool(1 << 20);
  std::atomic<int> calls{0};
  auto slow = [&]() -> Result<std::string> {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return std::string("value");
  };
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto r = pool.GetOrCompute(Key(7), slow);
      if (r.ok() && **r == "value") ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(ok.load(), 8);
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits + s.waits, 7u);
}

TEST(CachePoolTest, EraseOwnerDropsOnlyThatOwner) {
  CachePool pool(1000);
  auto v = []() -> Result<std::string> { return std::string("v"); };
  ASSERT_TRUE(pool.GetOrCompute({1, CacheKind::kTextChunk, 0}, v).ok());
  ASSERT_TRUE(pool.GetOrCompute({2, CacheKind::kTextChunk, 0}, v).ok());
  pool.EraseOwner(1);
  EXPECT_FALSE(pool.Contains({1, CacheKind::kTextChunk, 0}));
  EXPECT_TRUE(pool.Contains({2, CacheKind::kTextChunk, 0}));
  EXPECT_EQ(pool.Stats().entries, 1u);
}

}  // namespace
}  // namespace omicsfs::cache

namespace omicsfs::cache {
namespace {

TEST(CachePoolTest, WarmNeverWaitsAndNeverRecomputes) {
  CachePool pool(1 << 20);
  std::atomic<int> calls{0};
  std::atomic<bool> release{false};
  std::thread slow([&] {
    (void)pool.GetOrCompute(Key(1), [&]() -> Result<std::string> {
      ++calls;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return std::string("v");
    });
  });
  while (!pool.ContainsOrPending(Key(1))) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  pool.Warm(Key(1), [&]() -> Result<std::string> { ++calls; return std::string("w"); });  // returns at once
  release = true;
  slow.join();
  EXPECT_EQ(calls.load(), 1);
  pool.Warm(Key(2), [&]() -> Result<std::string> { ++calls; return std::string("x"); });
  EXPECT_TRUE(pool.Contains(Key(2)));
  pool.Warm(Key(2), [&]() -> Result<std::string> { ++calls; return std::string("y"); });
  EXPECT_EQ(calls.load(), 2);
}

}  // namespace
}  // namespace omicsfs::cache
