#include "cache/cache_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace omicsfs::cache {
namespace {

CacheKey Key(uint64_t i) { return CacheKey{1, CacheKind::kTextChunk, i}; }

TEST(CachePoolTest, HitsAndMisses) {
  CachePool pool(1000);
  int calls = 0;
  auto make = [&]() -> Result<std::string> {
    ++calls;
    return std::string(10, 'x');
  };
  ASSERT_TRUE(pool.GetOrCompute(Key(1), make).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), make).ok());
  EXPECT_EQ(calls, 1);
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.bytes, 10u);
  EXPECT_EQ(s.entries, 1u);
}

// The LRU policy of before issue 28 (kept for benchmarks); the daemon's 2Q is tested below.
TEST(CachePoolTest, EvictsLeastRecentlyUsedWithinBudget) {
  CachePool pool(300, 1.0, CachePolicy::kLru);
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
  ASSERT_TRUE(
      pool.GetOrCompute(Key(2), []() -> Result<std::string> { return std::string(100, 'b'); })
          .ok());
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_EQ(**a, std::string(100, 'a'));
}

TEST(CachePoolTest, ShedDropsTheOldestEntriesNoReaderHolds) {
  CachePool pool(1000, 1.0, CachePolicy::kLru);
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
  auto fail = [&]() -> Result<std::string> {
    ++calls;
    return CorruptError("bad");
  };
  EXPECT_EQ(pool.GetOrCompute(Key(1), fail).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(pool.GetOrCompute(Key(1), fail).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(pool.Contains(Key(1)));
}

TEST(CachePoolTest, ExceptionsBecomeErrors) {
  CachePool pool(1000);
  auto r =
      pool.GetOrCompute(Key(1), []() -> Result<std::string> { throw std::runtime_error("boom"); });
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
  pool.Warm(Key(1), [&]() -> Result<std::string> {
    ++calls;
    return std::string("w");
  });  // returns at once
  release = true;
  slow.join();
  EXPECT_EQ(calls.load(), 1);
  pool.Warm(Key(2), [&]() -> Result<std::string> {
    ++calls;
    return std::string("x");
  });
  EXPECT_TRUE(pool.Contains(Key(2)));
  pool.Warm(Key(2), [&]() -> Result<std::string> {
    ++calls;
    return std::string("y");
  });
  EXPECT_EQ(calls.load(), 2);
}

// Scan resistance (issue 28). Entries of 100 bytes; probation holds an eighth of the budget.
Result<std::string> Hundred() { return std::string(100, 's'); }
CacheKey Scan(uint64_t i) { return CacheKey{2, CacheKind::kTextChunk, i}; }

// A reader re-reads 20 hot keys while a scan of unique keys streams the whole budget through
// between two of its passes: the fraction of its reads that hit, from its third pass on.
double HotHitsDuringScan(CachePolicy policy) {
  CachePool pool(20000, 0.25, policy);  // 200 entries; probation 25
  uint64_t reads = 0, computed = 0, scan = 0;
  for (int round = 0; round < 50; ++round) {
    for (uint64_t k = 0; k < 20; ++k) {
      bool miss = false;
      EXPECT_TRUE(pool.GetOrCompute(Key(k),
                                    [&] {
                                      miss = true;
                                      return Hundred();
                                    })
                      .ok());
      if (round >= 2) {
        ++reads;
        computed += miss ? 1 : 0;
      }
    }
    for (int i = 0; i < 200; ++i) EXPECT_TRUE(pool.GetOrCompute(Scan(scan++), Hundred).ok());
  }
  return 1.0 - static_cast<double>(computed) / static_cast<double>(reads);
}

TEST(CachePoolTest, AHotSetKeepsItsHitsWhileAScanStreamsThrough) {
  EXPECT_EQ(HotHitsDuringScan(CachePolicy::kTwoQ), 1.0);
  // The same reads under the old LRU: the scan pushes the hot set out every round.
  EXPECT_EQ(HotHitsDuringScan(CachePolicy::kLru), 0.0);
}

TEST(CachePoolTest, AScanHoldsNoMoreThanProbation) {
  CachePool pool(20000);
  ASSERT_EQ(pool.probation_budget(), 2500u);
  for (uint64_t k = 0; k < 20; ++k) ASSERT_TRUE(pool.GetOrCompute(Key(k), Hundred).ok());
  for (uint64_t k = 0; k < 30; ++k) ASSERT_TRUE(pool.GetOrCompute(Scan(1000 + k), Hundred).ok());
  for (uint64_t k = 0; k < 20; ++k)
    ASSERT_TRUE(pool.GetOrCompute(Key(k), Hundred).ok());  // ghost hits
  ASSERT_EQ(pool.Stats().protected_.bytes, 2000u);
  // A scan 40 times the budget, each key read-ahead first then read three times in a row (the
  // kernel's reads of one chunk), and the sizing pass seeding another 400 keys.
  for (uint64_t i = 0; i < 4000; ++i) {
    pool.Warm(Scan(i), Hundred);
    for (int r = 0; r < 3; ++r) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
    if (i % 10 == 0) pool.Insert(Scan(100000 + i), std::make_shared<const std::string>(100, 'i'));
    const CacheStats s = pool.Stats();
    ASSERT_LE(s.probation.bytes, 2500u) << i;
    ASSERT_LE(s.bytes, 4500u) << i;  // the hot set and probation: the budget is never filled
  }
  const CacheStats s = pool.Stats();
  EXPECT_EQ(s.protected_.bytes, 2000u);
  EXPECT_EQ(s.protected_.evictions, 0u);
  for (uint64_t k = 0; k < 20; ++k) EXPECT_TRUE(pool.Contains(Key(k))) << k;
  EXPECT_LE(s.ghost_entries, 200u);  // a budget's worth of keys
}

TEST(CachePoolTest, ASecondReadAfterProbationPromotes) {
  CachePool pool(2000);  // probation: 250 bytes
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // correlated: stays in probation
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.probation.misses, 1u);
  EXPECT_EQ(s.probation.hits, 1u);
  EXPECT_EQ(s.probation.entries, 1u);
  EXPECT_EQ(s.protected_.entries, 0u);
  ASSERT_TRUE(pool.GetOrCompute(Key(2), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(3), Hundred).ok());  // 1 leaves probation: remembered
  EXPECT_FALSE(pool.Contains(Key(1)));
  s = pool.Stats();
  EXPECT_EQ(s.probation.evictions, 1u);
  EXPECT_EQ(s.ghost_entries, 1u);
  int calls = 0;
  ASSERT_TRUE(pool.GetOrCompute(Key(1),
                                [&] {
                                  ++calls;
                                  return Hundred();
                                })
                  .ok());  // read again
  ASSERT_TRUE(pool.GetOrCompute(Key(1),
                                [&] {
                                  ++calls;
                                  return Hundred();
                                })
                  .ok());
  EXPECT_EQ(calls, 1);
  s = pool.Stats();
  EXPECT_EQ(s.ghost_hits, 1u);
  EXPECT_EQ(s.ghost_entries, 0u);
  EXPECT_EQ(s.protected_.misses, 1u);
  EXPECT_EQ(s.protected_.hits, 1u);
  EXPECT_EQ(s.protected_.entries, 1u);
  EXPECT_EQ(s.probation.entries, 2u);
  EXPECT_EQ(s.hits, s.probation.hits + s.protected_.hits);
  EXPECT_EQ(s.misses, s.probation.misses + s.protected_.misses);
  EXPECT_EQ(s.evictions, s.probation.evictions + s.protected_.evictions);
  EXPECT_EQ(s.bytes, s.probation.bytes + s.protected_.bytes);
}

TEST(CachePoolTest, ASecondReadInProbationPromotesOnceHalfItsShareWentBy) {
  CachePool pool(20000);  // probation: 2500 bytes
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  for (uint64_t i = 0; i < 12; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(2), Hundred).ok());  // another key: no read of Key(1)
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // 1 300 bytes later: a second read
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.promotions, 1u);
  EXPECT_EQ(s.protected_.entries, 1u);
  EXPECT_EQ(s.probation.hits, 1u);
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  EXPECT_EQ(pool.Stats().protected_.hits, 1u);
}

