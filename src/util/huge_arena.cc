#include "util/huge_arena.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <set>

namespace omicsfs::arena {
namespace {

// Blocks are page multiples (a header page-aligned block start keeps payloads 64-byte aligned);
// free extents are coalesced with their neighbours and served best-fit, splitting off the rest.
// Measured on the MTX `cat` (256 MiB cache): size classes with per-class free lists left 85 MB
// free yet sent 183-358 blocks to malloc (requests larger than any free block of their class),
// and those fresh malloc pages were nearly all of the daemon's 11 500-19 700 faults.
constexpr size_t kHeader = 64;
constexpr size_t kPage = 4096;
constexpr uint64_t kMagic = 0x6f6d66612d626c6bull;  // "omfa-blk"
constexpr uint64_t kReserve = uint64_t{1} << 36;    // 64 GiB of address space, none of it touched
constexpr size_t kHugePage = size_t{2} << 20;

struct Header {
  uint64_t magic;
  uint64_t bytes;  // the whole block, header included
};
static_assert(sizeof(Header) <= kHeader);

// Constant-initialised: operator new may run before any constructor. The maps allocate their
// nodes through operator new with small sizes, which malloc serves: no recursion into the arena.
std::mutex g_mu;
char* g_base = nullptr;
std::atomic<uintptr_t> g_lo{0}, g_hi{0};  // [lo, hi): the mapping, for lock-free Release checks
bool g_huge = false;
uint64_t g_limit = 0, g_carved = 0, g_free = 0, g_allocs = 0, g_reused = 0, g_fallbacks = 0,
         g_reclaims = 0, g_no_reclaim = 0;
std::atomic<Reclaimer> g_reclaimer{nullptr};
thread_local bool t_reclaiming = false;

struct FreeExtents {
  std::map<uintptr_t, uint64_t> by_addr;             // start → bytes
  std::set<std::pair<uint64_t, uintptr_t>> by_size;  // (bytes, start): best fit
};
FreeExtents& Free() {
  static auto* f = new FreeExtents();  // never destroyed: blocks may be released at exit
  return *f;
}

void AddExtent(uintptr_t at, uint64_t bytes) {
  FreeExtents& f = Free();
  auto next = f.by_addr.lower_bound(at);
  if (next != f.by_addr.end() && at + bytes == next->first) {  // merge with the one after
    bytes += next->second;
    f.by_size.erase({next->second, next->first});
    next = f.by_addr.erase(next);
  }
  if (next != f.by_addr.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {  // merge with the one before
      f.by_size.erase({prev->second, prev->first});
      at = prev->first;
      bytes += prev->second;
      f.by_addr.erase(prev);
    }
  }
  f.by_addr[at] = bytes;
  f.by_size.insert({bytes, at});
}

bool Mine(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return a >= g_lo.load(std::memory_order_acquire) && a < g_hi.load(std::memory_order_acquire);
}

Header* HeaderOf(const void* p) {
  return reinterpret_cast<Header*>(const_cast<char*>(static_cast<const char*>(p)) - kHeader);
}

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
    // malloc is the arena too (mount/memory.cc): a fork while another thread holds the lock
    // would leave the child's arena locked for good. Held across fork, as glibc holds its own.
    ::pthread_atfork([] { g_mu.lock(); }, [] { g_mu.unlock(); }, [] { g_mu.unlock(); });
  }
  if (g_base == nullptr) return;
  g_limit = limit_bytes < g_carved ? g_carved : (limit_bytes > kReserve ? kReserve : limit_bytes);
}

// A block of `need` bytes from the free extents or the uncarved rest, or 0. Requires g_mu.
static uintptr_t TakeLocked(uint64_t need) {
  FreeExtents& f = Free();
  auto fit = f.by_size.lower_bound({need, 0});
  if (fit != f.by_size.end()) {
    const auto [bytes, start] = *fit;
    f.by_size.erase(fit);
    f.by_addr.erase(start);
    if (bytes > need) AddExtent(start + need, bytes - need);  // the rest stays free
    g_free -= need;
    ++g_reused;
    return start;
  }
  if (g_carved + need <= g_limit) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(g_base) + g_carved;
    g_carved += need;
    return at;
  }
  return 0;
}

void* Allocate(size_t size, bool may_reclaim) {
  if (size < kMinBlock || size > kMaxBlock) return nullptr;
  const uint64_t need = (size + kHeader + kPage - 1) / kPage * kPage;
  std::unique_lock lock(g_mu);
  if (g_base == nullptr) return nullptr;
  uintptr_t at = TakeLocked(need);
  const Reclaimer reclaim = g_reclaimer.load(std::memory_order_acquire);
  if (at == 0 && may_reclaim && reclaim != nullptr && !t_reclaiming) {
    // Twice the block: freed blocks lie where their entries were, and one extent must hold it.
    lock.unlock();
    t_reclaiming = true;
    const uint64_t freed = reclaim(2 * need);
    t_reclaiming = false;
    lock.lock();
    if (freed > 0 && (at = TakeLocked(need)) != 0) ++g_reclaims;
  }
  if (at == 0) {
    ++g_fallbacks;
    return nullptr;
  }
  auto* h = reinterpret_cast<Header*>(at);
  h->magic = kMagic;
  h->bytes = need;
  ++g_allocs;
  if (!may_reclaim) ++g_no_reclaim;
  return reinterpret_cast<char*>(at) + kHeader;
}

void SetReclaimer(Reclaimer reclaimer) { g_reclaimer.store(reclaimer, std::memory_order_release); }

bool Release(void* p) {
  if (p == nullptr || !Mine(p)) return false;
  Header* h = HeaderOf(p);
  std::lock_guard lock(g_mu);
  if (h->magic != kMagic) ::abort();  // not a block of ours: memory corruption
  h->magic = 0;
  g_free += h->bytes;
  AddExtent(reinterpret_cast<uintptr_t>(h), h->bytes);
  return true;
}

size_t BlockSize(const void* p) { return HeaderOf(p)->bytes - kHeader; }

bool Owns(const void* p) { return p != nullptr && Mine(p) && HeaderOf(p)->magic == kMagic; }

uint64_t Footprint(const void* data, uint64_t size) {
  return Owns(data) ? HeaderOf(data)->bytes : size;
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
  s.reclaims = g_reclaims;
  s.without_reclaim = g_no_reclaim;
  return s;
}

}  // namespace omicsfs::arena
