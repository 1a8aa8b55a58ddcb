// A block cache in front of any ByteSource (remote objects, zip members read remotely): reads
// are split into aligned blocks kept in the mount's one CachePool (architecture (c) rule 5),
// neighbouring missing blocks are fetched with one read of the base source, a read that spans
// many blocks runs several base reads at once, and reads that advance sequentially warm the
// blocks ahead on background threads.
//
// Versions never mix: blocks are keyed by an owner id per opened object version (the base's
// Describe() and stamp). A re-open of the same version shares its blocks; a new version gets a
// new owner, and the old version's blocks are dropped from the pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_pool.h"
#include "io/byte_source.h"

namespace omicsfs::io {

struct BlockCacheOptions {
  // Why 1 MiB: a random 4 KiB read fetches at most 1 MiB, while sequential reads coalesce into
  // 8 MiB requests (http_test: a 24 MiB scan in 128 KiB reads made 8 requests, 7 by read-ahead).
  uint64_t block_size = uint64_t{1} << 20;
  // Neighbouring missing blocks fetched by one request, at most (8 MiB with 1 MiB blocks).
  uint32_t max_blocks_per_request = 8;
  // Requests one read may have in flight at once.
  uint32_t max_parallel = 4;
  // Blocks warmed ahead of a sequential reader: the window starts at 2 and doubles up to this.
  uint32_t readahead_blocks = 8;
  // Threads that run read-ahead; 0 turns read-ahead off.
  uint32_t readahead_threads = 2;
};

struct BlockCacheCounters {
  uint64_t base_reads = 0;       // reads of base sources (each one request for HTTP)
  uint64_t base_bytes = 0;       // bytes those reads fetched
  uint64_t readahead_reads = 0;  // of base_reads, those made by read-ahead
};

// What every cached source of a mount shares: the pool, the read-ahead threads, the owner ids
// of opened versions. Sources hold it by shared_ptr; read-ahead tasks hold their source weakly.
class BlockCache {
 public:
  // `pool` must outlive the cache and every source it wraps.
  // `start_threads` false: read-ahead waits for Start() (a daemon starts threads after it forks
  // to detach: threads do not survive fork, and a block fetched by a lost thread never arrives).
  static std::shared_ptr<BlockCache> Create(cache::CachePool* pool, BlockCacheOptions options = {},
                                            bool start_threads = true);
  // Starts the read-ahead threads (once; later calls do nothing).
  void Start();
  // Stops the read-ahead threads: queued read-ahead is dropped, one under way is waited for.
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // `base` read through `cache`; the wrapper's size and stamp are the base's.
  static std::shared_ptr<const ByteSource> Wrap(const std::shared_ptr<BlockCache>& cache,
                                                std::shared_ptr<const ByteSource> base);

  const BlockCacheOptions& options() const { return options_; }
  cache::CachePool* pool() const { return pool_; }
  BlockCacheCounters Counters() const;

  // Internals for the cached sources (cached_byte_source.cc).
  // The owner id of one version: shared by re-opens at the same stamp; a new stamp gets a new
  // id and the old version's blocks leave the pool. An empty stamp always gets a new id.
  uint64_t OwnerFor(const std::string& describe, const std::string& stamp);
  // Queues read-ahead; dropped when the queue is full (read-ahead is only ever a hint).
  void Submit(std::function<void()> task);
  void Count(uint64_t bytes, bool readahead);
  struct Workers;  // the read-ahead queue and threads; outlives the cache while a task runs

 private:
  BlockCache(cache::CachePool* pool, BlockCacheOptions options);

  cache::CachePool* const pool_;
  const BlockCacheOptions options_;
  std::shared_ptr<Workers> workers_;
  std::mutex start_mu_;
  std::atomic<bool> started_{false};
  std::vector<std::thread> threads_;  // written once, by Start
  std::mutex mu_;
  // Describe() of each object opened through the cache: the stamp it was opened at, its owner.
  std::map<std::string, std::pair<std::string, uint64_t>> owners_;
  std::atomic<uint64_t> base_reads_{0}, base_bytes_{0}, readahead_reads_{0};
};

}  // namespace omicsfs::io