// The window restarts at each read: a read half a share after the last one promotes, even
// when the first was earlier still.
TEST(CachePoolTest, TheSecondReadWindowRestartsAtEachRead) {
  CachePool pool(20000);  // probation: 2500 bytes
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  for (uint64_t i = 0; i < 2; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // 200 bytes later: a sequel
  for (uint64_t i = 2; i < 15; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // 1 300 after the sequel: a second read
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.promotions, 1u);
  EXPECT_EQ(s.protected_.entries, 1u);
  EXPECT_EQ(s.probation.hits, 2u);
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  EXPECT_EQ(pool.Stats().protected_.hits, 1u);
}

// A run of reads each close to the one before is one read, however long it lasts (a decoded
// chunk used by every text chunk over it): it promotes nothing, and the entry leaves probation
// in its turn; a read after that is a ghost hit.
TEST(CachePoolTest, ARunOfReadsCloseTogetherIsOneRead) {
  CachePool pool(20000);  // probation: 2500 bytes
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  for (uint64_t i = 0; i < 24; ++i) {
    ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
    if (i % 8 == 7) {
      ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // every 800 bytes
    }
  }
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.probation.hits, 3u);  // 2 400 bytes after the first read, still in probation
  EXPECT_EQ(s.promotions, 0u);
  EXPECT_EQ(s.protected_.entries, 0u);
  for (uint64_t i = 24; i < 30; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // it left probation: a ghost hit
  s = pool.Stats();
  EXPECT_EQ(s.ghost_hits, 1u);
  EXPECT_EQ(s.protected_.entries, 1u);
}

TEST(CachePoolTest, ASetLargerThanProbationIsProtectedFromItsSecondPass) {
  CachePool pool(20000);  // probation: 25 entries
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t k = 0; k < 40; ++k) ASSERT_TRUE(pool.GetOrCompute(Key(k), Hundred).ok());
  }
  // Keys 0..14 left probation (ghost hits on the second pass), 15..39 were still in it: the
  // first ones' admission to protected is the time that makes the others' reads second reads.
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.ghost_hits, 15u);
  EXPECT_EQ(s.promotions, 25u);
  EXPECT_EQ(s.protected_.entries, 40u);
  for (uint64_t k = 0; k < 40; ++k) ASSERT_TRUE(pool.GetOrCompute(Key(k), Hundred).ok());
  EXPECT_EQ(pool.Stats().protected_.hits, 40u);
}

