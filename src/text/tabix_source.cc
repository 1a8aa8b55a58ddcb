#include "text/tabix_source.h"

#include <algorithm>

#include "codec/bgzf.h"
#include "text/bcf_encode.h"
#include "text/spans_pass.h"
#include "util/log.h"

namespace omicsfs::text {

// At the end of the last block htslib's bgzf_tell has moved on to the EOF block.
uint64_t TabixPass::TellAfter(uint64_t pos, uint64_t text) const {
  return pos == text ? layout_.DataEnd(text) << 16 : layout_.VirtualOffset(pos);
}

Status TabixPass::PushHeld(uint64_t text_size) {
  held_ = false;
  const uint64_t voffset = TellAfter(held_end_offset_, text_size);
  Status st = held_same_contig_ ? builder_->PushSameContig(held_begin_, held_end_, voffset)
                                : builder_->Push(held_contig_, held_begin_, held_end_, voffset);
  held_same_contig_ = true;  // until Add sees another contig
  if (st.ok()) return st;
  return std::move(st).WithContext("contig " + held_contig_ + ", record " +
                                   std::to_string(records_) + " (position " +
                                   std::to_string(held_begin_ + 1) + ")");
}

Status TabixPass::Add(uint64_t chunk_start, const ChunkSpans& spans) {
  if (!offset0_ && spans.meta_end > 0) meta_end_ = chunk_start + spans.meta_end;
  uint32_t last = UINT32_MAX;  // the chunk's contig index of the record before
  const std::vector<RecordSpan>& rec = spans.records;
  for (size_t i = 0; i < rec.size();) {
    const RecordSpan& r = rec[i];
    if (held_) RETURN_IF_ERROR(PushHeld(UINT64_MAX));  // a later record follows: not the text's end
    if (!builder_) {
      offset0_ = meta_end_;  // a record follows it: before the text's end
      builder_ = std::make_unique<TabixIndexBuilder>(
          preset_, csi_, layout_.VirtualOffset(*offset0_), max_ref_len_, layout_, contigs_);
    }
    if (r.contig != last) {  // names compared once per run of a contig in the chunk, not per record
      last = r.contig;
      const std::string& contig = spans.contigs[r.contig];
      if (held_contig_ != contig) {
        held_contig_ = contig;
        held_same_contig_ = false;
      }
    }
    held_begin_ = r.begin;
    held_end_ = r.end;
    held_end_offset_ = chunk_start + r.end_in_chunk;
    held_ = true;
    ++records_;
    ++i;
    // The records after it of its contig, up to the chunk's last: each is followed by another, so
    // none ends the text and none need be held; pushed in one call, after the one held.
    size_t j = i;
    while (j + 1 < rec.size() && rec[j].contig == r.contig) ++j;
    if (j == i) continue;
    RETURN_IF_ERROR(PushHeld(UINT64_MAX));
    size_t pushed = 0;
    if (Status st = builder_->PushSameContigRun(&rec[i], j - i, chunk_start, &pushed); !st.ok()) {
      return std::move(st).WithContext("contig " + held_contig_ + ", record " +
                                       std::to_string(records_ + 1 + pushed) + " (position " +
                                       std::to_string(rec[i + pushed].begin + 1) + ")");
    }
    records_ += j - i;
    i = j;
  }
  return OkStatus();
}

Result<std::string> TabixPass::Finish(uint64_t text_size) {
  if (held_) RETURN_IF_ERROR(PushHeld(text_size));
  if (!builder_) {
    builder_ = std::make_unique<TabixIndexBuilder>(preset_, csi_, TellAfter(meta_end_, text_size),
                                                   max_ref_len_, layout_, contigs_);
  }
  return builder_->Finish(TellAfter(text_size, text_size));
}

// The index built by a view's sizing pass. Tabix refusing the records is the source's verdict
// (Failed); any other failure is dropped: the index's own pass meets it again and reports it
// where it is asked for. Neither fails the view's pass.
class TabixIndexSource::PassBuilder : public SpanBuilder {
 public:
  PassBuilder(const TabixIndexSource* source, Shape shape)
      : source_(source), pass_(source->NewPass(std::move(shape))) {}
  Status Add(uint64_t chunk_start, const ChunkSpans& spans) override {
    if (failed_) return OkStatus();
    if (Status st = pass_.Add(chunk_start, spans); !st.ok()) {
      failed_ = true;
      (void)source_->Failed(std::move(st));  // a verdict is kept there; the rest dropped
    }
    return OkStatus();
  }
  void Finish(uint64_t text_size) override {
    if (failed_) return;
    auto index = pass_.Finish(text_size);
    if (index.ok()) {
      source_->Keep(*std::move(index));
    } else {
      (void)source_->Failed(std::move(index).status());
    }
  }

