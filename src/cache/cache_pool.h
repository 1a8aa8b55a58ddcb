// One byte-budgeted cache of immutable shared buffers for the whole daemon, scan-resistant (2Q:
// a FIFO probationary segment of an eighth of the budget, a protected LRU segment entered only by
// a key read a second time, not merely again by the same sequential reader; docs/cache.md).
// Get-or-compute is single-flight: concurrent misses on one key wait for one computation. Errors
// are not cached. Buffers stay alive through shared ownership while readers hold them, even after
// eviction.
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

// Where entries live (docs/cache.md). kTwoQ is the daemon's; kLru (one LRU, the policy before
// issue 28) and kS3Fifo (a 10 % probationary FIFO whose entries read again while in it are
// promoted when they leave it, as S3-FIFO does) are kept for benchmarks (OMICSFS_CACHE_POLICY).
enum class CachePolicy { kTwoQ, kLru, kS3Fifo };

struct SegmentStats {
  uint64_t hits = 0;
  uint64_t misses = 0;  // computations whose entry was to enter this segment
  uint64_t evictions = 0;
  uint64_t bytes = 0;    // bytes held now
  uint64_t entries = 0;  // entries held now
};

struct CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;  // computations started
  uint64_t waits = 0;   // misses that joined a computation already in flight
  uint64_t evictions = 0;
  uint64_t uncached = 0;  // results too large to keep
  uint64_t bytes = 0;     // bytes held now
  uint64_t entries = 0;   // entries held now
  // Per segment (kLru: everything is protected). Probation: new keys, FIFO. Protected: keys read
  // again after they left probation (their misses are ghost hits), LRU.
  SegmentStats probation;
  SegmentStats protected_;
  uint64_t ahead_bytes = 0;    // of probation's bytes, read-ahead not read yet
  uint64_t promotions = 0;     // entries moved from probation to protected by a second read
  uint64_t ghost_entries = 0;  // keys remembered after they left probation having been read
  uint64_t ghost_hits = 0;     // computations of a remembered key (they enter protected)
  // Computations by kind: source blocks decoded whole (kSourceBlock) and parts of them decoded
  // alone (kSourcePart: the blosc blocks of Zarr chunks for short reads).
  uint64_t source_blocks = 0;
  uint64_t source_parts = 0;
};

class CachePool {
 public:
  // `budget_bytes`: total bytes kept. Entries larger than budget·max_entry_fraction are returned
  // to the caller without being kept.
  explicit CachePool(uint64_t budget_bytes, double max_entry_fraction = 0.25,
                     CachePolicy policy = CachePolicy::kTwoQ);
  CachePool(const CachePool&) = delete;
  CachePool& operator=(const CachePool&) = delete;

  using Compute = std::function<Result<std::string>()>;
  Result<Buffer> GetOrCompute(const CacheKey& key, const Compute& compute);
  // The same for any object type; one key always holds one type (the key's kind says which).
  using ComputeObject = std::function<Result<Sized>()>;
  Result<Object> GetOrComputeObject(const CacheKey& key, const ComputeObject& compute);
  template <typename T>
  Result<std::shared_ptr<const T>> GetOrComputeAs(const CacheKey& key,
                                                  const ComputeObject& compute) {
    ASSIGN_OR_RETURN(Object o, GetOrComputeObject(key, compute));
    return std::static_pointer_cast<const T>(o);
  }

  // While one lives on a thread, that thread's gets are not reads: what they compute enters
  // probation unread (leaving no ghost when it goes, like a seed) and what they find is neither
  // marked read nor promoted. For passes that read a store through the cache with no reader
  // behind them (a sizing pass, an index's own pass): a reader's `cat` right after must not find
  // the ghosts of all their chunks and promote every one (with the default 1G cache a VCF `cat`
  // after its sizing pass filled the budget with fresh memory and took twice as long).
  class NotReads {
   public:
    NotReads();
    ~NotReads();
    NotReads(const NotReads&) = delete;
    NotReads& operator=(const NotReads&) = delete;
  };
  // Whether a NotReads scope lives on this thread (work handed to other threads takes its kind).
  static bool InNotReads();
  // A scope (with `on`) for the reads of a long sequential run (a `cat`, a whole-file
  // conversion): sources that can decode parts of a source block (the blosc blocks of a Zarr
  // chunk, for a region query or `head`) decode whole blocks instead: the run needs all of them,
  // and a whole decode costs less per byte. Work handed to other threads takes it along.
  class Streaming {
   public:
    explicit Streaming(bool on);
    ~Streaming();
    Streaming(const Streaming&) = delete;
    Streaming& operator=(const Streaming&) = delete;