TEST(CachePoolTest, ReadAheadAndSeedingAreNotReads) {
  CachePool pool(2000);                 // probation: 250 bytes
  auto push_out = [&](uint64_t from) {  // seeds fill probation, read-ahead its own room
    for (uint64_t i = from; i < from + 3; ++i)
      pool.Insert(Scan(i), std::make_shared<const std::string>(100, 'p'));
    for (uint64_t i = from + 100; i < from + 110; ++i) pool.Warm(Scan(i), Hundred);
  };
  pool.Warm(Key(1), Hundred);                                          // read ahead, never read
  pool.Insert(Key(2), std::make_shared<const std::string>(100, 'i'));  // seeded, never read
  push_out(0);
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_FALSE(pool.Contains(Key(2)));
  EXPECT_EQ(pool.Stats().ghost_entries, 0u) << "unread entries leave no ghost";
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  EXPECT_EQ(pool.Stats().protected_.entries, 0u) << "the first real read is no second hit";
  // Read ahead, then read once (a hit that is its first read), then gone: a later read promotes.
  pool.Warm(Key(3), Hundred);
  ASSERT_TRUE(pool.GetOrCompute(Key(3), Hundred).ok());
  push_out(10);
  EXPECT_FALSE(pool.Contains(Key(3)));
  ASSERT_TRUE(pool.GetOrCompute(Key(3), Hundred).ok());
  EXPECT_EQ(pool.Stats().protected_.entries, 1u);
}

