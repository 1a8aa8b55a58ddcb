#include "io/cached_byte_source.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>

namespace omicsfs::io {

// ---------------------------------------------------------------------------------------------
// The read-ahead threads. They share this state, not the BlockCache: when a task drops the last
// reference to the cache (through the source it warmed), the cache's destructor runs on the
// worker itself, which then leaves its loop without touching the cache again.

struct BlockCache::Workers {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool stopping = false;
  // Read-ahead queued but not started, at most: enough for 64 sequential readers' next window.
  static constexpr size_t kMaxQueued = 64;

  static void Loop(std::shared_ptr<Workers> self) {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(self->mu);
        self->cv.wait(lock, [&] { return self->stopping || !self->queue.empty(); });
        if (self->stopping) return;
        task = std::move(self->queue.front());
        self->queue.pop_front();
      }
      task();
    }
  }
};

BlockCache::BlockCache(cache::CachePool* pool, BlockCacheOptions options)
    : pool_(pool), options_(options), workers_(std::make_shared<Workers>()) {}

std::shared_ptr<BlockCache> BlockCache::Create(cache::CachePool* pool, BlockCacheOptions options,
                                               bool start_threads) {
  options.block_size = std::max<uint64_t>(options.block_size, 4096);
  options.max_blocks_per_request = std::max<uint32_t>(options.max_blocks_per_request, 1);
  options.max_parallel = std::max<uint32_t>(options.max_parallel, 1);
  std::shared_ptr<BlockCache> cache(new BlockCache(pool, options));
  if (start_threads) cache->Start();
  return cache;
}

void BlockCache::Start() {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (started_.load(std::memory_order_acquire)) return;
  for (uint32_t i = 0; i < options_.readahead_threads; ++i)
    threads_.emplace_back(&Workers::Loop, workers_);
  started_.store(!threads_.empty(), std::memory_order_release);
}

BlockCache::~BlockCache() {
  std::lock_guard<std::mutex> start_lock(start_mu_);
  {
    std::lock_guard<std::mutex> lock(workers_->mu);
    workers_->stopping = true;
    workers_->queue.clear();
  }
  workers_->cv.notify_all();
  for (std::thread& t : threads_) {
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // the last reference went away inside a read-ahead task on this thread
    } else {
      t.join();
    }
  }
}

void BlockCache::Submit(std::function<void()> task) {
  if (!started_.load(std::memory_order_acquire)) return;  // read-ahead is only ever a hint
  {
    std::lock_guard<std::mutex> lock(workers_->mu);
    if (workers_->stopping || workers_->queue.size() >= Workers::kMaxQueued) return;
    workers_->queue.push_back(std::move(task));
  }
  workers_->cv.notify_one();
}

uint64_t BlockCache::OwnerFor(const std::string& describe, const std::string& stamp) {
  const uint64_t owner = pool_->NewOwnerId();
  if (stamp.empty()) return owner;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = owners_.try_emplace(describe, stamp, owner);
  if (inserted) return owner;
  if (it->second.first == stamp) return it->second.second;
  pool_->EraseOwner(it->second.second);
  it->second = {stamp, owner};
  return owner;
}

void BlockCache::Count(uint64_t bytes, bool readahead) {
  base_reads_.fetch_add(1, std::memory_order_relaxed);
  base_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (readahead) readahead_reads_.fetch_add(1, std::memory_order_relaxed);
}

BlockCacheCounters BlockCache::Counters() const {
  BlockCacheCounters c;
  c.base_reads = base_reads_.load(std::memory_order_relaxed);
  c.base_bytes = base_bytes_.load(std::memory_order_relaxed);
  c.readahead_reads = readahead_reads_.load(std::memory_order_relaxed);
  return c;
}

// ---------------------------------------------------------------------------------------------
// The cached source.

