#include "text/virtual_file.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <thread>

#include "text/index_store.h"
#include "text/prefetcher.h"
#include "util/log.h"

namespace omicsfs::text {
namespace {

// The cache accounts a chunk by size(), so a chunk must not carry much spare capacity.
void FitForCache(std::string* s) {
  if (s->capacity() > s->size() + s->size() / 16 + 64) s->shrink_to_fit();
}

}  // namespace

VirtualTextFile::VirtualTextFile(std::shared_ptr<const RecordSource> source, cache::CachePool* pool,
                                 SizingOptions options)
    : source_(std::move(source)), pool_(pool), options_(options), owner_(pool->NewOwnerId()) {}

bool VirtualTextFile::sized() const { return ready_.load(std::memory_order_acquire) != nullptr; }

// One view a sizing pass sizes: the view whose pass it is, or a partner whose spans it derives.
struct VirtualTextFile::PassTarget {
  const VirtualTextFile* file = nullptr;
  std::shared_ptr<const VirtualTextFile> hold;                 // a partner, alive through the pass
  std::vector<std::shared_ptr<const SpanConsumer>> consumers;  // alive through the pass
  std::vector<std::unique_ptr<SpanBuilder>> builders;
  std::vector<uint64_t> lengths;
  // A partner whose spans could not be derived (or whose builder failed): left unsized, it
  // sizes itself by its own pass when asked.
  std::atomic<bool> dropped{false};
  uint64_t fed_offset = 0;  // the feeding thread's
};

void VirtualTextFile::SizeTogether(const VirtualTextFile& a, const VirtualTextFile& b) {
  a.partners_.push_back(b.weak_from_this());
  b.partners_.push_back(a.weak_from_this());
  b.mu_ = a.mu_;
}

bool VirtualTextFile::LoadPersisted() const {
  if (options_.index == nullptr || options_.index_key.empty()) return false;
  auto lengths = options_.index->Load(options_.index_key, source_->ChunkCount());
  if (!lengths) return false;
  index_ = std::make_unique<const ChunkIndex>(*lengths);
  ready_.store(index_.get(), std::memory_order_release);
  LogDebug(source_->Describe() + ": size from the persisted index");
  return true;
}

void VirtualTextFile::Adopt(const std::vector<uint64_t>& lengths) const {
  index_ = std::make_unique<const ChunkIndex>(lengths);
  ready_.store(index_.get(), std::memory_order_release);
  if (options_.index != nullptr && !options_.index_key.empty())
    options_.index->Save(options_.index_key, lengths);
}

void VirtualTextFile::StartBuilders(PassTarget* target) const {
  for (const auto& weak : span_consumers_) {
    auto c = weak.lock();
    if (!c) continue;
    if (auto b = c->StartPass()) {
      target->consumers.push_back(std::move(c));
      target->builders.push_back(std::move(b));
    }
  }
}

Status VirtualTextFile::EnsureSized() const {
  if (ready_.load(std::memory_order_acquire) != nullptr) return OkStatus();
  std::lock_guard<std::mutex> lock(*mu_);
  if (index_) return OkStatus();
  if (!sizing_error_.ok()) return sizing_error_;
  const uint64_t n = source_->ChunkCount();
  if (LoadPersisted()) return OkStatus();
  if (Status st = EnsurePrepared(); !st.ok()) return SizingFailed(std::move(st));
  // This view, then the partners this pass sizes too; with them, the files built from each
  // view's record spans that are not known yet.
  std::deque<PassTarget> targets(1);
  targets[0].file = this;
  if (source_->HasRecordSpans() && !source_->MeasuresWithoutReading()) {
    StartBuilders(&targets[0]);
    for (const auto& weak : partners_) {
      auto p = weak.lock();
      if (!p || p->index_ || !p->sizing_error_.ok() || p->source_->ChunkCount() != n ||
          p->LoadPersisted())
        continue;
      if (!p->EnsurePrepared().ok()) continue;  // its own Size() reports it
      PassTarget& t = targets.emplace_back();
      t.file = p.get();
      t.hold = std::move(p);
      t.file->StartBuilders(&t);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto& t : targets) t.lengths.assign(n, 0);
  if (Status st = SizingPass(n, targets); !st.ok()) return SizingFailed(std::move(st));
  for (auto& t : targets) {
    if (t.dropped.load()) continue;
    uint64_t total = 0;
    for (uint64_t l : t.lengths) total += l;
    for (auto& b : t.builders) b->Finish(total);
    t.file->Adopt(t.lengths);
    LogDebug("sized " + t.file->Describe() + ": " + std::to_string(n) + " chunks in " +
             std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count()) +
             " ms" + (t.file == this ? "" : ", by the pass of " + Describe()));
  }
  return OkStatus();
}

Status VirtualTextFile::SizingPass(uint64_t n, std::deque<PassTarget>& targets) const {
  std::vector<uint64_t>& lengths = targets[0].lengths;
  unsigned threads = options_.threads ? options_.threads : std::thread::hardware_concurrency();
  threads = static_cast<unsigned>(std::clamp<uint64_t>(threads, 1, std::max<uint64_t>(n, 1)));
  const bool spans = targets.size() > 1 || !targets[0].builders.empty();

  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> done{0};
  std::mutex err_mu;
  Status first_error;
  // Chunks' spans reach each builder in text order (below); a worker does not start a chunk
  // more than kAhead chunks past the next one some builder is to be fed, so on many cores the
  // decoded spans waiting for the feeds stay a few chunks' worth, never the store's.
  std::mutex order_mu;
  std::condition_variable fed_cv;   // a feed moved on, or the pass failed
  std::atomic<bool> failed{false};  // set once first_error is
  const uint64_t kAhead = 4 * uint64_t{threads} + 4;
  auto fail = [&](Status st, uint64_t k) {
    {
      std::lock_guard<std::mutex> l(err_mu);
      if (first_error.ok()) first_error = std::move(st).WithContext("chunk " + std::to_string(k));
    }
    failed.store(true);
    std::lock_guard<std::mutex> l(order_mu);
    fed_cv.notify_all();
  };
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int64_t> last_log_ms{0};
  const auto interval_ms = static_cast<int64_t>(options_.progress_s * 1000);
  if (options_.progress) options_.progress->chunks_total.fetch_add(n);
  // A line every progress_s seconds (measured and rendered chunks alike), so a long pass never
  // looks like a hang.
  auto count_done = [&] {
    const uint64_t d = done.fetch_add(1) + 1;
    if (options_.progress) options_.progress->chunks_done.fetch_add(1);
    const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
    int64_t last = last_log_ms.load();
    if (ms - last >= interval_ms && last_log_ms.compare_exchange_strong(last, ms)) {
      LogInfo("sizing " + source_->Describe() + ": " + std::to_string(d) + "/" + std::to_string(n) +
              " chunks, " + std::to_string(ms / 1000) + " s");
    }
  };
  // Each builder has its own feed: its chunks in text order, each fed by one thread at a time,
  // the builders in parallel (two indexes, or a view's and its partner's, cost the pass the
  // slowest feed, not their sum). A thread that finished a chunk feeds every idle builder whose
  // next chunk is ready, and the chunks after it that are ready too, while the others decode on.
  struct Feed {
    size_t target;
    SpanBuilder* builder;
    uint64_t next = 0;    // its next chunk (under order_mu)
    bool busy = false;    // a thread is feeding it (under order_mu)
    uint64_t offset = 0;  // where its next chunk starts in its view's text (the feeding thread's)
  };
  std::vector<Feed> feeds;
  for (size_t i = 0; i < targets.size(); ++i) {
    for (const auto& b : targets[i].builders) feeds.push_back({i, b.get()});
  }
  struct Ready {
    std::vector<ChunkSpans> spans;  // one per target
    size_t unfed;                   // feeds that have not taken it yet
  };
  std::map<uint64_t, Ready> waiting;  // done, not fed to every builder yet (under order_mu)
  auto lowest_next = [&] {            // under order_mu
    uint64_t low = UINT64_MAX;
    for (const Feed& f : feeds) low = std::min(low, f.next);
    return low;
  };
  auto feed = [&](uint64_t k, std::vector<ChunkSpans> s) {
    std::unique_lock<std::mutex> l(order_mu);
    waiting.emplace(k, Ready{std::move(s), feeds.size()});
    for (;;) {
      Feed* f = nullptr;
      for (Feed& x : feeds) {
        if (!x.busy && waiting.count(x.next)) f = &x;
      }
      if (f == nullptr || failed.load()) return;
      f->busy = true;
      PassTarget& t = targets[f->target];
      for (auto it = waiting.find(f->next); it != waiting.end() && !failed.load();
           it = waiting.find(f->next)) {
        const uint64_t at = f->next;
        const ChunkSpans& spans = it->second.spans[f->target];  // stays: this feed has not taken it
        l.unlock();
        if (!t.dropped.load()) {
          if (Status st = f->builder->Add(f->offset, spans); !st.ok()) {
            if (f->target == 0) {
              fail(std::move(st), at);
            } else {
              t.dropped.store(true);  // a partner's: it sizes itself later
            }
          }
        }
        f->offset += t.lengths[at];
        l.lock();
        ++f->next;
        if (--it->second.unfed == 0) waiting.erase(it);
        fed_cv.notify_all();
      }
      f->busy = false;
    }
  };
  auto work = [&] {
    cache::CachePool::NotReads not_reads;  // no reader behind the pass: what it decodes is unread
    std::string buf;
    for (;;) {
      uint64_t k = next.fetch_add(1);
      if (k >= n) return;
      if (!feeds.empty()) {  // the lowest next chunk is always below the bound: its taker goes on
        std::unique_lock<std::mutex> l(order_mu);
        fed_cv.wait(l, [&] { return k < lowest_next() + kAhead || failed.load(); });
      }
      if (failed.load()) return;
      buf.clear();
      Status st;
      std::optional<uint64_t> measured;
      std::vector<ChunkSpans> chunk_spans(spans ? targets.size() : 0);
      try {
        if (spans) {  // the spans give the length, and the chunk is not rendered
          st = source_->RecordSpans(k, &chunk_spans[0]);
          measured = chunk_spans[0].length;
          for (size_t i = 1; st.ok() && i < targets.size(); ++i) {
            PassTarget& t = targets[i];
            if (t.dropped.load()) continue;
            if (t.file->source_->SpansFromPartner(*source_, k, chunk_spans[0], &chunk_spans[i])) {
              t.lengths[k] = chunk_spans[i].length;
            } else {
              t.dropped.store(true);
            }
          }
        } else {
          auto m = source_->MeasureChunk(k);
          if (m.ok()) measured = *m;
          st = m.ok() && !measured ? source_->RenderChunk(k, &buf) : m.status();
        }
      } catch (const std::bad_alloc&) {
        st = Status(ErrorCode::kOutOfMemory, "out of memory");
      } catch (const std::exception& e) {  // e.g. length_error from a hostile size: never terminate
        st = InternalError(std::string("unexpected exception: ") + e.what());
      }
      if (!st.ok()) return fail(std::move(st), k);
      if (measured) {
        lengths[k] = *measured;
      } else {
        lengths[k] = buf.size();
        FitForCache(&buf);  // the cache counts size(): hand over an exact-size string, no copy
        pool_->Insert({owner_, cache::CacheKind::kTextChunk, k},
                      std::make_shared<const std::string>(std::move(buf)));
        buf = std::string();
      }
      if (!feeds.empty()) feed(k, std::move(chunk_spans));
      count_done();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return first_error;
}

void VirtualTextFile::AddSpanConsumer(std::weak_ptr<const SpanConsumer> consumer) const {
  std::lock_guard<std::mutex> lock(*mu_);
  span_consumers_.push_back(std::move(consumer));
}

Result<uint64_t> VirtualTextFile::Size() const {
  RETURN_IF_ERROR(EnsureSized());
  return ready_.load(std::memory_order_acquire)->total_size();
}

Result<std::pair<uint64_t, uint64_t>> VirtualTextFile::ChunkSpan(uint64_t k) const {
  RETURN_IF_ERROR(EnsureSized());
  const ChunkIndex* index = ready_.load(std::memory_order_acquire);
  if (k >= index->chunk_count())
    return InternalError(Describe() + ": no chunk " + std::to_string(k));
  return std::make_pair(index->ChunkStart(k), index->ChunkLength(k));
}

// Requires *mu_. A transient failure (a server down) is not remembered: the next stat or read
// sizes again.
Status VirtualTextFile::SizingFailed(Status st) const {
  st = std::move(st).WithContext(source_->Describe());
  LogError(st.message());
  if (!IsTransient(st)) sizing_error_ = st;
  return st;
}

Status VirtualTextFile::EnsurePrepared() const {
  return prepared_.Get([this]() -> Status {
    cache::CachePool::NotReads not_reads;  // one-time work over the store (a transposed copy)
    try {
      return source_->Prepare();
    } catch (const std::bad_alloc&) {
      return Status(ErrorCode::kOutOfMemory, "out of memory");
    } catch (const std::exception& e) {
      return InternalError(std::string("unexpected exception: ") + e.what());
    }
  });
}

Result<std::string> VirtualTextFile::Render(uint64_t k) const {
  RETURN_IF_ERROR(EnsurePrepared());
  // Renderers append exact bytes (RawText); once sized, the chunk's length is known, so the
  // string is allocated once at its final size (the cache counts size(), so capacity matters).
  std::string out;
  const ChunkIndex* index = ready_.load(std::memory_order_acquire);
  if (index != nullptr) out.reserve(index->ChunkLength(k));
  {
    const uint64_t streaming_bytes =
        index == nullptr ? kStreamingBytes : std::min(kStreamingBytes, index->total_size() / 4);
    cache::CachePool::Streaming streaming(run_bytes_.load(std::memory_order_relaxed) >=
                                          streaming_bytes);
    RETURN_IF_ERROR(source_->RenderChunk(k, &out));
  }
  FitForCache(&out);
  return out;
}

void VirtualTextFile::Prefetch(uint64_t after) const {
  if (options_.prefetcher == nullptr) return;
  const ChunkIndex* index = ready_.load(std::memory_order_acquire);
  // Queue each chunk once per pass: start at the mark unless the reader jumped elsewhere.
  uint64_t mark = prefetch_mark_.load();
  uint64_t k = (mark <= after || mark > after + 65) ? after + 1 : mark;
  uint64_t ahead = 0;
  for (uint64_t i = after + 1; i < k; ++i) ahead += index->ChunkLength(i);
  for (; k < index->chunk_count() && k <= after + 64 &&
         (k == after + 1 || ahead < options_.readahead_bytes);
       ++k) {
    ahead += index->ChunkLength(k);
    WarmInBackground(k);
  }
  prefetch_mark_.store(k);
}

void VirtualTextFile::WarmInBackground(uint64_t k) const {
  if (options_.prefetcher == nullptr) return;
  const cache::CacheKey key{owner_, cache::CacheKind::kTextChunk, k};
  if (pool_->ContainsOrPending(key)) return;
  std::weak_ptr<const VirtualTextFile> weak = weak_from_this();
  options_.prefetcher->Submit([weak, key] {
    if (auto self = weak.lock()) {
      self->pool_->Warm(key, [&] { return self->Render(key.index); });
    }
  });
}

Result<cache::Buffer> VirtualTextFile::Chunk(uint64_t k) const {
  const ChunkIndex* index = ready_.load(std::memory_order_acquire);
  auto buf =
      pool_->GetOrCompute({owner_, cache::CacheKind::kTextChunk, k}, [&] { return Render(k); });
  if (!buf.ok()) {
    Status st =
        std::move(buf).status().WithContext(source_->Describe() + ": chunk " + std::to_string(k));
    LogError(st.message());
    return st;
  }
  if ((*buf)->size() != index->ChunkLength(k)) {
    Status st =
        CorruptError(source_->Describe() + ": chunk " + std::to_string(k) + " rendered to " +
                     std::to_string((*buf)->size()) + " bytes, the sizing pass recorded " +
                     std::to_string(index->ChunkLength(k)));
    LogError(st.message());
    return st;
  }
  return buf;
}

Result<std::vector<Piece>> VirtualTextFile::Read(uint64_t offset, uint64_t length) const {
  RETURN_IF_ERROR(EnsureSized());
  const ChunkIndex* index = ready_.load(std::memory_order_acquire);
  std::vector<Piece> pieces;
  const uint64_t size = index->total_size();
  if (offset >= size || length == 0) return pieces;
  uint64_t end = offset + std::min(length, size - offset);
  const uint64_t first = index->Locate(offset);
  // The run goes on while reads land near where the last one ended (the kernel's concurrent
  // read-ahead requests arrive out of order, several chunks apart); this read's chunks render
  // as part of it.
  const uint64_t last_end = run_end_.exchange(end, std::memory_order_relaxed);
  const uint64_t gap = offset > last_end ? offset - last_end : last_end - offset;
  if (gap <= kRunGap) {
    run_bytes_.fetch_add(end - offset, std::memory_order_relaxed);
  } else {
    run_bytes_.store(end - offset, std::memory_order_relaxed);
  }
  // A read spanning several chunks (the kernel's read-ahead) renders them side by side: all but
  // the first on the read-ahead workers, the first here. The first read of a file warms its
  // neighbours too: `head` and `tail` read on, and neighbouring chunks that share a newly
  // decoded block (a VCF variants-chunk) decode it together (VCF first byte 9.5 → 7.7 ms).
  const uint64_t last = index->Locate(end - 1);
  for (uint64_t j = first + 1; j <= last; ++j) WarmInBackground(j);
  if (last_chunk_.load() == UINT64_MAX) {
    if (last + 1 < index->chunk_count()) WarmInBackground(last + 1);
    if (first > 0) WarmInBackground(first - 1);
  }
  uint64_t k = first;
  uint64_t pos = offset;
  while (pos < end) {
    const uint64_t cstart = index->ChunkStart(k);
    const uint64_t clen = index->ChunkLength(k);
    if (clen > 0) {
      ASSIGN_OR_RETURN(cache::Buffer buf, Chunk(k));
      const uint64_t from = pos - cstart;
      const uint64_t take = std::min(clen - from, end - pos);
      pieces.push_back(Piece{std::move(buf), static_cast<size_t>(from), static_cast<size_t>(take)});
      pos += take;
    }
    ++k;
  }
  // Sequential: this read starts in (or next to) the chunk where the previous one ended; the
  // kernel may deliver neighbouring read-ahead requests slightly out of order.
  const uint64_t prev = last_chunk_.exchange(k - 1);
  if (prev != UINT64_MAX && first + 1 >= prev && first <= prev + 1) Prefetch(k - 1);
  return pieces;
}

}  // namespace omicsfs::text
