#include "text/tabix_source.h"

#include <algorithm>
#include <thread>

#include "codec/bgzf.h"
#include "util/log.h"

namespace omicsfs::text {
namespace {

namespace bgzf = codec::bgzf;

// Where htslib's bgzf_tell stands after reading up to text offset `pos` of a `text`-byte twin:
// at the end of the last block it has moved on to the EOF block.
uint64_t TellAfter(uint64_t pos, uint64_t text) {
  return pos == text ? bgzf::StoredDataEnd(text) << 16
                     : bgzf::StoredVirtualOffset(pos);
}

}  // namespace

TabixIndexSource::TabixIndexSource(std::shared_ptr<const VirtualTextFile> plain, Options options,
                                   std::string name)
    : plain_(std::move(plain)), options_(std::move(options)), name_(std::move(name)) {}

Status TabixIndexSource::RenderChunk(uint64_t, std::string* out) const {
  const bool persist = options_.store != nullptr && !options_.key.empty();
  if (persist) {
    if (auto blob = options_.store->LoadBlob(options_.key)) {
      out->append(*blob);
      return OkStatus();
    }
  }
  ASSIGN_OR_RETURN(std::string index, Build());
  if (persist) options_.store->SaveBlob(options_.key, index);
  out->append(index);
  return OkStatus();
}

Result<int64_t> TabixIndexSource::MaxVcfContigLength() const {
  int64_t max_len = 0;
  ASSIGN_OR_RETURN(auto span, plain_->ChunkSpan(0));
  ASSIGN_OR_RETURN(std::vector<Piece> pieces, plain_->Read(span.first, span.second));
  std::string header;
  for (const Piece& p : pieces) header.append(p.buffer->data() + p.offset, p.length);
  for (size_t at = 0; at < header.size();) {
    size_t nl = header.find('\n', at);
    if (nl == std::string::npos) nl = header.size();
    const std::string_view line(header.data() + at, nl - at);
    if (!line.empty() && line[0] == '#') NoteVcfContigLength(line, &max_len);
    at = nl + 1;
  }
  return max_len;
}

Result<std::string> TabixIndexSource::Build() const {
  const RecordSource& source = plain_->source();
  ASSIGN_OR_RETURN(const uint64_t text, plain_->Size());
  int64_t max_ref_len = 0;
  if (options_.csi && options_.preset == TabixPreset::kVcf) {
    ASSIGN_OR_RETURN(max_ref_len, MaxVcfContigLength());
  }
  const uint64_t n = source.ChunkCount();
  unsigned threads = options_.threads ? options_.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, threads);
  std::unique_ptr<TabixIndexBuilder> builder;
  uint64_t offset0 = 0, record = 0;
  // Batches of kPerThread chunks per thread (a thread started per chunk cost more than the
  // chunks of a small view: a group's of a fragments groups=@NAME folder).
  constexpr uint64_t kPerThread = 16;
  const uint64_t per_batch = threads * kPerThread;
  std::vector<ChunkSpans> batch(per_batch);
  std::vector<Status> errors(per_batch);
  for (uint64_t k0 = 0; k0 < n; k0 += per_batch) {
    const uint64_t m = std::min<uint64_t>(per_batch, n - k0);
    auto work = [&](uint64_t t) {
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
      const uint64_t k = k0 + i;
      if (!errors[i].ok()) return std::move(errors[i]).WithContext("chunk " + std::to_string(k));
      ASSIGN_OR_RETURN(auto span, plain_->ChunkSpan(k));
      const ChunkSpans& s = batch[i];
      if (!builder && s.meta_end > 0) offset0 = span.first + s.meta_end;
      for (const RecordSpan& r : s.records) {
        ++record;
        if (!builder) {
          builder = std::make_unique<TabixIndexBuilder>(options_.preset, options_.csi,
                                                        TellAfter(offset0, text), max_ref_len);
        }
        Status st = builder->Push(s.contigs[r.contig], r.begin, r.end,
                                  TellAfter(span.first + r.end_in_chunk, text));
        if (!st.ok()) {
          return std::move(st).WithContext("contig " + s.contigs[r.contig] + ", record " +
                                           std::to_string(record) + " (position " +
                                           std::to_string(r.begin + 1) + ")");
        }
      }
    }
  }
  if (!builder) {
    builder = std::make_unique<TabixIndexBuilder>(options_.preset, options_.csi,
                                                  TellAfter(offset0, text), max_ref_len);
  }
  return builder->Finish(TellAfter(text, text));
}

}  // namespace omicsfs::text