namespace {

using Block = std::shared_ptr<const std::string>;
using Blocks = std::shared_ptr<const std::vector<Block>>;

class CachedByteSource : public ByteSource, public std::enable_shared_from_this<CachedByteSource> {
 public:
  CachedByteSource(std::shared_ptr<const ByteSource> base, std::shared_ptr<BlockCache> cache,
                   uint64_t owner)
      : base_(std::move(base)),
        cache_(std::move(cache)),
        owner_(owner),
        bs_(cache_->options().block_size),
        blocks_((base_->Size() + bs_ - 1) / bs_) {}

  const std::string& Describe() const override { return base_->Describe(); }
  const ObjectInfo& Info() const override { return base_->Info(); }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override;

 private:
  // Blocks [first, first + count) being fetched by one base read; waiters share its result.
  struct Flight {
    uint64_t first = 0, count = 0;
    std::shared_future<Result<Blocks>> result;
  };
  // A run of blocks this thread has registered and must fetch.
  struct Run {
    uint64_t first = 0, count = 0;
    std::promise<Result<Blocks>> promise;
  };
  struct Plan {
    std::vector<std::unique_ptr<Run>> runs;            // to fetch here
    std::vector<std::shared_ptr<const Flight>> mine;   // their flights, one per run
    std::vector<std::shared_ptr<const Flight>> waits;  // fetched by others
  };

  cache::CacheKey Key(uint64_t block) const {
    return cache::CacheKey{owner_, cache::CacheKind::kRemoteBlock, block};
  }
  // Registers flights for the blocks of [b0, b1] that are neither in `have` nor cached nor in
  // flight; `wait` says whether blocks in flight elsewhere are waited for (foreground) or
  // skipped (read-ahead).
  Plan MakePlan(uint64_t b0, uint64_t b1, std::vector<Block>& have, bool wait) const;
  Result<Blocks> Fetch(uint64_t first, uint64_t count, bool readahead) const;
  void Execute(Plan& plan, bool readahead) const;
  void Finish(Run& run, Result<Blocks> result) const;
  Status Gather(const Plan& plan, uint64_t b0, std::vector<Block>& have) const;
  void ReadAhead(uint64_t offset, uint64_t end) const;
  void Warm(uint64_t first, uint64_t last) const;

  const std::shared_ptr<const ByteSource> base_;
  const std::shared_ptr<BlockCache> cache_;
  const uint64_t owner_;
  const uint64_t bs_;
  const uint64_t blocks_;
  mutable std::mutex mu_;
  mutable std::map<uint64_t, std::shared_ptr<const Flight>> flights_;  // by first block
  // Sequential detection (under mu_): where the next read would start, the read-ahead window in
  // blocks, and the first block not yet handed to read-ahead.
  mutable uint64_t next_offset_ = 0;
  mutable uint64_t window_ = 0;
  mutable uint64_t warmed_until_ = 0;
};

CachedByteSource::Plan CachedByteSource::MakePlan(uint64_t b0, uint64_t b1,
                                                  std::vector<Block>& have, bool wait) const {
  Plan plan;
  cache::CachePool* pool = cache_->pool();
  const uint32_t max_run = cache_->options().max_blocks_per_request;
  std::lock_guard<std::mutex> lock(mu_);
  Run* open = nullptr;  // the run the next missing block may extend
  for (uint64_t b = b0; b <= b1; ++b) {
    if (have[b - b0] != nullptr) {
      open = nullptr;
      continue;
    }
    // A flight covering b: the last one starting at or before b.
    auto it = flights_.upper_bound(b);
    if (it != flights_.begin() && std::prev(it)->second->first + std::prev(it)->second->count > b) {
      const auto& flight = std::prev(it)->second;
      if (wait && (plan.waits.empty() || plan.waits.back() != flight)) plan.waits.push_back(flight);
      open = nullptr;
      continue;
    }
    // Blocks are published to the pool before their flight is removed (Finish), so a block
    // neither in flight nor cached here really is missing (or was evicted).
    if (pool->Contains(Key(b))) {
      open = nullptr;
      continue;
    }
    if (open == nullptr || open->count == max_run) {
      plan.runs.push_back(std::make_unique<Run>());
      open = plan.runs.back().get();
      open->first = b;
    }
    ++open->count;
  }
  for (auto& run : plan.runs) {
    auto flight = std::make_shared<Flight>();
    flight->first = run->first;
    flight->count = run->count;
    flight->result = run->promise.get_future().share();
    flights_[run->first] = flight;
    plan.mine.push_back(std::move(flight));
  }
  return plan;
}

// One base read of blocks [first, first+count), split into blocks.
Result<Blocks> CachedByteSource::Fetch(uint64_t first, uint64_t count, bool readahead) const {
  const uint64_t begin = first * bs_;
  const uint64_t end = std::min(base_->Size(), (first + count) * bs_);
  std::string data(static_cast<size_t>(end - begin), '\0');
  cache_->Count(data.size(), readahead);
  RETURN_IF_ERROR(base_->ReadExact(begin, data.data(), data.size()));
  auto blocks = std::make_shared<std::vector<Block>>();
  blocks->reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t from = i * bs_;
    const uint64_t n = std::min<uint64_t>(bs_, data.size() - from);
    blocks->push_back(std::make_shared<const std::string>(data, from, n));
  }
  return Blocks(std::move(blocks));
}