// A pass with no reader behind it (NotReads: the sizing pass) computes unread entries: when they
// leave they leave no ghost, so a reader's first read afterwards is a first read; a hit during
// the pass neither marks an entry read nor promotes it; and a key the pass computes again after
// a reader's read left its ghost enters probation, not protected.
TEST(CachePoolTest, APassWithNoReaderIsNotReads) {
  CachePool pool(2000);  // probation: 250 bytes
  auto push_out = [&](uint64_t from) {
    for (uint64_t i = from; i < from + 3; ++i)
      ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
  };
  {
    CachePool::NotReads pass;
    ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // computed by the pass
    ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // and found by it again
  }
  push_out(0);
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_EQ(pool.Stats().ghost_entries, 1u)
      << "only the ghost of the scan chunk that left (a reader read it)";
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  EXPECT_EQ(pool.Stats().ghost_hits, 0u);
  EXPECT_EQ(pool.Stats().protected_.entries, 0u) << "the reader's first read";
  // Read, pushed out (a ghost), computed again by a pass: probation, and its ghost stays.
  push_out(10);
  EXPECT_FALSE(pool.Contains(Key(1)));
  {
    CachePool::NotReads pass;
    ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  }
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.ghost_hits, 0u);
  EXPECT_EQ(s.protected_.entries, 0u);
  // A pass's hits on a read entry promote nothing, however late they come.
  push_out(20);
  ASSERT_TRUE(pool.GetOrCompute(Key(2), Hundred).ok());
  {
    CachePool::NotReads pass;
    for (uint64_t i = 30; i < 32; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
    ASSERT_TRUE(pool.GetOrCompute(Key(2), Hundred).ok());
  }
  EXPECT_EQ(pool.Stats().promotions, 0u);
}

TEST(CachePoolTest, AReaderWaitingOnReadAheadReadsTheEntry) {
  CachePool pool(2000);  // probation: 250 bytes
  std::atomic<bool> release{false};
  std::thread warm([&] {
    pool.Warm(Key(1), [&]() -> Result<std::string> {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return Hundred();
    });
  });
  while (!pool.ContainsOrPending(Key(1))) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread reader([&] { EXPECT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok()); });
  while (pool.Stats().waits == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  release = true;
  warm.join();
  reader.join();
  for (uint64_t i = 0; i < 3; ++i)
    pool.Insert(Scan(i), std::make_shared<const std::string>(100, 'p'));
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_EQ(pool.Stats().ghost_entries, 1u) << "the waiter read it";
}

TEST(CachePoolTest, AnEntryLargerThanProbationReachesItsNextRead) {
  CachePool pool(2000, 1.0);  // probation: 250 bytes
  ASSERT_TRUE(
      pool.GetOrCompute(Key(1), [] { return Result<std::string>(std::string(400, 'b')); }).ok());
  EXPECT_TRUE(pool.Contains(Key(1)));
  ASSERT_TRUE(pool.GetOrCompute(Key(2), Hundred).ok());
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_TRUE(pool.Contains(Key(2)));
  EXPECT_LE(pool.Stats().bytes, 250u);
}

TEST(CachePoolTest, EraseOwnerForgetsItsGhosts) {
  CachePool pool(2000);  // probation: 250 bytes
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
  ASSERT_EQ(pool.Stats().ghost_entries, 2u);  // Key(1) and Scan(0)
  pool.EraseOwner(1);
  EXPECT_EQ(pool.Stats().ghost_entries, 1u);
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  EXPECT_EQ(pool.Stats().protected_.entries, 0u) << "a changed store's data is new";
  EXPECT_EQ(pool.Stats().probation.entries, 2u);
}

