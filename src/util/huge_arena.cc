#include "util/huge_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace omicsfs::arena {
namespace {

// Classes: 8 per doubling from 64 KiB to 64 MiB (a block wastes at most 1/8 of its size).
constexpr int kStepsPerDoubling = 8;
constexpr int kDoublings = 10;  // 64 KiB << 10 = 64 MiB
constexpr int kClasses = kStepsPerDoubling * kDoublings + 1;
constexpr size_t kHeader = 64;  // keeps payloads 64-byte aligned (cache lines)
constexpr uint32_t kMagic = 0x6f6d6661;  // "omfa"
constexpr uint64_t kReserve = uint64_t{1} << 36;  // 64 GiB of address space, none of it touched
constexpr size_t kHugePage = size_t{2} << 20;

struct Header {
  uint32_t magic;
  uint32_t cls;
  Header* next;  // on a free list
};
static_assert(sizeof(Header) <= kHeader);

constexpr size_t ClassSize(int c) {
  const int d = c / kStepsPerDoubling, s = c % kStepsPerDoubling;
  const size_t base = kMinBlock << d;
  return base + (base / kStepsPerDoubling) * static_cast<size_t>(s);
}
static_assert(ClassSize(kClasses - 1) == kMaxBlock);

int ClassOf(size_t size) {
  int lo = 0, hi = kClasses - 1;  // the smallest class that holds `size`
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (ClassSize(mid) >= size) hi = mid; else lo = mid + 1;
  }
  return lo;
}

// Constant-initialised: operator new may run before any constructor.
std::mutex g_mu;
char* g_base = nullptr;
std::atomic<uintptr_t> g_lo{0}, g_hi{0};  // [lo, hi): the mapping, for lock-free Release checks
bool g_huge = false;
uint64_t g_limit = 0, g_carved = 0, g_free = 0, g_allocs = 0, g_reused = 0, g_fallbacks = 0;
Header* g_lists[kClasses] = {};

bool Mine(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return a >= g_lo.load(std::memory_order_acquire) && a < g_hi.load(std::memory_order_acquire);
}

Header* HeaderOf(const void* p) { return reinterpret_cast<Header*>(const_cast<char*>(static_cast<const char*>(p)) - kHeader); }

}  // namespace

void Configure(uint64_t limit_bytes, bool huge_pages) {
  std::lock_guard lock(g_mu);
  if (g_base == nullptr && limit_bytes > 0) {
    void* m = ::mmap(nullptr, kReserve + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return;  // e.g. strict overcommit: the arena stays off, malloc serves all
    const auto a = (reinterpret_cast<uintptr_t>(m) + kHugePage - 1) & ~(kHugePage - 1);
    g_base = reinterpret_cast<char*>(a);
    g_huge = huge_pages && ::madvise(g_base, kReserve, MADV_HUGEPAGE) == 0;
    g_lo.store(a, std::memory_order_release);
    g_hi.store(a + kReserve, std::memory_order_release);
  }
  if (g_base == nullptr) return;
  g_limit = limit_bytes < g_carved ? g_carved : (limit_bytes > kReserve ? kReserve : limit_bytes);
}

void* Allocate(size_t size) {
  if (size < kMinBlock || size > kMaxBlock) return nullptr;
  const int c = ClassOf(size);
  std::lock_guard lock(g_mu);
  if (g_base == nullptr) return nullptr;
  // A free block of this class, else of a class up to two doublings larger (measured, MTX `cat`
  // with a 256 MiB cache: exact classes only left 85 MB free yet sent 183 blocks to malloc, whose
  // fresh pages were nearly all of the daemon's 11 500 faults).
  int from = c;
  const int last = std::min(kClasses - 1, c + 2 * kStepsPerDoubling);
  while (from <= last && g_lists[from] == nullptr) ++from;
  const uint64_t need = ClassSize(c) + kHeader;
  Header* h = nullptr;
  if (from <= last && (from == c || g_carved + need > g_limit || g_limit - g_carved < g_limit / 16)) {
    h = g_lists[from];
    g_lists[from] = h->next;
    g_free -= ClassSize(from) + kHeader;
    ++g_reused;
  } else {
    if (g_carved + need > g_limit) {
      ++g_fallbacks;
      return nullptr;
    }
    h = reinterpret_cast<Header*>(g_base + g_carved);
    g_carved += need;
    h->magic = kMagic;
    h->cls = static_cast<uint32_t>(c);
  }
  h->next = nullptr;
  ++g_allocs;
  return reinterpret_cast<char*>(h) + kHeader;
}

bool Release(void* p) {
  if (p == nullptr || !Mine(p)) return false;
  Header* h = HeaderOf(p);
  std::lock_guard lock(g_mu);
  if (h->magic != kMagic || h->cls >= static_cast<uint32_t>(kClasses)) ::abort();  // a foreign pointer
  // LIFO: the block freed last (its pages hottest) is handed out first.
  h->next = g_lists[h->cls];
  g_lists[h->cls] = h;
  g_free += ClassSize(static_cast<int>(h->cls)) + kHeader;
  return true;
}

size_t BlockSize(const void* p) { return ClassSize(static_cast<int>(HeaderOf(p)->cls)); }

uint64_t Footprint(const void* data, uint64_t size) {
  return data != nullptr && Mine(data) && HeaderOf(data)->magic == kMagic ? BlockSize(data) + kHeader : size;
}

Stats GetStats() {
  std::lock_guard lock(g_mu);
  Stats s;
  s.enabled = g_base != nullptr;
  s.huge_pages = g_huge;
  s.limit = g_limit;
  s.carved = g_carved;
  s.free_bytes = g_free;
  s.allocations = g_allocs;
  s.reused = g_reused;
  s.fallbacks = g_fallbacks;
  return s;
}

}  // namespace omicsfs::arena