   private:
    bool on_;
  };
  static bool InStreaming();
  // Work a thread hands to other threads (ParallelFor) takes that thread's kind: a HandOff on
  // the handing thread, around the hand-off, and a Carry of it on each worker around its part.
  // A worker then gets as the handing thread would: not reads within a pass (NotReads), whole
  // blocks within a sequential run (Streaming), and, within a pass, what the handing thread has
  // pinned is found pinned, and what the worker gets is pinned by the handing thread when the
  // HandOff ends (a pass reading a remote store's arrays at once keeps its chunks as a local
  // pass, reading them on its own thread, does).
  class Carry;
  class HandOff {
   public:
    HandOff();
    ~HandOff();
    HandOff(const HandOff&) = delete;
    HandOff& operator=(const HandOff&) = delete;

   private:
    friend class Carry;
    bool not_reads_, streaming_;
    std::shared_ptr<void> sink_;  // within a pass: the pins' hand-off (cache_pool.cc)
  };
  class Carry {
   public:
    explicit Carry(const HandOff& from);
    ~Carry();
    Carry(const Carry&) = delete;
    Carry& operator=(const Carry&) = delete;

   private:
    const HandOff& from_;
    void* outer_sink_;
  };

  // Computes and keeps `key` unless it is cached or being computed already (then returns at
  // once): for read-ahead, which must never wait on another computation.
  void Warm(const CacheKey& key, const Compute& compute);
  bool ContainsOrPending(const CacheKey& key) const;

  // Inserts a computed value (e.g. seeded by a sizing pass); replaces nothing already present.
  // Not a read: the entry starts in probation and leaves no ghost unless read. `ahead`: made for
  // a reader who will read it soon (a block fetched with its neighbours), kept like read-ahead,
  // outside probation's share until its first read.
  void Insert(const CacheKey& key, Buffer value, bool ahead = false);
  bool Contains(const CacheKey& key) const;
  // Drops every entry of `owner` (a store that changed on disk).
  void EraseOwner(uint64_t owner);

  // Frees about `bytes` by dropping entries no reader holds (an entry a reader holds frees
  // nothing), the oldest of probation first, then the least recently used protected ones;
  // returns the bytes dropped. Never waits: 0 when another thread
  // (or this one) holds the pool's lock.
  uint64_t Shed(uint64_t bytes);
  // Makes this pool the huge-page arena's reclaimer (arena::SetReclaimer): a buffer that does
  // not fit in the arena takes the place of cached entries rather than fresh pages from malloc.
  // One pool at a time; undone by the pool's destructor.
  void ReclaimForArena();
  ~CachePool();

  uint64_t NewOwnerId();
  uint64_t budget() const { return budget_; }
  CachePolicy policy() const { return policy_; }
  // Bytes probation's read and seeded entries may hold (an eighth of the budget; kS3Fifo a
  // tenth; kLru the budget). Read-ahead not yet read may hold up to half the budget besides.
  uint64_t probation_budget() const { return probation_budget_; }
  // Bytes the passes' threads keep pinned, all together (what each got last, while its NotReads
  // scope lives), beyond what the cache keeps: half the budget, a thread at most a quarter (none
  // under kLru, whose entries are all protected).
  uint64_t pin_budget() const;
  // Bytes pinned now by all threads' passes.
  static uint64_t PinnedBytes();
  CacheStats Stats() const;

 private:
  // kAhead: made by read-ahead and not read yet, outside probation's share (bounded by the
  // prefetcher's window, at most half the budget), so that a chunk rendered ahead is not
  // dropped before its reader gets to it; its first read moves it to probation. Counted as
  // probation in the stats.
  enum class Segment : uint8_t { kAhead, kProbation, kProtected };
  struct Entry {
    Sized value;
    Segment segment = Segment::kProbation;
    bool read = false;     // a reader (not read-ahead, not the sizing pass) has taken it
    bool again = false;    // kS3Fifo: taken again after its first read while in probation
    uint64_t read_at = 0;  // probation_clock_ at its last read in probation
    std::list<CacheKey>::iterator pos;
  };
  using Flight = std::shared_future<Result<Sized>>;
  struct Pending {
    Flight flight;
    bool read = false;     // a reader started or joined the computation
    bool protect = false;  // a ghost hit: the entry enters protected
    bool ahead = true;     // unless read: kept as read-ahead (false: a NotReads pass's, a seed)
  };
  struct Ghost {
    uint64_t bytes = 0;
    std::list<CacheKey>::iterator pos;
  };

