#include "text/spans_pass.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_pool.h"

namespace omicsfs::text {

Status ForEachChunkSpans(const RecordSource& source, unsigned threads,
                         const std::function<Status(uint64_t, const ChunkSpans&)>& consume) {
  const uint64_t n = source.ChunkCount();
  if (threads == 0) threads = std::thread::hardware_concurrency();
  threads = std::max(1u, threads);
  // Batches of kPerThread chunks per thread (a thread started per chunk cost more than the
  // chunks of a small view: a group's of a fragments groups=@NAME folder).
  constexpr uint64_t kPerThread = 16;
  const uint64_t per_batch = threads * kPerThread;
  std::vector<ChunkSpans> batch(per_batch);
  std::vector<Status> errors(per_batch);
  for (uint64_t k0 = 0; k0 < n; k0 += per_batch) {
    const uint64_t m = std::min<uint64_t>(per_batch, n - k0);
    auto work = [&](uint64_t t) {
      cache::CachePool::NotReads not_reads;  // no reader behind the pass
      for (uint64_t i = t; i < m; i += threads) {
        batch[i] = ChunkSpans();
        errors[i] = source.RecordSpans(k0 + i, &batch[i]);
      }
    };
    std::vector<std::thread> pool;
    for (uint64_t t = 1; t < std::min<uint64_t>(threads, m); ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& t : pool) t.join();
    for (uint64_t i = 0; i < m; ++i) {
      if (!errors[i].ok())
        return std::move(errors[i]).WithContext("chunk " + std::to_string(k0 + i));
      RETURN_IF_ERROR(consume(k0 + i, batch[i]));
    }
  }
  return OkStatus();
}

}  // namespace omicsfs::text