 private:
  const TabixIndexSource* source_;  // kept alive by the pass
  TabixPass pass_;
  bool failed_ = false;
};

TabixIndexSource::TabixIndexSource(std::shared_ptr<const VirtualTextFile> plain, Options options,
                                   std::string name)
    : plain_(std::move(plain)), options_(std::move(options)), name_(std::move(name)) {}

std::optional<std::string> TabixIndexSource::Known() const {
  {
    std::lock_guard lock(mu_);
    if (built_) return built_;
  }
  if (options_.store != nullptr && !options_.key.empty())
    return options_.store->LoadBlob(options_.key);
  return std::nullopt;
}

void TabixIndexSource::Keep(std::string index) const {
  if (options_.store != nullptr && !options_.key.empty())
    options_.store->SaveBlob(options_.key, index);
  std::lock_guard lock(mu_);
  built_ = std::move(index);
}

std::optional<Status> TabixIndexSource::Refusal() const {
  std::lock_guard lock(mu_);
  return refused_;
}

bool TabixIndexSource::Decided() const {
  std::lock_guard lock(mu_);
  return built_.has_value() || refused_.has_value();
}

std::optional<std::string> TabixIndexSource::PersistedRefusal(const Options& options) {
  if (options.store == nullptr || options.key.empty()) return std::nullopt;
  return options.store->LoadBlob(RefusalKey(options.key));
}

Status TabixIndexSource::Failed(Status st) const {
  if (st.ok() || !TabixRefuses(st)) return st;
  {
    std::lock_guard lock(mu_);
    if (refused_) return st;  // told already
    refused_ = st;
  }
  // What the records are decides it, so it holds for every later mount of the same bytes (the
  // key is the store's fingerprint).
  if (options_.store != nullptr && !options_.key.empty()) {
    options_.store->SaveBlob(RefusalKey(options_.key), st.message());
  }
  if (options_.on_refused) options_.on_refused(st);
  return st;
}

std::unique_ptr<SpanBuilder> TabixIndexSource::StartPass() const {
  if (Known() || Refusal()) return nullptr;
  auto shape = IndexShape();
  if (!shape.ok()) return nullptr;  // the index's own pass reports it
  return std::make_unique<PassBuilder>(this, *std::move(shape));
}

Status TabixIndexSource::RenderChunk(uint64_t, std::string* out) const {
  if (auto refused = Refusal()) return *refused;
  if (auto known = Known()) {
    out->append(*known);
    return OkStatus();
  }
  // The view sized first: when that runs its pass, the pass builds this index too (or finds
  // that it cannot exist).
  RETURN_IF_ERROR(plain_->Size().status());
  if (auto refused = Refusal()) return *refused;
  if (auto known = Known()) {
    out->append(*known);
    return OkStatus();
  }
  ASSIGN_OR_RETURN(std::string index, Build());
  out->append(index);
  Keep(std::move(index));
  return OkStatus();
}

TabixPass TabixIndexSource::NewPass(Shape shape) const {
  return TabixPass(options_.preset, options_.csi, shape.max_ref_len, options_.layout,
                   std::move(shape.contigs));
}

Result<TabixIndexSource::Shape> TabixIndexSource::IndexShape() const {
  Shape shape;
  const bool bcf = options_.preset == TabixPreset::kBcf;
  if (!bcf && (!options_.csi || options_.preset != TabixPreset::kVcf)) return shape;
  std::string header;  // chunk 0: the header (rendered from the source: the view may be sizing)
  RETURN_IF_ERROR(plain_->source().RenderChunk(0, &header));
  if (bcf) {
    // "BCF\2\2", the text's length, the text (NUL-terminated).
    if (header.size() < 9 || header.compare(0, 5, "BCF\2\2") != 0)
      return InternalError(name_ + ": the view does not start with a BCF header");
    const size_t end = header.find('\0', 9);
    ASSIGN_OR_RETURN(bcf::Header h,
                     bcf::ParseVcfHeader(std::string_view(header).substr(9, end - 9)));
    for (int64_t len : h.dict.contig_lengths) shape.max_ref_len = std::max(shape.max_ref_len, len);
    shape.contigs = std::move(h.dict.contig_names);
    return shape;
  }
  for (size_t at = 0; at < header.size();) {
    size_t nl = header.find('\n', at);
    if (nl == std::string::npos) nl = header.size();
    const std::string_view line(header.data() + at, nl - at);
    if (!line.empty() && line[0] == '#') NoteVcfContigLength(line, &shape.max_ref_len);
    at = nl + 1;
  }
  return shape;
}

Result<std::string> TabixIndexSource::Build() const {
  const RecordSource& source = plain_->source();
  ASSIGN_OR_RETURN(const uint64_t text, plain_->Size());
  ASSIGN_OR_RETURN(Shape shape, IndexShape());
  TabixPass pass = NewPass(std::move(shape));
  RETURN_IF_ERROR(ForEachChunkSpans(source, options_.threads,
                                    [&](uint64_t k, const ChunkSpans& spans) -> Status {
                                      ASSIGN_OR_RETURN(auto span, plain_->ChunkSpan(k));
                                      return Failed(pass.Add(span.first, spans));
                                    }));
  auto index = pass.Finish(text);
  if (!index.ok()) return Failed(std::move(index).status());
  return index;
}

}  // namespace omicsfs::text