// A pass rendering several chunks from one set of decoded blocks larger than probation (a VCF
// variants-chunk's arrays) decodes each block once: its thread holds what it got last (up to a
// quarter of the budget; all passes together half) while the pass lives. Without it every round
// decoded all four again.
TEST(CachePoolTest, APassKeepsWhatItGotLastBeyondProbation) {
  CachePool pool(2000);  // probation: 250 bytes; a pass's pins: 500, all passes' 1000
  int computed = 0;
  auto block = [&]() -> Result<std::string> {
    ++computed;
    return std::string(100, 'b');
  };
  {
    CachePool::NotReads pass;
    for (int round = 0; round < 3; ++round)
      for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(pool.GetOrCompute(Key(i), block).ok());
  }
  EXPECT_EQ(computed, 4);
  // The pins go with the pass: a later pass finds only what the cache kept.
  {
    CachePool::NotReads pass;
    for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(pool.GetOrCompute(Key(i), block).ok());
  }
  EXPECT_GT(computed, 4);
  EXPECT_LE(pool.Stats().bytes, 2000u);
  EXPECT_EQ(CachePool::PinnedBytes(), 0u) << "released with the pass";
  // Passes on two threads share the pin budget: never more pinned than it, values always right.
  std::atomic<bool> wrong{false};
  std::atomic<uint64_t> most{0};
  auto pass = [&](uint64_t from) {
    CachePool::NotReads scope;
    for (int round = 0; round < 50; ++round) {
      for (uint64_t i = from; i < from + 8; ++i) {
        auto b =
            pool.GetOrCompute(Key(i), [] { return Result<std::string>(std::string(100, 'p')); });
        if (!b.ok() || **b != std::string(100, 'p')) wrong = true;
        uint64_t now = CachePool::PinnedBytes(), seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
      }
    }
  };
  std::thread a(pass, 100), b(pass, 200);
  a.join();
  b.join();
  EXPECT_FALSE(wrong.load());
  EXPECT_LE(most.load(), pool.pin_budget());
  EXPECT_GT(most.load(), 0u);
  EXPECT_EQ(CachePool::PinnedBytes(), 0u);
}