  // `ahead`: made by a computation, which read-ahead started unless `read`.
  void InsertLocked(const CacheKey& key, Sized value, bool read, bool protect,
                    bool ahead);  // requires mu_
  // GetOrComputeObject's lookup, wait or computation, with the value's footprint.
  Result<Sized> GetOrComputeSized(const CacheKey& key, const ComputeObject& compute, bool reading);
  Result<Sized> RunComputation(const CacheKey& key, const ComputeObject& compute,
                               std::promise<Result<Sized>>* promise);
  static ComputeObject FromString(const Compute& compute);
  void StartLocked(const CacheKey& key, bool read, std::promise<Result<Sized>>* promise,
                   bool pass = false);  // requires mu_
  void EvictLocked();                   // requires mu_
  // Removes `it` (counted as an eviction unless `erase`); a probationary entry that was read
  // leaves its key in the ghost list. Returns the object for the caller to destroy outside mu_.
  Object DropLocked(std::unordered_map<CacheKey, Entry, CacheKeyHash>::iterator it, bool erase);
  void RememberLocked(const CacheKey& key, uint64_t bytes);  // requires mu_
  void ForgetGhostLocked(
      std::unordered_map<CacheKey, Ghost, CacheKeyHash>::iterator g);  // requires mu_
  SegmentStats& SegmentOf(Segment s) { return s == Segment::kProtected ? protected_ : probation_; }
  std::list<CacheKey>& ListOf(Segment s) {
    return s == Segment::kProtected ? protected_list_
           : s == Segment::kAhead   ? ahead_list_
                                    : probation_list_;
  }
  // Requires mu_: puts `e` (of `key`) at the front of segment `to` and counts it there; takes it
  // out of its segment; moves it from one to the other.
  void LinkLocked(Entry* e, const CacheKey& key, Segment to);
  void UnlinkLocked(Entry* e);
  void MoveLocked(Entry* e, const CacheKey& key, Segment to);
  void MaybeReleaseMemory();  // not under mu_

  const uint64_t budget_;
  const uint64_t max_entry_;
  const CachePolicy policy_;
  const uint64_t probation_budget_;
  const uint64_t instance_;  // this pool among all the process made (pins name it, not `this`)
  mutable std::mutex mu_;
  std::unordered_map<CacheKey, Entry, CacheKeyHash> entries_;
  std::unordered_map<CacheKey, Pending, CacheKeyHash> in_flight_;
  std::list<CacheKey> ahead_list_;  // front = newest (FIFO)
  uint64_t ahead_bytes_ = 0;
  std::list<CacheKey> probation_list_;  // front = newest (FIFO)
  // Bytes admitted so far (entries computed or seeded, read-ahead at its first read): a read of a
  // probationary entry at least half probation's share after its first read is a second read,
  // earlier ones are the same reader's (the kernel's several requests within one chunk).
  uint64_t probation_clock_ = 0;
  std::list<CacheKey> protected_list_;  // front = most recently used
  // Keys that left probation after a reader took them, newest first, with their bytes; at most
  // a budget's worth of bytes is remembered (keys only, no data).
  std::list<CacheKey> ghost_list_;
  std::unordered_map<CacheKey, Ghost, CacheKeyHash> ghosts_;
  uint64_t ghost_bytes_ = 0;
  CacheStats stats_;  // totals; the segments' figures are below
  SegmentStats probation_;
  SegmentStats protected_;
  uint64_t next_owner_ = 1;
  std::atomic<uint64_t> evicted_since_trim_{0};
  // Resident memory allowed above the budget before free pages are handed back (the rest of
  // the process: code, thread stacks, FUSE buffers, buffers being rendered).
  static constexpr uint64_t kResidentSlack = uint64_t{48} << 20;
  static uint64_t ResidentBytes();
};

}  // namespace omicsfs::cache