// Publishes a run: blocks into the pool first, then the flight leaves the table and its
// waiters wake (see MakePlan for why in this order).
void CachedByteSource::Finish(Run& run, Result<Blocks> result) const {
  if (result.ok()) {
    for (uint64_t i = 0; i < run.count; ++i)
      cache_->pool()->Insert(Key(run.first + i), (**result)[i], /*ahead=*/true);  // read soon
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    flights_.erase(run.first);
  }
  run.promise.set_value(std::move(result));
}

// Fetches the plan's runs, up to max_parallel at once (this thread takes a share). Every run's
// promise is kept, whatever happens: others may be waiting on it.
void CachedByteSource::Execute(Plan& plan, bool readahead) const {
  const size_t n = plan.runs.size();
  if (n == 0) return;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      Run& run = *plan.runs[i];
      Result<Blocks> r = InternalError("unfinished");
      try {
        r = Fetch(run.first, run.count, readahead);
      } catch (const std::bad_alloc&) {
        r = Status(ErrorCode::kOutOfMemory, Describe() + ": out of memory for a block read");
      }
      Finish(run, std::move(r));
    }
  };
  const size_t helpers = std::min<size_t>(n, cache_->options().max_parallel) - 1;
  std::vector<std::future<void>> others;
  for (size_t i = 0; i < helpers; ++i) {
    try {
      others.push_back(std::async(std::launch::async, work));
    } catch (const std::system_error&) {
      break;  // no thread to be had: this thread fetches the rest
    }
  }
  work();
  for (auto& f : others) f.get();
}

// Fills `have` from the plan's flights (its own, finished, and those it waited for).
Status CachedByteSource::Gather(const Plan& plan, uint64_t b0, std::vector<Block>& have) const {
  Status first_error;
  for (const auto* list : {&plan.mine, &plan.waits}) {
    for (const auto& flight : *list) {
      const Result<Blocks>& r = flight->result.get();
      if (!r.ok()) {
        if (first_error.ok()) first_error = r.status();
        continue;
      }
      for (uint64_t i = 0; i < (*r)->size(); ++i) {
        const uint64_t b = flight->first + i;
        if (b >= b0 && b - b0 < have.size()) have[b - b0] = (**r)[i];
      }
    }
  }
  return first_error;
}

