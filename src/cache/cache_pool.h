// One byte-budgeted LRU of immutable shared buffers for the whole daemon. Get-or-compute is
// single-flight: concurrent misses on one key wait for one computation. Errors are not cached.
// Buffers stay alive through shared ownership while readers hold them, even after eviction.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/cache_key.h"
#include "util/status.h"

namespace omicsfs::cache {

using Buffer = std::shared_ptr<const std::string>;
// Any immutable object (e.g. a decoded source block) and the bytes it counts against the budget.
using Object = std::shared_ptr<const void>;
struct Sized {
  Object value;
  uint64_t bytes = 0;
};

struct CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;       // computations started
  uint64_t waits = 0;        // misses that joined a computation already in flight
  uint64_t evictions = 0;
  uint64_t uncached = 0;     // results too large to keep
  uint64_t bytes = 0;        // bytes held now
  uint64_t entries = 0;      // entries held now
};

class CachePool {
 public:
  // `budget_bytes`: total bytes kept. Entries larger than budget·max_entry_fraction are returned
  // to the caller without being kept.
  explicit CachePool(uint64_t budget_bytes, double max_entry_fraction = 0.25);
  CachePool(const CachePool&) = delete;
  CachePool& operator=(const CachePool&) = delete;

  using Compute = std::function<Result<std::string>()>;
  Result<Buffer> GetOrCompute(const CacheKey& key, const Compute& compute);
  // The same for any object type; one key always holds one type (the key's kind says which).
  using ComputeObject = std::function<Result<Sized>()>;
  Result<Object> GetOrComputeObject(const CacheKey& key, const ComputeObject& compute);
  template <typename T>
  Result<std::shared_ptr<const T>> GetOrComputeAs(const CacheKey& key, const ComputeObject& compute) {
    ASSIGN_OR_RETURN(Object o, GetOrComputeObject(key, compute));
    return std::static_pointer_cast<const T>(o);
  }

  // Computes and keeps `key` unless it is cached or being computed already (then returns at
  // once): for read-ahead, which must never wait on another computation.
  void Warm(const CacheKey& key, const Compute& compute);
  bool ContainsOrPending(const CacheKey& key) const;

  // Inserts a computed value (e.g. seeded by a sizing pass); replaces nothing already present.
  void Insert(const CacheKey& key, Buffer value);
  bool Contains(const CacheKey& key) const;
  // Drops every entry of `owner` (a store that changed on disk).
  void EraseOwner(uint64_t owner);

  // Frees about `bytes` by dropping least recently used entries no reader holds (an entry a
  // reader holds frees nothing); returns the bytes dropped. Never waits: 0 when another thread
  // (or this one) holds the pool's lock.
  uint64_t Shed(uint64_t bytes);
  // Makes this pool the huge-page arena's reclaimer (arena::SetReclaimer): a buffer that does
  // not fit in the arena takes the place of cached entries rather than fresh pages from malloc.
  // One pool at a time; undone by the pool's destructor.
  void ReclaimForArena();
  ~CachePool();

  uint64_t NewOwnerId();
  uint64_t budget() const { return budget_; }
  CacheStats Stats() const;

 private:
  struct Entry {
    Sized value;
    std::list<CacheKey>::iterator lru_pos;
  };
  using Flight = std::shared_future<Result<Sized>>;

  void InsertLocked(const CacheKey& key, Sized value);  // requires mu_
  Result<Sized> RunComputation(const CacheKey& key, const ComputeObject& compute,
                               std::promise<Result<Sized>>* promise);
  static ComputeObject FromString(const Compute& compute);
  void EvictLocked();                                    // requires mu_
  void MaybeReleaseMemory();                             // not under mu_

  const uint64_t budget_;
  const uint64_t max_entry_;
  mutable std::mutex mu_;
  std::unordered_map<CacheKey, Entry, CacheKeyHash> entries_;
  std::unordered_map<CacheKey, Flight, CacheKeyHash> in_flight_;
  std::list<CacheKey> lru_;  // front = most recently used
  CacheStats stats_;
  uint64_t next_owner_ = 1;
  std::atomic<uint64_t> evicted_since_trim_{0};
  // Resident memory allowed above the budget before free pages are handed back (the rest of
  // the process: code, thread stacks, FUSE buffers, buffers being rendered).
  static constexpr uint64_t kResidentSlack = uint64_t{48} << 20;
  static uint64_t ResidentBytes();
};

}  // namespace omicsfs::cache
