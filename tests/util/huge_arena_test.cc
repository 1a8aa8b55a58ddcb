// The huge-page arena: size classes, recycling, its limit, foreign pointers, threads.
#include "util/huge_arena.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace omicsfs {
namespace {

TEST(HugeArena, ServesRecyclesAndStopsAtItsLimit) {
  arena::Configure(uint64_t{48} << 20);
  const arena::Stats before = arena::GetStats();
  ASSERT_TRUE(before.enabled);
  EXPECT_EQ(arena::Allocate(arena::kMinBlock - 1), nullptr) << "small requests are malloc's";
  EXPECT_EQ(arena::Allocate(arena::kMaxBlock + 1), nullptr) << "huge requests are malloc's";
  void* a = arena::Allocate(300 << 10);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_GE(arena::BlockSize(a), size_t{300} << 10);
  EXPECT_LT(arena::BlockSize(a), (size_t{300} << 10) + 4096) << "at most a page wasted";
  std::memset(a, 0xab, 300 << 10);
  ASSERT_TRUE(arena::Release(a));
  // The next block that fits is carved from the one just freed (its pages are already faulted in).
  void* b = arena::Allocate(290 << 10);
  EXPECT_EQ(b, a);
  void* c = arena::Allocate(8 << 10 << 3);  // 64 KiB: from the rest of a's extent, not new memory
  const uint64_t carved = arena::GetStats().carved;
  EXPECT_TRUE(arena::Release(b));
  EXPECT_TRUE(arena::Release(c));
  // Freed neighbours coalesce: a block as large as both together fits without carving.
  b = arena::Allocate((300 << 10) + (64 << 10));
  EXPECT_EQ(arena::GetStats().carved, carved);
  EXPECT_GT(arena::GetStats().reused, before.reused);
  ASSERT_TRUE(arena::Release(b));
  // Foreign pointers are not the arena's.
  void* m = std::malloc(1 << 20);
  EXPECT_FALSE(arena::Release(m));
  std::free(m);
  int local = 0;
  EXPECT_FALSE(arena::Release(&local));
  // Past the limit: nullptr (the caller falls back to malloc), never more than the limit carved.
  std::vector<void*> held;
  for (void* p; (p = arena::Allocate(4 << 20)) != nullptr;) held.push_back(p);
  const arena::Stats full = arena::GetStats();
  EXPECT_LE(full.carved, full.limit);
  EXPECT_GT(full.fallbacks, before.fallbacks);
  EXPECT_GE(held.size(), 8u);
  for (void* p : held) EXPECT_TRUE(arena::Release(p));
  EXPECT_NE(arena::Allocate(4 << 20), nullptr) << "freed blocks serve again past the limit";
}

std::vector<void*>* g_held = nullptr;
uint64_t ReleaseHeld(uint64_t bytes) {
  uint64_t freed = 0;
  while (freed < bytes && !g_held->empty()) {
    freed += arena::BlockSize(g_held->back());
    EXPECT_TRUE(arena::Release(g_held->back()));
    g_held->pop_back();
  }
  return freed;
}

TEST(HugeArena, ABlockThatDoesNotFitAsksTheReclaimerBeforeMalloc) {
  arena::Configure(uint64_t{48} << 20);
  std::vector<void*> held;
  g_held = &held;
  const size_t kBlock = size_t{1} << 20;
  for (void* p; (p = arena::Allocate(kBlock)) != nullptr;) held.push_back(p);  // the arena is full
  ASSERT_GE(held.size(), 8u);
  const arena::Stats full = arena::GetStats();
  EXPECT_EQ(arena::Allocate(kBlock), nullptr) << "no reclaimer: malloc's";
  arena::SetReclaimer(&ReleaseHeld);
  const size_t before = held.size();
  void* p = arena::Allocate(kBlock);
  EXPECT_NE(p, nullptr) << "the reclaimer freed held blocks: one of them serves";
  EXPECT_LT(held.size(), before);
  const arena::Stats after = arena::GetStats();
  EXPECT_EQ(after.reclaims, full.reclaims + 1);
  EXPECT_EQ(after.carved, full.carved) << "no new memory";
  // A reclaimer that frees nothing: malloc's, as before.
  arena::SetReclaimer([](uint64_t) -> uint64_t { return 0; });
  for (void* q; (q = arena::Allocate(kBlock)) != nullptr;) held.push_back(q);
  EXPECT_EQ(arena::GetStats().reclaims, after.reclaims);
  arena::SetReclaimer(nullptr);
  EXPECT_TRUE(arena::Release(p));
  for (void* q : held) EXPECT_TRUE(arena::Release(q));
  g_held = nullptr;
}

TEST(HugeArena, ThreadsNeverShareABlock) {
  arena::Configure(uint64_t{256} << 20);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &bad] {
      std::mt19937 rng(t);
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int i = 0; i < 3000; ++i) {
        if (!live.empty() && (rng() % 2 || live.size() > 16)) {
          const size_t k = rng() % live.size();
          auto [p, n] = live[k];
          for (size_t j = 0; j < n; j += 4096) bad += p[j] != static_cast<unsigned char>(t);
          if (!arena::Release(p)) std::free(p);
          live.erase(live.begin() + static_cast<long>(k));
        } else {
          const size_t n = arena::kMinBlock + rng() % (4 << 20);
          auto* p = static_cast<unsigned char*>(arena::Allocate(n));
          if (p == nullptr) p = static_cast<unsigned char*>(std::malloc(n));
          for (size_t j = 0; j < n; j += 4096) p[j] = static_cast<unsigned char>(t);
          live.emplace_back(p, n);
        }
      }
      for (auto [p, n] : live) {
        if (!arena::Release(p)) std::free(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace omicsfs
