#include "cache/cache_pool.h"

#include "util/huge_arena.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <new>

namespace omicsfs::cache {

CachePool::CachePool(uint64_t budget_bytes, double max_entry_fraction)
    : budget_(budget_bytes),
      max_entry_(static_cast<uint64_t>(static_cast<double>(budget_bytes) * max_entry_fraction)) {}

namespace {
std::atomic<CachePool*> g_arena_pool{nullptr};
uint64_t ShedForArena(uint64_t bytes) {
  CachePool* pool = g_arena_pool.load(std::memory_order_acquire);
  return pool != nullptr ? pool->Shed(bytes) : 0;
}
}  // namespace

CachePool::~CachePool() {
  CachePool* self = this;
  if (g_arena_pool.compare_exchange_strong(self, nullptr)) arena::SetReclaimer(nullptr);
}

void CachePool::ReclaimForArena() {
  g_arena_pool.store(this, std::memory_order_release);
  arena::SetReclaimer(&ShedForArena);
}

uint64_t CachePool::Shed(uint64_t bytes) {
  std::vector<Object> dropped;  // destroyed after the lock is released
  uint64_t freed = 0;
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock()) return 0;
    for (auto pos = lru_.end(); pos != lru_.begin() && freed < bytes;) {
      --pos;
      auto it = entries_.find(*pos);
      if (it->second.value.value.use_count() > 1) continue;  // a reader holds it: frees nothing
      freed += it->second.value.bytes;
      stats_.bytes -= it->second.value.bytes;
      ++stats_.evictions;
      --stats_.entries;
      dropped.push_back(std::move(it->second.value.value));
      entries_.erase(it);
      pos = lru_.erase(pos);
    }
  }
  return freed;
}

uint64_t CachePool::NewOwnerId() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_owner_++;
}

CacheStats CachePool::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool CachePool::Contains(const CacheKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(key) != 0;
}

void CachePool::EvictLocked() {
  while (stats_.bytes > budget_ && !lru_.empty()) {
    auto it = entries_.find(lru_.back());
    stats_.bytes -= it->second.value.bytes;
    evicted_since_trim_ += it->second.value.bytes;
    entries_.erase(it);
    lru_.pop_back();
    ++stats_.evictions;
    --stats_.entries;
  }
}

void CachePool::InsertLocked(const CacheKey& key, Sized value) {
  if (entries_.count(key) != 0) return;
  if (value.bytes > max_entry_) {
    ++stats_.uncached;
    return;
  }
  lru_.push_front(key);
  stats_.bytes += value.bytes;
  ++stats_.entries;
  entries_.emplace(key, Entry{std::move(value), lru_.begin()});
  EvictLocked();
}

void CachePool::Insert(const CacheKey& key, Buffer value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t bytes = arena::Footprint(value->data(), value->size());
    InsertLocked(key, Sized{std::move(value), bytes});
  }
  MaybeReleaseMemory();
}

// Evicted buffers go back to malloc, whose per-thread arenas keep the pages and fragment. After
// every 1/16 of the budget evicted, the process's resident size is checked; only when it passes
// the budget plus kResidentSlack are free pages handed back to the system (outside the lock).
// Trimming unconditionally (as before) made every reused page fault in again: ~1/3 of the CPU
// time of a VCF `cat` went to page faults.
void CachePool::MaybeReleaseMemory() {
  const uint64_t threshold = std::max<uint64_t>(budget_ / 16, 8 << 20);
  uint64_t evicted = evicted_since_trim_.load(std::memory_order_relaxed);
  if (evicted < threshold) return;
  if (!evicted_since_trim_.compare_exchange_strong(evicted, 0)) return;  // another thread checks
  // The huge-page arena (util/huge_arena.h) is resident once carved and never given back: it is
  // what the budget buys, not something a trim could return. Trimming malloc because the arena
  // made RSS pass budget + slack released malloc's free pages for nothing and made every small
  // allocation fault in again (VCF `cat`: 28 850 faults, ~37 000 per GB served).
  const uint64_t carved = arena::GetStats().carved;
  if (ResidentBytes() > std::max(budget_, carved) + kResidentSlack) ::malloc_trim(0);
}

uint64_t CachePool::ResidentBytes() {
  static const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  char buf[128];
  const ssize_t n = fd >= 0 ? ::pread(fd, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return UINT64_MAX;  // unknown: trim
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return UINT64_MAX;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

void CachePool::EraseOwner(uint64_t owner) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->owner == owner) {
      auto e = entries_.find(*it);
      stats_.bytes -= e->second.value.bytes;
      --stats_.entries;
      entries_.erase(e);
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
}

CachePool::ComputeObject CachePool::FromString(const Compute& compute) {
  return [&compute]() -> Result<Sized> {
    ASSIGN_OR_RETURN(std::string s, compute());
    auto buffer = std::make_shared<const std::string>(std::move(s));
    const uint64_t bytes = arena::Footprint(buffer->data(), buffer->size());
    return Sized{std::move(buffer), bytes};
  };
}

Result<Buffer> CachePool::GetOrCompute(const CacheKey& key, const Compute& compute) {
  ASSIGN_OR_RETURN(Object o, GetOrComputeObject(key, FromString(compute)));
  return std::static_pointer_cast<const std::string>(o);
}

Result<Object> CachePool::GetOrComputeObject(const CacheKey& key, const ComputeObject& compute) {
  std::promise<Result<Sized>> promise;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
      ++stats_.hits;
      return it->second.value.value;
    }
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      Flight flight = it->second;
      ++stats_.waits;
      lock.unlock();
      const Result<Sized>& r = flight.get();
      if (!r.ok()) return r.status();
      return r->value;
    }
    ++stats_.misses;
    in_flight_.emplace(key, promise.get_future().share());
  }
  ASSIGN_OR_RETURN(Sized sized, RunComputation(key, compute, &promise));
  return sized.value;
}

bool CachePool::ContainsOrPending(const CacheKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(key) != 0 || in_flight_.count(key) != 0;
}

void CachePool::Warm(const CacheKey& key, const Compute& compute) {
  std::promise<Result<Sized>> promise;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.count(key) != 0 || in_flight_.count(key) != 0) return;
    ++stats_.misses;
    in_flight_.emplace(key, promise.get_future().share());
  }
  (void)RunComputation(key, FromString(compute), &promise);
}

// Runs a computation registered in in_flight_ and publishes its result exactly once.
Result<Sized> CachePool::RunComputation(const CacheKey& key, const ComputeObject& compute,
                                        std::promise<Result<Sized>>* promise) {
  Result<Sized> result = InternalError("cache: computation did not finish");
  try {
    result = compute();
  } catch (const std::bad_alloc&) {
    result = Status(ErrorCode::kOutOfMemory, "cache: out of memory while decoding");
  } catch (const std::exception& e) {
    result = InternalError(std::string("cache: unexpected exception: ") + e.what());
  } catch (...) {
    result = InternalError("cache: unexpected exception");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(key);
    if (result.ok()) InsertLocked(key, *result);
  }
  promise->set_value(result);
  MaybeReleaseMemory();
  return result;
}

}  // namespace omicsfs::cache