Status CachedByteSource::ReadExact(uint64_t offset, void* out, size_t length) const {
  if (offset > Size() || length > Size() - offset) {
    return CorruptError(Describe() + ": bytes [" + std::to_string(offset) + ", " +
                        std::to_string(offset + length) + ") are past its end (" +
                        std::to_string(Size()) + " bytes)");
  }
  if (length == 0) return OkStatus();
  const uint64_t b0 = offset / bs_, b1 = (offset + length - 1) / bs_;
  std::vector<Block> have(b1 - b0 + 1);
  // Rounds: a block seen cached may be evicted before it is taken; the next round fetches it.
  for (int round = 0; round < 4; ++round) {
    for (uint64_t b = b0; b <= b1; ++b) {
      if (have[b - b0] != nullptr || !cache_->pool()->Contains(Key(b))) continue;
      auto r = cache_->pool()->GetOrCompute(Key(b), [&]() -> Result<std::string> {
        ASSIGN_OR_RETURN(Blocks one, Fetch(b, 1, false));
        return *(*one)[0];
      });
      RETURN_IF_ERROR(r.status());
      have[b - b0] = *r;
    }
    Plan plan = MakePlan(b0, b1, have, /*wait=*/true);
    Execute(plan, /*readahead=*/false);
    RETURN_IF_ERROR(Gather(plan, b0, have));
    if (std::all_of(have.begin(), have.end(), [](const Block& p) { return p != nullptr; })) break;
  }
  char* dst = static_cast<char*>(out);
  for (uint64_t b = b0; b <= b1; ++b) {
    const Block& block = have[b - b0];
    if (block == nullptr)
      return InternalError(Describe() + ": block " + std::to_string(b) + " never arrived");
    const uint64_t block_start = b * bs_;
    const uint64_t from = std::max(offset, block_start),
                   to = std::min(offset + length, block_start + block->size());
    std::memcpy(dst + (from - offset), block->data() + (from - block_start), to - from);
  }
  ReadAhead(offset, offset + length);
  return OkStatus();
}

// Reads that start within a block of where the last one ended count as sequential (FUSE's
// threads deliver a sequential reader's 128 KiB reads slightly out of order). The window
// doubles from 2 blocks up to readahead_blocks; a new warm is queued once half a window is
// missing ahead, so read-ahead requests stay large.
void CachedByteSource::ReadAhead(uint64_t offset, uint64_t end) const {
  const BlockCacheOptions& o = cache_->options();
  if (o.readahead_threads == 0 || o.readahead_blocks == 0) return;
  uint64_t first = 0, last = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool sequential = offset + bs_ >= next_offset_ && offset <= next_offset_ + bs_;
    next_offset_ = sequential ? std::max(next_offset_, end) : end;
    if (!sequential) {
      window_ = 0;
      warmed_until_ = 0;
      return;
    }
    window_ = window_ == 0 ? 2 : std::min<uint64_t>(window_ * 2, o.readahead_blocks);
    const uint64_t current = (end - 1) / bs_;
    first = std::max(current + 1, warmed_until_);
    last = std::min(current + 1 + window_, blocks_);
    if (last <= first) return;
    if (last - first < std::max<uint64_t>(1, window_ / 2) && last != blocks_) return;
    warmed_until_ = last;
  }
  std::weak_ptr<const CachedByteSource> weak = weak_from_this();
  cache_->Submit([weak, first, last] {
    if (auto self = weak.lock()) self->Warm(first, last);
  });
}

void CachedByteSource::Warm(uint64_t first, uint64_t last) const {
  std::vector<Block> have(last - first);
  Plan plan = MakePlan(first, last - 1, have, /*wait=*/false);
  Execute(plan, /*readahead=*/true);
}

}  // namespace

std::shared_ptr<const ByteSource> BlockCache::Wrap(const std::shared_ptr<BlockCache>& cache,
                                                   std::shared_ptr<const ByteSource> base) {
  const uint64_t owner = cache->OwnerFor(base->Describe(), base->Info().stamp);
  return std::make_shared<const CachedByteSource>(std::move(base), cache, owner);
}

}  // namespace omicsfs::io
