// VirtualTextFile: a RecordSource + a ChunkIndex built by a sizing pass + the decode cache.
// Read(offset, length) touches only the chunks the range needs and returns pinned slices of
// cached buffers (no per-handle state: reads may arrive concurrently and in any order).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cache/cache_pool.h"
#include "text/byte_view.h"
#include "text/chunk_index.h"
#include "text/record_source.h"
#include "util/settled.h"

namespace omicsfs::text {

class Prefetcher;
class IndexStore;

struct SizingOptions {
  unsigned threads = 0;                // 0: hardware concurrency
  Prefetcher* prefetcher = nullptr;    // read-ahead workers (optional; must outlive reads)
  uint64_t readahead_bytes = 8 << 20;  // text rendered ahead of a read (whole chunks, ≥ 1)
  const IndexStore* index = nullptr;   // persisted sizes (optional; must outlive the file)
  std::string index_key{};             // store fingerprint + view; empty = do not persist
  double progress_s = 10;              // a long pass logs its progress this often
  // Counts chunks as every pass sizes them (optional; `omicsfs index` draws its bar from it).
  struct Progress {
    std::atomic<uint64_t> chunks_total{0};
    std::atomic<uint64_t> chunks_done{0};
  };
  Progress* progress = nullptr;
};

class VirtualTextFile : public ByteView, public std::enable_shared_from_this<VirtualTextFile> {
 public:
  VirtualTextFile(std::shared_ptr<const RecordSource> source, cache::CachePool* pool,
                  SizingOptions options = {});

  // Exact size in bytes; the first call runs the sizing pass (once; concurrent callers wait).
  Result<uint64_t> Size() const override;
  // Up to `length` bytes at `offset` (fewer only at end of file).
  Result<std::vector<Piece>> Read(uint64_t offset, uint64_t length) const override;
  bool SizeKnown() const override { return sized(); }
  std::string Describe() const override { return source_->Describe(); }
  // Where chunk k starts in the text and how long it is (sizes the file first).
  Result<std::pair<uint64_t, uint64_t>> ChunkSpan(uint64_t k) const;

  bool sized() const;
  uint64_t owner() const { return owner_; }
  // A file built from this view's record spans (its region index): the sizing pass, if it runs
  // after this call, builds it too. Held weakly (the consumer holds this view).
  void AddSpanConsumer(std::weak_ptr<const SpanConsumer> consumer) const;
  // Two views of the same records (RecordSource::SpansFromPartner): the sizing pass of either
  // sizes the other too, and builds its region indexes, from one read of the records. Both must
  // be held by shared_ptr and not yet read; afterwards they size under one lock.
  static void SizeTogether(const VirtualTextFile& a, const VirtualTextFile& b);
  const RecordSource& source() const { return *source_; }

 private:
  struct PassTarget;
  Status EnsureSized() const;
  // Require *mu_. The persisted sizes, when there are (true); a pass's lengths (persisted).
  bool LoadPersisted() const;
  void Adopt(const std::vector<uint64_t>& lengths) const;
  // Requires *mu_: builders for this view's consumers whose files are not known yet.
  void StartBuilders(PassTarget* target) const;
  Result<cache::Buffer> Chunk(uint64_t k) const;
  Result<std::string> Render(uint64_t k) const;
  Status EnsurePrepared() const;
  Status SizingFailed(Status st) const;
  // The sizing pass over `n` chunks into targets[0] (this view's lengths, and its builders fed
  // every chunk's record spans in text order when there are any) and its partners after it,
  // whose spans are derived from this view's.
  Status SizingPass(uint64_t n, std::deque<PassTarget>& targets) const;
  void Prefetch(uint64_t after) const;
  // Queues chunk k for rendering on the read-ahead workers unless cached or already pending.
  void WarmInBackground(uint64_t k) const;

  std::shared_ptr<const RecordSource> source_;
  cache::CachePool* pool_;
  SizingOptions options_;
  uint64_t owner_;
  // Serialises the sizing pass; partners (SizeTogether) share one.
  mutable std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
  mutable std::vector<std::weak_ptr<const VirtualTextFile>> partners_;  // set before any read
  mutable std::unique_ptr<const ChunkIndex> index_;                     // set once under mu_
  mutable std::atomic<const ChunkIndex*> ready_{nullptr};  // published after index_ is set
  mutable Status sizing_error_;  // a failed pass is remembered, unless its failure was transient
  mutable std::vector<std::weak_ptr<const SpanConsumer>> span_consumers_;  // under mu_
  mutable std::atomic<uint64_t> prefetch_mark_{0};  // chunks below it were already queued
  // The last chunk the previous read touched: read-ahead starts only once reads follow each other
  // (a lone `head`, `tail` or random read renders nothing it did not ask for).
  mutable std::atomic<uint64_t> last_chunk_{UINT64_MAX};
  // Bytes read in the current run of reads that follow each other: past kStreamingBytes (or a
  // quarter of the file, if less), chunks render in a CachePool::Streaming scope (a `cat` or
  // plink2 decodes Zarr chunks whole; a region query or `head`, shorter, only the blosc blocks
  // of its records).
  static constexpr uint64_t kStreamingBytes = uint64_t{64} << 20;
  static constexpr uint64_t kRunGap = uint64_t{8} << 20;  // a read this close goes on the run
  mutable std::atomic<uint64_t> run_bytes_{0};
  mutable std::atomic<uint64_t> run_end_{UINT64_MAX / 2};  // where the last read ended
  SettledStatus prepared_;
};

}  // namespace omicsfs::text
