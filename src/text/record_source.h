// A RecordSource describes one output text file as N chunks (a header, when there is one, is
// chunk 0). RenderChunk(k) appends the exact bytes of chunk k: deterministic (no locale, clock or
// thread dependence), const and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::text {

// One record of a coordinate view as a region index sees its line: the contig (an index into
// ChunkSpans::contigs), the 0-based half-open interval [begin, end) tabix derives from the line,
// and the offset in the chunk just past the line's newline. Records fill their chunk back to back.
struct RecordSpan {
  uint32_t contig = 0;
  int64_t begin = 0;
  int64_t end = 0;
  uint64_t end_in_chunk = 0;
};

struct ChunkSpans {
  std::vector<std::string> contigs;
  std::vector<RecordSpan> records;  // lines tabix would index, in text order
  // Offset in the chunk just past the last meta (header) line before the first record; 0 when
  // the chunk starts with a record. tabix's first chunk starts there.
  uint64_t meta_end = 0;
  uint64_t length = 0;  // the chunk's text length (what RenderChunk appends)
};

// One pass of a file built from a view's record spans (a region index): fed every chunk's spans
// in text order by whichever pass reads them, then finished with the view's total length.
class SpanBuilder {
 public:
  virtual ~SpanBuilder() = default;
  // Chunk after chunk, in order: `chunk_start` is where the chunk starts in the view's text.
  virtual Status Add(uint64_t chunk_start, const ChunkSpans& spans) = 0;
  // The view's text ends at `text_size`; the builder keeps what it built (or its failure).
  virtual void Finish(uint64_t text_size) = 0;
};

// A file derived from a view's record spans. The view's sizing pass asks each of its consumers
// for a builder, so a view sized once also yields its region indexes: a store's first `ls -l`
// decodes every chunk once, not once for the sizes and again for each index.
class SpanConsumer {
 public:
  virtual ~SpanConsumer() = default;
  // A builder for this pass, or nullptr when the file is known already. Called with the view's
  // source prepared; must not ask the view for its size (the pass is sizing it).
  virtual std::unique_ptr<SpanBuilder> StartPass() const = 0;
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual uint64_t ChunkCount() const = 0;
  virtual Status RenderChunk(uint64_t k, std::string* out) const = 0;
  // One-time work before sizing (e.g. building a transposed copy); called once, before any
  // ChunkLength/RenderChunk, by the sizing pass.
  virtual Status Prepare() const { return OkStatus(); }
  // A chunk's exact length computed without rendering it, by sources that can do that cheaper
  // (dense views: arithmetic on row lengths; datg: digit counts); nullopt: the sizing pass renders
  // the chunk. Errors are the chunk's errors.
  virtual Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const {
    return std::optional<uint64_t>();
  }
  // True when MeasureChunk needs no read of the records (lengths tallied for many views at
  // once): the sizing pass then measures, and region indexes are left to their own pass,
  // instead of reading every record to size the view and feed its indexes at once.
  virtual bool MeasuresWithoutReading() const { return false; }
  // Record spans of chunk k, for region indexes (tabix/CSI), and its length; only coordinate
  // views have them.
  virtual bool HasRecordSpans() const { return false; }
  virtual Status RecordSpans(uint64_t k, ChunkSpans* out) const {
    return UnsupportedError(Describe() + ": no record spans");
  }
  // Chunk k's spans (and length) of this view derived from `partner`'s spans of the same chunk:
  // two views of the same records sized by one pass (VirtualTextFile::SizeTogether; a
  // fragments store's BED and 10x views, derived without reading the records; a VCF Zarr
  // store's BCF view, measured from the Zarr chunks the partner's spans have just decoded,
  // still in the cache). False when this source cannot derive them from these: the view then
  // sizes itself by its own pass.
  virtual bool SpansFromPartner(const RecordSource& partner, uint64_t k, const ChunkSpans& from,
                                ChunkSpans* out) const {
    return false;
  }
  // For messages: "matrix.mtx of /data/counts".
  virtual std::string Describe() const = 0;
};

// A fixed text (e.g. ERROR.txt): one chunk.
class StaticTextSource : public RecordSource {
 public:
  StaticTextSource(std::string text, std::string describe)
      : text_(std::move(text)), describe_(std::move(describe)) {}
  uint64_t ChunkCount() const override { return 1; }
  Status RenderChunk(uint64_t, std::string* out) const override {
    out->append(text_);
    return OkStatus();
  }
  std::string Describe() const override { return describe_; }

 private:
  std::string text_;
  std::string describe_;
};

}  // namespace omicsfs::text