// Work a pass hands to other threads (a remote store's arrays read at once) is the pass's: the
// workers' gets are not reads, they find what the pass has pinned, and what they get is pinned
// by the pass when the hand-off ends. Before, a worker was a reader: on a distant S3 each
// text chunk of a sizing pass fetched again what the pass had got for the one before.
TEST(CachePoolTest, WorkHandedToOtherThreadsIsThePass) {
  CachePool pool(2000);  // probation: 250 bytes; a pass's pins: 500
  int computed = 0;      // one worker at a time: no race on it
  auto block = [&]() -> Result<std::string> {
    ++computed;
    return std::string(100, 'b');
  };
  auto on_worker = [](const std::function<void()>& f) { std::thread(f).join(); };
  {
    CachePool::NotReads pass;
    ASSERT_TRUE(pool.GetOrCompute(Key(1), block).ok());  // pinned by the pass
    for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
    ASSERT_FALSE(pool.ContainsOrPending(Key(1))) << "left probation: only the pin holds it";
    {
      CachePool::HandOff hand_off;
      on_worker([&] {
        CachePool::Carry scope(hand_off);
        EXPECT_TRUE(CachePool::InNotReads());
        EXPECT_FALSE(CachePool::InStreaming());
        ASSERT_TRUE(pool.GetOrCompute(Key(1), block).ok());  // the pass's pin
        ASSERT_TRUE(pool.GetOrCompute(Key(2), block).ok());  // computed here
      });
      EXPECT_EQ(computed, 2);
    }
    for (uint64_t i = 3; i < 6; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
    ASSERT_FALSE(pool.ContainsOrPending(Key(2)));
    ASSERT_TRUE(pool.GetOrCompute(Key(2), block).ok());  // pinned by the pass at the hand-off's end
    EXPECT_EQ(computed, 2);
    EXPECT_EQ(pool.Stats().ghost_entries, 0u) << "the worker's gets were not reads";
  }
  EXPECT_EQ(CachePool::PinnedBytes(), 0u) << "released with the pass";
  // A reader's hand-off carries no pass: the worker reads (and a Streaming scope goes along).
  CachePool::Streaming run(true);
  CachePool::HandOff hand_off;
  on_worker([&] {
    CachePool::Carry scope(hand_off);
    EXPECT_FALSE(CachePool::InNotReads());
    EXPECT_TRUE(CachePool::InStreaming());
  });
  EXPECT_EQ(CachePool::PinnedBytes(), 0u);
}

TEST(CachePoolTest, ShedTakesProbationFirst) {
  CachePool pool(2000);  // probation: 250 bytes
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(pool.GetOrCompute(Scan(i), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());  // protected now
  ASSERT_EQ(pool.Stats().protected_.entries, 1u);
  ASSERT_EQ(pool.Stats().probation.entries, 2u);
  EXPECT_EQ(pool.Shed(150), 200u);
  EXPECT_TRUE(pool.Contains(Key(1)));
  EXPECT_EQ(pool.Stats().probation.evictions, 4u);  // Key(1) and Scan(0), then the two shed
  EXPECT_EQ(pool.Shed(150), 100u);
  EXPECT_FALSE(pool.Contains(Key(1)));
  EXPECT_EQ(pool.Stats().protected_.evictions, 1u);
}

TEST(CachePoolTest, ReadAheadBeyondProbationReachesItsReader) {
  CachePool pool(2000);  // probation: 250 bytes; read-ahead not read yet: up to 1000 besides
  int calls = 0;
  auto counted = [&]() -> Result<std::string> {
    ++calls;
    return Hundred();
  };
  ASSERT_TRUE(pool.GetOrCompute(Key(0), counted).ok());
  for (uint64_t k = 1; k <= 4; ++k) pool.Warm(Key(k), counted);  // 400 bytes ahead of the reader
  EXPECT_EQ(pool.Stats().ahead_bytes, 400u);
  for (uint64_t k = 1; k <= 4; ++k) ASSERT_TRUE(pool.GetOrCompute(Key(k), counted).ok());
  EXPECT_EQ(calls, 5) << "nothing rendered ahead was dropped before its read";
  const CacheStats s = pool.Stats();
  EXPECT_EQ(s.ahead_bytes, 0u);
  EXPECT_LE(s.probation.bytes, 250u);
  EXPECT_EQ(s.probation.hits, 4u);
  // A block inserted with its neighbours for a reader (the remote block cache) waits likewise.
  for (uint64_t k = 5; k <= 8; ++k)
    pool.Insert(Key(k), std::make_shared<const std::string>(100, 'b'), /*ahead=*/true);
  EXPECT_EQ(pool.Stats().ahead_bytes, 400u);
  for (uint64_t k = 5; k <= 8; ++k) EXPECT_TRUE(pool.Contains(Key(k))) << k;
  for (uint64_t k = 5; k <= 8; ++k) ASSERT_TRUE(pool.GetOrCompute(Key(k), counted).ok());
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(pool.Stats().ahead_bytes, 0u);
  // Read-ahead nobody reads is bounded too, and leaves no ghost.
  for (uint64_t k = 10; k < 30; ++k) pool.Warm(Key(k), counted);
  EXPECT_LE(pool.Stats().ahead_bytes, 1000u);
  EXPECT_EQ(pool.Stats().ghost_entries, 7u);  // Keys 0..6, read and gone
}

// The S3-FIFO variant (benchmarks only): a key read again while in probation is promoted when
// it leaves probation, instead of being remembered.
TEST(CachePoolTest, S3FifoPromotesAKeyReadTwiceInProbation) {
  CachePool pool(1000, 0.25, CachePolicy::kS3Fifo);  // probation: 100 bytes
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(1), Hundred).ok());
  ASSERT_TRUE(pool.GetOrCompute(Key(2), Hundred).ok());
  CacheStats s = pool.Stats();
  EXPECT_EQ(s.promotions, 1u);
  EXPECT_EQ(s.protected_.entries, 1u);
  EXPECT_TRUE(pool.Contains(Key(1)));
  ASSERT_TRUE(pool.GetOrCompute(Key(3), Hundred).ok());  // 2, read once, is remembered
  EXPECT_EQ(pool.Stats().ghost_entries, 1u);
}

}  // namespace
}  // namespace omicsfs::cache
