// The daemon's allocators (mount/memory.cc), linked into this binary as into the daemon: C
// malloc/calloc/realloc/posix_memalign/malloc_usable_size/free over the huge-page arena and glibc.
// Plain builds only (sanitizer builds keep their own allocators, as the daemon does there).
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "util/huge_arena.h"

namespace omicsfs {
namespace {

constexpr size_t kBig = size_t{256} << 10;  // blosc's scratch for a vcf2zarr chunk

class CAllocator : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { arena::Configure(uint64_t{64} << 20); }
  void TearDown() override { arena::SetReclaimer(nullptr); }
};

bool Filled(const void* p, size_t n, unsigned char v) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    if (c[i] != v) return false;
  }
  return true;
}

TEST_F(CAllocator, LargeBlocksComeFromTheArenaAndAreRecycled) {
  const uint64_t before = arena::GetStats().without_reclaim;
  void* a = std::malloc(kBig);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(arena::Owns(a));
  EXPECT_EQ(arena::GetStats().without_reclaim, before + 1);
  std::memset(a, 0x5a, kBig);
  std::free(a);
  void* b = std::malloc(kBig);
  EXPECT_EQ(b, a) << "the block just freed serves the next request of its size";
  std::free(b);
  void* small = std::malloc(100);
  ASSERT_NE(small, nullptr);
  EXPECT_FALSE(arena::Owns(small)) << "small requests stay glibc's";
  std::free(small);
  std::free(nullptr);
}

TEST_F(CAllocator, CallocZeroesARecycledBlock) {
  void* a = std::malloc(kBig);
  std::memset(a, 0xff, kBig);
  ASSERT_TRUE(arena::Owns(a));
  std::free(a);
  void* z = std::calloc(kBig / 8, 8);
  ASSERT_EQ(z, a) << "calloc took the recycled block";
  EXPECT_TRUE(Filled(z, kBig, 0));
  std::free(z);
  errno = 0;
  volatile size_t count = SIZE_MAX / 2;  // not known to the compiler, which would warn
  EXPECT_EQ(std::calloc(count, 4), nullptr) << "count × size overflows";
  EXPECT_EQ(errno, ENOMEM);
}

TEST_F(CAllocator, ReallocKeepsTheBytesWhereverTheBlockLives) {
  // An arena block: shrinking keeps it, growing moves it with its bytes.
  auto* a = static_cast<unsigned char*>(std::malloc(kBig));
  for (size_t i = 0; i < kBig; ++i) a[i] = static_cast<unsigned char>(i * 7);
  ASSERT_TRUE(arena::Owns(a));
  EXPECT_EQ(std::realloc(a, kBig / 2), a);
  auto* g = static_cast<unsigned char*>(std::realloc(a, 4 * kBig));
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(arena::Owns(g));
  for (size_t i = 0; i < kBig; ++i) ASSERT_EQ(g[i], static_cast<unsigned char>(i * 7)) << i;
  // A glibc block stays glibc's, whatever size it grows to (only glibc knows its size).
  auto* s = static_cast<unsigned char*>(std::malloc(1000));
  std::memset(s, 0x11, 1000);
  auto* t = static_cast<unsigned char*>(std::realloc(s, 2 * kBig));
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(arena::Owns(t));
  EXPECT_TRUE(Filled(t, 1000, 0x11));
  std::free(t);
  EXPECT_EQ(std::realloc(g, 0), nullptr) << "realloc to 0 frees";
  auto* n = static_cast<unsigned char*>(std::realloc(nullptr, kBig));
  EXPECT_TRUE(arena::Owns(n)) << "realloc(nullptr) is malloc";
  std::free(n);
}

TEST_F(CAllocator, AlignedRequestsAndUsableSizes) {
  void* p = nullptr;
  ASSERT_EQ(::posix_memalign(&p, 32, kBig), 0);  // blosc's scratch
  EXPECT_TRUE(arena::Owns(p));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 32, 0u);
  EXPECT_GE(::malloc_usable_size(p), kBig);
  std::free(p);
  ASSERT_EQ(::posix_memalign(&p, 4096, kBig), 0);  // past the arena's 64-byte alignment: glibc
  EXPECT_FALSE(arena::Owns(p));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  EXPECT_GE(::malloc_usable_size(p), kBig);
  std::free(p);
  EXPECT_EQ(::posix_memalign(&p, 24, 100), EINVAL);
  void* s = std::malloc(40);
  EXPECT_GE(::malloc_usable_size(s), 40u);
  std::free(s);
  EXPECT_EQ(::malloc_usable_size(nullptr), 0u);
}

std::atomic<int> g_reclaims{0};
uint64_t CountReclaims(uint64_t) {
  ++g_reclaims;
  return 0;
}

TEST_F(CAllocator, CAllocationsNeverAskTheCacheForRoom) {
  // Fill the arena, then ask for more: C malloc goes to glibc without calling the reclaimer (a
  // library may hold its own locks), operator new calls it first.
  std::vector<void*> held;
  for (void* p; (p = arena::Allocate(4 << 20)) != nullptr;) held.push_back(p);
  arena::SetReclaimer(&CountReclaims);
  g_reclaims = 0;
  void* c = std::malloc(4 << 20);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(arena::Owns(c));
  EXPECT_EQ(g_reclaims.load(), 0);
  std::free(c);
  void* n = ::operator new(4 << 20);  // a call, not a new-expression the compiler may elide
  EXPECT_EQ(g_reclaims.load(), 1);
  ::operator delete(n);
  arena::SetReclaimer(nullptr);
  for (void* p : held) arena::Release(p);
}

TEST_F(CAllocator, ThreadsMixSizesAndFreeEachOthersBlocks) {
  // Blocks made on one thread are freed on another (as blosc's and the cache's are); every block
  // keeps its bytes until freed.
  constexpr int kThreads = 4, kRounds = 400;
  std::vector<std::vector<std::pair<unsigned char*, size_t>>> made(kThreads);
  auto work = [&](int t) {
    std::mt19937 rng(t);
    for (int r = 0; r < kRounds; ++r) {
      const size_t n = rng() % 2 ? 16 + rng() % 4000 : (64 << 10) + rng() % (1 << 20);
      auto* p = static_cast<unsigned char*>(rng() % 3 == 0 ? std::calloc(1, n) : std::malloc(n));
      ASSERT_NE(p, nullptr);
      std::memset(p, t + 1, n);
      if (rng() % 4 == 0) {
        const size_t m = n + rng() % (256 << 10);
        p = static_cast<unsigned char*>(std::realloc(p, m));
        ASSERT_NE(p, nullptr);
        ASSERT_TRUE(Filled(p, n, static_cast<unsigned char>(t + 1)));
        std::memset(p, t + 1, m);
        made[t].emplace_back(p, m);
      } else {
        made[t].emplace_back(p, n);
      }
      if (made[t].size() > 16) {
        auto [q, qn] = made[t].front();
        ASSERT_TRUE(Filled(q, qn, static_cast<unsigned char>(t + 1)));
        std::free(q);
        made[t].erase(made[t].begin());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto& th : threads) th.join();
  // The survivors, freed on the other threads.
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (auto [p, n] : made[(t + 1) % kThreads]) {
        EXPECT_TRUE(Filled(p, n, static_cast<unsigned char>((t + 1) % kThreads + 1)));
        std::free(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(arena::GetStats().free_bytes, arena::GetStats().carved)
      << "every arena block came back";
}

}  // namespace
}  // namespace omicsfs
