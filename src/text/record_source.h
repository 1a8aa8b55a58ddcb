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
  virtual Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const { return std::optional<uint64_t>(); }
  // Record spans of chunk k, for region indexes (tabix/CSI); only coordinate views have them.
  virtual bool HasRecordSpans() const { return false; }
  virtual Status RecordSpans(uint64_t k, ChunkSpans* out) const {
    return UnsupportedError(Describe() + ": no record spans");
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
